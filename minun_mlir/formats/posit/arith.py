"""Posit<n, es> arithmetic on bit patterns, written once (docs/numerics.md, "Posits").

A posit<n, es> value is stored as its n-bit pattern; every function here takes numpy int64
arrays holding patterns in [0, 2^n) and returns patterns the same way, for es = 0..2 and
n = 3..32 (the compiler uses 8..16 and 32; the tests cover n = 3..16 and 32). The C runtime
(third_party/softposit/) computes the same patterns; the tests compare both with the
`softposit` package and with exact rational arithmetic.

- The pattern of a negative value is the two's complement of its magnitude's pattern;
  0 is all zeros and NaR (not a real) is 1 followed by zeros.
- Every operation rounds once: the exact result (formed with integers, never float64) is
  rounded to nearest, ties to the even pattern, as if the pattern had unbounded length;
  results never round to 0 or NaR: beyond maxpos they give maxpos, below minpos minpos.
- NaR in gives NaR out; NaN and infinities encode to NaR; x / 0 is NaR.
- Comparisons (and so max, relu, argmax, maxpool) compare patterns as n-bit two's
  complement integers: the posit order, NaR below every real.
- The quire (`Quire`, `dot`) accumulates products exactly in a two's complement integer of
  4 maxscale + n bits counting minpos^2 (SoftPosit's quire8/16/32 for its formats) that
  wraps around on overflow, after about 2^(n-1) products of maxpos^2, as SoftPosit's does.
- exp, sigmoid and tanh form the result to about 2^-55 relative with 64-bit integer
  fixed-point arithmetic (the C runtime does the same operations), then round once: the
  result is the correctly rounded one unless the exact value lies within that of a
  rounding boundary (never, for every posit8 and posit16 input; tests check).

Internally a nonzero real posit is (negative, sig, scale): value = sig * 2^(scale - 29)
with sig in [2^29, 2^30) (the hidden bit at bit 29); fractions have at most n - 3 <= 29
bits, so this holds every posit up to n = 32 exactly.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

SIZES = (8, 9, 10, 11, 12, 13, 14, 15, 16, 32)
ES_VALUES = (0, 1, 2)
HIDDEN = 29  # position of the hidden bit of the internal significand
Q = 60  # fraction bits of the fixed-point numbers exp/sigmoid/tanh work in
ONE_Q = np.int64(1) << np.int64(Q)
ROUNDINGS = ("even", "trunc", "floor", "nearest")
_I64 = np.int64


def _check(n: int, es: int) -> None:
    if not (3 <= n <= 32 and 0 <= es <= 2):
        raise ValueError(f"posit<{n}, {es}>: n must be 3..32 and es 0..2")


def maxscale(n: int, es: int) -> int:
    """log2(maxpos) = (n - 2) * 2^es; minpos is 2^-maxscale."""
    return (n - 2) << es


def quire_bits(n: int, es: int) -> int:
    """The quire's width: 4 maxscale + n bits, least significant bit minpos^2, n - 1 carry
    bits above maxpos^2: SoftPosit's quire8/16/32 (32, 128, 512 bits) for posit<8,0>,
    posit<16,1>, posit<32,2>, the 2017 draft standard's n^2/2 bits for its es."""
    return 4 * maxscale(n, es) + n


def nar(n: int) -> int:
    return 1 << (n - 1)


def maxpos(n: int) -> int:
    return (1 << (n - 1)) - 1


def minpos(n: int) -> int:
    return 1


def _arr(p) -> np.ndarray:
    return np.asarray(p, dtype=np.int64)


def _clamp(x, lo: int, hi: int):
    """np.clip(x, lo, hi) of integers: the same values, without np.clip's per-call cost
    (its bounds checks cost more than the clip on the evaluator's small arrays)."""
    return np.minimum(np.maximum(x, lo), hi)


def _shl(x: np.ndarray, s: np.ndarray) -> np.ndarray:
    """x << s for 0 <= s (shifts of 63 or more give 0)."""
    s = np.asarray(s, dtype=np.int64)
    return np.where(s > 62, 0, np.left_shift(x, _clamp(s, 0, 62)))


def _shr(x: np.ndarray, s: np.ndarray) -> np.ndarray:
    """x >> s for x >= 0, s >= 0 (shifts of 63 or more give 0)."""
    s = np.asarray(s, dtype=np.int64)
    return np.where(s > 62, 0, np.right_shift(x, _clamp(s, 0, 62)))


