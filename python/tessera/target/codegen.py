"""TVM's ``tvm.target.codegen`` queries about CPU targets, answered from the target string.

tessera generates C (and CUDA C) rather than LLVM IR and has no LLVM inside, so the queries
are answered from a built-in table of the features common CPUs have (see
:mod:`tessera.target._cpu_features`): ``target_has_features``, ``llvm_cpu_has_features``,
``llvm_get_cpu_features``, ``llvm_get_cpu_archlist`` and ``llvm_get_vector_width`` work for
the CPUs in the table and the ``-mattr`` of any target. The questions only an LLVM build can
answer (``llvm_version_major``, ``llvm_get_targets``, ``llvm_get_system_cpu`` / ``_triple`` /
``_x86_vendor``, intrinsic ids) raise :class:`LLVMNotAvailableError`, a RuntimeError, rather
than guess.
"""

from ..error import TesseraTypeError
from . import _cpu_features
from ._cpu_features import LLVMNotAvailableError
from .target import Target

__all__ = ["LLVMNotAvailableError", "build_module", "llvm_cpu_has_features", "llvm_get_cpu_archlist",
           "llvm_get_cpu_features", "llvm_get_intrinsic_name", "llvm_get_system_cpu",
           "llvm_get_system_triple", "llvm_get_system_x86_vendor", "llvm_get_targets",
           "llvm_get_vector_width", "llvm_lookup_intrinsic_id", "llvm_version_major",
           "target_has_features"]


def _target(target):
    if target is None:
        return Target.current(allow_none=False)
    if not isinstance(target, Target):
        raise TesseraTypeError(f"expected a Target or None, got {target!r}")
    return target


def _feature_list(cpu_features):
    from .. import _core

    if isinstance(cpu_features, str):
        return [cpu_features]
    if isinstance(cpu_features, (list, tuple, _core.Array)):
        return [str(f) for f in cpu_features]
    raise TesseraTypeError(f"CPU features are a name or a list of names, got {cpu_features!r}")


def target_has_features(cpu_features, target=None):
    """Whether ``target`` (default: the current one) has every feature in ``cpu_features``."""
    target = _target(target)
    return all(_cpu_features.has_feature(target, f) for f in _feature_list(cpu_features))


def llvm_cpu_has_features(cpu_features, target=None):
    """As :func:`target_has_features` (the CPU's features with ``-mattr`` applied)."""
    return target_has_features(cpu_features, target)


def llvm_get_cpu_features(target=None):
    """The set of features the target's CPU has (``-mattr`` applied)."""
    return _cpu_features.cpu_features(_target(target))


def llvm_get_cpu_archlist(target=None):
    """The CPU names (for ``-mcpu``) the table knows for the target's ``-mtriple``."""
    return _cpu_features.cpu_archlist(_target(target))


def llvm_get_vector_width(target=None):
    """The width in bits of the target's widest vector register."""
    return _cpu_features.vector_width(_target(target))


def build_module(mod, target):
    """``tessera.build(mod, target)``."""
    from ..driver import build

    return build(mod, target=target)


def _no_llvm(what):
    raise LLVMNotAvailableError(f"{what} needs LLVM, and tessera is built without LLVM (it generates "
                                "C and CUDA C); the CPU feature queries of tvm.target.codegen answer "
                                "from tessera's table instead")


def llvm_version_major(allow_none=False):
    """None with ``allow_none``; else an error: tessera has no LLVM."""
    if allow_none:
        return None
    _no_llvm("llvm_version_major()")


def llvm_get_targets():
    _no_llvm("llvm_get_targets()")


def llvm_get_system_cpu():
    _no_llvm("llvm_get_system_cpu()")


def llvm_get_system_triple():
    _no_llvm("llvm_get_system_triple()")


def llvm_get_system_x86_vendor():
    _no_llvm("llvm_get_system_x86_vendor()")


def llvm_lookup_intrinsic_id(name):
    _no_llvm(f"llvm_lookup_intrinsic_id({name!r})")


def llvm_get_intrinsic_name(intrin_id):
    _no_llvm(f"llvm_get_intrinsic_name({intrin_id!r})")
