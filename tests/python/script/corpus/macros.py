"""Macros, closures and compile-time Python: everything evaluated while parsing."""

from tessera.script import tir as T

TILE = 8
USE_BIAS = True


def tile_index(outer, inner):
    """An ordinary Python helper: it runs on expressions while the script is parsed."""
    return outer * TILE + inner


@T.macro
def fill(buf, value):
    for i in range(16):
        with T.block("fill"):
            vi = T.axis.spatial(16, i)
            buf[vi] = value


@T.prim_func
def macro_used_twice(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    # The second expansion's block is named "fill_1".
    fill(A, T.float32(0))
    fill(B, T.float32(1))


@T.macro(hygienic=False)
def add_into(i):
    # Not hygienic: `C` and `A` are the caller's buffers.
    C[i] = C[i] + A[i]


@T.prim_func
def unhygienic_macro(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        add_into(i)


@T.macro
def squared(x):
    return x * x


@T.prim_func
def macro_returning_a_value(A: T.Buffer((8,), "float32")):
    for i in range(8):
        A[i] = squared(A[i])


@T.prim_func
def python_helper_on_expressions(A: T.Buffer((64,), "float32")):
    for o, i in T.grid(64 // TILE, TILE):
        with T.block("A"):
            vi = T.axis.spatial(64, tile_index(o, i))
            A[vi] = A[vi] + T.float32(1)


@T.prim_func
def compile_time_branch(A: T.Buffer((8,), "float32"), bias: T.Buffer((8,), "float32")):
    # USE_BIAS is a Python value: the branch is chosen while parsing.
    for i in range(8):
        if USE_BIAS:
            A[i] = A[i] + bias[i]
        else:
            A[i] = A[i]


def make_scaled_copy(factor, n):
    """A kernel generator: `factor` and `n` are closure values."""

    @T.prim_func
    def scaled_copy(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        for i in range(n):
            B[i] = A[i] * factor

    return scaled_copy


closure_generated = make_scaled_copy(0.5, 24)


@T.prim_func
def meta_var_inlined(A: T.Buffer((16,), "int32")):
    for i in range(16):
        j = T.meta_var(i * 2 + 1)  # inlined at each use, no LetStmt
        A[i] = j + j


@T.prim_func
def let_binding(A: T.Buffer((16,), "int32")):
    for i in range(16):
        j = i * 2 + 1  # a LetStmt binding a new variable
        A[i] = j + j


@T.prim_func
def unrolled_python_loop(A: T.Buffer((4,), "float32")):
    for k in [0, 1, 2, 3]:  # a Python list: the body is repeated while parsing
        A[k] = T.float32(k)


@T.prim_func
def comprehension_and_lambda(A: T.Buffer((4, 4), "float32")):
    weights = [0.25 * w for w in range(4)]
    scale = lambda x: x * 2.0  # noqa: E731 - closures run on expressions
    for i in range(4):
        A[i, 0] = scale(A[i, 1]) + weights[3]


@T.macro
def store_twice(buf, i):
    store_once(buf, i)  # a macro defined further down: resolved when used
    store_once(buf, i + 1)


@T.macro
def store_once(buf, i):
    buf[i] = buf[i] + T.float32(1)


@T.prim_func
def macro_calling_a_later_macro(A: T.Buffer((8,), "float32")):
    for i in range(4):
        store_twice(A, i * 2)
