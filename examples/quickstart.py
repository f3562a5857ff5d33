"""Placeholder quick-start example."""

import tessera

print(f"tessera {tessera.__version__}")
