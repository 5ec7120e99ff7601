"""A regressor's test data holds the values to predict, not class labels: any reals (the
diabetes targets are 25..346, California's prices fractions). The report gives each
program's mean absolute error against them, checked here against onnxruntime's own
predictions; a one-output model read as a 2-class score says how to ask for a regressor
when its data's first column cannot be labels."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from cli_tools import tool as cli_tool

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
LINREG = ROOT / "test" / "zoo" / "sklearn" / "linreg_diabetes.onnx"  # a LinearRegressor
MLP = ROOT / "test" / "zoo" / "torch" / "mlp_ts.onnx"  # 10 class scores


def _onnxruntime(model: Path, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(str(model))
    name = sess.get_inputs()[0].name
    return np.concatenate([sess.run(None, {name: x[i:i + 1]})[0].reshape(-1)
                           for i in range(len(x))])


@pytest.mark.parametrize("bits", [16, 8])
def test_a_regressor_reports_its_error_against_real_targets(tmp_path, bits):
    x = np.load(ROOT / "test" / "zoo" / "sklearn" / "linreg_diabetes.npz")["x"]
    predicted = _onnxruntime(LINREG, x).astype(np.float64)
    rng = np.random.default_rng(3)
    targets = predicted + rng.normal(0, 30, len(x))  # reals, far from 0/1 labels
    np.savez(tmp_path / "test.npz", x=x, y=targets)
    report = tmp_path / "report.json"
    r = subprocess.run([cli_tool("minun-compile"), LINREG, "--train", tmp_path / "test.npz",
                        "--test", tmp_path / "test.npz", "--bits", str(bits), "--json",
                        report], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    error = json.loads(report.read_text())["target_error"]
    assert error["float_mae"] == pytest.approx(np.mean(np.abs(predicted - targets)),
                                               rel=1e-5)
    # the quantized program is within its own output error of float's
    assert abs(error["mae"] - error["float_mae"]) <= (1.0 if bits == 16 else 10.0)
    assert (f"mean absolute error vs the test targets: float {error['float_mae']:.4g}   "
            f"fixed{bits} {error['mae']:.4g}") in r.stdout


def test_a_one_score_network_with_value_targets_names_the_regression_flag(tmp_path):
    """A network with one output compiles as a binary classifier (score > 0); data whose
    first column is not 0/1 gets one line naming --regression, and with it the error."""
    import onnx
    from onnx import TensorProto, helper

    w = np.random.default_rng(0).normal(size=(4, 1)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1])],
        [onnx.numpy_helper.from_array(w, "w")])
    model = tmp_path / "value.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    x = np.random.default_rng(1).uniform(-1, 1, (20, 4)).astype(np.float32)
    np.savez(tmp_path / "d.npz", x=x, y=(x @ w).ravel() + 0.25)  # 0.25 off everywhere
    args = [cli_tool("minun-compile"), model, "--train", tmp_path / "d.npz", "--test",
            tmp_path / "d.npz"]
    r = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.count("error:") == 1
    assert "if the model predicts a value (a regressor), give --regression" in r.stderr
    r = subprocess.run([*args, "--regression"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "mean absolute error vs the test targets: float 0.25   fixed16 0.25" in r.stdout
