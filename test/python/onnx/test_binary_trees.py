"""The binary TreeEnsembleClassifier (XGBoost's and LightGBM's default export: weights for
class 0 only, one score s) against onnxruntime, on onnx.helper-built ensembles: with
mixed-sign weights onnxruntime labels s > 0, with every weight >= 0 it labels s > 0.5 (raw,
before the post_transform); its probabilities are [t(-s), t(s)] or [1 - t(s), t(s)] for
t = LOGISTIC or NONE. The float evaluator gives onnxruntime's probabilities and labels; the
fixed-point C's label (x86), the bit-exact evaluator's and the report's (compile_model's
predictions) are onnxruntime's on every input, inputs on the thresholds included. The
same failure class in a LinearClassifier: one coefficient row for two classes."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from minun_mlir.codegen import emit_c
from minun_mlir.diagnostics import MinunError
from minun_mlir.driver import Options, compile_model
from minun_mlir.frontends.onnx import import_model
from minun_mlir.numerics.float_eval import evaluate
from minun_mlir.numerics.l2_eval import evaluate_l2, storage_inputs
from minun_mlir.pipeline import lower_to_l2
from minun_mlir.targets import run_model

# two trees over two features: tree 0 splits x0 at 0.25 then x1 at -0.5; tree 1 splits x1
# at 0.75. Leaves 2, 3, 4 (tree 0) and 1, 2 (tree 1).
LEAVES = [(0, 2), (0, 3), (0, 4), (1, 1), (1, 2)]
WEIGHTS = {"mixed": [-0.4, 0.7, 0.35, -0.3, 0.55], "positive": [0.12, 0.3, 0.05, 0.15, 0.41]}  # no sum at 0 or 0.5



def _classifier_model(node, name: str):
    """A model of one ai.onnx.ml classifier node: x [N, 2] in, label and prob out."""
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 2])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, [None]),
         helper.make_tensor_value_info("prob", TensorProto.FLOAT, [None, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("ai.onnx.ml", 3)])
    model.ir_version = 8
    return model

def _model(weights, post: str, base=None, ids=0, mode="BRANCH_LEQ"):
    node = helper.make_node(
        "TreeEnsembleClassifier", ["x"], ["label", "prob"], domain="ai.onnx.ml",
        nodes_treeids=[0, 0, 0, 0, 0, 1, 1, 1], nodes_nodeids=[0, 1, 2, 3, 4, 0, 1, 2],
        nodes_featureids=[0, 1, 0, 0, 0, 1, 0, 0],
        nodes_modes=[mode, mode, "LEAF", "LEAF", "LEAF", mode, "LEAF", "LEAF"],
        nodes_values=[0.25, -0.5, 0, 0, 0, 0.75, 0, 0],
        nodes_truenodeids=[1, 2, 0, 0, 0, 1, 0, 0], nodes_falsenodeids=[4, 3, 0, 0, 0, 2, 0, 0],
        class_treeids=[t for t, _ in LEAVES], class_nodeids=[n for _, n in LEAVES],
        class_ids=[ids] * len(LEAVES), class_weights=list(weights),
        classlabels_int64s=[0, 1], post_transform=post,
        **({} if base is None else {"base_values": base}))
    return _classifier_model(node, "binary")


def _inputs() -> np.ndarray:
    """Random rows and rows exactly on the thresholds (x <= t is taken there)."""
    rng = np.random.default_rng(0)
    grid = np.array([[a, b] for a in (0.25, -1.0, 1.0) for b in (-0.5, 0.75, 0.0)])
    return np.concatenate([grid, rng.uniform(-2, 2, (40, 2))]).astype(np.float32)


def _ort(model, x):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    label, prob = sess.run(None, {"x": x})
    return label, prob


CASES = [(w, post, base) for w in WEIGHTS for post in ("NONE", "LOGISTIC")
         for base in (None, [0.1])]


@pytest.mark.parametrize("weights,post,base", CASES)
def test_float_evaluator_is_onnxruntime(weights, post, base):
    model = _model(WEIGHTS[weights], post, base)
    x = _inputs()
    want_label, want_prob = _ort(model, x)
    assert 0 < want_label.sum() < len(x)  # both classes occur
    for name, want in (("prob", want_prob), ("label", want_label)):
        l1 = import_model(model, outputs=[name])
        got = np.asarray(evaluate(l1, x[:, None]).outputs[0]).reshape(len(x), -1)
        np.testing.assert_allclose(got, want.reshape(len(x), -1), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("weights,post", [(w, p) for w in WEIGHTS
                                          for p in ("NONE", "LOGISTIC")])
def test_fixed_point_c_label_is_onnxruntimes(weights, post, tmp_path):
    """The label output at fixed16: the C on x86, the bit-exact evaluator, the report's
    predictions (compile_model on the stored rows) and onnxruntime agree on every row."""
    model = _model(WEIGHTS[weights], post, [0.1])
    x = _inputs()
    want, _ = _ort(model, x)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    data = tmp_path / "data.npz"
    np.savez(data, x=x, y=want)
    l2 = lower_to_l2(import_model(model, outputs=["label"]), bits=16, data=str(data))
    stored = np.asarray(evaluate_l2(l2, x[:, None]).outputs[0]).reshape(-1)
    np.testing.assert_array_equal(stored, want)
    emit_c(l2, "x86", tmp_path / "c")
    r = run_model(tmp_path / "c", "x86", storage_inputs(l2, x[:, None]), name="binary")
    np.testing.assert_array_equal(r.labels, want)
    result = compile_model(path, Options(bits=16), train=data, test=data)
    np.testing.assert_array_equal(result.predictions, want)
    assert result.accuracy == result.float_accuracy == 1.0


@pytest.mark.parametrize("kwargs,message", [
    ({"ids": 1}, "weights for class 1 only is not supported"),
    ({"base": [0.1, 0.2]}, "two base values is not supported"),
    ({"post": "SOFTMAX"}, "post_transform SOFTMAX is not supported for the binary form")])
def test_other_binary_forms_are_refused_with_the_node(kwargs, message):
    args = {"post": "LOGISTIC", **kwargs}
    model = _model(WEIGHTS["mixed"], args.pop("post"), **args)
    with pytest.raises(MinunError, match=message) as info:
        import_model(model, outputs=["prob"])
    assert "TreeEnsembleClassifier" in str(info.value) and "\n" not in str(info.value)


def _one_row_linear(post: str, intercept: float):
    node = helper.make_node(
        "LinearClassifier", ["x"], ["label", "prob"], domain="ai.onnx.ml",
        classlabels_ints=[0, 1], coefficients=[1.0, -1.0], intercepts=[intercept],
        post_transform=post)
    return _classifier_model(node, "linear")


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC"])
def test_one_row_linear_classifier_is_onnxruntime(post, tmp_path):
    """The same failure class in a LinearClassifier: two classes from one coefficient row
    (s = w.x + b; onnxruntime labels s > 0, probabilities [1 - t(s), t(s)]); rows with
    s = 0 exactly (x0 = x1 - 0.25) take class 0. Float probabilities and labels, and the
    fixed16 label of the x86 C, are onnxruntime's."""
    model = _one_row_linear(post, 0.25)
    x = np.concatenate([_inputs(), [[0.0, 0.25], [0.5, 0.75]]]).astype(np.float32)
    want_label, want_prob = _ort(model, x)
    for name, want in (("prob", want_prob), ("label", want_label)):
        l1 = import_model(model, outputs=[name])
        got = np.asarray(evaluate(l1, x[:, None]).outputs[0]).reshape(len(x), -1)
        np.testing.assert_allclose(got, want.reshape(len(x), -1), rtol=1e-6, atol=1e-6)
    data = tmp_path / "data.npz"
    np.savez(data, x=x, y=want_label)
    l2 = lower_to_l2(import_model(model, outputs=["label"]), bits=16, data=str(data))
    emit_c(l2, "x86", tmp_path / "c")
    r = run_model(tmp_path / "c", "x86", storage_inputs(l2, x[:, None]), name="linear")
    np.testing.assert_array_equal(r.labels, want_label)
