"""The DSL intrinsics (``S.vload``, ``S.cast``, ``S.dma_copy`` ...), one module per family.

Each intrinsic is a function ``impl(parser, node, *args, **kwargs)`` that receives its arguments
already evaluated (IR expressions, pointers, Python values) and builds IR through the parser.
Outside a kernel an intrinsic can only run inside a plain Python helper that a kernel calls at
compile time (see :mod:`tessera.dsl.symbolic`).
"""

from ._registry import REGISTRY, Intrinsic, call_outside_kernel, intrinsic  # noqa: F401
from . import (arith, bitwise, compare, conversion, dma, mathfuncs, memory, misc,  # noqa: F401
               permutation, predicate, table, tec)  # (registration)
