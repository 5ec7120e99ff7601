"""Shared pytest setup: slow tests are scheduled first, so that on a 2-core machine the
benchmark re-run overlaps with the rest of the suite instead of ending it alone; tests
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
