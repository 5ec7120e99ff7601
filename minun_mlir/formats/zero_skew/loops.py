"""The ops of the zero-skew int8 representation (`!num.affine` elements,
formats/zero_skew/representation.py), which take precedence over the fixed-point handlers for
affine values. Integer-only: every multiplier, shift, bias and table is computed in
Python at compile time.

- matmul, conv2d, sparse matmul, mul: each term `(qa - zpa) * (qb - zpb)`, its factors
  in 16 bits (exact: at most 255 in magnitude each), the product in 16 bits when one zero
  point is 0 (weights: at most 255 * 128), else in 32, summed in int32 (a padded
  convolution input adds nothing, as TFLite pads with the zero point); the dot loops of
  such terms become select-target-kernels' minun_dot8_off_dsp (SXTAB16 + SMLAD) and AVR
  minun_dot8_z128 / minun_dot8_off (MULSU) kernels;
- requantize: `zp_out + minun_zs_mbqm((q - zp_in) << left_shift, multiplier, shift)`,
  clamped (the helper is gemmlowp's SaturatingRoundingDoublingHighMul and
  RoundingDivideByPOT, minun_runtime.h; minun_zs_mbqm_hot, the same inlined on the Uno,
  for an op run at least HOT_RUNS times an inference); run often, a table of its results
  or thresholds instead (tables.py); with mode onnxruntime, `zp_out +
  minun_zs_ortq(q, m, e)` (onnxruntime's float32 multiply and round half to even, in
  integers), of an int8 value minun_zs_ortadd(q - zp_in, 0, ...) (its DequantizeLinear
  then QuantizeLinear); per channel, the multiplier and the shift are read from constant tables
  (int32_t and int8_t, in flash) indexed by the channel; a per-tensor TFLite requantization
  of a constant (a parameter or a view of one) is computed at compile time (fold_constant);
- exp, sigmoid, tanh: a load from the op's 256-entry int8 table at `q + 128`;
- softmax, log_softmax: per row, the int32 exp table's sum; softmax's rounded quotient,
  log_softmax's minun_lnsum plus s_in (max - q) at 2^16, requantized by minun_zs_mbqm;
- tflite_lstm: per batch row and step, each gate's two int32 dot products through
  minun_zs_mbqm, TFLite's int16 sigmoid/tanh interpolation in its table (one constant
  per program), the int16 cell state and int8 hidden state in buffers;
- relu: max(q, zp); clip, relu6: clamps at bounds encoded at compile time; neg:
  clamp(2 zp - q); init: the encoded fill. Add/sub/mul with mode onnxruntime (int8
  operands, a pre-quantized model): minun_zs_ortadd / minun_zs_ortmul, onnxruntime's
  float32 add and product in integers. Add/sub
  of int32 accumulators (zero point 0), max, min, maxpool, argmax and sgn are the integer
  handlers of the other families.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerType, i32
from xdsl.ir import Operation, SSAValue

from minun_mlir.dialects import minun, num
from minun_mlir.dialects.num import AffineType
from minun_mlir.formats.zero_skew import arith as af
from minun_mlir.formats.zero_skew import representation as zs
from minun_mlir.formats.zero_skew import tables as tables
from minun_mlir.lowering.loops import elementwise as ew
from minun_mlir.lowering.loops import linear, skeleton
from minun_mlir.lowering.loops.builder import INDEX, Gen, Lin, width
from minun_mlir.lowering.loops.elementwise import elementwise
from minun_mlir.lowering.loops.skeleton import Dot
from minun_mlir.lowering.loops.values import (
    Buf,
    Const,
    Elementwise,
    Reduction,
    Val,
    broadcast_index,
    element_of,
    shape_of,
)

if TYPE_CHECKING:
    from minun_mlir.lowering.lower_to_loops import Lowering

I32 = IntegerType(32)


def _t(v: SSAValue) -> AffineType:
    el = element_of(v)
    assert isinstance(el, AffineType), el
    return el


def offset(g: Gen, x: SSAValue, zp: int) -> SSAValue:
    """q - zp, exact: in 16 bits for an 8-bit q, as it is for a zero point of 0."""
    if zp == 0:
        return x
    w = max(16, width(x))
    return g.binop(arith.SubiOp, g.resize(x, w), g.iconst(zp, w), nsw=True)


def term(g: Gen, a: SSAValue, za: int, b: SSAValue, zb: int) -> SSAValue:
    """(a - za)(b - zb) for 8-bit a, b: in 16 bits when one zero point is 0 (at most
    255 * 128 = 32640 in magnitude: a cheap 16-bit multiply on the 8-bit boards), else in
    32 bits."""
    d = 16 if 0 in (za, zb) and width(a) == width(b) == 8 else 32
    return g.product(offset(g, a, za), offset(g, b, zb), d)


@dataclass(eq=False)
class _Indexed(Elementwise):
    """An elementwise value whose fn also receives the element's index."""

    def load(self, g: Gen, idx: list[Lin]) -> SSAValue:
        return self.fn(g, idx, *[v.load(g, broadcast_index(idx, v.shape, self.shape))
                                 for v in self.operands])


