"""Pre-quantized ONNX models (QDQ pairs, QLinearMatMul, QLinearConv; frontends/onnx/
quantized.py) imported onto the zero-skew representation with the model's own scales and
zero points, against onnxruntime running the same model.

onnxruntime runs a QDQ MatMul / Conv (+ int32 bias) as QGemm / QLinearMatMul /
QLinearConv, which requantize in float32: RNE(float32(acc) * float32(float32(s_x s_w) /
s_y)) (MLAS's MlasRequantizeOutput). An imported model requantizes its accumulators the
same way (num.requantize mode onnxruntime, emulated with integers), so its output
integers must EQUAL onnxruntime's, and numpy's float32 evaluation of that formula (an
independent reference); the inputs are reals that quantize exactly (no tie at the input).
TFLite's rounding (the mode of models we quantize ourselves) differs from both on some
near-ties, which the tests also check, so they can tell the two apart. Also: the
quantization attributes on the L1, the weights stored as the model's int8, the C, and the
refusals."""

from __future__ import annotations

import re

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from minun_mlir.diagnostics import MinunError
from minun_mlir.dialects import minun, num
from minun_mlir.frontends.onnx import import_model
from minun_mlir.numerics.l2_eval import evaluate_l2
from minun_mlir.pipeline import lower_to_l2

SX, ZX = np.float32(0.03), 7  # the input's quantization
SY, ZY = np.float32(0.05), -12  # the output's


def model_of(nodes, inits: dict[str, np.ndarray], x_shape, y_shape):
    graph = helper.make_graph(
        nodes, "q", [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, y_shape)],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def scalar(v, dtype) -> np.ndarray:
    return np.array(v, dtype=dtype)


def run_both(model, q_in: np.ndarray, mode: str = "onnxruntime"
             ) -> tuple[np.ndarray, np.ndarray, object]:
    """(our output integers, onnxruntime's (from its float output), the L2 module) for a
    batch of input integers q_in (one model input each); mode "tflite" drops the import's
    requantization mode (TFLite's MBQM, for comparison)."""
    x = (SX * (q_in.astype(np.float32) - ZX)).astype(np.float32)  # exact reals of q_in
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    y = np.stack([sess.run(["Y"], {"X": xi})[0] for xi in x])
    theirs = np.rint(y.astype(np.float64) / SY).astype(np.int64) + ZY
    l1 = import_model(model)
    if mode == "tflite":
        next(iter(l1.ops)).attributes.pop("minun.requantize")
    l2 = lower_to_l2(l1, repr="zero-skew", bits=8)
    ours = evaluate_l2(l2, x[:, None].astype(np.float64)).outputs[0]
    return np.asarray(ours).reshape(theirs.shape), theirs, l2


def float32_reference(acc: np.ndarray, sw) -> np.ndarray:
    """numpy float32: clamp(RNE(float32(acc) * float32(float32(s_x s_w) / s_y)) + zp_y)."""
    scale = np.float32(np.float32(SX * np.float32(sw)) / SY)
    y = np.rint(np.asarray(acc, dtype=np.int64).astype(np.float32) * scale)
    return np.clip(y.astype(np.int64) + ZY, -128, 127)


def check(model, q_in: np.ndarray, acc: np.ndarray, sw) -> object:
    """Ours equal onnxruntime's and the float32 reference on every output; TFLite's
    rounding differs from them on at least one near-tie. Returns the L2 module."""
    ours, theirs, l2 = run_both(model, q_in)
    want = float32_reference(acc, sw).reshape(theirs.shape)
    np.testing.assert_array_equal(theirs, want)  # the reference is onnxruntime's formula
    np.testing.assert_array_equal(ours, theirs)
    tflite, _, _ = run_both(model, q_in, "tflite")
    assert np.max(np.abs(tflite - theirs)) == 1  # the near-ties the modes round apart
    return l2


def qdq(name: str, scale: str, zp: str) -> list:
    return [helper.make_node("QuantizeLinear", [name, scale, zp], [name + "_q"]),
            helper.make_node("DequantizeLinear", [name + "_q", scale, zp], [name + "_dq"])]


