"""The vector DSL: ``from tessera.dsl import BuildManager, script as S``."""

from . import script
from .build_manager import BuildManager
from .executor import Executor

__all__ = ["BuildManager", "Executor", "script"]
