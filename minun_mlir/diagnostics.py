"""User-facing errors. Anything a user can cause (a bad program, a bad model file, a
budget that does not fit) raises `MinunError`; the command-line tools print its text and
exit non-zero, never a Python traceback. `error(...)` words every such message the same
way: `where: error: message`, where is an op's `file:line:col`, a file, or nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation


class MinunError(Exception):
    """An error whose message is complete as it stands (printed without a traceback)."""


class MinunWarning(UserWarning):
    """Something the compile can go on with but the user should know (the command-line
    tools print it as one `where: warning: message` line)."""


def warn(message: str, at: Operation | str | Path | None = None) -> None:
    """Report `at: warning: message` through Python's warnings (once per message)."""
    where = location_of(at) if isinstance(at, Operation) else at
    warnings.warn(f"{where}: warning: {message}" if where else f"warning: {message}",
                  MinunWarning, stacklevel=2)


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Name the compile stage that runs inside (a pass, the frontend, the evaluator): an
    internal error is reported as a bug in that stage."""
    try:
        yield
    except Exception as e:
        if not hasattr(e, "minun_stage"):
            e.minun_stage = name  # type: ignore[attr-defined]  # the innermost stage
        raise


def stage_of(e: BaseException) -> str | None:
    """The stage an exception escaped from (see `stage`), if any."""
    return getattr(e, "minun_stage", None)


def location_of(op: Operation) -> str | None:
    """`file:line:col` of an op parsed from text or built by a frontend, else None."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return None


def error(message: str, at: Operation | str | Path | None = None,
          kind: type[Exception] = MinunError) -> Exception:
    """`at: error: message` as an exception to raise (a MinunError unless `kind` says
    otherwise). `at` is an op (its location, when it has one), a file, or a location text."""
    where = location_of(at) if isinstance(at, Operation) else at
    return kind(f"{where}: error: {message}" if where else f"error: {message}")


@dataclass(frozen=True)
class SourceLocation:
    path: str
    line: int  # 1-based
    col: int  # 1-based

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Diagnostic:
    """One `path:line:col: error: message` with the source line and a caret under it."""

    loc: SourceLocation
    message: str
    source_line: str | None = None
    length: int = 1
    severity: str = "error"

    def __str__(self) -> str:
        text = f"{self.loc}: {self.severity}: {self.message}"
        if self.source_line is not None:
            line = self.source_line.rstrip("\n").expandtabs(1)
            caret = " " * (self.loc.col - 1) + "^" + "~" * max(0, self.length - 1)
            text += f"\n{line}\n{caret}"
        return text


class CompileError(MinunError):
    """One or more source diagnostics, reported together."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))
