"""The ops of the posit representation (`!num.posit<n, es>`), whose arithmetic is calls to
the posit runtime (third_party/softposit, through the `minun_p<n>e<es>_*` wrappers of
minun_runtime.h, formats/posit/runtime.py). A posit is stored as its n-bit pattern in an
n-bit signed integer, whose order is the posits' order: relu, max, min, maxpool, argmax,
sgn and neg are the integer handlers of the other families, unchanged. Here:

- add, sub, mul, exp, sigmoid, tanh: one runtime call per element (lazy `Elementwise`);
- matmul, conv2d: each output's dot product accumulated exactly in a quire and rounded
  once: `minun_p<n>e<es>_qclear_<d>()` clears the quire of nesting depth d (a dot product
  whose operand is itself a lazy dot product uses depth 2 for the inner one, and so on),
  `minun_p<n>e<es>_fma_<d>(a, b)` adds a term to it, `minun_p<n>e<es>_qpop_<d>()` rounds it;
  without a quire (`num.quire = false` on the function) a loop-carried partial sum from 0,
  `add(acc, mul(a, b))` per term (as posit.rounded_dot), which softmax and normalise_l2
  also use for their sums;
- sparse matmul: the compressed-column walk of linear.py with posit products and sums;
- convert (between posit formats): one runtime call per element;
- clip, relu6, init: the real bounds and fills encoded as patterns at compile time;
- softmax, normalise_l2 (row by row along the last axis): softmax stores e = exp(x - max)
  in the result while the quire sums e * 1, then divides each by the rounded sum;
  normalise_l2 sums the squares in the quire, takes the sqrt and divides (0 when it is 0).

The handlers are chosen by lower-to-loops for ops whose element type is a posit
(`HANDLERS` here takes precedence over the families' for those ops).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from minun_mlir.diagnostics import error
from minun_mlir.dialects import minun, num
from minun_mlir.dialects.num import PositType
from minun_mlir.formats.posit import representation as posit_repr
from minun_mlir.formats.posit.runtime import MAX_QUIRE_DEPTH
from minun_mlir.lowering.loops import functions, linear, skeleton
from minun_mlir.lowering.loops.builder import Gen, Lin
from minun_mlir.lowering.loops.elementwise import elementwise
from minun_mlir.lowering.loops.skeleton import Dot
from minun_mlir.lowering.loops.values import Const, Val, element_of, shape_of, storage

if TYPE_CHECKING:
    from minun_mlir.lowering.lower_to_loops import Lowering


def prefix(el: PositType) -> str:
    """The runtime wrappers' prefix of a posit format: `minun_p16e2`."""
    return f"minun_p{el.width}e{el.exponent_bits}"


def call(g: Gen, el: PositType, fn: str, args: list[SSAValue]) -> SSAValue:
    return g.helper(f"{prefix(el)}_{fn}", args, storage(el))


def _binary(fn: str):
    def lower(lw: Lowering, op: Operation) -> Val:
        el = element_of(op.results[0])
        return elementwise(lw, op, lambda g, a, b: call(g, el, fn, [a, b]), op.lhs, op.rhs)

    return lower


def _unary(fn: str):
    def lower(lw: Lowering, op: Operation) -> Val:
        el = element_of(op.results[0])
        return elementwise(lw, op, lambda g, x: call(g, el, fn, [x]), op.input)

    return lower


def quire_sum(g: Gen, el: PositType, dims: tuple[int, ...],
              term: Callable[[list[Lin]], tuple[SSAValue, SSAValue]],
              quire: bool = True) -> SSAValue:
    """sum of a * b over the terms indexed row-major by `dims`, through the quire of the
    current nesting depth (minun_runtime.h defines as many quires as the deepest uses), or
    with `quire` false from 0, each product and partial sum rounded (no quire)."""
    dot = posit_dot(el, quire)
    return dot.sum(g, dims, lambda idx: dot.term(g, *term(idx)))


