"""``akg.build_module`` (``akg.build``, ``akg.lower``, ``akg.build_config``): AKG's build entry
points on tessera.

``akg.build(s, [inputs..., outputs...], "llvm", name=...)`` compiles the computation of a schedule
made by ``akg.tvm.create_schedule`` for the host CPU through tessera (which schedules the TensorIR
function itself; AKG's polyhedral scheduler and its attributes do not apply). The ``cce``
(Ascend) target is not available; ``cuda`` builds through tessera's CUDA backend.
"""

from .fork_tvm import Schedule, build_config, create_schedule, prim_func  # noqa: F401

# AKG's levels of tiling help (its Ascend tiler's diagnostics).
help_tiling_level = {"None": 0, "General": 1, "Candidates": 2, "Tuning": 3}


def _target(target, what):
    text = str(target or "cce").strip()
    kind = text.split()[0]
    if kind == "cce":
        raise NotImplementedError(f"{what}: the cce (Ascend) target is not available on tessera; "
                                  "build for 'llvm' (the CPU) or 'cuda'")
    if kind not in ("llvm", "c", "cuda"):
        raise NotImplementedError(f"{what}: unknown target '{text}' (tessera builds llvm/c and cuda)")
    return "llvm" if kind in ("llvm", "c") else text


def lower(sch, args, shape_params=None, name="default_function", binds=None, attrs=None, simple_mode=False,
          polyhedral=False, tuning=False, target="cce"):
    """The TensorIR module (an IRModule holding ``name``) of the computation."""
    from .fork_tvm import lower as _lower

    _target(target, "akg.lower")
    if shape_params:
        raise NotImplementedError("akg.lower(shape_params=...): dynamic shapes are not provided by tessera")
    return _lower(sch, args, name=name, binds=binds)


def build(inputs, args, target="cce", shape_params=None, name="default_function", binds=None, attrs=None,
          polyhedral=True, aicpu=False):
    """Compile and load the computation of ``inputs`` (a schedule) with parameters ``args``."""
    from .fork_tvm import build as _build

    kind = _target(target, "akg.build")
    if shape_params:
        raise NotImplementedError("akg.build(shape_params=...): dynamic shapes are not provided by tessera")
    mod = _build(inputs, args, kind, name=name, binds=binds)
    mod._akg_target = "cuda" if kind.startswith("cuda") else "llvm"
    mod._akg_arg_shapes = [_shape(a) for a in args]
    return mod


def _shape(arg):
    """The constant shape of a tensor argument (None for a scalar or a symbolic shape)."""
    try:
        return tuple(int(d) for d in arg.shape)
    except (AttributeError, TypeError, ValueError):
        return None


def build_to_func(inputs, args, shape_params=None, name="default_function", binds=None, attrs=None,
                  polyhedral=False, target="cce"):
    """The PrimFunc of the computation (AKG's build before code generation)."""
    _target(target, "akg.build_to_func")
    return prim_func(inputs, args, name)
