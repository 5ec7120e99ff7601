"""Source text and positions: every token and AST node carries a `Pos`, and every user
error is built here as a `Diagnostic` (`path:line:col: error: ...` + the line + a caret),
so no stage of the frontend formats locations by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from minun_mlir.diagnostics import CompileError, Diagnostic, SourceLocation


@dataclass(frozen=True)
class Pos:
    """A 1-based line and column, and how many characters the caret underlines."""

    line: int
    col: int
    length: int = 1


class Source:
    """A program's text and its path (`<stdin>` or a file name) for diagnostics."""

    def __init__(self, text: str, path: str):
        self.text = text
        self.path = path
        self.lines = text.split("\n")

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 1 <= number <= len(self.lines) else ""

    def diag(self, pos: Pos, message: str) -> Diagnostic:
        line = self.line(pos.line)
        # Tabs print as one space (Diagnostic expands them), so columns stay aligned.
        length = max(1, min(pos.length, len(line) - pos.col + 1))
        return Diagnostic(SourceLocation(self.path, pos.line, pos.col), message, line, length)

    def error(self, pos: Pos, message: str) -> CompileError:
        return CompileError([self.diag(pos, message)])
