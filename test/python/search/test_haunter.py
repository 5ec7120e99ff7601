"""MinUn's Haunter (minun_mlir/bitwidth_search.py) against the paper's §3 example (Tables 1
and 2), and on a bundled model with the real planner."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cli_tools import tool as cli_tool

from minun_mlir.bitwidth_search import (
    haunter_explore,
    haunter_model,
    promotability,
    promotion_order,
)
from minun_mlir.data import load_dataset
from minun_mlir.driver import load_model, num_classes
from minun_mlir.memory_map import memory_map
from minun_mlir.pipeline import lower_l2, lower_to_l2

# Table 1: the 16-bit and 8-bit (posit) values each tensor holds, and its size
HIGH = {"W1": [-2.13965, 1.88525], "B1": [0.146057], "X1": [1.18506, -2.20605],
        "t1": [-6.69531], "t2": [-6.54883]}
LOW = {"W1": [-2.25, 1.875], "B1": [0.140625], "X1": [1.125, -2.25], "t1": [-7.0],
       "t2": [-7.0]}
SIZES = {"W1": 2, "B1": 1, "X1": 2, "t1": 1, "t2": 1}
TABLE_1 = {"W1": 0.00513, "B1": 0.00543, "X1": 0.02198, "t1": 0.30469, "t2": 0.45117}


def test_promotability_is_table_1():
    scores = promotability(HIGH, LOW, SIZES)
    for v, expect in TABLE_1.items():
        assert scores[v] == pytest.approx(expect, abs=6e-6), v
    assert promotion_order(scores, ["W1", "X1", "B1", "t1", "t2"]) == \
        ["t2", "t1", "X1", "B1", "W1"]


def _ram(promoted: tuple[str, ...]) -> int:
    """§3: only t1 and t2 live in RAM, both at once: 1 byte each at 8 bits, 2 at 16."""
    return sum(2 if t in promoted else 1 for t in ("t1", "t2"))


def test_explorations_are_table_2():
    instances = haunter_explore(["t2", "t1", "X1", "B1", "W1"], _ram, memory_limit=3)
    first = instances[0]
    # Table 2's first instance: t2 (3 B), t2 + t1 (4 B, reverted), then X1, B1, W1 (3 B)
    assert [(set(p), ram, kept) for p, ram, kept in first.steps] == [
        ({"t2"}, 3, True), ({"t2", "t1"}, 4, False), ({"t2", "X1"}, 3, True),
        ({"t2", "X1", "B1"}, 3, True), ({"t2", "X1", "B1", "W1"}, 3, True)]
    assert set(first.final) == {"t2", "X1", "B1", "W1"}
    # every tensor reached the limit, so each starts an instance; t1 first gives the
    # paper's second instance, and promoting all of them first ends at the same place
    by_start = {i.start: i for i in instances[1:-1]}
    assert set(by_start) == {("t2",), ("t1",), ("X1",), ("B1",), ("W1",)}
    # (Algorithm 7 checks t1 again when the order reaches it; the table omits that row)
    assert [(set(p), ram) for p, ram, _ in by_start[("t1",)].steps] == [
        ({"t1"}, 3), ({"t1", "t2"}, 4), ({"t1"}, 3), ({"t1", "X1"}, 3),
        ({"t1", "X1", "B1"}, 3), ({"t1", "X1", "B1", "W1"}, 3)]
    assert set(by_start[("t1",)].final) == {"t1", "X1", "B1", "W1"}
    last = instances[-1]
    assert last.steps[0][:2] == (last.start, 4) and set(last.start) == set(TABLE_1)
    assert set(last.final) == {"t1", "X1", "B1", "W1"} and last.ram == 3
    finals = {frozenset(i.final) for i in instances}
    assert finals == {frozenset({"t2", "X1", "B1", "W1"}), frozenset({"t1", "X1", "B1", "W1"})}
    # with the errors Table 2 prints, the best keeps t2 at 8 bits, as the paper says
    errors = {frozenset(): 0.45047, frozenset({"t2", "X1", "B1", "W1"}): 0.19601,
              frozenset({"t1", "X1", "B1", "W1"}): 0.04953}
    best = min(finals | {frozenset()}, key=errors.__getitem__)
    assert "t2" not in best


def test_first_exploration_alone_is_table_2s_first_instance():
    """first_only (the streamed face search, whose RAM plans are dear): exploration (1)
    alone, the same instance as the full search's first, and no other."""
    order = ["t2", "t1", "X1", "B1", "W1"]
    (only,) = haunter_explore(order, _ram, memory_limit=3, first_only=True)
    first = haunter_explore(order, _ram, memory_limit=3)[0]
    assert only.steps == first.steps and set(only.final) == {"t2", "X1", "B1", "W1"}


