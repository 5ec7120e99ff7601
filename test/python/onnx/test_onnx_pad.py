"""ONNX Pad against onnxruntime: every mode (constant, edge, reflect, wrap), positive and
negative (cropping) pads, pads as an attribute (opset < 11), as an input (11+) and with
axes (18+); and a model with a Pad before a pooling (what PyTorch's TorchScript exporter
writes for AvgPool2d's padding at opset 9) compiles with its C equal to the evaluator.
Pad is data movement: exact in every format."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from minun_mlir.codegen import emit_c
from minun_mlir.diagnostics import MinunError
from minun_mlir.frontends.onnx import import_model
from minun_mlir.numerics.float_eval import evaluate
from minun_mlir.numerics.l2_eval import evaluate_l2, storage_inputs
from minun_mlir.pipeline import lower_to_l2
from minun_mlir.targets import run_model

X = np.random.default_rng(0).standard_normal((3, 1, 2, 4, 5)).astype(np.float32)


def _model(opset: int, mode: str, pads: list[int], axes: list[int] | None = None,
           value: float = 0.5):
    if opset < 11:
        node = helper.make_node("Pad", ["x"], ["y"], mode=mode, pads=pads, value=value)
        inits = []
    else:
        names = ["x", "p", "c"] + (["a"] if axes is not None else [])
        node = helper.make_node("Pad", names, ["y"], mode=mode)
        inits = [numpy_helper.from_array(np.array(pads, np.int64), "p"),
                 numpy_helper.from_array(np.array(value, np.float32), "c")]
        if axes is not None:
            inits.append(numpy_helper.from_array(np.array(axes, np.int64), "a"))
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _onnxruntime(model) -> np.ndarray:
    sess = ort.InferenceSession(model.SerializeToString())
    return np.stack([sess.run(None, {"x": x})[0] for x in X])


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
@pytest.mark.parametrize("pads", [[0, 0, 1, 2, 0, 0, 2, 1], [0, 1, -1, 1, 0, 0, 1, -2],
                                  [0, 0, 0, 3, 0, 0, 0, 0]])
def test_pad_equals_onnxruntime(mode, pads):
    model = _model(19, mode, pads)
    got = np.asarray(evaluate(import_model(model), X).outputs[0])
    want = _onnxruntime(model)
    np.testing.assert_array_equal(got.reshape(want.shape), want)


@pytest.mark.parametrize("opset, axes", [(9, None), (13, None), (18, [-1, 2])])
def test_pad_in_each_opset_form(opset, axes):
    pads = [0, 0, 1, 2, 0, 0, 2, 1] if axes is None else [1, 2, 2, 1]
    model = _model(opset, "constant", pads, axes)
    got = np.asarray(evaluate(import_model(model), X).outputs[0])
    want = _onnxruntime(model)
    np.testing.assert_array_equal(got.reshape(want.shape), want)


def test_reflect_wider_than_the_axis_is_one_line():
    with pytest.raises(MinunError, match="reflect pads of 4 on an axis of 4"):
        import_model(_model(19, "reflect", [0, 0, 4, 0, 0, 0, 0, 0]))


@pytest.mark.parametrize("bits", [16, 8])
def test_pad_then_average_pool_compiles_and_its_c_equals_the_evaluator(bits, tmp_path):
    pad = helper.make_node("Pad", ["x"], ["p"], mode="constant", pads=[0, 0, 1, 1, 0, 0, 1, 1])
    pool = helper.make_node("AveragePool", ["p"], ["y"], kernel_shape=[3, 3], strides=[2, 2])
    graph = helper.make_graph(
        [pad, pool], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 8
    l1 = import_model(model)
    want = _onnxruntime(model)
    got = np.asarray(evaluate(l1, X).outputs[0])
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-6, atol=1e-6)
    data = tmp_path / "train.npz"
    np.savez(data, x=X)
    l2 = lower_to_l2(l1, bits=bits, data=str(data))
    emit_c(l2, "x86", tmp_path / "c")
    stored = storage_inputs(l2, X.astype(np.float64))
    run = run_model(tmp_path / "c", "x86", stored)
    np.testing.assert_array_equal(np.asarray(run.outputs).reshape(len(X), -1),
                                  np.asarray(evaluate_l2(l2, X.astype(np.float64)).outputs[0])
                                  .reshape(len(X), -1))
