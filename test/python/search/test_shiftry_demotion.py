"""Shiftry's demotion search (minun_mlir/bitwidth_search.py) on the paper's §3 example.

Pseudocode 1 is `W2 * (W1 * X + B1) + B2` with the values printed in the paper, written
below as a SeeDot program. The precision loss of a program is |t4 - float t4| on the one
input X (Table 1 and 2); the float result is -5.11167404.

`shiftry_int` is an independent model of the integer code Shiftry generates (Pseudocodes
2-4), written from the paper with numpy integers, parametrized by the two rules on which
Shiftry's code and ours differ:

- `shift`: how a right shift rounds. Shiftry's code divides by 2^n with an arithmetic
  shift (floor): Table 1's t3 and t4 rows (-5.1875 = -83/16) and its B2 row
  (-5.1171 = -655/128: t3 = -23953 >> 5 = -749, + 94) only come out with floor; it still
  quantizes constants by truncation (Pseudocode 2 prints -0.827 as -13549, not -13550).
  Ours rounds shifts and constants by the one mode of the program, `trunc` by default.
- `add`: Shiftry shifts both operands of an addition to the *result's* scale and adds
  there (`t4 = (t3 / 2^5) + B2`, Pseudocode 4); ours shifts them to the lower operand
  scale, adds exactly in a wider type and rescales the sum once (docs/numerics.md), which
  rounds once instead of twice when the result is demoted (the t4 row).

With (floor, result-scale adds) the model gives every number of Tables 1 and 2, and the
search reproduces the paper's order and choice. With (trunc, exact adds) it gives, number
for number, what our compiler computes (checked against the real quantize + bit-exact
evaluator), and there the order differs from the paper's: demoting B2, B1, t3, t2 costs
less, because each of our roundings loses less (a demoted t1 is -9/16 with trunc, -10/16
with floor).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from minun_mlir.bitwidth_search import (
    Assignment,
    Result,
    candidate,
    explore_input_scale,
    load_assignment,
    search_model,
    shiftry_search,
)
from minun_mlir.data import Dataset
from minun_mlir.frontends.seedot import compile_source

SOURCE = """
let X = (2, 1) in [-4.0, 4.0] in
let W1 = (2, 2) in [-1.1, 1.1] in
let B1 = (2, 1) in [-1.0, 1.0] in
let W2 = (1, 2) in [-1.1, 1.1] in
let B2 = (1, 1) in [-1.0, 1.0] in
let t1 = W1 * X in
let t2 = t1 + B1 in
let t3 = W2 * t2 in
let t4 = t3 + B2 in
t4
"""
W1 = np.array([[0.0421, 0.1948], [1.021, -0.827]])
B1 = np.array([[-0.032], [0.619]])
X = np.array([[2.391], [-3.583]])
W2 = np.array([[-0.402, -1.013]])
B2 = np.array([[0.737]])
VARIABLES = ["X", "W1", "B1", "W2", "B2", "t1", "t2", "t3", "t4"]  # program order

# Table 1: demoted variable -> (t4, precision loss), as printed (4 decimals, truncated)
TABLE_1 = {"W1": (-5.0456, 0.0660), "W2": (-5.0402, 0.0713), "B1": (-5.1022, 0.0093),
           "B2": (-5.1171, 0.0055), "X": (-5.0788, 0.0328), "t1": (-5.0012, 0.1104),
           "t2": (-5.0012, 0.1104), "t3": (-5.1875, 0.0758), "t4": (-5.1875, 0.0758)}
PAPER_ORDER = ["B2", "B1", "X", "W1", "W2", "t3", "t4", "t1", "t2"]
# Table 2: t4 and the loss after demoting the first 1, 2, ... of that order
TABLE_2 = [(-5.1171, 0.0055), (-5.1093, 0.0022), (-5.0781, 0.0335), (-5.0156, 0.0960),
           (-4.9453, 0.1663), (-5.0000, 0.1116), (-5.0000, 0.1116), (-4.8750, 0.2366),
           (-4.8750, 0.2366)]

FLOAT = float((W2 @ (W1 @ X + B1) + B2)[0, 0])


def _get_scale(v: float, bits: int) -> int:
    return (bits - 1) - math.floor(math.log2(v) + 1)  # Shiftry's Algorithm 10


def _wrap(q: np.ndarray, bits: int) -> np.ndarray:
    return (q + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))


def shiftry_int(bits: dict[str, int], scales: dict[str, int], shift: str, add: str
                ) -> float:
    """t4 of the example's integer program (see the module docstring)."""
    t1f = W1 @ X
    t2f = t1f + B1
    t3f = W2 @ t2f
    absmax = {"X": 3.583, "W1": 1.021, "B1": 0.619, "W2": 1.013, "B2": 0.737,
              "t1": np.abs(t1f).max(), "t2": np.abs(t2f).max(), "t3": np.abs(t3f).max(),
              "t4": abs(FLOAT)}

    def b(n):
        return bits.get(n, 16)

    def s(n, cap=99):
        return min(scales.get(n, _get_scale(absmax[n], b(n))), cap)

    def rshift(q, n):
        if n <= 0:
            return q << -n
        return q >> n if shift == "floor" else np.trunc(q / 2**n).astype(np.int64)

    def const(v, n):  # constants truncate, then saturate
        lim = (1 << (b(n) - 1))
        return np.clip(np.trunc(v * 2.0 ** s(n)), -lim, lim - 1).astype(np.int64), s(n)

    def matmul(a, sa, c, sc, n):  # exact products and sum, one shift
        so = s(n, sa + sc)
        return _wrap(rshift(a @ c, sa + sc - so), b(n)), so

    def plus(a, sa, c, sc, n):
        low = min(sa, sc)
        so = s(n, low)
        if add == "result-scale":  # Shiftry: both operands to the result's scale
            return _wrap(rshift(a, sa - so) + rshift(c, sc - so), b(n)), so
        total = rshift(a, sa - low) + rshift(c, sc - low)  # ours: exact at the lower scale
        return _wrap(rshift(total, low - so), b(n)), so

    (w1, sw1), (b1, sb1), (x, sx) = const(W1, "W1"), const(B1, "B1"), const(X, "X")
    (w2, sw2), (b2, sb2) = const(W2, "W2"), const(B2, "B2")
    t1, s1 = matmul(w1, sw1, x, sx, "t1")
    t2, s2 = plus(t1, s1, b1, sb1, "t2")
    t3, s3 = matmul(w2, sw2, t2, s2, "t3")
    t4, s4 = plus(t3, s3, b2, sb2, "t4")
    return float(t4[0, 0]) / 2**s4


