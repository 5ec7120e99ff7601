"""Property tests: whatever text reaches the frontend (token soups, real programs with
random damage, arbitrary characters), the only exception that escapes is our diagnostic
type, its locations are inside the text, and it is never an internal error."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sd_helpers import BENCHMARKS, EXAMPLES, random_params

from minun_mlir.diagnostics import CompileError, MinunError
from minun_mlir.frontends.seedot import compile_source
from minun_mlir.frontends.seedot.lexer import KEYWORDS, PUNCTUATION

REAL_PROGRAMS = [p.read_text() for p in sorted(EXAMPLES.glob("*.sd"))]
REAL_PROGRAMS += [p.read_text() for p in sorted(BENCHMARKS.glob("*/model.sd"))[:4]]

VOCABULARY = sorted(KEYWORDS) + list(PUNCTUATION) + [
    "{s", "{p", "{d", "{g", "{k", "$", "X", "W", "B", "H", "i", "t", "A'", "Foo",
    "0", "1", "2", "8", "64", "0.5", "-1.0", "1e-3", ".5", "//", "\n", "(", ")", "[", "]",
    "(64, 1) in [0.0, 1.0]", "init([8, 1], 0.0)", "[0:4]", "[0:+8]", "{s 1 1}",
]

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def compile_anything(text: str) -> None:
    try:
        params = random_params(text, limit=20_000)
    except MinunError:
        params = {}
    try:
        compile_source(text, "fuzz.sd", params)
    except CompileError as e:
        assert e.diagnostics
        lines = text.split("\n")
        for d in e.diagnostics:
            assert 1 <= d.loc.line <= len(lines), d
            assert 1 <= d.loc.col <= len(lines[d.loc.line - 1]) + 1, d
            assert "internal error" not in d.message
    except MinunError as e:
        assert "internal error" not in str(e), str(e)


@SETTINGS
@given(st.lists(st.sampled_from(VOCABULARY), max_size=40))
def test_token_soup(tokens):
    compile_anything(" ".join(tokens))


@SETTINGS
@given(st.sampled_from(REAL_PROGRAMS), st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 12), st.sampled_from(VOCABULARY + [""])),
    min_size=1, max_size=3))
def test_mutated_real_programs(program, edits):
    """Each edit replaces up to 12 characters at a relative position with a vocabulary item."""
    text = program
    for where, length, insert in edits:
        at = int(where * len(text))
        text = text[:at] + insert + text[at + length:]
    compile_anything(text)


@SETTINGS
@given(st.text(max_size=60))
def test_arbitrary_text(text):
    compile_anything(text)
