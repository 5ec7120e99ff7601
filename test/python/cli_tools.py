"""The command-line tools as the tests call them: `tool("minun-compile")` is the path of
a client that runs the real script's `main` in a fork of a warm server started once per
test process (test/warm_cli/: same argv, directory, environment, stdin/stdout/stderr and
exit status; a traceback where the script would print one), so a call costs a fork
instead of an interpreter start with xDSL's import. MINUN_WARM_CLI=0 runs the installed
scripts instead."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "warm_cli"))
import start as warm_cli  # noqa: E402

sys.path.remove(str(ROOT / "test" / "warm_cli"))


@functools.cache
def _started() -> bool:
    """Start the server; its socket goes into os.environ, so every subprocess the tests
    start (with os.environ or a copy of it) reaches it."""
    os.environ.update(warm_cli.start())
    return "MINUN_CLI_SOCKET" in os.environ


def tool(name: str) -> str:
    """The path to run `name` (minun-opt, minun-compile, minun-run, filecheck, python:
    the virtualenv's interpreter, warm for `python SCRIPT` and `python -c CODE`) by."""
    if name not in ("minun-opt", "minun-compile", "minun-run", "filecheck", "python"):
        raise ValueError(name)
    _started()
    return str(Path(warm_cli.BIN) / name)
