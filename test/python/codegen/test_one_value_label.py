"""The label of a program whose output is one real (modules.decision_threshold): `value >
0.5` for a probability (a sigmoid's output), `value > 0` for a raw score; a regressor has
none. The evaluator's predictions and the C's minun_predict use the one rule, the C in the
output's own number format, so the C's label is the evaluator's on every input, in every
format, and both are the float model's rule (numpy, onnxruntime) wherever the quantized
output is not within its measured error of the threshold.

The models: logistic regression on breast cancer (scikit-learn, standardised features),
as a SeeDot program returning the score `W * X + B`, one returning `sigmoid(W * X + B)`,
and an ONNX MatMul, Add, Sigmoid graph; and the zoo's LinearRegression on diabetes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from cli_tools import tool as cli_tool
from onnx import TensorProto, helper, numpy_helper

from minun_mlir.data import load_dataset
from minun_mlir.driver import Options, compile_model
from minun_mlir.lowering.loops.functions import stored_threshold
from minun_mlir.modules import decision_threshold, is_regression
from minun_mlir.numerics import formats
from minun_mlir.numerics.l2_eval import decode_outputs, storage_inputs
from minun_mlir.targets import run_model

ROOT = Path(__file__).resolve().parents[3]
ZOO = ROOT / "test" / "zoo" / "sklearn"

FORMATS = {
    "fixed16": Options(bits=16), "fixed8": Options(bits=8),
    "float32": Options(repr="float32"),
    "posit16": Options(repr="posit", bits=16),
    "posit8-es0": Options(repr="posit", bits=8, es=0),
    "bfloat16": Options(repr="bfloat16"),
    "zero-skew8": Options(repr="zero-skew", bits=8),
}
PROGRAM = """let X = (30, 1) in [-4.0, 12.0] in
let W = (1, 30) in [-1.0, 1.0] in
let B = (1, 1) in [-1.0, 1.0] in
{}
"""


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The three breast-cancer models, their data, and the float reference: the score
    x W^T + b (numpy, float64) and onnxruntime's probability for the ONNX graph."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    d = tmp_path_factory.mktemp("one-value")
    x, y = load_breast_cancer(return_X_y=True)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.3, stratify=y, random_state=0)
    scaler = StandardScaler().fit(xtr)
    xtr, xte = scaler.transform(xtr), scaler.transform(xte)
    lr = LogisticRegression(C=0.1).fit(xtr, ytr)
    w, b = lr.coef_.astype(np.float32), lr.intercept_.reshape(1, 1).astype(np.float32)
    np.save(d / "W.npy", w)
    np.save(d / "B.npy", b)
    np.save(d / "train.npy", np.concatenate([ytr[:, None], xtr], 1))
    np.save(d / "test.npy", np.concatenate([yte[:, None], xte], 1))
    (d / "score.sd").write_text(PROGRAM.format("W * X + B"))
    (d / "prob.sd").write_text(PROGRAM.format("sigmoid(W * X + B)"))
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "Wt"], ["s0"]),
         helper.make_node("Add", ["s0", "B"], ["s"]),
         helper.make_node("Sigmoid", ["s"], ["p"])], "logreg",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 30])],
        [helper.make_tensor_value_info("p", TensorProto.FLOAT, ["N", 1])],
        [numpy_helper.from_array(np.ascontiguousarray(w.T), "Wt"),
         numpy_helper.from_array(b.reshape(1), "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, d / "prob.onnx")
    x32 = xte.astype(np.float32)
    score = x32.astype(np.float64) @ w.T.astype(np.float64) + float(b[0, 0])
    prob = ort.InferenceSession(model.SerializeToString()).run(None, {"X": x32})[0]
    return {"dir": d, "y": yte, "score": score.reshape(-1), "prob": prob.reshape(-1)}


def _compile(models, name: str, options: Options, out: Path | None = None):
    d = models["dir"]
    return compile_model(d / name, options, weights=d if name.endswith(".sd") else None,
                         train=d / "train.npy", test=d / "test.npy", out_dir=out,
                         dims={"N": 1} if name.endswith(".onnx") else None)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("name", ["score.sd", "prob.sd", "prob.onnx"])
def test_c_label_is_the_evaluators_and_the_float_rule(models, name, fmt, tmp_path):
    """Every test input on x86: the C's label = the evaluator's = the threshold rule on
    the C's own output, and = the float model's `p > 0.5` / `score > 0` wherever the
    quantized output is further from the threshold than its largest error."""
    result = _compile(models, name, FORMATS[fmt], tmp_path)
    features = result.test.features
    run = run_model(result.c_dir, "x86", storage_inputs(result.l2, features), x86_repeat=1)
    labels = np.asarray(run.labels).reshape(-1)
    np.testing.assert_array_equal(labels, result.predictions)
    threshold, reference = ((0.5, models["prob"]) if name.startswith("prob")
                            else (0.0, models["score"]))
    decoded = decode_outputs(result.l2, [np.asarray(run.outputs)])[0].reshape(-1)
    np.testing.assert_array_equal(labels, (decoded > threshold).astype(np.int64))
    clear = np.abs(reference - threshold) > result.error["max_abs_error"] + 1e-6
    assert clear.sum() >= 0.8 * len(labels), (clear.sum(), result.error)
    np.testing.assert_array_equal(labels[clear], (reference > threshold)[clear])
    assert set(labels) == {0, 1}


@pytest.mark.parametrize("name", ["prob.sd", "prob.onnx"])
def test_sigmoid_model_float_accuracy_is_p_above_one_half(models, name):
    """The report's float accuracy of a sigmoid model = onnxruntime's p > 0.5 accuracy
    (95.9%; the score > 0 rule on probabilities gave 62.6%, the share of class 1)."""
    result = _compile(models, name, Options(bits=16))
    expected = float(np.mean((models["prob"] > 0.5) == models["y"]))
    assert expected > 0.95
    assert result.float_accuracy == pytest.approx(expected, abs=1e-12)
    assert result.accuracy > 0.9
    assert decision_threshold(result.l1) == decision_threshold(result.l2) == 0.5


@pytest.mark.parametrize("fmt", ["fixed16", "zero-skew8", "posit8-es0"])
def test_uno_label_is_the_evaluators(models, fmt, tmp_path):
    """The simulated Uno (avr-gcc, simavr): the sigmoid model's labels and stored output
    are the evaluator's on 12 inputs of both classes."""
    result = _compile(models, "prob.sd", FORMATS[fmt], tmp_path)
    rows = np.r_[np.flatnonzero(result.predictions == 0)[:6],
                 np.flatnonzero(result.predictions == 1)[:6]]
    inputs = storage_inputs(result.l2, result.test.features)[rows]
    run = run_model(result.c_dir, "avr", inputs)
    np.testing.assert_array_equal(np.asarray(run.labels).reshape(-1), result.predictions[rows])
    np.testing.assert_array_equal(np.asarray(run.outputs).reshape(-1),
                                  result.stored_outputs.reshape(-1)[rows])


