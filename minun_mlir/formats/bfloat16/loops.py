"""The ops of the bfloat16 representation (`bf16` elements, formats/bfloat16/representation.py):
values are stored as 16-bit keys whose integer order is the values' order, so relu, max,
min, maxpool, argmax, sgn and clipping are the integer handlers of the other families.
Here, through the `minun_bf16_*` helpers of minun_runtime.h (formats/bfloat16/runtime.py):

- add, sub, mul: one call per element (float32 inside, rounded once); exp, sigmoid,
  tanh (and log, sqrt): one call per element, computed on integers (correctly rounded);
- matmul, conv2d: the products of each output formed and summed in float32 in loop order
  (`minun_bf16_f32` converts the operands), rounded once by `minun_f32_bf16`;
- sparse matmul: linear.py's column walk, each added term rounded;
- neg: `~key` (`-1 - key`), 0 for 0 (-0 is stored as +0); clip, relu6, init: bounds and
  fills encoded at compile time;
- softmax, normalise_l2, row by row (formats/posit/loops.py: rows): the float32 sums of the rounded
  e = exp(x - max), or of the squares, in order, rounded; then the division (and sqrt).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, f32
from xdsl.ir import Operation, SSAValue

from minun_mlir.dialects import minun, num
from minun_mlir.formats.bfloat16 import representation as bfloat16_repr
from minun_mlir.formats.posit.loops import rows
from minun_mlir.lowering.loops import linear, skeleton
from minun_mlir.lowering.loops.builder import Gen
from minun_mlir.lowering.loops.elementwise import elementwise
from minun_mlir.lowering.loops.functions import row_max
from minun_mlir.lowering.loops.skeleton import Dot
from minun_mlir.lowering.loops.values import Const, Val, element_of, shape_of

if TYPE_CHECKING:
    from minun_mlir.lowering.lower_to_loops import Lowering

I16 = IntegerType(16)


def to_f32(g: Gen, x: SSAValue) -> SSAValue:
    return g.helper("minun_bf16_f32", [x], f32)


def from_f32(g: Gen, x: SSAValue) -> SSAValue:
    return g.helper("minun_f32_bf16", [x], I16)


def _binary(fn: str):
    def lower(lw: Lowering, op: Operation) -> Val:
        return elementwise(lw, op, lambda g, a, b: g.helper(f"minun_bf16_{fn}", [a, b], I16),
                           op.lhs, op.rhs)

    return lower


def _unary(fn: str):
    def lower(lw: Lowering, op: Operation) -> Val:
        return elementwise(lw, op, lambda g, x: g.helper(f"minun_bf16_{fn}", [x], I16),
                           op.input)

    return lower


def bf16_dot() -> Dot:
    """bfloat16's dot product: the exact float32 products summed in float32 in loop
    order, rounded once to bfloat16; a padded tap adds +0 (the sum starts at +0, so it is
    never -0, and s + 0 == s)."""
    return Dot(
        term=lambda g, a, b: [g.product(to_f32(g, a), to_f32(g, b), 32)],
        pad=lambda g: [g.const(0.0, f32)],
        begin=lambda g: [g.const(0.0, f32)],
        add=lambda g, acc, t: [g.wrap_add(acc[0], t[0], 32)],
        end=lambda g, acc: from_f32(g, acc[0]),
        reduce=lambda g, dims, terms: from_f32(g, linear.sum_terms(
            g, dims, 0, "nearest", f32, 32, lambda t: terms(t)[0])))


def lower_matmul(lw: Lowering, op: num.MatMulOp) -> Val:
    return skeleton.matmul(lw, op, bf16_dot())


def lower_conv2d(lw: Lowering, op: num.Conv2DOp) -> Val:
    return skeleton.conv2d(lw, op, bf16_dot())


def lower_sparse_matmul(lw: Lowering, op: num.SparseMatMulOp) -> Val:
    return linear.lower_sparse_matmul(
        lw, op, product=lambda g, a, b: g.product(to_f32(g, a), to_f32(g, b), 32),
        accumulate=lambda g, acc, t: from_f32(g, g.wrap_add(to_f32(g, acc), t, 32)))


def lower_clip(lw: Lowering, op: Operation) -> Val:
    lo, hi = bfloat16_repr.clip_bounds(op)

    def fn(g: Gen, x: SSAValue) -> SSAValue:  # np.clip: min(max(x, lo), hi)
        return g.min(g.max(x, g.iconst(lo, 16)), g.iconst(hi, 16))

    return elementwise(lw, op, fn, op.input)


def lower_neg(lw: Lowering, op: Operation) -> Val:
    # ~key = -1 - key, which no 16-bit key overflows; 0 for 0 (one zero: no -0)
    def fn(g: Gen, x: SSAValue) -> SSAValue:
        flipped = g.binop(arith.SubiOp, g.iconst(-1, 16), x, nsw=True)
        return g.select(g.cmp(x, g.iconst(0, 16), "eq"), x, flipped)

    return elementwise(lw, op, fn, op.input)


def lower_init(lw: Lowering, op: minun.InitOp) -> Val:
    q = int(bfloat16_repr.encode(np.array(float(op.fill.value.data))))
    return Const(q, shape_of(op.result), element_of(op.result))


def bf16(g: Gen, fn: str, args: list[SSAValue]) -> SSAValue:
    return g.helper(f"minun_bf16_{fn}", args, I16)


def lower_softmax(lw: Lowering, op: num.SoftmaxOp) -> Val:
    def body(g: Gen, x, whole, at, n: int) -> None:
        top = row_max(g, x, at, n)

        def exp_sum(i: SSAValue, acc: SSAValue) -> list[SSAValue]:
            e = bf16(g, "exp", [bf16(g, "sub", [x.load(g, at(i)), top])])
            g.store(e, whole.buffer, whole.at(at(i)))
            return [g.add(arith.AddfOp(acc, to_f32(g, e)))]

        total = from_f32(g, g.for_(0, n, [g.const(0.0, f32)], exp_sum)[0])
        g.for_(0, n, [], lambda i: g.store(bf16(g, "div", [whole.load(g, at(i)), total]),
                                           whole.buffer, whole.at(at(i))))

    return rows(lw, op, body)


def lower_log_softmax(lw: Lowering, op: num.LogSoftmaxOp) -> Val:
    def body(g: Gen, x, whole, at, n: int) -> None:
        top = row_max(g, x, at, n)

        def exp_sum(i: SSAValue, acc: SSAValue) -> list[SSAValue]:
            d = bf16(g, "sub", [x.load(g, at(i)), top])
            g.store(d, whole.buffer, whole.at(at(i)))
            return [g.add(arith.AddfOp(acc, to_f32(g, bf16(g, "exp", [d]))))]

        total = from_f32(g, g.for_(0, n, [g.const(0.0, f32)], exp_sum)[0])
        log = bf16(g, "log", [total])
        g.for_(0, n, [], lambda i: g.store(bf16(g, "sub", [whole.load(g, at(i)), log]),
                                           whole.buffer, whole.at(at(i))))

    return rows(lw, op, body)


def lower_normalise_l2(lw: Lowering, op: num.NormaliseL2Op) -> Val:
    zero = lw.g.iconst(0, 16)

    def body(g: Gen, x, whole, at, n: int) -> None:
        def square(i: SSAValue, acc: SSAValue) -> list[SSAValue]:
            v = to_f32(g, x.load(g, at(i)))
            return [g.add(arith.AddfOp(acc, g.add(arith.MulfOp(v, v))))]

        total = from_f32(g, g.for_(0, n, [g.const(0.0, f32)], square)[0])
        norm = bf16(g, "sqrt", [total])
        pos = g.cmp(norm, zero, "sgt")  # keys order as values: +0 is 0
        g.for_(0, n, [], lambda i: g.store(
            g.select(pos, bf16(g, "div", [x.load(g, at(i)), norm]), zero),
            whole.buffer, whole.at(at(i))))

    return rows(lw, op, body)


HANDLERS: dict[type[Operation], Callable[[Lowering, Any], Any]] = {
    num.AddOp: _binary("add"),
    num.SubOp: _binary("sub"),
    num.MulOp: _binary("mul"),
    num.ExpOp: _unary("exp"),
    num.SigmoidOp: _unary("sigmoid"),
    num.TanhOp: _unary("tanh"),
    num.MatMulOp: lower_matmul,
    num.Conv2DOp: lower_conv2d,
    num.SparseMatMulOp: lower_sparse_matmul,
    num.ClipOp: lower_clip,
    num.Relu6Op: lower_clip,
    num.NegOp: lower_neg,
    minun.InitOp: lower_init,
    num.SoftmaxOp: lower_softmax,
    num.LogSoftmaxOp: lower_log_softmax,
    num.NormaliseL2Op: lower_normalise_l2,
}
