"""``import tvm`` in a child process of ``python -m tessera.compat``: that command puts this
directory's parent on the children's PYTHONPATH, so a script that starts ``python -c "import
tvm; ..."`` (as TVM's tests do) gets tessera's mapping too. Importing this module installs the
mapping and hands back the ``tvm`` package it makes. It is meant to be imported as ``tvm`` only."""

import importlib
import sys

if __name__ != "tvm":
    raise ImportError(f"{__name__} stands for 'tvm' in child processes of python -m tessera.compat; "
                      "it is not imported under another name")

del sys.modules["tvm"]
import tessera.compat as _compat  # noqa: E402

_compat.install()
sys.modules["tvm"] = importlib.import_module("tvm")