@pytest.mark.parametrize("seed", range(3))
def test_qdq_matmul_with_bias_equals_onnxruntime(seed):
    rng = np.random.default_rng(seed)
    k, n = 16, 5
    sw = np.float32(rng.uniform(0.004, 0.02))
    # |w| <= 64: onnxruntime's x86 int8 kernels without VNNI (AVX2's vpmaddubsw) sum two
    # u8 x s8 products in a saturating int16, which |w| <= 64 keeps exact on every CPU
    w = rng.integers(-64, 65, (k, n)).astype(np.int8)
    bias = rng.integers(-2000, 2000, (n,)).astype(np.int32)
    sb = np.float32(SX * sw)
    nodes = (qdq("X", "sx", "zx")
             + [helper.make_node("DequantizeLinear", ["W", "sw", "zw"], ["W_dq"]),
                helper.make_node("DequantizeLinear", ["B", "sb", "zb"], ["B_dq"]),
                helper.make_node("MatMul", ["X_dq", "W_dq"], ["P"]),
                helper.make_node("Add", ["P", "B_dq"], ["S"])]
             + qdq("S", "sy", "zy")
             + [helper.make_node("Identity", ["S_dq"], ["Y"])])
    inits = {"sx": scalar(SX, np.float32), "zx": scalar(ZX, np.int8), "W": w,
             "sw": scalar(sw, np.float32), "zw": scalar(0, np.int8), "B": bias,
             "sb": scalar(sb, np.float32), "zb": scalar(0, np.int32),
             "sy": scalar(SY, np.float32), "zy": scalar(ZY, np.int8)}
    model = model_of(nodes, inits, (1, k), (1, n))
    q_in = rng.integers(-128, 128, (400, 1, k))
    acc = (q_in - ZX) @ w.astype(np.int64) + bias
    l2 = check(model, q_in, acc, sw)
    # the model's own integers and types: W stored as given, the bias as given
    params = {op.sym_name.data: op for op in l2.walk() if isinstance(op, num.ParamOp)}
    w_param = next(p for name, p in params.items() if not name.endswith("_acc"))
    assert np.array_equal(w_param.array(), w)
    assert num.affine(w_param.result) == num.AffineType(8, float(sw), 0)
    b_param = next(p for name, p in params.items() if name.endswith("_acc"))
    assert np.array_equal(b_param.array().reshape(-1), bias)
    x_op = next(op for op in l2.walk() if isinstance(op, num.InputOp))
    assert num.affine(x_op.result) == num.AffineType(8, float(SX), ZX)
    modes = {op.requantize_mode() for op in l2.walk() if isinstance(op, num.RequantizeOp)}
    assert modes == {num.RequantizeMode.ONNXRUNTIME}


@pytest.mark.parametrize("pad", [0, 1])
def test_qlinear_conv_equals_onnxruntime(pad):
    rng = np.random.default_rng(5 + pad)
    c, cout, h = 2, 3, 5
    sw = np.float32(0.01)
    w = rng.integers(-127, 128, (cout, c, 3, 3)).astype(np.int8)
    bias = rng.integers(-500, 500, (cout,)).astype(np.int32)
    ho = h + 2 * pad - 2
    nodes = [helper.make_node("QuantizeLinear", ["X", "sx", "zx"], ["Xq"]),
             helper.make_node("QLinearConv", ["Xq", "sx", "zx", "W", "sw", "zw", "sy", "zy",
                                              "B"], ["C"], pads=[pad] * 4),
             helper.make_node("DequantizeLinear", ["C", "sy", "zy"], ["Y"])]
    inits = {"sx": scalar(SX, np.float32), "zx": scalar(ZX, np.int8), "W": w,
             "sw": scalar(sw, np.float32), "zw": scalar(0, np.int8), "B": bias,
             "sy": scalar(SY, np.float32), "zy": scalar(ZY, np.int8)}
    model = model_of(nodes, inits, (1, c, h, h), (1, cout, ho, ho))
    q_in = rng.integers(-128, 128, (300, 1, c, h, h))
    xp = np.pad(q_in[:, 0] - ZX, ((0, 0), (0, 0), (pad, pad), (pad, pad)))  # pads add 0
    acc = np.stack([np.einsum("bchw,ochw->bo", xp[:, :, i:i + 3, j:j + 3], w.astype(np.int64))
                    for i in range(ho) for j in range(ho)], axis=-1)
    acc = acc.reshape(len(q_in), 1, cout, ho, ho) + bias[:, None, None]
    l2 = check(model, q_in, acc, sw)
    # and the generated C (built for the host) computes the evaluator's integers
    from minun_mlir.native import NativeProgram

    x = (SX * (q_in.astype(np.float32) - ZX)).astype(np.float64)[:, None]
    ours = evaluate_l2(l2, x).outputs[0]
    assert np.array_equal(NativeProgram(l2).outputs(x)[0], ours)


