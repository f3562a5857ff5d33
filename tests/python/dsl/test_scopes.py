"""Memory scopes: global (and global.1-3), private, lsram (per TEC), shared (per core) and
constant, with each target's capacities; an allocation beyond a scope's capacity is a build
error that names the allocation and shows its line."""

import numpy as np
import pytest

from tessera.dsl import BuildManager, script as S
from tessera.error import DiagnosticError

from _util import build, expect_diag


def test_scopes_in_generated_code_and_per_tec_lsram():
    @S.prim_func
    def k(a: S.ptr("int32", "global.1"), out: S.ptr("int32", "global"), c: S.ptr("int32", "constant")):
        tid = S.get_local_id()
        mine = S.alloc_buffer(8, "int32", scope="lsram")       # one per TEC
        priv = S.alloc(8, "int32")                            # the TEC's stack
        mine[0:8] = S.int32x8(tid * 100) + S.vload(a)
        priv[0:8] = S.vload(c)
        S.barrier()                                           # all TECs have written their lsram
        S.vstore(mine[0:8] + S.vload(priv), out + tid * 8)

    a = np.arange(8, dtype="int32")
    c = np.full(8, 1000, "int32")
    out = np.zeros(32, "int32")
    ex = build(k)
    ex(a, out, c)
    for t in range(4):
        np.testing.assert_array_equal(out[t * 8:(t + 1) * 8], a + t * 100 + 1000)
    code = ex.c_code
    assert "__kernel void k(__global int* a, __global int* out, __constant int* c)" in code
    assert "__lsram int mine[8];" in code and "  int priv[8];" in code


def test_shared_memory_is_one_block_per_core():
    @S.prim_func
    def k(out: S.ptr("int32", "global")):
        slots = S.alloc_buffer(4, "int32", scope="shared")
        tid = S.get_local_id()
        slots[tid] = (tid + 1) * 11
        S.barrier()
        out[tid] = slots[(tid + 1) % 4]

    out = np.zeros(4, "int32")
    ex = build(k)
    for _ in range(3):
        ex(out)
        assert out.tolist() == [22, 33, 44, 11]
    assert "static __local int slots[4];" in ex.c_code


def test_capacity_fits_exactly():
    @S.prim_func
    def k(out: S.ptr("int8", "global")):
        a = S.alloc_buffer(16 * 1024, "int8", scope="lsram")
        b = S.alloc_buffer(4 * 1024, "int32", scope="lsram")      # 32 KB in all
        s = S.alloc_buffer(256 * 1024, "int8", scope="shared")
        a[0] = 1
        b[0] = 2
        s[0] = 3
        out[S.get_local_id()] = a[0] + S.i8(b[0]) + s[0]

    out = np.zeros(4, "int8")
    build(k)(out)
    assert out.tolist() == [6, 6, 6, 6]


def test_lsram_overflow_is_a_build_error():
    @S.prim_func
    def k(out: S.ptr("int8", "global")):
        a = S.alloc_buffer(16 * 1024, "int8", scope="lsram")
        big = S.alloc_buffer(16 * 1024 + 1, "int8", scope="lsram")
        a[0] = 1
        big[0] = 2
        out[0] = a[0] + big[0]

    err = expect_diag(k, 'big = S.alloc_buffer(16 * 1024 + 1, "int8", scope="lsram")',
                      'lsram allocation "big" (16385 bytes) exceeds the local SRAM of X2_1204: '
                      '32769 of 32768 bytes per TEC would be in use', lower=True)
    assert "big = S.alloc_buffer" in str(err)


@pytest.mark.parametrize("target,capacity", [("X2_1204", 256), ("X2_1204MP3", 256),
                                             ("X3P_1304", 128), ("X3S_1304MP4", 128)])
def test_shared_capacity_depends_on_the_target(target, capacity):
    @S.prim_func
    def k(out: S.ptr("float32", "global")):
        s = S.alloc_buffer(200 * 1024 // 4, "float32", scope="shared")
        s[0] = 1.0
        out[0] = s[0]

    if capacity >= 200:
        BuildManager(target=target).lower(k)
    else:
        expect_diag(k, 's = S.alloc_buffer(200 * 1024 // 4, "float32", scope="shared")',
                    f'shared allocation "s" (204800 bytes) exceeds the shared SRAM of {target}: '
                    f'204800 of {capacity * 1024} bytes per core would be in use',
                    target=target, lower=True)


def test_subroutine_allocations_count_too():
    @S.prim_func
    def helper(out: S.ptr("int8", "global")):
        t = S.alloc_buffer(20 * 1024, "int8", scope="lsram")
        t[0] = 1
        out[0] = t[0]

    @S.prim_func
    def k(out: S.ptr("int8", "global")):
        t = S.alloc_buffer(20 * 1024, "int8", scope="lsram")
        t[0] = 2
        helper(out)
        out[1] = t[0]

    with pytest.raises(DiagnosticError, match='lsram allocation "t" .* exceeds the local SRAM'):
        BuildManager().build(k)


def test_scope_errors():
    @S.prim_func
    def store_const(c: S.ptr("int32", "constant")):
        c[0] = 1

    expect_diag(store_const, "c[0] = 1", "cannot store through a pointer to constant memory")

    @S.prim_func
    def bad_scope(out: S.ptr("int32", "global")):
        t = S.alloc_buffer(4, "int32", scope="global")
        out[0] = t[0]

    expect_diag(bad_scope, 't = S.alloc_buffer(4, "int32", scope="global")',
                'the arg "scope" must be one of (\'private\', \'lsram\', \'shared\'), got "global"')

    with pytest.raises(ValueError, match="unknown memory scope 'sram'"):
        S.ptr("int32", "sram")
