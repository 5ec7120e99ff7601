"""Pre-quantized ONNX models (issue 17): QuantizeLinear / DequantizeLinear pairs (the QDQ
format), QLinearMatMul and QLinearConv, onto the zero-skew int8 representation with the
model's own scales and zero points.

An int8 ONNX tensor is imported as the float tensor it stands for, `scale * (q - zp)`, and
its quantization is recorded on the L1 op that computes it as an attribute
`quantization = array<f64: scale, zero_point>` (on `minun.input` for the graph's input, on
`minun.param` for a dequantized initializer). `quantize{repr=zero-skew bits=8}` then gives
exactly those values the type `!num.affine<8, scale, zero_point>`
(formats/zero_skew/representation.py) instead of choosing them from a profile; other
representations ignore the attribute and see the float model. So:

- `QuantizeLinear(y, s, zp)` records (s, zp) on y's op and passes y on; the graph's float
  input followed by QuantizeLinear is the int8 input;
- `DequantizeLinear(x, s, zp)`: of a run-time tensor, checks that x carries (s, zp) and
  passes it on; of an int8 initializer, the float weights `s (q - zp)` recorded with
  (s, zp), so quantize stores q again; an int32 initializer (a bias) is dequantized;
- `QLinearMatMul` and `QLinearConv`: MatMul / Conv of the dequantized operands (a
  QLinearConv bias B is the int32 accumulator's: added as `B * s_x * s_w`, which quantize
  stores as B), the result recorded with (s_y, zp_y).

The model's function is marked `minun.requantize = "onnxruntime"`: quantize then
requantizes its int32 accumulators as onnxruntime's QLinearConv / QLinearMatMul / QGemm
do (float32 multiply, half to even; num.requantize mode onnxruntime) and quantizes its
input as QuantizeLinear, so its integers are onnxruntime's.

Per-axis scales (onnxruntime's per-channel weights) on an initializer: a DequantizeLinear
of an int8 weight with a scale per index of its `axis` and zero points 0 (or of an int32
bias), and QLinearConv / QLinearMatMul with a 1-D w_scale / b_scale (output channels:
the filter's axis 0, B's columns). The weight's minun.param records
`quantization = array<f64: s_0, ..., s_(C-1), 0>`; quantize{repr=zero-skew} gives it a
scale per output channel in that order (formats/zero_skew/representation.py; per-channel
whatever its `per-channel` option) and checks that the values are integers of those scales along the
op's output channels. Otherwise per-tensor scales and int8 (or int32 bias) zero points
only: per-axis scales of run-time tensors are refused with the node's name. uint8
tensors (onnxruntime's QUInt8) are their int8 q - 128, zero point - 128 (the same reals).

onnxruntime's quantizer (issue 32): its QOperator contrib ops (com.microsoft QGemm,
QLinearAdd / Mul / Concat / GlobalAveragePool / AveragePool / Sigmoid / LeakyRelu /
Softmax) are their float ops between dequantized inputs, the output annotated; a
QuantizeLinear saturates (`saturate`: the clamp of a Relu / ReLU6 the quantizer removed,
kept in the float model, dropped by zero-skew); a QuantizeLinear of a float initializer
folds to its integers (AddQDQPairToWeight); an INT8 graph input is its reals with the
quantization of the nodes reading it (`int8_input`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, UnitAttr, f64
from xdsl.ir import Operation

from minun_mlir.diagnostics import MinunError
from minun_mlir.dialects import minun
from minun_mlir.formats.zero_skew.representation import QUANTIZATION, SATURATE

from .importer import INT8_INPUT, Importer, Node, Value, node_label

ATTR = QUANTIZATION


def axis_qparams(imp: Importer, scale: Value | None, zero_point: Value | None, what: str
                 ) -> tuple[float | list[float], int]:
    """As qparams, but a 1-D scale with zero points 0 (a per-channel weight) gives the
    list of its scales."""
    s = imp.const(scale, f"{what}'s scale")
    if s.size == 1:
        return qparams(imp, scale, zero_point, what)
    where = f"{what}: " if what[:1].islower() else ""
    if s.ndim != 1:
        raise imp.error(f"{where}per-axis scales must be 1-D, got shape {s.shape}")
    if zero_point is not None:
        z = _signed(imp.const(zero_point, f"{what}'s zero point"))
        if z.dtype not in (np.int8, np.int32) or np.any(z != 0):
            raise imp.error(f"{where}per-axis scales need int8 (or an int32 bias's) zero "
                            f"points 0 (symmetric weights), got {z.dtype} {z.tolist()}")
    values = [float(np.float32(v)) for v in s]
    if not all(v > 0 for v in values):
        raise imp.error(f"{where}scales must be positive")
    return values, 0


def per_axis(x: np.ndarray, scale: float | list[float], zp: int, axis: int) -> np.ndarray:
    """The reals of stored integers x: (x - zp) * scale, a list of scales along `axis`."""
    s = np.asarray(scale, dtype=np.float64)
    if s.ndim:
        shape = [1] * x.ndim
        shape[axis] = s.size
        s = s.reshape(shape)
    return ((x.astype(np.float64) - zp) * s).astype(np.float32)


def qparams(imp: Importer, scale: Value | None, zero_point: Value | None, what: str
            ) -> tuple[float, int]:
    s = imp.const(scale, f"{what}'s scale")
    where = f"{what}: " if what[:1].islower() else ""
    if s.size != 1:
        raise imp.error(f"{where}per-axis scales ({s.size} of them) are not supported; "
                        "per-tensor scales only")
    if zero_point is None:
        zp = 0
    else:
        z = _signed(imp.const(zero_point, f"{what}'s zero point"))
        if z.dtype not in (np.int8, np.int32) or z.size != 1:
            raise imp.error(f"{where}zero point of type {z.dtype} and size {z.size}: only "
                            "one int8 or uint8 (or an int32 bias's) zero point is supported")
        zp = int(z.reshape(-1)[0])
    value = float(np.float32(s.reshape(-1)[0]))
    if not value > 0:
        raise imp.error(f"{where}scale {value} must be positive")
    return value, zp


def _signed(x: np.ndarray) -> np.ndarray:
    """uint8 integers (onnxruntime's QUInt8 activations) as the int8 q - 128 with the same
    reals (a zero point moves by 128 too): zero-skew computes them in int8."""
    return (x.astype(np.int16) - 128).astype(np.int8) if x.dtype == np.uint8 else x


def annotate(imp: Importer, v: Value, scale: float, zp: int) -> Value:
    """Record (scale, zp) on the op computing v; a constant is quantized and dequantized
    now (ONNX's rounding: half to even)."""
    imp.prequantized = True
    if v.is_const:
        q = np.clip(np.rint(v.array.astype(np.float64) / scale) + zp, -128, 127)
        deq = ((q - zp) * scale).astype(np.float32)
        imp.quantized[v.name] = (scale, zp)
        return Value.const(deq, v.name)
    owner = v.ssa.owner if v.ssa is not None else None
    if not isinstance(owner, Operation):
        raise imp.error("a value computed inside a loop cannot be quantized")
    attr = DenseArrayBase.from_list(f64, [scale, float(zp)])
    old = owner.attributes.get(ATTR)
    if old is not None and old != attr:
        raise imp.error(f"the value is quantized twice, with (scale, zero point) "
                        f"{tuple(old.get_values())} and {(scale, zp)}")
    owner.attributes[ATTR] = attr
    return v


def saturate(imp: Importer, v: Value, scale: float, zp: int) -> Value:
    """v quantized with (scale, zp), clamped to the reals its int8 range stands for: a
    QuantizeLinear saturates, and onnxruntime's quantizer relies on it when it removes a
    Relu or Clip (ReLU6) before one (the range [0, hi] is the activation's). The float and
    fixed-point formats compute this clamp (a minun.clip marked SATURATE); zero-skew's int8
    type is it, and drops the op."""
    v = annotate(imp, v, scale, zp)
    if v.is_const or imp.requantize != "onnxruntime":  # TFLite's activations are explicit
        return v
    y = imp.unary(minun.ClipOp, v, lo=minun.f64_attr(scale * (-128 - zp)),
                  hi=minun.f64_attr(scale * (127 - zp)))
    y.ssa.owner.attributes[SATURATE] = UnitAttr()
    return annotate(imp, y, scale, zp)


def dequantize(imp: Importer, x: Value, scale: float | list[float], zp: int,
               name: str | None = None, axis: int = 1) -> Value:
    """The reals of int8 tensor x (named `name` when it is an initializer); a list of
    scales (per-axis, an initializer's) runs along `axis`."""
    name = name or x.name
    imp.prequantized = True
    if x.is_const:
        axis = axis % max(x.array.ndim, 1)
        if isinstance(scale, list) and x.array.shape[axis] != len(scale):
            raise imp.error(f"initializer '{x.name}' of shape {list(x.array.shape)} has "
                            f"{len(scale)} scales along axis {axis}")
        if x.array.dtype == np.int32:  # a bias: int32 at the accumulator's scale
            return Value.const(per_axis(x.array, scale, zp, axis), name)
        x = Value.const(_signed(x.array), x.name)
        if x.array.dtype != np.int8:
            raise imp.error(f"initializer '{x.name}' of type {x.array.dtype}: only int8 "
                            "(and int32 biases) are supported")
        imp.quantized[name] = (scale, zp)
        return Value.const(per_axis(x.array, scale, zp, axis), name)
    if isinstance(scale, list):
        raise imp.error(f"per-axis scales ({len(scale)} of them) are not supported on a "
                        "run-time tensor; per-tensor scales only")
    return annotate(imp, x, scale, zp)  # a run-time int8 tensor is already its reals


def int8_input(imp: Importer, name: str) -> tuple[DenseArrayBase, tuple[float, float]]:
    """An int8 or uint8 graph input (TFLite's int8-in form): imported as the reals its
    integers stand for, with the (scale, zero point) of the nodes reading it (a
    DequantizeLinear or a QLinear operator: the scale and zero point follow it in their
    inputs), which must agree. Returns the quantization attribute and the reals' range;
    zero-skew's C then takes the int8 integers as they are (a uint8 input's: its u - 128,
    with the zero point - 128, as every uint8 tensor here)."""
    found = set()
    for node in imp.graph.node:
        for i, x in enumerate(node.input):
            if x != name:
                continue
            if node.op_type != "DequantizeLinear" and not node.op_type.startswith("QLinear") \
                    and node.op_type != "QGemm" or len(node.input) < i + 2:
                raise MinunError(f"graph input '{name}' is quantized and {node_label(node)} "
                                 "reads it; only DequantizeLinear and QLinear operators can")
            scale = imp.values.get(node.input[i + 1])
            zp = imp.values.get(node.input[i + 2]) if len(node.input) > i + 2 and \
                node.input[i + 2] else None
            if scale is None or not scale.is_const or zp is not None and not zp.is_const:
                raise MinunError(f"graph input '{name}': the scale and zero point of "
                                 f"{node_label(node)} must be initializers")
            found.add(qparams(imp, scale, zp, f"graph input '{name}'"))
    if len(found) != 1:
        raise MinunError(f"graph input '{name}' is quantized and read with "
                         f"{len(found) or 'no'} different (scale, zero point)s; one needed")
    s, zp = found.pop()
    imp.prequantized = True
    return (DenseArrayBase.from_list(f64, [s, float(zp)]),
            (s * (-128 - zp), s * (127 - zp)))


def _quantize_linear(imp: Importer, node: Node) -> list[Value]:
    x = node.inputs[0]
    if x.is_const:  # a float weight with its QDQ pair (onnxruntime's AddQDQPairToWeight)
        return [_quantize_const(imp, node, x)]
    s, zp = qparams(imp, node.input(1), node.input(2), "The input")
    return [saturate(imp, x, s, zp)]


def _quantize_const(imp: Importer, node: Node, x: Value) -> Value:
    """QuantizeLinear of a float initializer, folded: its int8 integers (or int32, by the
    zero point's type), per tensor or per index of `axis` (ONNX: round half to even,
    saturate), which the DequantizeLinear after it reads as any int8 weight."""
    s, zp = axis_qparams(imp, node.input(1), node.input(2), "The input")
    z = node.input(2)
    dtype = np.int32 if z is not None and imp.const(z, "the zero point").dtype == np.int32 \
        else np.int8  # (uint8: its integers - 128, as the zero point from axis_qparams)
    scale = np.asarray(s, dtype=np.float32)
    if scale.ndim:
        axis = int(node.attr("axis", 1)) % max(x.rank, 1)
        shape = [1] * x.rank
        shape[axis] = scale.size
        if x.shape[axis] != scale.size:
            raise imp.error(f"initializer '{x.name}' of shape {list(x.shape)} has "
                            f"{scale.size} scales along axis {axis}")
        scale = scale.reshape(shape)
    info = np.iinfo(dtype)
    q = np.rint(x.array.astype(np.float32) / scale).astype(np.float64) + zp
    return Value.const(np.clip(q, info.min, info.max).astype(dtype), node.proto.output[0])


def _dequantize_linear(imp: Importer, node: Node) -> list[Value]:
    if node.inputs[0].is_const:
        s, zp = axis_qparams(imp, node.input(1), node.input(2), "The input")
    else:
        s, zp = qparams(imp, node.input(1), node.input(2), "The input")
    axis = next((a.i for a in node.proto.attribute if a.name == "axis"), 1)
    return [dequantize(imp, node.inputs[0], s, zp, node.proto.output[0], axis)]


def _qlinear(imp: Importer, node: Node, inputs: list[Value], handler) -> list[Value]:
    s_y, zp_y = qparams(imp, node.input(6), node.input(7), "the output")
    (y,) = handler(imp, dataclasses.replace(node, inputs=inputs))
    return [saturate(imp, y, s_y, zp_y)]


def _qlinear_matmul(imp: Importer, node: Node) -> list[Value]:
    from .linear import _matmul

    a = dequantize(imp, node.inputs[0], *qparams(imp, node.input(1), node.input(2), "a"))
    b = dequantize(imp, node.inputs[3], *axis_qparams(imp, node.input(4), node.input(5), "b"),
                   axis=-1)  # per-column scales: B's last axis
    return _qlinear(imp, node, [a, b], _matmul)


def _qlinear_conv(imp: Importer, node: Node) -> list[Value]:
    from .convpool import _conv

    s_x, zp_x = qparams(imp, node.input(1), node.input(2), "x")
    s_w, zp_w = axis_qparams(imp, node.input(4), node.input(5), "w")
    x = dequantize(imp, node.inputs[0], s_x, zp_x)
    w = dequantize(imp, node.inputs[3], s_w, zp_w, axis=0)  # per output channel
    inputs = [x, w]
    bias = node.input(8)
    if bias is not None:
        b = imp.const(bias, "the bias")
        if b.dtype != np.int32:
            raise imp.error(f"the bias must be int32, got {b.dtype}")
        inputs.append(Value.const((b.astype(np.float64) * (
            s_x * np.asarray(s_w, dtype=np.float64))).astype(np.float32), bias.name))
    return _qlinear(imp, node, inputs, _conv)


# the standard operator's version a com.microsoft QLinear operator follows (its
# semantics are the current ones'; QLinearSoftmax says its own with `opset`)
CURRENT = 21


def _plain(node: Node, inputs: list[Value], drop: tuple[str, ...] = (), **attrs) -> Node:
    """The float node a com.microsoft QLinear operator stands for: its dequantized inputs,
    its attributes without the quantized ones (`drop`; `attrs` override)."""
    kept = {k: v for k, v in node.attrs.items() if k not in drop}
    version = node.version if not node.proto.domain else CURRENT
    return dataclasses.replace(node, inputs=inputs, attrs={**kept, **attrs}, version=version)


def _deq(imp: Importer, node: Node, i: int, what: str) -> Value:
    """Input i of a QLinear operator (its scale and zero point at i + 1, i + 2), as reals."""
    return dequantize(imp, node.inputs[i], *qparams(imp, node.input(i + 1), node.input(i + 2),
                                                    what))


def _out(imp: Importer, node: Node, y: Value, i: int) -> list[Value]:
    """The result y quantized with the scale and zero point at inputs i, i + 1."""
    return [saturate(imp, y, *qparams(imp, node.input(i), node.input(i + 1), "the output"))]


def _qgemm(imp: Importer, node: Node) -> list[Value]:
    """com.microsoft QGemm (onnxruntime's quantized Gemm): A, a_scale, a_zp, B, b_scale,
    b_zp, C (int32, added to the accumulator), y_scale, y_zp; no y_scale: a float output.
    Its reals: alpha s_a s_b (A B + C)."""
    from .linear import _gemm

    s_a, zp_a = qparams(imp, node.input(1), node.input(2), "a")
    s_b, zp_b = axis_qparams(imp, node.input(4), node.input(5), "b")
    a = dequantize(imp, node.inputs[0], s_a, zp_a)
    # per-column scales: the output columns are B's axis 0 when transB, else axis 1
    b = dequantize(imp, node.inputs[3], s_b, zp_b, axis=0 if node.attr("transB", 0) else -1)
    inputs = [a, b]
    c = node.input(6)
    if c is not None:
        bias = imp.const(c, "the bias")
        if bias.dtype != np.int32:
            raise imp.error(f"the bias must be int32, got {bias.dtype}")
        alpha = float(node.attr("alpha", 1.0))
        inputs.append(Value.const((bias.astype(np.float64) * (s_a * np.asarray(
            s_b, dtype=np.float64)) * alpha).astype(np.float32), c.name))
    # onnxruntime: alpha (A B + C) s_a s_b, C at the accumulator's scale: C's reals are
    # scaled by alpha here and added with beta 1
    (y,) = _gemm(imp, _plain(node, inputs, ("beta",), beta=1.0))
    if node.input(7) is None:
        return [y]
    return _out(imp, node, y, 7)


def _qbinary(standard: str):
    """com.microsoft QLinearAdd / QLinearMul: A, A_scale, A_zp, B, B_scale, B_zp,
    C_scale, C_zp."""

    def handler(imp: Importer, node: Node) -> list[Value]:
        from . import elementwise

        a, b = _deq(imp, node, 0, "a"), _deq(imp, node, 3, "b")
        (y,) = elementwise.HANDLERS[standard](imp, _plain(node, [a, b]))
        return _out(imp, node, y, 6)

    return handler


def _qunary(standard: str):
    """com.microsoft QLinear operators of one input: X, X_scale, X_zp, Y_scale, Y_zp
    (QLinearGlobalAveragePool, QLinearAveragePool, QLinearSigmoid, QLinearLeakyRelu,
    QLinearSoftmax); channels_last (NHWC data) is refused."""

    def handler(imp: Importer, node: Node) -> list[Value]:
        if int(node.attr("channels_last", 0)):
            raise imp.error("channels_last=1 (NHWC data) is not supported")
        x = _deq(imp, node, 0, "x")
        plain = _plain(node, [x], ("channels_last", "opset"))
        if node.attr("opset") is not None:
            plain = dataclasses.replace(plain, version=int(node.attr("opset")))
        y = imp.handlers[standard](imp, plain)[0]
        return _out(imp, node, y, 3)

    return handler


def _qconcat(imp: Importer, node: Node) -> list[Value]:
    """com.microsoft QLinearConcat: Y_scale, Y_zp, then (X, X_scale, X_zp) per input."""
    from .shape import HANDLERS as SHAPE

    if (len(node.inputs) - 2) % 3 or len(node.inputs) < 5:
        raise imp.error(f"needs Y_scale, Y_zero_point and (X, X_scale, X_zero_point) "
                        f"triples, got {len(node.inputs)} inputs")
    xs = [_deq(imp, node, i, f"input {(i - 2) // 3}") for i in range(2, len(node.inputs), 3)]
    (y,) = SHAPE["Concat"](imp, _plain(node, xs))
    return _out(imp, node, y, 0)


HANDLERS = {
    INT8_INPUT: int8_input,
    "QuantizeLinear": _quantize_linear,
    "DequantizeLinear": _dequantize_linear,
    "QLinearMatMul": _qlinear_matmul,
    "QLinearConv": _qlinear_conv,
    # onnxruntime's QOperator format (its com.microsoft contrib operators)
    "com.microsoft:QGemm": _qgemm,
    "com.microsoft:QLinearAdd": _qbinary("Add"),
    "com.microsoft:QLinearMul": _qbinary("Mul"),
    "com.microsoft:QLinearConcat": _qconcat,
    "com.microsoft:QLinearGlobalAveragePool": _qunary("GlobalAveragePool"),
    "com.microsoft:QLinearAveragePool": _qunary("AveragePool"),
    "com.microsoft:QLinearSigmoid": _qunary("Sigmoid"),
    "com.microsoft:QLinearLeakyRelu": _qunary("LeakyRelu"),
    "com.microsoft:QLinearSoftmax": _qunary("Softmax"),
    "com.microsoft:QLinearConv": _qlinear_conv,
    "com.microsoft:QLinearMatMul": _qlinear_matmul,
    "com.microsoft:QuantizeLinear": _quantize_linear,
    "com.microsoft:DequantizeLinear": _dequantize_linear,
}