def test_qlinear_matmul_equals_onnxruntime():
    rng = np.random.default_rng(9)
    sw = np.float32(0.02)
    w = rng.integers(-127, 128, (12, 4)).astype(np.int8)
    nodes = [helper.make_node("QuantizeLinear", ["X", "sx", "zx"], ["Xq"]),
             helper.make_node("QLinearMatMul", ["Xq", "sx", "zx", "W", "sw", "zw", "sy",
                                                "zy"], ["Q"]),
             helper.make_node("DequantizeLinear", ["Q", "sy", "zy"], ["Y"])]
    inits = {"sx": scalar(SX, np.float32), "zx": scalar(ZX, np.int8), "W": w,
             "sw": scalar(sw, np.float32), "zw": scalar(0, np.int8),
             "sy": scalar(SY, np.float32), "zy": scalar(ZY, np.int8)}
    model = model_of(nodes, inits, (3, 12), (3, 4))
    q_in = rng.integers(-128, 128, (300, 3, 12))
    check(model, q_in, (q_in - ZX) @ w.astype(np.int64), sw)


def test_the_l1_carries_the_quantization_and_other_representations_ignore_it():
    w = np.arange(-6, 6, dtype=np.int8).reshape(4, 3)
    nodes = (qdq("X", "sx", "zx")
             + [helper.make_node("DequantizeLinear", ["W", "sw", "zw"], ["W_dq"]),
                helper.make_node("MatMul", ["X_dq", "W_dq"], ["P"])]
             + qdq("P", "sy", "zy") + [helper.make_node("Identity", ["P_dq"], ["Y"])])
    inits = {"sx": scalar(SX, np.float32), "zx": scalar(ZX, np.int8), "W": w,
             "sw": scalar(0.5, np.float32), "zw": scalar(0, np.int8),
             "sy": scalar(SY, np.float32), "zy": scalar(ZY, np.int8)}
    l1 = import_model(model_of(nodes, inits, (1, 4), (1, 3)))
    ops = {type(op): op for op in l1.walk()}
    assert ops[minun.InputOp].attributes["quantization"].get_values() == (float(SX), ZX)
    assert ops[minun.ParamOp].attributes["quantization"].get_values() == (0.5, 0.0)
    assert ops[minun.MatMulOp].attributes["quantization"].get_values() == (float(SY), ZY)
    np.testing.assert_array_equal(ops[minun.ParamOp].array(), 0.5 * w)
    fixed = lower_to_l2(l1, bits=16, synthetic=8)  # fixed point: the float model
    assert not [op for op in fixed.walk() if isinstance(op, num.RequantizeOp)]


@pytest.mark.parametrize("what,scale,zp,message", [
    ("per-axis", np.array([0.1, 0.2], dtype=np.float32), np.array([0, 0], dtype=np.int8),
     "per-axis scales (2 of them) are not supported"),
    ("int16", np.float32(0.1), np.int16(128), "zero point of type int16 and size 1: only one "
     "int8 or uint8"),
])
def test_unsupported_quantizations_are_refused_by_node(what, scale, zp, message):
    nodes = [helper.make_node("QuantizeLinear", ["X", "s", "z"], ["Xq"], name="q1"),
             helper.make_node("DequantizeLinear", ["Xq", "s", "z"], ["Y"])]
    inits = {"s": np.asarray(scale), "z": np.asarray(zp)}
    with pytest.raises(MinunError, match=re.escape(f"node 'q1' (QuantizeLinear): {message}")):
        import_model(model_of(nodes, inits, (1, 2), (1, 2)))


# 7-bit weights (onnxruntime's own advice for x86 without VNNI): its int8 kernels there
# (AVX2's vpmaddubsw) add two u8 x s8 products in a saturating int16, so full-range int8
# weights give CPU-dependent results (measured: up to 5 off on the residual CNN on an AVX2
# EPYC); at |w| <= 64 they are exact on every CPU, and our import is the same either way
REDUCE_RANGE = True


