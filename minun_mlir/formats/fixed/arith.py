"""Fixed-point integer semantics, written once (docs/numerics.md is the prose version).

A fixed-point value is a b-bit two's complement integer q with a scale s: it stands for
the real q / 2^s. Every function here works on numpy int64 arrays holding such integers
and computes exactly what the generated C computes (the C runtime `minun_runtime.h`
implements the same functions; the cross-check tests compare the two).

Rounding of a right shift by n bits (x / 2^n) is one of three explicit modes:
  - "trunc":   round toward zero, C's `x / (1 << n)` (what the papers' C code does);
  - "floor":   round toward -inf, an arithmetic shift `x >> n`;
  - "nearest": round half up, `(x + (1 << (n - 1))) >> n`.
Narrowing to b bits is "wrap" (two's complement modulo 2^b) or "saturate" (clamp).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache

import numpy as np
from xdsl.utils.str_enum import StrEnum


class Rounding(StrEnum):
    """How a right shift (or a real) is rounded to an integer. The single source of the
    mode names: the `#num<rounding ...>` attribute, the quantize option and the C runtime's
    helper names all come from here. Members compare equal to their names ("trunc")."""

    TRUNC = "trunc"
    FLOOR = "floor"
    NEAREST = "nearest"


# What a function without a `num.rounding` attribute rounds with, and every option's
# default (quantize's `rounding`, minun-compile's --rounding): the one place it is said.
DEFAULT_ROUNDING = Rounding.TRUNC


def rounding_in(op) -> str:
    """The rounding mode in force at `op` (a function, or an op inside one): the nearest
    enclosing `num.rounding`, else DEFAULT_ROUNDING. Every level's reader (the evaluator,
    the loop lowering, the C printer) asks here, so they cannot disagree."""
    while op is not None and "num.rounding" not in op.attributes:
        op = op.parent_op()
    return str(op.attributes["num.rounding"].data) if op is not None else DEFAULT_ROUNDING


class Overflow(StrEnum):
    """How an exact integer is narrowed to fewer bits (`#num<overflow ...>`)."""

    WRAP = "wrap"
    SATURATE = "saturate"


ROUNDING_MODES = tuple(m.value for m in Rounding)
OVERFLOW_MODES = tuple(m.value for m in Overflow)
BITWIDTHS = (8, 16, 32)


def int_range(bits: int) -> tuple[int, int]:
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


@dataclass
class OverflowCount:
    """Of the `values` an op narrowed, how many did not fit (and wrapped or saturated)."""

    overflowed: int = 0
    values: int = 0


class OverflowCounter:
    """Filled by `narrow` while active (see `counting_overflow`): per op, what did not fit.
    The evaluator names the op each kernel runs for (`attributed_to`)."""

    def __init__(self) -> None:
        self.by_op: dict[object, OverflowCount] = {}
        self.current: object | None = None

    def record(self, x: np.ndarray, lo: int, hi: int) -> None:
        count = self.by_op.setdefault(self.current, OverflowCount())
        count.overflowed += int(np.count_nonzero((x < lo) | (x > hi)))
        count.values += int(np.size(x))


# the counter of the innermost `counting_overflow`, per thread and task (a context
# variable, not module state: two evaluations in threads never count into each other)
_COUNTER: ContextVar[OverflowCounter | None] = ContextVar("minun_overflow_counter",
                                                          default=None)


@contextmanager
def counting_overflow() -> Iterator[OverflowCounter]:
    """Count the values every `narrow` inside wraps or saturates."""
    counter = OverflowCounter()
    token = _COUNTER.set(counter)
    try:
        yield counter
    finally:
        _COUNTER.reset(token)


@contextmanager
def attributed_to(op: object) -> Iterator[None]:
    """Count what `narrow` does inside as `op`'s (a no-op when nothing is counting)."""
    counter = _COUNTER.get()
    if counter is None:
        yield
        return
    saved, counter.current = counter.current, op
    try:
        yield
    finally:
        counter.current = saved


