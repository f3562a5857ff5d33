"""Differential fuzzing of the vector DSL: random kernels (dsl_gen) are compiled and run, and each
stored vector compared exactly with numpy and with PySim (the DSL's Python simulator, which
runs the undecorated kernel)."""

import importlib.util
import os
import tempfile

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.dsl import BuildManager

import dsl_gen
from fuzz_util import COUNTS, array_literal, examples, save_reproducer

_folder = tempfile.mkdtemp(prefix="tessera-fuzz-dsl-")
_count = iter(range(10**9))


def load_kernel(source):
    """The kernel of ``source``, imported from a real file (the DSL parser reads it back)."""
    path = os.path.join(_folder, f"kern{next(_count)}.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.kern


def _exact(dtype, v):
    return v.astype("float64" if dtype == "float32" else "int64")


@settings(max_examples=examples(ci=25, long=1000))
@given(dsl_gen.kernel(), st.integers(0, 2**32 - 1))
def test_random_kernels_match_numpy_and_pysim(kernel, seed):
    dtype, exprs = kernel
    rng = np.random.default_rng(seed)
    a, b = dsl_gen.random_vector(dtype, rng), dsl_gen.random_vector(dtype, rng)
    env = {"va": _exact(dtype, a), "vb": _exact(dtype, b)}
    kept, expected = [], []
    for e in exprs:
        try:
            expected.append(dsl_gen.evaluate(e, dtype, env).astype(dtype))
            kept.append(e)
        except dsl_gen.Invalid:
            COUNTS["dsl expressions rejected (inexact)"] += 1
    if not kept:
        return
    source = dsl_gen.kernel_src(dtype, kept)
    func = load_kernel(source)
    ex = BuildManager().build(func)
    n = dsl_gen.lanes(dtype)
    out = np.zeros(n * len(kept), dtype)
    ex(a.copy(), b.copy(), out)
    sim = np.zeros_like(out)
    func(a.copy(), b.copy(), sim)
    COUNTS["dsl programs"] += 1
    COUNTS["dsl vector expressions"] += len(kept)
    want = np.concatenate(expected)
    if not (np.array_equal(out, want) and np.array_equal(sim, want)):
        bad = [i for i in range(len(kept)) if not (np.array_equal(out[i * n:(i + 1) * n], expected[i])
                                                  and np.array_equal(sim[i * n:(i + 1) * n], expected[i]))]
        small = dsl_gen.kernel_src(dtype, [kept[i] for i in bad])
        script = f'''"""tessera fuzz failure: a DSL kernel whose compiled or PySim result differs from numpy."""
import numpy as np
from tessera.dsl import BuildManager

SOURCE = {small!r}
exec(compile(SOURCE, __file__ + ".kernel", "exec"))  # PySim needs the source: see test_fuzz_dsl
a = {array_literal(a)}
b = {array_literal(b)}
out = np.zeros({n * len(bad)}, {dtype!r})
BuildManager().build(kern)(a, b, out)
np.testing.assert_array_equal(out, {array_literal(np.concatenate([expected[i] for i in bad]))})
'''
        path = save_reproducer("test_random_kernels_match_numpy_and_pysim", script)
        raise AssertionError(f"stores {bad} differ\ncompiled {out}\npysim {sim}\nnumpy {want}\n"
                             f"{small}\nreproducer: {path}")
