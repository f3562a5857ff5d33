"""The differential fuzzer's options.

CI (``make fuzz``, part of ``make test``) runs a fixed number of examples with a fixed seed
(hypothesis's ``derandomize``); ``--fuzz-long`` or ``TESSERA_FUZZ_LONG=1`` runs many more with
fresh random seeds (``--hypothesis-seed=N`` replays one). A failing program is written, as a
standalone script that reproduces it, under ``--fuzz-repro-dir`` (``TESSERA_FUZZ_REPRO_DIR``;
default ``$TMPDIR/tessera-fuzz-failures``); hypothesis has shrunk it by then.
"""

import os
import sys
import tempfile

from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

_cache = tempfile.mkdtemp(prefix="tessera-fuzz-cache-")
os.environ.setdefault("TESSERA_CACHE_DIR", _cache)
# test_fuzz_mutations runs mutants in forked children; GNU OpenMP does not survive a fork once
# its thread team exists, and the fuzzer's arrays are far too small to need one.
os.environ.setdefault("OMP_NUM_THREADS", "1")

_common = dict(deadline=None, database=None, print_blob=True,
               suppress_health_check=list(HealthCheck))
settings.register_profile("tessera-ci", derandomize=True, **_common)
settings.register_profile("tessera-long", derandomize=False, **_common)


def pytest_addoption(parser):
    group = parser.getgroup("tessera fuzz")
    group.addoption("--fuzz-long", action="store_true", default=False,
                    help="run the differential fuzzer for long, with random seeds")
    group.addoption("--fuzz-repro-dir", default=None,
                    help="folder for minimal reproducers of failures")


def pytest_configure(config):
    long = config.getoption("--fuzz-long") or os.environ.get("TESSERA_FUZZ_LONG", "") not in ("", "0")
    config.fuzz_long = long
    settings.load_profile("tessera-long" if long else "tessera-ci")
    repro = (config.getoption("--fuzz-repro-dir") or os.environ.get("TESSERA_FUZZ_REPRO_DIR")
             or os.path.join(tempfile.gettempdir(), "tessera-fuzz-failures"))
    os.environ["TESSERA_FUZZ_REPRO_DIR"] = repro
    os.environ["TESSERA_FUZZ_MODE"] = "long" if long else "ci"


def pytest_terminal_summary(terminalreporter):
    from fuzz_util import COUNTS

    if COUNTS:
        total = sum(v for k, v in COUNTS.items() if k.endswith("programs"))
        detail = ", ".join(f"{k}: {v}" for k, v in sorted(COUNTS.items()))
        terminalreporter.write_line(f"fuzz: {total} programs generated and checked ({detail})")
