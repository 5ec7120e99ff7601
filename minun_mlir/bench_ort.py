"""The section of BENCHMARKS.md that puts minun's fixed point beside onnxruntime's static
int8 quantization (`tools/bench.py --ort`; issue 17).

For every ONNX model with convolution or matmul weights (the model zoo's mnist-8, the
suite's ONNX exports, the sine regressor): onnxruntime's `quantize_static` (QDQ, int8
activations and weights, per-channel weight scales, MinMax calibration) calibrated on the
same inputs minun profiles on, run in onnxruntime; minun at fixed8 (per-tensor scales),
fixed8 with per-channel weight scales and fixed16 (the bit-exact evaluator). Each is
compared with the float model run in onnxruntime: the median over the test inputs of the
relative output error ||y - y_float|| / ||y_float||, and top-1 agreement with float.

mnist-8 ships 3 test inputs; its calibration and test inputs here are the suite's 8x8
digits (scikit-learn's optdigits, the lenet-digits10 splits) drawn as MNIST images: each
pixel a 3x3 block, the 24x24 digit centred in 28x28, values 0..255 as MNIST's.

A separate section (as the posit one): deterministic, carried over by `make bench`.
"""

from __future__ import annotations

import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minun_mlir.bench import MODELS, REAL

SECTION = "## Fixed point beside onnxruntime int8"
CALIBRATION = 256  # calibration inputs (the first rows of the training split), both tools


@dataclass(frozen=True)
class OrtModel:
    name: str
    onnx: Path
    train: Path  # SeeDot-format data (label first), in the ONNX input's layout
    test: Path
    dims: dict[str, int] | None = None
    classifier: bool = True


def models(work: Path) -> list[OrtModel]:
    """The ONNX models with weights: mnist-8 (on digits drawn as MNIST images, written
    under `work`), the suite's ONNX exports, the sine regressor."""
    out = []
    digits = MODELS / "lenet-digits10"
    mnist = work / "mnist-digits"
    mnist.mkdir(parents=True, exist_ok=True)
    for split in ("train", "test"):
        np.save(mnist / f"{split}.npy", digits_as_mnist(np.load(digits / f"{split}.npy")))
    out.append(OrtModel("onnx-mnist-8 (real)", REAL / "onnx-mnist-8" / "model.onnx",
                        mnist / "train.npy", mnist / "test.npy"))
    for d in sorted(p for p in MODELS.iterdir() if (p / "model.onnx").exists()):
        out.append(OrtModel(d.name + "-onnx", d / "model.onnx", d / "train.npy",
                            d / "test.npy"))
    sine = REAL / "onnx-sine"
    out.append(OrtModel("onnx-sine (real)", sine / "model.onnx", sine / "test.npy",
                        sine / "test.npy", dims={"N": 1}, classifier=False))
    return out


def digits_as_mnist(rows: np.ndarray) -> np.ndarray:
    """8x8 digits in [0, 1] (label first) -> 28x28 images in [0, 255] (label first)."""
    x = rows[:, 1:].reshape(-1, 8, 8)
    big = np.kron(x, np.ones((3, 3), dtype=np.float32))  # 24x24
    img = np.zeros((len(rows), 28, 28), dtype=np.float32)
    img[:, 2:26, 2:26] = np.round(big * 255.0)
    return np.concatenate([rows[:, :1], img.reshape(len(rows), -1)], axis=1).astype(np.float32)


