"""``akg.utils.kernel_exec``: AKG's build-and-run interface, on tessera.

``op_build_test(op, shapes, dtypes, op_attrs, kernel_name, attrs)`` makes one placeholder per
input (``input_1``, ``input_2``, ...; a list of shapes makes a list of placeholders), calls the
operator with them, the ``op_attrs`` and (when it takes one) ``target=``, and builds the result
for ``attrs["target"]``: ``llvm`` (AKG's CPU target; tessera's host C backend) or ``cuda``.
``mod_launch(mod, [numpy inputs..., numpy outputs...])`` runs it and returns the outputs named by
``outputs`` (the last argument by default), as numpy arrays. An in-place update (an output bound
to an input's buffer by ``TensorUtils.inplace_set``) lands in that input's array.

AKG's Ascend path (the ``cce`` target, its simulators and profilers) is not available: building
for it raises NotImplementedError.
"""

import inspect
import logging
import os
import time
from enum import IntEnum

import numpy as np

CUDA, CCE, LLVM = "cuda", "cce", "llvm"
BINDS = "binds"
# The Ascend cube unit's fractal block (AKG's ops on Ascend tile by it).
BLOCK_IN = BLOCK_OUT = BLOCK_REDUCE = 16


class ReturnType(IntEnum):
    """What ``op_build`` returns: the module (MOD), or schedule features for a tuner (FEAT,
    MOD_AND_FEAT; not available)."""

    DEFAULT = 0
    FEAT = 1
    MOD = 2
    MOD_AND_FEAT = 3


def func_time_required(func):
    """Decorator: log how long each call of ``func`` takes."""

    def timed(*args, **kwargs):
        start = time.time()
        try:
            return func(*args, **kwargs)
        finally:
            logging.info("%s took %.3f s", func.__name__, time.time() - start)

    timed.__name__, timed.__qualname__, timed.__doc__ = func.__name__, func.__qualname__, func.__doc__
    timed.__wrapped__ = func
    return timed


def debug_mode(debug_flag):
    """The extra lowering passes of an Ascend debug mode: none on tessera's targets."""
    if debug_flag:
        raise NotImplementedError("debug_mode: AKG's Ascend debug passes are not available on tessera")
    return []


def get_runtime_mode():
    """``RUNTIME_MODE`` from the environment (AKG's default when unset: ``aic_cloud``)."""
    return os.environ.get("RUNTIME_MODE") or "aic_cloud"


def get_profiling_mode():
    """Whether ``PROFILING_MODE=true`` asks for Ascend profiling."""
    return os.environ.get("PROFILING_MODE", "").lower() == "true"


def product_is_mini():
    """Whether the runtime mode names an Ascend "mini" product."""
    return get_runtime_mode() in ("air", "aic", "compile_mini")


def is_symbolic_tiling(kernel_name):
    """Ascend symbolic tiling: never used by tessera's targets."""
    return False