def ort_per_channel_qdq(model, x_calib: np.ndarray, tmp_path):
    """onnxruntime's static quantization of a float model: QDQ, per-channel symmetric int8
    weights, int8 activations, MinMax calibration on x_calib."""
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"X": x[None].astype(np.float32)} for x in x_calib])

        def get_next(self):
            return next(self.it, None)

    src, dst = tmp_path / "float.onnx", tmp_path / "qdq.onnx"
    onnx.save(model, src)
    quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, reduce_range=REDUCE_RANGE)
    return onnx.load(dst)


@pytest.mark.parametrize("kind", ["conv", "matmul"])
def test_ort_per_channel_qdq_model_equals_onnxruntime(kind, tmp_path):
    """An onnxruntime per-channel QDQ model (its quantize_static, per_channel=True) imported
    with the model's per-channel scales: the stored int8 weights and int32 biases are the
    model's. Its float inputs (random, so some fall near a rounding tie of x / s_x) are
    quantized as onnxruntime's QuantizeLinear. The convolution (onnxruntime: QLinearConv,
    relu folded into the output's zero point -128) and the matmul (QLinearMatMul, then
    the Add of a quantized constant, which onnxruntime runs in float32: DequantizeLinear,
    Add, QuantizeLinear) equal onnxruntime on every output."""
    rng = np.random.default_rng(11)
    if kind == "conv":
        c, cout, h = 3, 6, 8
        w = (rng.normal(0, 0.3, (cout, c, 3, 3)) * rng.uniform(0.1, 2, (cout, 1, 1, 1))
             ).astype(np.float32)
        b = rng.normal(0, 0.2, cout).astype(np.float32)
        nodes = [helper.make_node("Conv", ["X", "W", "B"], ["C"], pads=[1, 1, 1, 1]),
                 helper.make_node("Relu", ["C"], ["Y"])]
        x_shape, y_shape = (1, c, h, h), (1, cout, h, h)
    else:
        k, n = 20, 6
        w = (rng.normal(0, 0.3, (k, n)) * rng.uniform(0.1, 2, (1, n))).astype(np.float32)
        b = rng.normal(0, 0.2, n).astype(np.float32)
        nodes = [helper.make_node("MatMul", ["X", "W"], ["P"]),
                 helper.make_node("Add", ["P", "B"], ["Y"])]
        x_shape, y_shape = (1, k), (1, n)
    model = model_of(nodes, {"W": w, "B": b}, x_shape, y_shape)
    calib = rng.normal(0, 1, (32, *x_shape[1:])).astype(np.float32)
    qdq_model = ort_per_channel_qdq(model, calib, tmp_path)
    inits = {i.name: numpy_helper.to_array(i) for i in qdq_model.graph.initializer}
    w_q = next(v for v in inits.values() if v.dtype == np.int8 and v.ndim == w.ndim)
    w_scale = next(v for v in inits.values() if v.dtype == np.float32 and v.ndim == 1
                   and v.size == w_q.shape[0 if kind == "conv" else 1])
    l2 = lower_to_l2(import_model(qdq_model), repr="zero-skew", bits=8)
    params = {op.sym_name.data: op for op in l2.walk() if isinstance(op, num.ParamOp)}
    weight = next(p for p in params.values() if num.affine(p.result).width == 8)
    assert weight.real_scales() == [float(v) for v in w_scale]
    stored = weight.array()
    want = w_q.transpose(2, 3, 1, 0)[None] if kind == "conv" else w_q  # minun's layout
    assert np.array_equal(stored, want)
    assert any(isinstance(op, num.RequantizeOp) and op.channels() is not None
               for op in l2.walk())
    # the output's quantization: the last QuantizeLinear's
    q_last = [nd for nd in qdq_model.graph.node if nd.op_type == "QuantizeLinear"][-1]
    s_y, z_y = float(inits[q_last.input[1]]), int(inits[q_last.input[2]])
    x = rng.normal(0, 1, (200, *x_shape[1:])).astype(np.float32)
    sess = ort.InferenceSession(qdq_model.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    theirs = np.stack([np.rint(sess.run(None, {"X": xi[None]})[0].astype(np.float64) / s_y)
                       + z_y for xi in x]).astype(np.int64)
    ours = np.asarray(evaluate_l2(l2, x[:, None].astype(np.float64)).outputs[0])
    out_type = num.affine(next(op for op in l2.walk()
                               if op.name == "func.return").operands[0])
    assert (out_type.real_scale, out_type.zp) == (s_y, z_y)
    ours, theirs = ours.reshape(len(x), -1), theirs.reshape(len(x), -1)
    np.testing.assert_array_equal(ours, theirs)



@pytest.mark.parametrize("op", ["Add", "Sub", "Mul"])
def test_qdq_add_equals_onnxruntime(op):
    """A QDQ Add (Sub, Mul) of the quantized input and a quantized constant, which
    onnxruntime (1.31, CPU) leaves in float32: DequantizeLinear, Add, QuantizeLinear.
    Ours (num.add / num.sub / num.mul mode onnxruntime) equals it and numpy's float32
    evaluation of those three steps on every output; TFLite's arithmetic differs on
    near-ties (measured: 2,007 of 192,000 outputs of the Add for 3,000 inputs, 441 of
    64,000 of the Mul for 1,000)."""
    rng = np.random.default_rng(0)
    n = 64
    c = rng.integers(-128, 128, (1, n)).astype(np.int8)
    sc, zc = np.float32(0.021), 5
    nodes = (qdq("X", "sx", "zx")
             + [helper.make_node("DequantizeLinear", ["C", "sc", "zc"], ["C_dq"]),
                helper.make_node(op, ["X_dq", "C_dq"], ["S"])]
             + qdq("S", "sy", "zy") + [helper.make_node("Identity", ["S_dq"], ["Y"])])
    inits = {"sx": scalar(SX, np.float32), "zx": scalar(ZX, np.int8), "C": c,
             "sc": scalar(sc, np.float32), "zc": scalar(zc, np.int8),
             "sy": scalar(SY, np.float32), "zy": scalar(ZY, np.int8)}
    model = model_of(nodes, inits, (1, n), (1, n))
    q_in = rng.integers(-128, 128, (300, 1, n))
    ours, theirs, l2 = run_both(model, q_in)
    fa = (q_in - ZX).astype(np.float32) * SX
    fb = (c.astype(np.int64) - zc).astype(np.float32) * sc
    f = {"Add": fa + fb, "Sub": fa - fb, "Mul": fa * fb}[op]
    y = np.rint(f / SY).astype(np.int64)
    want = np.clip(y + ZY, -128, 127).reshape(ours.shape)
    np.testing.assert_array_equal(theirs, want)
    np.testing.assert_array_equal(ours, theirs)
    assert any(o.name == f"num.{op.lower()}" and o.mode is not None for o in l2.walk())
    tflite, _, _ = run_both(model, q_in, "tflite")
    assert np.max(np.abs(tflite - theirs)) == 1


def residual_cnn() -> tuple:
    """A float CNN (Conv, Relu, Conv, residual Add, Relu, MaxPool, Flatten, Gemm) with
    random weights, and 64 calibration inputs."""
    rng = np.random.default_rng(5)
    c, h = 3, 8
    inits = {"W1": rng.normal(0, 0.3, (4, c, 3, 3)), "B1": rng.normal(0, 0.1, 4),
             "W2": rng.normal(0, 0.3, (4, 4, 3, 3)), "B2": rng.normal(0, 0.1, 4),
             "W3": rng.normal(0, 0.3, (64, 5)), "B3": rng.normal(0, 0.1, 5)}
    nodes = [helper.make_node("Conv", ["X", "W1", "B1"], ["c1"], pads=[1] * 4),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "W2", "B2"], ["c2"], pads=[1] * 4),
             helper.make_node("Add", ["c2", "r1"], ["a"]),
             helper.make_node("Relu", ["a"], ["r2"]),
             helper.make_node("MaxPool", ["r2"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "W3", "B3"], ["Y"])]
    model = model_of(nodes, {k: v.astype(np.float32) for k, v in inits.items()},
                     (1, c, h, h), (1, 5))
    return model, rng.normal(0, 1, (64, c, h, h)).astype(np.float32), rng


