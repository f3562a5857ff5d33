"""CompassInfo: the configuration of a Zhouyi NPU target, as Compass reports it.

>>> info = CompassInfo.get("X2_1204")
>>> info.version, info.core_count, info.tec_count, info.vector_width
('X2', 1, 4, 256)
>>> info.lsram_size(), info.gsram_size()        # bytes per TEC, bytes per core
(32768, 262144)
"""

from .. import _core
from ..error import TesseraValueError

VECTOR_WIDTH = 256


def _target_name(target):
    """The configuration name of a target: ``"X2_1204"``, ``"compass -mcpu=X2_1204"``, or
    ``"compass"`` alone (the default configuration, X2_1204)."""
    text = str(target).strip()
    try:
        attrs = _core.Target(text).attrs  # parsed by the C++ Target
    except ValueError:  # not a target string: GetDSLTarget's error names the configurations
        attrs = []
    for key, value in attrs:
        if key == "mcpu" and value:
            return value
    return "X2_1204" if text == "compass" else text


class CompassInfo:
    """Hardware facts of one DSL target (``X1_1204``, ``X2_1204``, ``X3P_1304`` ...)."""

    def __init__(self, desc):
        self._desc = desc

    @staticmethod
    def get(target):
        """The information of ``target``: a configuration name (``"X2_1204"``) or a target string
        with ``-mcpu=<name>``."""
        name = _target_name(target)
        try:
            return CompassInfo(_core.get_dsl_target(name))
        except Exception:
            known = ", ".join(t.name for t in _core.dsl_targets())
            raise TesseraValueError(f'unknown Zhouyi NPU configuration "{name}"; known: {known}') \
                from None

    @property
    def name(self):
        return self._desc.name

    @property
    def version(self):
        """The architecture generation: ``"X1"``, ``"X2"``, ``"X3P"`` or ``"X3S"``."""
        return self._desc.name.split("_")[0]

    @property
    def core_count(self):
        return self._desc.cores

    @property
    def tec_count(self):
        """TECs (vector threads) per core."""
        return self._desc.tecs_per_core

    @property
    def vector_width(self):
        """Width of a vector register in bits."""
        return VECTOR_WIDTH

    def lsram_size(self, piece_idx=0):
        """Bytes of local SRAM of each TEC."""
        self._piece(piece_idx)
        return self._desc.lsram_bytes_per_tec

    def gsram_size(self, piece_idx=0):
        """Bytes of shared SRAM of each core."""
        self._piece(piece_idx)
        return self._desc.shared_bytes_per_core

    def _piece(self, piece_idx):
        if piece_idx != 0:
            raise TesseraValueError(f"{self.name} has one SRAM piece (index 0), got {piece_idx}")

    def __repr__(self):
        return f"CompassInfo({self.name})"
