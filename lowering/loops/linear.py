"""Reductions and linear algebra (matmul, sparse matmul, conv2d, maxpool) and the
accumulation they share (`sum_terms`: a wrapping sum or SeeDot's TreeSum). Matmul and
conv2d are skeleton.py's, given fixed point's arithmetic (`fixed_dot`); dense ones
are lazy `Reduction`s computed per output element inside the consumer's loop, so a
following rescale or pooling costs no buffer; sparse matmul walks a compressed-column
copy of its parameter and writes its result straight to a buffer."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

from minun_mlir.dialects import minun, num
from minun_mlir.dialects.num import AffineType, FixedType
from minun_mlir.formats.fixed import arith as fx
from minun_mlir.lowering.loops import skeleton
from minun_mlir.lowering.loops.builder import INDEX, Gen, Lin, row_major
from minun_mlir.lowering.loops.skeleton import (  # noqa: F401 (the families' imports)
    Dot,
    group_and_channel,
    operand,
    relayout,
)
from minun_mlir.lowering.loops.values import (
    Buf,
    Const,
    Reduction,
    Val,
    element_of,
    fx_type,
    op_error,
    shape_of,
    storage,
)

if TYPE_CHECKING:
    from minun_mlir.lowering.lower_to_loops import Lowering


def accumulation(op: num.MatMulOp | num.Conv2DOp) -> tuple[int, int]:
    """(bits of the products' wrapping sum, TreeSum halvings) of a matmul or conv: the
    result's width and its halvings for fixed point, 32 bits and none for float."""
    res = element_of(op.result)
    if isinstance(res, FixedType):
        return res.width, op.halvings.value.data
    return 32, 0


def channel_shifted(lw: Lowering, op: num.MatMulOp | num.Conv2DOp, red: Reduction
                    ) -> Reduction:
    """A reduction over a per-channel weight (`channel_shifts`): each output element's
    sum, plus its channel's bias when the op has one, shifted right by its channel's
    shift, read from a constant array (int8_t, one per channel) indexed by the channel;
    a constant shift when every channel has the same one."""
    if op.channel_shifts is None:
        return red
    _, param, axis = num.channel_operand(op)
    shifts = np.array(minun.ints(op.channel_shifts), dtype=np.int64)
    same = len(set(shifts.tolist())) == 1  # one shift (one channel): a constant, no table
    table = None if same else lw.g.global_(f"p_{param.sym_name.data}_shift", shifts,
                                          IntegerType(8))
    inner, rounding = red.fn, op.rounding.data
    bias = lw.vals[op.bias] if op.bias is not None else None
    d = storage(element_of(op.result)).width.data

    def fn(g: Gen, idx: list[Lin]) -> SSAValue:
        acc = inner(g, idx)
        if bias is not None:
            acc = g.wrap_add(acc, bias.load(g, [idx[axis]]), d)
        if table is None:
            return g.shr_round(acc, int(shifts[0]), rounding) if shifts[0] else acc
        return g.shr_round_by(acc, g.load(table, idx[axis]), rounding)

    red.fn = fn
    return red


def fixed_dot(lw: Lowering, op: num.MatMulOp | num.Conv2DOp) -> Dot:
    """Fixed point's (and float32's) dot product: products wrapped to the result's width
    summed with wraparound (any order gives the same integers), or SeeDot's TreeSum; the
    per-channel shifts after. Float32 sums in loop order from +0 (never -0, so the
    skipped padded taps, each + 0, change nothing). A TreeSum (its array of every term)
    takes no clipped window."""
    res = element_of(op.result)
    d, halvings = accumulation(op)
    elem, rounding = storage(res), op.rounding.data
    return Dot(
        term=lambda g, x, f: [g.product(x, f, d)],
        pad=lambda g: [g.const(0, elem)],
        begin=lambda g: [g.const(0, elem)],
        add=lambda g, acc, t: [g.wrap_add(acc[0], t[0], d)],
        end=lambda g, acc: acc[0],
        reduce=lambda g, dims, terms: sum_terms(g, dims, halvings, rounding, elem, d,
                                                lambda t: terms(t)[0]),
        clips=halvings <= 0,
        finish=lambda red: channel_shifted(lw, op, red))


def lower_matmul(lw: Lowering, op: num.MatMulOp) -> Val:
    return skeleton.matmul(lw, op, fixed_dot(lw, op))


def sum_terms(g: Gen, dims: tuple[int, ...], halvings: int, rounding: str, elem: Attribute,
              d: int, term: Callable[[list[Lin]], SSAValue]) -> SSAValue:
    """The sum of the terms indexed row-major by `dims`: a wrapping (or float)
    accumulation, or SeeDot's TreeSum with `halvings` halving levels over a temporary
    array of the terms."""
    k = math.prod(dims)
    if halvings <= 0 or k == 1:
        def level(e: int, idx: list[Lin], acc: SSAValue) -> list[SSAValue]:
            if e == len(dims):
                return [g.wrap_add(acc, term(idx), d)]
            return g.loop(dims[e], [acc], lambda i, a: level(e + 1, idx + [i], a))

        if k == 1:
            return term([Lin(0)] * len(dims))
        return level(0, [], g.const(0, elem))[0]
    tmp = g.alloc(k, elem, "treesum")
    strides = row_major(dims)

    def fill(e: int, idx: list[Lin]) -> None:
        if e == len(dims):
            at = Lin(0)
            for i, s in zip(idx, strides):
                at = at + i.scale(s)
            g.store(term(idx), tmp, at)
            return
        g.loop(dims[e], [], lambda i: fill(e + 1, idx + [i]))

    fill(0, [])
    n, lvl = k, 0
    while n > 1:
        half, s = n // 2, 1 if lvl < halvings else 0

        def pair(q: Lin, s: int = s) -> list:
            x = g.load(tmp, q.scale(2))
            y = g.load(tmp, q.scale(2) + 1)
            if s:
                x, y = g.shr_round(x, 1, rounding), g.shr_round(y, 1, rounding)
            g.store(g.wrap_add(x, y, d), tmp, q)
            return []

        g.loop(half, [], pair)
        if n % 2:
            last = g.load(tmp, Lin(n - 1))
            g.store(g.shr_round(last, 1, rounding) if s else last, tmp, Lin(half))
        n, lvl = half + n % 2, lvl + 1
    return g.load(tmp, Lin(0))


def lower_conv2d(lw: Lowering, op: num.Conv2DOp) -> Val:
    return skeleton.conv2d(lw, op, fixed_dot(lw, op))


def lower_sparse_matmul(lw: Lowering, op: num.SparseMatMulOp,
                        product: Callable[[Gen, SSAValue, SSAValue], SSAValue] | None = None,
                        accumulate: Callable[[Gen, SSAValue, SSAValue], SSAValue] | None = None
                        ) -> Val:
    """Column by column over the stored entries (the compressed-column arrays hold the
    same entries in the same order as SeeDot's 0-terminated format). `product` and
    `accumulate` replace the integer product and wrapping sum (posits: runtime calls)."""
    g = lw.g
    a = const_array(op.lhs)
    res = element_of(op.result)
    fixed_ = isinstance(res, FixedType)
    d = res.width if fixed_ else 32
    shift = op.shift.value.data if fixed_ else 0
    m, k = a.shape
    ncols = shape_of(op.rhs)[1]
    xval = operand(lw, op.rhs)
    cols = [np.nonzero(a[:, c])[0] for c in range(k)]
    vals = np.concatenate([a[r, c] for c, r in enumerate(cols)]) if k else np.zeros(0)
    rows = np.concatenate(cols) if k else np.zeros(0, dtype=np.int64)
    colptr = np.concatenate([[0], np.cumsum([len(r) for r in cols])])
    owner = op.lhs.owner
    while isinstance(owner, num.RescaleOp):
        owner = owner.input.owner
    name = owner.sym_name.data
    vbuf = g.global_(f"p_{name}_val", vals, storage(element_of(op.lhs)))
    rbuf = g.global_(f"p_{name}_row", rows, IntegerType(_fit_bits(m)))
    pbuf = g.global_(f"p_{name}_col", colptr, IntegerType(_fit_bits(len(rows))))
    out = g.alloc(m * ncols, storage(res), op.result.name_hint)
    out.owner = op.result
    whole = Buf(out, (m, ncols), res)
    lw.store_into(whole, Const(0 if fixed_ or isinstance(res, AffineType) else 0.0, (m, ncols),
                               res))

    def to_index(v: SSAValue) -> SSAValue:
        return g.add(arith.IndexCastOp(g.resize(v, 32), INDEX))

    def column(kk: SSAValue) -> None:
        lo = to_index(g.load(pbuf, Lin.of(kk)))
        hi = to_index(g.load(pbuf, Lin.of(kk) + 1))

        def entry(p: SSAValue) -> None:
            row = Lin.of(to_index(g.load(rbuf, Lin.of(p))))
            v = g.load(vbuf, Lin.of(p))

            def col(c: Lin) -> list:
                xv = xval.load(g, [Lin.of(kk), c])
                term = product(g, v, xv) if product else g.product(v, xv, d)
                if shift > 0:
                    term = g.shr_round(term, shift, op.rounding.data)
                at = whole.at([row, c])
                acc = g.load(out, at)
                g.store(accumulate(g, acc, term) if accumulate else g.wrap_add(acc, term, d),
                        out, at)
                return []

            g.loop(ncols, [], col)

        g.for_(lo, hi, [], entry)

    g.for_(0, k, [], column)
    return whole


def const_array(v: SSAValue) -> np.ndarray:
    """The stored integers of a parameter, or of rescales of one (quantize may pre-shift
    the sparse operand), computed as the evaluator does."""
    owner = v.owner
    if isinstance(owner, num.ParamOp):
        arr = owner.array()
        return arr if arr.dtype.kind == "f" else arr.astype(np.int64)
    if isinstance(owner, num.RescaleOp):
        out = fx_type(owner.result)
        x = const_array(owner.input)
        return fx.narrow(fx.shift_right(x, owner.shift, owner.rounding.data), out.width,
                         owner.overflow.data)
    raise op_error(owner, "the sparse operand must be a parameter")


def _fit_bits(max_value: int) -> int:
    """The narrowest of i8/i16/i32 holding 0..max_value as a signed value."""
    return next(b for b in (8, 16, 32) if max_value < (1 << (b - 1)))


HANDLERS: dict[type[Operation], Callable[[Lowering, Any], Any]] = {
    num.MatMulOp: lower_matmul,
    num.SparseMatMulOp: lower_sparse_matmul,
    num.Conv2DOp: lower_conv2d,
    num.MaxPoolOp: skeleton.maxpool,
}
