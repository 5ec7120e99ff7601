"""The precision search on a bundled model, end to end: candidates evaluated serially and
in a process pool give the same search; every RAM is the real planner's; the report's
Pareto front and the command line's replay (`--assign`) agree with independent
recomputations."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_tools import tool as cli_tool

from minun_mlir.bitwidth_search import Assignment, l2_types, load_assignment, search_model
from minun_mlir.data import accuracy, load_dataset, predictions
from minun_mlir.diagnostics import MinunError
from minun_mlir.driver import Options, compile_model, load_model, num_classes
from minun_mlir.memory_map import memory_map
from minun_mlir.numerics.float_eval import evaluate
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2
from minun_mlir.numerics.repr import QuantizeConfig
from minun_mlir.passes.quantize import quantize_module
from minun_mlir.pipeline import lower_l2, lower_to_l2
from minun_mlir.search_report import pareto, report_data, write_report

ROOT = Path(__file__).resolve().parents[3]
MODEL = ROOT / "benchmarks/models/protonn-wine"
BUDGET = 28


@pytest.fixture(scope="module")
def memo():
    """The programs the serial search evaluated (search_model's memo, content-keyed), for
    the searches that only need its results again (not the pool's or Ray's, which must
    evaluate theirs)."""
    return {}


@pytest.fixture(scope="module")
def setup(memo):
    l1 = load_model(MODEL / "model.sd")
    train = load_dataset(MODEL / "train.npy", (13, 1), num_classes(l1))
    serial = search_model(l1, train, ram_budget=BUDGET, max_drop=5.0, evaluator="numpy",
                          jobs=1, progress=False, memo=memo)
    return l1, train, serial


def test_parallel_search_equals_serial(setup):
    l1, train, serial = setup
    parallel = search_model(l1, train, ram_budget=BUDGET, max_drop=5.0, evaluator="numpy",
                            jobs=2, progress=False)
    assert parallel.order == serial.order
    assert parallel.chosen == serial.chosen
    assert parallel.assignment == serial.assignment
    assert [(p.label, p.result) for p in parallel.points] == \
        [(p.label, p.result) for p in serial.points]


def _l2(l1, tensors, bits=16):
    return lower_to_l2(l1, bits=bits, data=str(MODEL / "train.npy"), evaluator="numpy",
                       **({"assign": tensors} if tensors else {}))


def test_ram_strategy_picks_the_first_prefix_that_fits(setup, tmp_path):
    l1, train, search = setup
    assert search.strategy == "ram"
    rams = [search.base.ram] + [r.ram for r in search.cumulative]
    # independently: the planner on the L2 that the pipeline makes from each prefix
    for k in (search.chosen - 1, search.chosen):
        path = tmp_path / f"prefix{k}.json"
        demoted = {v: (8, search.partial[v][0]) for v in search.order[:k]}
        path.write_text(Assignment(16, demoted).to_json())
        l3 = lower_l2(_l2(l1, str(path)), stop="memory-plan", planner="greedy")
        assert memory_map(l3, "greedy").scratch == rams[k]
    assert rams[search.chosen] <= BUDGET < rams[search.chosen - 1]
    # the uniform baselines: the planner on plain bits=16 and bits=8 programs
    for bits, res in ((16, search.base), (8, search.baselines["fixed8"])):
        l3 = lower_l2(_l2(l1, None, bits), stop="memory-plan", planner="greedy")
        assert memory_map(l3, "greedy").scratch == res.ram


def test_losses_are_accuracy_points_against_float(setup):
    l1, train, search = setup
    float_acc = accuracy(predictions(evaluate(l1, train.features).outputs[0]), train.labels)
    q = quantize_module(l1, QuantizeConfig(bits=8), data=MODEL / "train.npy",
                        evaluator="numpy")
    acc8 = accuracy(predictions(decode_outputs(q, evaluate_l2(q, train.features).outputs)[0]),
                    train.labels)
    r = search.baselines["fixed8"]
    assert r.accuracy == acc8
    assert r.loss == pytest.approx(100 * (float_acc - acc8))


def test_report_pareto_front_is_nondominated(setup, tmp_path):
    _, _, search = setup
    paths = write_report(search, tmp_path, name="protonn-wine")
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(paths["json"].read_text())
    pts = [(p["ram"], p["loss"]) for p in data["points"]]
    for p in data["points"]:
        dominated = any(r <= p["ram"] and loss <= p["loss"] and (r, loss) != (p["ram"], p["loss"])
                        for r, loss in pts)
        if p["pareto"]:
            assert not dominated
        elif not dominated:  # a duplicate of a front point
            assert (p["ram"], p["loss"]) in {pts[j] for j in pareto(search.points)}
    assert data["changed"] == [v for v in search.variables
                               if v in search.order[:search.chosen]]
    md = paths["md"].read_text()
    for v in search.variables:
        assert f"| {v} |" in md
    assert load_assignment(paths["assignment"]) == search.assignment
    assert report_data(search)["chosen_result"]["ram"] <= BUDGET


def test_replayed_assignment_gives_the_searched_types(setup, tmp_path):
    l1, train, search = setup
    path = tmp_path / "a.json"
    path.write_text(search.assignment.to_json())
    result = compile_model(MODEL / "model.sd", Options(assign=str(path), budget=BUDGET),
                           train=MODEL / "train.npy", out_dir=tmp_path / "c")
    assert result.memory["scratch_bytes"] == search.chosen_result.ram
    types = l2_types(result.l2)
    for v, (bits, scale) in search.assignment.tensors.items():
        assert types[v] == (bits, scale), v


def test_minun_compile_search_then_assign_gives_the_same_c(tmp_path):
    exe = Path(cli_tool("minun-compile"))
    common = [str(MODEL / "model.sd"), "--train", str(MODEL / "train.npy"), "--evaluator",
              "numpy"]
    out = subprocess.run([exe, *common, "--search", "shiftry", "--ram-budget", str(BUDGET),
                          "--jobs", "1", "--out", str(tmp_path / "a")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "precision search (shiftry, ram strategy)" in out.stdout
    assert "RAM for buffers (greedy): " in out.stdout
    report = tmp_path / "a" / "search"
    assert {p.name for p in report.iterdir()} == {"search.md", "search.json", "search.png",
                                                 "assignment.json", ".minun-manifest.json"}
    again = subprocess.run([exe, *common, "--assign", str(report / "assignment.json"),
                            "--out", str(tmp_path / "b")], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "a/model.c").read_bytes() == (tmp_path / "b/model.c").read_bytes()
    ram = json.loads((report / "search.json").read_text())["chosen_result"]["ram"]
    assert f"RAM for buffers (greedy): {ram:,} B" in again.stdout
    bad = subprocess.run([exe, *common, "--search", "shiftry"], capture_output=True,
                         text=True)
    assert bad.returncode == 1 and "--ram-budget BYTES, --max-drop POINTS" in bad.stderr


@pytest.mark.slow
def test_ray_search_equals_serial(setup):
    """--ray: the same candidates as Ray tasks on a local Ray instance (ray is a test
    dependency, so this runs wherever the tests do)."""
    import ray

    l1, train, serial = setup
    try:
        remote = search_model(l1, train, ram_budget=BUDGET, max_drop=5.0,
                              evaluator="numpy", ray="local", progress=False)
    finally:
        ray.shutdown()
    assert remote.assignment == serial.assignment
    assert [(p.label, p.result) for p in remote.points] == \
        [(p.label, p.result) for p in serial.points]


def test_stage_2_input_scale_by_accuracy(setup):
    l1, train, _ = setup
    search = search_model(l1, train, max_drop=5.0, evaluator="numpy", progress=False,
                          explore_input=True)
    float_acc = accuracy(predictions(evaluate(l1, train.features).outputs[0]), train.labels)
    losses = {}
    for s in range(17):
        q = quantize_module(l1, QuantizeConfig(scale_by_name={"X": s}),
                            data=MODEL / "train.npy", evaluator="numpy")
        out = decode_outputs(q, evaluate_l2(q, train.features).outputs)[0]
        losses[s] = 100 * (float_acc - accuracy(predictions(out), train.labels))
    default = _l2_types_default(l1)
    best = min(losses, key=lambda s: (round(losses[s], 9), abs(s - default), s))
    assert search.base.types["X"] == (16, best)


def _l2_types_default(l1) -> int:
    return l2_types(_l2(l1, None))["X"][1]


def test_a_budget_nothing_fits_is_a_diagnostic(setup, memo):
    """Below every prefix and uniform fixed8: a diagnostic. Below every prefix only: the
    uniform fixed8 program (every tensor at 8 bits, temporaries too)."""
    l1, train, search = setup
    least = min(r.ram for r in search.cumulative)
    uniform = search.baselines["fixed8"].ram
    budget = min(least, uniform) - 1
    with pytest.raises(MinunError, match=f"no demotion fits {budget:,} B of RAM: the "
                       f"least any prefix of the {len(search.order)} demotions needs is "
                       f"{least:,} B"):
        search_model(l1, train, ram_budget=budget, evaluator="numpy", progress=False,
                     memo=memo)
    if uniform < least:
        fallback = search_model(l1, train, ram_budget=least - 1, evaluator="numpy",
                                progress=False, memo=memo)
        assert fallback.assignment.bits == 8 and fallback.chosen_result.ram == uniform


def test_unnamed_temporaries_are_numbered_and_take_assigned_bits(tmp_path):
    """A subexpression without a name is %t1, %t2, ... in program order (Shiftry numbers
    its temporaries the same way): the search can demote it, and an assignment file naming
    it replays through quantize{assign=...} onto a freshly loaded program."""
    import numpy as np

    from minun_mlir.frontends.seedot import compile_source
    from minun_mlir.numerics.convert import temporary_names
    from minun_mlir.pipeline import parse_pipeline, run_pipeline

    source = ("let X = (4, 1) in [-1.0, 1.0] in\n"
              "let W = (2, 4) in [-1.5, 1.5] in\n"
              "let B = (2, 1) in [-1.0, 1.0] in\n"
              "let Y = relu(W * X + B) in\nY\n")
    params = {"W": np.array([[0.5, -0.25, 0.125, 1.0], [1.5, 0.75, -1.0, 0.25]]),
              "B": np.array([[0.1], [-0.2]])}
    l1 = compile_source(source, params=params)
    names = temporary_names(l1)
    kinds = {name: v.owner.name for v, name in names.items()}
    assert kinds == {"%t1": "minun.matmul", "%t2": "minun.add"}
    path = tmp_path / "assignment.json"
    path.write_text(Assignment(16, {"%t1": (8, None)}).to_json())
    profile_data = tmp_path / "train.npy"
    rows = np.random.default_rng(0).uniform(-1, 1, (16, 4))
    np.save(profile_data, np.concatenate([np.zeros((16, 1)), rows], 1))
    fresh = compile_source(source, params=params)
    run_pipeline(fresh, parse_pipeline("lower-composite-ops"))
    l2 = lower_to_l2(fresh, bits=16, data=str(profile_data), assign=str(path))
    # the matmul's exact 32-bit sum is stored at 8 bits; the sum with B (%t2) stays at 16
    stored = {op.operands[0].owner.name: op.results[0].type.element_type.width
              for op in l2.walk() if op.name == "num.rescale"}
    assert stored["num.matmul"] == 8 and stored["num.add"] == 16