@contextlib.contextmanager
def _nested(g: Gen):
    """One dot product more deeply nested (a lazy operand computed inside its consumer's
    loop): its quire is the next depth's (g.quire_depth)."""
    if g.quire_depth >= MAX_QUIRE_DEPTH:
        raise error(f"posit dot products nested more than {MAX_QUIRE_DEPTH} deep")
    g.quire_depth += 1
    try:
        yield
    finally:
        g.quire_depth -= 1


def posit_dot(el: PositType, quire: bool) -> Dot:
    """A posit dot product: through the quire of the current nesting depth (clear, one
    fma per term, round once), or without a quire acc = add(acc, mul(x, w)) from 0 in
    loop order (posit.rounded_dot). A padded tap adds nothing: 0 * w = 0 exactly."""
    sw = el.storage_width
    if not quire:
        return Dot(
            term=lambda g, a, b: [call(g, el, "mul", [a, b])],
            pad=lambda g: [g.iconst(0, sw)],
            begin=lambda g: [g.iconst(0, sw)],
            add=lambda g, acc, t: [call(g, el, "add", [acc[0], t[0]])],
            end=lambda g, acc: acc[0])

    def fma(g: Gen, acc: list[SSAValue], t: list[SSAValue]) -> list[SSAValue]:
        g.probe(f"{prefix(el)}_fma_{g.quire_depth}", t)
        return []

    def begin(g: Gen) -> list[SSAValue]:
        g.probe(f"{prefix(el)}_qclear_{g.quire_depth}", [])
        return []

    return Dot(term=lambda g, a, b: [a, b], pad=lambda g: [g.iconst(0, sw)] * 2,
               begin=begin, add=fma,
               end=lambda g, acc: call(g, el, f"qpop_{g.quire_depth}", []), scope=_nested)


def _dot_of(op: num.MatMulOp | num.Conv2DOp) -> Dot:
    return posit_dot(element_of(op.result), posit_repr.uses_quire(op))


def lower_matmul(lw: Lowering, op: num.MatMulOp) -> Val:
    return skeleton.matmul(lw, op, _dot_of(op))


def lower_conv2d(lw: Lowering, op: num.Conv2DOp) -> Val:
    return skeleton.conv2d(lw, op, _dot_of(op))


def lower_sparse_matmul(lw: Lowering, op: num.SparseMatMulOp) -> Val:
    el = element_of(op.result)
    return linear.lower_sparse_matmul(
        lw, op, product=lambda g, a, b: call(g, el, "mul", [a, b]),
        accumulate=lambda g, acc, t: call(g, el, "add", [acc, t]))


def lower_clip(lw: Lowering, op: Operation) -> Val:
    lo, hi = posit_repr.clip_bounds(op)
    w = element_of(op.input).storage_width

    def fn(g: Gen, x: SSAValue) -> SSAValue:  # np.clip: min(max(x, lo), hi)
        return g.min(g.max(x, g.iconst(lo, w)), g.iconst(hi, w))

    return elementwise(lw, op, fn, op.input)


def lower_neg(lw: Lowering, op: num.NegOp) -> Val:
    """Two's complement negation of the n-bit pattern: the integer negation of the
    stored value, sign-extended again from n bits when n is below the storage width (so
    that NaR stays NaR, as in the evaluator)."""
    el = element_of(op.input)
    w = el.storage_width
    if el.width == w:
        return elementwise(lw, op, lambda g, x: g.binop(arith.SubiOp, g.iconst(0, w), x),
                           op.input)
    return elementwise(lw, op, lambda g, x: call(g, el, "neg", [x]), op.input)


def lower_convert(lw: Lowering, op: num.ConvertOp) -> Val:
    a, b = element_of(op.input), element_of(op.result)
    fn = f"{prefix(a)}_to_p{b.width}e{b.exponent_bits}"
    return elementwise(lw, op, lambda g, x: g.helper(fn, [x], storage(b)), op.input)


