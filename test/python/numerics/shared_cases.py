"""A one-layer ONNX model for the numerics tests: `x @ W + b` (ONNX's order), or
`W @ x + b` with `weight_first` (SeeDot's order; then b is (C, 1) and x a column)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def dense_model(w: np.ndarray, b: np.ndarray, weight_first: bool = False):
    if weight_first:  # W (C, K) @ x (K, 1)
        inputs, shapes = ["W", "X"], ((w.shape[1], 1), (w.shape[0], 1))
    else:  # x (1, K) @ W (K, C)
        inputs, shapes = ["X", "W"], ((1, w.shape[0]), (1, w.shape[1]))
    graph = helper.make_graph(
        [helper.make_node("MatMul", inputs, ["XW"]),
         helper.make_node("Add", ["XW", "B"], ["Y"])], "dense",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, shapes[0])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, shapes[1])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
