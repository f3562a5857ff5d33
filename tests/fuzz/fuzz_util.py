"""Shared helpers of the fuzz tests: example counts by mode, counters, reproducer files."""

import collections
import os
import re

COUNTS = collections.Counter()


def long_mode():
    return os.environ.get("TESSERA_FUZZ_MODE") == "long"


def examples(ci, long):
    return long if long_mode() else ci


def save_reproducer(test_name, text):
    """Writes ``text`` (a standalone script) as ``<repro dir>/<test_name>.py``; hypothesis
    replays the shrunk example last, so the file left holds the minimal failing program."""
    folder = os.environ.get("TESSERA_FUZZ_REPRO_DIR")
    if not folder:
        return None
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, re.sub(r"[^A-Za-z0-9_.-]", "_", test_name) + ".py")
    with open(path, "w") as f:
        f.write(text)
    return path


def array_literal(a):
    return f"np.array({a.tolist()!r}, dtype={str(a.dtype)!r})"