def helper_of(op: num.RequantizeOp) -> str:
    """The C helper of the op's mode: TFLite's MBQM (minun_zs_mbqm_hot, inlined on the Uno,
    for an op run often) or onnxruntime's float32 emulation."""
    if num.in_ort_mode(op):
        return "minun_zs_ortq"
    return "minun_zs_mbqm_hot" if tables.runs(op) >= tables.HOT_RUNS else "minun_zs_mbqm"


def lower_channel_requantize(lw: Lowering, op: num.RequantizeOp) -> Val:
    """Per channel: minun_zs_mbqm(x, M[c], k[c]) (or minun_zs_ortq) with M and k from
    constant tables."""
    r = _t(op.result)
    helper = helper_of(op)
    axis, ms, ks = op.channels()
    lo, hi = af.int_range(r.width)
    name = f"zs_requantize{len(ms)}"
    mt = lw.g.global_(f"{name}_multiplier", np.array(ms, dtype=np.int64), I32)
    kt = lw.g.global_(f"{name}_shift", np.array(ks, dtype=np.int64), IntegerType(8))

    def fn(g: Gen, idx: list[Lin], x: SSAValue) -> SSAValue:
        k = g.resize(g.load(kt, idx[axis]), 32)
        y = g.helper(helper, [g.resize(x, 32), g.load(mt, idx[axis]), k], i32)
        if r.zp:
            y = g.binop(arith.AddiOp, y, g.iconst(r.zp, 32))
        return g.resize(g.clamp(y, lo, hi), r.width)

    src = lw.vals[op.input]
    return _Indexed(fn, [src], shape_of(op.result), element_of(op.result))


def fold_constant(lw: Lowering, op: num.RequantizeOp) -> Val | None:
    """A per-tensor TFLite requantization of a constant (a parameter or a view of one:
    ProtoNN's B[i] in its loop over prototypes) as a constant global of its results,
    computed by the evaluator's integers (formats/zero_skew/arith.py, requantize), read through
    the same view: no requantization left at run time. None for anything else."""
    src = lw.vals[op.input]
    if op.channels() is not None or num.in_ort_mode(op) or not isinstance(src, Buf) or \
            not isinstance(src.buffer.ref.owner, memref.GetGlobalOp):
        return None
    name = src.buffer.ref.owner.name_.root_reference.data
    glob = next((o for o in lw.g.module_ops if isinstance(o, memref.GlobalOp)
                 and o.sym_name.data == name), None)
    if glob is None or name in lw.packed or not isinstance(src.buffer.elem, IntegerType):
        return None
    key = (op.input, f"zs{op.multiplier.value.data},{op.shift.value.data},"
                     f"{op.left_shift.value.data}")
    if key not in lw.folded:
        a, r = _t(op.input), _t(op.result)
        dt = {8: "<i1", 16: "<i2", 32: "<i4"}[src.buffer.elem.width.data]
        x = np.frombuffer(glob.initial_value.data.data, dtype=dt).astype(np.int64)
        y = af.requantize(x, a.zp, r.zp, op.left_shift.value.data, op.multiplier.value.data,
                          op.shift.value.data, r.width)
        buf = lw.g.global_(f"{name}_rq", np.asarray(y, dtype=np.int64),
                           IntegerType(r.width))
        lw.folded[key] = Buf(buf, src.shape, element_of(op.result), src.offset, src.strides)
    return lw.folded[key]


def exact_offset(lw: Lowering, op: num.RequantizeOp) -> Val | None:
    """An int8 value to the int16 at its scale, or an int16 difference to the int8 at its
    scale (own.exact_difference: multiplier 1, MBQM's identity on |x| < 2^30) as `q - zp`
    or a clamp; None for anything else."""
    a, r = _t(op.input), _t(op.result)
    if (a.width, r.width) not in ((8, 16), (16, 8)) or num.in_ort_mode(op) or \
            op.left_shift.value.data or op.channels() is not None or \
            (op.multiplier.value.data, op.shift.value.data) != af.quantize_multiplier(1.0):
        return None
    lo, hi = af.int_range(r.width)
    return elementwise(lw, op, lambda g, x: g.resize(g.clamp(g.resize(
        offset(g, x, a.zp), 16), lo, hi), r.width), op.input)