def lower_init(lw: Lowering, op: minun.InitOp) -> Val:
    el = element_of(op.result)
    q = int(posit_repr.encode(np.array(float(op.fill.value.data)), el))
    return Const(q, shape_of(op.result), el)


def rows(lw: Lowering, op: Operation, body: Callable[..., None]) -> Val:
    """An op computed row by row along the last axis into a fresh result buffer:
    body(g, x, whole, at, n) per row, `at(i)` the row's i-th index."""
    x, _, whole = functions.last_axis_op(lw, op)
    shape = shape_of(op.operands[0])

    def row(idx: list[Lin]) -> None:
        body(lw.g, x, whole, lambda i: idx[:-1] + [Lin.of(i)], shape[-1])

    lw.g.nest(shape[:-1], lambda idx: row(idx + [Lin(0)]))
    return whole


def lower_softmax(lw: Lowering, op: num.SoftmaxOp) -> Val:
    el = element_of(op.result)
    one = lw.g.iconst(1 << (el.width - 2), el.storage_width)

    def body(g: Gen, x, whole, at, n: int) -> None:
        top = functions.row_max(g, x, at, n)

        def term(t: list[Lin]) -> tuple[SSAValue, SSAValue]:
            e = call(g, el, "exp", [call(g, el, "sub", [x.load(g, at(t[0])), top])])
            g.store(e, whole.buffer, whole.at(at(t[0])))
            return e, one

        total = quire_sum(g, el, (n,), term, posit_repr.uses_quire(op))
        g.for_(0, n, [], lambda i: g.store(call(g, el, "div", [whole.load(g, at(i)), total]),
                                           whole.buffer, whole.at(at(i))))

    return rows(lw, op, body)


def lower_log_softmax(lw: Lowering, op: num.LogSoftmaxOp) -> Val:
    """d = x - max stored in the result while the quire sums exp(d) * 1; then each
    d - log(sum)."""
    el = element_of(op.result)
    one = lw.g.iconst(1 << (el.width - 2), el.storage_width)

    def body(g: Gen, x, whole, at, n: int) -> None:
        top = functions.row_max(g, x, at, n)

        def term(t: list[Lin]) -> tuple[SSAValue, SSAValue]:
            d = call(g, el, "sub", [x.load(g, at(t[0])), top])
            g.store(d, whole.buffer, whole.at(at(t[0])))
            return call(g, el, "exp", [d]), one

        log = call(g, el, "log", [quire_sum(g, el, (n,), term, posit_repr.uses_quire(op))])
        g.for_(0, n, [], lambda i: g.store(call(g, el, "sub", [whole.load(g, at(i)), log]),
                                           whole.buffer, whole.at(at(i))))

    return rows(lw, op, body)


def lower_normalise_l2(lw: Lowering, op: num.NormaliseL2Op) -> Val:
    el = element_of(op.result)
    zero = lw.g.iconst(0, el.storage_width)

    def body(g: Gen, x, whole, at, n: int) -> None:
        def term(t: list[Lin]) -> tuple[SSAValue, SSAValue]:
            v = x.load(g, at(t[0]))
            return v, v

        norm = call(g, el, "sqrt", [quire_sum(g, el, (n,), term, posit_repr.uses_quire(op))])
        nz = g.cmp(norm, zero, "ne")
        g.for_(0, n, [], lambda i: g.store(
            g.select(nz, call(g, el, "div", [x.load(g, at(i)), norm]), zero),
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
    num.ConvertOp: lower_convert,
    num.NegOp: lower_neg,
    num.ClipOp: lower_clip,
    num.Relu6Op: lower_clip,
    minun.InitOp: lower_init,
    num.SoftmaxOp: lower_softmax,
    num.LogSoftmaxOp: lower_log_softmax,
    num.NormaliseL2Op: lower_normalise_l2,
}
