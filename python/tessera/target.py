"""Targets: ``Target("llvm")``, ``Target("cuda -arch=sm_80")``, ``Target({"kind": "cuda", "arch":
"sm_80"})``. ``ts.build`` takes a Target or its string; ``with Target(...):`` makes it current.

>>> t = Target("cuda -arch=sm_80")
>>> t.kind.name, t.attrs["arch"], t.keys, str(t)
('cuda', 'sm_80', ('cuda', 'gpu'), 'cuda -arch=sm_80')
"""

import threading

from .error import TesseraTypeError, TesseraValueError

_KEYS = {"llvm": ("cpu",), "c": ("cpu",), "cuda": ("cuda", "gpu")}
_LIST_ATTRS = ("libs", "keys", "mattr")
_current = threading.local()


class TargetKind:
    """The kind of a target: "llvm", "c" or "cuda"."""

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, TargetKind) and other.name == self.name or other == self.name

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"TargetKind({self.name!r})"


def _parse_value(text):
    if text.lstrip("-").isdigit():
        return int(text)
    if text in ("true", "false"):
        return text == "true"
    return text


class Target:
    """A compilation target: a kind and its options (``-key=value``)."""

    def __init__(self, target, host=None):
        if isinstance(target, Target):
            self.kind, self.attrs = target.kind, dict(target.attrs)
            host = host if host is not None else target.host
        elif isinstance(target, dict):
            config = dict(target)
            if "kind" not in config:
                raise TesseraValueError("a target dict needs a 'kind'")
            self.kind = self._kind(str(config.pop("kind")))
            host = config.pop("host", host)
            self.attrs = config
        elif isinstance(target, str):
            words = target.split()
            if not words:
                raise TesseraValueError("empty target string")
            self.kind = self._kind(words[0])
            self.attrs = {}
            for word in words[1:]:
                if not word.startswith("-"):
                    raise TesseraValueError(f"target option '{word}' does not start with '-' (in '{target}')")
                key, _, value = word.lstrip("-").partition("=")
                if key in _LIST_ATTRS:
                    self.attrs[key] = [v for v in value.split(",") if v]
                else:
                    self.attrs[key] = _parse_value(value) if value else True
        else:
            raise TesseraTypeError(f"Target expects a string, a dict or a Target, got {type(target).__name__}")
        self.host = Target(host) if host is not None and not isinstance(host, Target) else host

    @staticmethod
    def _kind(name):
        if name not in _KEYS:
            raise TesseraValueError(f"tessera does not support the target kind '{name}'; "
                                    f"targets: {', '.join(sorted(_KEYS))}")
        return TargetKind(name)

    @property
    def keys(self):
        return tuple(self.attrs.get("keys") or _KEYS[self.kind.name])

    @property
    def arch(self):
        return self.attrs.get("arch", "")

    @property
    def mcpu(self):
        return self.attrs.get("mcpu", "")

    @property
    def mattr(self):
        return list(self.attrs.get("mattr", []))

    @property
    def libs(self):
        return list(self.attrs.get("libs", []))

    def export(self):
        """The target as a dict (``Target(t.export())`` is ``t``)."""
        out = {"kind": self.kind.name, **self.attrs}
        if self.host is not None:
            out["host"] = self.host.export()
        return out

    def __str__(self):
        parts = [self.kind.name]
        for key, value in self.attrs.items():
            if isinstance(value, (list, tuple)):
                value = ",".join(map(str, value))
            parts.append(f"-{key}" if value is True else f"-{key}={str(value).lower() if isinstance(value, bool) else value}")
        return " ".join(parts)

    def __repr__(self):
        return f"Target({str(self)!r})"

    def __eq__(self, other):
        if isinstance(other, str):
            other = Target(other)
        return isinstance(other, Target) and str(self) == str(other) and self.host == other.host

    def __hash__(self):
        return hash(str(self))

    # ---- the current target ----

    def __enter__(self):
        stack = getattr(_current, "stack", None)
        if stack is None:
            stack = _current.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _current.stack.pop()

    @staticmethod
    def current(allow_none=True):
        """The innermost target of ``with Target(...)``, or None."""
        stack = getattr(_current, "stack", None)
        if stack:
            return stack[-1]
        if not allow_none:
            raise TesseraValueError("no target is current (use `with Target(...):`)")
        return None


def create(target):
    """``Target(target)``."""
    return Target(target)


__all__ = ["Target", "TargetKind", "create"]