def counter_active() -> bool:
    """Whether a `counting_overflow` is active here (else `attributed_to` is a no-op)."""
    return _COUNTER.get() is not None


def counting() -> bool:
    """Whether a `narrow` here would be counted (an overflow report is being made)."""
    counter = _COUNTER.get()
    return counter is not None and counter.current is not None


def narrow(x: np.ndarray, bits: int, overflow: str, count: bool = True) -> np.ndarray:
    """Narrow exact integers to `bits`: wrap modulo 2^bits, or saturate. `count=False`
    for a deliberate clamp that loses nothing (tanh's table argument), which is then not
    reported as overflow."""
    lo, hi = int_range(bits)
    counter = _COUNTER.get() if count else None
    if counter is not None and counter.current is not None and bits < 64:
        counter.record(np.asarray(x), lo, hi)
    if overflow == "saturate":
        return np.clip(x, lo, hi)
    if bits >= 64:
        return x
    m = np.int64(1) << np.int64(bits)
    return ((x - lo) & (m - 1)) + lo


def shift_right(x: np.ndarray, n: int, rounding: str) -> np.ndarray:
    """x / 2^n rounded per mode for n > 0; x * 2^-n for n <= 0 (exact)."""
    x = np.asarray(x, dtype=np.int64)
    if n <= 0:
        return x << np.int64(-n)
    if rounding == "floor":
        return x >> np.int64(n)
    if rounding == "nearest":
        return (x + (np.int64(1) << np.int64(n - 1))) >> np.int64(n)
    if rounding == "trunc":
        q = np.abs(x) >> np.int64(n)
        return np.where(x < 0, -q, q)
    raise ValueError(f"unknown rounding mode {rounding!r}")


def round_real(x: np.ndarray, rounding: str, out: np.ndarray | None = None) -> np.ndarray:
    """Round reals to integers with the same mode as a shift (used to quantize)."""
    if rounding == "trunc":
        return np.trunc(x, out=out)
    if rounding == "floor":
        return np.floor(x, out=out)
    if rounding == "nearest":
        return np.floor(np.add(x, 0.5, out=out), out=out)
    raise ValueError(f"unknown rounding mode {rounding!r}")


def shift_right_by(x: np.ndarray, n: np.ndarray, rounding: str) -> np.ndarray:
    """`shift_right` with a shift per element (`n` >= 0, broadcast against x)."""
    x, n = np.asarray(x, dtype=np.int64), np.asarray(n, dtype=np.int64)
    if np.any(n < 0):
        raise ValueError("shift_right_by: shifts must be >= 0")
    if rounding == "floor":
        return x >> n
    if rounding == "nearest":  # (x >> n) + bit n-1 of x (0 when n = 0)
        return (x >> n) + ((x & ((np.int64(1) << n) >> 1)) != 0)
    if rounding == "trunc":
        q = np.abs(x) >> n
        return np.where(x < 0, -q, q)
    raise ValueError(f"unknown rounding mode {rounding!r}")


def get_scale(value: float, bits: int) -> int:
    """Shiftry's GetScale (Algorithm 10): (bits - 1) - floor(log2(value) + 1), the largest
    scale at which `value` still fits. It equals SeeDot's GETP except at exact powers of
    two, where GETP's ceil would overflow by one unit (GETP(1) = 15 at 16 bits: 32768).
    A zero value gets the highest useful scale, bits - 1.
    """
    if value <= 0 or not math.isfinite(value):
        return bits - 1
    return (bits - 1) - math.floor(math.log2(value) + 1)


def quantize(values: np.ndarray, bits: int, scale: int, rounding: str,
             overflow: str = "saturate") -> np.ndarray:
    """Real -> integer at `scale`: round(r * 2^scale), then narrow (constants saturate)."""
    with np.errstate(over="ignore"):  # a real too large for float64 saturates below
        scaled = np.multiply(values, math.ldexp(1.0, scale), dtype=np.float64,
                             out=np.empty(np.shape(values)))
    rounded = round_real(scaled, rounding, out=scaled)  # in place: inputs can be large
    if overflow == "saturate":  # clip before the conversion (the same integers, one pass)
        return narrow(rounded, bits, overflow).astype(np.int64)
    return narrow(rounded.astype(np.int64), bits, overflow)


