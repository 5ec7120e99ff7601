"""Reductions and linear algebra (matmul, sparse matmul, conv2d, maxpool) and the
accumulation they share (`sum_terms`: a wrapping sum or SeeDot's TreeSum). Dense ones
are lazy `Reduction`s computed per output element inside the consumer's loop, so a
following rescale or pooling costs no buffer; sparse matmul walks a compressed-column
copy of its parameter and writes its result straight to a buffer."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import Float32Type, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

from minun_mlir.dialects import minun, num
from minun_mlir.dialects.num import AffineType, FixedType
from minun_mlir.lowering.loops.builder import INDEX, Gen, Lin, row_major
from minun_mlir.lowering.loops.values import (
    CHEAP,
    FREE,
    Buf,
    Const,
    Pixel,
    Reduction,
    Rows,
    Val,
    element_of,
    fx_type,
    is_float,
    op_error,
    shape_of,
    storage,
    windows,
)
from minun_mlir.numerics import fixed as fx

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


def lower_matmul(lw: Lowering, op: num.MatMulOp) -> Val:
    a, b = operand(lw, op.lhs), operand(lw, op.rhs)
    res = element_of(op.result)
    d, halvings = accumulation(op)
    m, k = shape_of(op.lhs)
    n = shape_of(op.rhs)[1]
    # a constant operand read across its rows (W in x^T W) is stored transposed, so that
    # each dot product reads both operands contiguously (SMLAD pairs, AVR pointer walks)
    if k > 1 and n > 1 and _reads_strided(b, 0):
        bt = relayout(lw, b, (1, 0))
        if bt is not None:
            b = _Transposed(bt, (k, n), b.el)
    if k > 1 and m > 1 and _reads_strided(a, 1):
        at = relayout(lw, a, (1, 0))
        if at is not None:
            a = _Transposed(at, (m, k), a.el)

    def fn(g: Gen, idx: list[Lin]) -> SSAValue:
        i, j = idx

        def term(kk: list[Lin]) -> SSAValue:
            return g.product(a.load(g, [i, kk[0]]), b.load(g, [kk[0], j]), d)

        return sum_terms(g, (k,), halvings, op.rounding.data, storage(res), d, term)

    return channel_shifted(lw, op, Reduction(fn, [a, b], shape_of(op.result), res))


def operand(lw: Lowering, v: SSAValue) -> Val:
    """An operand of a reduction: lazy when rereading it is cheap or it is read once."""
    val = lw.vals[v]
    return val if val.cost <= CHEAP or lw.consumed_once(v) else lw.buffer_of(v)


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


def group_and_channel(g: Gen, oc: Lin, groups: int, cout: int) -> tuple[Lin, Lin]:
    """A convolution's output channel -> (group, channel within the group), without a
    division when there is one group or one channel per group."""
    if groups == 1:
        return Lin(0), oc
    if cout == 1:
        return oc, Lin(0)
    ocv = g.lin(oc)
    return (Lin.of(g.add(arith.DivSIOp(ocv, g.index(cout)))),
            Lin.of(g.add(arith.RemSIOp(ocv, g.index(cout)))))


def lower_conv2d(lw: Lowering, op: num.Conv2DOp) -> Val:
    rows = lw.row_window(op, lw.vals[op.input])
    x = operand(lw, op.input) if rows is None else lw.rows_of(op, rows)
    f = operand(lw, op.filter)
    res = element_of(op.result)
    d, halvings = accumulation(op)
    _, h, w, _ = shape_of(op.input)
    groups, kh, kw, cg, cout = shape_of(op.filter)
    sh, sw = minun.ints(op.strides)
    pt, pb, pl, pr = minun.ints(op.pads)
    dh, dw = minun.ints(op.dilations)
    zero = lw.g.const(0, storage(res))
    # integer sums that wrap (any order gives the same integers) over a constant filter:
    # the window clipped to the input (no test per product) over the filter stored as
    # [group][out channel][ky][kx][channel], a window row being one contiguous dot
    # product when the input is a contiguous buffer (SMLAD pairs on Cortex-M4, one asm
    # loop on AVR)
    ft = None
    if isinstance(res, FixedType) and halvings <= 0 and (dh, dw) == (1, 1) and \
            kh * kw * cg > 1 and not isinstance(x, (Rows, Pixel)) and isinstance(f, Buf):
        ft = relayout(lw, f, (0, 4, 1, 2, 3))
    # a computed input (the model's input rescaled, say) is stored once, so that the
    # window rows are contiguous in memory: only when it reads nothing but the model's
    # input (its copy costs at most one input's size of RAM) and the convolution is
    # not recomputed inside a loop (a patch of a first layer: the copy would outlive it)
    if ft is not None and groups == 1 and not isinstance(x, Buf) and kh * kw > 1:
        leaves = [leaf.buffer for leaf, _ in x.leaves(False)]
        if leaves and all(b is lw.x for b in leaves) and \
                _stays_in_block(op.result, op.parent_block()):
            x = lw.buffer_of(op.input)
    if ft is not None:
        clipped = _clipped_conv(x, ft, d, shape_of(op.input), shape_of(op.filter),
                                (sh, sw), (pt, pb, pl, pr), storage(res))
        return channel_shifted(lw, op, Reduction(
            clipped, [x, Buf(ft, (groups, cout, kh, kw, cg), f.el)], shape_of(op.result),
            res, [], False))

    def fn(g: Gen, idx: list[Lin]) -> SSAValue:
        n, ho, wo, oc = idx
        grp, co = group_and_channel(g, oc, groups, cout)

        def term(t: list[Lin]) -> SSAValue:
            i, j, c = t
            hi = ho.scale(sh) + i.scale(dh) + (-pt)
            wi = wo.scale(sw) + j.scale(dw) + (-pl)
            checks = ([(hi, h)] if pt or pb else []) + ([(wi, w)] if pl or pr else [])

            def inside() -> list[SSAValue]:
                xv = x.load(g, [n, hi, wi, grp.scale(cg) + c])
                fv = f.load(g, [grp, i, j, c, co])
                return [g.product(xv, fv, d)]

            return g.guarded(checks, inside, zero)

        return sum_terms(g, (kh, kw, cg), halvings, op.rounding.data, storage(res), d, term)

    # a per-channel scale (1x1, one input and one output channel per group) reads each
    # input element only for the output element at the same index
    pointwise = (kh, kw, cg, cout, sh, sw, pt, pb, pl, pr) == (1, 1, 1, 1, 1, 1, 0, 0, 0, 0)
    return channel_shifted(lw, op, Reduction(
        fn, [x, f], shape_of(op.result), res,
        windows(x) if isinstance(x, (Rows, Pixel)) else [], pointwise))


def _stays_in_block(v: SSAValue, block, depth: int = 0) -> bool:
    """Whether every use of v, and of the values computed from it (a few ops deep), is
    an op of `block` (not of a loop body or branch)."""
    for use in v.uses:
        user = use.operation
        if user.parent_block() is not block:
            return False
        if depth < 8 and not all(_stays_in_block(r, block, depth + 1) for r in user.results):
            return False
    return True


def _clipped_conv(x: Val, ft, d: int, in_shape, f_shape, strides, pads, elem):
    """The element function of a convolution over the window clipped to the input: per
    output pixel, the first and last filter rows and columns inside the input (computed
    only on the sides that have padding), then for each filter row one loop over the
    contiguous columns x channels of a contiguous input buffer, or over the columns and
    the channels of a group otherwise. ft is the filter as [g][co][ky][kx][c]."""
    _, h, w, cin = in_shape
    groups, kh, kw, cg, cout = f_shape
    sh, sw = strides
    pt, pb, pl, pr = pads
    flat = isinstance(x, Buf) and x.contiguous and groups == 1 and in_shape[0] == 1

    def fn(g: Gen, idx: list[Lin]) -> SSAValue:
        n, ho, wo, oc = idx
        grp, co = group_and_channel(g, oc, groups, cout)
        hb, wb = ho.scale(sh) + (-pt), wo.scale(sw) + (-pl)

        def bounds(base: Lin, lo_pad: int, hi_pad: int, k: int, size: int):
            lo: Lin | SSAValue = Lin(0)
            hi: Lin | SSAValue = Lin(k)
            if lo_pad:
                lo = g.max(g.index(0), g.lin(base.scale(-1)))
            if hi_pad:
                hi = g.min(g.index(k), g.lin(base.scale(-1) + size))
            return Lin.of(lo), Lin.of(hi)

        ky0, ky1 = bounds(hb, pt, pb, kh, h)
        kx0, kx1 = bounds(wb, pl, pr, kw, w)
        frow = (grp.scale(cout) + co).scale(kh * kw * cg)

        def bound(v: Lin) -> int | SSAValue:
            return v.const if not v.terms else g.lin(v)

        def row(ky: SSAValue, acc: SSAValue) -> list[SSAValue]:
            ky_ = Lin.of(ky)
            fbase = frow + ky_.scale(kw * cg)
            if flat:
                xbase = x.offset + (hb + ky_).scale(w * cin) + wb.scale(cin)

                def tap(j: SSAValue, a: SSAValue) -> list[SSAValue]:
                    xv = g.load(x.buffer, xbase + Lin.of(j))
                    fv = g.load(ft, fbase + Lin.of(j))
                    return [g.wrap_add(a, g.product(xv, fv, d), d)]

                return g.for_(bound(kx0.scale(cin)), bound(kx1.scale(cin)), [acc], tap)

            def col(kx: SSAValue, a: SSAValue) -> list[SSAValue]:
                kx_ = Lin.of(kx)

                def chan(c: Lin, a2: SSAValue) -> list[SSAValue]:
                    xv = x.load(g, [n, hb + ky_, wb + kx_, grp.scale(cg) + c])
                    fv = g.load(ft, fbase + kx_.scale(cg) + c)
                    return [g.wrap_add(a2, g.product(xv, fv, d), d)]

                return g.loop(cg, [a], chan)

            return g.for_(bound(kx0), bound(kx1), [acc], col)

        return g.for_(bound(ky0), bound(ky1), [g.const(0, elem)], row)[0]

    return fn


@dataclass(eq=False)
class _Transposed(Val):
    """A constant 2-D operand stored transposed: element [i, j] at j * rows + i."""

    buffer: Any
    shape: tuple[int, ...]
    el: Attribute
    cost: int = FREE

    def load(self, g: Gen, idx: list[Lin]) -> SSAValue:
        i, j = idx
        return g.load(self.buffer, Lin.of(j).scale(self.shape[0]) + Lin.of(i))


def _reads_strided(v: Val, dim: int) -> bool:
    return isinstance(v, Buf) and len(v.shape) == 2 and v.strides[dim] != 1


def relayout(lw: Lowering, v: Val, perm: tuple[int, ...]):
    """A new constant global holding the elements of `v`, a Buf over a constant global,
    with its dimensions permuted (row-major in the order `perm`), or None when v is not
    a constant. One global per source view and order."""
    if not isinstance(v, Buf) or not isinstance(v.buffer.ref.owner, memref.GetGlobalOp):
        return None
    gname = v.buffer.ref.owner.name_.root_reference.data
    if v.offset.terms or isinstance(v.buffer.elem, Float32Type):
        return None
    key = (gname, v.offset.const, tuple(v.strides), tuple(v.shape), perm)
    if key in lw.relayouts:
        return lw.relayouts[key]
    glob = next((o for o in lw.g.module_ops if isinstance(o, memref.GlobalOp)
                 and o.sym_name.data == gname), None)
    if glob is None:
        return None
    dt = {8: "<i1", 16: "<i2", 32: "<i4", 64: "<i8"}[v.buffer.elem.width.data]
    data = np.frombuffer(glob.initial_value.data.data, dtype=dt)
    pos = np.full(v.shape, v.offset.const, dtype=np.int64)
    for e, (n_, s) in enumerate(zip(v.shape, v.strides)):
        if n_ != 1:
            shape = [1] * len(v.shape)
            shape[e] = n_
            pos = pos + (np.arange(n_) * s).reshape(shape)
    values = data[pos].transpose(perm)
    buf = lw.g.global_(gname + "_t", values, v.buffer.elem)
    lw.relayouts[key] = buf
    return buf


def lower_maxpool(lw: Lowering, op: num.MaxPoolOp) -> Val:
    x = lw.vals[op.input]
    if not lw.consumed_once(op.input):
        x = operand(lw, op.input)
    el = element_of(op.input)
    _, h, w, _ = shape_of(op.input)
    kh, kw = minun.ints(op.kernel)
    sh, sw = minun.ints(op.strides)
    pt, pb, pl, pr = minun.ints(op.pads)
    lowest = -math.inf if is_float(el) else fx.int_range(storage(el).width.data)[0]

    def fn(g: Gen, idx: list[Lin]) -> SSAValue:
        n, ho, wo, c = idx

        def over_i(i: Lin, m: SSAValue):
            def over_j(j: Lin, m2: SSAValue):
                hi, wi = ho.scale(sh) + i + (-pt), wo.scale(sw) + j + (-pl)
                checks = ([(hi, h)] if pt or pb else []) + ([(wi, w)] if pl or pr else [])
                return [g.guarded(checks, lambda: [g.max(m2, x.load(g, [n, hi, wi, c]))], m2)]

            return g.loop(kw, [m], over_j)

        return g.loop(kh, [g.const(lowest, storage(el))], over_i)[0]

    return Reduction(fn, [x], shape_of(op.result), el)


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
    num.MaxPoolOp: lower_maxpool,
}
