"""Arrays: ``ts.nd.array(np_array, device=ts.cpu(0))``, ``ts.nd.empty(shape, dtype)``."""

from .runtime.ndarray import NDArray, array, empty

__all__ = ["NDArray", "array", "empty"]
