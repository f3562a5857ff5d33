"""Test helpers with the names of ``tvm.testing``: comparisons, requirement markers that skip
where tessera or the machine lacks a feature, parametrized fixtures, and ``main()``.

>>> import tessera.testing
>>> @tessera.testing.requires_cuda
... def test_on_gpu(): ...
>>> dtype = tessera.testing.parameter("float32", "int8")    # a parametrized fixture
>>> tessera.testing.assert_allclose(lib_out, expected, rtol=1e-5)

Correlated parameters (:func:`parameters`) and the ``target``/``dev`` fixtures need the pytest
plugin ``tessera.testing.plugin``; ``python -m tessera.compat -m pytest`` and :func:`main` load it.
"""

import functools
import inspect
import os
import platform
import sys

import numpy as np

try:  # pytest is only needed for the markers and fixtures, not for the comparisons.
    import pytest
except ImportError:  # pragma: no cover
    pytest = None


# ---- comparisons ----

def _as_numpy(value):
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        return value.numpy()
    return np.asarray(value)


def assert_allclose(actual, desired, rtol=1e-7, atol=1e-7, verbose=True):
    """``numpy.testing.assert_allclose`` that also takes ``ts.nd`` arrays and requires equal
    shapes (numpy would broadcast)."""
    actual, desired = _as_numpy(actual), _as_numpy(desired)
    np.testing.assert_allclose(actual.shape, desired.shape)
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=verbose)


def assert_prim_expr_equal(lhs, rhs):
    """Assert that two integer or boolean expressions are equal after simplification."""
    from .. import _core, ir, tir

    def norm(e):
        if isinstance(e, (bool, int, float)):
            e = tir.const(e)
        return _core.simplify_expr(e)

    a, b = norm(lhs), norm(rhs)
    if not ir.structural_equal(a, b):
        raise ValueError(f"{lhs} and {rhs} are not equal (simplified: {a} vs {b})")


# ---- devices and targets ----

_KNOWN_TARGET_KINDS = ("llvm", "c", "cuda")


def _target_kind(target):
    if isinstance(target, (list, tuple)):
        target = target[0]
    kind = getattr(target, "kind", target)
    kind = getattr(kind, "name", kind)
    return str(kind).split()[0] if str(kind).strip() else ""


def _cuda_exists():
    from ..runtime import cuda

    try:
        return cuda(0).exist
    except Exception:  # noqa: BLE001 - a broken driver is no GPU for the tests
        return False


