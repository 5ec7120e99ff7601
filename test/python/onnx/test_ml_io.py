"""The graph inputs and outputs of ai.onnx.ml models as producers declare them: a fixed
batch of B > 1 rows read only by one-example operators compiles one row with a warning
(onnxruntime's datasets/logreg_iris.onnx declares 3), and an output declared with unknown
dims that differ from the computed shape only by axes of 1 takes the declared shape
(CatBoost's regressor declares [N] for [N, 1]); other mismatches stay errors. Each
against onnxruntime."""

from __future__ import annotations

import warnings

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from minun_mlir.diagnostics import MinunError
from minun_mlir.frontends.onnx import import_model
from minun_mlir.numerics.float_eval import evaluate


def _model(node, x_shape, outputs):
    graph = helper.make_graph([node], "m", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, x_shape)], outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("ai.onnx.ml", 3)])
    model.ir_version = 8
    return model


def _regressor(out_shape):
    node = helper.make_node(
        "TreeEnsembleRegressor", ["x"], ["y"], domain="ai.onnx.ml", n_targets=1,
        nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[1, 0, 0],
        nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"], nodes_values=[0.5, 0, 0],
        nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0],
        target_treeids=[0, 0], target_nodeids=[1, 2], target_ids=[0, 0],
        target_weights=[-1.25, 3.5])
    return _model(node, ["N", 2], [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                                 out_shape)])


def _ort(model, x):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})


def test_output_declared_without_its_axis_of_one_takes_the_declared_shape():
    model = _regressor(["N"])
    x = np.array([[0.0, 0.2], [0.0, 0.9]], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the batch compiles as 1
        l1 = import_model(model)
    ret = next(op for op in l1.walk() if op.name == "func.return")
    assert tuple(ret.operands[0].type.get_shape()) == (1,)  # the declared rank
    got = np.stack([np.asarray(evaluate(l1, x[i:i + 1][None]).outputs[0]) for i in range(2)])
    np.testing.assert_array_equal(got.reshape(-1), _ort(model, x)[0].reshape(-1))


def test_a_real_output_mismatch_is_still_an_error():
    with pytest.raises(MinunError, match="declares shape 2, the importer computed 1x1"):
        import_model(_regressor([2]))


def test_a_fixed_batch_read_by_a_classifier_compiles_one_row():
    node = helper.make_node(
        "LinearClassifier", ["x"], ["label", "scores"], domain="ai.onnx.ml",
        classlabels_ints=[0, 1, 2], coefficients=[1.0, -2.0, 0.5, 0.25, -1.0, 1.5],
        intercepts=[0.1, -0.2, 0.0], post_transform="LOGISTIC")
    model = _model(node, [3, 2], [
        helper.make_tensor_value_info("label", TensorProto.INT64, [3]),
        helper.make_tensor_value_info("scores", TensorProto.FLOAT, [3, 3])])
    rows = np.array([[0.5, -1.0], [-0.3, 0.8], [1.2, 0.4]], np.float32)
    labels, scores = _ort(model, rows)
    with pytest.warns(UserWarning, match=r"a fixed batch of 3; compiled for a batch of 1 "
                      r"\(all 3 rows: `--dim batch=3`\)"):
        l1 = import_model(model, outputs=["scores"])
    for i in range(3):
        got = np.asarray(evaluate(l1, rows[i:i + 1][None]).outputs[0]).reshape(-1)
        np.testing.assert_allclose(got, scores[i], rtol=1e-6)
    l1 = import_model(model, outputs=["label"])
    got = [int(np.asarray(evaluate(l1, rows[i:i + 1][None]).outputs[0]).reshape(-1)[0])
           for i in range(3)]
    assert got == labels.tolist()


def test_an_imputer_of_missing_values_is_the_identity_on_real_inputs():
    """skl2onnx's SimpleImputer before a classifier: NaN (the default replaced value, a
    marker the attribute check lets through) is replaced, and the compiled program's
    inputs are never NaN; onnxruntime gives the inputs back on finite rows. Another
    replaced value is refused in one line."""
    node = helper.make_node("Imputer", ["x"], ["y"], domain="ai.onnx.ml",
                            imputed_value_floats=[1.5, -2.0, 0.25],
                            replaced_value_float=float("nan"))
    model = _model(node, [1, 3], [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                                [1, 3])])
    x = np.array([[0.5, -1.0, 3.0]], np.float32)
    got = np.asarray(evaluate(import_model(model), x[None]).outputs[0]).reshape(1, 3)
    np.testing.assert_array_equal(got, _ort(model, x)[0])
    node = helper.make_node("Imputer", ["x"], ["y"], domain="ai.onnx.ml",
                            imputed_value_floats=[1.5], replaced_value_float=0.0)
    with pytest.raises(MinunError, match="replaced_value_float 0: only NaN"):
        import_model(_model(node, [1, 3], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [1, 3])]))
