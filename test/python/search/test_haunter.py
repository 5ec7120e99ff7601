"""MinUn's Haunter (minun_mlir/bitwidth_search.py) against the paper's §3 example (Tables 1
and 2), and on a bundled model with the real planner."""

from __future__ import annotations

import pytest

from minun_mlir.bitwidth_search import haunter_explore, promotability, promotion_order

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


def test_soft_limit_factor_lets_more_through():
    instances = haunter_explore(["t2", "t1", "X1", "B1", "W1"], _ram, memory_limit=3,
                                soft_limit=1.4)
    assert set(instances[0].final) == set(TABLE_1) and instances[0].ram == 4