def _compute_capability():
    """(major, minor) of GPU 0, or None without a GPU."""
    if not _cuda_exists():
        return None
    from .. import _core

    try:
        cc = _core.cuda_compute_capability(0)
    except Exception:  # noqa: BLE001
        return None
    if isinstance(cc, (tuple, list)):
        return int(cc[0]), int(cc[1])
    cc = int(cc)
    return (cc // 10, cc % 10) if cc < 100 else (cc // 100, cc % 100)


def device_enabled(target):
    """Whether tests of ``target`` ("llvm", "c", "cuda", or a Target) can run here. The
    environment variable TVM_TEST_TARGETS ("llvm;cuda") restricts the targets."""
    kind = _target_kind(target)
    wanted = os.environ.get("TVM_TEST_TARGETS", "")
    if wanted.strip():
        kinds = {_target_kind(t.strip()) for t in wanted.split(";") if t.strip()}
        if kind not in kinds:
            return False
    if kind in ("llvm", "c"):
        return True
    if kind == "cuda":
        return _cuda_exists()
    return False


def _device_of(target):
    from ..runtime import cpu, cuda

    return cuda(0) if _target_kind(target) == "cuda" else cpu(0)


def _default_targets():
    wanted = os.environ.get("TVM_TEST_TARGETS", "")
    if wanted.strip():
        return [t.strip() for t in wanted.split(";") if t.strip()]
    return ["llvm", "cuda"]


def enabled_targets():
    """``[(target, device), ...]`` of the targets tests run on here (llvm always; cuda with a
    GPU)."""
    return [(t, _device_of(t)) for t in _default_targets() if device_enabled(t)]


# ---- requirement markers ----

def _cpu_flags():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


class Feature:
    """A requirement: used as ``@requires_x`` or ``@requires_x()``, it marks a test with
    ``pytest.mark.<name>`` and skips it where the requirement does not hold.

    ``check`` returns None when the feature is there, else why not.
    """

    _all_features = {}

    def __init__(self, name, long_name=None, check=None, parent_features=()):
        self.name = name
        self.long_name = long_name or name
        self._check = check or (lambda: f"tessera does not support {self.long_name}")
        self.parent_features = (parent_features,) if isinstance(parent_features, str) else tuple(parent_features)
        Feature._all_features[name] = self

    def missing(self):
        """None when the requirement holds, else the reason it does not."""
        for parent in self.parent_features:
            why = Feature._all_features[parent].missing()
            if why:
                return why
        return self._check()

    def marks(self, support_required="compile-and-run"):
        """The pytest marks of this requirement: the feature mark and a skip where it is missing."""
        why = self.missing()
        marks = [getattr(pytest.mark, self.name)]
        if why and support_required != "optional":
            marks.append(pytest.mark.skip(reason=f"need {self.long_name}: {why}"))
        return marks

    def __call__(self, func=None, *, support_required="compile-and-run"):
        if func is None:
            return functools.partial(self.__call__, support_required=support_required)
        for mark in self.marks(support_required):
            func = mark(func)
        return func

    def __bool__(self):
        return self.missing() is None

    @classmethod
    def require(cls, name, support_required="compile-and-run"):
        """Skip the current test unless the feature ``name`` is there."""
        why = cls._all_features[name].missing()
        if why:
            pytest.skip(f"need {cls._all_features[name].long_name}: {why}")


def _need(ok, why):
    return lambda: None if ok() else why


requires_llvm = Feature("llvm", "LLVM (tessera builds 'llvm' as host C)", check=lambda: None)
requires_gpu = Feature("gpu", "a GPU", check=_need(_cuda_exists, "no CUDA GPU is present"))
requires_cuda = Feature("cuda", "CUDA", check=_need(_cuda_exists, "no CUDA GPU is present"))
requires_multi_gpu = Feature("multi_gpu", "two GPUs",
                             check=_need(lambda: _cuda_exists() and __import__("tessera").cuda(1).exist,
                                         "fewer than two CUDA GPUs"))
requires_tensorcore = Feature(
    "tensorcore", "Tensor Cores",
    check=_need(lambda: (_compute_capability() or (0, 0)) >= (7, 0), "no GPU of compute capability 7.0 or newer"),
    parent_features="cuda")
requires_x86 = Feature("x86", "x86", check=_need(lambda: platform.machine() in ("x86_64", "AMD64", "i686"),
                                                 "the CPU is not x86"))
requires_aarch64 = Feature("aarch64", "AArch64", check=_need(lambda: platform.machine() in ("aarch64", "arm64"),
                                                             "the CPU is not AArch64"))
requires_x86_avx512 = Feature("x86_avx512", "AVX-512",
                              check=_need(lambda: "avx512f" in _cpu_flags(), "the CPU has no AVX-512"),
                              parent_features="x86")
requires_x86_vnni = Feature("x86_vnni", "AVX-512 VNNI",
                            check=_need(lambda: "avx512_vnni" in _cpu_flags(), "the CPU has no VNNI"),
                            parent_features="x86")
for _name, _long in (("cudnn", "cuDNN"), ("cublas", "cuBLAS"), ("nccl", "NCCL"), ("nvptx", "NVPTX"),
                     ("cudagraph", "CUDA graphs"), ("opencl", "OpenCL"), ("adreno_opencl", "Adreno OpenCL"),
                     ("rocm", "ROCm"), ("matrixcore", "AMD Matrix Cores"), ("hipblas", "hipBLAS"),
                     ("metal", "Metal"), ("vulkan", "Vulkan"), ("openclml", "OpenCLML"), ("nnapi", "NNAPI"),
                     ("cutlass", "CUTLASS"), ("rpc", "RPC"), ("libtorch", "LibTorch"), ("mrvl", "Marvell"),
                     ("hexagon", "Hexagon"), ("aprofile_aem_fvp", "the AEM FVP"), ("arm_dot", "Arm dot product"),
                     ("arm_fp16", "Arm fp16"), ("aarch64_sve", "SVE"), ("aarch64_sme", "SME"), ("x86_amx", "AMX")):
    globals()["requires_" + _name] = Feature(_name, _long)
del _name, _long


def _skip_unless(why):
    def decorate(func):
        return pytest.mark.skip(reason=why)(func) if why else func

    return decorate


def requires_cuda_compute_version(major_version, minor_version=0):
    """Skip unless GPU 0 has compute capability ``major.minor`` or newer."""
    cc = _compute_capability()
    why = None
    if cc is None:
        why = "need a CUDA GPU"
    elif cc < (major_version, minor_version):
        why = f"need compute capability {major_version}.{minor_version}, the GPU has {cc[0]}.{cc[1]}"

    def decorate(func):
        func = pytest.mark.cuda(func)
        return _skip_unless(why)(func)

    return decorate


def requires_nvcc_version(major_version, minor_version=0, release_version=0):
    """tessera compiles CUDA with NVRTC (no nvcc): skip unless a GPU is present."""
    return _skip_unless(None if _cuda_exists() else "need a CUDA GPU")


def requires_llvm_minimum_version(major_version):
    """tessera builds 'llvm' as host C: no LLVM version to check."""
    return lambda func: func


def requires_package(*packages):
    """Skip unless every Python package is importable."""
    import importlib.util

    missing = [p for p in packages if importlib.util.find_spec(p) is None]
    return _skip_unless(f"need the packages {', '.join(missing)}" if missing else None)


def skip_if_32bit(reason):
    return _skip_unless(reason if sys.maxsize <= 2**32 else None)


def is_ampere_or_newer():
    """Whether GPU 0 has compute capability 8.0 or newer."""
    return (_compute_capability() or (0, 0)) >= (8, 0)


def uses_gpu(*args):
    """Mark a test as using a GPU (it still runs on the CPU targets without one)."""
    def decorate(func):
        return pytest.mark.gpu(func)

    return decorate(args[0]) if len(args) == 1 and callable(args[0]) else decorate


# ---- targets as parameters ----

def parametrize_targets(*args):
    """Run the test once per target: ``@parametrize_targets("llvm", "cuda")`` (targets not
    enabled here are skipped), or bare ``@parametrize_targets`` for every enabled target."""
    def decorate(targets):
        def wrap(func):
            params = [pytest.param(t, marks=[] if device_enabled(t) else
                                   [pytest.mark.skip(reason=f"target {t} is not enabled here")])
                      for t in targets]
            return pytest.mark.parametrize("target", params, scope="session")(func)

        return wrap

    if len(args) == 1 and callable(args[0]):
        return decorate(_default_targets())(args[0])
    return decorate(list(args))


def exclude_targets(*targets):
    """Leave ``targets`` out of the automatic ``target`` parametrization."""
    def wrap(func):
        func.tvm_excluded_targets = list(targets)
        return func

    return wrap


def known_failing_targets(*targets):
    """Expect the test to fail on ``targets``."""
    def wrap(func):
        func.tvm_known_failing_targets = list(targets)
        return func

    return wrap


# ---- parametrized fixtures ----

_group_counter = [0]


def _param_fixture(name_hint, values, ids, group):
    def as_fixture(*_self, request):
        return request.param

    as_fixture.tessera_param_values = list(values)
    as_fixture.tessera_param_ids = ids
    as_fixture.tessera_param_group = group
    as_fixture.__name__ = name_hint
    if group is None:  # a lone parameter parametrizes itself; groups need the plugin
        return pytest.fixture(params=list(values), ids=ids)(as_fixture)
    return pytest.fixture(as_fixture)


def parameter(*values, ids=None, by_dict=None):
    """A fixture taking each value in turn: ``dtype = tessera.testing.parameter("int8", "float32")``
    parametrizes every test that takes ``dtype``. ``by_dict={"id": value}`` names the values."""
    if by_dict is not None:
        if values or ids:
            raise TypeError("parameter(): give the values or by_dict, not both")
        ids, values = list(by_dict.keys()), list(by_dict.values())
    if callable(ids):
        ids = [ids(v) for v in values]
    return _param_fixture("parameter", values, list(ids) if ids else None, None)


def parameters(*value_sets, ids=None):
    """Fixtures whose values go together: ``a, b = parameters((1, 2), (3, 4))`` runs tests with
    (a, b) = (1, 2) and (3, 4), not the cross product."""
    if not value_sets:
        raise TypeError("parameters() needs at least one tuple of values")
    width = len(value_sets[0])
    if any(len(v) != width for v in value_sets):
        raise ValueError("parameters(): every tuple of values must have the same length")
    if callable(ids):
        ids = [ids(*v) for v in value_sets]
    _group_counter[0] += 1
    group = _group_counter[0]
    return [_param_fixture(f"parameter_{i}", [v[i] for v in value_sets], list(ids) if ids else None, group)
            for i in range(width)]


def fixture(func=None, *, cache_return_value=False):
    """A pytest fixture (``cache_return_value=True`` computes it once per set of parameters)."""
    def wrap(f):
        if not cache_return_value:
            return pytest.fixture(f)
        cache = {}
        signature = inspect.signature(f)

        @functools.wraps(f)
        def cached(*args, **kwargs):
            key = repr(signature.bind(*args, **kwargs).arguments)
            if key not in cache:
                cache[key] = f(*args, **kwargs)
            import copy

            try:
                return copy.deepcopy(cache[key])
            except Exception:  # noqa: BLE001 - IR handles are immutable: share them
                return cache[key]

        return pytest.fixture(cached)

    return wrap(func) if func is not None else wrap


def xfail_parameterizations(*params, reason):
    """Expect failure for the parameterizations whose id contains one of ``params``."""
    return _mark_parameterizations(params, "xfail", reason)


def skip_parameterizations(*params, reason):
    """Skip the parameterizations whose id contains one of ``params``."""
    return _mark_parameterizations(params, "skip", reason)


def _mark_parameterizations(params, kind, reason):
    def wrap(func):
        func.tessera_marked_params = getattr(func, "tessera_marked_params", []) + [(params, kind, reason)]
        return func

    return wrap


# ---- before/after tests of passes ----

def _is_method(func):
    return callable(func) and "self" in inspect.signature(func).parameters


def _is_fixture(obj):
    return hasattr(obj, "_pytestfixturefunction") or type(obj).__name__ == "FixtureFunctionDefinition"


def _parse_prim_func(func, name, check_well_formed):
    from ..script.tir.entry import DeferredPrimFunc, parse

    if isinstance(func, DeferredPrimFunc):  # a @T.prim_func written in the test class's body
        return func.parse(name, {}).with_attr("global_symbol", name)
    return parse(func, check=check_well_formed).with_attr("global_symbol", name)


def _is_deferred(value):
    from ..script.tir.entry import DeferredPrimFunc

    return isinstance(value, DeferredPrimFunc)


def _ir_fixture(value):
    """A fixture giving the IR that ``value`` describes: a PrimFunc or IRModule, a method
    returning one, a TVMScript function without its decorator, or a class of them (a module)."""
    from .. import _core

    if _is_fixture(value):
        return value
    if isinstance(value, (_core.PrimFunc, _core.IRModule)):
        def make(self):
            return value
    elif inspect.isclass(value) and issubclass(value, Exception):
        def make(self):
            return value
    elif _is_deferred(value):
        def make(self):
            return _parse_prim_func(value, "main", self.check_well_formed)
    elif _is_method(value):
        def make(self):
            return value(self)
    elif inspect.isclass(value):
        def make(self):
            functions = []
            for name, member in value.__dict__.items():
                if name.startswith("_"):
                    continue
                func = member if isinstance(member, _core.PrimFunc) else _parse_prim_func(
                    member, name, self.check_well_formed)
                functions.append((_core.GlobalVar(name), func.with_attr("global_symbol", name)))
            return _core.IRModule(functions)
    elif callable(value):
        def make(self):
            return _parse_prim_func(value, "main", self.check_well_formed)
    else:
        raise TypeError(f"CompareBeforeAfter: cannot make IR of a {type(value).__name__}")
    return pytest.fixture(make)


def _applying(module_pass):
    from .. import _core

    def apply(ir):
        if isinstance(ir, _core.IRModule):
            return module_pass(ir)
        if isinstance(ir, _core.PrimFunc):
            return module_pass(_core.IRModule.from_func(ir, "main"))["main"]
        raise TypeError(f"expected an IRModule or a PrimFunc, got {type(ir).__name__}")

    return apply


class CompareBeforeAfter:
    """Before/after tests of a pass: a subclass sets ``transform`` (a Pass, or a method returning
    one), ``before`` and ``expected`` (TVMScript functions without decorator, PrimFuncs, methods
    or classes of functions for modules; ``expected`` may be an Exception class the pass must
    raise). The inherited ``test_compare`` runs the pass and compares structurally.

    >>> class TestDropsEmptyEvaluate(tessera.testing.CompareBeforeAfter):
    ...     transform = tessera.tir.transform.RemoveNoOp()
    ...     def before(flags: T.Buffer(4, "int8")):
    ...         flags[2] = T.int8(7)
    ...         T.evaluate(0)
    ...     def expected(flags: T.Buffer(4, "int8")):
    ...         flags[2] = T.int8(7)
    """

    check_well_formed = True

    @classmethod
    def _normalize_before(cls, func):
        """``func`` as a pytest fixture of its IR (TVM's helper that test classes of their own
        use): a fixture stays as it is."""
        return func if _is_fixture(func) else _ir_fixture(func)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for public, names in (("before", ("before", "Before")), ("expected", ("expected", "Expected"))):
            given = [n for n in names if n in cls.__dict__]
            if len(given) > 1:
                raise TypeError(f"{cls.__name__} defines both {given[0]} and {given[1]}")
            if given:
                setattr(cls, public, _ir_fixture(cls.__dict__[given[0]]))
        if "transform" in cls.__dict__:
            transform = cls.__dict__["transform"]
            if _is_fixture(transform):
                cls._transform_fixture = transform

                def make(self, _transform_fixture):
                    return _applying(_transform_fixture)
            elif _is_method(transform):
                def make(self):
                    return _applying(transform(self))
            elif callable(transform):
                def make(self):
                    return _applying(transform)
            else:
                raise TypeError("CompareBeforeAfter.transform must be a Pass or a method returning one")
            cls.transform = pytest.fixture(make)

    def test_compare(self, before, expected, transform):
        from .. import _core
        from ..ir import assert_structural_equal

        if inspect.isclass(expected) and issubclass(expected, Exception):
            with pytest.raises(expected):
                after = transform(before)
                pytest.fail(f"expected {expected.__name__} from the transform, got:\n{after.script()}")
            return
        after = transform(before)
        if isinstance(after, _core.PrimFunc) and isinstance(expected, _core.PrimFunc):
            after = after.with_attr("global_symbol", "main")
            expected = expected.with_attr("global_symbol", "main")
        assert_structural_equal(after, expected)


def main():
    """Run the calling test file with pytest (``if __name__ == "__main__": tvm.testing.main()``)
    and exit with its status."""
    caller = inspect.stack()[1].frame.f_globals.get("__file__")
    args = ([caller] if caller else []) + sys.argv[1:]
    sys.exit(pytest.main(args + ["-p", "tessera.testing.plugin"]))


def strtobool(value):
    """'yes'/'true'/'on'/'1' -> True, 'no'/'false'/'off'/'0' -> False."""
    v = str(value).strip().lower()
    if v in ("y", "yes", "t", "true", "on", "1"):
        return True
    if v in ("n", "no", "f", "false", "off", "0"):
        return False
    raise ValueError(f"invalid truth value {value!r}")


__all__ = [n for n in dir() if n.startswith("requires_")] + [
    "CompareBeforeAfter", "Feature", "assert_allclose", "assert_prim_expr_equal", "device_enabled", "enabled_targets",
    "exclude_targets", "fixture", "is_ampere_or_newer", "known_failing_targets", "main", "parameter",
    "parameters", "parametrize_targets", "skip_if_32bit", "skip_parameterizations", "strtobool",
    "uses_gpu", "xfail_parameterizations"]


# Exhaustive checks of integer facts (arith's solvers).
from .int_constraints import (  # noqa: E402
    check_bool_expr_is_true,
    check_int_constraints_trans_consistency,
)

__all__ += ["check_bool_expr_is_true", "check_int_constraints_trans_consistency"]


# TVM's FFI test functions (tvm.testing.echo, ErrorTest, ...), also as global functions.
from . import ffi_testing as _ffi_testing  # noqa: E402
from .ffi_testing import echo, test_check_eq_callback, test_raise_error, test_wrap_callback  # noqa: E402

ErrorTest = _ffi_testing.error_test
_ffi_testing.register()

__all__ += ["ErrorTest", "echo", "test_check_eq_callback", "test_raise_error", "test_wrap_callback"]
