"""uint8 graph inputs and outputs (issue 32: onnxruntime's QUInt8 activations, TFLite's
uint8 input and output tensors): a uint8 tensor is computed as the int8 u - 128 with its
zero point - 128 (the same reals), so zero-skew's integers are onnxruntime's uint8 ones
minus 128, checked here; minun_predict takes them as u - 128, and minun_predict_uint8
takes onnxruntime's uint8 inputs as they are and gives its outputs (uint8, or int8)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from minun_mlir.codegen import emit_c
from minun_mlir.frontends.onnx import import_model
from minun_mlir.numerics.float_eval import evaluate
from minun_mlir.numerics.l2_eval import evaluate_l2, storage_inputs
from minun_mlir.pipeline import lower_to_l2

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))
from codegen_support import build_host, run_host  # noqa: E402

SX, ZX = np.float32(0.02), 131  # the input's (uint8) quantization
SY, ZY = np.float32(0.04), 97  # the output's


def _c(name: str, value, dtype):
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def uint8_model(out_type: int) -> object:
    """uint8 X [1, 12] -> DequantizeLinear -> MatMul (int8 weights) + bias -> Relu ->
    QuantizeLinear with an output zero point of `out_type` (UINT8 or INT8) -> Y."""
    rng = np.random.default_rng(3)
    zy = ZY if out_type == TensorProto.UINT8 else ZY - 128
    ydt = np.uint8 if out_type == TensorProto.UINT8 else np.int8
    inits = [_c("x_s", SX, np.float32), _c("x_z", ZX, np.uint8),
             _c("W", rng.integers(-127, 128, (12, 5)), np.int8), _c("w_s", 0.01, np.float32),
             _c("w_z", 0, np.int8), _c("B", rng.uniform(-0.5, 0.5, 5), np.float32),
             _c("y_s", SY, np.float32), _c("y_z", zy, ydt)]
    nodes = [helper.make_node("DequantizeLinear", ["X", "x_s", "x_z"], ["xf"]),
             helper.make_node("DequantizeLinear", ["W", "w_s", "w_z"], ["wf"]),
             helper.make_node("MatMul", ["xf", "wf"], ["m"]),
             helper.make_node("Add", ["m", "B"], ["a"]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "y_s", "y_z"], ["Y"])]
    graph = helper.make_graph(
        nodes, "u8", [helper.make_tensor_value_info("X", TensorProto.UINT8, (1, 12))],
        [helper.make_tensor_value_info("Y", out_type, (1, 5))], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("out_type", [TensorProto.UINT8, TensorProto.INT8])
def test_uint8_input_equals_onnxruntime(out_type, tmp_path):
    model = uint8_model(out_type)
    u = np.random.default_rng(0).integers(0, 256, (200, 1, 12)).astype(np.uint8)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    theirs = np.stack([sess.run(["Y"], {"X": ui})[0] for ui in u]).astype(np.int64)
    x = (SX * (u.astype(np.float32) - ZX)).astype(np.float64)
    l1 = import_model(model)
    l2 = lower_to_l2(l1, repr="zero-skew", bits=8)
    # the C's input: the uint8 integers - 128, exactly
    np.testing.assert_array_equal(storage_inputs(l2, x).reshape(u.shape),
                                  u.astype(np.int64) - 128)
    ours = np.asarray(evaluate_l2(l2, x).outputs[0]).reshape(theirs.shape).astype(np.int64)
    shift = 128 if out_type == TensorProto.UINT8 else 0
    np.testing.assert_array_equal(ours + shift, theirs)
    assert len(np.unique(theirs)) > 20
    zy = ZY if out_type == TensorProto.UINT8 else ZY - 128
    got = np.asarray(evaluate(l1, x).outputs[0]).reshape(theirs.shape)
    assert np.max(np.abs(got - float(SY) * (theirs - zy))) <= 0.51 * float(SY)
    emit_c(l2, "x86", tmp_path / "c")
    exe = build_host(tmp_path / "c", tmp_path / "host")
    odt = np.uint8 if out_type == TensorProto.UINT8 else np.int8
    _, c_out = run_host(exe, u.reshape(len(u), -1), np.dtype(odt), 5, uint8=True)
    np.testing.assert_array_equal(c_out, theirs.reshape(len(u), -1))