def _low(x: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The low s bits of x >= 0 (s >= 0)."""
    s = np.asarray(s, dtype=np.int64)
    return np.where(s > 62, x, x & (np.left_shift(_I64(1), _clamp(s, 0, 62)) - 1))


def bit_length(x: np.ndarray) -> np.ndarray:
    """floor(log2 x) + 1 for 0 <= x < 2^63 (0 for 0 and below), exactly: frexp's exponent
    of x as a float64, one less where that float rounded x up to the next power of two
    (x >> (e - 1) is then 0), the only way the conversion can change the exponent."""
    x = _arr(x)
    e = np.frexp(x.astype(np.float64))[1].astype(np.int64)
    up = (x >> np.maximum(e - 1, 0)) == 0
    return np.where(x > 0, e - up, 0)


# --- patterns <-> (negative, sig, scale) ------------------------------------------------


@dataclass
class Parts:
    zero: np.ndarray
    nar: np.ndarray
    neg: np.ndarray
    sig: np.ndarray  # [2^29, 2^30) for nonzero reals (2^29 for 0 and NaR)
    scale: np.ndarray


# up to this width, unpack reads a table of every pattern's parts (built once by
# _unpack_all), which costs a few gathers instead of some fifty array operations
TABLE_BITS = 16


def unpack(p, n: int, es: int) -> Parts:
    """Split patterns into sign, significand and scale (exact)."""
    _check(n, es)
    p = _arr(p) & ((1 << n) - 1)
    if n > TABLE_BITS:
        return _unpack_all(p, n, es)
    t = _unpack_table(n, es)
    return Parts(*(np.take(field, p) for field in t))


@functools.cache
def _unpack_table(n: int, es: int) -> tuple[np.ndarray, ...]:
    """(zero, nar, neg, sig, scale) of every n-bit pattern, indexed by the pattern."""
    P = _unpack_all(np.arange(1 << n, dtype=np.int64), n, es)
    fields = (P.zero, P.nar, P.neg, P.sig, P.scale)
    for f in fields:
        f.flags.writeable = False
    return fields


def _unpack_all(p: np.ndarray, n: int, es: int) -> Parts:
    """unpack, computed (p already masked to n bits)."""
    neg = (p >> (n - 1)) & 1 == 1
    a = np.where(neg, ((1 << n) - p) & ((1 << n) - 1), p)
    body = a & ((1 << (n - 1)) - 1)
    r0 = (body >> (n - 2)) & 1 == 1
    x = np.where(r0, ~body & ((1 << (n - 1)) - 1), body)
    run = (n - 1) - bit_length(x)
    k = np.where(r0, run - 1, -run)
    rlen = np.minimum(run + 1, n - 1)
    rem = (n - 1) - rlen
    tail = _low(body, rem)
    fb = np.maximum(rem - es, 0)
    e = np.where(rem >= es, tail >> fb, _shl(tail, es - rem))
    f = _low(tail, fb)
    sig = (_I64(1) << HIDDEN) | _shl(f, HIDDEN - fb)
    zero = p == 0
    is_nar = p == (1 << (n - 1))
    special = zero | is_nar
    return Parts(zero, is_nar, neg & ~is_nar,
                 np.where(special, _I64(1) << HIDDEN, sig),
                 np.where(special, 0, (k << es) + e))


def pack(neg, m, e, sticky, n: int, es: int) -> np.ndarray:
    """Round the real (-1)^neg * (m + sticky') * 2^e to posit<n, es>, where 0 < m < 2^62
    and `sticky` says the exact value lies strictly between m and m + 1 (in units 2^e).
    Round to nearest, ties to the even pattern; never to 0 or NaR.

    m is normalised to 62 bits (its leading one at bit 61, exact); its scale S picks a row
    of `_pack_table` (saturated rows for S beyond +-maxscale): the pattern's regime (and
    the exponent bits that fit) as `prefix`, and the shift d that leaves the exponent and
    fraction bits that fit; the rest rounds to nearest even (the even pattern: the parity
    of the truncated body), all in uint64 so that adding the half never overflows."""
    _check(n, es)
    m = _arr(m)
    e = _arr(e)
    neg = np.asarray(neg, dtype=bool)
    sticky = np.asarray(sticky, dtype=bool)
    L = bit_length(m) - 1  # -1 for m = 0 (masked at the end)
    ms = maxscale(n, es)
    row = np.minimum(np.maximum(L + e + (ms + 1), 0), 2 * ms + 1)
    ex61, d, half1, prefix = np.take(_pack_table(n, es), row, axis=1)
    tail = ex61 | ((m << (61 - L)) & ((1 << 61) - 1)).astype(np.uint64)
    q = tail >> d
    up = ((prefix + q) | sticky) & np.uint64(1)  # the parity, or 1 above a tie
    body = (prefix + ((tail + half1 + up) >> d)).astype(np.int64)
    out = np.where(neg, -body, body) & ((1 << n) - 1)
    return np.where(m == 0, 0, out)


@functools.cache
def _pack_table(n: int, es: int) -> np.ndarray:
    """pack's rows (uint64, shape (4, 2 maxscale + 2)) by scale S + maxscale + 1: the
    exponent bits at bit 61 (so that they join the fraction's tail), the shift d that
    keeps the bits that fit, 2^(d-1) - 1, and the regime (and exponent bits) in place.
    Row 0 (S < -maxscale) is minpos and the last (S >= maxscale) maxpos, whatever the
    tail (d = 63 and no exponent bits: nothing is kept, nothing rounds up)."""
    ms = maxscale(n, es)
    t = np.zeros((4, 2 * ms + 2), dtype=np.uint64)
    t[1, 0] = t[1, -1] = 63
    t[3, 0], t[3, -1] = minpos(n), maxpos(n)
    for S in range(-ms, ms):
        k, ex = S >> es, S & ((1 << es) - 1)
        rlen = k + 2 if k >= 0 else 1 - k
        regime = ((1 << (k + 1)) - 1) << 1 if k >= 0 else 1
        K = (n - 1) - rlen  # bits left for the exponent and the fraction (0..n-3)
        d = es + 61 - K  # 32..63
        t[:, S + ms + 1] = (ex << 61, d, (1 << (d - 1)) - 1, regime << K)
    t.flags.writeable = False
    return t


def _finish(parts_nar, zero_result, neg, m, e, sticky, n, es) -> np.ndarray:
    out = pack(neg, np.where(zero_result, 1, m), e, sticky, n, es)
    out = np.where(zero_result, 0, out)
    return np.where(parts_nar, nar(n), out)


# --- floats and reals --------------------------------------------------------------------


def encode(x, n: int, es: int) -> np.ndarray:
    """float64 -> posit<n, es>, correctly rounded (NaN and +-inf give NaR)."""
    x = np.asarray(x, dtype=np.float64)
    bad = ~np.isfinite(x)
    f, ex = np.frexp(np.where(bad, 0.0, x))
    m = np.abs(np.ldexp(f, 53)).astype(np.int64)
    return _finish(bad, m == 0, f < 0, m, ex.astype(np.int64) - 53, False, n, es)


def decode(p, n: int, es: int) -> np.ndarray:
    """posit<n, es> -> float64 (exact; NaR gives NaN)."""
    P = unpack(p, n, es)
    v = np.ldexp(P.sig.astype(np.float64), (P.scale - HIDDEN).astype(np.int32))
    v = np.where(P.neg, -v, v)
    return np.where(P.nar, np.nan, np.where(P.zero, 0.0, v))


def to_fraction(p: int, n: int, es: int) -> Fraction | None:
    """One pattern's exact value (None for NaR)."""
    P = unpack(np.array([p]), n, es)
    if P.nar[0]:
        return None
    if P.zero[0]:
        return Fraction(0)
    v = Fraction(int(P.sig[0])) * Fraction(2) ** int(P.scale[0] - HIDDEN)
    return -v if P.neg[0] else v


def convert(p, n: int, es: int, n_to: int, es_to: int) -> np.ndarray:
    """posit<n, es> -> posit<n_to, es_to>, correctly rounded."""
    P = unpack(p, n, es)
    return _finish(P.nar, P.zero, P.neg, P.sig, P.scale - HIDDEN, False, n_to, es_to)


def from_fixed(q, scale: int, n: int, es: int) -> np.ndarray:
    """Fixed-point integers q (|q| < 2^61) standing for q / 2^scale -> posit, rounded once."""
    q = _arr(q)
    return _finish(False, q == 0, q < 0, np.abs(q), np.full(q.shape, -scale, dtype=np.int64),
                   False, n, es)


def to_fixed(p, scale: int, n: int, es: int, bits: int = 32, rounding: str = "even"
             ) -> np.ndarray:
    """posit -> the integer nearest value * 2^scale by `rounding` ("even": ties to even, as
    the posit standard's conversions; "trunc", "floor", "nearest": as docs/numerics.md),
    saturated to `bits` (<= 62) two's complement; NaR gives the most negative integer."""
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be one of {ROUNDINGS}, got {rounding}")
    P = unpack(p, n, es)
    t = P.scale - HIDDEN + scale
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    big = t >= bits - HIDDEN - 1  # |value * 2^scale| >= 2^(bits - 1)
    left = _shl(P.sig, np.clip(t, 0, 62))
    d = np.clip(-t, 0, 63)
    whole = _shr(P.sig, d)
    half = np.where(d == 0, 0, _shr(P.sig, d - 1) & 1)
    below = np.where(d <= 1, False, _low(P.sig, d - 1) != 0)
    inexact = (half == 1) | below
    if rounding == "even":
        up = (half == 1) & (below | (whole & 1 == 1))
    elif rounding == "trunc":
        up = np.zeros_like(inexact)
    elif rounding == "floor":
        up = P.neg & inexact
    else:  # half toward +inf
        up = (half == 1) & (~P.neg | below)
    mag = np.where(t >= 0, left, whole + up)
    v = np.where(P.neg, -mag, mag)
    v = np.where(big, np.where(P.neg, lo, hi), np.clip(v, lo, hi))
    return np.where(P.nar, lo, np.where(P.zero, 0, v))


# --- arithmetic ----------------------------------------------------------------------------


def neg(p, n: int) -> np.ndarray:
    return ((1 << n) - _arr(p)) & ((1 << n) - 1)


# up to this width, add, mul and div read a table of every pair of patterns (2^16
# entries, computed once by the arithmetic itself)
PAIR_TABLE_BITS = 8


def _pairwise(f):
    """f(a, b, n, es) from a table of every pair for n <= PAIR_TABLE_BITS."""
    @functools.wraps(f)
    def run(a, b, n: int, es: int) -> np.ndarray:
        if n > PAIR_TABLE_BITS:
            return f(a, b, n, es)
        mask = (1 << n) - 1
        return np.asarray(_pair_table(f, n, es)[((_arr(a) & mask) << n) | (_arr(b) & mask)])
    return run


@functools.cache
def _pair_table(f, n: int, es: int) -> np.ndarray:
    _check(n, es)
    pairs = np.arange(1 << (2 * n), dtype=np.int64)
    t = f(pairs >> n, pairs & ((1 << n) - 1), n, es)
    t.flags.writeable = False
    return t


@_pairwise
def add(a, b, n: int, es: int) -> np.ndarray:
    A, B = unpack(a, n, es), unpack(b, n, es)
    a, b = np.broadcast_arrays(_arr(a), _arr(b))
    swap = (B.scale > A.scale) | ((B.scale == A.scale) & (B.sig > A.sig))
    sa, sb = np.where(swap, B.scale, A.scale), np.where(swap, A.scale, B.scale)
    ga, gb = np.where(swap, B.sig, A.sig), np.where(swap, A.sig, B.sig)
    na, nb = np.where(swap, B.neg, A.neg), np.where(swap, A.neg, B.neg)
    d = np.minimum(sa - sb, 62)  # gb << 30 < 2^60: shifts of 62 and more all lose it
    MA = ga << _I64(30)
    MB = (gb << _I64(30)) >> d
    lost = (gb << _I64(30)) & ((_I64(1) << d) - 1) != 0
    same = na == nb
    m = np.where(same, MA + MB, MA - MB - lost)
    res = _finish(A.nar | B.nar, m == 0, na, m, sa - HIDDEN - 30, lost, n, es)
    res = np.where(A.zero & ~B.nar, b & ((1 << n) - 1), res)
    return np.where(B.zero & ~A.nar, a & ((1 << n) - 1), res)


def sub(a, b, n: int, es: int) -> np.ndarray:
    return add(a, neg(b, n), n, es)


@_pairwise
def mul(a, b, n: int, es: int) -> np.ndarray:
    A, B = unpack(a, n, es), unpack(b, n, es)
    return _finish(A.nar | B.nar, A.zero | B.zero, A.neg ^ B.neg, A.sig * B.sig,
                   A.scale + B.scale - 2 * HIDDEN, False, n, es)


@_pairwise
def div(a, b, n: int, es: int) -> np.ndarray:
    A, B = unpack(a, n, es), unpack(b, n, es)
    num = A.sig << _I64(32)
    quo, rem = num // B.sig, num % B.sig
    return _finish(A.nar | B.nar | B.zero, A.zero, A.neg ^ B.neg, quo,
                   A.scale - B.scale - 32, rem != 0, n, es)


# --- comparisons ---------------------------------------------------------------------------


def signed(p, n: int) -> np.ndarray:
    """Patterns as n-bit two's complement integers: their order is the posit order."""
    p = _arr(p) & ((1 << n) - 1)
    return np.where(p >= (1 << (n - 1)), p - (1 << n), p)


def lt(a, b, n: int) -> np.ndarray:
    return signed(a, n) < signed(b, n)


def le(a, b, n: int) -> np.ndarray:
    return signed(a, n) <= signed(b, n)


def eq(a, b, n: int) -> np.ndarray:
    return signed(a, n) == signed(b, n)


def maximum(a, b, n: int) -> np.ndarray:
    return np.where(lt(a, b, n), _arr(b), _arr(a)) & ((1 << n) - 1)


def relu(p, n: int) -> np.ndarray:
    """max(p, 0) in the posit order (so relu(NaR) = 0, NaR being below every real)."""
    return maximum(p, 0, n)


def argmax(p, n: int, axis: int = -1) -> np.ndarray:
    """Index of the first maximum in the posit order."""
    return np.argmax(signed(p, n), axis=axis)


# --- quire ---------------------------------------------------------------------------------

_LIMB = 30
# sums of up to this many terms add each product's pieces to the limbs directly; longer
# ones sum float products in bins first (fewer operations per term, more per row)
_LIMB_TERMS = 4


class Quire:
    """Quires, one per element of `shape`: two's complement integers of `quire_bits(n, es)`
    bits counting minpos^2, which wrap around (modulo 2^bits) when a sum overflows, as
    SoftPosit's do; NaR is a separate sticky flag. Held as 30-bit limbs in int64 (the top
    limb signed) of products of internal significands, least significant bit
    2^(-2 maxscale - 58), wide enough that only the final reduction wraps."""

    def __init__(self, shape: tuple[int, ...], n: int, es: int):
        _check(n, es)
        self.n, self.es = n, es
        self.shape = tuple(int(s) for s in shape)
        self.lsb = -2 * maxscale(n, es) - 2 * HIDDEN
        self.sign_bit = 2 * HIDDEN + quire_bits(n, es) - 1  # in limb bits
        limbs = (self.sign_bit + 64) // _LIMB + 1
        self.limbs = np.zeros((*self.shape, limbs), dtype=np.int64)
        self.nar = np.zeros(self.shape, dtype=bool)

    def clear(self) -> None:
        self.limbs[...] = 0
        self.nar[...] = False

    def fma(self, a, b, axis: int | None = None) -> None:
        """quire += a * b elementwise, or += sum(a * b) over `axis` of the operands."""
        a, b = _arr(a), _arr(b)
        # unpack each operand before broadcasting it (elementwise, so the same parts):
        # a matmul's or convolution's operands are far smaller than their broadcast. A
        # zero or NaR operand contributes a product of 0 (its sig taken as 0; its scale
        # is 0, which keeps the limb index in range).
        A, B = _unpack_compact(a, self.n, self.es), _unpack_compact(b, self.n, self.es)
        full = np.broadcast_shapes(a.shape, b.shape)
        ax = None if axis is None else axis % len(full)
        shape = self.shape if ax is None else (*self.shape, full[ax])

        def spread(f: np.ndarray) -> np.ndarray:
            f = np.broadcast_to(f, full)
            if ax is None:
                return np.broadcast_to(f, shape)[..., None]
            return np.broadcast_to(np.moveaxis(f, ax, -1), shape)

        self.nar = self.nar | (spread(A.nar) | spread(B.nar)).any(axis=-1)
        ms = maxscale(self.n, self.es)
        terms = 1 if ax is None else full[ax]
        if self.n <= TABLE_BITS and terms > _LIMB_TERMS:
            # long sums: per term, a float product and a bin (cheaper than limb pieces)
            rows = int(np.prod(self.shape))
            step = _float_terms(self.n)
            for k in range(0, terms, step):  # exact sums of `step` terms at a time
                self._add_float_sums(*_float_parts(A, self.n, self.es, spread, k, step),
                                     *_float_parts(B, self.n, self.es, spread, k, step), rows)
            return
        if self.n <= TABLE_BITS:
            # a posit<n <= 16> real is m * 2^(e - maxscale - 29), m = sig >> (32 - n) below
            # 2^(n-2) (sig has at most n - 3 fraction bits), e = scale + maxscale + 32 - n
            # >= 0: the product m_a m_b < 2^28 lands at limb bit e_a + e_b, as the
            # significands' product at scale_a + scale_b + 2 maxscale; shifted within its
            # limb it stays below 2^58, two pieces
            def parts(P: Parts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
                special = P.zero | P.nar
                m = np.where(special, 0, P.sig >> (HIDDEN + 3 - self.n))
                e = np.where(special, 0, P.scale) + (ms + 32 - self.n)
                return spread(m), spread(e), spread(P.neg)

            (sa, ea, na), (sb, eb, nb) = parts(A), parts(B)
            prod = sa * sb  # < 2^28
            j, sh = np.divmod(ea + eb, _LIMB)
            v = prod << sh
            pieces = (v & ((1 << _LIMB) - 1), v >> _LIMB)
        else:
            def parts(P: Parts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
                sig = np.where(P.zero | P.nar, 0, P.sig)
                return spread(sig), spread(P.scale), spread(P.neg)

            (sa, ea, na), (sb, eb, nb) = parts(A), parts(B)
            prod = sa * sb  # < 2^60
            j, sh = np.divmod(ea + eb + 2 * ms, _LIMB)  # >= 0
            up = _LIMB - sh
            pieces = ((prod & ((_I64(1) << up) - 1)) << sh,
                      (prod >> up) & ((1 << _LIMB) - 1),
                      prod >> (up + _LIMB))
        negative = na ^ nb
        n_limbs = self.limbs.shape[-1]
        rows = np.arange(int(np.prod(self.shape)), dtype=np.int64).reshape(self.shape)
        base = (rows[..., None] * n_limbs + j).ravel()
        flat = self.limbs.reshape(-1)
        terms = prod.shape[-1]
        if 3 * terms < 1 << 22:
            # each bin sums at most 3 * terms pieces below 2^30: exact in float64
            total = np.zeros(flat.size + 2, dtype=np.float64)
            neg = negative.ravel()
            for i, piece in enumerate(pieces):
                w = piece.ravel().astype(np.float64)
                np.negative(w, out=w, where=neg)
                total += np.bincount(base + i, weights=w, minlength=total.size)
            flat += total[:flat.size].astype(np.int64)
        else:
            sign = np.where(negative, -1, 1).ravel()
            for i, piece in enumerate(pieces):
                np.add.at(flat, base + i, sign * piece.ravel())
        self.limbs = flat.reshape(self.limbs.shape)
        _carry(self.limbs)

    def _add_float_sums(self, wa, ja, wb, jb, rows: int) -> None:
        """Add the products wa * wb at bins ja + jb (see _float_parts): each bin's sum is
        an integer below 2^53 computed exactly in float64 (np.bincount), then added to
        the 30-bit limbs at bit _BIN * bin (in two pieces, so that no limb overflows
        before the carry)."""
        n_bins = _bins(self.n, self.es)
        index = np.arange(rows, dtype=np.int64).reshape(self.shape)[..., None] * n_bins
        index = index + ja + jb
        sums = np.bincount(index.ravel(), weights=(wa * wb).ravel(),
                           minlength=rows * n_bins).reshape(rows, n_bins).astype(np.int64)
        flat = self.limbs.reshape(rows, -1)
        # bin b adds its low 30 bits at limb k and the rest at limb k + 1, shifted: the
        # same int64 additions as bin by bin (modular, so in any order), summed over the
        # consecutive bins of each limb (at most 4, each piece below 2^59: no overflow)
        k, shift, starts = _bin_limbs(n_bins, flat.shape[1])
        top = int(k[-1]) + 1
        flat[:, :top] += np.add.reduceat((sums & ((1 << _LIMB) - 1)) << shift, starts, axis=1)
        flat[:, 1:top + 1] += np.add.reduceat((sums >> _LIMB) << shift, starts, axis=1)
        self.limbs = flat.reshape(self.limbs.shape)
        _carry(self.limbs)

    def to_posit(self) -> np.ndarray:
        """Round the sum (modulo 2^quire_bits) once to posit<n, es> (NaR if a NaR was
        accumulated)."""
        L = self.limbs.copy()
        # two's complement at the quire's width: drop the bits above its sign bit and give
        # the sign bit weight -2^sign_bit
        j, b = divmod(self.sign_bit, _LIMB)
        L[..., j + 1:] = 0
        sign = (L[..., j] >> b) & 1
        L[..., j] = (L[..., j] & ((1 << b) - 1)) - (sign << b)
        _carry(L)
        negative = L[..., -1] < 0
        L = np.where(negative[..., None], -L, L)
        _carry(L)
        nz = L != 0
        zero = ~nz.any(axis=-1)
        top = np.maximum(L.shape[-1] - 1 - np.argmax(nz[..., ::-1], axis=-1), 1)
        hi = np.take_along_axis(L, top[..., None], -1)[..., 0]
        lo = np.take_along_axis(L, (top - 1)[..., None], -1)[..., 0]
        # a nonzero limb below the two read: the lowest nonzero one is below them
        sticky = np.argmax(nz, axis=-1) < top - 1
        return _finish(self.nar, zero, negative, (hi << _LIMB) | lo,
                       (top - 1) * _LIMB + self.lsb, sticky, self.n, self.es)


# The quire's sums for n <= 16, in float64: a posit<n, es> real is m * 2^e with an integer
# m below 2^(n-2) (its significand without the trailing zeros of the internal one) and
# e >= 0 counting minpos * 2^(n-32). Split e = _BIN * j + r: the operand becomes the
# float m * 2^r (exact, below 2^(n-2+_BIN-1)) at bin j, and a product lands at bin
# ja + jb as a float below 2^(2(n-2) + 2(_BIN-1)) <= 2^42. Sums of up to _float_terms(n)
# such integers are exact in float64 whatever their order.
_BIN = 8


def _float_terms(n: int) -> int:
    """How many products a bin can sum exactly in float64 (2^11 for n = 16)."""
    return 1 << (53 - 2 * (n - 2) - 2 * (_BIN - 1))


def _float_parts(P: Parts, n: int, es: int, spread, start: int, count: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(float m * 2^r with its sign, bin j) of an operand's parts (0 for zero and NaR),
    spread to the quire's terms [start, start + count) along the summed axis."""
    special = P.zero | P.nar
    m = np.where(special, 0, P.sig >> (HIDDEN + 3 - n))
    e = np.where(special, 0, P.scale) + maxscale(n, es) + 32 - n
    w = np.ldexp(np.where(P.neg, -m, m).astype(np.float64), (e % _BIN).astype(np.int32))
    return spread(w)[..., start:start + count], spread(e // _BIN)[..., start:start + count]


def _bins(n: int, es: int) -> int:
    """How many bins a product's bin ja + jb can fall in."""
    return 2 * ((2 * maxscale(n, es) + 32 - n) // _BIN) + 1


@functools.cache
def _bin_limbs(n_bins: int, n_limbs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each bin's limb and bit within it (_BIN * bin = _LIMB * limb + bit), and the first
    bin of each limb (every limb up to the last bin's has one: _BIN < _LIMB)."""
    k, shift = np.divmod(_BIN * np.arange(n_bins, dtype=np.int64), _LIMB)
    if n_bins and k[-1] + 1 >= n_limbs:
        raise IndexError(f"quire bin {n_bins - 1} past limb {n_limbs - 1}")
    starts = np.searchsorted(k, np.arange(k[-1] + 1))
    for t in (k, shift, starts):
        t.flags.writeable = False
    return k, shift, starts


def _unpack_compact(a: np.ndarray, n: int, es: int) -> Parts:
    """unpack(a) for an operand that may be a broadcast view (stride-0 axes, as
    np.broadcast_arrays makes them): only its distinct elements are unpacked; the parts
    have size 1 along those axes (they broadcast to a's shape)."""
    index = tuple(slice(0, 1) if stride == 0 and size > 1 else slice(None)
                  for stride, size in zip(a.strides, a.shape))
    return unpack(a[index], n, es)


def _carry(L: np.ndarray) -> None:
    """Bring every limb but the top one into [0, 2^30), in place."""
    for i in range(L.shape[-1] - 1):
        carry = L[..., i] >> _LIMB
        L[..., i] -= carry << _LIMB
        L[..., i + 1] += carry


def dot(a, b, n: int, es: int, axis: int = -1) -> np.ndarray:
    """sum(a * b) over `axis`, accumulated exactly in a quire and rounded once."""
    a, b = _arr(a), _arr(b)
    full = np.broadcast_shapes(a.shape, b.shape)
    ax = axis % len(full)
    shape = full[:ax] + full[ax + 1:]
    q = Quire(shape, n, es)
    q.fma(a, b, axis=axis)
    return q.to_posit()


def rounded_dot(a, b, n: int, es: int, axis: int = -1) -> np.ndarray:
    """sum(a * b) over `axis` without a quire: from 0, each product rounded and added to
    the partial sum, rounded, in order (`quantize{quire=false}`)."""
    a, b = np.broadcast_arrays(_arr(a), _arr(b))
    a, b = np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)
    acc = np.zeros(a.shape[:-1], dtype=np.int64)
    for k in range(a.shape[-1]):
        acc = add(acc, mul(a[..., k], b[..., k], n, es), n, es)
    return acc


# --- exp, sigmoid, tanh --------------------------------------------------------------------

_LOG2E_Q20 = 1512775  # round(log2(e) * 2^20)
_LN2_A = 799144290325165575  # floor(ln(2) * 2^60)
_LN2_B = 4050946426  # floor the next 32 bits
_EXP_TERMS = 17
_EXPM1_TERMS = 14


def mulq(a, b) -> np.ndarray:
    """a * b / 2^60 rounded toward zero, for |a|, |b| < 2^61 (exact 30-bit limbs)."""
    a, b = _arr(a), _arr(b)
    s = (a < 0) ^ (b < 0)
    ua, ub = np.abs(a), np.abs(b)
    a1, a0 = ua >> _I64(30), ua & ((1 << 30) - 1)
    b1, b0 = ub >> _I64(30), ub & ((1 << 30) - 1)
    p = a1 * b1 + ((a1 * b0 + a0 * b1 + ((a0 * b0) >> _I64(30))) >> _I64(30))
    return np.where(s, -p, p)


def divq(a, b) -> tuple[np.ndarray, np.ndarray]:
    """(floor(a * 2^60 / b), whether inexact) for 0 <= a < 4b, 0 < b < 2^62: restoring
    division, one quotient bit per step."""
    a, b = _arr(a), _arr(b)
    q = a // b
    r = a - q * b
    for _ in range(Q):
        r = r << _I64(1)
        q = q << _I64(1)
        ge = r >= b
        r = np.where(ge, r - b, r)
        q = q | ge
    return q, r != 0


def _tdiv(a: np.ndarray, k: int) -> np.ndarray:
    """a / k rounded toward zero (C's integer division)."""
    return np.where(a < 0, -((-a) // k), a // k)


def exp_parts(negative, sig, scale) -> tuple[np.ndarray, np.ndarray]:
    """e^x for x = (-1)^negative * sig * 2^(scale - 29) as (m, i): e^x ~ m * 2^(i - 60),
    m in [0.7, 1.5) * 2^60. |x| < 2^-40 gives (2^60, 0); |x| >= 256 gives 2^-400 or
    2^400 (beyond every posit's range)."""
    negative = np.asarray(negative, dtype=bool)
    sig, scale = _arr(sig), _arr(scale)
    sc = np.clip(scale, -40, 7)
    # |x| in Q60, modulo 2^64 (the reduced argument below fits; the wrap cancels out)
    xq = np.where(sc + 31 >= 0,
                  np.left_shift(sig.astype(np.uint64), np.clip(sc + 31, 0, 63).astype(np.uint64)),
                  (sig >> np.clip(-(sc + 31), 0, 63)).astype(np.uint64))
    xa = sig >> (9 - sc)  # |x| in Q20, truncated
    ia = (xa * _LOG2E_Q20 + (1 << 39)) >> 40
    iu = ia.astype(np.uint64)
    iln2 = iu * np.uint64(_LN2_A) + ((iu * np.uint64(_LN2_B)) >> np.uint64(32))
    r = np.where(negative, iln2 - xq, xq - iln2).view(np.int64)
    i = np.where(negative, -ia, ia)
    total = ONE_Q + r
    term = r
    for k in range(2, _EXP_TERMS + 1):
        term = _tdiv(mulq(term, r), k)
        total = total + term
    tiny = scale < -40
    huge = scale >= 8
    m = np.where(tiny | huge, ONE_Q, total)
    i = np.where(tiny, 0, np.where(huge, np.where(negative, -400, 400), i))
    return m, i


def _scale_or_tiny(P: Parts) -> np.ndarray:
    return np.where(P.zero | P.nar, -1000, P.scale)


def _elementwise(f):
    """Run on at least 1-d arrays (0-d numpy arithmetic would warn where the wrapping
    uint64 steps wrap by design), give back the operand's shape."""
    @functools.wraps(f)
    def run(p, n: int, es: int) -> np.ndarray:
        p = _arr(p)
        if n <= TABLE_BITS:  # the function of every pattern, computed once
            return np.asarray(_unary_table(f, n, es)[p & ((1 << n) - 1)]).reshape(p.shape)
        return f(np.atleast_1d(p), n, es).reshape(p.shape)
    return run


@functools.cache
def _unary_table(f, n: int, es: int) -> np.ndarray:
    _check(n, es)
    t = f(np.arange(1 << n, dtype=np.int64), n, es)
    t.flags.writeable = False
    return t


@_elementwise
def exp(p, n: int, es: int) -> np.ndarray:
    """e^p, rounded once (see the module docstring for the accuracy)."""
    P = unpack(p, n, es)
    m, i = exp_parts(P.neg, P.sig, _scale_or_tiny(P))
    out = pack(False, m, i - Q, ~P.zero, n, es)
    return np.where(P.nar, nar(n), out)


@_elementwise
def sigmoid(p, n: int, es: int) -> np.ndarray:
    """1 / (1 + e^-p), rounded once."""
    P = unpack(p, n, es)
    m, i = exp_parts(True, P.sig, _scale_or_tiny(P))  # t = e^-|x| ~ m 2^(i-60), i <= 0
    den = ONE_Q + _shr(m, -i)
    # x >= 0: 1 / (1 + e^-x); x < 0: e^x / (1 + e^x)
    q, _ = divq(np.where(P.neg, m, ONE_Q), den)
    out = pack(False, q, np.where(P.neg, i, 0) - Q, True, n, es)
    return np.where(P.nar, nar(n), out)


@_elementwise
def tanh(p, n: int, es: int) -> np.ndarray:
    """tanh(p), rounded once. |x| < 1/8: w / (1 + w) with w = expm1(2|x|) / 2 formed as
    |x| * sum (2|x|)^k / (k+1)! (no cancellation); otherwise (1 - t) / (1 + t),
    t = e^(-2|x|)."""
    P = unpack(p, n, es)
    small = P.scale <= -4
    # small branch
    sc = P.scale
    z = np.where(sc + 32 >= 0, _shl(P.sig, sc + 32), _shr(P.sig, -(sc + 32)))
    z = np.where(small, z, 0)
    term = np.full(z.shape, ONE_Q)
    total = term
    for k in range(1, _EXPM1_TERMS + 1):
        term = _tdiv(mulq(term, z), k + 1)
        total = total + term
    w = mulq(P.sig << _I64(31), total)
    qs, _ = divq(w, ONE_Q + _shr(w, -sc))
    # large branch
    m, i = exp_parts(True, P.sig, P.scale + 1)
    t = _shr(m, -i)
    ql, _ = divq(ONE_Q - t, ONE_Q + t)
    q = np.where(small, qs, ql)
    out = pack(P.neg, q, np.where(small, sc, 0) - Q, True, n, es)
    return np.where(P.nar, nar(n), np.where(P.zero, 0, out))


# --- sqrt and log (normalise_l2, log_softmax) ----------------------------------------------


def _isqrt64(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(floor(sqrt(x)), x - that^2) for 0 <= x < 2^63, bit by bit (32 fixed steps)."""
    x = _arr(x).copy()
    r = np.zeros_like(x)
    bit = _I64(1) << _I64(62)
    for _ in range(32):
        t = r + bit
        ge = x >= t
        x = np.where(ge, x - t, x)
        r = np.where(ge, (r >> _I64(1)) + bit, r >> _I64(1))
        bit = bit >> _I64(2)
    return r, x


@_elementwise
def sqrt(p, n: int, es: int) -> np.ndarray:
    """sqrt(p), correctly rounded (exact integer square root of the significand, the
    remainder as sticky bit); sqrt of a negative posit or NaR is NaR, sqrt(0) = 0.
    value = sig * 2^e0 (e0 = scale - 29) = (sig << s) * 2^(e0 - s) with e0 - s even and
    sig << s in [2^61, 2^63): 31-bit roots, more than posit32's 27 fraction bits need."""
    P = unpack(p, n, es)
    e0 = P.scale - HIDDEN
    s = 32 + (e0 & 1)
    root, rem = _isqrt64(P.sig << s)
    out = pack(False, root, (e0 - s) >> 1, rem != 0, n, es)
    return np.where(P.nar | P.neg, nar(n), np.where(P.zero, 0, out))


_LN2_LOW = ((_LN2_A & 63) << 32) | _LN2_B  # ln 2's bits below Q54, in units 2^-92
_LOG_TERMS = 14  # z^2 <= 1/25: (1/25)^15 < 2^-69


@_elementwise
def log(p, n: int, es: int) -> np.ndarray:
    """ln(p) for p > 0, rounded once; ln(1) = 0; NaR for p <= 0 and NaR. x = m 2^k with
    m = sig / 2^29 in [1, 1.5) (or sig / 2^30 in [0.75, 1), k = scale + 1); ln m =
    2 atanh(z), z = (m - 1) / (m + 1), |z| <= 1/5, from the series z sum z^2j / (2j + 1)
    with z normalised (z 2^t in [1/2, 2), so small logarithms keep their relative
    precision); k ln 2 + ln m in Q54 when k != 0 (|ln m| < ln 2 / 1.7: no cancellation).
    Relative error about 2^-52 before the rounding: correctly rounded on every posit8 and
    posit16 input (test_posit.py checks them against 60-digit decimals)."""
    P = unpack(p, n, es)
    upper = P.sig >= (3 << (HIDDEN - 1))  # m >= 1.5: use m / 2 and k + 1
    base = np.where(upper, _I64(1) << _I64(HIDDEN + 1), _I64(1) << _I64(HIDDEN))
    k = P.scale + upper
    d = P.sig - base
    a, den = np.abs(d), P.sig + base
    t = bit_length(den) - bit_length(np.maximum(a, 1))
    zq, _ = divq(np.where(a == 0, den, a << t), den)  # z 2^t in Q60, in (1/2, 2)
    w = _shr(mulq(zq, zq), 2 * t)  # z^2 in Q60
    total = np.full(zq.shape, ONE_Q)
    power = total
    for j in range(1, _LOG_TERMS + 1):
        power = mulq(power, w)
        total = total + power // (2 * j + 1)
    L = mulq(zq, total)  # |ln m| = L 2^(1 - t - 60)
    ak = np.abs(k)
    kq = ak * (_LN2_A >> 6) + ((ak * _LN2_LOW) >> _I64(38))  # |k| ln 2 in Q54 (< 2^61)
    lq = _shr(L, t + 5)  # |ln m| in Q54
    same = (k < 0) == (d < 0)
    mag = np.where(same, kq + lq, kq - lq)
    small = k == 0
    out = pack(np.where(small, d < 0, k < 0), np.where(small, np.maximum(L, 1), mag),
               np.where(small, 1 - t - Q, -54), True, n, es)
    out = np.where(small & (a == 0), 0, out)
    return np.where(P.nar | P.neg | P.zero, nar(n), out)