def relative_errors(y: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """||y - ref|| / ||ref|| per input (rows)."""
    y, ref = y.reshape(len(y), -1).astype(np.float64), ref.reshape(len(ref), -1)
    return np.linalg.norm(y - ref, axis=1) / np.maximum(np.linalg.norm(ref, axis=1), 1e-30)


def top1_agreement(y: np.ndarray, ref: np.ndarray) -> float:
    y, ref = y.reshape(len(y), -1), ref.reshape(len(ref), -1)
    return float(np.mean(y.argmax(axis=1) == ref.argmax(axis=1)))


def _ort_inputs(model, features: np.ndarray, dims: dict[str, int] | None) -> tuple[str, list]:
    inp = model.graph.input[0]
    shape = [d.dim_value if d.dim_value else (dims or {}).get(d.dim_param, 1)
             for d in inp.type.tensor_type.shape.dim]
    return inp.name, [f.reshape(shape).astype(np.float32) for f in features]


def ort_run(path: Path, features: np.ndarray, dims: dict[str, int] | None) -> np.ndarray:
    import onnx
    import onnxruntime as ort

    model = onnx.load(str(path))
    name, xs = _ort_inputs(model, features, dims)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # deterministic sums
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return np.stack([session.run(None, {name: x})[0] for x in xs])


def ort_int8(path: Path, calibration: np.ndarray, dims: dict[str, int] | None,
             out: Path) -> Path:
    """onnxruntime's static quantization: QDQ, int8 activations and weights, per-channel
    weight scales, MinMax calibration on `calibration`."""
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    model = onnx.load(str(path))
    if dims:  # quantize_static wants static shapes: fix the symbolic dims
        for d in model.graph.input[0].type.tensor_type.shape.dim:
            if d.dim_param in dims:
                d.dim_value = dims[d.dim_param]
    if model.opset_import[0].version < 13:  # QDQ per-channel needs opset 13
        model = onnx.version_converter.convert_version(model, 13)
    fixed = out.with_suffix(".float.onnx")
    onnx.save(model, str(fixed))
    pre = out.with_suffix(".pre.onnx")
    quant_pre_process(str(fixed), str(pre), skip_symbolic_shape=True)
    name, xs = _ort_inputs(model, calibration, dims)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{name: x} for x in xs])

        def get_next(self):
            return next(self.it, None)

    quantize_static(str(pre), str(out), Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    # onnxruntime 1.31's bias-driven weight-scale adjustment fails on
                    # biases shaped (C, 1, 1) (mnist-8's); it only matters for biases too
                    # large for an int32 at input scale x weight scale, none here
                    extra_options={"QDQDisableWeightAdjustForInt32Bias": True})
    return out


MINUN_CONFIGS = (("fixed8", dict(bits=8)),
                 ("fixed8 per-channel", dict(bits=8, per_channel=True)),
                 ("fixed16", dict(bits=16)))


def minun_outputs(m: OrtModel, features: np.ndarray, calibration: Path,
                  **quantize) -> np.ndarray:
    from minun_mlir.frontends.onnx import import_model
    from minun_mlir.native import NativeProgram
    from minun_mlir.numerics.l2_eval import decode_outputs, storage_inputs
    from minun_mlir.pipeline import lower_to_l2

    l1 = import_model(m.onnx, dims=m.dims)
    l2 = lower_to_l2(l1, data=str(calibration), evaluator="native", **quantize)
    program = NativeProgram(l2, "ort-" + m.name.split()[0])
    scores, _ = program.run(storage_inputs(l2, features))
    return decode_outputs(l2, [scores])[0]


def compare(m: OrtModel, work: Path, log=print) -> dict:
    """One model: {config: {"median_rel_error", "top1"}} against onnxruntime's float."""
    from minun_mlir.data import load_dataset

    train = np.load(m.train)[:CALIBRATION]
    calibration = work / f"{m.onnx.parent.name}-calibration.npy"
    np.save(calibration, train)
    test = load_dataset(m.test).features
    test = test.reshape(len(test), -1)
    reference = ort_run(m.onnx, test, m.dims)
    quantized = ort_int8(m.onnx, train[:, 1:], m.dims, work / f"{m.onnx.parent.name}.int8.onnx")
    outputs = {"ORT int8 (per-channel)": ort_run(quantized, test, m.dims)}
    for label, quantize in MINUN_CONFIGS:
        outputs[label] = minun_outputs(m, test, calibration, **quantize)
    row: dict = {"model": m.name, "inputs": len(test), "calibration": len(train)}
    for label, y in outputs.items():
        rel = relative_errors(y, reference)
        row[label] = {"median_rel_error": float(f"{statistics.median(rel):.3g}"),
                      "top1": round(top1_agreement(y, reference), 4) if m.classifier else None}
        log(f"{m.name:28} {label:24} median rel. error {row[label]['median_rel_error']:.3g}"
            f"  top-1 {row[label]['top1']}")
    return row


def run(work: Path | None = None, names: list[str] | None = None, log=print) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="minun-ort-") as tmp:
        work = work or Path(tmp)
        return [compare(m, work, log) for m in models(work) if not names or m.name in names]