def _cli(*args: str) -> subprocess.CompletedProcess:
    """minun-compile through the tests' warm server (a fork, not an interpreter start)."""
    return subprocess.run([cli_tool("minun-compile"), *map(str, args)],
                          capture_output=True, text=True)


def test_run_of_a_one_score_program_agrees(models, tmp_path):
    d = models["dir"]
    r = _cli(d / "score.sd", "--weights", d, "--train", d / "train.npy", "--test",
             d / "test.npy", "--out", tmp_path / "c", "--run", "--json", tmp_path / "r.json")
    assert r.returncode == 0, r.stderr
    assert "labels equal to the evaluator's on 100.00%" in r.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["run"]["inputs_differing_from_evaluator"] == []
    assert report["run"]["agreement"] == 1.0


def test_regressor_has_no_accuracy_and_run_compares_values(tmp_path):
    """linreg_diabetes: no accuracy in the report or the JSON, and --run exits 0 with every
    output integer the evaluator's (it called this a compiler bug before)."""
    r = _cli(ZOO / "linreg_diabetes.onnx", "--train", ZOO / "data" / "diabetes-train.npz",
             "--test", ZOO / "linreg_diabetes.npz", "--out", tmp_path / "c", "--run",
             "--json", tmp_path / "r.json")
    assert r.returncode == 0, r.stderr
    assert "compiler bug" not in r.stderr
    assert "accuracy: not reported (a regressor" in r.stdout
    assert "float accuracy" not in r.stdout and "labels 0-based" not in r.stdout
    assert "all 40 output values equal to the evaluator's on 40 of 40 inputs" in r.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["accuracy"] is None and report["float_accuracy"] is None


