"""The hooks of tessera.testing.plugin for these tests (correlated parameters, targets)."""

from tessera.testing.plugin import dev, pytest_configure, pytest_generate_tests  # noqa: F401
