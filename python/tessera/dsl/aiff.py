"""Compass's ``Aiff`` descriptor builder: AIFF (the NPU's fixed-function units) is not supported
by tessera. The name exists so that programs importing it load; using it raises."""

from ..error import TesseraValueError


class Aiff:
    """Raises: AIFF is not supported by tessera."""

    def __init__(self, *args, **kwargs):
        raise TesseraValueError("AIFF (tessera.dsl.Aiff) is not supported by tessera: it needs "
                                "the fixed-function units of a Zhouyi NPU")
