"""Property test of the layout bookkeeping: random chains of layout-changing ONNX ops
(Transpose, Conv/pool forcing NHWC, broadcasting with constants and with values in other
layouts, per-axis Softmax, Flatten/Reshape, Concat, Squeeze/Unsqueeze) import and match
onnx.reference exactly up to float rounding."""

from __future__ import annotations

import numpy as np
import onnx
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from minun_mlir.frontends.onnx import import_model
from minun_mlir.numerics.float_eval import evaluate


class Chain:
    """Builds a graph one node at a time, tracking each value's ONNX shape."""

    def __init__(self, shape: tuple[int, ...]):
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.shapes = {"x": shape}
        self.rng = np.random.default_rng(len(shape))

    def add(self, op: str, inputs: list[str], shape: tuple[int, ...], **attrs) -> str:
        name = f"v{len(self.nodes)}"
        self.nodes.append(helper.make_node(op, inputs, [name], **attrs))
        self.shapes[name] = shape
        return name

    def const(self, array: np.ndarray) -> str:
        name = f"c{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(array.astype(array.dtype), name))
        return name

    def model(self, outputs: list[str]) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes, "chain",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, self.shapes["x"])],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
            self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        return m


def step(data, chain: Chain, values: list[str]) -> str:
    cur = values[-1]
    shape = chain.shapes[cur]
    rank = len(shape)
    choice = data.draw(st.sampled_from(
        ["transpose", "unary", "add_const", "binary", "softmax", "flatten", "concat",
         "unsqueeze_squeeze"] + (["conv", "pool"] if rank == 4 else [])))
    if choice == "transpose":
        perm = data.draw(st.permutations(range(rank)))
        return chain.add("Transpose", [cur], tuple(shape[p] for p in perm), perm=list(perm))
    if choice == "unary":
        return chain.add(data.draw(st.sampled_from(["Relu", "Sigmoid", "Tanh"])), [cur], shape)
    if choice == "add_const":
        k = data.draw(st.integers(0, rank))
        cshape = tuple(d if data.draw(st.booleans()) else 1 for d in shape[rank - k:])
        c = chain.const(chain.rng.standard_normal(cshape).astype(np.float32))
        op = data.draw(st.sampled_from(["Add", "Sub", "Mul"]))
        ins = [c, cur] if data.draw(st.booleans()) else [cur, c]
        return chain.add(op, ins, shape)
    if choice == "binary":  # two run-time values, possibly in different IR layouts
        same = [v for v in values if chain.shapes[v] == shape]
        other = data.draw(st.sampled_from(same))
        return chain.add(data.draw(st.sampled_from(["Add", "Mul", "Sub"])), [cur, other], shape)
    if choice == "softmax":
        return chain.add("Softmax", [cur], shape, axis=data.draw(st.integers(-rank, rank - 1)))
    if choice == "flatten":  # and back, so later steps keep the rank
        axis = data.draw(st.integers(0, rank))
        flat = (int(np.prod(shape[:axis])), int(np.prod(shape[axis:])))
        f = chain.add("Flatten", [cur], flat, axis=axis)
        return chain.add("Reshape", [f, chain.const(np.array(shape, dtype=np.int64))], shape)
    if choice == "concat":
        axis = data.draw(st.integers(0, rank - 1))
        if shape[axis] > 3:
            return cur
        out = tuple(d * 2 if i == axis else d for i, d in enumerate(shape))
        return chain.add("Concat", [cur, cur], out, axis=axis)
    if choice == "unsqueeze_squeeze":
        axis = data.draw(st.integers(0, rank))
        u = chain.add("Unsqueeze", [cur, chain.const(np.array([axis]))],
                      shape[:axis] + (1,) + shape[axis:])
        return chain.add("Squeeze", [u, chain.const(np.array([axis]))], shape)
    if choice == "conv":
        c_out = data.draw(st.integers(1, 3))
        w = chain.const(chain.rng.standard_normal((c_out, shape[1], 3, 3)).astype(np.float32))
        return chain.add("Conv", [cur, w], (shape[0], c_out, *shape[2:]), pads=[1, 1, 1, 1])
    return chain.add("MaxPool", [cur], shape, kernel_shape=[1, 2], pads=[0, 0, 0, 1])


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.data())
def test_random_layout_chains_match_onnx_reference(data) -> None:
    shape = tuple(data.draw(st.lists(st.integers(1, 3), min_size=4, max_size=4)))
    chain = Chain(shape)
    values = ["x"]
    for _ in range(data.draw(st.integers(1, 8))):
        values.append(step(data, chain, values))
    outputs = [values[-1]] + ([values[len(values) // 2]] if len(values) > 2 else [])
    outputs = list(dict.fromkeys(v for v in outputs if v != "x")) or [values[-1]]
    if outputs == ["x"]:
        return
    model = chain.model(outputs)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})
    got = evaluate(import_model(model), x[None]).outputs
    for g, w in zip(got, want):
        assert g[0].shape == w.shape
        np.testing.assert_allclose(g[0], w, rtol=1e-4, atol=1e-5)
