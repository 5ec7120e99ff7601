"""Build two small digit classifiers with onnx.helper in the patterns tf2onnx writes for
Keras models (they are NOT Keras exports: no TensorFlow is involved) into
test/zoo/keras_style/: NHWC input with a symbolic batch dimension (`unk__N`), a
Transpose into NCHW around Conv/MaxPool and back, Flatten as a Reshape by a constant
shape `[-1, n]`, Dense as MatMul + Add (not Gemm), node names as tf2onnx spells them
(`sequential/dense/MatMul`), Softmax at the end, opset 13.

    .venv/bin/python tools/zoo/make_keras_style.py            # rewrite
    .venv/bin/python tools/zoo/make_keras_style.py --check    # exit 1 if a file would change

Weights: `keras_mlp` takes scikit-learn's MLPClassifier(32 hidden units) trained on the
digits (pixels / 16); `keras_cnn` has 6 fixed random 3x3 filters (seed 0) and a
LogisticRegression fitted on their ReLU + max-pool features (computed by onnxruntime on
the feature part of the graph). Inputs: `<model>.npz` (`x`: 40 test digits in the model's
input shape, `y`: the labels the fitted scikit-learn classifier predicts) and the
profiling data `../torch/data/digits01-train.npz` (the same 70/30 split of the digits).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "test", "zoo", "keras_style")
N_TEST = 40
OPSET = 13


def _data():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    return train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)


def _model(nodes, inits, in_shape, out_dim, name) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("input_1", TensorProto.FLOAT, ["unk__6", *in_shape])],
        [helper.make_tensor_value_info("dense", TensorProto.FLOAT, ["unk__7", out_dim])],
        [numpy_helper.from_array(np.asarray(v, np.float32 if k != "const_fold_opt__8"
                                            else np.int64), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="tf2onnx-style (hand-built)",
                              producer_version="1")
    onnx.checker.check_model(model, full_check=True)
    return model


def keras_mlp(x_train, y_train):
    from sklearn.neural_network import MLPClassifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = MLPClassifier(hidden_layer_sizes=(32,), max_iter=300, random_state=0).fit(
            x_train, y_train)
    nodes = [
        helper.make_node("Reshape", ["input_1", "const_fold_opt__8"], ["flatten/Reshape:0"],
                         name="sequential/flatten/Reshape"),
        helper.make_node("MatMul", ["flatten/Reshape:0", "dense/MatMul/ReadVariableOp:0"],
                         ["dense/MatMul:0"], name="sequential/dense/MatMul"),
        helper.make_node("Add", ["dense/MatMul:0", "dense/BiasAdd/ReadVariableOp:0"],
                         ["dense/BiasAdd:0"], name="sequential/dense/BiasAdd"),
        helper.make_node("Relu", ["dense/BiasAdd:0"], ["dense/Relu:0"],
                         name="sequential/dense/Relu"),
        helper.make_node("MatMul", ["dense/Relu:0", "dense_1/MatMul/ReadVariableOp:0"],
                         ["dense_1/MatMul:0"], name="sequential/dense_1/MatMul"),
        helper.make_node("Add", ["dense_1/MatMul:0", "dense_1/BiasAdd/ReadVariableOp:0"],
                         ["dense_1/BiasAdd:0"], name="sequential/dense_1/BiasAdd"),
        helper.make_node("Softmax", ["dense_1/BiasAdd:0"], ["dense"],
                         name="sequential/dense_1/Softmax"),
    ]
    inits = {"const_fold_opt__8": [-1, 64],
             "dense/MatMul/ReadVariableOp:0": clf.coefs_[0],
             "dense/BiasAdd/ReadVariableOp:0": clf.intercepts_[0],
             "dense_1/MatMul/ReadVariableOp:0": clf.coefs_[1],
             "dense_1/BiasAdd/ReadVariableOp:0": clf.intercepts_[1]}
    return (_model(nodes, inits, (8, 8), 10, "keras_mlp"),
            lambda x: clf.predict(x.reshape(len(x), -1)), (8, 8))


def keras_cnn(x_train, y_train):
    import onnxruntime as ort
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    filters = rng.normal(0.0, 0.5, (6, 1, 3, 3)).astype(np.float32)  # OIHW
    bias = rng.normal(0.0, 0.1, 6).astype(np.float32)
    features = [
        helper.make_node("Transpose", ["input_1"], ["conv2d/Conv2D__6:0"], perm=[0, 3, 1, 2],
                         name="sequential/conv2d/Conv2D__6"),
        helper.make_node("Conv", ["conv2d/Conv2D__6:0", "conv2d/Conv2D/ReadVariableOp:0",
                                  "conv2d/BiasAdd/ReadVariableOp:0"], ["conv2d/BiasAdd:0"],
                         name="sequential/conv2d/BiasAdd", kernel_shape=[3, 3],
                         strides=[1, 1], dilations=[1, 1], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv2d/BiasAdd:0"], ["conv2d/Relu:0"],
                         name="sequential/conv2d/Relu"),
        helper.make_node("MaxPool", ["conv2d/Relu:0"], ["max_pooling2d/MaxPool:0"],
                         name="sequential/max_pooling2d/MaxPool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Transpose", ["max_pooling2d/MaxPool:0"],
                         ["max_pooling2d/MaxPool__12:0"], perm=[0, 2, 3, 1],
                         name="sequential/max_pooling2d/MaxPool__12"),
        helper.make_node("Reshape", ["max_pooling2d/MaxPool__12:0", "const_fold_opt__8"],
                         ["flatten/Reshape:0"], name="sequential/flatten/Reshape"),
    ]
    inits = {"const_fold_opt__8": [-1, 96], "conv2d/Conv2D/ReadVariableOp:0": filters,
             "conv2d/BiasAdd/ReadVariableOp:0": bias}
    # the features, by onnxruntime on the graph so far
    part = helper.make_graph(
        features, "features",
        [helper.make_tensor_value_info("input_1", TensorProto.FLOAT, ["N", 8, 8, 1])],
        [helper.make_tensor_value_info("flatten/Reshape:0", TensorProto.FLOAT, ["N", 96])],
        [numpy_helper.from_array(np.asarray(v, np.float32 if k != "const_fold_opt__8"
                                            else np.int64), k) for k, v in inits.items()])
    sess = ort.InferenceSession(helper.make_model(part, opset_imports=[
        helper.make_opsetid("", OPSET)]).SerializeToString(), providers=["CPUExecutionProvider"])

    def feats(x):
        return sess.run(None, {"input_1": x.reshape(-1, 8, 8, 1)})[0]

    clf = LogisticRegression(max_iter=2000, random_state=0).fit(feats(x_train), y_train)
    nodes = features + [
        helper.make_node("MatMul", ["flatten/Reshape:0", "dense/MatMul/ReadVariableOp:0"],
                         ["dense/MatMul:0"], name="sequential/dense/MatMul"),
        helper.make_node("Add", ["dense/MatMul:0", "dense/BiasAdd/ReadVariableOp:0"],
                         ["dense/BiasAdd:0"], name="sequential/dense/BiasAdd"),
        helper.make_node("Softmax", ["dense/BiasAdd:0"], ["dense"],
                         name="sequential/dense/Softmax"),
    ]
    inits |= {"dense/MatMul/ReadVariableOp:0": clf.coef_.T,
              "dense/BiasAdd/ReadVariableOp:0": clf.intercept_}
    return (_model(nodes, inits, (8, 8, 1), 10, "keras_cnn"),
            lambda x: clf.predict(feats(x)), (8, 8, 1))


def export_all() -> dict[str, bytes]:
    x_train, x_test, y_train, _ = _data()
    files = {}
    for build in (keras_mlp, keras_cnn):
        model, predict, shape = build(x_train, y_train)
        x = x_test[:N_TEST].reshape(-1, *shape)
        buf = io.BytesIO()
        np.savez(buf, x=x, y=predict(x).astype(np.int64))
        files[f"{build.__name__}.onnx"] = model.SerializeToString(deterministic=True)
        files[f"{build.__name__}.npz"] = buf.getvalue()
    return files


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed files instead of writing")
    args = parser.parse_args(argv)
    sys.path.insert(0, HERE)
    from export_sklearn import write_or_check

    return write_or_check(export_all(), OUT, args.check)


if __name__ == "__main__":
    sys.exit(main())
