"""Paths from a root IR object to one inside it (TVM's ``tvm_ffi.access_path.AccessPath``).

``AccessPath.root().attr("body").attr("seq").array_item(1)`` names ``func.body.seq[1]``;
``resolve(obj)`` follows the path from ``obj``. Printing takes paths where it takes objects
(``func.script(path_to_annotate={path: "note"}, path_to_underline=[path])``).
"""

_ROOT, _ATTR, _ARRAY, _MAP = "root", "attr", "array_item", "map_item"
_ARRAY_MISSING, _MAP_MISSING = "array_item_missing", "map_item_missing"


class AccessPath:
    """An immutable path of steps (attribute, array index, map key) from a root object."""

    __slots__ = ("_steps",)

    def __init__(self, steps=()):
        self._steps = tuple(steps)

    @staticmethod
    def root():
        """The empty path: the root object itself."""
        return AccessPath()

    def attr(self, name):
        """The attribute ``name`` of the object at this path."""
        if not isinstance(name, str):
            raise TypeError(f"AccessPath.attr takes a name, got {name!r}")
        return AccessPath(self._steps + ((_ATTR, name),))

    def array_item(self, index):
        """Element ``index`` of the array at this path."""
        if not isinstance(index, int):
            raise TypeError(f"AccessPath.array_item takes an int, got {index!r}")
        return AccessPath(self._steps + ((_ARRAY, index),))

    def map_item(self, key):
        """The value under ``key`` of the map at this path."""
        return AccessPath(self._steps + ((_MAP, key),))

    def array_item_missing(self, index):
        """Element ``index`` that the array at this path lacks (where a longer array has one)."""
        if not isinstance(index, int):
            raise TypeError(f"AccessPath.array_item_missing takes an int, got {index!r}")
        return AccessPath(self._steps + ((_ARRAY_MISSING, index),))

    def map_item_missing(self, key):
        """The key ``key`` that the map at this path lacks (where the other map has it)."""
        return AccessPath(self._steps + ((_MAP_MISSING, key),))

    @property
    def steps(self):
        """The steps, outermost first: ``("attr", name)``, ``("array_item", i)``, ``("map_item", key)``."""
        return self._steps

    def get_parent(self):
        """The path one step shorter (None at the root)."""
        return AccessPath(self._steps[:-1]) if self._steps else None

    def is_prefix_of(self, other):
        """Whether ``other`` starts with this path."""
        n = len(self._steps)
        return len(other._steps) >= n and all(_same(a, b) for a, b in zip(self._steps, other._steps[:n]))

    def resolve(self, root):
        """The object this path names inside ``root``; an error naming the step that fails."""
        value = root
        for k, (kind, key) in enumerate(self._steps):
            try:
                if kind in (_ARRAY_MISSING, _MAP_MISSING):
                    raise KeyError(f"{key!r} is missing")
                if kind == _ATTR:
                    value = getattr(value, key)
                elif kind == _ARRAY:
                    value = list(value)[key]
                else:
                    value = _map_lookup(value, key)
            except (AttributeError, IndexError, KeyError, TypeError) as err:
                raise ValueError(f"{AccessPath(self._steps[:k + 1])!r} does not exist in {type(root).__name__}: {err}") from None
        return value

    def __eq__(self, other):
        return isinstance(other, AccessPath) and len(self._steps) == len(other._steps) and self.is_prefix_of(other)

    def __hash__(self):
        return hash(tuple((kind, key if isinstance(key, (str, int)) else id(key)) for kind, key in self._steps))

    def __repr__(self):
        text = "<root>"
        for kind, key in self._steps:
            if kind == _ATTR:
                text += "." + key
            elif kind == _ARRAY:
                text += f"[{key}]"
            elif kind == _ARRAY_MISSING:
                text += f"[<missing item {key}>]"
            elif kind == _MAP_MISSING:
                text += f"[<missing key {_key_text(key)}>]"
            else:
                text += f"[{_key_text(key)}]"
        return text


def _same(a, b):
    if a[0] != b[0]:
        return False
    x, y = a[1], b[1]
    if isinstance(x, (str, int)) or isinstance(y, (str, int)):
        return type(x) is type(y) and x == y
    same_as = getattr(x, "same_as", None)
    return same_as(y) if same_as is not None else x is y


def _key_text(key):
    """A map key as the path prints it: a GlobalVar as ``I.GlobalVar("f")``, as TVM's does."""
    if isinstance(key, (str, int)):
        return repr(key)
    if type(key).__name__ == "GlobalVar":
        return f'I.GlobalVar("{key.name_hint}")'
    return _key_name(key)


def _key_name(key):
    return getattr(key, "name_hint", None) or getattr(key, "name", None) or type(key).__name__


def _map_lookup(mapping, key):
    items = mapping.items() if hasattr(mapping, "items") else mapping
    for k, v in items:
        if k is key or (hasattr(k, "same_as") and not isinstance(key, (str, int)) and k.same_as(key)) or (
                isinstance(key, (str, int)) and k == key):
            return v
    raise KeyError(key)


__all__ = ["AccessPath"]
