"""The vector DSL: ``from tessera.dsl import BuildManager, script as S``."""

from . import analysis, script, testing, utils
from .aiff import Aiff
from .build_manager import BuildManager
from .compass_info import CompassInfo
from .executor import Executor
from .utils import hw_native_vdtype

__all__ = ["Aiff", "BuildManager", "CompassInfo", "Executor", "analysis", "hw_native_vdtype",
           "script", "testing", "utils"]
