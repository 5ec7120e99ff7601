"""MinUn §3's working example with posits through the real pipeline: per-tensor posit
formats (Procedure 3: posit16 with t2 as posit8) compiled and run, and Haunter's steps on
it: the value maps give Table 1's promotability scores and the promotion order t2, t1, X1,
B1, W1; under the paper's 3-byte limit the explorations end where Table 2 says, their
errors (from our evaluator) are Table 2's, and the least of them keeps t2 at posit8,
which is Procedure 3. Plus Haunter on posits end to end on a bundled model (minun-compile
--repr posit --search haunter), replayed from its assignment."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from minun_mlir.bitwidth_search import (
    Evaluator,
    _prepare,
    candidate,
    haunter_explore,
    promotability,
    promotion_order,
)
from minun_mlir.codegen import emit_c
from minun_mlir.data import Dataset
from minun_mlir.dialects import num
from minun_mlir.frontends.seedot import compile_with_weights
from minun_mlir.frontends.seedot.weights import Weights
from minun_mlir.memory_map import memory_map
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2
from minun_mlir.numerics.repr import QuantizeConfig
from minun_mlir.pipeline import lower_l2, lower_to_l2

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = """
let X = (2, 1) in [-3.0, 3.0] in
let W1 = (1, 2) in [-3.0, 3.0] in
let B1 = (1, 1) in [-1.0, 1.0] in
let t1 = W1 * X in
let t2 = t1 + B1 in
t2
"""
W1, X1, B1 = [-2.139562, 1.885351], [1.185109, -2.206466], [0.146048]
EXACT = sum(Fraction(w) * Fraction(x) for w, x in zip(W1, X1)) + Fraction(B1[0])
# Table 1's promotability scores and Table 2's errors (the paper's figures; the program's
# input is named X, the paper's X1)
TABLE_1 = {"W1": 0.00513, "B1": 0.00543, "X": 0.02198, "t1": 0.30469, "t2": 0.45117}
TABLE_2 = {frozenset(): 0.45047, frozenset({"t2", "X", "B1", "W1"}): 0.19601,
           frozenset({"t1", "X", "B1", "W1"}): 0.04953}


def example():
    weights = Weights({"W1": np.array([W1], dtype=np.float32),
                       "B1": np.array([B1], dtype=np.float32)})
    return compile_with_weights(EXAMPLE, "example.sd", weights)


def round_posit(v: Fraction, n: int) -> Fraction:
    """The posit<n, 2> nearest v (ties to even), by exhaustive search over the finite
    values of the format: an independent model of the rounding, fine for n <= 16."""
    from minun_mlir.formats.posit import arith as P

    pats = np.arange(1 << n, dtype=np.int64)
    pats = pats[pats != 1 << (n - 1)]
    vals = [Fraction(float(x)) for x in P.decode(pats, n, 2)]
    best = min(range(len(vals)), key=lambda i: (abs(vals[i] - v), int(pats[i]) & 1))
    return vals[best]


def test_procedure_3_posit16_with_t2_as_posit8(tmp_path):
    """t1 = W1 x X1 through the quire at posit16 (2 bytes), t2 = posit8(t1 + B1) (1 byte);
    the assignment file replays it; the C computes the same pattern in at most 3 bytes."""
    doc = {"format": "minun-bitwidth-assignment", "version": 1, "bits": 16, "repr": "posit",
           "tensors": {"t2": {"bits": 8, "scale": None}}}
    assign = tmp_path / "assignment.json"
    assign.write_text(json.dumps(doc))
    l2 = lower_to_l2(example(), repr="posit", bits=16, es=2, assign=str(assign))
    types = {(op.sym_name.data if isinstance(op, (num.ParamOp, num.InputOp))
              else op.results[0].name_hint): op.results[0].type.element_type
             for op in l2.walk() if isinstance(op, (num.ParamOp, num.InputOp, num.MatMulOp,
                                                    num.ConvertOp))}
    p16, p8 = num.PositType(16, 2), num.PositType(8, 2)
    assert types == {"X": p16, "W1": p16, "B1": p16, "t1": p16, "t2": p8}
    x = np.array([X1], dtype=np.float64).reshape(1, 2, 1)
    stored = evaluate_l2(l2, x).outputs[0]
    got = float(decode_outputs(l2, [stored])[0].item())
    # independently: every operand rounded to posit16, the dot product exact then rounded
    # once, the sum rounded to posit16, then to posit8
    w = [round_posit(Fraction(v), 16) for v in W1]
    xs = [round_posit(Fraction(v), 16) for v in X1]
    t1 = round_posit(w[0] * xs[0] + w[1] * xs[1], 16)
    t2 = round_posit(round_posit(t1 + round_posit(Fraction(B1[0]), 16), 16), 8)
    assert got == float(t2)
    assert abs(got - float(EXACT)) == pytest.approx(TABLE_2[frozenset(
        {"t1", "X", "B1", "W1"})], abs=2e-4)  # Table 2's least error
    l3 = lower_l2(l2, stop="memory-plan")
    assert memory_map(l3, "greedy").scratch <= 3  # the paper's 3-byte limit
    from minun_mlir.numerics.l2_eval import encode_input
    from minun_mlir.targets import run_model

    (inp,) = [op for op in l2.walk() if isinstance(op, num.InputOp)]
    emit_c(l2, "x86", tmp_path / "c")
    r = run_model(tmp_path / "c", "x86", encode_input(l2)(inp, x).reshape(1, 2).astype(np.int16))
    assert int(r.outputs[0, 0]) == int(stored.ravel()[0])


def test_haunter_section_3_with_posits():
    l1 = example()
    train = Dataset(np.array([X1], dtype=np.float32).reshape(1, 2, 1),
                    np.zeros(1, dtype=np.int64), 0)
    prepared, profile, reference, metric = _prepare(l1, train, "numpy", "mae")
    names = ["X", "W1", "B1", "t1", "t2"]
    with Evaluator(prepared, profile, train.features, train.labels, reference,
                   QuantizeConfig(bits=8, es=2), metric, evaluator="numpy",
                   representation="posit") as run:
        high = run.values(candidate({v: (16, None) for v in names}, 8))
        low = run.values(candidate({}, 8))
        scores = promotability(high, low, {"W1": 2, "B1": 1, "X": 2, "t1": 1, "t2": 1})
        for v, want in TABLE_1.items():
            assert scores[v] == pytest.approx(want, abs=6e-5), v
        order = promotion_order(scores, names)
        assert order == ["t2", "t1", "X", "B1", "W1"]

        def paper_ram(promoted):  # §3: t1 and t2 in RAM, 1 byte at posit8, 2 at posit16
            return sum(2 if t in promoted else 1 for t in ("t1", "t2"))

        finals = {frozenset(i.final) for i in haunter_explore(order, paper_ram, 3)}
        assert finals | {frozenset()} == set(TABLE_2)
        configs = sorted(TABLE_2, key=sorted)
        results = run([candidate({v: (16, None) for v in f}, 8) for f in configs])
    errors = {f: r.loss for f, r in zip(configs, results, strict=True)}
    for f, want in TABLE_2.items():
        assert errors[f] == pytest.approx(want, abs=5e-4), sorted(f)
    best = min(errors, key=errors.__getitem__)
    assert best == frozenset({"t1", "X", "B1", "W1"})  # t2 stays posit8: Procedure 3


def test_haunter_on_posits_end_to_end(tmp_path):
    """minun-compile --repr posit --search haunter: the search runs on posit programs
    (posit8 up to posit16) within a budget between their RAMs, and --assign alone replays
    its choice (the file says repr posit)."""
    from minun_mlir.driver import load_model
    from minun_mlir.tools.minun_compile import main

    model = ROOT / "benchmarks" / "models" / "protonn-wine"
    l1 = load_model(model / "model.sd")

    def ram(**options) -> int:
        l2 = lower_to_l2(l1, repr="posit", es=2, **options)
        return memory_map(lower_l2(l2, stop="memory-plan"), "greedy").scratch

    ram8, ram16 = ram(bits=8), ram(bits=16)
    budget = (ram8 + ram16) // 2
    assert ram8 < budget < ram16
    common = [str(model / "model.sd"), "--train", str(model / "train.npy"), "--evaluator",
              "numpy"]
    assert main([*common, "--repr", "posit", "--search", "haunter", "--ram-budget",
                 str(budget), "--jobs", "1", "--out", str(tmp_path / "a")]) == 0
    path = tmp_path / "a" / "search" / "assignment.json"
    assign = json.loads(path.read_text())
    assert assign["repr"] == "posit" and assign["bits"] == 8
    assert assign["tensors"] and all(t["bits"] == 16 for t in assign["tensors"].values())
    assert ram8 < ram(bits=8, assign=str(path)) <= budget
    assert main([*common, "--assign", str(path), "--out", str(tmp_path / "b")]) == 0
    assert (tmp_path / "a/model.c").read_bytes() == (tmp_path / "b/model.c").read_bytes()
    assert "posit8" in (tmp_path / "a/search/search.md").read_text()


def uno_static_ram(c_dir: Path) -> int:
    """.data + .bss of model.c built by avr-gcc for the Uno (as bench_face measures it)."""
    from minun_mlir.targets.boards import get_board
    from minun_mlir.targets.build import compile_sources, read_sizes

    uno = get_board("avr")
    obj = compile_sources(uno, [c_dir / "model.c"], c_dir, include_dirs=[c_dir])[0]
    return read_sizes(uno, obj).ram


@pytest.fixture(scope="module")
def memo():
    """The programs this file's Haunter searches of protonn-wine evaluated (haunter_model's
    memo, keyed by everything that determines a result): one search does not evaluate a
    program another did again, and finds what it would have found alone."""
    return {}


@pytest.mark.parametrize("quire", [True, False])
def test_haunter_posit_ram_is_the_unos_static_ram(quire, tmp_path, memo):
    """The search's RAM is the planner's scratch plus the runtime's quires, what avr-gcc
    gives as .data + .bss of the chosen program's model.c. A budget the posit8 program
    with its quire (17 B for posit<8, 2>) fits keeps the quire; a tight one (1.25x the
    fixed8 plan, as the suite's) fits only without one: the search says "quire": false
    and the replayed program has no quire and fits."""
    from minun_mlir.bitwidth_search import haunter_model
    from minun_mlir.data import load_dataset
    from minun_mlir.driver import Options, _input_shape, compile_model, load_model, num_classes
    from minun_mlir.search_report import write_report

    model = ROOT / "benchmarks" / "models" / "protonn-wine"
    l1 = load_model(model / "model.sd")
    train = load_dataset(model / "train.npy", _input_shape(l1), num_classes(l1))
    fixed8 = memory_map(lower_l2(lower_to_l2(l1, bits=8, data=str(model / "train.npy")),
                                 stop="memory-plan"), "greedy").scratch
    posit8 = memory_map(lower_l2(lower_to_l2(l1, repr="posit", bits=8, es=2),
                                 stop="memory-plan"), "greedy")
    assert posit8.runtime == 17
    budget = posit8.static_ram + 8 if quire else int(1.25 * fixed8)
    assert (budget < posit8.static_ram) != quire
    # with room for a quire, search only programs with one (left to itself the search
    # also tries without and keeps the better: test_haunter_keeps_the_better_quire_choice)
    search = haunter_model(l1, train, budget, representation="posit", evaluator="numpy",
                           quire=True if quire else None, memo=memo)
    assert search.assignment.quire == quire
    paths = write_report(search, tmp_path / "search", name="protonn-wine")
    assert ("quire" in json.loads(paths["assignment"].read_text())) != quire
    run = compile_model(model / "model.sd", Options(repr="posit", bits=8,
                                                    assign=str(paths["assignment"]),
                                                    target="avr"),
                        out_dir=tmp_path / "c", weights=None, train=model / "train.npy")
    assert ("minun_quire_1" in (run.c_dir / "minun_runtime.h").read_text()) == quire
    ram = uno_static_ram(run.c_dir)
    assert ram == search.chosen_result.ram == run.memory["scratch_bytes"] + run.memory.get(
        "runtime_bytes", 0)
    assert ram <= budget
    print(f"\n  quire={quire}: budget {budget} B, chosen {ram} B, {search.assignment.tensors}")


def test_haunter_keeps_the_better_quire_choice(memo):
    """Left to itself (quire None) Haunter on posits searches with a quire and without one
    and keeps the program that loses less, the quire on a tie."""
    from minun_mlir.bitwidth_search import haunter_model
    from minun_mlir.data import load_dataset
    from minun_mlir.driver import _input_shape, load_model, num_classes

    model = ROOT / "benchmarks" / "models" / "protonn-wine"
    l1 = load_model(model / "model.sd")
    train = load_dataset(model / "train.npy", _input_shape(l1), num_classes(l1))
    budget = 60  # both kinds fit
    kinds = {q: haunter_model(l1, train, budget, representation="posit", evaluator="numpy",
                              quire=q, memo=memo) for q in (True, False)}
    assert all(s.chosen_result.ram <= budget for s in kinds.values())
    both = haunter_model(l1, train, budget, representation="posit", evaluator="numpy",
                         memo=memo)
    better = min((True, False), key=lambda q: kinds[q].chosen_result.loss)
    assert both.assignment.quire == better
    assert both.chosen_result.loss == kinds[better].chosen_result.loss
    from minun_mlir.diagnostics import MinunError

    with pytest.raises(MinunError, match="the quire option is for repr=posit"):
        haunter_model(l1, train, budget, evaluator="numpy", quire=False)


def test_assignment_json_says_quire_false_only_when_false():
    from minun_mlir.bitwidth_search import Assignment
    from minun_mlir.diagnostics import MinunError

    with_quire = Assignment(8, {"X": (16, None)}, "posit")
    assert "quire" not in json.loads(with_quire.to_json())
    without = Assignment(8, {"X": (16, None)}, "posit", quire=False)
    doc = json.loads(without.to_json())
    assert doc["quire"] is False
    assert Assignment.from_json(without.to_json()) == without
    assert not without.apply(QuantizeConfig(bits=8)).quire
    for bad in ({**doc, "quire": "no"}, {**doc, "repr": "fixed", "tensors": {}}):
        with pytest.raises(MinunError, match="quire must be true or false"):
            Assignment.from_json(json.dumps(bad))


def test_minun_compile_no_quire(capsys, tmp_path):
    """--no-quire: the compile's quantize runs quire=false (posits only)."""
    from minun_mlir.tools.minun_compile import main

    model = str(ROOT / "benchmarks" / "models" / "protonn-wine" / "model.sd")
    assert main([model, "--repr", "posit", "--bits", "8", "--no-quire",
                 "--print-pipeline"]) == 0
    assert "quire=false" in capsys.readouterr().out
    for extra in (["--print-pipeline"], ["--out", str(tmp_path / "x")]):  # refused first
        assert main([model, "--bits", "8", "--no-quire", *extra]) == 1
        assert "minun-compile: error: --no-quire is for --repr posit, not --repr fixed" in \
            capsys.readouterr().err


def test_stage_one_chooses_es_per_bitwidth_by_the_uniform_programs(tmp_path):
    """MinUn's stage I (Algorithm 4): es of the 8-bit posits is 0 where the all-posit<8, 0>
    program loses less on the search data than the all-posit<8, 2> one, and es of the
    16-bit posits 1 where posit<16, 1> loses less than posit<16, 2>. The losses are
    recomputed here with the numpy evaluator (the search runs natively): disagreement
    with the float program's labels. On protonn-digits-binary posit<8, 0> wins (its
    values sit well inside [1/64, 64], where es = 0 has two more fraction bits), and the
    chosen program, replayed from its assignment, holds only those two formats."""
    from minun_mlir.bitwidth_search import haunter_model
    from minun_mlir.data import disagreement, load_dataset, predictions
    from minun_mlir.driver import Options, _input_shape, compile_model, load_model, num_classes
    from minun_mlir.numerics.float_eval import evaluate
    from minun_mlir.search_report import write_report

    model = ROOT / "benchmarks" / "models" / "protonn-digits-binary"
    l1 = load_model(model / "model.sd")
    train = load_dataset(model / "train.npy", _input_shape(l1), num_classes(l1))
    search = haunter_model(l1, train, 60, representation="posit", quire=True)
    reference = predictions(evaluate(l1, train.features).outputs[0])
    losses = {}
    for n, es in ((8, 0), (8, 2), (16, 1), (16, 2)):
        l2 = lower_to_l2(l1, repr="posit", bits=n, es=es)
        out = decode_outputs(l2, evaluate_l2(l2, train.features).outputs)[0]
        losses[n, es] = 100 * disagreement(reference, predictions(out))
        assert search.stage_one[f"posit<{n}, {es}>"].loss == pytest.approx(losses[n, es])
    expected = {8: 0 if losses[8, 0] < losses[8, 2] else 2,
                16: 1 if losses[16, 1] < losses[16, 2] else 2}
    assert search.assignment.es == expected
    assert expected[8] == 0
    paths = write_report(search, tmp_path / "search", name="protonn-db")
    doc = json.loads(paths["assignment"].read_text())
    assert doc["es"] == {str(b): e for b, e in expected.items()}
    assert "Stage I" in paths["md"].read_text()
    run = compile_model(model / "model.sd", Options(repr="posit", bits=8,
                                                    assign=str(paths["assignment"]),
                                                    target="x86"),
                        out_dir=tmp_path / "c", weights=None,
                        train=model / "train.npy")
    formats = {(t.width, t.exponent_bits) for op in run.l2.walk() for v in op.results
               if isinstance(t := getattr(v.type, "element_type", v.type), num.PositType)}
    assert formats <= {(8, expected[8]), (16, expected[16])} and (8, expected[8]) in formats
    assert run.memory["scratch_bytes"] + run.memory.get("runtime_bytes", 0) == \
        search.chosen_result.ram


def test_an_es_given_is_used_at_every_width():
    from minun_mlir.bitwidth_search import Assignment, haunter_model
    from minun_mlir.data import load_dataset
    from minun_mlir.diagnostics import MinunError
    from minun_mlir.driver import _input_shape, load_model, num_classes

    model = ROOT / "benchmarks" / "models" / "protonn-wine"
    l1 = load_model(model / "model.sd")
    train = load_dataset(model / "train.npy", _input_shape(l1), num_classes(l1))
    search = haunter_model(l1, train, 60, representation="posit", es=1, quire=True)
    assert search.assignment.es == {8: 1, 16: 1} and not search.stage_one
    with pytest.raises(MinunError, match="es is for repr=posit"):
        haunter_model(l1, train, 60, es=1)
    assert Assignment.from_json(search.assignment.to_json()) == search.assignment