def _squares(value: SSAValue) -> bool:
    """Whether value is v^T v (a sum of squares: never negative)."""
    mm = value.owner
    return isinstance(mm, num.MatMulOp) and isinstance(mm.lhs.owner, minun.TransposeOp) \
        and mm.lhs.owner.operands[0] is mm.rhs and shape_of(mm.rhs)[-1] == 1


def shift_requantize(lw: Lowering, op: num.RequantizeOp) -> Val | None:
    """An int32 accumulator (or int8 value) onto a power-of-two grid (own.py: an int16
    difference's grid, or an int8 type with a folded factor; multiplier 2^30, shift
    s <= 1) as one rounding shift. MBQM's two roundings there, x / 2 half up
    (SaturatingRoundingDoublingHighMul by 2^30) then / 2^e half away from zero
    (RoundingDivideByPOT, e = -s), are one floor: (x + 2^e + 1 - 2 [x < -1]) >> (e + 1),
    and (x + 1) >> 1 for e = 0 (no test for a sum of squares v^T v); for s = 1 the
    identity. Exact for |x| < 2^30, which quantize checks from the accumulator's operands.
    None for anything else."""
    a, r = _t(op.input), _t(op.result)
    m, s = op.multiplier.value.data, op.shift.value.data
    if a.width not in (8, 32) or not (r.width == 16 or op.factor is not None) or \
            num.in_ort_mode(op) or op.left_shift.value.data or op.divisor is not None or \
            op.channels() is not None or m != 1 << 30 or s > 1:
        return None
    e = -s
    lo, hi = af.int_range(r.width)

    def fn(g: Gen, x: SSAValue) -> SSAValue:
        v = g.resize(offset(g, x, a.zp), 32)
        if s < 1:  # floor((x + 1) / 2), then half away from zero: one floor
            bias = g.iconst(1, 32) if e == 0 else g.iconst((1 << e) + 1, 32) if \
                _squares(op.input) else g.select(
                g.cmp(v, g.iconst(-1, 32), "slt"), g.iconst((1 << e) - 1, 32),
                g.iconst((1 << e) + 1, 32))
            v = g.shrsi(g.binop(arith.AddiOp, v, bias, nsw=True), e + 1)
        if r.zp:
            v = g.binop(arith.AddiOp, v, g.iconst(r.zp, 32))
        return g.resize(g.clamp(v, lo, hi), r.width)

    return elementwise(lw, op, fn, op.input)


def lower_requantize(lw: Lowering, op: num.RequantizeOp) -> Val:
    if op.channels() is not None:
        return lower_channel_requantize(lw, op)
    folded = fold_constant(lw, op) or exact_offset(lw, op) or shift_requantize(lw, op)
    for tabled in (tables.table_requantize, tables.threshold_requantize):
        if folded is None and lw.requantize_tables:
            folded = tabled(lw, op)
    if folded is not None:
        return folded
    a, r = _t(op.input), _t(op.result)
    left = op.left_shift.value.data
    m, s = op.multiplier.value.data, op.shift.value.data
    lo, hi = af.int_range(r.width)
    helper = helper_of(op)

    def fn(g: Gen, x: SSAValue) -> SSAValue:
        d = g.resize(offset(g, x, a.zp), 32)
        if left:  # |q - zp| <= 255: at most 2^28 after the shift of 24 the verifier allows
            d = g.add(arith.ShLIOp(d, g.iconst(left, 32)))
        if helper == "minun_zs_ortq" and a.width == 8:  # DequantizeLinear, QuantizeLinear
            consts = [*af.f32_parts(a.real_scale), *af.f32_parts(1.0), m, s]
            y = g.helper("minun_zs_ortadd", [d, g.iconst(0, 32),
                                             *(g.iconst(c, 32) for c in consts)], i32)
        else:
            y = g.helper(helper, [d, g.iconst(m, 32), g.iconst(s, 32)], i32)
        if r.zp:
            y = g.binop(arith.AddiOp, y, g.iconst(r.zp, 32))  # wraps as the int32 C does
        return g.resize(g.clamp(y, lo, hi), r.width)

    return elementwise(lw, op, fn, op.input)