def model_evaluate(shift: str, add: str, outputs: dict | None = None):
    """`evaluate` for shiftry_search on the model: loss = |t4 - float|."""
    def run(candidates):
        results = []
        for bits_default, tensors in candidates:
            assert bits_default == 16
            bits = {n: b for n, b, _ in tensors}
            scales = {n: sc for n, _, sc in tensors if sc is not None}
            t4 = shiftry_int(bits, scales, shift, add)
            if outputs is not None:
                outputs[(bits_default, tensors)] = t4
            results.append(Result(abs(t4 - FLOAT)))
        return results
    return run


def scales16() -> dict[str, int]:
    t1 = W1 @ X
    mags = {"X": 3.583, "W1": 1.021, "B1": 0.619, "W2": 1.013, "B2": 0.737,
            "t1": np.abs(t1).max(), "t2": np.abs(t1 + B1).max(),
            "t3": np.abs(W2 @ (t1 + B1)).max(), "t4": abs(FLOAT)}
    return {n: _get_scale(m, 16) for n, m in mags.items()}


def _truncated(x: float) -> float:
    return math.trunc(x * 1e4) / 1e4


def test_float_result_is_the_papers():
    assert FLOAT == pytest.approx(-5.11167404, abs=1e-8)


def test_shiftry_arithmetic_gives_tables_1_and_2_and_the_papers_choice():
    outputs: dict = {}
    search = shiftry_search(VARIABLES, scales16(), model_evaluate("floor", "result-scale",
                                                                   outputs), max_loss=0.1)
    for v, (t4, loss) in TABLE_1.items():
        scale, r = search.partial[v]
        assert _truncated(r.loss) == loss, v
        assert _truncated(outputs[candidate({v: (8, scale)})]) == t4, v
        # the scale GetScale gives at 8 bits won: the higher ones overflow
        assert scale == scales16()[v] - 8, v
    assert search.order == PAPER_ORDER
    for i, (t4, loss) in enumerate(TABLE_2):
        demoted = {v: (8, search.partial[v][0]) for v in PAPER_ORDER[:i + 1]}
        assert _truncated(outputs[candidate(demoted)]) == pytest.approx(t4, abs=1e-4), i
        assert _truncated(search.cumulative[i].loss) == pytest.approx(loss, abs=1e-4), i
    assert search.chosen == 4
    assert sorted(search.assignment.tensors) == sorted(["B2", "B1", "X", "W1"])
    # Pseudocode 4's 8-bit scales: W1 6, B1 7, X 5, B2 7
    assert search.assignment.tensors == {"W1": (8, 6), "B1": (8, 7), "X": (8, 5),
                                         "B2": (8, 7)}


