"""Low-level TIR: allocations, pointers, lets, asserts, threads, vectors, while loops."""

from tessera.script import tir as T


@T.prim_func
def allocate_and_decl(A: T.Buffer((16,), "float32")):
    ptr = T.allocate([16], "float32", "global")
    tmp = T.decl_buffer((16,), "float32", data=ptr)
    for i in range(16):
        tmp[i] = A[i] * T.float32(2)
    for i in range(16):
        A[i] = tmp[i]


@T.prim_func
def decl_buffer_allocating(A: T.Buffer((8,), "int32")):
    # Without data=, T.decl_buffer allocates its own storage.
    tmp = T.decl_buffer((8,), "int32")
    for i in range(8):
        tmp[i] = A[i] + 1
    for i in range(8):
        A[i] = tmp[i]


@T.prim_func
def scoped_binders(A: T.Buffer((8,), "int32"), n: T.int32):
    with T.LetStmt(n * 2) as m:
        A[0] = m
    with T.allocate([4], "int32", "local") as p:
        buf = T.decl_buffer((4,), "int32", data=p)
        buf[0] = 1
        A[1] = buf[0]
    with T.Assert(n > 0, "n must be positive"):
        A[2] = n
    A[3] = 0


@T.prim_func
def assert_and_let(A: T.Buffer((8,), "float32"), n: T.int32):
    assert n <= 8, "n is at most 8"
    half: T.int32 = n // 2
    for i in range(half):
        A[i] = T.float32(0)


@T.prim_func
def gpu_threads(A: T.Buffer((256,), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("A"):
                vi = T.axis.spatial(256, bx * 64 + tx)
                A[vi] = A[vi] * T.float32(2)


@T.prim_func
def launch_threads(A: T.Buffer((128,), "float32")):
    tx = T.env_thread("threadIdx.x")
    with T.launch_thread(tx, 128):
        A[tx] = T.float32(1)


@T.prim_func
def vector_ops(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(4):
        B[i * 4:i * 4 + 4] = A[i * 4:i * 4 + 4] + T.Broadcast(T.float32(1), 4)
    B[T.Ramp(0, 4, 4)] = A[T.Ramp(1, 4, 4)]


@T.prim_func
def masked_vector(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    mask = T.meta_var(T.Ramp(0, 1, 4) < T.Broadcast(3, 4))
    B.vstore([T.Ramp(0, 1, 4)], A.vload([T.Ramp(0, 1, 4)], predicate=mask), predicate=mask)


@T.prim_func
def while_loop(A: T.Buffer((1,), "int32")):
    A[0] = 0
    while A[0] < 10:
        A[0] = A[0] + 3


@T.prim_func
def break_and_continue(A: T.Buffer((16,), "int32")):
    for i in range(16):
        if A[i] < 0:
            break
        if A[i] == 0:
            continue
        A[i] = A[i] - 1


@T.prim_func
def branches(A: T.Buffer((16,), "int32")):
    for i in range(16):
        if i < 4:
            A[i] = 0
        elif i < 8:
            A[i] = 1
        else:
            A[i] = 2


@T.prim_func
def extern_calls(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
    for i in range(4):
        A[i] = T.call_extern("float32", "expf", A[i])
        B[i] = T.reinterpret("int32", A[i])
    T.evaluate(T.call_extern("int32", "fflush", 0))


@T.prim_func
def loop_kinds(A: T.Buffer((64,), "float32")):
    for i in T.unroll(4):
        A[i] = T.float32(0)
    for i in T.serial(4, 8, annotations={"pragma_unroll": 1}):
        A[i] = T.float32(1)
    for i in T.parallel(8, 16):
        A[i] = T.float32(2)
    for i in T.vectorized(16, 20):
        A[i] = T.float32(3)


@T.prim_func
def expressions_printed_verbosely(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")):
    x = T.int32()
    for i in range(8):
        A[i] = T.Div(A[i], 3) + T.let(x, i + 1, x * x) + T.Shuffle([T.Ramp(0, 1, 4)], [2])
        B[i] = T.Cast("float32", A[i]) + T.float32("inf") * T.float32(0)


@T.prim_func
def attributes_and_pointers(A: T.Buffer((8,), "float32"), p: T.handle("float32", "global")):
    P = T.Buffer((8,), "float32", data=p)
    with T.attr(A.data, "storage_alignment", 64):
        for i in range(8):
            A[i] = P[i]
    T.evaluate(T.address_of(A[0]) == T.address_of(P[0]))


@T.prim_func
def shared_memory(A: T.Buffer((64,), "float32")):
    S = T.alloc_buffer((64,), scope="shared")
    for i in range(64):
        with T.block("S"):
            vi = T.axis.spatial(64, i)
            S[vi] = A[vi]
    for i in range(64):
        with T.block("A"):
            vi = T.axis.spatial(64, i)
            A[vi] = S[63 - vi]


@T.prim_func
def launch_thread_by_tag(A: T.Buffer((64,), "float32")):
    bx = T.launch_thread("blockIdx.x", 4)
    tx = T.launch_thread("threadIdx.x", 16)
    A[bx * 16 + tx] = T.float32(0)


@T.prim_func
def scoped_decl_buffer(A: T.Buffer((8,), "float32")):
    with T.decl_buffer((8,), "float32", data=A.data) as V:
        V[0] = T.float32(1)
    A[1] = T.float32(2)


@T.prim_func
def axis_aliases_and_range_attrs(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 8):
        with T.block("B"):
            vi = T.axis.S(8, i)
            vk = T.axis.R(8, k)
            T.block_attr({"range": T.Range(0, 8)})
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
