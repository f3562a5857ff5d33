"""Test configuration: a private build cache per session so tests never touch ~/.cache."""

import os
import tempfile

_cache = tempfile.mkdtemp(prefix="tessera-test-cache-")
os.environ.setdefault("TESSERA_CACHE_DIR", _cache)
