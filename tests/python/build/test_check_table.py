"""A packed function of many buffer parameters with constant shapes checks them in one loop over
a static table (tessera_check_dltensor_table) instead of one call each: same results, same errors
as the per-buffer checks of a smaller function."""

import numpy as np
import pytest

import tessera as ts
from tessera import te
from tessera.error import ArgumentTypeError, ArgumentValueError


def _wide(n):
    A = te.placeholder((n,), name="A", dtype="float32")
    outs = [te.compute((1,), lambda i, s=s: A[s] * 2.0 + 1.0, name="O%d" % s) for s in range(n)]
    return ts.build(te.create_prim_func([A] + outs), target="c")


@pytest.fixture(scope="module")
def libs():
    # 40 buffers: one table; 20 buffers: below the table's threshold, one check each.
    return _wide(40), _wide(20)


def _args(n):
    return [np.arange(n, dtype="float32")] + [np.zeros(1, "float32") for _ in range(n)]


def _error(lib, n, index, value):
    a = _args(n)
    a[index] = value
    with pytest.raises((ArgumentTypeError, ArgumentValueError)) as info:
        lib(*a)
    return type(info.value), str(info.value)


def test_table_in_the_source_only_for_many_buffers(libs):
    wide, narrow = libs
    assert "tessera_check_dltensor_table(" in wide.get_source()
    assert "tessera_check_dltensor_table(" not in narrow.get_source()


def test_table_checked_function_computes(libs):
    a = _args(40)
    libs[0](*a)
    np.testing.assert_allclose(np.concatenate(a[1:]), np.arange(40, dtype="float32") * 2 + 1)


@pytest.mark.parametrize("index, value", [
    (3, lambda n: np.zeros(2, "float32")),                      # shape
    (5, lambda n: np.zeros(1, "float64")),                      # dtype
    (7, lambda n: np.zeros((1, 1), "float32")),                 # ndim
    (0, lambda n: np.arange(2 * n, dtype="float32")[::2]),      # strides
    (9, lambda n: None),                                        # no array
])
def test_table_errors_equal_per_buffer_errors(libs, index, value):
    wide, narrow = libs
    # The two functions differ only in A's extent (40 vs 20), which none of these messages
    # names.
    assert _error(wide, 40, index, value(40)) == _error(narrow, 20, index, value(20))


def test_table_names_the_first_wrong_buffer(libs):
    a = _args(40)
    a[37] = np.zeros(3, "float32")
    a[38] = np.zeros(1, "int32")
    with pytest.raises(ArgumentValueError, match=r"^Argument main\.var_O36\.shape\[0\] has an "
                       r"unsatisfied constraint: 1 == var_O36\.shape\[0\] \(got 3\)$"):
        libs[0](*a)
