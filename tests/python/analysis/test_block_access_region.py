"""tir.analysis.get_block_access_region / get_block_read_write_region: golden regions."""

import pytest

from tessera import tir
from tessera.error import TesseraTypeError
from tessera.ir import Range, assert_structural_equal
from tessera.script import tir as T


def _by_data(buffers):
    return {b.data: b for b in buffers}


@T.prim_func
def _extern_and_access_ptr() -> None:
    A = T.alloc_buffer((64,), "float32")
    B = T.alloc_buffer((64,), "float32")
    C = T.alloc_buffer((8, 8), "float32")
    D = T.alloc_buffer((64,), "float32")
    for i in range(4):
        with T.block("blk"):
            v = T.axis.spatial(4, i)
            T.reads(A[v * 16 : v * 16 + 16])
            T.writes(B[v * 16 : v * 16 + 16])
            for k in range(16):
                B[v * 16 + k] = A[v * 16 + k] * T.float32(2)
            T.evaluate(T.call_extern("ext", C.data, dtype="int32"))
            T.evaluate(D.access_ptr("w"))


def test_loads_stores_extern_and_access_ptr():
    block = _extern_and_access_ptr.body.block.body.body.block
    bufs = _extern_and_access_ptr.body.block.alloc_buffers
    A, B, C, D = bufs
    reads, writes, opaques = tir.analysis.get_block_access_region(block, _by_data(bufs))
    assert_structural_equal(reads, block.reads)
    # the write-only access_ptr is a write of all of D; C.data handed to a call is opaque
    assert_structural_equal(writes, [block.writes[0], tir.BufferRegion(D, [Range(0, 64)])])
    assert_structural_equal(opaques, [tir.BufferRegion(C, [Range(0, 8), Range(0, 8)])])

    rw_reads, rw_writes = tir.analysis.get_block_read_write_region(block, _by_data(bufs))
    assert_structural_equal(rw_reads, [block.reads[0], opaques[0]])
    assert_structural_equal(rw_writes, [block.writes[0], writes[1], opaques[0]])


def test_only_buffers_of_the_map_count():
    block = _extern_and_access_ptr.body.block.body.body.block
    A, B, C, D = _extern_and_access_ptr.body.block.alloc_buffers
    reads, writes, opaques = tir.analysis.get_block_access_region(block, _by_data([B]))
    assert reads == [] and opaques == []
    assert_structural_equal(writes, block.writes)


@T.prim_func
def _matched_and_let(X: T.Buffer((32, 32), "float32"), I: T.Buffer((32,), "int32")) -> None:
    for i in range(4):
        with T.block("outer"):
            vi = T.axis.spatial(4, i)
            T.reads(X[vi * 8 + 1 : vi * 8 + 5, 0:32], I[vi])
            T.writes(X[vi * 8 : vi * 8 + 8, 0:4])
            sub = T.match_buffer(X[vi * 8 : vi * 8 + 8, 0:4], (8, 4))
            part = T.match_buffer(X[vi * 8 + 1 : vi * 8 + 5, 0:32], (4, 32))
            row: T.int32 = I[vi]
            for j in range(4):
                sub[row, j] = T.float32(0)
            T.evaluate(T.call_extern("use", part.data, dtype="int32"))


def test_match_buffer_maps_to_its_source_and_lets_are_substituted():
    block = _matched_and_let.body.block.body.body.block
    X = _matched_and_let.buffer_map[_matched_and_let.params[0]]
    I = _matched_and_let.buffer_map[_matched_and_let.params[1]]
    reads, writes, opaques = tir.analysis.get_block_access_region(block, _by_data([X, I]))
    assert_structural_equal(reads, [block.reads[1]])
    # sub[row, 0:4] with row = I[vi]: rows vi * 8 + I[vi] of X
    (write,) = writes
    assert write.buffer.same_as(X)
    vi = block.iter_vars[0].var
    assert_structural_equal(write.region[0].min, vi * 8 + tir.BufferLoad(I, [vi]))
    assert int(write.region[0].extent) == 1
    assert_structural_equal(write.region[1], Range(0, 4))
    # the opaque use of part.data covers part's whole source region
    assert_structural_equal(opaques, [block.reads[0]])


@T.prim_func
def _reduction(A: T.Buffer((8, 8), "float32"), S: T.Buffer((8,), "float32")) -> None:
    for i, k in T.grid(8, 8):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk])
            T.writes(S[vi])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]


def test_reduction_leaves_its_output_out_of_the_reads():
    block = _reduction.body.block.body.body.body.block
    bufs = [_reduction.buffer_map[p] for p in _reduction.params]
    reads, writes, opaques = tir.analysis.get_block_access_region(block, _by_data(bufs))
    assert_structural_equal(reads, block.reads)
    assert_structural_equal(writes, block.writes)
    assert opaques == []


def test_buffer_var_map_must_be_a_mapping():
    block = _reduction.body.block.body.body.body.block
    with pytest.raises(TesseraTypeError, match="buffer_var_map"):
        tir.analysis.get_block_access_region(block, [1, 2])
