"""Quantize some of the zoo's float PyTorch models with onnxruntime's own quantizer
(`onnxruntime.quantization.quantize_static`) into test/zoo/ortquant/, in both of its
formats: QDQ (QuantizeLinear / DequantizeLinear pairs around float ops) and QOperator
(QLinearConv, QGemm, QLinearAdd, QLinearGlobalAveragePool, ... of com.microsoft), int8
activations and weights, per-tensor and (for the models with convolutions) per-channel.

    .venv/bin/python tools/zoo/export_ortquant.py           # rewrite test/zoo/ortquant
    .venv/bin/python tools/zoo/export_ortquant.py --check   # exit 1 if a file would change

The float models are test/zoo/torch/<model>_ts.onnx, plus two edits of them: `cnn_relu6`,
the torch cnn with its ReLUs made ReLU6 (Clip 0..6), whose clamp onnxruntime's quantizer
removes, leaving it to the range of the QuantizeLinear after the convolution; and
`mlp_leaky`, the torch mlp with its ReLU made LeakyRelu(0.01) (QOperator:
QLinearLeakyRelu). `_wpair` keeps the weights float with a QuantizeLinear /
DequantizeLinear pair each (extra option AddQDQPairToWeight). `cnn_int8io` is a QDQ model
with its first QuantizeLinear and last DequantizeLinear cut off: an int8 graph input and
an int8 graph output, the form TFLite's int8 models take. `_u8`: uint8 activations
(QuantType.QUInt8, onnxruntime's usual choice for QOperator), int8 weights.
Calibration: MinMax on the 200 training digits (test/zoo/torch/data/digits01-train.npz),
in order, so the output is deterministic. The test inputs are the torch model's
(test/zoo/torch/<model>.npz), copied (quantized with the model's input scale for the int8
input).

Needs only onnxruntime and onnx (the project's own test dependencies).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ZOO = os.path.join(HERE, "..", "..", "test", "zoo")
OUT = os.path.join(ZOO, "ortquant")

# name: (float model, format, per_channel, quantize_static's extra_options)
MODELS = {
    "mlp_qdq": ("mlp", "QDQ", False, {}),
    "mlp_qop": ("mlp", "QOperator", False, {}),
    "mlp_leaky_qop": ("mlp_leaky", "QOperator", False, {}),
    "cnn_qdq_pc": ("cnn", "QDQ", True, {}),
    "cnn_qdq_wpair_pc": ("cnn", "QDQ", True, {"AddQDQPairToWeight": True}),
    "cnn_qop": ("cnn", "QOperator", False, {}),
    "cnn_qop_u8": ("cnn", "QOperator", False, {}),
    "dscnn_qdq": ("dscnn", "QDQ", False, {}),
    "dscnn_qop_pc": ("dscnn", "QOperator", True, {}),
    "mobile_res_qdq_pc": ("mobile_res", "QDQ", True, {}),
    "mobile_res_qop": ("mobile_res", "QOperator", False, {}),
    "cnn_relu6_qdq": ("cnn_relu6", "QDQ", False, {}),
    "cnn_relu6_qop_pc": ("cnn_relu6", "QOperator", True, {}),
    "cnn_int8io": ("cnn", "QDQ", False, {}),
}


DERIVED = {"cnn_relu6": "cnn", "mlp_leaky": "mlp"}  # float model: the torch model it edits


def _activation(model: onnx.ModelProto, base: str) -> onnx.ModelProto:
    """The model with every Relu made Clip(0, 6) (cnn_relu6) or LeakyRelu(0.01)
    (mlp_leaky)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    if base == "cnn_relu6":
        model.graph.initializer.extend([numpy_helper.from_array(np.float32(0), "relu6_min"),
                                        numpy_helper.from_array(np.float32(6), "relu6_max")])
    for node in model.graph.node:
        if node.op_type == "Relu" and base == "cnn_relu6":
            node.op_type = "Clip"
            node.input.extend(["relu6_min", "relu6_max"])
        elif node.op_type == "Relu":
            node.op_type = "LeakyRelu"
            node.attribute.append(helper.make_attribute("alpha", 0.01))
    return model


