"""The places that name minun-compile's and the quantize pass's options agree: the CLI's
parser, README's options table, the quantize pass's options and the options each number
format says it honours (Representation.options). A flag added in one place and not the
others (a documented `--param-bits` the CLI did not have, say) fails here."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

def cli_flags() -> set[str]:
    from minun_mlir.tools.minun_compile import build_parser

    return {s for a in build_parser()._actions for s in a.option_strings
            if s.startswith("--") and s != "--help"}


def readme_table_flags() -> set[str]:
    text = (ROOT / "README.md").read_text()
    start = text.index("The options, by purpose")
    rows = []
    for line in text[start:].splitlines()[1:]:
        if rows and not line.startswith("|"):
            break
        if line.startswith("|"):
            rows.append(line)
    assert len(rows) > 5
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", "\n".join(rows)))


def pass_options() -> list[str]:
    from minun_mlir.passes.quantize import Quantize

    return [f.name for f in dataclasses.fields(Quantize)]


def test_readme_table_names_exactly_the_cli_flags():
    cli, table = cli_flags(), readme_table_flags()
    assert cli - table == set(), f"flags the README's table leaves out: {cli - table}"
    assert table - cli == set(), f"flags the README's table names but the CLI has not: " \
                                 f"{table - cli}"


def test_every_quantize_option_is_a_flag_or_said_why_not():
    """The pass's options are the schema's fields; each has a minun-compile flag, or the
    schema says why not (and then the CLI has no flag of that name)."""
    from minun_mlir.quantize_options import schema

    cli = cli_flags()
    assert pass_options() == [f.name for f in schema()]
    for f in schema():
        flag, why = f.metadata["flag"], f.metadata["no_flag"]
        if flag is None:
            assert why and "--" + f.name.replace("_", "-") not in cli, f.name
        else:
            assert flag.name in cli, f.name


def test_every_option_a_format_honours_is_a_quantize_option():
    from minun_mlir.numerics import formats

    options = set(pass_options())
    for name in formats.names():
        rep = formats.get(name)
        assert rep.options <= options, (name, rep.options - options)


def test_the_docs_name_only_flags_that_exist():
    """Every `--flag` the docs write right after `minun-compile` (or in a sentence about
    minun-compile's options) is one of its flags."""
    cli = cli_flags() | {"--help"}
    unknown = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            if "minun-compile" not in line or "minun-opt" in line or "minun-run" in line:
                continue
            for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", line):
                if flag not in cli:
                    unknown.append(f"{doc.name}:{n}: {flag}")
    assert not unknown, unknown


# flags the options fuzzer (minun_mlir/fuzz/options.py) leaves out, and why
NOT_FUZZED = {
    "--out": "the fuzzer's cases stop at --print-pipeline, before anything is written",
    "--print-pipeline": "every case gives it (that is how a case shows what it did)",
    "--debug": "shows a traceback; changes no rule",
    "--search": "a search runs the model: the search's rules have their own tests",
    "--jobs": "with --search only",
    "--ray": "with --search only",
    "--weights": "the SeeDot program's weights are beside it",
}


def test_the_options_fuzzer_knows_every_flag():
    from minun_mlir.fuzz.options import OPTIONS

    cli = cli_flags()
    assert set(NOT_FUZZED) <= cli
    assert cli - set(OPTIONS) - set(NOT_FUZZED) == set()
    assert set(OPTIONS) <= cli