def _compile():
    params = {"W1": W1, "B1": B1, "W2": W2, "B2": B2}
    return compile_source(SOURCE, params=params)


OUR_ORDER = ["B2", "B1", "t3", "t2", "X", "t4", "t1", "W1", "W2"]


def test_our_compiler_equals_the_model_with_our_rules():
    """The real search (quantize + bit-exact evaluator + memory planner) on the SeeDot
    program: every loss equals the model's with trunc shifts and exact adds, so the two
    rules of the module docstring are the whole difference from the paper. Our order is
    B2, B1, t3, t2, X, t4, t1, W1, W2 (the paper's: B2, B1, X, W1, W2, t3, t4, t1, t2),
    and under the 0.1 limit the cumulative demotion stops after 6 (B2, B1, t3, t2, X, t4:
    loss 0.0492; adding t1 loses 0.1117), where the paper's stops after 4."""
    data = Dataset(X[None].astype(np.float32), np.zeros(1, np.int64), 0)
    ours = search_model(_compile(), data, max_drop=0.1, metric="mae", evaluator="numpy",
                        roundings=("trunc",))
    model = shiftry_search(VARIABLES, scales16(), model_evaluate("trunc", "exact"),
                           max_loss=0.1)
    assert ours.variables == VARIABLES
    for v in VARIABLES:
        assert ours.partial[v][0] == model.partial[v][0], v
        # X is float32 in the program (2.391f), float64 in the model
        assert ours.partial[v][1].loss == pytest.approx(model.partial[v][1].loss, abs=1e-6), v
    assert ours.order == model.order == OUR_ORDER
    assert [r.loss for r in ours.cumulative] == pytest.approx(
        [r.loss for r in model.cumulative], abs=1e-6)
    assert ours.chosen == model.chosen == 6
    assert ours.assignment.tensors == model.assignment.tensors
    assert ours.assignment.rounding == "trunc"  # the only rounding it was given
    assert ours.assignment.tensors == {"B2": (8, 7), "B1": (8, 7), "t3": (8, 4),
                                       "t2": (8, 4), "X": (8, 5), "t4": (8, 4)}


