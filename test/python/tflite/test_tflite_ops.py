"""Each supported TFLite operator, int8, in a one-operator model built here
(tflite_builder.py), against TFLM's interpreter (the `tflite-micro` package) on random
int8 inputs: the bit-exact evaluator's integers equal TFLM's, or, for the operators whose
integer kernel differs (docs/tflite-frontend.md), stay within the stated bound. Also the
float32 forms, the QUANTIZE / DEQUANTIZE pair and micro_speech's layers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tflite
from tflite_builder import ModelBuilder
from tflite_micro.python.tflite_micro import runtime

from minun_mlir.codegen import emit_c
from minun_mlir.frontends.tflite import import_model
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2, storage_inputs
from minun_mlir.pipeline import lower_to_l2
from minun_mlir.targets import run_model

SX, ZX = 0.06, 4  # the input's quantization
N = 12  # random inputs per model
SPEECH = Path(__file__).resolve().parents[2] / "zoo/tflite/micro_speech/micro_speech_quantized.tflite"


def assert_c_equals_evaluator(l2, x: np.ndarray, tmp_path: Path, name: str) -> None:
    """The zero-skew program's C, built for this machine, stores the evaluator's integers
    for every row of x."""
    stored = np.asarray(evaluate_l2(l2, x).outputs[0]).reshape(len(x), -1)
    emit_c(l2, "x86", tmp_path / "c")
    r = run_model(tmp_path / "c", "x86", storage_inputs(l2, x), name=name,
                  config="zero-skew8")
    np.testing.assert_array_equal(np.asarray(r.outputs).reshape(stored.shape), stored)


def compare(data: bytes, tmp_path: Path, xshape, seed: int = 0, sx=SX, zx=ZX, n=N):
    """(our integers, TFLM's) on n random int8 inputs of the model's one input."""
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    qs = np.random.default_rng(seed).integers(-128, 128, (n, *xshape)).astype(np.int8)
    interp = runtime.Interpreter.from_file(str(path))
    theirs = []
    for q in qs:
        interp.set_input(q, 0)
        interp.invoke()
        theirs.append(interp.get_output(0).copy())
    theirs = np.array(theirs).astype(np.int64)
    x = (np.float32(sx) * (qs.astype(np.float32) - zx)).astype(np.float64)
    l2 = lower_to_l2(import_model(path), repr="zero-skew", bits=8)
    ours = np.asarray(evaluate_l2(l2, x).outputs[0]).reshape(theirs.shape)
    return ours, theirs


def conv_model(depthwise: bool, padding: int, stride: int, act: int, mult: int = 1,
               per_channel: bool = True, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    m = ModelBuilder()
    x = m.tensor([1, 9, 9, 3], "int8", scale=SX, zp=ZX)
    co = 3 * mult if depthwise else 4
    shape, axis = ((1, 3, 3, co), 3) if depthwise else ((co, 3, 3, 3), 0)
    w = rng.integers(-127, 128, shape).astype(np.int8)
    sw = rng.uniform(0.002, 0.01, co) if per_channel else np.full(1, 0.006)
    wt = m.tensor(shape, "int8", data=w, scale=sw, zp=[0] * len(sw), axis=axis)
    sb = np.float32(SX) * sw.astype(np.float32)
    bt = m.tensor([co], "int32", data=rng.integers(-3000, 3000, co), scale=sb,
                  zp=[0] * len(sb))
    out = -(-9 // stride) if padding == tflite.Padding.SAME else (9 - 3) // stride + 1
    y = m.tensor([1, out, out, co], "int8", scale=0.08, zp=5)
    common = dict(Padding=padding, StrideW=stride, StrideH=stride,
                  FusedActivationFunction=act, DilationWFactor=1, DilationHFactor=1)
    if depthwise:
        m.op("DEPTHWISE_CONV_2D", [x, wt, bt], [y], "DepthwiseConv2DOptions",
             DepthMultiplier=mult, **common)
    else:
        m.op("CONV_2D", [x, wt, bt], [y], "Conv2DOptions", **common)
    return m.build([x], [y])


SAME, VALID = tflite.Padding.SAME, tflite.Padding.VALID
RELU, RELU6 = tflite.ActivationFunctionType.RELU, tflite.ActivationFunctionType.RELU6


@pytest.mark.parametrize(("depthwise", "padding", "stride", "act", "mult", "per_channel"), [
    (False, SAME, 2, RELU, 1, True), (False, VALID, 1, RELU6, 1, True),
    (True, SAME, 2, RELU, 1, True), (True, VALID, 1, RELU6, 1, True),
    (True, SAME, 1, 0, 2, False), (True, SAME, 1, 0, 2, True), (True, VALID, 2, RELU6, 3, True)])
def test_convolutions_equal_tflm(depthwise, padding, stride, act, mult, per_channel,
                                 tmp_path):
    data = conv_model(depthwise, padding, stride, act, mult, per_channel)
    ours, theirs = compare(data, tmp_path, [1, 9, 9, 3])
    np.testing.assert_array_equal(ours, theirs)


def test_split_depthwise_c_equals_the_evaluator(tmp_path):
    """A per-channel depthwise convolution of multiplier 3 (imported as 3 of multiplier 1,
    interleaved): the x86 C equals the evaluator."""
    path = tmp_path / "dw.tflite"
    path.write_bytes(conv_model(True, VALID, 2, RELU6, 3, True))
    l2 = lower_to_l2(import_model(path), repr="zero-skew", bits=8)
    q = np.random.default_rng(6).integers(-128, 128, (4, 1, 9, 9, 3))
    x = (np.float32(SX) * (q.astype(np.float32) - ZX)).astype(np.float64)
    assert_c_equals_evaluator(l2, x, tmp_path, "dw")


def one_op(op: str, options: str | None, out_shape, out_scale=SX, out_zp=ZX,
           in_shape=(1, 8, 8, 3), const_in=None, **fields) -> bytes:
    m = ModelBuilder()
    x = m.tensor(list(in_shape), "int8", scale=SX, zp=ZX)
    ins = [x]
    if const_in is not None:
        ins.append(const_in(m))
    y = m.tensor(list(out_shape), "int8", scale=out_scale, zp=out_zp)
    m.op(op, ins, [y], options, **fields)
    return m.build([x], [y])


POOL = dict(StrideW=2, StrideH=2, FilterWidth=3, FilterHeight=3)
EXACT = {
    "max_pool_same": lambda: one_op("MAX_POOL_2D", "Pool2DOptions", (1, 4, 4, 3),
                                    Padding=SAME, **POOL),
    "average_pool_valid": lambda: one_op("AVERAGE_POOL_2D", "Pool2DOptions", (1, 3, 3, 3),
                                         Padding=VALID, **POOL),
    "average_pool_same": lambda: one_op("AVERAGE_POOL_2D", "Pool2DOptions", (1, 4, 4, 3),
                                        Padding=SAME, **POOL),
    "average_pool_2x2": lambda: one_op("AVERAGE_POOL_2D", "Pool2DOptions", (1, 4, 4, 3),
                                       Padding=VALID, StrideW=2, StrideH=2, FilterWidth=2,
                                       FilterHeight=2),
    "logistic": lambda: one_op("LOGISTIC", None, (1, 8, 8, 3), 1 / 256, -128),
    "tanh": lambda: one_op("TANH", None, (1, 8, 8, 3), 1 / 128, 0),
    "reshape": lambda: one_op("RESHAPE", None, (1, 192)),
    "softmax": lambda: one_op("SOFTMAX", "SoftmaxOptions", (1, 10), 1 / 256, -128,
                              in_shape=(1, 10), Beta=1.0),
    "add": lambda: one_op("ADD", "AddOptions", (1, 8, 8, 3), 0.1, -7,
                          const_in=_addend, FusedActivationFunction=0),
    "add_relu": lambda: one_op("ADD", "AddOptions", (1, 8, 8, 3), 0.1, -7,
                               const_in=_addend, FusedActivationFunction=RELU),
    "sub": lambda: one_op("SUB", "SubOptions", (1, 8, 8, 3), 0.1, -7, const_in=_addend,
                          FusedActivationFunction=0),
    "mul": lambda: one_op("MUL", "MulOptions", (1, 8, 8, 3), 0.1, -7, const_in=_addend,
                          FusedActivationFunction=0),
    "relu_rescaled": lambda: one_op("RELU", None, (1, 8, 8, 3), 0.03, -128),
    "relu6": lambda: one_op("RELU6", None, (1, 8, 8, 3)),
}


def _addend(m: ModelBuilder) -> int:
    c = np.random.default_rng(1).integers(-128, 128, (1, 8, 8, 3)).astype(np.int8)
    return m.tensor([1, 8, 8, 3], "int8", data=c, scale=0.045, zp=-10)


@pytest.mark.parametrize("name", sorted(EXACT))
def test_operator_equals_tflm(name, tmp_path):
    shape = [1, 10] if name == "softmax" else [1, 8, 8, 3]
    ours, theirs = compare(EXACT[name](), tmp_path, shape, n=40 if name == "softmax" else N)
    np.testing.assert_array_equal(ours, theirs)
    assert len(np.unique(theirs)) > 10


def mean_model(h: int, w: int, c: int, s_in, z_in, s_out, z_out, keep: bool = True
               ) -> bytes:
    m = ModelBuilder()
    x = m.tensor([1, h, w, c], "int8", scale=s_in, zp=z_in)
    axes = m.tensor([2], "int32", data=np.array([1, 2]))
    y = m.tensor([1, 1, 1, c] if keep else [1, c], "int8", scale=s_out, zp=z_out)
    m.op("MEAN", [x, axes], [y], "ReducerOptions", KeepDims=keep)
    return m.build([x], [y])


MEANS = [(8, 8, 3, 0.06, 4, 0.03, -2), (5, 5, 16, 0.02, -128, 0.01, -128),
         (7, 7, 8, 0.1, -10, 0.05, 3), (3, 5, 4, 0.05, 0, 0.05, 0)]


@pytest.mark.parametrize("case", MEANS, ids=lambda c: "x".join(map(str, c[:3])))
def test_mean_over_h_and_w_equals_tflm(case, tmp_path):
    """TFLM folds 1/n into the requantization multiplier (num.requantize's divisor)."""
    h, w, c, s_in, z_in, s_out, z_out = case
    ours, theirs = compare(mean_model(*case), tmp_path, [1, h, w, c], sx=s_in, zx=z_in,
                           n=40)
    np.testing.assert_array_equal(ours, theirs)


def test_average_pool_c_equals_the_evaluator(tmp_path):
    """SAME: the border windows' counts from the C's table."""
    path = tmp_path / "pool.tflite"
    path.write_bytes(EXACT["average_pool_same"]())
    l2 = lower_to_l2(import_model(path), repr="zero-skew", bits=8)
    assert "num.avgpool" in str(l2) and "num.conv2d" not in str(l2)
    q = np.random.default_rng(7).integers(-128, 128, (6, 1, 8, 8, 3))
    x = (np.float32(SX) * (q.astype(np.float32) - ZX)).astype(np.float64)
    assert_c_equals_evaluator(l2, x, tmp_path, "pool")


def test_mean_c_equals_the_evaluator(tmp_path):
    path = tmp_path / "mean.tflite"
    path.write_bytes(mean_model(*MEANS[2]))
    l2 = lower_to_l2(import_model(path), repr="zero-skew", bits=8)
    assert "divisor = 49" in str(l2)
    q = np.random.default_rng(5).integers(-128, 128, (6, 1, 7, 7, 8))
    x = (np.float32(0.1) * (q.astype(np.float32) + 10)).astype(np.float64)
    assert_c_equals_evaluator(l2, x, tmp_path, "mean")


def _quantized_fc(rng):
    """A model builder holding float x -> QUANTIZE -> int8 FULLY_CONNECTED (4 x 6, seeded
    weights and biases) -> int8 y: (builder, x, y)."""
    m = ModelBuilder()
    x = m.tensor([1, 6], "float32")
    xq = m.tensor([1, 6], "int8", scale=SX, zp=ZX)
    w = m.tensor([4, 6], "int8", data=rng.integers(-127, 128, (4, 6)), scale=0.01, zp=0)
    b = m.tensor([4], "int32", data=rng.integers(-500, 500, 4),
                 scale=np.float32(SX) * np.float32(0.01), zp=0)
    y = m.tensor([1, 4], "int8", scale=0.05, zp=3)
    m.op("QUANTIZE", [x], [xq])
    m.op("FULLY_CONNECTED", [xq, w, b], [y], "FullyConnectedOptions",
         FusedActivationFunction=0)
    return m, x, y


def test_quantize_dequantize_around_an_int8_layer(tmp_path):
    """float in -> QUANTIZE -> int8 FULLY_CONNECTED -> DEQUANTIZE -> float out: the
    evaluator's reals are TFLM's, the int8 path's integers exactly."""
    rng = np.random.default_rng(2)
    m, x, yq = _quantized_fc(rng)
    y = m.tensor([1, 4], "float32")
    m.op("DEQUANTIZE", [yq], [y])
    path = tmp_path / "model.tflite"
    path.write_bytes(m.build([x], [y]))
    q = rng.integers(-128, 128, (N, 1, 6))
    xs = (np.float32(SX) * (q - ZX)).astype(np.float32)  # reals that quantize exactly
    interp = runtime.Interpreter.from_file(str(path))
    theirs = []
    for v in xs:
        interp.set_input(v, 0)
        interp.invoke()
        theirs.append(interp.get_output(0).copy())
    theirs = np.array(theirs).reshape(N, -1)
    l2 = lower_to_l2(import_model(path), repr="zero-skew", bits=8)
    ours = np.asarray(decode_outputs(l2, evaluate_l2(l2, xs.astype(np.float64)).outputs)[0])
    np.testing.assert_array_equal(np.rint(ours.reshape(N, -1) / np.float32(0.05)),
                                  np.rint(theirs / np.float32(0.05)))


def speech_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """n random int8 feature maps (half of them spectrogram-like: mostly low values) and
    their reals."""
    rng = np.random.default_rng(3)
    q = rng.integers(-128, 128, (n, 1, 1960))
    q[n // 2:] = np.clip(rng.normal(-100, 30, (n - n // 2, 1, 1960)), -128, 127)
    return q, (SPEECH_SCALE * (q.astype(np.float32) + 128)).astype(np.float64)


SPEECH_SCALE = np.float32(0.10171568393707275)  # micro_speech's input quantization


def test_micro_speech_equals_tflm(tmp_path):
    """micro_speech (RESHAPE, per-channel DEPTHWISE_CONV_2D, FULLY_CONNECTED, SOFTMAX):
    TFLM's integers exactly, at the softmax (TFLite's own kernel) and before it (the
    graph output moved to the FULLY_CONNECTED's)."""
    ours, theirs = compare(SPEECH.read_bytes(), tmp_path, [1, 1960], sx=SPEECH_SCALE,
                           zx=-128, n=16)
    np.testing.assert_array_equal(ours, theirs)
    assert len(np.unique(theirs.argmax(-1))) > 1
    data = bytearray(SPEECH.read_bytes())
    g = tflite.Model.GetRootAsModel(bytes(data), 0).Subgraphs(0)
    fc = int(g.Operators(2).Outputs(0))
    at = g._tab.Vector(g._tab.Offset(8))  # SubGraph.outputs[0]
    data[at:at + 4] = fc.to_bytes(4, "little")
    ours, theirs = compare(bytes(data), tmp_path, [1, 1960], sx=SPEECH_SCALE, zx=-128, n=8)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("target", ["x86", pytest.param("cortex-m4", marks=pytest.mark.slow)])
def test_micro_speech_c_equals_the_evaluator(target, tmp_path):
    l2 = lower_to_l2(import_model(SPEECH), repr="zero-skew", bits=8)
    assert "num.softmax" in str(l2) and "{tflite}" in str(l2)
    _, x = speech_inputs(4)
    stored = np.asarray(evaluate_l2(l2, x).outputs[0]).reshape(4, -1)
    emit_c(l2, target, tmp_path)
    r = run_model(tmp_path, target, storage_inputs(l2, x), name="micro_speech",
                  config="zero-skew8")
    np.testing.assert_array_equal(np.asarray(r.outputs).reshape(stored.shape), stored)


def test_the_tflite_softmax_takes_only_tflite_s_output_type():
    from xdsl.utils.exceptions import VerifyException

    from minun_mlir.dialects import num

    l2 = lower_to_l2(import_model(SPEECH), repr="zero-skew", bits=8)
    op = next(o for o in l2.walk() if isinstance(o, num.SoftmaxOp))
    op.verify()
    shape = op.result.type.get_shape()
    bad = num.SoftmaxOp.create(operands=[op.input], attributes={"tflite": op.tflite},
                               result_types=[num.tensor_of(shape, num.AffineType(
                                   8, 1 / 255, -128))])
    with pytest.raises(VerifyException, match="tflite takes"):
        bad.verify()


def test_a_custom_operator_is_a_located_error(tmp_path):
    from minun_mlir.diagnostics import MinunError

    m = ModelBuilder()
    x = m.tensor([1, 4], "float32")
    h = m.tensor([1, 4], "float32")
    y = m.tensor([1, 4], "float32")
    m.op("RELU", [x], [h])
    m.op("CUSTOM", [h], [y], custom="MyFancyOp")
    path = tmp_path / "custom.tflite"
    path.write_bytes(m.build([x], [y]))
    with pytest.raises(MinunError) as info:
        import_model(path)
    assert str(info.value).startswith(
        f"{path}: error: operator 1 (CUSTOM 'MyFancyOp'): not supported"), str(info.value)


def pad_then(op: str) -> bytes:
    """PAD [[0, 0], [1, 2], [2, 1], [0, 0]] of an int8 [1, 9, 9, 3], then `op`."""
    rng = np.random.default_rng(4)
    m = ModelBuilder()
    x = m.tensor([1, 9, 9, 3], "int8", scale=SX, zp=ZX)
    paddings = m.tensor([4, 2], "int32", data=np.array([[0, 0], [1, 2], [2, 1], [0, 0]]))
    p = m.tensor([1, 12, 12, 3], "int8", scale=SX, zp=ZX)
    m.op("PAD", [x, paddings], [p], "PadOptions")
    if op == "MAX_POOL_2D":
        y = m.tensor([1, 5, 5, 3], "int8", scale=SX, zp=ZX)
        m.op(op, [p], [y], "Pool2DOptions", Padding=VALID, **POOL)
        return m.build([x], [y])
    depthwise = op == "DEPTHWISE_CONV_2D"
    shape, co = ((1, 3, 3, 3), 3) if depthwise else ((4, 3, 3, 3), 4)
    w = m.tensor(shape, "int8", data=rng.integers(-127, 128, shape), scale=0.005, zp=0)
    b = m.tensor([co], "int32", data=rng.integers(-900, 900, co),
                 scale=np.float32(SX) * np.float32(0.005), zp=0)
    y = m.tensor([1, 5, 5, co], "int8", scale=0.08, zp=5)
    common = dict(Padding=VALID, StrideW=2, StrideH=2, FusedActivationFunction=0,
                  DilationWFactor=1, DilationHFactor=1)
    if depthwise:
        m.op(op, [p, w, b], [y], "DepthwiseConv2DOptions", DepthMultiplier=1, **common)
    else:
        m.op(op, [p, w, b], [y], "Conv2DOptions", **common)
    return m.build([x], [y])


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_pad_before_a_convolution_equals_tflm(op, tmp_path):
    ours, theirs = compare(pad_then(op), tmp_path, [1, 9, 9, 3])
    np.testing.assert_array_equal(ours, theirs)


def test_pad_before_a_pooling_equals_tflm(tmp_path):
    """Not folded: the zeros (the zero point) are concatenated, and the max sees them."""
    ours, theirs = compare(pad_then("MAX_POOL_2D"), tmp_path, [1, 9, 9, 3])
    np.testing.assert_array_equal(ours, theirs)
    assert np.any(theirs == ZX)  # a window's max is a padded zero


def test_concatenation_equals_tflm(tmp_path):
    """The input beside its ReLU along the channels (TFLM's int8 concatenation takes
    inputs quantized as its output)."""
    m = ModelBuilder()
    x = m.tensor([1, 4, 4, 3], "int8", scale=SX, zp=ZX)
    a = m.tensor([1, 4, 4, 3], "int8", scale=SX, zp=ZX)
    y = m.tensor([1, 4, 4, 6], "int8", scale=SX, zp=ZX)
    m.op("RELU", [x], [a])
    m.op("CONCATENATION", [x, a], [y], "ConcatenationOptions", Axis=3,
         FusedActivationFunction=0)
    ours, theirs = compare(m.build([x], [y]), tmp_path, [1, 4, 4, 3])
    np.testing.assert_array_equal(ours, theirs)


def _operand(m: ModelBuilder) -> int:
    c = np.random.default_rng(8).integers(-128, 128, (1, 8, 8, 3)).astype(np.int8)
    return m.tensor([1, 8, 8, 3], "int8", data=c, scale=SX, zp=ZX)


MOVEMENT = {
    "expand_dims": lambda: one_op("EXPAND_DIMS", None, (1, 8, 8, 3, 1), const_in=lambda m:
                                  m.tensor([1], "int32", data=np.array([4]))),
    "transpose": lambda: one_op("TRANSPOSE", None, (1, 3, 8, 8), const_in=lambda m:
                                m.tensor([4], "int32", data=np.array([0, 3, 1, 2]))),
    "maximum": lambda: one_op("MAXIMUM", None, (1, 8, 8, 3), const_in=_operand),
    "minimum": lambda: one_op("MINIMUM", None, (1, 8, 8, 3), const_in=_operand),
}


@pytest.mark.parametrize("name", sorted(MOVEMENT))
def test_movement_and_comparison_equal_tflm(name, tmp_path):
    ours, theirs = compare(MOVEMENT[name](), tmp_path, [1, 8, 8, 3])
    np.testing.assert_array_equal(ours, theirs)


def float_model(op: str) -> tuple[bytes, list[int]]:
    """A float32 one-operator model (layouts, paddings and options as in int8)."""
    rng = np.random.default_rng(9)
    m = ModelBuilder()
    x = m.tensor([1, 9, 9, 3], "float32")
    f32 = lambda shape: m.tensor(shape, "float32",  # noqa: E731
                                 data=rng.normal(0, 0.5, shape).astype(np.float32))
    common = dict(Padding=SAME, StrideW=2, StrideH=2, FusedActivationFunction=RELU6,
                  DilationWFactor=1, DilationHFactor=1)
    if op == "CONV_2D":
        y = m.tensor([1, 5, 5, 4], "float32")
        m.op(op, [x, f32([4, 3, 3, 3]), f32([4])], [y], "Conv2DOptions", **common)
    elif op == "DEPTHWISE_CONV_2D":
        y = m.tensor([1, 5, 5, 6], "float32")
        m.op(op, [x, f32([1, 3, 3, 6]), f32([6])], [y], "DepthwiseConv2DOptions",
             DepthMultiplier=2, **common)
    elif op == "AVERAGE_POOL_2D":
        y = m.tensor([1, 5, 5, 3], "float32")
        m.op(op, [x], [y], "Pool2DOptions", Padding=SAME, **POOL)
    elif op == "MEAN":
        y = m.tensor([1, 3], "float32")
        axes = m.tensor([2], "int32", data=np.array([1, 2]))
        m.op(op, [x, axes], [y], "ReducerOptions", KeepDims=False)
    elif op == "SOFTMAX":
        h = m.tensor([1, 243], "float32")
        y = m.tensor([1, 243], "float32")
        m.op("RESHAPE", [x], [h])
        m.op(op, [h], [y], "SoftmaxOptions", Beta=1.0)
    elif op == "LEAKY_RELU":
        y = m.tensor([1, 9, 9, 3], "float32")
        m.op(op, [x], [y], "LeakyReluOptions", Alpha=0.1)
    elif op == "FULLY_CONNECTED":
        y = m.tensor([1, 5], "float32")
        m.op(op, [x, f32([5, 243]), f32([5])], [y], "FullyConnectedOptions",
             FusedActivationFunction=0)
    return m.build([x], [y]), [1, 9, 9, 3]


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MEAN",
                                "SOFTMAX", "FULLY_CONNECTED", "LEAKY_RELU"])
def test_float_operator_equals_tflm(op, tmp_path):
    data, shape = float_model(op)
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    xs = np.random.default_rng(10).normal(0, 1, (N, *shape)).astype(np.float32)
    interp = runtime.Interpreter.from_file(str(path))
    theirs = []
    for v in xs:
        interp.set_input(v, 0)
        interp.invoke()
        theirs.append(interp.get_output(0).copy())
    theirs = np.array(theirs).reshape(N, -1).astype(np.float64)
    l2 = lower_to_l2(import_model(path), repr="float32")
    ours = np.asarray(decode_outputs(l2, evaluate_l2(l2, xs.astype(np.float64)).outputs)[0])
    np.testing.assert_allclose(ours.reshape(N, -1), theirs, rtol=1e-5, atol=1e-5)


def test_the_c_is_deterministic(tmp_path):
    """Two imports and compiles of micro_speech give byte-identical C."""
    texts = []
    for k in range(2):
        l2 = lower_to_l2(import_model(SPEECH), repr="zero-skew", bits=8)
        emit_c(l2, "cortex-m4", tmp_path / str(k))
        texts.append((tmp_path / str(k) / "model.c").read_bytes())
    assert texts[0] == texts[1]


def slice_model(begin, end, strides, shape, **masks) -> bytes:
    m = ModelBuilder()
    x = m.tensor([1, 8, 8, 3], "int8", scale=SX, zp=ZX)
    ins = [x] + [m.tensor([4], "int32", data=np.array(v)) for v in (begin, end, strides)]
    y = m.tensor(shape, "int8", scale=SX, zp=ZX)
    m.op("STRIDED_SLICE", ins, [y], "StridedSliceOptions", **masks)
    return m.build([x], [y])


@pytest.mark.parametrize(("begin", "end", "strides", "shape", "masks"), [
    ([0, 1, 0, 0], [1, 7, 8, 2], [1, 2, 3, 1], [1, 3, 3, 2], {}),
    ([0, 2, 0, 1], [1, 0, 0, 0], [1, 1, 1, 1], [1, 6, 8, 2],
     {"BeginMask": 4, "EndMask": 14}),
    ([0, 3, 0, 0], [1, 4, 8, 3], [1, 1, 1, 1], [1, 8, 3], {"ShrinkAxisMask": 2}),
    ([0, 7, 0, 0], [1, 0, 8, 3], [1, -2, 1, 1], [1, 4, 8, 3], {"EndMask": 2}),
])
def test_strided_slice_equals_tflm(begin, end, strides, shape, masks, tmp_path):
    ours, theirs = compare(slice_model(begin, end, strides, shape, **masks), tmp_path,
                           [1, 8, 8, 3])
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize(("s_out", "z_out", "alpha"), [(0.05, -20, 0.1), (SX, ZX, 0.2)])
def test_leaky_relu_is_within_one_of_tflm(s_out, z_out, alpha, tmp_path, capsys):
    """TFLite requantizes x >= 0 and x < 0 with their own multipliers (s_in / s_out and
    alpha s_in / s_out); minun takes the max of x and alpha x, each rounded once more:
    within 1 (docs/tflite-frontend.md)."""
    data = one_op("LEAKY_RELU", "LeakyReluOptions", (1, 8, 8, 3), s_out, z_out, Alpha=alpha)
    ours, theirs = compare(data, tmp_path, [1, 8, 8, 3], n=40)
    with capsys.disabled():
        print(f"\n  leaky relu alpha {alpha}: {np.mean(ours == theirs):.1%} equal TFLM's")
    assert np.max(np.abs(ours - theirs)) <= 1
    assert np.mean(ours == theirs) > 0.8


def quantize_model() -> bytes:
    """float in -> QUANTIZE -> int8 FULLY_CONNECTED -> int8 out."""
    m, x, y = _quantized_fc(np.random.default_rng(11))
    return m.build([x], [y])


def test_quantize_of_near_ties_equals_tflm_and_the_c_float_wrapper(tmp_path):
    """TFLite's QUANTIZE divides in float32: a float input half way between two steps
    (as float32 computes it) rounds as TFLM's, in the evaluator and in the C's
    minun_predict_float."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))
    from codegen_support import build_host, expected, run_host

    path = tmp_path / "q.tflite"
    path.write_bytes(quantize_model())
    k = np.random.default_rng(12).integers(-120, 120, (40, 1, 6))
    xs = ((k + 0.5) * np.float32(SX)).astype(np.float32)  # near-ties in float32
    interp = runtime.Interpreter.from_file(str(path))
    theirs = []
    for v in xs:
        interp.set_input(v, 0)
        interp.invoke()
        theirs.append(interp.get_output(0).reshape(-1).copy())
    theirs = np.array(theirs).astype(np.int64)
    l2 = lower_to_l2(import_model(path), repr="zero-skew", bits=8)
    ours = np.asarray(evaluate_l2(l2, xs.astype(np.float64)).outputs[0]).reshape(40, -1)
    np.testing.assert_array_equal(ours, theirs)
    emit_c(l2, "x86", tmp_path / "c")
    exe = build_host(tmp_path / "c", tmp_path / "host")
    feats = xs.reshape(40, -1)
    exp = expected(l2, feats)
    _, scores = run_host(exe, feats, np.dtype("<f4"), 4, as_float=True)
    want = (np.float64(np.float32(0.05)) * (exp.scores.astype(np.float64) - 3)).astype(
        np.float32)
    np.testing.assert_array_equal(scores, want)


@pytest.mark.parametrize(("s_out", "z_out"), [(0.1, -7), (0.02, 30)])
def test_requantizing_quantize_equals_tflm(s_out, z_out, tmp_path):
    """QUANTIZE of an int8 tensor to other (scale, zero point): TFLite's requantization."""
    m = ModelBuilder()
    x = m.tensor([1, 8, 8, 3], "int8", scale=SX, zp=ZX)
    y = m.tensor([1, 8, 8, 3], "int8", scale=s_out, zp=z_out)
    m.op("QUANTIZE", [x], [y])
    ours, theirs = compare(m.build([x], [y]), tmp_path, [1, 8, 8, 3])
    np.testing.assert_array_equal(ours, theirs)
    assert len(np.unique(theirs)) > 50
