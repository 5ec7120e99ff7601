"""The model zoo: every model under test/zoo/, where it comes from, the data it is
profiled and tested on, and the stages it is known to fail (with the reason).

Read by test/python/onnx/test_zoo.py (which checks every stage of every model, and that
each known failure does fail) and by tools/zoo/zoo_table.py (the table of
docs/onnx-frontend.md). No dependency beyond the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

ZOO = Path(__file__).resolve().parent

# The stages of the done-when of issue 17, in order:
#   import: imports, and the float evaluator equals onnxruntime on the 40 stored inputs
#   fixed16, fixed8: quantizes (profiled on the training data) and the C built for the
#       Cortex-M4 and run in QEMU gives the bit-exact evaluator's outputs
#   cli: `minun-compile model.onnx` (no option at all) exits 0 and writes
#       build/<model>/model.c, with its report saying where
STAGES = ("import", "fixed16", "fixed8", "cli")


@dataclass(frozen=True)
class Model:
    name: str  # unique in the zoo: "<source>/<file stem>"
    source: str  # who made it, with which exporter
    onnx: str  # path under test/zoo
    inputs: str  # the .npz of test inputs (x stacked on the batch axis)
    train: str  # profiling data for quantize (an .npz with x)
    family: str  # models sharing one trained network share a family (the distinct count)
    output: str | None = None  # the graph output compiled (default: the last, or the
    # tensor a ZipMap reads)
    dims: dict = field(default_factory=dict)  # symbolic dimensions other than the batch
    known: dict = field(default_factory=dict)  # stage: (its error message, why)
    third_party: bool = True  # False: built in this repository by hand
    # a pre-quantized model (QDQ, QOperator): also compiled at zero-skew with the file's own
    # scales and zero points, its integers checked against onnxruntime's; ort_bound: (the
    # largest difference in output integers, the least fraction equal), where they differ
    prequantized: bool = False
    ort_bound: tuple[int, float] | None = None

    @property
    def path(self) -> Path:
        return ZOO / self.onnx


_SKLEARN = {  # name: dataset
    "logreg_digits": "digits", "logreg_norm_iris": "iris",
    "logreg_breast_cancer": "breast_cancer", "linearsvc_wine": "wine",
    "svc_linear_breast_cancer": "breast_cancer", "svc_rbf_breast_cancer": "breast_cancer",
    "svc_rbf_iris": "iris", "svc_poly_breast_cancer": "breast_cancer",
    "svc_sigmoid_breast_cancer": "breast_cancer", "mlp_digits": "digits", "dtree_wine": "wine",
    "rf_digits": "digits", "gb_iris": "iris", "linreg_diabetes": "diabetes",
    "dtreg_diabetes": "diabetes", "svr_rbf_diabetes": "diabetes",
    "logreg_names_iris": "iris",
}

_TORCH = ("mlp", "mlp_softmax", "mlp_bn", "cnn", "cnn_logsoftmax", "dscnn", "mobile_res",
          "gru", "bigru", "lstm", "rnn", "kws1d")

# PyTorch models of the issue-32 failure classes: LayerNormalization and Erf (GELU) in a
# transformer block (also exported at opset 14, where LayerNorm is decomposed), ReduceMean
# and ReduceMax over the time axis of a Conv1d's 3-D output
_TORCH_OPS = {"transformer": ("ts", "dynamo", "ts14"), "conv1d_pool": ("ts", "dynamo")}
# PyTorch decoder-style layers: nn.Upsample (Resize nearest and bilinear), nn.ConvTranspose2d,
# nn.GroupNorm / nn.InstanceNorm2d (InstanceNormalization), nn.Mish (the TorchScript
# exporter writes Softplus, Tanh, Mul; dynamo writes Mish) and nn.Softplus (dynamo adds
# its threshold: Greater, Where)
_TORCH_UPSAMPLING = ("upsample", "convtranspose", "groupnorm", "mish")
_TORCH_LABELS = {"ts": "torch.onnx.export(dynamo=False)",
                 "dynamo": "torch.onnx.export(dynamo=True)",
                 "ts14": "torch.onnx.export(dynamo=False, opset_version=14)"}

_ONNX2C = {  # name: source
    "atmega_mnist": "onnx2c examples/atmega_mnist (PyTorch)",
    "pytorch_mnist": "onnx2c test/mnist (PyTorch)",
    "velardo_lesson9": "onnx2c test/velardo (Keras, keras2onnx)",
    "treeensembleclassifier": "onnx2c test/simple_networks (scikit-learn, skl2onnx)",
    "conv_2ch_3kernels_randombias": "onnx2c test/simple_networks (Keras, keras2onnx)",
    "conv_3ch": "onnx2c test/simple_networks (Keras, keras2onnx)",
    "conv_k2_maxpool_k2": "onnx2c test/simple_networks (Keras, keras2onnx)",
    "lstm_k1_b1_r1": "onnx2c test/simple_networks (Keras, keras2onnx)",
}

_TREES = {  # name: (source, training data under test/zoo) -- tools/zoo/export_trees.py
    "xgboost/xgb_clf_iris": ("XGBoost 3.2.0, onnxmltools 1.16.0", "sklearn/data/iris-train.npz"),
    "xgboost/xgb_bin_iris": ("XGBoost 3.2.0, onnxmltools 1.16.0", "sklearn/data/iris-train.npz"),
    "xgboost/xgb_reg_diabetes": ("XGBoost 3.2.0, onnxmltools 1.16.0",
                                 "sklearn/data/diabetes-train.npz"),
    "lightgbm/lgbm_clf_wine": ("LightGBM 4.7.0, onnxmltools 1.16.0",
                               "sklearn/data/wine-train.npz"),
    "lightgbm/lgbm_bin_iris": ("LightGBM 4.7.0, onnxmltools 1.16.0",
                               "sklearn/data/iris-train.npz"),
    "lightgbm/lgbm_reg_diabetes": ("LightGBM 4.7.0, onnxmltools 1.16.0",
                                   "sklearn/data/diabetes-train.npz"),
    "catboost/cb_clf_iris": ("CatBoost 1.2.10, save_model(format='onnx')",
                             "sklearn/data/iris-train.npz"),
    "catboost/cb_bin_iris": ("CatBoost 1.2.10, save_model(format='onnx')",
                             "sklearn/data/iris-train.npz"),
    "catboost/cb_reg_diabetes": ("CatBoost 1.2.10, save_model(format='onnx')",
                                 "sklearn/data/diabetes-train.npz"),
    "onnxruntime/logreg_iris": ("onnxruntime 1.31.1 wheel, datasets/logreg_iris.onnx "
                                "(OnnxMLTools 1.2)", "onnxruntime/logreg_iris-train.npz"),
}


_ORTQUANT = {  # name: (format, the torch model it quantizes)
    "mlp_qdq": ("QDQ", "mlp"), "mlp_qop": ("QOperator", "mlp"),
    "mlp_leaky_qop": ("QOperator", "mlp, ReLU made LeakyRelu"),
    "cnn_qdq_pc": ("QDQ", "cnn"), "cnn_qdq_wpair_pc": ("QDQ", "cnn"),
    "cnn_qop": ("QOperator", "cnn"), "cnn_qop_u8": ("QOperator, uint8 activations", "cnn"),
    "dscnn_qdq": ("QDQ", "dscnn"),
    "dscnn_qop_pc": ("QOperator", "dscnn"), "mobile_res_qdq_pc": ("QDQ", "mobile_res"),
    "mobile_res_qop": ("QOperator", "mobile_res"),
    "cnn_relu6_qdq": ("QDQ", "cnn, ReLU made ReLU6"),
    "cnn_relu6_qop_pc": ("QOperator", "cnn, ReLU made ReLU6"),
    "cnn_int8io": ("QDQ, int8 input and output", "cnn"),
}
# zero-skew against onnxruntime where its integers are not all equal (docs/onnx-frontend.md,
# "onnxruntime's quantizer"), as measured on the 40 stored inputs: onnxruntime's
# QLinearAveragePool rounds a float32 sum (1 off on some ties there, 8 after dscnn's
# depthwise layers), its QLinearSoftmax computes in float32 (1 off)
_ORT_BOUNDS = {"dscnn_qdq": (8, 0.39), "mobile_res_qdq_pc": (1, 0.9),
               "mobile_res_qop": (1, 0.98)}


_KERAS = {  # name: (training data, exporter)
    "mlp_digits": ("digits", "from_keras"), "cnn_digits": ("digits", "from_keras"),
    "gru_digits": ("digits", "from_keras"), "lstm_digits": ("digits", "from_keras"),
    "bigru_digits": ("digits", "from_keras"), "simplernn_digits": ("digits", "from_keras"),
    "mlp_raw_breast_cancer": ("breast_cancer", "from_keras"),
    "mlp_norm_breast_cancer": ("breast_cancer", "from_keras"),
}
# TFLite full-int8 conversions of mlp_digits through tf2onnx.convert.from_tflite: QDQ
# models, float in and out, and int8 in and out (TFLite's usual form)
_KERAS_TFLITE = ("tflite_int8_mlp", "tflite_int8io_mlp")


def models() -> list[Model]:
    out = []
    for name, dataset in _SKLEARN.items():
        out.append(Model(
            f"sklearn/{name}", "scikit-learn 1.9.1, skl2onnx 1.20.0", f"sklearn/{name}.onnx",
            f"sklearn/{name}.npz", f"sklearn/data/{dataset}-train.npz", f"sklearn/{name}",
            # skl2onnx's decision_function emulation after a multiclass SVC (Less, Abs, Div
            # of run-time values) is not imported: the label is compiled
            output="output_label" if name == "svc_rbf_iris" else None))
    for name in _TORCH:
        for exporter, label in (("ts", "torch.onnx.export(dynamo=False)"),
                                ("dynamo", "torch.onnx.export(dynamo=True)")):
            out.append(Model(
                f"torch/{name}_{exporter}", f"PyTorch 2.13.0, {label}",
                f"torch/{name}_{exporter}.onnx", f"torch/{name}.npz",
                "torch/data/digits01-train.npz", f"torch/{name}"))
    for name, exporters in _TORCH_OPS.items():
        for exporter in exporters:
            out.append(Model(
                f"torch/{name}_{exporter}", f"PyTorch 2.13.0, {_TORCH_LABELS[exporter]}",
                f"torch/{name}_{exporter}.onnx", f"torch/{name}.npz",
                "torch/data/digits01-train.npz", f"torch/{name}"))
    for name in _TORCH_UPSAMPLING:
        for exporter in ("ts", "dynamo"):
            out.append(Model(
                f"torch/{name}_{exporter}", f"PyTorch 2.13.0, {_TORCH_LABELS[exporter]}",
                f"torch/{name}_{exporter}.onnx", f"torch/{name}.npz",
                "torch/data/digits01-train.npz", f"torch/{name}"))
    for name in ("keras_mlp", "keras_cnn"):
        out.append(Model(
            f"keras_style/{name}", "hand-built with onnx.helper in tf2onnx's patterns",
            f"keras_style/{name}.onnx", f"keras_style/{name}.npz",
            "torch/data/digits01-train.npz", f"keras_style/{name}", third_party=False))
    for name, source in _ONNX2C.items():
        known, dims = {}, {}
        if name == "lstm_k1_b1_r1":
            # its sequence length is symbolic: the stages compile 4 steps (the stored
            # inputs'); minun-compile with no option compiles 1, with a warning
            dims = {"M1": 4}
        out.append(Model(
            f"onnx2c/{name}", source, f"onnx2c/{name}.onnx", f"onnx2c/{name}.npz",
            f"onnx2c/{name}.npz", f"onnx2c/{name}", dims=dims, known=known))
    for name, (fmt, base) in _ORTQUANT.items():
        out.append(Model(
            f"ortquant/{name}", f"onnxruntime 1.31.1 quantize_static ({fmt}) of torch {base}",
            f"ortquant/{name}.onnx", f"ortquant/{name}.npz", "torch/data/digits01-train.npz",
            # one network per quantized torch network (QDQ and QOperator files alike)
            f"ortquant/{base.replace(', ', '_').replace(' ', '_')}", prequantized=True,
            ort_bound=_ORT_BOUNDS.get(name)))
    for name, (source, train) in _TREES.items():
        # logreg_iris: its probabilities are a Normalizer L1 of sigmoids (a run-time
        # division, not imported); the label is compiled, as minun-compile does
        out.append(Model(name, source, f"{name}.onnx", f"{name}.npz", train, name,
                         output="label" if name == "onnxruntime/logreg_iris" else None))
    for name, (dataset, how) in _KERAS.items():
        out.append(Model(
            f"keras/{name}", f"Keras 3.15.1 (TensorFlow 2.21.0), tf2onnx 1.17.0 {how}",
            f"keras/{name}.onnx", f"keras/{name}.npz", f"keras/data/{dataset}-train.npz",
            f"keras/{name}"))
    for name in _KERAS_TFLITE:
        out.append(Model(
            f"keras/{name}", "Keras 3.15.1 (TensorFlow 2.21.0), TFLite converter, tf2onnx "
            "1.17.0 from_tflite", f"keras/{name}.onnx", f"keras/{name}.npz",
            "keras/data/digits-train.npz", "keras/tflite_int8_mlp", prequantized=True))
    return out