@pytest.mark.parametrize("per_channel", [False, True])
def test_ort_quantized_residual_cnn_equals_onnxruntime(per_channel, tmp_path):
    """onnxruntime's quantize_static of a residual CNN, 500 random inputs. onnxruntime
    (1.31, CPU) runs its Gemm as QGemm, MaxPool on int8, and leaves both convolutions and
    the Add in float32 between DequantizeLinear and QuantizeLinear. The Add and every
    requantization are emulated; a convolution's float32 sum (in MLAS's order) is not, so
    ours may differ by 1 where its exact value is within about 2^-20 of a tie: on at most
    2 outputs (measured 0 of 10,000 per tensor, 1 of 10,000 per channel, for 2,000
    inputs), against 478 and 490 with TFLite's rounding."""
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    model, calib, rng = residual_cnn()

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"X": x[None]} for x in calib])

        def get_next(self):
            return next(self.it, None)

    onnx.save(model, tmp_path / "float.onnx")
    quantize_static(str(tmp_path / "float.onnx"), str(tmp_path / "q.onnx"), Reader(),
                    quant_format=QuantFormat.QDQ, per_channel=per_channel,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    reduce_range=REDUCE_RANGE)
    qm = onnx.load(tmp_path / "q.onnx")
    inits = {i.name: numpy_helper.to_array(i) for i in qm.graph.initializer}
    q_last = [nd for nd in qm.graph.node if nd.op_type == "QuantizeLinear"][-1]
    s_y, z_y = float(inits[q_last.input[1]]), int(inits[q_last.input[2]])
    x = rng.normal(0, 1, (500, *calib.shape[1:])).astype(np.float32)
    sess = ort.InferenceSession(qm.SerializeToString(), providers=["CPUExecutionProvider"])
    theirs = np.stack([np.rint(sess.run(None, {"X": xi[None]})[0].astype(np.float64) / s_y)
                       + z_y for xi in x]).astype(np.int64).reshape(len(x), -1)
    counts = {}
    for mode in ("onnxruntime", "tflite"):
        l1 = import_model(qm)
        if mode == "tflite":
            next(iter(l1.ops)).attributes.pop("minun.requantize")
        l2 = lower_to_l2(l1, repr="zero-skew", bits=8)
        ours = np.asarray(evaluate_l2(l2, x[:, None].astype(np.float64)).outputs[0])
        ours = ours.reshape(theirs.shape)
        assert np.max(np.abs(ours - theirs)) <= 1
        counts[mode] = int(np.sum(ours != theirs))
    assert counts["onnxruntime"] <= 2 and counts["tflite"] >= 40, counts


