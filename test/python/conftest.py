"""Markers used by tests in this folder (unknown markers are errors under `-W error`)."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: runs a whole job (e.g. `make demo`); deselect with -m 'not slow'")
