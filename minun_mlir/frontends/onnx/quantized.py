"""Pre-quantized ONNX models (issue 17): QuantizeLinear / DequantizeLinear pairs (the QDQ
format), QLinearMatMul and QLinearConv, onto the zero-skew int8 representation with the
model's own scales and zero points.

An int8 ONNX tensor is imported as the float tensor it stands for, `scale * (q - zp)`, and
its quantization is recorded on the L1 op that computes it as an attribute
`quantization = array<f64: scale, zero_point>` (on `minun.input` for the graph's input, on
`minun.param` for a dequantized initializer). `quantize{repr=zero-skew bits=8}` then gives
exactly those values the type `!num.affine<8, scale, zero_point>` (numerics/
zero_skew_repr.py) instead of choosing them from a profile; other representations ignore
the attribute and see the float model. So:

- `QuantizeLinear(y, s, zp)` records (s, zp) on y's op and passes y on; the graph's float
  input followed by QuantizeLinear is the int8 input;
- `DequantizeLinear(x, s, zp)`: of a run-time tensor, checks that x carries (s, zp) and
  passes it on; of an int8 initializer, the float weights `s (q - zp)` recorded with
  (s, zp), so quantize stores q again; an int32 initializer (a bias) is dequantized;
- `QLinearMatMul` and `QLinearConv`: MatMul / Conv of the dequantized operands (a
  QLinearConv bias B is the int32 accumulator's: added as `B * s_x * s_w`, which quantize
  stores as B), the result recorded with (s_y, zp_y).

Per-tensor scales and int8 (or int32 bias) zero points only: per-axis scales and uint8
are refused with the node's name.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, f64
from xdsl.ir import Operation

from .importer import Importer, Node, Value

ATTR = "quantization"


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
        z = imp.const(zero_point, f"{what}'s zero point")
        if z.dtype not in (np.int8, np.int32) or z.size != 1:
            raise imp.error(f"{where}zero point of type {z.dtype} and size {z.size}: only "
                            "one int8 (or an int32 bias's) zero point is supported")
        zp = int(z.reshape(-1)[0])
    value = float(np.float32(s.reshape(-1)[0]))
    if not value > 0:
        raise imp.error(f"{where}scale {value} must be positive")
    return value, zp


def annotate(imp: Importer, v: Value, scale: float, zp: int) -> Value:
    """Record (scale, zp) on the op computing v; a constant is quantized and dequantized
    now (ONNX's rounding: half to even)."""
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


def dequantize(imp: Importer, x: Value, scale: float, zp: int, name: str | None = None
               ) -> Value:
    """The reals of int8 tensor x (named `name` when it is an initializer)."""
    name = name or x.name
    if x.is_const:
        if x.array.dtype == np.int32:  # a bias: int32 at the accumulator's scale
            return Value.const(((x.array.astype(np.float64) - zp) * scale).astype(
                np.float32), name)
        if x.array.dtype != np.int8:
            raise imp.error(f"initializer '{x.name}' of type {x.array.dtype}: only int8 "
                            "(and int32 biases) are supported")
        imp.quantized[name] = (scale, zp)
        return Value.const(((x.array.astype(np.float64) - zp) * scale).astype(np.float32),
                           name)
    return annotate(imp, x, scale, zp)  # a run-time int8 tensor is already its reals


def _quantize_linear(imp: Importer, node: Node) -> list[Value]:
    s, zp = qparams(imp, node.input(1), node.input(2), "The input")
    return [annotate(imp, node.inputs[0], s, zp)]


def _dequantize_linear(imp: Importer, node: Node) -> list[Value]:
    s, zp = qparams(imp, node.input(1), node.input(2), "The input")
    return [dequantize(imp, node.inputs[0], s, zp, node.proto.output[0])]


def _qlinear(imp: Importer, node: Node, inputs: list[Value], handler) -> list[Value]:
    s_y, zp_y = qparams(imp, node.input(6), node.input(7), "the output")
    (y,) = handler(imp, dataclasses.replace(node, inputs=inputs))
    return [annotate(imp, y, s_y, zp_y)]


def _qlinear_matmul(imp: Importer, node: Node) -> list[Value]:
    from .linear import _matmul

    a = dequantize(imp, node.inputs[0], *qparams(imp, node.input(1), node.input(2), "a"))
    b = dequantize(imp, node.inputs[3], *qparams(imp, node.input(4), node.input(5), "b"))
    return _qlinear(imp, node, [a, b], _matmul)


def _qlinear_conv(imp: Importer, node: Node) -> list[Value]:
    from .convpool import _conv

    s_x, zp_x = qparams(imp, node.input(1), node.input(2), "x")
    s_w, zp_w = qparams(imp, node.input(4), node.input(5), "w")
    x = dequantize(imp, node.inputs[0], s_x, zp_x)
    w = dequantize(imp, node.inputs[3], s_w, zp_w)
    inputs = [x, w]
    bias = node.input(8)
    if bias is not None:
        b = imp.const(bias, "the bias")
        if b.dtype != np.int32:
            raise imp.error(f"the bias must be int32, got {b.dtype}")
        inputs.append(Value.const((b.astype(np.float64) * (s_x * s_w)).astype(np.float32),
                                  bias.name))
    return _qlinear(imp, node, inputs, _conv)


HANDLERS = {
    "QuantizeLinear": _quantize_linear,
    "DequantizeLinear": _dequantize_linear,
    "QLinearMatMul": _qlinear_matmul,
    "QLinearConv": _qlinear_conv,
}