def lower_add(lw: Lowering, op: num.AddOp | num.SubOp | num.MulOp) -> Val:
    """Mode onnxruntime: zp_y + minun_zs_ortadd (minun_zs_ortmul for a product)(a - zp_a,
    b - zp_b, the three scales' significands and exponents), clamped; else the integer
    sum (elementwise.py)."""
    if not num.in_ort_mode(op):
        return ew.HANDLERS[type(op)](lw, op)
    ta, tb, r = _t(op.lhs), _t(op.rhs), _t(op.result)
    helper = "minun_zs_ortmul" if isinstance(op, num.MulOp) else "minun_zs_ortadd"
    consts = [*af.f32_parts(ta.real_scale), *af.f32_parts(tb.real_scale),
              *af.f32_parts(r.real_scale)]
    sub = isinstance(op, num.SubOp)
    lo, hi = af.int_range(r.width)

    def fn(g: Gen, a: SSAValue, b: SSAValue) -> SSAValue:
        da, db = g.resize(offset(g, a, ta.zp), 32), g.resize(offset(g, b, tb.zp), 32)
        if sub:
            db = g.binop(arith.SubiOp, g.iconst(0, 32), db, nsw=True)
        y = g.helper(helper, [da, db, *(g.iconst(c, 32) for c in consts)], i32)
        if r.zp:
            y = g.binop(arith.AddiOp, y, g.iconst(r.zp, 32))
        return g.resize(g.clamp(y, lo, hi), r.width)

    return elementwise(lw, op, fn, op.lhs, op.rhs)


def lower_mul(lw: Lowering, op: num.MulOp) -> Val:
    if num.in_ort_mode(op):
        return lower_add(lw, op)
    za, zb = _t(op.lhs).zp, _t(op.rhs).zp
    return elementwise(lw, op, lambda g, a, b: term(g, a, za, b, zb), op.lhs, op.rhs)


def zero_skew_dot(op: num.MatMulOp | num.Conv2DOp, x: SSAValue, w: SSAValue) -> Dot:
    """Zero-skew's dot product: terms (x - zx)(w - zw) summed in int32 with wraparound
    (any order gives the same integers); a padded tap adds 0 (the input's zero point)."""
    zx, zw = _t(x).zp, _t(w).zp
    return Dot(
        term=lambda g, a, b: [term(g, a, zx, b, zw)],
        pad=lambda g: [g.iconst(0, 32)],
        begin=lambda g: [g.iconst(0, 32)],
        add=lambda g, acc, t: [g.wrap_add(acc[0], t[0], 32)],
        end=lambda g, acc: acc[0],
        reduce=lambda g, dims, terms: linear.sum_terms(g, dims, 0, "nearest", I32, 32,
                                                       lambda t: terms(t)[0]))


def lower_matmul(lw: Lowering, op: num.MatMulOp) -> Val:
    return skeleton.matmul(lw, op, zero_skew_dot(op, op.lhs, op.rhs))


def lower_conv2d(lw: Lowering, op: num.Conv2DOp) -> Val:
    return skeleton.conv2d(lw, op, zero_skew_dot(op, op.input, op.filter))


def lower_sparse_matmul(lw: Lowering, op: num.SparseMatMulOp) -> Val:
    zx = _t(op.rhs).zp  # the stored weights have zero point 0: a skipped zero adds 0
    return linear.lower_sparse_matmul(
        lw, op, product=lambda g, a, b: term(g, a, 0, b, zx),
        accumulate=lambda g, acc, t: g.wrap_add(acc, t, 32))


def lower_table(lw: Lowering, op: Operation) -> Val:
    values = zs.op_table(op)
    kind = op.name.split(".")[1]
    buf = lw.g.global_(f"zs_{kind}_table", values, IntegerType(8))

    def fn(g: Gen, x: SSAValue) -> SSAValue:
        i = g.add(arith.IndexCastOp(g.resize(x, 32), INDEX))
        return g.load(buf, Lin.of(i) + (-af.QMIN))

    return elementwise(lw, op, fn, op.operands[0])


