"""Ops that are functions of a whole value rather than of one element's operands:
exp/sigmoid/tanh (runtime helpers, or SeeDot's two-table exp inlined with its tables as
globals), the L2 normalisation of the last axis (written straight to a buffer) and the
argmax/sgn that turn scores into the returned label."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, f32
from xdsl.ir import Operation, SSAValue

from minun_mlir.dialects import num
from minun_mlir.formats.fixed import arith as fx
from minun_mlir.lowering.loops.builder import INDEX, NSW, Buffer, Gen, Lin, width
from minun_mlir.lowering.loops.elementwise import elementwise
from minun_mlir.lowering.loops.values import Buf, Val, element_of, is_float, shape_of, storage

if TYPE_CHECKING:
    from minun_mlir.lowering.lower_to_loops import Lowering


def lower_exp(lw: Lowering, op: num.ExpOp) -> Val:
    el = element_of(op.input)
    if is_float(el):
        return elementwise(lw, op, lambda g, x: g.helper("expf", [x], f32), op.input)
    if op.method.data == "seedot":
        return seedot_exp(lw, op)
    name = f"minun_exp{el.width}" + (f"_{lw.rounding}" if el.width == 16 else "")
    return elementwise(lw, op, lambda g, x: g.helper(name, [x], x.type), op.input)


def table_fn(lw: Lowering, op: Operation, kind: str) -> Val:
    el = element_of(op.input)
    if is_float(el):
        name = {"sigmoid": "minun_sigmoidf", "tanh": "tanhf"}[kind]
        return elementwise(lw, op, lambda g, x: g.helper(name, [x], f32), op.input)
    name = f"minun_{kind}{el.width}" + (f"_{lw.rounding}" if el.width == 16 else "")
    return elementwise(lw, op, lambda g, x: g.helper(name, [x], x.type), op.input)


def lower_sigmoid(lw: Lowering, op: Operation) -> Val:
    return table_fn(lw, op, "sigmoid")


def lower_tanh(lw: Lowering, op: Operation) -> Val:
    return table_fn(lw, op, "tanh")


def seedot_exp(lw: Lowering, op: num.ExpOp) -> Val:
    """SeeDot's two-table exp, inlined; the tables are stored pre-shifted by S_mul/2."""
    se = op.seedot()
    tf, tg, _, _ = se.tables()
    _, s_mul = se.out_scale()
    bits = se.bits
    ta = fx.shift_right(tf, s_mul // 2, lw.rounding)
    tb = fx.shift_right(tg, s_mul // 2, lw.rounding)
    g = lw.g
    buf_a = g.global_("exp_tf", ta, IntegerType(bits))
    buf_b = g.global_("exp_tg", tb, IntegerType(bits))
    k, t = se.k, se.t

    def fn(g: Gen, x: SSAValue) -> SSAValue:
        wide = max(32, width(x))
        xi = g.resize(x, wide)
        d = g.binop(arith.SubiOp, g.clamp(xi, se.lo, se.hi), g.iconst(se.lo, wide),
                    nsw=True)
        mask = g.iconst((1 << t) - 1, wide)
        i = g.binop(arith.AndIOp, g.shrsi(d, k - t), mask)
        if k >= 2 * t:
            j = g.shrsi(d, k - 2 * t)
        else:
            j = g.add(arith.ShLIOp(d, g.iconst(2 * t - k, wide), overflow=NSW))
        j = g.binop(arith.AndIOp, j, mask)
        a = g.load(buf_a, Lin.of(g.add(arith.IndexCastOp(i, INDEX))))
        b = g.load(buf_b, Lin.of(g.add(arith.IndexCastOp(j, INDEX))))
        return g.product(a, b, bits)

    return elementwise(lw, op, fn, op.input)


def row_max(g: Gen, x, at, n: int) -> SSAValue:
    """The largest of the n values `x` holds at `at(0)` .. `at(n - 1)` (one row)."""
    first = x.load(g, at(0))
    if n == 1:
        return first
    return g.for_(1, n, [first], lambda i, m: [g.max(m, x.load(g, at(i)))])[0]


def last_axis_op(lw: Lowering, op: Operation) -> tuple[Buf, Buffer, Buf]:
    """For an op computed row by row along the last axis (normalise_l2, softmax): its input
    as a buffer, and the result's buffer (owned by the result) and view."""
    x = lw.buffer_of(op.operands[0])
    res = element_of(op.results[0])
    shape = shape_of(op.operands[0])
    out = lw.g.alloc(math.prod(shape), storage(res), op.results[0].name_hint)
    out.owner = op.results[0]
    return x, out, Buf(out, shape, res)


def lower_normalise_l2(lw: Lowering, op: num.NormaliseL2Op) -> Val:
    g = lw.g
    x, out, whole = last_axis_op(lw, op)
    el, res = element_of(op.input), element_of(op.result)
    shape = shape_of(op.input)
    c = shape[-1]

    def position(idx: list[Lin]) -> None:
        def at(ch: Lin) -> list[Lin]:
            return idx[:-1] + [ch]

        if is_float(el):
            def sq(ch: SSAValue, acc: SSAValue) -> list[SSAValue]:
                v = x.load(g, at(Lin.of(ch)))
                return [g.add(arith.AddfOp(acc, g.add(arith.MulfOp(v, v))))]

            total = g.for_(0, c, [g.const(0.0, f32)], sq)[0]
            norm = g.helper("sqrtf", [total], f32)
            pos = g.cmp(norm, g.const(0.0, f32), "sgt")

            def write(ch: SSAValue) -> None:
                v = x.load(g, at(Lin.of(ch)))
                q = g.select(pos, g.add(arith.DivfOp(v, norm)), g.const(0.0, f32))
                g.store(q, out, whole.at(at(Lin.of(ch))))

            g.for_(0, c, [], write)
            return
        wide = 64 if 2 * el.width + max(c - 1, 0).bit_length() > 31 else 32
        k = fx.normalise_prescale(el.width, c)  # keeps the sum of squares exact in int64

        def sq(ch: SSAValue, acc: SSAValue) -> list[SSAValue]:
            v = g.resize(x.load(g, at(Lin.of(ch))), wide)
            v = g.shrsi(v, k) if k else v
            return [g.binop(arith.AddiOp, acc, g.binop(arith.MuliOp, v, v, nsw=True),
                            nsw=True)]

        total = g.for_(0, c, [g.iconst(0, wide)], sq)[0]
        norm = g.helper(f"minun_isqrt{wide}", [total], IntegerType(wide))
        if k:
            norm = g.binop(arith.MuliOp, norm, g.iconst(1 << k, wide), nsw=True)
        s_out = res.frac
        top = 1 << (el.width - 1)
        norm_bits = math.isqrt(c * top * top).bit_length() + 1
        qw = 32 if max(norm_bits, el.width + s_out) <= 31 else 64
        nz = g.cmp(norm, g.iconst(0, wide), "sgt")
        safe = g.resize(g.select(nz, norm, g.iconst(1, wide)), qw)

        def write(ch: SSAValue) -> None:
            v = g.resize(x.load(g, at(Lin.of(ch))), qw)
            shifted = g.add(arith.MuliOp(v, g.iconst(1 << s_out, qw), overflow=NSW))
            q = g.add(arith.DivSIOp(shifted, safe))
            q = g.select(nz, q, g.iconst(0, qw))
            g.store(g.narrow(q, res.width, "wrap"), out, whole.at(at(Lin.of(ch))))

        g.for_(0, c, [], write)

    g.nest(shape[:-1], lambda idx: position(idx + [Lin(0)]))
    return whole


def lower_softmax(lw: Lowering, op: num.SoftmaxOp) -> Val:
    """Per row of the last axis: the max, e = exp(x - max) stored in the result buffer with
    the sum accumulated, then each e divided by the sum (docs/numerics.md)."""
    g = lw.g
    x, out, whole = last_axis_op(lw, op)
    el, res = element_of(op.input), element_of(op.result)
    shape = shape_of(op.input)
    n = shape[-1]

    def row(idx: list[Lin]) -> None:
        def at(i: SSAValue | int) -> list[Lin]:
            return idx[:-1] + [Lin.of(i)]

        top = row_max(g, x, at, n)
        if is_float(el):
            def exp_sum(i: SSAValue, acc: SSAValue) -> list[SSAValue]:
                e = g.helper("expf", [g.add(arith.SubfOp(x.load(g, at(i)), top))], f32)
                g.store(e, out, whole.at(at(i)))
                return [g.add(arith.AddfOp(acc, e))]

            total = g.for_(0, n, [g.const(0.0, f32)], exp_sum)[0]
            g.for_(0, n, [], lambda i: g.store(
                g.add(arith.DivfOp(whole.load(g, at(i)), total)), out, whole.at(at(i))))
            return
        tb = 8 if el.width <= 8 else 16
        s_in, s_e = num._SHIFTRY_SCALES[tb]
        dw = 64 if el.width > 16 else 32
        sw = 64 if n << s_e >= 1 << 31 else 32
        qw = 64 if s_e + res.frac >= 31 or sw == 64 else 32
        exp = f"minun_exp{tb}" + (f"_{lw.rounding}" if tb == 16 else "")
        if res.width >= tb:  # the e values wait in the result buffer
            keep, keep_at = whole, at
        else:  # an 8-bit result cannot hold 16-bit e values: one row of them aside
            keep = Buf(g.alloc(n, IntegerType(tb), "softmax_e"), (n,), IntegerType(tb))
            keep_at = lambda i: [Lin.of(i)]  # noqa: E731

        def exp_sum(i: SSAValue, acc: SSAValue) -> list[SSAValue]:
            d = g.binop(arith.SubiOp, g.resize(x.load(g, at(i)), dw), g.resize(top, dw),
                        nsw=True)
            d = g.rescale(d, el.frac - s_in, lw.rounding, "saturate", tb)
            e = g.helper(exp, [d], IntegerType(tb))
            g.store(g.resize(e, keep.buffer.elem.width.data), keep.buffer, keep.at(keep_at(i)))
            return [g.binop(arith.AddiOp, acc, g.resize(e, sw), nsw=True)]

        total = g.resize(g.for_(0, n, [g.iconst(0, sw)], exp_sum)[0], qw)

        def divide(i: SSAValue) -> None:
            e = g.resize(keep.load(g, keep_at(i)), qw)
            scaled = g.add(arith.MuliOp(e, g.iconst(1 << res.frac, qw), overflow=NSW))
            g.store(g.resize(g.add(arith.DivSIOp(scaled, total)), res.width), out,
                    whole.at(at(i)))

        g.for_(0, n, [], divide)

    g.nest(shape[:-1], lambda idx: row(idx + [Lin(0)]))
    return whole


def lower_log_softmax(lw: Lowering, op: num.LogSoftmaxOp) -> Val:
    """Per row of the last axis: the max; the sum of exp(x - max) (fixed point: Shiftry's
    table, as softmax; float32: expf) and its log (minun_lnsum at scale 16, or logf);
    then each (x - max) - log at the result's scale (fixed: rounded once, saturated)."""
    from minun_mlir.formats.fixed.representation import log_softmax_scales

    g = lw.g
    x, out, whole = last_axis_op(lw, op)
    el, res = element_of(op.input), element_of(op.result)
    shape = shape_of(op.input)
    n = shape[-1]

    def row(idx: list[Lin]) -> None:
        def at(i: SSAValue | int) -> list[Lin]:
            return idx[:-1] + [Lin.of(i)]

        top = row_max(g, x, at, n)
        if is_float(el):
            def exp_sum(i: SSAValue, acc: SSAValue) -> list[SSAValue]:
                d = g.add(arith.SubfOp(x.load(g, at(i)), top))
                g.store(d, out, whole.at(at(i)))
                return [g.add(arith.AddfOp(acc, g.helper("expf", [d], f32)))]

            total = g.for_(0, n, [g.const(0.0, f32)], exp_sum)[0]
            log = g.helper("logf", [total], f32)
            g.for_(0, n, [], lambda i: g.store(
                g.add(arith.SubfOp(whole.load(g, at(i)), log)), out, whole.at(at(i))))
            return
        t, tb = log_softmax_scales(el, res)
        s_in, s_e = num._SHIFTRY_SCALES[tb]
        dw = 64 if el.width > 16 else 32
        exp = f"minun_exp{tb}" + (f"_{lw.rounding}" if tb == 16 else "")

        def diff(i: SSAValue) -> SSAValue:
            return g.binop(arith.SubiOp, g.resize(x.load(g, at(i)), dw), g.resize(top, dw),
                           nsw=True)

        def exp_sum(i: SSAValue, acc: SSAValue) -> list[SSAValue]:
            d = g.rescale(diff(i), el.frac - s_in, lw.rounding, "saturate", tb)
            e = g.helper(exp, [d], IntegerType(tb))
            return [g.binop(arith.AddiOp, acc, g.resize(e, 64), nsw=True)]

        total = g.for_(0, n, [g.iconst(0, 64)], exp_sum)[0]
        log = g.resize(g.helper("minun_lnsum", [total, g.iconst(s_e, 32)], IntegerType(32)), 64)
        log = g.rescale(log, fx.LOG_SCALE - t, lw.rounding, "wrap", 64)

        def write(i: SSAValue) -> None:
            d = g.rescale(g.resize(diff(i), 64), el.frac - t, lw.rounding, "wrap", 64)
            y = g.binop(arith.SubiOp, d, log, nsw=True)
            g.store(g.rescale(y, t - res.frac, lw.rounding, "saturate", res.width), out,
                    whole.at(at(i)))

        g.for_(0, n, [], write)

    g.nest(shape[:-1], lambda idx: row(idx + [Lin(0)]))
    return whole


def argmax(lw: Lowering, src: Val) -> SSAValue:
    """Flat index of the first maximum."""
    g = lw.g
    if not (isinstance(src, Buf) and src.contiguous):
        src = lw.materialize(src)
    n = math.prod(src.shape)
    flat = Buf(src.buffer, (n,), src.el, src.offset, (1,))
    first = flat.load(g, [Lin(0)])
    if n == 1:
        return g.index(0)

    def body(i: SSAValue, best: SSAValue, best_v: SSAValue) -> list[SSAValue]:
        v = flat.load(g, [Lin.of(i)])
        gt = g.cmp(v, best_v, "sgt")
        return [g.select(gt, i, best), g.select(gt, v, best_v)]

    return g.for_(1, n, [g.index(0), first], body)[0]


def above(lw: Lowering, src: Val, threshold: float) -> SSAValue:
    """The label of a one-value output: 1 when its real is above `threshold`
    (modules.decision_threshold), as the evaluator labels the decoded value. Compared in
    the output's own format, on the stored value (`stored_threshold`)."""
    g = lw.g
    v = src.load(g, [Lin(0)] * len(src.shape))
    code, inclusive = stored_threshold(src.el, threshold)
    pos = g.cmp(v, g.const(code, v.type), "sge" if inclusive else "sgt")
    return g.select(pos, g.index(1), g.index(0))


def stored_threshold(el, threshold: float) -> tuple[int | float, bool]:
    """(c, False): a stored value is above c (in the stored order: fixed point's and
    zero-skew's integers, posit patterns, bfloat16 keys, float32) iff its real is above
    `threshold`; c is the largest stored value whose real is at most the threshold
    (decoding is monotone in that order). (lowest, True) when every real is above it."""
    from minun_mlir.dialects.num import PositType
    from minun_mlir.numerics import formats

    if is_float(el):
        c = np.float32(threshold)
        return float(c if c <= threshold else np.nextafter(c, np.float32(-np.inf))), False
    rep = formats.of_element(el)
    bits = el.width if isinstance(el, PositType) else storage(el).width.data
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def real(s: int) -> float:
        return float(rep.decode(np.array([s], np.int64), el).reshape(-1)[0])

    code = int(np.clip(rep.encode(np.array([threshold], np.float64), el, "nearest")
                       .reshape(-1)[0], lo, hi))
    while code > lo and not real(code) <= threshold:  # NaN (a posit's NaR) is not <=
        code -= 1
    while code < hi and real(code + 1) <= threshold:
        code += 1
    return code, not real(code) <= threshold


def lower_argmax(lw: Lowering, op: num.ArgMaxOp) -> SSAValue:
    return argmax(lw, lw.vals[op.input])


def lower_sgn(lw: Lowering, op: num.SgnOp) -> SSAValue:
    g = lw.g
    src = lw.vals[op.input]
    v = src.load(g, [Lin(0)] * len(src.shape))
    pos = g.cmp(v, g.const(0, v.type), "sgt")
    return g.select(pos, g.index(1), g.index(0))


HANDLERS: dict[type[Operation], Callable[[Lowering, Any], Any]] = {
    num.ExpOp: lower_exp,
    num.SigmoidOp: lower_sigmoid,
    num.TanhOp: lower_tanh,
    num.NormaliseL2Op: lower_normalise_l2,
    num.SoftmaxOp: lower_softmax,
    num.LogSoftmaxOp: lower_log_softmax,
    num.ArgMaxOp: lower_argmax,
    num.SgnOp: lower_sgn,
}