def test_declared_regressor(models, tmp_path):
    """--regression on the one-score program: no accuracy, minun_predict returns 0 (no
    threshold in the C), --run compares the output integers and exits 0."""
    d = models["dir"]
    r = _cli(d / "score.sd", "--weights", d, "--train", d / "train.npy", "--test",
             d / "test.npy", "--out", tmp_path / "c", "--run", "--regression")
    assert r.returncode == 0, r.stderr
    # the test data's first column is then the values to predict: an error, no accuracy
    assert "mean absolute error vs the test targets" in r.stdout
    assert "(a regressor: no label)" in r.stdout and "float accuracy" not in r.stdout
    assert "output values equal to the evaluator's on 100 of 100 inputs" in r.stdout
    assert "(int32_t)0" in (tmp_path / "c" / "model.c").read_text()
    assert "? 1 : 0" not in (tmp_path / "c" / "model.c").read_text()


def test_regression_is_marked_only_on_regressors():
    from minun_mlir.driver import load_model

    linreg = load_model(ZOO / "linreg_diabetes.onnx")
    assert is_regression(linreg) and decision_threshold(linreg) is None  # no label
    assert is_regression(load_model(ZOO / "dtreg_diabetes.onnx"))
    assert not is_regression(load_model(ZOO / "logreg_breast_cancer.onnx"))


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("threshold", [0.0, 0.5])
def test_stored_threshold_on_every_stored_value(models, fmt, threshold):
    """For the output type of each format: a stored value is above the encoded threshold
    exactly when its decoded real is above the threshold, over every stored value (all
    2^8 or 2^16 patterns, keys and codes; float32: values around it)."""
    result = _compile(models, "prob.sd" if threshold else "score.sd", FORMATS[fmt])
    el = result.l2.body.block.first_op.function_type.outputs.data[0].element_type
    code, inclusive = stored_threshold(el, threshold)
    rep = formats.of_element(el)
    if fmt == "float32":
        values = np.float32(threshold) + np.arange(-64, 65, dtype=np.float32) * np.float32(1e-8)
        np.testing.assert_array_equal(values > code, values > threshold)
        return
    bits = 8 if fmt in ("fixed8", "posit8-es0", "zero-skew8") else 16
    stored = np.arange(-(1 << (bits - 1)), 1 << (bits - 1), dtype=np.int64)
    with np.errstate(invalid="ignore"):
        real = rep.decode(stored, el)
    ok = ~np.isnan(real)  # NaR, NaN: not compared (a bfloat16 NaN's key is above +inf's)
    above = stored >= code if inclusive else stored > code
    np.testing.assert_array_equal(above[ok], (real > threshold)[ok])
    assert (above.sum(), (~above).sum()) != (0, 0)


def test_onnx_test_data_with_one_expected_value(tmp_path):
    """An ONNX test-data folder whose output_0.pb is one probability is labelled p > 0.5
    (it was always 0)."""
    for k, p in enumerate([0.2, 0.7, 0.9]):
        d = tmp_path / f"test_data_set_{k}"
        d.mkdir()
        x = numpy_helper.from_array(np.full((1, 2), k, np.float32))
        (d / "input_0.pb").write_bytes(x.SerializeToString())
        out = numpy_helper.from_array(np.array([[p]], np.float32))
        (d / "output_0.pb").write_bytes(out.SerializeToString())
    data = load_dataset(tmp_path, (1, 2), 2, threshold=0.5)
    assert data.labels.tolist() == [0, 1, 1]


def test_hard_sigmoid_output_is_a_probability(models, tmp_path):
    """ONNX HardSigmoid (a clip to [0, 1]) ends a model as a probability too: the float
    accuracy is numpy's max(0, min(1, 0.2 s + 0.5)) > 0.5 one, and the C's labels are the
    evaluator's."""
    d = models["dir"]
    model = onnx.load(d / "prob.onnx")
    model.graph.node[2].CopyFrom(helper.make_node("HardSigmoid", ["s"], ["p"]))
    onnx.save(model, tmp_path / "hard.onnx")
    result = compile_model(tmp_path / "hard.onnx", Options(bits=16), train=d / "train.npy",
                           test=d / "test.npy", dims={"N": 1}, out_dir=tmp_path / "c")
    assert decision_threshold(result.l1) == decision_threshold(result.l2) == 0.5
    hard = np.clip(0.2 * models["score"] + 0.5, 0, 1)
    assert result.float_accuracy == pytest.approx(np.mean((hard > 0.5) == models["y"]))
    run = run_model(result.c_dir, "x86", storage_inputs(result.l2, result.test.features),
                    x86_repeat=1)
    np.testing.assert_array_equal(np.asarray(run.labels).reshape(-1), result.predictions)