def lower_softmax(lw: Lowering, op: num.SoftmaxOp) -> Val:
    """Per row: m = max q; sum of T[m - q] (int32); each y = (256 T[m - q] + sum / 2) / sum
    - 128 in int64 (formats/zero_skew/arith.py, softmax); T is a constant int32 table."""
    from minun_mlir.lowering.loops.functions import last_axis_op

    g = lw.g
    x, out, whole = last_axis_op(lw, op)
    shape = shape_of(op.input)
    n = shape[-1]
    if op.tflite is not None:
        return _lower_tflite_softmax(lw, op, x, out, whole, n)
    table = g.global_("zs_softmax_table", af.softmax_table(_t(op.input).real_scale, n), I32)
    levels = num.softmax_levels(_t(op.result))  # D of the result's 1/D

    def row(idx: list[Lin]) -> None:
        at, below = _below_row_max(g, x, idx, n)

        def e_of(i: SSAValue) -> SSAValue:
            return g.load(table, _index(g, below(i)))

        total = g.for_(0, n, [g.iconst(0, 32)], lambda i, acc: [
            g.binop(arith.AddiOp, acc, e_of(i), nsw=True)])[0]
        total64 = g.resize(total, 64)
        half = g.resize(g.shrsi(total, 1), 64)

        def write(i: SSAValue) -> None:
            num_ = g.binop(arith.AddiOp, g.binop(arith.MuliOp, g.resize(e_of(i), 64),
                                                  g.iconst(levels, 64), nsw=True), half,
                           nsw=True)
            y = g.binop(arith.AddiOp, g.add(arith.DivSIOp(num_, total64)),
                        g.iconst(af.SOFTMAX_ZP, 64), nsw=True)
            g.store(g.resize(g.clamp(y, af.QMIN, af.QMAX), 8), out, whole.at(at(i)))

        g.for_(0, n, [], write)

    g.nest(shape[:-1], lambda idx: row(idx + [Lin(0)]))
    return whole


def _below_row_max(g, x, idx: list[Lin], n: int):
    """The row of `idx` (its last axis, n long) as the softmaxes read it: (at(i), the place
    of element i; below(i), m - q_i in int32, how far element i lies below the row's
    maximum m, which is computed here, before the row's loops)."""
    from minun_mlir.lowering.loops.functions import row_max

    def at(i: SSAValue | int) -> list[Lin]:
        return idx[:-1] + [Lin.of(i)]

    top = g.resize(row_max(g, x, at, n), 32)

    def below(i: SSAValue) -> SSAValue:
        return g.binop(arith.SubiOp, top, g.resize(x.load(g, at(i)), 32), nsw=True)

    return at, below


def _index(g, v: SSAValue) -> Lin:
    """An int32 value as a table index."""
    return Lin.of(g.add(arith.IndexCastOp(v, INDEX)))


def _lower_tflite_softmax(lw: Lowering, op: num.SoftmaxOp, x, out, whole, n: int) -> Val:
    """TFLite's kernel (formats/zero_skew/tflite_softmax.py): per row, m = max q; sum of S[m - q];
    each y = clamp(minun_zs_tflsm(T[m - q], sum) - 128); T (exp in Q0.31) and S (its
    Q12.19 rounding) are constant int32 tables."""
    from minun_mlir.formats.zero_skew import tflite_softmax as tsm

    g = lw.g
    s_in = _t(op.input).real_scale
    exps = g.global_("zs_tflite_softmax_exp", tsm.exp_table(s_in), I32)
    terms = g.global_("zs_tflite_softmax_sum", tsm.sum_table(s_in), I32)

    def row(idx: list[Lin]) -> None:
        at, below = _below_row_max(g, x, idx, n)

        def d_of(i: SSAValue) -> Lin:
            return _index(g, below(i))

        total = g.for_(0, n, [g.iconst(0, 32)], lambda i, acc: [
            g.binop(arith.AddiOp, acc, g.load(terms, d_of(i)), nsw=True)])[0]

        def write(i: SSAValue) -> None:
            y = g.helper("minun_zs_tflsm", [g.load(exps, d_of(i)), total], i32)
            y = g.binop(arith.AddiOp, y, g.iconst(tsm.ZP, 32), nsw=True)
            g.store(g.resize(g.clamp(y, af.QMIN, af.QMAX), 8), out, whole.at(at(i)))

        g.for_(0, n, [], write)

    shape = shape_of(op.input)
    g.nest(shape[:-1], lambda idx: row(idx + [Lin(0)]))
    return whole


