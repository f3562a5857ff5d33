"""The vector DSL: ``from tessera.dsl import BuildManager, script as S``."""

try:  # numpy then knows the name "bfloat16" (np.dtype("bfloat16"), .astype("bfloat16")), as in Compass
    import ml_dtypes  # noqa: F401
except ImportError:  # pragma: no cover - ml_dtypes is a dependency; without it bfloat16 arrays fail
    pass

from ..error import TesseraValueError
from . import analysis, schedule, script, testing, utils
from .aiff import Aiff
from .build_manager import BuildManager
from .compass_info import CompassInfo
from .executor import Executor
from .utils import get_range, hw_native_vdtype


def get_rpc_session(*args, **kwargs):
    """Compass connects to an NPU board over RPC here; tessera runs every kernel on the host CPU,
    so there is no session to open: always raises."""
    raise TesseraValueError("get_rpc_session is not supported by tessera: DSL kernels run on the "
                            "host CPU (Executor.__call__/run/benchmark), there is no NPU to reach over RPC")


__all__ = ["Aiff", "BuildManager", "CompassInfo", "Executor", "analysis", "get_range",
           "get_rpc_session", "hw_native_vdtype", "schedule", "script", "testing", "utils"]
