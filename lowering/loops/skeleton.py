"""One lowering of the dense dot-product ops (matmul, conv2d with groups and depthwise)
for every number format. The index math, the window clipped to the input, the weight
layouts (a transposed matmul operand, the filter as [group][out channel][ky][kx][c]), the
row windows and the inputs stored once are decided here; a format gives only its
arithmetic as a `Dot`: the term of two elements, how the terms are summed, the rounding
of the sum.

Clipping the window (skipping the taps that lie in the padding) is exact for every
format, since a padded tap adds exactly nothing: fixed point adds 0; zero-skew pads with
the input's zero point, (zp - zp)(w - zw) = 0; a posit adds 0 * w = 0 (w is never NaR:
quantized weights saturate) and p + 0 = p; bfloat16 sums in float32 from +0, a sum that
is never -0, and s + 0 = s. The taps left are visited in the same (ky, kx, c) order, so
the sums that do not associate (posits without a quire, float32) are unchanged too."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import Float32Type
from xdsl.ir import Attribute, SSAValue

from minun_mlir.dialects import minun, num
from minun_mlir.formats.fixed import arith as fx
from minun_mlir.lowering.loops.builder import Gen, Lin
from minun_mlir.lowering.loops.values import (
    CHEAP,
    FREE,
    Buf,
    Pixel,
    Reduction,
    Rows,
    Val,
    element_of,
    is_float,
    shape_of,
    storage,
    windows,
)

if TYPE_CHECKING:
    from minun_mlir.lowering.lower_to_loops import Lowering

Terms = Callable[[list[Lin]], list[SSAValue]]


@dataclass
class Dot:
    """A format's arithmetic of a dot product. `term(g, x, w)` is what one pair of
    elements contributes (one or more values) and `pad()` the contribution of a tap in the
    padding; `begin` gives the partial sum carried through the loops (none for a quire),
    `add` adds a term to it, `end` rounds it to the result. `reduce`, when given, sums
    terms indexed row-major by dims its own way (SeeDot's TreeSum); `clips` says whether
    the clipped window applies (not to a TreeSum's array of every term); `scope` brackets
    one dot product (a posit quire's nesting depth); `finish` wraps the finished
    reduction (per-channel shifts)."""

    term: Callable[[Gen, SSAValue, SSAValue], list[SSAValue]]
    pad: Callable[[Gen], list[SSAValue]]
    begin: Callable[[Gen], list[SSAValue]]
    add: Callable[[Gen, list[SSAValue], list[SSAValue]], list[SSAValue]]
    end: Callable[[Gen, list[SSAValue]], SSAValue]
    reduce: Callable[[Gen, tuple[int, ...], Terms], SSAValue] | None = None
    clips: bool = True
    scope: Callable[[Gen], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext
    finish: Callable[[Reduction], Val] = field(default=lambda red: red)

    def sum(self, g: Gen, dims: tuple[int, ...], terms: Terms) -> SSAValue:
        """The sum of the terms indexed row-major by `dims`, in that order."""
        if self.reduce is not None:
            return self.reduce(g, dims, terms)
        with self.scope(g):
            def level(e: int, idx: list[Lin], acc: list[SSAValue]) -> list[SSAValue]:
                if e == len(dims):
                    return self.add(g, acc, terms(idx))
                return g.loop(dims[e], acc, lambda i, *a: level(e + 1, idx + [i], list(a)))

            return self.end(g, level(0, [], self.begin(g)))


def operand(lw: Lowering, v: SSAValue) -> Val:
    """An operand of a reduction: lazy when rereading it is cheap or it is read once."""
    val = lw.vals[v]
    return val if val.cost <= CHEAP or lw.consumed_once(v) else lw.buffer_of(v)


def matmul(lw: Lowering, op: num.MatMulOp, dot: Dot) -> Val:
    a, b = operand(lw, op.lhs), operand(lw, op.rhs)
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
        return dot.sum(g, (k,), lambda kk: dot.term(g, a.load(g, [i, kk[0]]),
                                                    b.load(g, [kk[0], j])))

    return dot.finish(Reduction(fn, [a, b], shape_of(op.result), element_of(op.result)))


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


def conv2d(lw: Lowering, op: num.Conv2DOp, dot: Dot) -> Val:
    rows = lw.row_window(op, lw.vals[op.input])
    x = operand(lw, op.input) if rows is None else lw.rows_of(op, rows)
    f = operand(lw, op.filter)
    res = element_of(op.result)
    _, h, w, _ = shape_of(op.input)
    groups, kh, kw, cg, cout = shape_of(op.filter)
    sh, sw = minun.ints(op.strides)
    pt, pb, pl, pr = minun.ints(op.pads)
    dh, dw = minun.ints(op.dilations)
    pad = dot.pad(lw.g)
    # the window clipped to the input (no test per tap) over a constant filter stored as
    # [group][out channel][ky][kx][channel], a window row being one contiguous dot
    # product when the input is a contiguous buffer (SMLAD pairs on Cortex-M4, one asm
    # loop on AVR)
    ft = None
    if dot.clips and (dh, dw) == (1, 1) and kh * kw * cg > 1 and \
            not isinstance(x, (Rows, Pixel)) and isinstance(f, Buf):
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
        clipped = _clipped(x, ft, dot, shape_of(op.input), shape_of(op.filter), (sh, sw),
                           (pt, pb, pl, pr))
        return dot.finish(Reduction(
            clipped, [x, Buf(ft, (groups, cout, kh, kw, cg), f.el)], shape_of(op.result),
            res, [], False))

    def fn(g: Gen, idx: list[Lin]) -> SSAValue:
        n, ho, wo, oc = idx
        grp, co = group_and_channel(g, oc, groups, cout)

        def term(t: list[Lin]) -> list[SSAValue]:
            i, j, c = t
            hi = ho.scale(sh) + i.scale(dh) + (-pt)
            wi = wo.scale(sw) + j.scale(dw) + (-pl)
            checks = ([(hi, h)] if pt or pb else []) + ([(wi, w)] if pl or pr else [])

            def inside() -> list[SSAValue]:
                xv = x.load(g, [n, hi, wi, grp.scale(cg) + c])
                return dot.term(g, xv, f.load(g, [grp, i, j, c, co]))

            return _guarded(g, checks, inside, pad)

        return dot.sum(g, (kh, kw, cg), term)

    # a per-channel scale (1x1, one input and one output channel per group) reads each
    # input element only for the output element at the same index
    pointwise = (kh, kw, cg, cout, sh, sw, pt, pb, pl, pr) == (1, 1, 1, 1, 1, 1, 0, 0, 0, 0)
    return dot.finish(Reduction(
        fn, [x, f], shape_of(op.result), res,
        windows(x) if isinstance(x, (Rows, Pixel)) else [], pointwise))


def maxpool(lw: Lowering, op: num.MaxPoolOp) -> Val:
    """The largest element of each window, for every format (the stored integers order
    as the values: fixed point, posits, bfloat16 keys, zero-skew codes; float32 as
    floats), from the lowest value; taps in the padding are skipped. With padding, the
    window is clipped to the input (a max over the same taps: exact for every format)."""
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
        start = g.const(lowest, storage(el))
        if pt or pb or pl or pr:
            hb, wb = ho.scale(sh) + (-pt), wo.scale(sw) + (-pl)
            ky0, ky1 = _bounds(g, hb, pt, pb, kh, h)
            kx0, kx1 = _bounds(g, wb, pl, pr, kw, w)

            def row(i: SSAValue, m: SSAValue) -> list[SSAValue]:
                return g.for_(_bound(g, kx0), _bound(g, kx1), [m], lambda j, m2: [g.max(
                    m2, x.load(g, [n, hb + Lin.of(i), wb + Lin.of(j), c]))])

            return g.for_(_bound(g, ky0), _bound(g, ky1), [start], row)[0]

        def over_i(i: Lin, m: SSAValue):
            def over_j(j: Lin, m2: SSAValue):
                hi, wi = ho.scale(sh) + i + (-pt), wo.scale(sw) + j + (-pl)
                return [g.max(m2, x.load(g, [n, hi, wi, c]))]

            return g.loop(kw, [m], over_j)

        return g.loop(kh, [start], over_i)[0]

    return Reduction(fn, [x], shape_of(op.result), el)


def _guarded(g: Gen, checks: list[tuple[Lin, int]], inside: Callable[[], list[SSAValue]],
             outside: list[SSAValue]) -> list[SSAValue]:
    """inside() when every index of `checks` is within [0, size), else `outside`."""
    if len(outside) == 1 or not checks:
        return [g.guarded(checks, inside, outside[0])] if checks else inside()
    cond = None
    for lin, size in checks:
        v = g.lin(lin)
        ok = g.binop(arith.AndIOp, g.cmp(v, g.index(0), "sge"), g.cmp(v, g.index(size), "slt"))
        cond = ok if cond is None else g.binop(arith.AndIOp, cond, ok)
    return g.if_(cond, [v.type for v in outside], inside, lambda: outside)


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


def _bounds(g: Gen, base: Lin, lo_pad: int, hi_pad: int, k: int, size: int
            ) -> tuple[Lin, Lin]:
    """The first and last + 1 window offsets (0..k) whose input index base + offset lies
    in [0, size): computed only on the sides that have padding."""
    lo: Lin | SSAValue = Lin(0)
    hi: Lin | SSAValue = Lin(k)
    if lo_pad:
        lo = g.max(g.index(0), g.lin(base.scale(-1)))
    if hi_pad:
        hi = g.min(g.index(k), g.lin(base.scale(-1) + size))
    return Lin.of(lo), Lin.of(hi)


def _bound(g: Gen, v: Lin) -> int | SSAValue:
    return v.const if not v.terms else g.lin(v)


def _clipped(x: Val, ft, dot: Dot, in_shape, f_shape, strides, pads):
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

        ky0, ky1 = _bounds(g, hb, pt, pb, kh, h)
        kx0, kx1 = _bounds(g, wb, pl, pr, kw, w)
        frow = (grp.scale(cout) + co).scale(kh * kw * cg)

        def bound(v: Lin) -> int | SSAValue:
            return _bound(g, v)

        def row(ky: SSAValue, *acc: SSAValue) -> list[SSAValue]:
            ky_ = Lin.of(ky)
            fbase = frow + ky_.scale(kw * cg)
            if flat:
                xbase = x.offset + (hb + ky_).scale(w * cin) + wb.scale(cin)

                def tap(j: SSAValue, *a: SSAValue) -> list[SSAValue]:
                    xv = g.load(x.buffer, xbase + Lin.of(j))
                    fv = g.load(ft, fbase + Lin.of(j))
                    return dot.add(g, list(a), dot.term(g, xv, fv))

                return g.for_(bound(kx0.scale(cin)), bound(kx1.scale(cin)), list(acc), tap)

            def col(kx: SSAValue, *a: SSAValue) -> list[SSAValue]:
                kx_ = Lin.of(kx)

                def chan(c: Lin, *a2: SSAValue) -> list[SSAValue]:
                    xv = x.load(g, [n, hb + ky_, wb + kx_, grp.scale(cg) + c])
                    fv = g.load(ft, fbase + kx_.scale(cg) + c)
                    return dot.add(g, list(a2), dot.term(g, xv, fv))

                return g.loop(cg, list(a), chan)

            return g.for_(bound(kx0), bound(kx1), list(acc), col)

        lo, hi = bound(ky0), bound(ky1)
        with dot.scope(g):
            return dot.end(g, g.for_(lo, hi, dot.begin(g), row))

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
    if v.offset.terms:
        return None
    key = (gname, v.offset.const, tuple(v.strides), tuple(v.shape), perm)
    if key in lw.relayouts:
        return lw.relayouts[key]
    contents = lw.g.global_bytes(gname)
    if contents is None:
        return None
    dt = "<f4" if isinstance(v.buffer.elem, Float32Type) else \
        {8: "<i1", 16: "<i2", 32: "<i4", 64: "<i8"}[v.buffer.elem.width.data]
    data = np.frombuffer(contents, dtype=dt)
    pos = np.full(v.shape, v.offset.const, dtype=np.int64)
    for e, (n_, s) in enumerate(zip(v.shape, v.strides)):
        if n_ != 1:
            shape = [1] * len(v.shape)
            shape[e] = n_
            pos = pos + (np.arange(n_) * s).reshape(shape)
    values = data[pos].transpose(perm)
    buf = lw.g.global_(gname + "_t", values, v.buffer.elem)
    if gname in lw.packed:  # a re-ordered copy of packed weights is packed too
        lw.packed.add(buf.ref.owner.name_.root_reference.data)
    lw.relayouts[key] = buf
    return buf
