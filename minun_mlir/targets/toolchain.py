"""Finding and running the external tools (compilers, binutils, simulators).

Kept in one place so that a missing tool always produces the same clear message with the
Debian packages to install, instead of a FileNotFoundError from subprocess.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .boards import APT_PACKAGES
from .errors import CompileError, ToolchainMissing


def require_tool(tool: str, packages: str = APT_PACKAGES, needed_for: str = "") -> str:
    """Return the absolute path of `tool`, or raise ToolchainMissing with install advice."""
    path = shutil.which(tool)
    if path is None:
        purpose = f" (needed for {needed_for})" if needed_for else ""
        raise ToolchainMissing(
            f"error: '{tool}' was not found on PATH{purpose}. Install the toolchains with "
            f"`sudo apt-get install -y --no-install-recommends {packages}` "
            "(or `make toolchains` in the repository)."
        )
    return path


def tool_identity(tool: str) -> str:
    """A cheap fingerprint of an installed tool: its path, size and modification time.

    Part of cache keys, so cached objects are rebuilt after a toolchain upgrade.
    """
    path = require_tool(tool)
    st = Path(path).stat()
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def run_tool(cmd: list[str], what: str, cwd: Path | None = None,
             input_text: str | None = None) -> subprocess.CompletedProcess:
    """Run a build tool (`input_text` on its standard input); on failure raise
    CompileError quoting its diagnostics."""
    require_tool(cmd[0])
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, input=input_text)
    if proc.returncode != 0:
        err = CompileError(f"error: {what} failed ({Path(cmd[0]).name} exit {proc.returncode}):\n"
                           + tail(proc.stderr + proc.stdout))
        err.output = proc.stderr + proc.stdout  # untruncated, for callers that parse it
        raise err
    return proc


def last_output(text: str, lines: int = 5) -> str:
    """The end of a failure message: the program's last lines, or that it printed none
    (rather than "Last output: (none)")."""
    if not text.strip():
        return " It printed nothing."
    return " Last output:\n" + tail(text, lines)


def tail(text: str, lines: int = 25, width: int = 160) -> str:
    """The last lines of a tool's output: enough to see the errors, not a wall.

    Long lines are cut too: compilers quote the offending source line, and generated
    model code can hold a whole weight table on one line.
    """
    kept = text.strip().splitlines() or ["(none)"]
    if len(kept) > lines:
        kept = [f"... ({len(kept) - lines} earlier lines omitted)"] + kept[-lines:]
    kept = [ln if len(ln) <= width else ln[:width] + " ..." for ln in kept]
    return "\n".join("  " + line for line in kept)
