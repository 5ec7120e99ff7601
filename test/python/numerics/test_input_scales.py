"""quantize's input-scales=feature (numerics/input_scales.py): a logistic regression on the
RAW breast-cancer features (0.001 to 4,000; standardised in training, the standardisation
folded into its weights: what a user gets from a scaler + linear model) loses its labels
at one input scale and keeps them with a scale per feature; a Keras Normalization layer's
Sub and Mul before the first MatMul fold the same way; the C (x86 host) equals the
evaluator, and minun_predict_float takes the raw features."""

from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from minun_mlir.codegen import emit_c
from minun_mlir.diagnostics import MinunError
from minun_mlir.frontends.onnx import import_model
from minun_mlir.native import NativeProgram
from minun_mlir.numerics.float_eval import evaluate
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2
from minun_mlir.pipeline import lower_to_l2


@pytest.fixture(scope="module")
def data():
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    x, y = load_breast_cancer(return_X_y=True)
    return train_test_split(x.astype(np.float32), y, test_size=0.3, random_state=0,
                            stratify=y)


def _model(nodes, inits):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 30])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _fit(data):
    """Logistic regression on standardised features: (mean, std, w, b) of the
    standardised model, two logits +-z/2."""
    from sklearn.linear_model import LogisticRegression

    xtr, _, ytr, _ = data
    mu, sd = xtr.mean(0), xtr.std(0)
    clf = LogisticRegression(max_iter=2000).fit((xtr - mu) / sd, ytr)
    w = np.stack([-clf.coef_[0] / 2, clf.coef_[0] / 2], 1)
    b = np.array([-clf.intercept_[0] / 2, clf.intercept_[0] / 2])
    return mu, sd, w, b


@pytest.fixture(scope="module")
def folded(data):
    """The scaler folded into the weights: the model takes the raw features."""
    mu, sd, w, b = _fit(data)
    return _model([helper.make_node("MatMul", ["x", "W"], ["h"]),
                   helper.make_node("Add", ["h", "B"], ["y"])],
                  {"W": w / sd[:, None], "B": b - (mu / sd) @ w})


@pytest.fixture(scope="module")
def train(data, tmp_path_factory):
    path = tmp_path_factory.mktemp("bc") / "train.npz"
    np.savez(path, x=data[0], y=data[2])
    return str(path)


def _labels(module, x, l2=True):
    if l2:
        out = decode_outputs(module, evaluate_l2(module, x[:, None]).outputs)[0]
    else:
        out = evaluate(module, x[:, None]).outputs[0]
    return np.asarray(out).reshape(len(x), -1).argmax(1)


def test_per_feature_scales_keep_the_float_labels(data, folded, train):
    """One input scale (set by the 4,000s) leaves the small features a bit or two: the
    labels go (both widths); a scale per feature keeps all the float labels at 16 bits
    and nearly all at 8."""
    x = data[1]
    l1 = import_model(folded)
    want = _labels(l1, x, l2=False)
    agree = {}
    for scales in ("tensor", "feature"):
        for bits in (16, 8):
            l2 = lower_to_l2(l1, bits=bits, data=train, input_scales=scales,
                             evaluator="numpy")
            agree[scales, bits] = float(np.mean(_labels(l2, x) == want))
    assert agree["feature", 16] == 1.0
    assert agree["feature", 8] >= 0.95
    assert agree["tensor", 16] < 0.9 and agree["tensor", 8] < 0.9  # what it fixes


def test_a_normalization_layer_before_the_matmul_folds(data, train):
    """Sub(mean) then Mul(1/std), as tf2onnx writes Keras's Normalization layer: folded
    with the input's own ranges, so no element-wise op stays and the labels hold."""
    mu, sd, w, b = _fit(data)
    model = _model([helper.make_node("Sub", ["x", "mu"], ["c"]),
                    helper.make_node("Mul", ["c", "inv"], ["n"]),
                    helper.make_node("MatMul", ["n", "W"], ["h"]),
                    helper.make_node("Add", ["h", "B"], ["y"])],
                   {"mu": mu, "inv": 1 / sd, "W": w, "B": b})
    x = data[1]
    l1 = import_model(model)
    l2 = lower_to_l2(l1, bits=16, data=train, input_scales="feature", evaluator="numpy")
    names = {op.name for op in l2.walk()}
    assert "num.sub" not in names and "num.hadamard" not in names
    assert np.mean(_labels(l2, x) == _labels(l1, x, l2=False)) == 1.0


