"""Helpers of the nn operators: padding tuples and output sizes."""

from ...error import TesseraValueError


def get_pad_tuple(padding, kernel):
    """``(top, left, bottom, right)`` padding from an int, ``(h, w)``, four ints, "SAME" or
    "VALID"; "SAME" pads ``kernel - 1`` in total, the odd one at the end."""
    if isinstance(padding, (tuple, list)):
        if len(padding) == 2:
            pad_h, pad_w = int(padding[0]) * 2, int(padding[1]) * 2
        elif len(padding) == 4:
            return tuple(int(p) for p in padding)
        else:
            raise TesseraValueError(f"padding must have 2 or 4 entries, got {tuple(padding)}")
    elif isinstance(padding, int) and not isinstance(padding, bool):
        pad_h = pad_w = padding * 2
    elif padding == "VALID":
        pad_h = pad_w = 0
    elif padding == "SAME":
        pad_h, pad_w = kernel[0] - 1, kernel[1] - 1
    else:
        raise TesseraValueError(
            f"unknown padding {padding!r}: use an int, a tuple, 'SAME' or 'VALID'"
        )
    pad_top, pad_left = (pad_h + 1) // 2, (pad_w + 1) // 2
    return pad_top, pad_left, pad_h - pad_top, pad_w - pad_left


def pair(value, what):
    """``(a, b)`` from an int or a pair."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise TesseraValueError(f"{what} must be an int or two ints, got {tuple(value)}")
        return int(value[0]), int(value[1])
    return int(value), int(value)
