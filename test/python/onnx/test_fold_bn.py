"""BatchNormalization folded into the Conv, Gemm or MatMul + Add before it at import
(frontends/onnx/fold_bn.py): the folded float program equals onnxruntime's (which runs the
unfolded graph) and has no minun.batchnorm; a batch norm that cannot fold is kept."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from minun_mlir.frontends.onnx import import_model
from minun_mlir.frontends.onnx.fold_bn import fold_batchnorm
from minun_mlir.numerics.float_eval import evaluate

ROOT = Path(__file__).resolve().parents[3]
RNG = np.random.default_rng(7)


def ort_run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    options = ort.SessionOptions()
    # the unfolded graph, as written: no optimizer folding on ORT's side either
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(model.SerializeToString(), options,
                             providers=["CPUExecutionProvider"])
    name = s.get_inputs()[0].name
    return np.stack([s.run(None, {name: row[None]})[0][0] for row in x])


def minun_run(model: onnx.ModelProto, x: np.ndarray) -> tuple[np.ndarray, list[str]]:
    module = import_model(model)
    names = [op.name for op in module.walk() if op.name.startswith("minun.")]
    return evaluate(module, x[:, None]).outputs[0][:, 0], names


def bn_inits(c: int) -> dict[str, np.ndarray]:
    return {"s": RNG.normal(size=c), "b": RNG.normal(size=c), "m": RNG.normal(size=c),
            "v": RNG.uniform(0.1, 2.0, size=c)}


def make(nodes, x_shape, y_shape, inits) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
        [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


BN = helper.make_node("BatchNormalization", ["p", "s", "b", "m", "v"], ["n"], epsilon=1e-3)
RELU = helper.make_node("Relu", ["n"], ["y"])

CASES = {
    "conv": ([helper.make_node("Conv", ["x", "w", "cb"], ["p"], pads=[1, 1, 1, 1])],
             [1, 2, 5, 5], [1, 4, 5, 5], {"w": RNG.normal(size=(4, 2, 3, 3)),
                                          "cb": RNG.normal(size=4)}),
    "conv without bias, depthwise": (
        [helper.make_node("Conv", ["x", "w"], ["p"], group=2)],
        [1, 2, 5, 5], [1, 2, 3, 3], {"w": RNG.normal(size=(2, 1, 3, 3))}),
    "gemm transB with beta": (
        [helper.make_node("Gemm", ["x", "w", "cb"], ["p"], transB=1, alpha=0.5, beta=2.0)],
        [1, 6], [1, 4], {"w": RNG.normal(size=(4, 6)), "cb": RNG.normal(size=4)}),
    "gemm without bias": ([helper.make_node("Gemm", ["x", "w"], ["p"])],
                          [1, 6], [1, 4], {"w": RNG.normal(size=(6, 4))}),
    "matmul + add": ([helper.make_node("MatMul", ["x", "w"], ["q"]),
                      helper.make_node("Add", ["cb", "q"], ["p"])],
                     [1, 6], [1, 4], {"w": RNG.normal(size=(6, 4)),
                                      "cb": RNG.normal(size=(1, 4))}),
}


@pytest.mark.parametrize("case", CASES)
def test_folded_equals_onnxruntime(case: str) -> None:
    nodes, x_shape, y_shape, inits = CASES[case]
    c = y_shape[1]
    model = make([*nodes, BN, RELU], x_shape, y_shape, {**inits, **bn_inits(c)})
    folded = fold_batchnorm(model)
    assert [n.op_type for n in folded.graph.node] == [n.op_type for n in nodes] + ["Relu"]
    x = RNG.normal(size=(8, *x_shape[1:])).astype(np.float32)
    got, names = minun_run(model, x)
    assert "minun.batchnorm" not in names
    np.testing.assert_allclose(got, ort_run(model, x), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ort_run(folded, x), ort_run(model, x), rtol=1e-4, atol=1e-5)


def test_batchnorm_read_elsewhere_is_kept() -> None:
    """The conv's output is also a graph output: folding would change it."""
    nodes, x_shape, y_shape, inits = CASES["conv"]
    model = make([*nodes, BN, RELU], x_shape, y_shape, {**inits, **bn_inits(4)})
    model.graph.output.append(helper.make_tensor_value_info("p", TensorProto.FLOAT, y_shape))
    assert fold_batchnorm(model).graph.node[1].op_type == "BatchNormalization"
    module = import_model(model)
    assert any(op.name == "minun.batchnorm" for op in module.walk())


def test_matmul_without_add_is_kept() -> None:
    model = make([helper.make_node("MatMul", ["x", "w"], ["p"]), BN, RELU], [1, 6], [1, 4],
                 {"w": RNG.normal(size=(6, 4)), **bn_inits(4)})
    assert [n.op_type for n in fold_batchnorm(model).graph.node] == [
        "MatMul", "BatchNormalization", "Relu"]


def test_zoo_mlp_bn_folded_equals_onnxruntime() -> None:
    """The zoo's TorchScript export keeps Gemm -> BatchNormalization -> Relu -> Gemm."""
    path = ROOT / "test/zoo/torch/mlp_bn_ts.onnx"
    model = onnx.load(path)
    assert "BatchNormalization" in [n.op_type for n in model.graph.node]
    assert [n.op_type for n in fold_batchnorm(model).graph.node] == ["Gemm", "Relu", "Gemm"]
    x = np.load(ROOT / "test/zoo/torch/mlp_bn.npz")["x"].astype(np.float32)
    module = import_model(path)
    assert not any(op.name == "minun.batchnorm" for op in module.walk())
    got = evaluate(module, x.reshape(len(x), 1, -1)).outputs[0]
    np.testing.assert_allclose(got, ort_run(model, x).reshape(got.shape), rtol=1e-4,
                               atol=1e-5)



def test_batchnorm_input_read_by_a_subgraph_is_kept() -> None:
    """An If branch reading the conv's output by name (outer scope) is a reader too."""
    nodes, x_shape, y_shape, inits = CASES["conv"]
    branch = helper.make_graph([helper.make_node("Identity", ["p"], ["o"])], "b", [],
                               [helper.make_tensor_value_info("o", TensorProto.FLOAT, None)])
    cond = helper.make_node("If", ["c"], ["z"], then_branch=branch, else_branch=branch)
    model = make([*nodes, BN, RELU, cond], x_shape, y_shape,
                 {**inits, **bn_inits(4), "c": np.array(True)})
    assert "BatchNormalization" in [n.op_type for n in fold_batchnorm(model).graph.node]