def test_the_c_takes_raw_features_in_minun_predict_float(data, folded, train, tmp_path):
    """The host C equals the evaluator on stored inputs, and minun_predict_float, given the
    raw features, gives the evaluator's decoded scores bit for bit."""
    x = data[1][:8]
    l2 = lower_to_l2(import_model(folded), bits=16, data=train, input_scales="feature",
                     evaluator="numpy")
    want = np.asarray(evaluate_l2(l2, x[:, None]).outputs[0]).reshape(len(x), -1)
    got, _ = NativeProgram(l2, "input_scales").run_features(x[:, None])
    np.testing.assert_array_equal(got.reshape(want.shape), want)
    emit_c(l2, "x86", tmp_path / "c")
    assert "MINUN_INPUT_CENTRES" in (tmp_path / "c" / "model.h").read_text()
    lib = tmp_path / "model.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(lib),
                    *map(str, sorted((tmp_path / "c").glob("*.c"))), "-lm"], check=True)
    so = ctypes.CDLL(str(lib))
    decoded = decode_outputs(l2, [want])[0].reshape(len(x), -1).astype(np.float32)
    for i in range(len(x)):
        scores = np.zeros(2, dtype=np.float32)
        so.minun_predict_float(np.ascontiguousarray(x[i]).ctypes.data_as(ctypes.c_void_p),
                               scores.ctypes.data_as(ctypes.c_void_p))
        np.testing.assert_array_equal(scores, decoded[i])


@pytest.mark.parametrize("options,message", [
    ({}, "input-scales=feature needs the training data (minun-compile --train FILE"),
    ({"scales": "maxscale", "maxscale": 8}, "input-scales=feature is for scales=data-driven"),
    ({"repr": "posit", "bits": 16}, "input-scales=feature is for repr=fixed"),
])
def test_refusals_are_one_line(folded, train, options, message):
    if options.get("scales") == "maxscale" or "repr" in options:
        options = {**options, "data": train}
    with pytest.raises(MinunError) as info:
        lower_to_l2(import_model(folded), input_scales="feature", **options)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_keras_normalization_zoo_model(data):
    """test/zoo/keras/mlp_norm_breast_cancer (tf2onnx: Sub, Mul, MatMul, ...) on the whole
    test split: per-feature scales keep fixed16 and fixed8 within a point (two at 8 bits)
    of float, where one input scale loses several at 16 bits."""
    from pathlib import Path

    zoo = Path(__file__).resolve().parents[2] / "zoo" / "keras"
    x, y = data[1], data[3]
    l1 = import_model(zoo / "mlp_norm_breast_cancer.onnx", dims={"unk__0": 1})
    train = str(zoo / "data" / "breast_cancer-train.npz")
    acc = {"float": np.mean(_labels(l1, x, l2=False) == y)}
    for scales, bits in (("tensor", 16), ("feature", 16), ("feature", 8)):
        l2 = lower_to_l2(l1, bits=bits, data=train, input_scales=scales, evaluator="numpy")
        acc[scales, bits] = np.mean(_labels(l2, x) == y)
    assert acc["feature", 16] >= acc["float"] - 0.01
    assert acc["feature", 8] >= acc["float"] - 0.02
    assert acc["tensor", 16] < acc["float"] - 0.02


def test_the_cli_needs_train_and_compiles_with_it(folded, train, tmp_path, capsys):
    """minun-compile --input-scales feature: refused in one line without --train; with it,
    model.h gives the centres and half-widths."""
    import onnx

    from minun_mlir.tools import minun_compile

    path = tmp_path / "m.onnx"
    onnx.save(folded, path)
    assert minun_compile.main([str(path), "--input-scales", "feature", "--out",
                               str(tmp_path / "a")]) != 0
    err = capsys.readouterr().err
    assert "--input-scales feature needs --train" in err
    assert minun_compile.main([str(path), "--input-scales", "feature", "--train", train,
                               "--out", str(tmp_path / "b")]) == 0
    assert "MINUN_INPUT_HALF_WIDTHS" in (tmp_path / "b" / "model.h").read_text()


def test_auto_folds_raw_measurements_and_nothing_else(data, folded, train):
    """input-scales=auto (the default): the raw breast-cancer features (largest magnitude
    thousands of times a typical feature's range) get a scale per feature, the same
    program as `feature`; the suite's pixel and standardised inputs keep one scale, the
    same program as `tensor`."""
    from minun_mlir.numerics.input_scales import AUTO_SPREAD, spread

    l1 = import_model(folded)
    auto = lower_to_l2(l1, bits=8, data=train, evaluator="numpy")  # the default
    feature = lower_to_l2(l1, bits=8, data=train, input_scales="feature", evaluator="numpy")
    assert str(auto) == str(feature)
    assert spread(data[0][:, None], 1) > 100 * AUTO_SPREAD
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    for model in ("protonn-digits10", "bonsai-breast-cancer", "protonn-wine"):
        d = root / "benchmarks" / "models" / model
        x = np.load(d / "train.npy")[:, 1:]
        assert spread(x[:, None], 1) < AUTO_SPREAD / 8
        from minun_mlir.driver import load_model

        sd = load_model(d / "model.sd", d)
        kept = lower_to_l2(sd, bits=16, data=str(d / "train.npy"), evaluator="numpy")
        tensor = lower_to_l2(sd, bits=16, data=str(d / "train.npy"), input_scales="tensor",
                             evaluator="numpy")
        assert str(kept) == str(tensor)