def _float_model(base: str) -> onnx.ModelProto:
    model = onnx.load(os.path.join(ZOO, "torch", f"{DERIVED.get(base, base)}_ts.onnx"))
    return _activation(model, base) if base in DERIVED else model


def _inputs(base: str) -> np.ndarray:
    return np.load(os.path.join(ZOO, "torch", f"{DERIVED.get(base, base)}.npz"))["x"]


def _quantize(model: onnx.ModelProto, fmt: str, per_channel: bool, extra: dict, shape,
              u8: bool = False) -> onnx.ModelProto:
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    train = np.load(os.path.join(ZOO, "torch", "data", "digits01-train.npz"))["x"]
    activations = QuantType.QUInt8 if u8 else QuantType.QInt8
    feed = model.graph.input[0].name

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{feed: x.reshape(shape).astype(np.float32)} for x in train])

        def get_next(self):
            return next(self.it, None)

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "float.onnx"), os.path.join(tmp, "q.onnx")
        onnx.save(model, src)
        quantize_static(src, dst, Reader(), quant_format=getattr(QuantFormat, fmt),
                        per_channel=per_channel, activation_type=activations,
                        weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                        extra_options=extra)
        out = onnx.load(dst)
    for node in out.graph.node:
        node.doc_string = ""
    del out.metadata_props[:]
    return out


def _int8io(model: onnx.ModelProto) -> tuple[onnx.ModelProto, tuple, tuple]:
    """Cut the first QuantizeLinear and the last DequantizeLinear off a QDQ model: the
    graph then takes and gives int8. Returns it and the input's and output's
    (scale, zero point)."""
    g = model.graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    x, y = g.input[0], g.output[0]
    q_in = next(n for n in g.node if n.op_type == "QuantizeLinear" and n.input[0] == x.name)
    dq_out = next(n for n in g.node if n.op_type == "DequantizeLinear" and n.output[0] == y.name)
    qp_in = (float(inits[q_in.input[1]]), int(inits[q_in.input[2]]))
    qp_out = (float(inits[dq_out.input[1]]), int(inits[dq_out.input[2]]))
    for node in g.node:  # the graph input / output take the cut nodes' names
        node.input[:] = [x.name if i == q_in.output[0] else i for i in node.input]
        node.output[:] = [y.name if o == dq_out.input[0] else o for o in node.output]
    g.node.remove(q_in)
    g.node.remove(dq_out)
    x.type.tensor_type.elem_type = TensorProto.INT8
    y.type.tensor_type.elem_type = TensorProto.INT8
    onnx.checker.check_model(model)
    return model, qp_in, qp_out


def build() -> dict[str, bytes]:
    """{file name: bytes} of every file the script writes."""
    import io

    files = {}
    for name, (base, fmt, per_channel, extra) in MODELS.items():
        float_model = _float_model(base)
        x = _inputs(base)
        q = _quantize(float_model, fmt, per_channel, extra, (1, *x.shape[1:]),
                      name.endswith("_u8"))
        if name.endswith("_int8io"):
            q, (s, zp), _ = _int8io(q)
            x = np.clip(np.rint(x / np.float32(s)) + zp, -128, 127).astype(np.int8)
        files[f"{name}.onnx"] = q.SerializeToString()
        buf = io.BytesIO()
        np.savez(buf, x=x)
        files[f"{name}.npz"] = buf.getvalue()
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    files = build()
    changed = []
    for fname, data in files.items():
        path = os.path.join(OUT, fname)
        old = open(path, "rb").read() if os.path.exists(path) else None
        if fname.endswith(".npz") and old is not None:
            a, b = np.load(path), np.load(__import__("io").BytesIO(data))
            same = all(np.array_equal(a[k], b[k]) for k in b.files)
        else:
            same = old == data
        if not same:
            changed.append(fname)
            if not args.check:
                os.makedirs(OUT, exist_ok=True)
                with open(path, "wb") as f:
                    f.write(data)
    if args.check and changed:
        print(f"would change: {', '.join(changed)}", file=sys.stderr)
        return 1
    print(f"{len(files)} files, {len(changed)} {'differ' if args.check else 'written'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
