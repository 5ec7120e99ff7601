"""Writes the small ONNX models the lit tests import (deterministic: fixed seeds, fixed
opset and IR version). Run it from anywhere; it writes next to itself:

    .venv/bin/python test/lit/onnx/Inputs/make_models.py
"""

from __future__ import annotations

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17
IR_VERSION = 8


def init(name: str, array: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(array), name)


def model(nodes, inputs, outputs, initializers=(), opset: int = OPSET) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "test", inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="minun-mlir-tests")
    m.ir_version = IR_VERSION
    return m


def tensor(name: str, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def gemm_relu() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((3, 4)) * 0.5).astype(np.float32)  # [out, in]: transB=1
    b = np.array([0.5, -0.25, 0.125], dtype=np.float32)
    return model(
        [helper.make_node("Gemm", ["x", "W", "B"], ["h"], name="fc", transB=1),
         helper.make_node("Relu", ["h"], ["y"], name="relu")],
        [tensor("x", [1, 4])], [tensor("y", [1, 3])], [init("W", w), init("B", b)])


def gru() -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    hidden, features = 3, 2
    w = (rng.standard_normal((1, 3 * hidden, features)) * 0.5).astype(np.float32)
    r = (rng.standard_normal((1, 3 * hidden, hidden)) * 0.5).astype(np.float32)
    b = (rng.standard_normal((1, 6 * hidden)) * 0.1).astype(np.float32)
    return model(
        [helper.make_node("GRU", ["X", "W", "R", "B"], ["Y", "Y_h"], name="gru",
                          hidden_size=hidden)],
        [tensor("X", [4, 1, features])],
        [tensor("Y", [4, 1, 1, hidden]), tensor("Y_h", [1, 1, hidden])],
        [init("W", w), init("R", r), init("B", b)])


def conv_pool() -> onnx.ModelProto:
    """Conv -> Relu -> MaxPool -> Conv -> Flatten: NCHW model, NHWC IR."""
    rng = np.random.default_rng(2)
    w1 = (rng.standard_normal((4, 1, 3, 3)) * 0.3).astype(np.float32)
    b1 = (rng.standard_normal(4) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((2, 4, 3, 3)) * 0.3).astype(np.float32)
    return model(
        [helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
         helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                          strides=[2, 2]),
         helper.make_node("Conv", ["p1", "W2"], ["c2"], name="conv2", auto_pad="SAME_UPPER"),
         helper.make_node("Flatten", ["c2"], ["y"], name="flatten")],
        [tensor("x", [1, 1, 8, 8])], [tensor("y", [1, 32])],
        [init("W1", w1), init("B1", b1), init("W2", w2)])


def nhwc_conv() -> onnx.ModelProto:
    """A TensorFlow-style export: NHWC input, Transpose to NCHW, depthwise Conv, Relu,
    Transpose back. Every transpose is absorbed by the layout tracking."""
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((3, 1, 3, 3)) * 0.3).astype(np.float32)
    return model(
        [helper.make_node("Transpose", ["x"], ["x_nchw"], name="to_nchw", perm=[0, 3, 1, 2]),
         helper.make_node("Conv", ["x_nchw", "W"], ["c"], name="depthwise", group=3,
                          pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("Transpose", ["r"], ["y"], name="to_nhwc", perm=[0, 2, 3, 1])],
        [tensor("x", [1, 8, 8, 3])], [tensor("y", [1, 8, 8, 3])], [init("W", w)])


def shape_fold() -> onnx.ModelProto:
    """Flatten written the way exporters do: Shape -> Gather -> Unsqueeze -> Concat."""
    return model(
        [helper.make_node("Shape", ["x"], ["s"], name="shape"),
         helper.make_node("Gather", ["s", "zero"], ["n"], name="batch", axis=0),
         helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsq"),
         helper.make_node("Concat", ["n1", "minus1"], ["target"], name="cat", axis=0),
         helper.make_node("Reshape", ["x", "target"], ["r"], name="reshape"),
         helper.make_node("Sigmoid", ["r"], ["y"], name="sigmoid")],
        [tensor("x", [2, 3, 4])], [tensor("y", [2, 12])],
        [init("zero", np.array(0, dtype=np.int64)), init("axes", np.array([0], np.int64)),
         init("minus1", np.array([-1], dtype=np.int64))])


def qdq_matmul() -> onnx.ModelProto:
    """A pre-quantized (QDQ) MatMul + bias: scales that are powers of two, so that the
    zero-skew types and multipliers can be checked by hand."""
    w = np.array([[1, -2], [3, 4], [-5, 6], [7, -8]], dtype=np.int8)
    b = np.array([10, -20], dtype=np.int32)
    f, i8, i32 = np.float32, np.int8, np.int32
    inits = [init("sx", f(0.25)), init("zx", i8(-2)), init("W", w), init("sw", f(0.5)),
             init("zw", i8(0)), init("B", b), init("sb", f(0.125)), init("zb", i32(0)),
             init("sy", f(0.5)), init("zy", i8(3))]
    return model(
        [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"], name="qx"),
         helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"], name="dqx"),
         helper.make_node("DequantizeLinear", ["W", "sw", "zw"], ["Wd"], name="dqw"),
         helper.make_node("DequantizeLinear", ["B", "sb", "zb"], ["Bd"], name="dqb"),
         helper.make_node("MatMul", ["xd", "Wd"], ["p"], name="mm"),
         helper.make_node("Add", ["p", "Bd"], ["s"], name="add"),
         helper.make_node("QuantizeLinear", ["s", "sy", "zy"], ["sq"], name="qs"),
         helper.make_node("DequantizeLinear", ["sq", "sy", "zy"], ["y"], name="dqs")],
        [tensor("x", [1, 4])], [tensor("y", [1, 2])], inits, opset=13)


def unsupported() -> onnx.ModelProto:
    return model([helper.make_node("Sqrt", ["x"], ["y"], name="sqrt1")],
                 [tensor("x", [1, 4])], [tensor("y", [1, 4])])


def dynamic() -> onnx.ModelProto:
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [tensor("x", ["batch", 4])], [tensor("y", ["batch", 4])])


MODELS = {
    "gemm_relu.onnx": gemm_relu,
    "gru.onnx": gru,
    "conv_pool.onnx": conv_pool,
    "nhwc_conv.onnx": nhwc_conv,
    "shape_fold.onnx": shape_fold,
    "unsupported.onnx": unsupported,
    "dynamic.onnx": dynamic,
    "qdq_matmul.onnx": qdq_matmul,
}

# Not a protobuf ModelProto: a truncated header followed by text.
CORRUPT = b"\x08\x07\x12\xff\xff\xffthis is not an onnx model\n"


def write_all(folder: str = HERE) -> list[str]:
    paths = []
    for name, build in MODELS.items():
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(build().SerializeToString(deterministic=True))
        paths.append(path)
    path = os.path.join(folder, "corrupt.onnx")
    with open(path, "wb") as f:
        f.write(CORRUPT)
    paths.append(path)
    return paths


if __name__ == "__main__":
    for p in write_all(sys.argv[1] if len(sys.argv) > 1 else HERE):
        print(p)
