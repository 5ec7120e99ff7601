"""Element-wise and per-axis operators: they keep whatever layout their input has, so a
chain conv -> add -> relu -> pool stays NHWC with no transposes in between.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, i32, i64

from minun_mlir.dialects import minun

from .importer import Importer, Node, Value, identity, normalize_axis


def _add(imp: Importer, node: Node) -> list[Value]:
    a, b = node.inputs[0], node.inputs[1]
    if a.array is not None:  # addition commutes (exactly, in IEEE arithmetic)
        a, b = b, a
    return [imp.binary(minun.AddOp, a, b, bias=minun.BiasAddOp)]


def _sub(imp: Importer, node: Node) -> list[Value]:
    return [imp.binary(minun.SubOp, node.inputs[0], node.inputs[1], bias=minun.BiasSubOp)]


def _mul(imp: Importer, node: Node) -> list[Value]:
    a, b = node.inputs[0], node.inputs[1]
    if a.array is not None:
        a, b = b, a
    if b.array is not None and b.array.size == 1 and b.rank <= a.rank:
        scalar = imp.materialize(b.array.reshape(()), b.name)
        return [Value.of(imp.make(minun.ScalarMulOp, scalar, imp.ir(a)), a.perm)]
    return [imp.binary(minun.HadamardOp, a, b)]


def _binary(cls: type):
    def handler(imp: Importer, node: Node) -> list[Value]:
        return [imp.binary(cls, node.inputs[0], node.inputs[1])]

    return handler


def _variadic(cls: type):
    """Max / Min / Sum over any number of inputs, as a chain of binary ops."""

    def handler(imp: Importer, node: Node) -> list[Value]:
        values = [v for v in node.inputs if v is not None]
        if any(v.array is None for v in values):
            # Start from a run-time value so constants get its layout.
            values.sort(key=lambda v: v.array is not None)
        acc = values[0]
        for v in values[1:]:
            acc = imp.binary(cls, acc, v)
        return [acc]  # one input: ONNX returns it unchanged

    return handler


def _unary(cls: type):
    def handler(imp: Importer, node: Node) -> list[Value]:
        return [imp.unary(cls, node.inputs[0])]

    return handler


def _leaky_relu(imp: Importer, node: Node) -> list[Value]:
    alpha = float(node.attr("alpha", 0.01))
    return [imp.unary(minun.LeakyReluOp, node.inputs[0], alpha=minun.f64_attr(alpha))]


def _scaled(imp: Importer, x: Value, alpha: float, beta: float = 0.0) -> Value:
    """alpha * x + beta (a scalar multiply and a scalar add; skipped when 1 and 0)."""
    if alpha != 1.0:
        x = _mul_const(imp, x, alpha)
    if beta != 0.0:
        x = imp.binary(minun.AddOp, x, Value.const(np.float32(beta)))
    return x


def _mul_const(imp: Importer, x: Value, c: float) -> Value:
    scalar = imp.materialize(np.float32(c).reshape(()), "c")
    return Value.of(imp.make(minun.ScalarMulOp, scalar, imp.ir(x)), x.perm)


def _hard_sigmoid_of(imp: Importer, x: Value, alpha: float, beta: float) -> Value:
    y = _scaled(imp, x, alpha, beta)
    return imp.unary(minun.ClipOp, y, lo=minun.f64_attr(0.0), hi=minun.f64_attr(1.0))


def _hard_sigmoid(imp: Importer, node: Node) -> list[Value]:
    """max(0, min(1, alpha x + beta))."""
    return [_hard_sigmoid_of(imp, node.inputs[0], float(node.attr("alpha", 0.2)),
                             float(node.attr("beta", 0.5)))]


def _hard_swish(imp: Importer, node: Node) -> list[Value]:
    """x * HardSigmoid(x) with alpha = 1/6, beta = 1/2."""
    x = node.inputs[0]
    return [imp.binary(minun.HadamardOp, x, _hard_sigmoid_of(imp, x, 1.0 / 6.0, 0.5))]


def _negative_part(imp: Importer, x: Value) -> Value:
    return imp.binary(minun.MinOp, x, Value.const(np.float32(0.0)))


def _prelu(imp: Importer, node: Node) -> list[Value]:
    """relu(x) + slope * min(x, 0), the slope broadcast (unidirectionally) to x."""
    x, slope = node.inputs[0], node.inputs[1]
    neg = _negative_part(imp, x)
    if slope.array is not None and slope.array.size == 1:
        scaled = _mul_const(imp, neg, float(slope.array.reshape(())))
    else:
        scaled = imp.binary(minun.HadamardOp, neg, slope)
    return [imp.binary(minun.AddOp, imp.unary(minun.ReluOp, x), scaled)]


def _elu(imp: Importer, node: Node) -> list[Value]:
    """relu(x) + alpha * (exp(min(x, 0)) - 1): exp only ever sees x <= 0."""
    x = node.inputs[0]
    alpha = float(node.attr("alpha", 1.0))
    e = imp.unary(minun.ExpOp, _negative_part(imp, x))
    return [imp.binary(minun.AddOp, imp.unary(minun.ReluOp, x), _scaled(imp, e, alpha, -alpha))]


def softplus_of(imp: Importer, x: Value) -> Value:
    """log(1 + exp(x)) = -log_softmax([x, 0])[1], exact, built on log_softmax, which every
    format computes (no log table needed). The pair is [relu(x), relu(x) - x], [x, 0]
    shifted by min(x, 0) (log_softmax is shift invariant), so no zero tensor is stored; it
    is stacked on a new last IR axis and the result keeps x's layout. No neg: zero-skew's
    keeps its operand's type, which saturates on a one-sided range; the subtraction and
    the product by -1 get their own profiled ranges."""
    if x.array is not None:
        raise imp.error("the input is a constant")
    perm = imp._perm_of(x)
    ir_shape = tuple(x.shape[p] for p in perm)

    def column(v: Value) -> Value:
        return Value.of(imp.emit(minun.ReshapeOp(imp.ir(v, perm), (*ir_shape, 1))))

    relu = imp.unary(minun.ReluOp, x)
    pos, neg = column(relu), column(imp.binary(minun.SubOp, relu, x))
    pair = imp.concat([pos, neg], len(ir_shape))
    rank = len(ir_shape) + 1
    ls = Value.of(imp.make(minun.LogSoftmaxOp, imp.ir(pair), axis=IntegerAttr(rank - 1, i64)))
    second = imp.slice(ls, rank - 1, 1, 1)
    flat = Value.of(imp.emit(minun.ReshapeOp(imp.ir(second), ir_shape)), perm)
    return _mul_const(imp, flat, -1.0)


def _softplus(imp: Importer, node: Node) -> list[Value]:
    return [softplus_of(imp, node.inputs[0])]


def _mish(imp: Importer, node: Node) -> list[Value]:
    """Mish (opset 18): x * tanh(softplus(x))."""
    x = node.inputs[0]
    return [imp.binary(minun.HadamardOp, x, imp.unary(minun.TanhOp, softplus_of(imp, x)))]


def _clip(imp: Importer, node: Node) -> list[Value]:
    """Bounds are attributes before opset 11 and optional constant inputs after. One
    bound becomes max/min with a scalar; min > max is legal ONNX (the result is max),
    which max-then-min reproduces, so only ordered bounds use minun.clip.
    """
    x = node.inputs[0]
    if node.version < 11:
        lo, hi = node.attr("min"), node.attr("max")
    else:
        lo_v, hi_v = node.input(1), node.input(2)
        lo = None if lo_v is None else float(imp.const(lo_v, "the min input"))
        hi = None if hi_v is None else float(imp.const(hi_v, "the max input"))
    if lo is not None and hi is not None and lo <= hi:
        return [imp.unary(minun.ClipOp, x, lo=minun.f64_attr(lo), hi=minun.f64_attr(hi))]
    if lo is not None:
        x = imp.binary(minun.MaxOp, x, Value.const(np.float32(lo)))
    if hi is not None:
        x = imp.binary(minun.MinOp, x, Value.const(np.float32(hi)))
    return [x]


def _softmax(cls: type):
    """Opset 13 made Softmax/LogSoftmax per-axis (default -1); before, the input is
    coerced to 2-D at `axis` (default 1) and normalised over the flattened tail. The two
    agree when every dimension after the axis is 1 or the axis is the last one.
    """

    def handler(imp: Importer, node: Node) -> list[Value]:
        x = node.inputs[0]
        rank = x.rank
        axis = normalize_axis(int(node.attr("axis", -1 if node.version >= 13 else 1)), rank)
        if node.version < 13 and any(d != 1 for d in x.shape[axis + 1:]):
            outer = int(np.prod(x.shape[:axis], dtype=np.int64))
            flat = imp.reshape(x, (outer, int(np.prod(x.shape[axis:], dtype=np.int64))))
            y = Value.of(imp.make(cls, imp.ir(flat), axis=IntegerAttr(1, i64)))
            return [imp.reshape(y, x.shape)]
        if rank == 0:
            raise imp.error("needs an input of rank >= 1")
        perm = x.perm if x.ssa is not None else identity(rank)
        ssa = imp.make(cls, imp.ir(x, perm), axis=IntegerAttr(perm.index(axis), i64))
        return [Value.of(ssa, perm)]

    return handler


def _argmax(imp: Importer, node: Node) -> list[Value]:
    """minun.argmax gives the flat index of the maximum (first on ties) as an i32; that is
    ONNX's index along `axis` exactly when every other dimension is 1.
    """
    x = node.inputs[0]
    axis = normalize_axis(int(node.attr("axis", 0)), x.rank)
    if int(node.attr("select_last_index", 0)):
        raise imp.error("select_last_index=1 is not supported (minun.argmax returns the "
                        "first maximum)")
    if any(d != 1 for i, d in enumerate(x.shape) if i != axis):
        raise imp.error(
            f"ArgMax over axis {axis} of {minun.shape_str(x.shape)} computes several indices; "
            f"only one index is supported (every dimension but the axis must be 1)")
    ssa = imp.emit(minun.ArgMaxOp.create(operands=[imp.ir(x, identity(x.rank))],
                                         result_types=[i32]))
    keep = int(node.attr("keepdims", 1))
    shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape) if keep or i != axis)
    return [Value(shape, ssa=ssa)]


def _gelu(imp: Importer, node: Node) -> list[Value]:
    """Gelu (opset 20): 0.5 x (1 + erf(x / sqrt 2)), or with approximate="tanh"
    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), as the ops it is defined by."""
    x = node.inputs[0]
    approximate = node.attr("approximate", "none")
    approximate = approximate.decode() if isinstance(approximate, bytes) else approximate
    if approximate == "tanh":
        cube = imp.binary(minun.HadamardOp, imp.binary(minun.HadamardOp, x, x), x)
        inner = imp.binary(minun.AddOp, x, _mul_const(imp, cube, 0.044715))
        t = imp.unary(minun.TanhOp, _mul_const(imp, inner, math.sqrt(2.0 / math.pi)))
    elif approximate == "none":
        t = imp.unary(minun.ErfOp, _mul_const(imp, x, 1.0 / math.sqrt(2.0)))
    else:
        raise imp.error(f"approximate='{approximate}': only 'none' and 'tanh' exist")
    one_plus = imp.binary(minun.AddOp, t, Value.const(np.float32(1.0)))
    return [_mul_const(imp, imp.binary(minun.HadamardOp, x, one_plus), 0.5)]


def _pow(imp: Importer, node: Node) -> list[Value]:
    """x ** n for a constant integer n in 1..4 (a Pow of 2 squares the deviation in a
    decomposed LayerNorm): exact repeated products. Other exponents (a square root, a
    negative power) have no integer form here."""
    x, e = node.inputs[0], node.inputs[1]
    exponent = np.asarray(imp.const(e, "the exponent"), dtype=np.float64).reshape(-1)
    if len(set(exponent.tolist())) != 1 or exponent[0] not in (1.0, 2.0, 3.0, 4.0):
        raise imp.error(f"Pow with exponent {exponent.tolist()[:4]}: only a constant "
                        "integer exponent 1 to 4 is supported")
    y = x
    for _ in range(int(exponent[0]) - 1):
        y = imp.binary(minun.HadamardOp, y, x)
    return [imp.reshape(y, np.broadcast_shapes(x.shape, e.shape)) if e.rank > x.rank
            else y]


HANDLERS = {
    "Add": _add,
    "Sub": _sub,
    "Mul": _mul,
    "Div": _binary(minun.DivOp),
    "Max": _variadic(minun.MaxOp),
    "Min": _variadic(minun.MinOp),
    "Sum": _variadic(minun.AddOp),
    "Neg": _unary(minun.NegOp),
    "Relu": _unary(minun.ReluOp),
    "Sigmoid": _unary(minun.SigmoidOp),
    "Tanh": _unary(minun.TanhOp),
    "Exp": _unary(minun.ExpOp),
    "Erf": _unary(minun.ErfOp),
    "Gelu": _gelu,
    "Pow": _pow,
    "LeakyRelu": _leaky_relu,
    "HardSigmoid": _hard_sigmoid,
    "HardSwish": _hard_swish,
    "PRelu": _prelu,
    "Elu": _elu,
    "Softplus": _softplus,
    "Mish": _mish,
    "Clip": _clip,
    "Softmax": _softmax(minun.SoftmaxOp),
    "LogSoftmax": _softmax(minun.LogSoftmaxOp),
    "ArgMax": _argmax,
}