def lower_log_softmax(lw: Lowering, op: num.LogSoftmaxOp) -> Val:
    """Per row: m = max q; sum of softmax's table T[m - q] (int32); L = minun_lnsum(sum, K)
    (ln at 2^16); each y = clamp(zp - minun_zs_mbqm(min(((m - q) c + 2^15) >> 16 + L,
    2^31 - 1), M, k)) with the int64 product (formats/zero_skew/arith.py, log_softmax)."""
    from minun_mlir.lowering.loops.functions import last_axis_op

    g = lw.g
    x, out, whole = last_axis_op(lw, op)
    shape = shape_of(op.input)
    n = shape[-1]
    a, r = _t(op.input), _t(op.result)
    c, m, k = af.log_softmax_constants(a.real_scale, r.real_scale)
    table = g.global_("zs_softmax_table", af.softmax_table(a.real_scale, n), I32)

    def row(idx: list[Lin]) -> None:
        at, d_of = _below_row_max(g, x, idx, n)
        total = g.for_(0, n, [g.iconst(0, 32)], lambda i, acc: [
            g.binop(arith.AddiOp, acc, g.load(table, _index(g, d_of(i))), nsw=True)])[0]
        log = g.resize(g.helper("minun_lnsum", [g.resize(total, 64),
                                                g.iconst(af.softmax_bits(n), 32)], i32), 64)

        def write(i: SSAValue) -> None:
            prod = g.binop(arith.MuliOp, g.resize(d_of(i), 64), g.iconst(c, 64), nsw=True)
            lin = g.add(arith.ShRSIOp(g.binop(arith.AddiOp, prod, g.iconst(
                1 << (af.LOG_FRAC - 1), 64), nsw=True), g.iconst(af.LOG_FRAC, 64)))
            y = g.min(g.binop(arith.AddiOp, lin, log, nsw=True), g.iconst(af.INT32_MAX, 64))
            z = g.helper("minun_zs_mbqm", [g.resize(y, 32), g.iconst(m, 32), g.iconst(k, 32)],
                         i32)
            q = g.binop(arith.SubiOp, g.iconst(r.zp, 32), z, nsw=True)
            g.store(g.resize(g.clamp(q, af.QMIN, af.QMAX), 8), out, whole.at(at(i)))

        g.for_(0, n, [], write)

    g.nest(shape[:-1], lambda idx: row(idx + [Lin(0)]))
    return whole


def lower_relu(lw: Lowering, op: Operation) -> Val:
    t = _t(op.input)
    return elementwise(lw, op, lambda g, x: g.max(x, g.iconst(t.zp, t.width)), op.input)


def lower_clip(lw: Lowering, op: Operation) -> Val:
    lo, hi = zs.clip_bounds(op)
    return elementwise(lw, op, lambda g, x: g.clamp(x, lo, hi), op.input)


def lower_neg(lw: Lowering, op: Operation) -> Val:
    """zp + zr - q at the result's zero point zr (zero_skew_repr._neg)."""
    t, r = _t(op.input), _t(op.result)
    lo, hi = af.int_range(t.width)

    def fn(g: Gen, x: SSAValue) -> SSAValue:
        w = 2 * t.width if t.width == 8 else 64
        y = g.binop(arith.SubiOp, g.iconst(t.zp + r.zp, w), g.resize(x, w), nsw=True)
        return g.resize(g.clamp(y, lo, hi), t.width)

    return elementwise(lw, op, fn, op.input)


def lower_avgpool(lw: Lowering, op: num.AvgPoolOp) -> Val:
    """TFLite's int8 average pool (formats/zero_skew/representation.py, _avgpool): the window's sum
    of stored values inside the input (int32), then (sum +- count / 2) / count with the
    count from a constant table per output position."""
    x = lw.vals[op.input]
    if not lw.consumed_once(op.input):
        x = linear.operand(lw, op.input)
    shape = shape_of(op.input)
    _, h, w, _ = shape
    kh, kw = minun.ints(op.kernel)
    sh, sw = minun.ints(op.strides)
    pt, pb, pl, pr = minun.ints(op.pads)
    counts = zs.avgpool_counts(shape, (kh, kw), (sh, sw), (pt, pb, pl, pr))
    ow = counts.shape[1]
    table = lw.g.global_("zs_avgpool_count", counts.reshape(-1), I32)

    def fn(g: Gen, idx: list[Lin]) -> SSAValue:
        n, ho, wo, c = idx

        def over_i(i: Lin, acc: SSAValue):
            def over_j(j: Lin, acc2: SSAValue):
                hi, wi = ho.scale(sh) + i + (-pt), wo.scale(sw) + j + (-pl)
                checks = ([(hi, h)] if pt or pb else []) + ([(wi, w)] if pl or pr else [])
                return [g.guarded(checks, lambda: [g.binop(
                    arith.AddiOp, acc2, g.resize(x.load(g, [n, hi, wi, c]), 32), nsw=True)],
                    acc2)]

            return g.loop(kw, [acc], over_j)

        total = g.loop(kh, [g.iconst(0, 32)], over_i)[0]
        count = g.load(table, ho.scale(ow) + wo)
        half = g.shrsi(count, 1)
        up = g.select(g.cmp(total, g.iconst(0, 32), "sgt"),
                      g.binop(arith.AddiOp, total, half, nsw=True),
                      g.binop(arith.SubiOp, total, half, nsw=True))
        return g.resize(g.add(arith.DivSIOp(up, count)), 8)

    return Reduction(fn, [x], shape_of(op.result), element_of(op.result))


