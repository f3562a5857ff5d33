"""pytest plugin for tests written with ``tvm.testing`` / ``tessera.testing``.

Load it with ``-p tessera.testing.plugin`` (``python -m tessera.compat -m pytest`` and
``tessera.testing.main()`` do). It registers the requirement markers, parametrizes correlated
:func:`tessera.testing.parameters` together, parametrizes tests taking ``target`` over the enabled
targets, gives them a ``dev`` fixture, and applies ``skip_parameterizations`` /
``xfail_parameterizations``.
"""

import pytest

from . import Feature, _default_targets, _device_of, device_enabled


def pytest_configure(config):
    for feature in Feature._all_features.values():
        config.addinivalue_line("markers", f"{feature.name}: the test needs {feature.long_name}")


def _correlated(metafunc):
    groups = {}
    for name, defs in metafunc.definition._fixtureinfo.name2fixturedefs.items():
        func = getattr(defs[-1], "func", None)
        group = getattr(func, "tessera_param_group", None)
        if group is None:
            continue
        groups.setdefault(group, []).append((name, func))
    for members in groups.values():
        names = [n for n, _ in members]
        ids = members[0][1].tessera_param_ids
        columns = [f.tessera_param_values for _, f in members]
        if len(names) == 1:
            metafunc.parametrize(names[0], columns[0], indirect=True, ids=ids)
        else:
            metafunc.parametrize(",".join(names), list(zip(*columns)), indirect=True, ids=ids)


def _targets(metafunc):
    if "target" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        if "target" in [a.strip() for a in mark.args[0].split(",")]:
            return
    excluded = getattr(metafunc.function, "tvm_excluded_targets", [])
    failing = getattr(metafunc.function, "tvm_known_failing_targets", [])
    params = []
    for t in _default_targets():
        kind = t.split()[0]
        if kind in excluded:
            continue
        marks = []
        if not device_enabled(t):
            marks.append(pytest.mark.skip(reason=f"target {t} is not enabled here"))
        if kind in failing:
            marks.append(pytest.mark.xfail(reason=f"known failing on {kind}"))
        params.append(pytest.param(t, marks=marks, id=t))
    metafunc.parametrize("target", params, scope="session")


def pytest_generate_tests(metafunc):
    # Once per test: the plugin may be registered twice (``-p tessera.testing.plugin`` and a
    # TVM conftest's ``pytest_plugins = ["tvm.testing.plugin"]``, the same module by another name).
    if getattr(metafunc, "_tessera_parametrized", False):
        return
    metafunc._tessera_parametrized = True
    _correlated(metafunc)
    _targets(metafunc)


def pytest_collection_modifyitems(config, items):
    for item in items:
        func = getattr(item, "function", None)
        for params, kind, reason in getattr(func, "tessera_marked_params", []):
            callspec = getattr(item, "callspec", None)
            if callspec is not None and any(p in callspec.id for p in params):
                item.add_marker(getattr(pytest.mark, kind)(reason=reason))


@pytest.fixture
def dev(target):
    """The device of the test's ``target``."""
    return _device_of(target)
