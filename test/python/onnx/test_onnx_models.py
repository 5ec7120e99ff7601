"""Real models from ../shared/data: the model zoo's mnist-8 and TFLM's sine regressor,
imported and run on the float evaluator against their stored outputs / onnx.reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

from minun_mlir.frontends.onnx import import_model
from minun_mlir.numerics.float_eval import evaluate

DATA = Path(__file__).resolve().parents[3] / "benchmarks" / "real"  # copy of ../shared/data
MNIST = DATA / "onnx-mnist-8"
SINE = DATA / "onnx-sine"


def read_tensor(path: Path) -> np.ndarray:
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(tensor)


def test_mnist_8_matches_stored_outputs_and_labels() -> None:
    module = import_model(MNIST / "model.onnx")
    sets = [MNIST / f"test_data_set_{i}" for i in range(3)]
    x = np.stack([read_tensor(s / "input_0.pb") for s in sets])  # (3, 1, 1, 28, 28)
    want = np.stack([read_tensor(s / "output_0.pb") for s in sets])
    got = evaluate(module, {"Input3": x}).outputs[0]
    assert got.shape == want.shape == (3, 1, 10)
    assert np.abs(got - want).max() <= 2e-3
    assert got.reshape(3, 10).argmax(axis=1).tolist() == [2, 0, 9]


def test_mnist_8_needs_no_extra_transposes() -> None:
    """One NCHW->NHWC transpose of the input; pooling output is flattened by the
    reshape's order, not by a transpose."""
    module = import_model(MNIST / "model.onnx")
    names = [op.name for op in module.walk()]
    assert names.count("minun.transpose") == 1
    assert names.count("minun.conv2d") == 2 and names.count("minun.bias_add") == 3


@pytest.mark.parametrize("batch", [1, 60])
def test_sine_matches_onnx_reference(batch: int) -> None:
    """The input has a symbolic batch dim N: fixed to 1 (one x per evaluator example) or
    to 60 (all x in one model call)."""
    model = onnx.load(str(SINE / "model.onnx"))
    xs = (np.arange(60) / 10).astype(np.float32).reshape(60, 1)  # 0.0, 0.1, ..., 5.9
    want = ReferenceEvaluator(model).run(None, {"dense_2_input": xs})[0]
    module = import_model(model, dims={"N": batch})
    got = evaluate(module, xs.reshape(60 // batch, batch, 1)).outputs[0].reshape(60, 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert np.abs(want - np.sin(xs)).max() < 0.2  # it is the sine model