def dequantize(q: np.ndarray, scale: int) -> np.ndarray:
    return np.asarray(q, dtype=np.float64) * math.ldexp(1.0, -scale)


def tree_sum(terms: np.ndarray, halvings: int, bits: int, rounding: str) -> np.ndarray:
    """SeeDot's TreeSum (Algorithm 2) over the last axis: pairwise sums level by level;
    the first `halvings` levels divide both operands (and an odd element carried up) by 2.
    Additions wrap at `bits`. With no halvings this equals the plain modular sum.
    """
    a = np.asarray(terms, dtype=np.int64)
    if halvings <= 0:
        return narrow(a.sum(axis=-1), bits, "wrap")
    level = 0
    while a.shape[-1] > 1:
        n = a.shape[-1]
        k = n // 2
        halve = level < halvings
        s = 1 if halve else 0
        pairs = shift_right(a[..., 0:2 * k:2], s, rounding) + shift_right(
            a[..., 1:2 * k:2], s, rounding)
        pairs = narrow(pairs, bits, "wrap")
        if n % 2:
            pairs = np.concatenate([pairs, shift_right(a[..., -1:], s, rounding)], axis=-1)
        a = pairs
        level += 1
    return a[..., 0]


# --------------------------------------------------------------------------------------
# Scale rules of SeeDot (Algorithm 1), parameterised by bitwidth B and maxscale P
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeeDotRules:
    bits: int  # B
    maxscale: int  # P

    def mulscale(self, p1: int, p2: int) -> tuple[int, int]:
        """(P_mul, S_mul): the product's scale and the total pre-shift of the operands
        (each operand is shifted by S_mul // 2)."""
        s_mul = self.bits
        p_mul = (p1 - s_mul // 2) + (p2 - s_mul // 2)
        if p_mul <= self.maxscale:
            s_mul = max(self.bits - (self.maxscale - p_mul), 0)
            p_mul = (p1 - s_mul // 2) + (p2 - s_mul // 2)
        return p_mul, s_mul

    def addscale(self, p: int) -> tuple[int, int]:
        """(P_add, S_add): the sum's scale and the shift applied to both operands."""
        if p - 1 <= self.maxscale:
            return p, 0
        return p - 1, 1

    def treesumscale(self, p: int, n: int) -> tuple[int, int]:
        """(P_add, S_add): the scale after summing n terms and the number of halving
        levels of TreeSum."""
        s_add = math.ceil(math.log2(n)) if n > 1 else 0
        p_add = p - s_add
        if p_add <= self.maxscale:
            s_add = max(s_add - (self.maxscale - p_add), 0)
            p_add = p - s_add
        return p_add, s_add


# --------------------------------------------------------------------------------------
# Exponentials and the functions built on them
# --------------------------------------------------------------------------------------

# Shiftry's fixed-scale tables (§5.4): input scale, output scale, split psi.
SHIFTRY_EXP = {16: (11, 14, 7), 8: (4, 6, None)}


@cache
def shiftry_tables(bits: int) -> tuple[np.ndarray, ...]:
    """Tables for e^x with x <= 0. 16-bit: T1[i] = e^(-(i*2^psi)/2^11) * 2^14 (256
    entries), T2[j] = e^(-j/2^11) * 2^14 (128 entries). 8-bit: T[i] = e^(-i/2^4) * 2^6
    (128 entries). Entries are floored (they are positive).
    """
    if bits == 8:
        s_in, s_out, _ = SHIFTRY_EXP[8]
        i = np.arange(128)
        return (np.floor(np.exp(-i / 2.0**s_in) * 2.0**s_out).astype(np.int64),)
    s_in, s_out, psi = SHIFTRY_EXP[16]
    i = np.arange(1 << (15 - psi))
    j = np.arange(1 << psi)
    t1 = np.floor(np.exp(-(i * 2.0**psi) / 2.0**s_in) * 2.0**s_out).astype(np.int64)
    t2 = np.floor(np.exp(-j / 2.0**s_in) * 2.0**s_out).astype(np.int64)
    return t1, t2


def exp_shiftry(x: np.ndarray, bits: int, rounding: str) -> np.ndarray:
    """e^x for x <= 0 at Shiftry's fixed scales (16-bit: in 11, out 14; 8-bit: in 4, out 6).
    Positive inputs are clamped to 0 (e^0); inputs below the range give the last entry.
    16-bit: u = min(-x, 32767); (T1[u >> 7] * T2[u & 127]) / 2^14 (rounded per mode).
    """
    u = np.minimum(-np.minimum(np.asarray(x, dtype=np.int64), 0), (1 << (bits - 1)) - 1)
    if bits == 8:
        (t,) = shiftry_tables(8)
        return t[u]
    t1, t2 = shiftry_tables(16)
    _, s_out, psi = SHIFTRY_EXP[16]
    return shift_right(t1[u >> psi] * t2[u & ((1 << psi) - 1)], s_out, rounding)


def sigmoid_shiftry(x: np.ndarray, bits: int, rounding: str) -> np.ndarray:
    """Shiftry §5.4.1 / Library 8 at output scale n (14 or 6), integer division:
    x <= 0: (2^n * e(x)) / (2^n + e(x));  x > 0: (2^n * 2^n) / (2^n + e(-x)).
    """
    n = SHIFTRY_EXP[bits][1]
    one = 1 << n
    x = np.asarray(x, dtype=np.int64)
    a = exp_shiftry(np.where(x <= 0, x, -x), bits, rounding)
    num = np.where(x <= 0, one * a, one * one)
    return _cdiv(num, one + a)


def tanh_shiftry(x: np.ndarray, bits: int, rounding: str) -> np.ndarray:
    """Shiftry §5.4.1 / Library 9 at output scale n, integer division, with 2x saturated
    to the input bitwidth: x <= 0: (2^n (e(2x) - 2^n)) / (e(2x) + 2^n);
    x > 0: (2^n (2^n - e(-2x))) / (e(-2x) + 2^n).
    """
    n = SHIFTRY_EXP[bits][1]
    one = 1 << n
    x = np.asarray(x, dtype=np.int64)
    neg2x = narrow(-2 * np.abs(x), bits, "saturate", count=False)  # tanh(-big) = -1 anyway
    a = exp_shiftry(neg2x, bits, rounding)
    mag = _cdiv(one * (one - a), a + one)
    return np.where(x <= 0, -mag, mag)


def _cdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C integer division (truncates toward zero)."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def cdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _cdiv(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))


@dataclass(frozen=True)
class SeeDotExp:
    """SeeDot's two-table exponential (§5.3.1, Algorithms 1-2) for inputs at scale
    `scale` in the integer range [lo, hi] (from the profile). x is clamped to the range,
    d = x - lo (< 2^k) is split into its top T bits i and the next T bits j:
    e^x ~ Tf[i] * Tg[j], each table entry pre-shifted by S_mul // 2 (MULSCALE).
    Deviation from the printed Algorithm 1, documented: Tf's scale is GETP of its
    largest entry (the printed GETP(e^m) overflows the larger entries when m < M).
    """

    bits: int
    scale: int
    lo: int
    hi: int
    maxscale: int
    t: int = 6

    @property
    def k(self) -> int:
        return max(math.ceil(math.log2(max(self.hi - self.lo, 1) + 1)), self.t)

    def tables(self) -> tuple[np.ndarray, np.ndarray, int, int]:
        k, t = self.k, self.t
        step_f = 2.0 ** (k - t)
        step_g = 2.0 ** (k - 2 * t)
        # entries past the range's top are never indexed: hold them at the last used one
        i = np.minimum(np.arange(1 << t), (self.hi - self.lo) >> (k - t))
        real_f = np.exp((self.lo + step_f * i) / 2.0**self.scale)
        i = np.arange(1 << t)
        real_g = np.exp((step_g * i) / 2.0**self.scale)
        p1 = get_scale(float(real_f.max()), self.bits)
        p2 = get_scale(float(real_g.max()), self.bits)
        tf = np.floor(real_f * 2.0**p1).astype(np.int64)
        tg = np.floor(real_g * 2.0**p2).astype(np.int64)
        return tf, tg, p1, p2

    def out_scale(self) -> tuple[int, int]:
        """(P_mul, S_mul) of the table product."""
        _, _, p1, p2 = self.tables()
        return SeeDotRules(self.bits, self.maxscale).mulscale(p1, p2)

    def __call__(self, x: np.ndarray, rounding: str) -> np.ndarray:
        tf, tg, _, _ = self.tables()
        _, s_mul = self.out_scale()
        k, t = self.k, self.t
        d = np.clip(np.asarray(x, dtype=np.int64), self.lo, self.hi) - self.lo
        i = (d >> (k - t)) & ((1 << t) - 1)
        j = shift_right(d, k - 2 * t, "floor") & ((1 << t) - 1)
        a = shift_right(tf[i], s_mul // 2, rounding)
        b = shift_right(tg[j], s_mul // 2, rounding)
        return narrow(a * b, self.bits, "wrap")


def normalise_prescale(bits: int, channels: int) -> int:
    """normaliseL2's right shift of each value before squaring: the smallest k that keeps
    the sum of `channels` squares of (bits - k)-bit values at or below 2^62, exact in
    int64 on both sides (0 for 8 and 16 bits; at 32 bits the squares alone need 62 bits)."""
    k = 0
    while channels * (1 << (2 * (bits - k - 1))) > 1 << 62:
        k += 1
    return k


def isqrt(x: np.ndarray) -> np.ndarray:
    """floor(sqrt(x)) for non-negative int64 (exact, as the C runtime's integer sqrt)."""
    x = np.asarray(x, dtype=np.int64)
    r = np.floor(np.sqrt(x.astype(np.float64))).astype(np.int64)
    r = np.where(r * r > x, r - 1, r)
    r = np.where((r + 1) * (r + 1) <= x, r + 1, r)
    return r


# ln of a sum of exp-table values (num.log_softmax): 16 fraction bits
LOG_SCALE = 16
LN2_Q31 = 1488522236  # round(ln 2 * 2^31)


def ln_sum(s: np.ndarray, s_e: int) -> np.ndarray:
    """ln(s / 2^s_e) at scale LOG_SCALE, for integers 2^s_e <= s < 2^62 (C: minun_lnsum).
    log2 by repeated squaring: k = floor(log2 s), u = s normalised to [1, 2) in Q30
    (truncated), then 16 times u = u^2 (truncated to Q30), a fraction bit 1 and u / 2
    when u >= 2; log2(s / 2^s_e) = k - s_e + 0.bits, times ln 2 (Q31) rounded half up.
    The bits are those of log2 of the truncated u, each squaring's truncation at most
    doubling the relative error: the result is within 2^-15 of ln(s / 2^s_e)
    (test_log_softmax.py checks every s up to 2^21)."""
    s = np.asarray(s, dtype=np.int64)
    k = np.zeros_like(s)
    v = s.copy()
    for step in (32, 16, 8, 4, 2, 1):
        big = v >= (np.int64(1) << np.int64(step))
        v = np.where(big, v >> np.int64(step), v)
        k += np.where(big, step, 0)
    u = np.where(k <= 30, s << np.clip(30 - k, 0, 62), s >> np.clip(k - 30, 0, 62))
    frac = np.zeros_like(s)
    for _ in range(LOG_SCALE):
        u = (u * u) >> np.int64(30)
        big = u >= (np.int64(1) << np.int64(31))
        u = np.where(big, u >> np.int64(1), u)
        frac = (frac << np.int64(1)) | big
    log2 = ((k - s_e) << np.int64(LOG_SCALE)) + frac
    return (log2 * LN2_Q31 + (np.int64(1) << np.int64(30))) >> np.int64(31)
