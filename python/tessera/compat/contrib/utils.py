"""``tvm.contrib.utils``: temporary directories (``tempdir()``) for files a test writes, such as
an exported library.

>>> tmp = tempdir()
>>> lib.export_library(tmp.relpath("lib.so"))
"""

import os
import shutil
import tempfile

__all__ = ["TempDirectory", "tempdir"]


class TempDirectory:
    """A directory that is removed (with its files) when the object is collected, on
    ``remove()``, or at the end of a ``with`` block; ``keep_for_debug=True`` keeps it."""

    _KEEP_ALL = False

    def __init__(self, custom_path=None, keep_for_debug=None):
        if custom_path is not None:
            os.makedirs(custom_path, exist_ok=True)
            self.temp_dir = os.path.abspath(custom_path)
        else:
            self.temp_dir = tempfile.mkdtemp(prefix="tessera-")
        self._keep = bool(keep_for_debug) if keep_for_debug is not None else TempDirectory._KEEP_ALL
        self._removed = False

    @classmethod
    def set_keep_for_debug(cls, keep=True):
        """Keep every directory made from now on (for looking at the files afterwards)."""
        cls._KEEP_ALL = bool(keep)

    @property
    def path(self):
        return self.temp_dir

    def relpath(self, name):
        """The path of ``name`` inside the directory."""
        return os.path.join(self.temp_dir, name)

    def listdir(self):
        """The names of the directory's entries."""
        return os.listdir(self.temp_dir)

    def remove(self):
        """Delete the directory and its files (unless kept for debugging)."""
        if not self._removed and not self._keep:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self._removed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()

    def __del__(self):
        try:
            self.remove()
        except Exception:  # interpreter shutdown: shutil may already be gone
            pass

    def __repr__(self):
        return f"TempDirectory({self.temp_dir!r})"


def tempdir(custom_path=None, keep_for_debug=None):
    """A new :class:`TempDirectory` (at ``custom_path`` when given, which is then created)."""
    return TempDirectory(custom_path, keep_for_debug)
