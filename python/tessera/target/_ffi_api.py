"""The global functions of TVM's ``target`` namespace that Python code calls directly
(``tvm.target._ffi_api.target_has_feature(...)``), over tessera's Target."""

from . import codegen as _codegen
from .tag import list_tags as _list_tags
from .tag import register_tag as _register_tag
from .target import Target, TargetKind, list_kinds


def target_has_feature(feature, target):
    return _codegen.target_has_features(str(feature), target)


def llvm_cpu_has_feature(feature, target):
    return _codegen.llvm_cpu_has_features(str(feature), target)


def llvm_get_cpu_features(target):
    return {name: "" for name in sorted(_codegen.llvm_get_cpu_features(target))}


def llvm_get_cpu_archlist(target):
    return _codegen.llvm_get_cpu_archlist(target)


def llvm_get_vector_width(target):
    return _codegen.llvm_get_vector_width(target)


llvm_version_major = _codegen.llvm_version_major
llvm_get_targets = _codegen.llvm_get_targets
llvm_get_system_cpu = _codegen.llvm_get_system_cpu
llvm_get_system_triple = _codegen.llvm_get_system_triple
llvm_get_system_x86_vendor = _codegen.llvm_get_system_x86_vendor


def ListTargetKinds():  # noqa: N802 - TVM's name
    return list_kinds()


def ListTargetKindOptions(kind):  # noqa: N802
    return kind.options


def ListTargetKindOptionsFromName(name):  # noqa: N802
    return TargetKind.options_from_name(name)


def TargetCurrent(allow_none=True):  # noqa: N802
    return Target.current(allow_none)


def TargetExport(target):  # noqa: N802
    return target.export()


def WithHost(target, host):  # noqa: N802
    return target.with_host(host)


def TargetGetDeviceType(target):  # noqa: N802
    return target.get_target_device_type()


def TargetGetFeature(target, name):  # noqa: N802
    return getattr(target.features, name)


def TargetTagListTags():  # noqa: N802
    return _list_tags()


def TargetTagAddTag(name, config, override=False):  # noqa: N802
    return _register_tag(name, config, override)
