"""Tokenizer for SeeDot.

Two choices differ from the original ANTLR lexer, both so that more programs are accepted
with the same meaning:
- a sign is never part of a number token. The original glued `-1.0` into one float, which
  made `H -1.0` a syntax error; here the parser folds a unary minus on a literal instead.
- `: +` (with a space) is accepted by the parser as well as the glued `:+`.
The option groups of conv2d/maxpool/mbconv start with a glued `{s`, `{p`, `{d`, `{g`, `{k`
token, as in the original grammar (so `{s1 1}` is `{s`, `1`, `1`, `}`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from minun_mlir.diagnostics import CompileError

from .source import Pos, Source

KEYWORDS = frozenset(
    "let in init reshape maxpool reverse conv2d mbconv loop relu relu6 exp argmax sgn tanh "
    "sigmoid normaliseL2".split()
)

# Longest first: the lexer takes the first alternative that matches.
PUNCTUATION = ("|*|", "<*>", "<+>", "<->", ":+", ">=", "^T",
               "(", ")", "[", "]", ",", "=", "+", "-", "*", "?", ":", "$", "}")

OPTION_LETTERS = "kpsdg"

_FLOAT = re.compile(r"(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+", re.ASCII)
_INT = re.compile(r"\d+", re.ASCII)
_DIGITS = "0123456789"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")
_SPACE = re.compile(r"(?:[ \t\r\n\f\v]+|//[^\n]*)+")


@dataclass(frozen=True)
class Token:
    """kind is one of INT, FLOAT, IDENT, KEYWORD, PUNCT, OPTION, EOF; text is the spelling
    (for OPTION the two characters `{s`)."""

    kind: str
    text: str
    pos: Pos

    def is_(self, kind: str, text: str | None = None) -> bool:
        return self.kind == kind and (text is None or self.text == text)

    def describe(self) -> str:
        """How the token is named in 'expected X, got Y' messages."""
        if self.kind == "EOF":
            return "the end of the program"
        if self.kind in ("INT", "FLOAT"):
            return f"number '{self.text}'"
        if self.kind == "IDENT":
            return f"name '{self.text}'"
        return f"'{self.text}'"


def tokenize(source: Source) -> list[Token]:
    """All tokens of the program, ending with EOF. Unknown characters are reported together."""
    text = source.text
    tokens: list[Token] = []
    errors = []
    i, line, line_start = 0, 1, 0

    def pos(start: int, length: int) -> Pos:
        return Pos(line, start - line_start + 1, length)

    while i < len(text):
        m = _SPACE.match(text, i)
        if m:
            chunk = m.group()
            newlines = chunk.count("\n")
            if newlines:
                line += newlines
                line_start = i + chunk.rfind("\n") + 1
            i = m.end()
            continue
        c = text[i]
        if c in _DIGITS or (c == "." and i + 1 < len(text) and text[i + 1] in _DIGITS):
            m = _FLOAT.match(text, i)
            kind = "FLOAT"
            if not m:
                m = _INT.match(text, i)
                kind = "INT"
            tokens.append(Token(kind, m.group(), pos(i, m.end() - i)))
            i = m.end()
            continue
        m = _IDENT.match(text, i)
        if m:
            word = m.group()
            kind = "KEYWORD" if word in KEYWORDS else "IDENT"
            tokens.append(Token(kind, word, pos(i, len(word))))
            i = m.end()
            continue
        if c == "{":
            if i + 1 < len(text) and text[i + 1] in OPTION_LETTERS:
                tokens.append(Token("OPTION", text[i:i + 2], pos(i, 2)))
                i += 2
                continue
            errors.append(source.diag(pos(i, 1), "'{' must be glued to an option letter: "
                                                 "{k, {p, {s, {d or {g"))
            i += 1
            continue
        for p in PUNCTUATION:
            if text.startswith(p, i):
                tokens.append(Token("PUNCT", p, pos(i, len(p))))
                i += len(p)
                break
        else:
            shown = c if c.isprintable() else repr(c)
            hint = " (transpose is written e^T)" if c == "^" else ""
            errors.append(source.diag(pos(i, 1), f"unexpected character '{shown}'{hint}"))
            i += 1
    if errors:
        raise CompileError(errors[:20])
    tokens.append(Token("EOF", "", pos(i, 1)))
    return tokens
