"""The trace of a schedule: the primitives called, as Python lines or JSON, and their replay."""

import json

from ... import _core


class Trace:
    """The instructions a schedule recorded, in order.

    >>> print("\\n".join(sch.trace.as_python()))
    b0 = sch.get_block(name="B", func_name="main")
    (l1,) = sch.get_loops(block=b0)
    """

    def __init__(self, core_trace):
        self._trace = core_trace

    def as_python(self, remove_postproc=False):
        """The calls as Python lines (handles named ``b0``, ``l1``, ...; every argument spelled
        out); executed with ``sch`` bound to a fresh schedule of the same module they replay."""
        return self._trace.as_python().splitlines()

    def as_json(self, remove_postproc=False):
        """The instructions as a JSON-compatible object (see :meth:`apply_json_to_schedule`)."""
        return json.loads(self._trace.as_json())

    def apply_to_schedule(self, sch, remove_postproc=False):
        """Replay the instructions on ``sch``."""
        self._trace.apply_to_schedule(sch._sch, remove_postproc)

    @staticmethod
    def apply_json_to_schedule(json_obj, sch):
        """Replay a trace written by :meth:`as_json` (an object or its JSON text) on ``sch``."""
        text = json_obj if isinstance(json_obj, str) else json.dumps(json_obj)
        _core.Trace.apply_json_to_schedule(text, sch._sch)

    @property
    def kinds(self):
        """The primitive name of each instruction."""
        return list(self._trace.kinds)

    def __len__(self):
        return len(self._trace)

    def show(self):
        """Print the trace as Python."""
        print(str(self))

    def __str__(self):
        return "\n".join(self.as_python())

    def __repr__(self):
        return f"<Trace of {len(self)} instructions>"
