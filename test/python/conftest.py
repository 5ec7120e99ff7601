"""Shared pytest setup: slow tests are scheduled first, so that on a 2-core machine the
longest ones overlap with the rest of the suite instead of ending it alone; tests
marked nightly (thousands of fuzz cases) run only when `-m` names them."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "nightly" not in (config.getoption("-m") or ""):
        # deselected, not skipped: they are the same tests as the quick ones, scaled up
        nightly = [item for item in items if item.get_closest_marker("nightly") is not None]
        if nightly:
            config.hook.pytest_deselected(items=nightly)
            items[:] = [item for item in items if item.get_closest_marker("nightly") is None]
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True)
def _cwd_of_its_own(tmp_path_factory, monkeypatch):
    """Every test runs in an empty folder of its own: a compile without --out writes into
    ./build/NAME (minun-compile's default), which must never be the checkout's, and two
    tests in parallel must not share one. Tests name the repository's files by absolute
    path (ROOT / ...)."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """With MINUN_TEST_CPU=FILE: append each test's CPU seconds (this process and the
    children it waited for: compilers, simulators) to FILE, one JSON line per test. CPU
    time, unlike wall time, does not grow when the machine is shared, so the suite's cost
    can be measured anywhere (`make test` does not set it)."""
    import os

    path = os.environ.get("MINUN_TEST_CPU")
    if not path:
        yield
        return
    import json

    before = os.times()
    yield
    after = os.times()
    cpu = sum(getattr(after, k) - getattr(before, k)
              for k in ("user", "system", "children_user", "children_system"))
    with open(path, "a") as f:
        f.write(json.dumps({"test": item.nodeid, "cpu": round(cpu, 3)}) + "\n")
