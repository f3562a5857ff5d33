"""Printing: the Doc tree of Python source and its renderer (TVM's ``tvm.script.printer``).

tessera's TVMScript printer is C++ (``obj.script()``); :mod:`.doc` and :mod:`.doc_printer` are
the Python-level Doc API that code written against TVM builds and renders.
"""

from . import doc, doc_printer  # noqa: F401
from .doc_printer import to_python_script  # noqa: F401