def test_soft_limit_factor_lets_more_through():
    instances = haunter_explore(["t2", "t1", "X1", "B1", "W1"], _ram, memory_limit=3,
                                soft_limit=1.4)
    assert set(instances[0].final) == set(TABLE_1) and instances[0].ram == 4


MODEL = Path(__file__).resolve().parents[3] / "benchmarks/models/protonn-wine"


@pytest.fixture(scope="module")
def wine():
    l1 = load_model(MODEL / "model.sd")
    train = load_dataset(MODEL / "train.npy", (13, 1), num_classes(l1))
    return l1, haunter_model(l1, train, 24, evaluator="numpy", progress=False)


def test_promotability_of_a_parameter_from_its_weights(wine):
    """W's value map is its weights quantized at 16 and at 8 bits (GetScale of the
    largest magnitude, truncated): its score from the weights alone."""
    _, search = wine
    w = np.load(MODEL / "W.npy").astype(np.float32).astype(np.float64)
    m = float(np.abs(w).max())
    q = {b: np.trunc(w * 2.0 ** ((b - 1) - math.floor(math.log2(m) + 1)))
         / 2.0 ** ((b - 1) - math.floor(math.log2(m) + 1)) for b in (8, 16)}
    dev = np.sort(np.abs(q[16] - q[8]).ravel())
    expect = dev[math.floor(0.95 * (dev.size - 1))] / w.size
    assert search.scores["W"] == pytest.approx(expect, rel=1e-12)
    assert search.order == sorted(search.order, key=lambda v: -search.scores[v])


def test_chosen_configuration_fits_by_the_real_planner(wine, tmp_path):
    l1, search = wine
    for inst in search.instances:  # every promotion kept fits, every one reverted did not
        for _, ram, kept in inst.steps[1 if inst.start else 0:]:
            assert kept == (ram <= 24)
    path = tmp_path / "a.json"
    path.write_text(search.assignment.to_json())
    assert search.assignment.bits == 8
    assert all(b == 16 for b, _ in search.assignment.tensors.values())
    l2 = lower_to_l2(l1, bits=8, data=str(MODEL / "train.npy"), evaluator="numpy",
                     assign=str(path))
    l3 = lower_l2(l2, stop="memory-plan", planner="greedy")
    assert memory_map(l3, "greedy").scratch == search.chosen_result.ram <= 24
    losses = [p.result.loss for p in search.points if p.kind == "exploration"]
    assert search.chosen_result.loss == min(losses)


def test_minun_compile_haunter_then_assign(tmp_path):
    exe = Path(cli_tool("minun-compile"))
    common = [str(MODEL / "model.sd"), "--train", str(MODEL / "train.npy"), "--evaluator",
              "numpy"]
    a = subprocess.run([exe, *common, "--search", "haunter", "--ram-budget", "24", "--jobs",
                        "1", "--out", str(tmp_path / "a")], capture_output=True, text=True)
    assert a.returncode == 0, a.stderr
    assert "precision search (haunter, soft limit 1)" in a.stdout
    assert "[fixed8+assign]" in a.stdout
    # the assignment file says 8 bits: --assign alone compiles the same program
    b = subprocess.run([exe, *common, "--assign", str(tmp_path / "a/search/assignment.json"),
                        "--out", str(tmp_path / "b")], capture_output=True, text=True)
    assert b.returncode == 0, b.stderr
    assert (tmp_path / "a/model.c").read_bytes() == (tmp_path / "b/model.c").read_bytes()
    md = (tmp_path / "a/search/search.md").read_text()
    assert "## Explorations" in md and "Promotion order: " in md
