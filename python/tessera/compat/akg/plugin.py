"""pytest plugin for AKG's test files (``-p tessera.compat.akg.plugin``).

AKG's test classes prepare themselves in nose-style ``setup()``/``teardown()`` methods, which
pytest stopped calling in version 8; this plugin calls them around each test of a class that
defines them (and not ``setup_method``), and registers AKG's markers (``level0``,
``platform_x86_cpu``, ...).
"""

import pytest

_MARKERS = ("level0", "level1", "level2", "platform_x86_cpu", "platform_arm_cpu", "platform_x86_gpu_training",
            "platform_arm_ascend_training", "platform_x86_ascend_training", "env_onecard", "env_single")


def pytest_configure(config):
    for name in _MARKERS:
        config.addinivalue_line("markers", f"{name}: AKG's test marker")


@pytest.fixture(autouse=True)
def _akg_nose_style_setup(request):
    instance = request.instance
    cls = type(instance) if instance is not None else None
    own = cls is not None and not hasattr(cls, "setup_method") and callable(getattr(cls, "setup", None))
    if own:
        instance.setup()
    yield
    if own and callable(getattr(cls, "teardown", None)):
        instance.teardown()
