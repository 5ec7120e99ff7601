"""Zero-skew negation (num.neg) is exact: the result takes the complementary zero point
-1 - zp and the stored value becomes ~q. With the operand's own zero point a one-sided
range ([0, 6], a ReLU6's output) had no room for its negatives and saturated: ONNX Neg
and ReduceMin (-max(-x)) were off by up to 4 on that range. Checked against numpy's float
results within one quantization step, and the C (x86) against the evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from minun_mlir.codegen import emit_c
from minun_mlir.frontends.onnx import import_model
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2, storage_inputs
from minun_mlir.pipeline import lower_to_l2
from minun_mlir.targets import run_model

X = np.random.default_rng(0).uniform(0, 6, (40, 1, 4, 6)).astype(np.float32)


def _model(node):
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("node, want", [
    (helper.make_node("Neg", ["x"], ["y"]), lambda x: -x),
    (helper.make_node("ReduceMin", ["x"], ["y"], axes=[2], keepdims=0),
     lambda x: x.min(axis=2)),
])
def test_negation_of_a_one_sided_range_is_exact(node, want, tmp_path):
    data = tmp_path / "train.npz"
    np.savez(data, x=X[:, 0])
    l2 = lower_to_l2(import_model(_model(node)), repr="zero-skew", bits=8, data=str(data))
    assert "num.neg" in str(l2) and "127>>" in str(l2)  # -1 - (-128): the complement
    x = X.astype(np.float64)
    stored = evaluate_l2(l2, x).outputs
    got = np.asarray(decode_outputs(l2, stored)[0]).reshape(len(X), -1)
    step = 6 / 255  # the input's quantization step on [0, 6]
    np.testing.assert_allclose(got, want(X[:, 0]).reshape(len(X), -1), atol=1.01 * step)
    emit_c(l2, "x86", tmp_path / "c")
    run = run_model(tmp_path / "c", "x86", storage_inputs(l2, x[:5]))
    np.testing.assert_array_equal(np.asarray(run.outputs).reshape(5, -1),
                                  np.asarray(stored[0]).reshape(len(X), -1)[:5])
