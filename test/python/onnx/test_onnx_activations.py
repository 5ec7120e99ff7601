"""HardSigmoid, HardSwish, PRelu and Elu (compositions of L1 ops), and ReduceMean /
Gather / Split as PyTorch exports them, end to end: the float evaluator matches
onnx.reference, and the 16-bit program stays close to it, with the generated C equal to
the evaluator (the ONNX backend node tests check the float import of the general cases)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from minun_mlir import native
from minun_mlir.driver import load_model
from minun_mlir.numerics.float_eval import evaluate
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2
from minun_mlir.pipeline import lower_to_l2


def activations_model(path):
    rng = np.random.default_rng(0)
    w = rng.normal(size=(8, 6)).astype(np.float32)
    slope = rng.uniform(0.05, 0.3, size=(6,)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"]),
             helper.make_node("HardSwish", ["h"], ["a"]),
             helper.make_node("PRelu", ["a", "slope"], ["b"]),
             helper.make_node("Elu", ["b"], ["c"], alpha=0.7),
             helper.make_node("HardSigmoid", ["c"], ["y"], alpha=0.3, beta=0.4)]
    graph = helper.make_graph(
        nodes, "acts", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6])],
        [helper.make_tensor("W", TensorProto.FLOAT, w.shape, w.ravel()),
         helper.make_tensor("slope", TensorProto.FLOAT, slope.shape, slope)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    onnx.save(model, path)
    return model


def check_against_reference(tmp_path, model, name: str, x: np.ndarray) -> None:
    """Float within 1e-5 of onnx.reference, fixed16 within 0.01, C == evaluator."""
    ref = ReferenceEvaluator(model)
    expected = np.stack([ref.run(None, {name: row})[0] for row in x])
    l1 = load_model(tmp_path / "model.onnx")
    assert np.max(np.abs(evaluate(l1, x).outputs[0] - expected)) < 1e-5
    n = len(x)
    np.save(tmp_path / "train.npy", np.concatenate([np.zeros((n, 1)), x.reshape(n, -1)], 1))
    l2 = lower_to_l2(l1, bits=16, data=str(tmp_path / "train.npy"), evaluator="numpy")
    stored = evaluate_l2(l2, x).outputs
    assert np.max(np.abs(decode_outputs(l2, stored)[0] - expected)) < 0.01
    assert np.array_equal(native.NativeProgram(l2).outputs(x)[0], stored[0])


def test_activations_match_onnx_reference_in_float_and_fixed16(tmp_path):
    model = activations_model(tmp_path / "model.onnx")
    x = np.random.default_rng(1).uniform(-3, 3, size=(64, 1, 8)).astype(np.float32)
    check_against_reference(tmp_path, model, "x", x)


def pooled_model(path):
    """Conv -> Relu -> ReduceMean over H, W (adaptive average pooling) -> Split in two ->
    Add -> Unsqueeze/Gather of the last row (PyTorch's h[-1])."""
    rng = np.random.default_rng(2)
    w = rng.normal(size=(8, 3, 3, 3)).astype(np.float32) * 0.5
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("ReduceMean", ["r"], ["m"], axes=[2, 3], keepdims=0),
             helper.make_node("Split", ["m", "parts"], ["a", "b"], axis=1),
             helper.make_node("Add", ["a", "b"], ["s"]),
             helper.make_node("Reshape", ["s", "shape"], ["s2"]),
             helper.make_node("Gather", ["s2", "last"], ["y"], axis=0)]
    graph = helper.make_graph(
        nodes, "pooled", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [helper.make_tensor("W", TensorProto.FLOAT, w.shape, w.ravel()),
         helper.make_tensor("parts", TensorProto.INT64, [2], [4, 4]),
         helper.make_tensor("shape", TensorProto.INT64, [2], [2, 2]),
         helper.make_tensor("last", TensorProto.INT64, [], [-1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, path)
    return model


def test_reduce_mean_split_and_gather_match_onnx_reference(tmp_path):
    model = pooled_model(tmp_path / "model.onnx")
    x = np.random.default_rng(3).uniform(-1, 1, size=(32, 1, 3, 6, 6)).astype(np.float32)
    check_against_reference(tmp_path, model, "x", x)
