"""Export the trained LeNet models to ONNX (opset 13, NCHW), built with onnx.helper.

No PyTorch exporter: the graph is written node by node from the .npy weights, so the bytes are
deterministic. It uses the operators of the model zoo's mnist-8 (Conv, Add, Relu, MaxPool,
Reshape, MatMul), with batch 1:
    input [1, 1, 8, 8] -> Conv(3x3, pads 1) -> Add(bias [C,1,1]) -> Relu -> MaxPool(2x2, s2)
    -> (same again) -> Reshape [1, 4*C2] -> MatMul -> Add -> Relu -> MatMul -> Add -> scores
The SeeDot program flattens NHWC (h, w, c) and ONNX flattens NCHW (c, h, w), so the rows of
the first FC matrix are permuted here; the function is the same. Each export is checked with
onnx.checker and against the numpy reference through onnx.reference.ReferenceEvaluator.

Usage: python tools/train/export_onnx.py   (numpy + onnx; either venv)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "test" / "python"))
import reference_models as ref  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "benchmarks" / "models"
ONNX_MODELS = ("lenet-digits10", "lenet-digits-binary")
OPSET = 13
IR_VERSION = 8


def lenet_onnx(params: dict[str, np.ndarray], name: str) -> onnx.ModelProto:
    CF1, CF2 = params["CF1"], params["CF2"]
    c1, c2 = CF1.shape[-1], CF2.shape[-1]
    FW1, FW2 = params["FW1"], params["FW2"]
    hidden, L = FW1.shape[1], FW2.shape[1]
    # NHWC flatten index (h*2 + w)*c2 + c  ->  NCHW flatten index c*4 + h*2 + w
    perm = np.array([(h * 2 + w) * c2 + c for c in range(c2) for h in range(2) for w in range(2)])

    def t(name: str, a: np.ndarray) -> TensorProto:
        return numpy_helper.from_array(np.ascontiguousarray(a), name)

    inits = [
        t("conv1_w", CF1[0].transpose(3, 2, 0, 1).astype(np.float32)),  # [Cout, Cin, kh, kw]
        t("conv1_b", params["CB1"].reshape(c1, 1, 1).astype(np.float32)),
        t("conv2_w", CF2[0].transpose(3, 2, 0, 1).astype(np.float32)),
        t("conv2_b", params["CB2"].reshape(c2, 1, 1).astype(np.float32)),
        t("flat_shape", np.array([1, 4 * c2], dtype=np.int64)),
        t("fc1_w", FW1[perm].astype(np.float32)),
        t("fc1_b", params["FB1"].reshape(hidden).astype(np.float32)),
        t("fc2_w", FW2.astype(np.float32)),
        t("fc2_b", params["FB2"].reshape(L).astype(np.float32)),
    ]
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1], dilations=[1, 1], group=1)
    pool = dict(kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0])
    nodes = [
        helper.make_node("Conv", ["input", "conv1_w"], ["conv1"], name="conv1", **conv),
        helper.make_node("Add", ["conv1", "conv1_b"], ["conv1_biased"], name="conv1_bias"),
        helper.make_node("Relu", ["conv1_biased"], ["relu1"], name="relu1"),
        helper.make_node("MaxPool", ["relu1"], ["pool1"], name="pool1", **pool),
        helper.make_node("Conv", ["pool1", "conv2_w"], ["conv2"], name="conv2", **conv),
        helper.make_node("Add", ["conv2", "conv2_b"], ["conv2_biased"], name="conv2_bias"),
        helper.make_node("Relu", ["conv2_biased"], ["relu2"], name="relu2"),
        helper.make_node("MaxPool", ["relu2"], ["pool2"], name="pool2", **pool),
        helper.make_node("Reshape", ["pool2", "flat_shape"], ["flat"], name="flatten"),
        helper.make_node("MatMul", ["flat", "fc1_w"], ["fc1"], name="fc1"),
        helper.make_node("Add", ["fc1", "fc1_b"], ["fc1_biased"], name="fc1_bias"),
        helper.make_node("Relu", ["fc1_biased"], ["relu3"], name="relu3"),
        helper.make_node("MatMul", ["relu3", "fc2_w"], ["fc2"], name="fc2"),
        helper.make_node("Add", ["fc2", "fc2_b"], ["scores"], name="fc2_bias"),
    ]
    graph = helper.make_graph(
        nodes,
        name.replace("-", "_"),
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 1, 8, 8])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, L])],
        initializer=inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="minun-mlir tools/train/export_onnx.py",
        producer_version="1",
        doc_string=f"{name}: LeNet-style CNN from benchmarks/models/{name} (NCHW, batch 1)",
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


def check(model: onnx.ModelProto, params: dict[str, np.ndarray], X: np.ndarray) -> float:
    """Largest |ONNX - numpy reference| over the inputs X [N, 64]."""
    from onnx.reference import ReferenceEvaluator

    sess = ReferenceEvaluator(model)
    expect = ref.lenet(params, X)
    worst = 0.0
    for i in range(X.shape[0]):
        (got,) = sess.run(None, {"input": X[i].reshape(1, 1, 8, 8).astype(np.float32)})
        worst = max(worst, float(np.abs(got[0] - expect[i]).max()))
    return worst


def main() -> None:
    for name in ONNX_MODELS:
        d = MODELS / name
        params = ref.load_params(d)
        model = lenet_onnx(params, name)
        (d / "model.onnx").write_bytes(model.SerializeToString())
        X, _ = ref.load_dataset(d / "test.npy")
        print(f"{name}/model.onnx: max |onnx - reference| on test = {check(model, params, X):.2e}")


if __name__ == "__main__":
    main()
