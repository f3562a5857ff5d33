"""The vector DSL: ``from tessera.dsl import BuildManager, script as S``."""

from . import analysis, script, testing, utils
from .build_manager import BuildManager
from .executor import Executor
from .utils import hw_native_vdtype

__all__ = ["BuildManager", "Executor", "analysis", "hw_native_vdtype", "script", "testing", "utils"]
