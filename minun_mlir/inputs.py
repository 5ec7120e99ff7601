"""Every file a tool reads (a model, its weights, a data set, an assignment) is checked
here before it is opened: a FIFO would block the tool forever, a device such as
/dev/zero (or a symbolic link to one) would be read without end, and a directory is not
a file. Each is refused at once with `path: error: ...`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from minun_mlir.diagnostics import error


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def problem(path: str | os.PathLike, what: str = "the file",
            directory: bool = False) -> str | None:
    """Why `path` cannot be read as a regular file (or, with `directory`, a directory):
    "cannot read <what>: ..." or "<what> is a FIFO (named pipe), not a regular file";
    None when it can."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        return f"cannot read {what}: {e.strerror}"
    if stat.S_ISREG(mode) or (directory and stat.S_ISDIR(mode)):
        return None
    want = "a regular file or a directory" if directory else "a regular file"
    return f"{what} is {_kind(mode)}, not {want}"


def check_input(path: str | os.PathLike, what: str = "the file",
                directory: bool = False) -> Path:
    """`path`, checked to be a regular file (or, with `directory`, a directory) before
    anything opens it; anything else is `path: error: ...` (see `problem`). Symbolic
    links are followed."""
    why = problem(path, what, directory)
    if why is not None:
        raise error(why, at=path)
    return Path(path)


def read_input(path: str | os.PathLike, what: str = "the file") -> bytes:
    """The bytes of a regular file (see `check_input`)."""
    check_input(path, what)
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise error(f"cannot read {what}: {e.strerror}", at=path) from None
