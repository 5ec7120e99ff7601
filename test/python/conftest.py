"""Shared pytest setup: slow tests are scheduled first, so that on a 2-core machine the
benchmark re-run overlaps with the rest of the suite instead of ending it alone."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
