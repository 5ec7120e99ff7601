"""Element-wise arithmetic (add, sub, mul, rescale, max, min, relu, relu6, clip, neg):
each becomes a lazy `Elementwise` value, so it is computed inside its consumer's loop
unless the driver decides to store it. A rescale of a parameter is folded into another
global at compile time instead."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import f32
from xdsl.ir import Operation, SSAValue

from minun_mlir.dialects import num
from minun_mlir.dialects.num import FixedType
from minun_mlir.formats.fixed import arith as fx
from minun_mlir.lowering.loops.builder import Gen
from minun_mlir.lowering.loops.values import (
    CHEAP,
    COMPUTE,
    FREE,
    Buf,
    Const,
    Elementwise,
    Val,
    element_of,
    fx_type,
    is_float,
    shape_of,
    storage,
)

if TYPE_CHECKING:
    from minun_mlir.lowering.lower_to_loops import Lowering


def elementwise(lw: Lowering, op: Operation, fn, *operands: SSAValue) -> Val:
    """fn(g, *scalars) over the lowered operands, shaped as the op's result."""
    vals = [lw.vals[v] for v in operands]
    return Elementwise(fn, vals, shape_of(op.results[0]), element_of(op.results[0]))


def lower_rescale(lw: Lowering, op: num.RescaleOp) -> Val:
    src = lw.vals[op.input]
    out = fx_type(op.result)
    shift, rounding, overflow = op.shift, op.rounding.data, op.overflow.data
    if isinstance(src, Const):
        q = fx.narrow(fx.shift_right(np.array(int(src.value)), shift, rounding),
                      out.width, overflow)
        return Const(int(q), src.shape, out)
    owner = op.input.owner
    if isinstance(owner, num.ParamOp) and isinstance(src, Buf):
        key = (op.input, f"{out.width},{out.frac},{rounding},{overflow}")
        if key not in lw.folded:
            q = fx.narrow(fx.shift_right(owner.array().astype(np.int64), shift, rounding),
                          out.width, overflow)
            name = f"p_{owner.sym_name.data}_q{out.width}s{out.frac}".replace("-", "m")
            lw.folded[key] = Buf(lw.g.global_(name, q, storage(out)), src.shape, out)
        return lw.folded[key]
    narrow16 = narrow_sum(op, src, out)
    if narrow16 is not None:
        return narrow16

    def fn(g: Gen, x: SSAValue) -> SSAValue:
        return g.rescale(x, shift, rounding, overflow, out.width)

    return Elementwise(fn, [src], src.shape, out, CHEAP if src.cost == FREE else COMPUTE)


def narrow_sum(op: num.RescaleOp, src: Val, out: FixedType) -> Val | None:
    """rescale(a + b) with no shift and wrap: the low bits of the exact sum are the
    wrapped sum in the narrow type (16-bit adds on AVR instead of 32-bit ones)."""
    owner = op.input.owner
    if (op.shift != 0 or op.overflow.data != "wrap" or not isinstance(src, Elementwise)
            or not isinstance(owner, (num.AddOp, num.SubOp))):
        return None
    a, b = (fx_type(v) for v in (owner.lhs, owner.rhs))
    if max(a.width, b.width) > out.width:
        return None
    sub = isinstance(owner, num.SubOp)

    def fn(g: Gen, x: SSAValue, y: SSAValue) -> SSAValue:
        return g.wrap_add(x, y, out.width, sub)

    return Elementwise(fn, src.operands, src.shape, out)


def lower_add(lw: Lowering, op: Operation, sub: bool = False) -> Val:
    res = element_of(op.results[0])
    d = res.width if isinstance(res, FixedType) else 32
    return elementwise(lw, op, lambda g, a, b: g.wrap_add(a, b, d, sub), op.lhs, op.rhs)


def lower_sub(lw: Lowering, op: Operation) -> Val:
    return lower_add(lw, op, sub=True)


def lower_mul(lw: Lowering, op: num.MulOp) -> Val:
    res = element_of(op.result)
    d = res.width if isinstance(res, FixedType) else 32
    return elementwise(lw, op, lambda g, a, b: g.product(a, b, d), op.lhs, op.rhs)


def lower_max(lw: Lowering, op: Operation) -> Val:
    return elementwise(lw, op, lambda g, a, b: g.max(a, b), op.lhs, op.rhs)


def lower_min(lw: Lowering, op: Operation) -> Val:
    return elementwise(lw, op, lambda g, a, b: g.min(a, b), op.lhs, op.rhs)


def lower_relu(lw: Lowering, op: Operation) -> Val:
    el = element_of(op.input)
    return elementwise(lw, op, lambda g, x: g.max(x, g.const(0, storage(el))), op.input)


def clip(lw: Lowering, op: Operation, lo: float, hi: float, six: bool = False) -> Val:
    el = element_of(op.input)
    if is_float(el):
        def ffn(g: Gen, x: SSAValue) -> SSAValue:
            return g.min(g.max(x, g.const(lo, f32)), g.const(hi, f32))

        return elementwise(lw, op, ffn, op.input)
    tlo, thi = fx.int_range(el.width)
    if six:  # as the evaluator: 6 at the operand's scale
        qlo, qhi = 0, 6 << el.frac if el.frac >= 0 else 6 >> -el.frac
    else:
        qlo = int(fx.quantize(np.array(lo), 64, el.frac, lw.rounding))
        qhi = int(fx.quantize(np.array(hi), 64, el.frac, lw.rounding))
    qlo, qhi = max(qlo, tlo), min(qhi, thi)

    def fn(g: Gen, x: SSAValue) -> SSAValue:  # np.clip: min(max(x, lo), hi)
        x = g.max(x, g.iconst(qlo, el.width)) if qlo > tlo else x
        return g.min(x, g.iconst(qhi, el.width)) if qhi < thi else x

    return elementwise(lw, op, fn, op.input)


def lower_relu6(lw: Lowering, op: Operation) -> Val:
    return clip(lw, op, 0.0, 6.0, six=True)


def lower_clip(lw: Lowering, op: num.ClipOp) -> Val:
    return clip(lw, op, float(op.lo.value.data), float(op.hi.value.data))


def lower_neg(lw: Lowering, op: Operation) -> Val:
    el = element_of(op.input)
    if is_float(el):
        return elementwise(lw, op, lambda g, x: g.add(arith.NegfOp(x)), op.input)
    return elementwise(
        lw, op, lambda g, x: g.binop(arith.SubiOp, g.iconst(0, el.width), x), op.input)


HANDLERS: dict[type[Operation], Callable[[Lowering, Any], Any]] = {
    num.RescaleOp: lower_rescale,
    num.AddOp: lower_add,
    num.SubOp: lower_sub,
    num.MulOp: lower_mul,
    num.MaxOp: lower_max,
    num.MinOp: lower_min,
    num.ReluOp: lower_relu,
    num.Relu6Op: lower_relu6,
    num.ClipOp: lower_clip,
    num.NegOp: lower_neg,
}