def test_our_compiler_with_shiftrys_arithmetic_prints_the_papers_tables(tmp_path):
    """quantize{shift-rounding=floor adds=result-scale} compiles Shiftry's arithmetic
    (floor shifts, truncated constants and input, adds at the result's scale): the real
    search then gives every loss of Tables 1 and 2 as printed (4 decimals, truncated),
    the paper's order B2, B1, X, W1, W2, t3, t4, t1, t2, and under the 0.1 limit stops at
    {B2, B1, X, W1}. The chosen program's C computes the evaluator's integers."""
    from minun_mlir.codegen import emit_c
    from minun_mlir.numerics.l2_eval import encode_input, evaluate_l2
    from minun_mlir.numerics.repr import QuantizeConfig
    from minun_mlir.pipeline import lower_to_l2
    from minun_mlir.targets import run_model

    data = Dataset(X[None].astype(np.float32), np.zeros(1, np.int64), 0)
    config = QuantizeConfig(shift_rounding="floor", adds="result-scale")
    s = search_model(_compile(), data, max_drop=0.1, metric="mae", evaluator="numpy",
                     config=config, roundings=("trunc",))
    for v, (_, loss) in TABLE_1.items():
        assert _truncated(s.partial[v][1].loss) == pytest.approx(loss, abs=1e-9), v
    assert s.order == PAPER_ORDER
    assert [_truncated(r.loss) for r in s.cumulative] == pytest.approx(
        [loss for _, loss in TABLE_2], abs=1e-9)
    assert s.chosen == 4 and set(s.assignment.tensors) == {"B2", "B1", "X", "W1"}
    path = tmp_path / "a.json"
    path.write_text(s.assignment.to_json())
    np.save(tmp_path / "x.npy", np.array([[0.0, *X.ravel()]], dtype=np.float32))
    with pytest.warns(Warning, match="only 1 example"):
        l2 = lower_to_l2(_compile(), data=str(tmp_path / "x.npy"), assign=str(path),
                         shift_rounding="floor", adds="result-scale", evaluator="numpy")
    (inp,) = [op for op in l2.walk() if op.name == "num.input"]
    x = encode_input(l2)(inp, X[None])
    emit_c(l2, "x86", tmp_path / "c")
    r = run_model(tmp_path / "c", "x86", x.reshape(1, -1).astype(np.int8))
    assert int(r.outputs[0, 0]) == int(evaluate_l2(l2, X[None]).outputs[0].ravel()[0])


def test_assignment_json_round_trip(tmp_path):
    a = Assignment(16, {"B2": (8, 7), "X": (8, 5)})
    path = tmp_path / "a.json"
    path.write_text(a.to_json())
    assert load_assignment(path) == a
    doc = json.loads(path.read_text())
    assert doc["tensors"]["X"] == {"bits": 8, "scale": 5}


def test_a_rejected_candidate_goes_last_and_stops_the_loss_strategy():
    """A candidate the compiler rejects has an infinite loss (bitwidth_search._evaluate_one):
    it is ordered last, and the cumulative demotion stops before it."""
    inner = model_evaluate("floor", "result-scale")

    def evaluate(candidates):
        return [Result(math.inf) if any(n == "B1" for n, _, _ in c[1]) else r
                for c, r in zip(candidates, inner(candidates), strict=True)]

    search = shiftry_search(VARIABLES, scales16(), evaluate, max_loss=0.1)
    assert search.order[-1] == "B1"
    assert search.order[:-1] == [v for v in PAPER_ORDER if v != "B1"]
    assert "B1" not in search.assignment.tensors


def test_stage_2_input_scale():
    """Shiftry's stage II on the example: the scale of X with the least loss at 16 bits,
    every other value data-driven, found against the model run at each scale."""
    losses = {s: abs(shiftry_int({}, {"X": s}, "floor", "result-scale") - FLOAT)
              for s in range(17)}
    best, results = explore_input_scale(model_evaluate("floor", "result-scale"), "X", 16, 13)
    assert {s: r.loss for s, r in results.items()} == losses
    assert losses[best] == min(losses.values())
    # X = -3.583 needs 3 integer bits: any scale above 13 overflows
    assert best <= 13 and losses[14] > 1


