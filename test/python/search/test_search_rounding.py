"""Item 8 and 9 of the reliability issue: on a small RNNPool-style classifier where fixed8
with truncating shifts loses most of the accuracy and fixed8 rounding to nearest does
not (test/python/search/rnnpool_case.py), the searches consider both roundings and never
return a program worse than the best uniform one within the budget; a wider Haunter soft
limit never does worse than the default; the compile report says why fixed8 disagrees
with float; and every summary of a search counts the tensors of the assignment it wrote."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minun_mlir.bitwidth_search import (
    Result,
    candidate,
    haunter_model,
    search_model,
    shiftry_search,
)
from minun_mlir.data import load_dataset
from minun_mlir.diagnostics import MinunError
from minun_mlir.driver import Options, compile_model, load_model, num_classes
from minun_mlir.search_report import choice_text, write_report

sys.path.insert(0, str(Path(__file__).parent))
from cli_tools import tool as cli_tool
from rnnpool_case import make_case  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
EXE = Path(cli_tool("minun-compile"))


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return make_case(tmp_path_factory.mktemp("rnnpool"))


@pytest.fixture(scope="module")
def uniform(case):
    """Every uniform program on the search data, compiled independently of the search:
    (bits, rounding) -> (accuracy on train, RAM)."""
    program, train, _ = case
    out = {}
    for bits in (8, 16):
        for rounding in ("trunc", "nearest"):
            r = compile_model(program, Options(bits=bits, rounding=rounding), train=train,
                              test=train, out_dir=train.parent / f"u{bits}{rounding}")
            out[bits, rounding] = (r.accuracy, r.memory["scratch_bytes"])
    return out


def _data(case):
    program, train, _ = case
    l1 = load_model(program)
    return l1, load_dataset(train, (16, 1), num_classes(l1))


def test_the_case_loses_with_trunc_and_not_with_nearest(uniform):
    assert uniform[8, "trunc"][0] < 0.7 and uniform[8, "nearest"][0] > 0.9
    assert uniform[16, "trunc"][0] == 1.0
    assert uniform[8, "trunc"][1] == uniform[8, "nearest"][1]


def test_compile_report_measures_nearest_when_trunc_disagrees(case):
    program, train, test = case
    result = compile_model(program, Options(bits=8), train=train, test=test)
    nearest = compile_model(program, Options(bits=8, rounding="nearest"), train=train,
                            test=test)
    assert result.disagreement > 0.4 and nearest.disagreement < 0.2
    assert result.nearest_disagreement == nearest.disagreement
    line = next(s for s in result.summary().splitlines() if "warning:" in s)
    assert f"{result.disagreement:.2%}" in line and "--rounding nearest" in line
    assert f"{nearest.disagreement:.2%} (measured)" in line
    # nearest itself: a plain warning naming the causes, no measurement to repeat
    assert nearest.nearest_disagreement is None


def _best_uniform(uniform, budget):
    return max(acc for acc, ram in uniform.values() if ram <= budget)


@pytest.mark.slow
def test_haunter_fixed_reaches_the_best_uniform_program(case, uniform):
    l1, train = _data(case)
    budget = int(1.25 * uniform[8, "trunc"][1])
    search = haunter_model(l1, train, budget, jobs=1, progress=False)
    r = search.chosen_result
    assert r.ram <= budget
    assert r.accuracy >= _best_uniform(uniform, budget) > uniform[8, "trunc"][0] + 0.25
    assert search.assignment.rounding == "nearest"


@pytest.mark.slow
def test_haunter_posit_wider_soft_limit_is_no_worse(case):
    l1, train = _data(case)
    budget = 60
    # one memo: the wide search re-uses the programs the narrow one evaluated
    kw = dict(representation="posit", quire=True, jobs=1, progress=False, memo={})
    narrow = haunter_model(l1, train, budget, **kw)
    wide = haunter_model(l1, train, budget, soft_limit=1.5, **kw)
    assert wide.chosen_result.loss <= narrow.chosen_result.loss
    # and never worse than a uniform program it built within the limit
    for search, limit in ((narrow, budget), (wide, 1.5 * budget)):
        fitting = [r.loss for r in search.baselines.values() if r.ram <= limit]
        assert search.chosen_result.loss <= min(fitting, default=float("inf"))


@pytest.mark.slow
def test_shiftry_reaches_the_best_uniform_program(case, uniform):
    l1, train = _data(case)
    budget = int(1.25 * uniform[8, "trunc"][1])
    search = search_model(l1, train, ram_budget=budget, jobs=2,
                          progress=False)
    assert search.chosen_result.ram <= budget
    assert search.chosen_result.accuracy >= _best_uniform(uniform, budget)


def test_shiftry_at_8_bits_is_refused_not_crashed(case):
    program, train, _ = case
    out = subprocess.run([EXE, str(program), "--train", str(train), "--bits", "8",
                          "--search", "shiftry", "--ram-budget", "160"],
                         capture_output=True, text=True)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "demotes tensors from 8 to 4 bits" in out.stderr
    assert "--bits 16" in out.stderr and out.stderr.count("error:") == 1


# -- item 9: the summary counts the written assignment ---------------------------------------


def _counts_from_files(folder: Path) -> dict[int, int]:
    """Per bitwidth, how many of the report's tensors assignment.json puts there (the
    default width for a tensor it does not list)."""
    assignment = json.loads((folder / "assignment.json").read_text())
    names = [t["name"] for t in json.loads((folder / "search.json").read_text())["tensors"]]
    counts: dict[int, int] = {}
    for n in names:
        b = assignment["tensors"].get(n, {"bits": assignment["bits"]})["bits"]
        counts[b] = counts.get(b, 0) + 1
    return counts


def _counts_from_text(text: str) -> dict[int, int]:
    return {int(b): int(n) for n, b in re.findall(r"(\d+) (?:of \d+ tensors )?at (\d+) bits",
                                                  text)}


def _toy(budget, uniform_loss):
    """Three tensors; every prefix of two or more loses 81 points, uniform fixed8
    `uniform_loss`."""
    def evaluate(candidates):
        out = []
        for bits, demoted in candidates:
            if bits == 8:
                out.append(Result(loss=uniform_loss, ram=10))
                continue
            names = [n for n, b, _ in demoted if b == 8]
            out.append(Result(loss=81.0 if len(names) > 1 else 1.0 + len(names),
                              ram=40 - 10 * len(names)))
        return out

    return shiftry_search(["a", "b", "c"], {"a": 12, "b": 12, "c": 12}, evaluate,
                          strategy="ram", ram_budget=budget,
                          baselines={"fixed8": candidate({}, 8)})


@pytest.mark.parametrize("uniform_loss, expected", [(0.7, {8: 3}), (50.0, {8: 1, 16: 2})])
def test_summary_counts_the_written_assignment(tmp_path, uniform_loss, expected):
    """Uniform fixed8 chosen over the prefixes (the report once said "2 of 3 tensors at 8
    bits" there), and one demotion chosen: search.md, search.json and the one-line summary
    give the counts of assignment.json."""
    search = _toy(35, uniform_loss)
    write_report(search, tmp_path, "toy")
    assert _counts_from_files(tmp_path) == expected
    data = json.loads((tmp_path / "search.json").read_text())
    assert {int(b): n for b, n in data["bits_count"].items()} == expected
    assert _counts_from_text(choice_text(search)) == expected
    chosen = next(s for s in (tmp_path / "search.md").read_text().splitlines()
                  if s.startswith("Chosen:"))
    assert _counts_from_text(chosen) == expected
    assert ("uniform fixed8" in chosen) == (uniform_loss < 1)


def test_minun_compile_summary_counts_the_written_assignment(tmp_path):
    """Haunter on protonn-wine under 24 B (some tensors promoted): the printed line's
    counts are assignment.json's."""
    model = ROOT / "benchmarks/models/protonn-wine"
    out = subprocess.run([EXE, str(model / "model.sd"), "--train", str(model / "train.npy"),
                          "--search", "haunter", "--ram-budget", "24", "--jobs", "1",
                          "--evaluator", "numpy", "--out", str(tmp_path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    line = next(s for s in out.stdout.splitlines() if s.startswith("precision search"))
    counts = _counts_from_files(tmp_path / "search")
    assert _counts_from_text(line.split(", RAM")[0]) == counts
    assert sum(counts.values()) > 1


def test_assignment_rounding_is_replayed_and_checked(tmp_path):
    from minun_mlir.bitwidth_search import Assignment, load_assignment

    path = tmp_path / "a.json"
    path.write_text(Assignment(8, {}, rounding="nearest").to_json())
    assert load_assignment(path).rounding == "nearest"
    bad = tmp_path / "b.json"
    bad.write_text(path.read_text().replace('"nearest"', '"up"'))
    with pytest.raises(MinunError, match="rounding must be trunc, floor or nearest"):
        load_assignment(bad)
    model = ROOT / "benchmarks/models/protonn-wine"
    out = subprocess.run([EXE, str(model / "model.sd"), "--train", str(model / "train.npy"),
                          "--assign", str(path), "--rounding", "trunc"],
                         capture_output=True, text=True)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "--rounding trunc: the assignment" in out.stderr
    assert "searched with --rounding nearest" in out.stderr


def test_a_uniform_program_of_another_rounding_that_fits_and_loses_less_wins(tmp_path):
    """The search's choice (one demotion, loss 2) against uniform programs it evaluated
    under other roundings: one that loses less but needs more RAM than the budget is
    ignored; one that fits and loses less is chosen, with its rounding, and every summary
    says so."""
    from minun_mlir.bitwidth_search import Assignment, prefer_uniform

    search = _toy(35, 50.0)
    assert search.chosen_result.loss == 2.0
    big = (Assignment(16, {}, rounding="nearest"), Result(loss=0.0, ram=40))
    prefer_uniform(search, {"fixed16-nearest": big}, 35)
    assert search.uniform is None and search.chosen_result.loss == 2.0
    small = (Assignment(8, {}, rounding="nearest"), Result(loss=1.0, ram=10))
    prefer_uniform(search, {"fixed8-nearest": small}, 35)
    assert search.chosen_result is small[1] and search.assignment is small[0]
    assert choice_text(search) == ("uniform fixed8-nearest: 3 of 3 tensors at 8 bits, "
                                   "rounding nearest")
    write_report(search, tmp_path, "toy")
    assert _counts_from_files(tmp_path) == {8: 3}
    assert json.loads((tmp_path / "assignment.json").read_text())["rounding"] == "nearest"