def _table_activation(g: Gen, table, z: SSAValue, tanh: bool, mult: int, shift: int
                      ) -> SSAValue:
    """TFLite's int16 Logistic (tanh False, mult 3, shift 0) or Tanh of int32 z, as
    tflite_lstm.sigmoid16 / tanh16: an interpolation in the sigmoid table (int32 global)."""
    def c(v: int) -> SSAValue:
        return g.iconst(v, 32)

    bits = 8 if tanh else 9
    v = g.binop(arith.MuliOp, z, c(mult), nsw=True)
    if shift:
        v = g.binop(arith.ShRSIOp, g.binop(arith.AddiOp, v, c(1 << (shift - 1))), c(shift))
    neg = g.cmp(v, c(0), "slt")
    a = g.select(neg, g.binop(arith.SubiOp, c(0), v), v)
    seg = g.binop(arith.ShRSIOp, a, c(bits))
    u = g.min(seg, c(254))
    at = g.add(arith.IndexCastOp(u, INDEX))
    ua, ub = g.load(table, Lin.of(at)), g.load(table, Lin.of(at) + 1)
    frac = g.binop(arith.AndIOp, a, c((1 << bits) - 1))
    inter = g.binop(arith.AddiOp, g.binop(arith.ShLIOp, ua, c(bits)),
                    g.binop(arith.MuliOp, frac, g.binop(arith.SubiOp, ub, ua)))
    res = g.select(g.cmp(seg, c(255), "sge"), c(0xFFFF << 8 if tanh else 0x7FFF << 10), inter)
    if tanh:
        pos = g.binop(arith.AddiOp, res, c((1 << 7) - (1 << 23)))
        other = g.binop(arith.SubiOp, c((1 << 23) + (1 << 7) - 1), res)
    else:
        pos = g.binop(arith.AddiOp, res, c(1 << 9))
        other = g.binop(arith.SubiOp, c((1 << 25) + (1 << 9) - 1), res)
    return g.binop(arith.ShRSIOp, g.select(neg, other, pos), c(8 if tanh else 10))