def create_code(kernel_name, code_path=None, code=None, code_type=CCE):
    """Write a kernel's source to ``code_path/kernel_name.<ext>`` (``.cc`` for llvm, ``.cu``
    for cuda, ``.cce`` for cce); returns the file's path."""
    ext = {LLVM: "cc", CUDA: "cu", CCE: "cce"}.get(code_type, str(code_type))
    path = os.path.join(code_path or "./", f"{kernel_name}.{ext}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(code or "")
    return path


def gen_kernel_name(input_shapes, input_types, op_attrs=None, kernel_name="", attrs=None):
    """A name for the kernel from its inputs and attributes (letters, digits and ``_``)."""
    import re

    parts = [kernel_name]
    for shape, dtype in zip(input_shapes, input_types):
        shapes = shape if shape and isinstance(shape[0], (list, tuple)) else [shape]
        parts += [f"{dtype}_" + "_".join(str(s) for s in one) for one in shapes]
    for item in op_attrs or ():
        parts.append("_".join(str(x) for x in item) if isinstance(item, (list, tuple)) else str(item))
    name = re.sub(r"[^0-9a-zA-Z]+", "_", "_".join(parts))
    return name[:250]


def _placeholders(input_shapes, input_types):
    from ...te import Tensor, placeholder

    inputs = []
    for i, (shape, dtype) in enumerate(zip(input_shapes, input_types), start=1):
        if isinstance(shape, Tensor):
            inputs.append(shape)
        elif isinstance(shape, (list, tuple)) and shape and isinstance(shape[0], (list, tuple)):
            dtypes = dtype if isinstance(dtype, (list, tuple)) else [dtype] * len(shape)
            inputs.append([placeholder(tuple(s), d, f"input_{i}_{j}")
                           for j, (s, d) in enumerate(zip(shape, dtypes), start=1)])
        else:
            inputs.append(placeholder(tuple(shape), dtype, f"input_{i}"))
    return inputs


def _flatten(items):
    out = []
    for x in items:
        if isinstance(x, (list, tuple)):
            out.extend(_flatten(x))
        else:
            out.append(x)
    return out


def _outputs(result):
    """The output tensors of an operator's result (a tensor, or a list/tuple of tensors, nested
    lists, attribute dicts and schedule functions as AKG's ops return them) and the ``binds`` of
    its attribute dicts."""
    from ...te import Tensor

    if isinstance(result, dict):
        raise NotImplementedError("op_build: an operator returning a GPU schedule template (a dict) is not "
                                  "available on tessera")
    items = _flatten(result) if isinstance(result, (list, tuple)) else [result]
    outs, binds = [], {}
    for x in items:
        if isinstance(x, Tensor):
            outs.append(x)
        elif isinstance(x, dict):
            binds.update(x.get(BINDS) or {})  # the rest: attributes for AKG's tiler
        elif callable(x):
            continue  # a schedule function of AKG's own scheduler
        else:
            raise TypeError(f"op_build: the operator returned {x!r}, expected te tensors")
    if not outs:
        raise TypeError("op_build: the operator returned no tensor")
    return outs, binds


def _create_sch_only(tensor):
    """AKG's mark of a tensor computed for its side effect only (an in-place update), not an
    output parameter of the kernel."""
    attrs = getattr(tensor.op, "attrs", None) or {}
    return "create_sch_only" in attrs


def _in_place(inputs, outputs, binds):
    """The in-place updates of ``binds`` (AKG's ``TensorUtils.inplace_set``: an input and an
    output bound to one buffer): (output tensor, index of its input) pairs."""
    if not binds:
        return []
    from ...te import Tensor

    by_buffer = {}
    for tensor, buf in binds.items():
        by_buffer.setdefault(id(buf), []).append(tensor)
    pairs = []
    for tensors in by_buffer.values():
        ins = [i for i, a in enumerate(inputs) if any(a.same_as(t) for t in tensors)]
        outs = [t for t in tensors if isinstance(t, Tensor) and any(t.same_as(o) for o in outputs)]
        if len(ins) != 1 or len(outs) != 1 or not _create_sch_only(outs[0]):
            raise NotImplementedError("op_build: buffer binds other than an in-place update of one input by one "
                                      "output (TensorUtils.inplace_set) are not provided by tessera")
        pairs.append((outs[0], ins[0]))
    return pairs


def op_build(op_func, input_shapes, input_types, op_attrs=None, kernel_name="", attrs=None, log_code=False,
             dump_ir=True, dump_code=True, polyhedral=True, tuning=False, ret_mode=ReturnType.MOD):
    """Build ``op_func`` applied to placeholders of ``input_shapes``/``input_types`` and
    ``op_attrs``, for ``attrs["target"]`` (default ``cce``, AKG's, which is not available).
    ``dump_ir``/``dump_code`` (AKG's files of its passes and code) and ``polyhedral`` (its
    scheduler) have no effect: tessera schedules the TensorIR function itself."""
    from . import build_module

    attrs = {} if attrs is None else attrs
    target = attrs.get("target", CCE)
    if ret_mode in (ReturnType.FEAT, ReturnType.MOD_AND_FEAT) or tuning:
        raise NotImplementedError("op_build: AKG's tuning features are not available on tessera")
    inputs = _placeholders(input_shapes, input_types)
    kwargs = {}
    try:
        params = inspect.signature(op_func).parameters
    except (TypeError, ValueError):
        params = {}
    if "target" in params:
        kwargs["target"] = target
    outputs, binds = _outputs(op_func(*inputs, *(op_attrs or ()), **kwargs))
    binds.update(attrs.pop(BINDS, None) or {})
    args = _flatten(inputs)
    in_place = _in_place(args, outputs, binds)
    # The kernel's parameters: the inputs, the outputs, then the in-place results (AKG writes
    # those into their input's buffer; here a parameter of their own, copied back by mod_launch).
    args += [o for o in outputs if not _create_sch_only(o) and not any(o.same_as(a) for a in args)]
    visible = len(args)
    args += [o for o, _ in in_place]
    sch = build_module.create_schedule([o.op for o in outputs])
    if attrs.get("simple_mode"):
        return sch, inputs, outputs, attrs
    mod = build_module.build(sch, args, target, name=kernel_name or "default_function", attrs=attrs,
                             polyhedral=polyhedral)
    mod._akg_in_place = [(visible + k, i) for k, (_, i) in enumerate(in_place)]
    if log_code:
        logging.debug("code of %s:\n%s", kernel_name, mod.get_source() if hasattr(mod, "get_source") else "")
    return mod


@func_time_required
def op_build_test(op_func, input_shapes, input_types, op_attrs=None, kernel_name="", attrs=None, log_code=False,
                  dump_ir=True, dump_code=True, polyhedral=True, tuning=False):
    """``op_build`` with a kernel name made from the inputs and attributes (``gen_kernel_name``)."""
    if not (isinstance(attrs, dict) and "tuning" in attrs):
        kernel_name = gen_kernel_name(input_shapes, input_types, op_attrs, kernel_name, attrs)
    return op_build(op_func, input_shapes, input_types, op_attrs, kernel_name, attrs, log_code, dump_ir,
                    dump_code, polyhedral, tuning)


@func_time_required
def mod_launch(mod, args, outputs=(-1,), tuning=False, device_id=-1, expect=None, repeat_time=400, arch=None):
    """Run ``mod`` on ``args`` (numpy arrays: inputs then outputs) and return the arrays at the
    positions ``outputs`` (negative from the end): one numpy array, or a tuple of them."""
    from ... import nd
    from ...runtime import cpu, cuda

    if isinstance(mod, str):
        raise NotImplementedError(f"mod_launch('{mod}'): launching an Ascend kernel by name is not available "
                                  "on tessera")
    if tuning:
        raise NotImplementedError("mod_launch(tuning=True): AKG's cycle counting is not available on tessera")
    if device_id == -1:
        device_id = int(os.environ.get("DEVICE_ID", 0))
    dev = cuda(device_id) if getattr(mod, "_akg_target", LLVM) == CUDA else cpu(0)
    shapes = getattr(mod, "_akg_arg_shapes", None)
    in_place = getattr(mod, "_akg_in_place", [])
    arrays, given = [], []
    for i, a in enumerate(args):
        a = np.asarray(a)
        if np.iscomplexobj(a):
            a = np.stack([a.real, a.imag], axis=-1)
        given.append(a.shape)
        want = shapes[i] if shapes is not None and i < len(shapes) else None
        if want is not None and a.shape != want:
            # AKG's launcher hands the kernel each array's address: an array of another shape
            # but as many elements is the kernel's buffer, in its memory order.
            if a.size != int(np.prod(want, dtype=np.int64)):
                raise ValueError(f"mod_launch: argument {i} has shape {a.shape} ({a.size} elements); the kernel's "
                                 f"parameter is {want} ({int(np.prod(want, dtype=np.int64))} elements)")
            a = a.reshape(want)
        arrays.append(nd.array(np.asarray(a, order="C"), device=dev))  # keeps 0-d arrays 0-d
    updates = [nd.empty(shapes[k], arrays[i].dtype, dev) for k, i in in_place]
    mod(*arrays, *updates)
    for (_, i), update in zip(in_place, updates):
        arrays[i].copyfrom(update.numpy())  # the in-place result lands in its input, as in AKG
    out = [arrays[i].numpy().reshape(given[i]) for i in outputs]
    return out[0] if len(out) == 1 else tuple(out)


def get_device_id():
    """``DEVICE_ID`` from the environment (0 when unset)."""
    return int(os.environ.get("DEVICE_ID", 0))


def get_available_devices_num():
    """``DEVICE_TOTAL_NUM`` from the environment (1 when unset)."""
    return int(os.environ.get("DEVICE_TOTAL_NUM", 1))