def test_ram_strategy_takes_the_least_loss_among_the_prefixes_that_fit():
    """Each demoted tensor saves 10 B; demoting two is awful, all three is fine. Under a
    25 B budget the shortest fitting prefix is the second; the third loses less and fits
    too, so it is chosen."""
    from minun_mlir.bitwidth_search import Result

    alone = {"a": 1.0, "b": 2.0, "c": 3.0}  # PartialDemote's losses: order a, b, c

    def evaluate(candidates):
        out = []
        for _, demoted in candidates:
            names = sorted(n for n, b, _ in demoted if b == 8)
            loss = {0: 0.0, 2: 80.0, 3: 0.5}.get(len(names)) if len(names) != 1 \
                else alone[names[0]]
            out.append(Result(loss=loss, ram=40 - 10 * len(names)))
        return out

    search = shiftry_search(["a", "b", "c"], {"a": 12, "b": 12, "c": 12}, evaluate,
                            strategy="ram", ram_budget=25)
    assert [r.ram for r in search.cumulative] == [30, 20, 10]
    assert search.chosen == 3 and search.chosen_result.loss == 0.5


def test_ram_strategy_prefers_a_uniform_baseline_that_fits_and_loses_less():
    """Every prefix that fits loses 81 points, uniform fixed8 (same RAM) 0.7: the search
    returns the uniform program (an assignment at 8 bits, no per-tensor entries) rather
    than a worse mix."""
    from minun_mlir.bitwidth_search import Result, candidate

    def evaluate(candidates):
        out = []
        for bits, demoted in candidates:
            if bits == 8:
                out.append(Result(loss=0.7, ram=10))
                continue
            names = [n for n, b, _ in demoted if b == 8]
            out.append(Result(loss=81.0 if len(names) > 1 else 1.0 + len(names),
                              ram=40 - 10 * len(names)))
        return out

    search = shiftry_search(["a", "b", "c"], {"a": 12, "b": 12, "c": 12}, evaluate,
                            strategy="ram", ram_budget=25,
                            baselines={"fixed8": candidate({}, 8)})
    assert search.chosen_result.loss == 0.7
    assert search.assignment.bits == 8 and search.assignment.tensors == {}
    from minun_mlir.search_report import markdown

    text = markdown(search, "toy")
    assert "Chosen: uniform fixed8" in text and "(chosen)" not in text


def test_ram_strategy_falls_back_to_a_uniform_baseline_when_no_prefix_fits():
    """Demoting every named tensor still leaves 20 B (unnamed temporaries stay at 16 bits);
    uniform fixed8 needs 12 B. Under 15 B the search returns fixed8 (whatever its loss);
    under 10 B nothing fits and the diagnostic says how close the prefixes came."""
    from minun_mlir.bitwidth_search import Result, candidate
    from minun_mlir.diagnostics import MinunError

    def evaluate(candidates):
        out = []
        for bits, demoted in candidates:
            if bits == 8:
                out.append(Result(loss=5.0, ram=12))
                continue
            names = [n for n, b, _ in demoted if b == 8]
            out.append(Result(loss=1.0 + len(names), ram=50 - 10 * len(names)))
        return out

    args = (["a", "b", "c"], {"a": 12, "b": 12, "c": 12}, evaluate)
    search = shiftry_search(*args, strategy="ram", ram_budget=15,
                            baselines={"fixed8": candidate({}, 8)})
    assert search.chosen_result.ram == 12 and search.chosen_result.loss == 5.0
    assert search.assignment.bits == 8 and search.assignment.tensors == {}
    with pytest.raises(MinunError, match="loses 5, more than the limit 1"):
        shiftry_search(*args, strategy="ram", ram_budget=15, max_loss=1.0,
                       baselines={"fixed8": candidate({}, 8)})
    with pytest.raises(MinunError, match="no demotion fits 10 B of RAM: the least any "
                       "prefix of the 3 demotions needs is 20 B"):
        shiftry_search(*args, strategy="ram", ram_budget=10,
                       baselines={"fixed8": candidate({}, 8)})
