"""Zero-skew requantizations run often, as constant tables (minun_mlir/formats/zero_skew/loops.py).

A per-tensor TFLite requantization (`num.requantize`, formats/zero_skew/arith.py) costs a 32x32-bit
fixed-point multiply an element: on the 8-bit Uno about 200 cycles, which ProtoNN pays
some 1,900 times an inference. Two exact replacements, both computed at compile time by
the evaluator's own integers (affine.requantize), so the C computes the same integers:

- of an int8 value (256 possible inputs): a load from the table of its 256 results;
- of an int32 accumulator to int8 (monotone in the accumulator for a positive multiplier
  and no left shift): the 255 thresholds T[i] = the least x whose result is at least
  i - 127, so the result is -128 plus the number of thresholds <= x. The C guesses that
  count from x with one 16x16-bit product and corrects the guess with two of them
  (`count = p + [x >= T[p]] + [x >= T[p + 1]]`); the guess's constants are checked here,
  on every threshold interval, to fall within the two the correction covers (else the
  helper stays).

Each is chosen only where the op runs at least TABLE_RUNS_PER_BYTE times an inference
per byte of its table's entries (a table of int32 is 1 KB of flash).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Operation, SSAValue

from minun_mlir.dialects import minun, num
from minun_mlir.formats.zero_skew import arith as af
from minun_mlir.lowering.loops.builder import INDEX, Gen, Lin, width
from minun_mlir.lowering.loops.elementwise import elementwise
from minun_mlir.lowering.loops.values import Val, element_of, shape_of

if TYPE_CHECKING:
    from minun_mlir.lowering.lower_to_loops import Lowering

TABLE_RUNS_PER_BYTE = 64
HOT_RUNS = 16  # an op run this often calls the inlined helper (minun_zs_mbqm_hot)
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
COUNT = af.QMAX - af.QMIN  # 255 thresholds of an int8 result


def runs(op: Operation) -> int:
    """How many elements the op computes in one inference: its result's size times the
    trip counts of the minun.loop ops around it."""
    n = math.prod(shape_of(op.results[0]))
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, minun.LoopOp):
            n *= max(0, parent.upper.value.data - parent.lower.value.data)
        parent = parent.parent_op()
    return n


def _types(op: num.RequantizeOp):
    a, r = element_of(op.input), element_of(op.result)
    return a, r


def _plain(op: num.RequantizeOp) -> bool:
    return op.channels() is None and not num.in_ort_mode(op)


def table_requantize(lw: Lowering, op: num.RequantizeOp) -> Val | None:
    """An int8 value's requantization as a load from its 256 results (ProtoNN's class
    scores, 10 an iteration of its loop over 40 prototypes, each to the int32 of their
    sum). None if the op does not qualify."""
    a, r = _types(op)
    if not _plain(op) or a.width != 8 or runs(op) < TABLE_RUNS_PER_BYTE * r.width // 8:
        return None
    q = np.arange(af.QMIN, af.QMAX + 1, dtype=np.int64)
    values = af.requantize(q, a.zp, r.zp, op.left_shift.value.data, op.multiplier.value.data,
                           op.shift.value.data, r.width)
    buf = lw.g.global_("zs_rq_table", np.asarray(values, dtype=np.int64),
                       IntegerType(r.width))

    def fn(g: Gen, x: SSAValue) -> SSAValue:
        i = g.add(arith.IndexCastOp(g.resize(x, 32), INDEX))
        return g.load(buf, Lin.of(i) + (-af.QMIN))

    return elementwise(lw, op, fn, op.input)


def thresholds(zp: int, m: int, shift: int) -> np.ndarray | None:
    """T[i], i = 0..254: the least int32 x with clamp(zp + mbqm(x, m, shift)) >= i - 127
    (bisection; the result is monotone in x for m > 0 and no left shift: x 2^shift wraps
    in int32). None if one is never reached, or for m <= 0 or shift > 0."""
    if m <= 0 or shift > 0:
        return None
    ys = np.arange(af.QMIN + 1, af.QMAX + 1, dtype=np.int64)

    def f(x):
        return af.requantize(x, 0, zp, 0, m, shift, 8)

    if np.any(f(np.full(COUNT, I32_MAX, dtype=np.int64)) < ys):
        return None
    lo = np.full(COUNT, I32_MIN - 1, dtype=np.int64)  # f(lo) < y (lo below int32: -inf)
    hi = np.full(COUNT, I32_MAX, dtype=np.int64)  # f(hi) >= y
    while np.any(hi - lo > 1):
        mid = (lo + hi) // 2
        up = f(mid) >= ys
        hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
    return hi


def guess_constants(t: np.ndarray) -> tuple[int, int] | None:
    """(j, c): the guess p = min(((x - T[0] + 1) >> j) c >> 15, 253) for x clamped to
    [T[0] - 1, T[254]], if every x there has count(x) - 2 <= p <= count(x) (count(x) =
    the number of thresholds <= x); checked at both ends of each interval where count(x)
    is constant (p and count are monotone in x). None if no such constants."""
    lo = int(t[0]) - 1
    span = int(t[-1]) - lo
    if lo < I32_MIN or span >= 1 << 31 or span < 2 * COUNT:
        return None
    j = max(0, span.bit_length() - 15)
    c = min(((COUNT - 1) << 15) // max(1, span >> j), (1 << 15) - 1)

    def p(x: np.ndarray) -> np.ndarray:
        return np.minimum((((x - lo) >> j) * c) >> 15, COUNT - 2)

    starts = np.concatenate(([lo], t)).astype(np.int64)  # count k on [starts[k], ends[k]]
    ends = np.concatenate((t - 1, [t[-1]])).astype(np.int64)
    k = np.arange(COUNT + 1)
    live = starts <= ends
    ok = (p(starts) >= k - 2) & (p(ends) <= k)
    return (j, c) if bool(np.all(ok[live])) else None


def threshold_requantize(lw: Lowering, op: num.RequantizeOp) -> Val | None:
    """An int32 accumulator's requantization to int8 as a count of thresholds (module
    docstring). None if the op does not qualify."""
    a, r = _types(op)
    m, shift = op.multiplier.value.data, op.shift.value.data
    if not _plain(op) or a.width != 32 or a.zp != 0 or r.width != 8 or m <= 0 or \
            op.left_shift.value.data != 0 or runs(op) < TABLE_RUNS_PER_BYTE * 4:
        return None
    t = thresholds(r.zp, m, shift)
    consts = None if t is None else guess_constants(t)
    if consts is None:
        return None
    j, c = consts
    lo, top = int(t[0]) - 1, int(t[-1])
    # an accumulator of at most 16 bits (a product of two int8 values, one with zero
    # point 0) with thresholds in int16: the count in 16-bit arithmetic, int16 thresholds
    short = lo >= -(1 << 15) and top - lo < 1 << 15
    w = 16 if short else 32
    buf = lw.g.global_("zs_rq_thresholds", t, IntegerType(w))

    def fn(g: Gen, x: SSAValue) -> SSAValue:
        x = g.clamp(g.resize(x, w) if width(x) <= w else x, lo, top)
        x = g.resize(x, w)
        d = g.binop(arith.SubiOp, x, g.iconst(lo, w), nsw=True)
        dj = g.resize(g.shrsi(d, j), 16)
        p = g.resize(g.shrsi(g.product(dj, g.iconst(c, 16), 32), 15), 16)
        p = g.min(p, g.iconst(COUNT - 2, 16))
        i = Lin.of(g.add(arith.IndexCastOp(p, INDEX)))
        one, zero = g.iconst(1, 16), g.iconst(0, 16)
        for at in (i, i + 1):
            above = g.cmp(x, g.load(buf, at), "sge")
            p = g.binop(arith.AddiOp, p, g.select(above, one, zero), nsw=True)
        return g.resize(g.binop(arith.AddiOp, p, g.iconst(af.QMIN, 16), nsw=True), 8)

    return elementwise(lw, op, fn, op.input)
