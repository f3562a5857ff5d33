"""The vector DSL: ``from tessera.dsl import BuildManager, script as S``."""

from . import script
from .build_manager import BuildManager
from .executor import Executor
from .types import hw_native_vdtype

__all__ = ["BuildManager", "Executor", "hw_native_vdtype", "script"]