def lower_tflite_lstm(lw: Lowering, op: minun.TFLiteLstmOp) -> Val:
    """TFLite's integer LSTM (formats/zero_skew/tflite_lstm.py), per batch row and time
    step: each gate's two int32 dot products requantized by minun_zs_mbqm and clamped to
    int16, their saturated sum through the table activation into a gate buffer; then per
    unit the int16 cell state and the int8 hidden state (state buffers, reset per row),
    the hidden state written to the output."""
    from minun_mlir.formats.zero_skew import tflite_lstm as tl
    from minun_mlir.lowering.loops.values import storage

    g = lw.g
    p = op.lstm_params()
    x = lw.buffer_of(op.input)
    res = element_of(op.result)
    shape = shape_of(op.result)
    time_major = op.time_major is not None
    steps, rows = (shape[0], shape[1]) if time_major else (shape[1], shape[0])
    n_in, hid = p.w.shape[2], p.hidden
    out = g.alloc(int(np.prod(shape)), storage(res), op.result.name_hint)
    out.owner = op.result
    whole = Buf(out, shape, res)
    w = g.global_("zs_lstm_w", p.w.reshape(-1), IntegerType(8))
    r = g.global_("zs_lstm_r", p.r.reshape(-1), IntegerType(8))
    bias = g.global_("zs_lstm_bias", p.bias.reshape(-1), I32)
    table = g.global_once("zs_tflite_sigmoid", tl.TABLE, I32)
    h = g.alloc(hid, IntegerType(8), "lstm_h")
    c = g.alloc(hid, IntegerType(16), "lstm_c")
    gates = g.alloc(4 * hid, IntegerType(16), "lstm_gates")
    i16 = af.int_range(16)

    def k32(v: int) -> SSAValue:
        return g.iconst(v, 32)

    def mbqm(v: SSAValue, mult: tuple[int, int]) -> SSAValue:
        return g.helper("minun_zs_mbqm", [v, k32(mult[0]), k32(mult[1])], i32)

    def dot(weights, row: Lin, n: int, load) -> SSAValue:
        def term(i: SSAValue, acc: SSAValue) -> list[SSAValue]:
            wv = g.resize(g.load(weights, row + Lin.of(i)), 32)
            return [g.binop(arith.AddiOp, acc, g.binop(arith.MuliOp, wv, load(i), nsw=True),
                            nsw=True)]
        return g.for_(0, n, [k32(0)], term)[0]

    def step(b: Lin, t: Lin) -> None:
        at = (lambda k: [t, b, k]) if time_major else (lambda k: [b, t, k])

        def x_of(i: SSAValue) -> SSAValue:
            return g.binop(arith.SubiOp, g.resize(x.load(g, at(Lin.of(i))), 32), k32(p.zp_x))

        def h_of(k: SSAValue) -> SSAValue:
            return g.binop(arith.SubiOp, g.resize(g.load(h, Lin.of(k)), 32), k32(p.zp_h))

        for gi in range(4):
            def unit(j: SSAValue, gi: int = gi) -> None:
                row = Lin.of(j) + gi * hid
                acc = g.binop(arith.AddiOp, g.load(bias, row),
                              dot(w, row.scale(n_in), n_in, x_of), nsw=True)
                a = g.clamp(mbqm(acc, p.input_mult[gi]), *i16)
                rr = g.clamp(mbqm(dot(r, row.scale(hid), hid, h_of), p.recurrent_mult[gi]),
                             *i16)
                z = g.clamp(g.binop(arith.AddiOp, a, rr), *i16)
                act = _table_activation(g, table, z, tl.GATES[gi] == "c", 3, 0)
                g.store(g.resize(act, 16), gates, row)
            g.for_(0, hid, [], unit)

        def update(j: SSAValue) -> None:
            gate = [g.resize(g.load(gates, Lin.of(j) + k * hid), 32) for k in range(4)]
            i_g, f_g, c_g, o_g = gate
            old = g.resize(g.load(c, Lin.of(j)), 32)
            kept = g.clamp(mbqm(g.binop(arith.MuliOp, f_g, old), p.forget_cell_mult), *i16)
            new = g.clamp(mbqm(g.binop(arith.MuliOp, i_g, c_g), p.input_cell_mult), *i16)
            cell = g.clamp(g.binop(arith.AddiOp, kept, new), *i16)
            if p.cell_clip:
                cell = g.clamp(cell, -p.cell_clip, p.cell_clip)
            g.store(g.resize(cell, 16), c, Lin.of(j))
            t_c = _table_activation(g, table, cell, True, *p.cell_tanh_scaling())
            hv = g.binop(arith.AddiOp, mbqm(g.binop(arith.MuliOp, t_c, o_g), p.output_mult),
                         k32(p.zp_h))
            hv = g.resize(g.clamp(hv, af.QMIN, af.QMAX), 8)
            g.store(hv, h, Lin.of(j))
            g.store(hv, out, whole.at(at(Lin.of(j))))
        g.for_(0, hid, [], update)

    def row(b: SSAValue) -> None:
        def reset(j: SSAValue) -> None:
            g.store(g.iconst(p.zp_h, 8), h, Lin.of(j))
            g.store(g.iconst(0, 16), c, Lin.of(j))
        g.for_(0, hid, [], reset)
        g.for_(0, steps, [], lambda t: step(Lin.of(b), Lin.of(t)))

    g.for_(0, rows, [], row)
    return whole


def lower_init(lw: Lowering, op: minun.InitOp) -> Val:
    return Const(zs.init_value(op), shape_of(op.result), element_of(op.result))


HANDLERS: dict[type[Operation], Callable[[Lowering, Any], Any]] = {
    num.RequantizeOp: lower_requantize,
    num.AddOp: lower_add,
    num.SubOp: lower_add,
    num.MulOp: lower_mul,
    num.MatMulOp: lower_matmul,
    num.Conv2DOp: lower_conv2d,
    num.SparseMatMulOp: lower_sparse_matmul,
    num.ExpOp: lower_table,
    num.SigmoidOp: lower_table,
    num.TanhOp: lower_table,
    num.LutOp: lower_table,
    num.SoftmaxOp: lower_softmax,
    num.LogSoftmaxOp: lower_log_softmax,
    num.ReluOp: lower_relu,
    num.ClipOp: lower_clip,
    num.Relu6Op: lower_clip,
    num.NegOp: lower_neg,
    num.AvgPoolOp: lower_avgpool,
    minun.InitOp: lower_init,
    minun.TFLiteLstmOp: lower_tflite_lstm,
}