@pytest.mark.parametrize("op", ["Relu", "MaxPool", "Concat", "Reshape"])
def test_an_op_requantized_by_the_model_equals_onnxruntime(op):
    """A Relu, MaxPool, Concat (with a quantized constant) or Reshape whose output the
    model quantizes again with its own (scale, zero point): onnxruntime runs the op in
    float32 between DequantizeLinear and QuantizeLinear; ours requantizes the int8 value
    to the given type as those two steps do (num.requantize mode onnxruntime of an int8
    value; a concat's operands straight to it). Equal on every output; before, the
    given type was ignored (the output kept its input's quantization)."""
    rng = np.random.default_rng(3)
    x_shape, y_shape = (1, 1, 8, 8), (1, 1, 8, 8)
    inits = {"sx": scalar(SX, np.float32), "zx": scalar(ZX, np.int8),
             "sy": scalar(SY, np.float32), "zy": scalar(ZY, np.int8)}
    body = {"Relu": [helper.make_node("Relu", ["X_dq"], ["S"])],
            "MaxPool": [helper.make_node("MaxPool", ["X_dq"], ["S"], kernel_shape=[2, 2],
                                         strides=[2, 2])],
            "Concat": [helper.make_node("DequantizeLinear", ["C", "sc", "zc"], ["C_dq"]),
                       helper.make_node("Concat", ["X_dq", "C_dq"], ["S"], axis=1)],
            "Reshape": [helper.make_node("Reshape", ["X_dq", "shape"], ["S"])]}[op]
    if op == "MaxPool":
        y_shape = (1, 1, 4, 4)
    if op == "Concat":
        y_shape = (1, 2, 8, 8)
        inits |= {"C": rng.integers(-128, 128, x_shape).astype(np.int8),
                  "sc": scalar(0.021, np.float32), "zc": scalar(5, np.int8)}
    if op == "Reshape":
        y_shape = (1, 64)
        inits["shape"] = np.array(y_shape, dtype=np.int64)
    nodes = qdq("X", "sx", "zx") + body + qdq("S", "sy", "zy") + [
        helper.make_node("Identity", ["S_dq"], ["Y"])]
    q_in = rng.integers(-128, 128, (200, *x_shape))
    ours, theirs, l2 = run_both(model_of(nodes, inits, x_shape, y_shape), q_in)
    np.testing.assert_array_equal(ours, theirs)
    out = num.affine(next(o for o in l2.walk() if o.name == "func.return").operands[0])
    assert (out.real_scale, out.zp) == (float(SY), ZY)
