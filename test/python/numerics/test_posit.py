"""The posit kernels (minun_mlir/formats/posit/arith.py) against independent references: the
`softposit` package (SoftPosit, PyPI) for the formats it implements (posit<8,0>,
posit<16,1>, posit<32,2>, posit<x,2> for any x), and for every other format an exact
reference written from the definition with Python integers and Fraction
(posit_reference.py), itself checked against softposit first. exp/sigmoid/tanh against
60-digit decimal math rounded by that reference: correctly rounded."""

from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
import softposit as sp
from posit_reference import decode as ref_decode
from posit_reference import encode as ref_encode
from posit_reference import exp as ref_exp
from posit_reference import sigmoid as ref_sigmoid
from posit_reference import tanh as ref_tanh
from posit_reference import values as ref_values
from softposit_oracle import Oracle, covered

from minun_mlir.formats.posit import arith as P

OPS = ("add", "sub", "mul", "div")
EXACT = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
         "div": lambda a, b: a / b if b != 0 else None}
# every size the compiler uses, each es
FORMATS = [(n, es) for n in P.SIZES for es in P.ES_VALUES]
UNCOVERED = [f for f in FORMATS if not covered(*f)]


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return Oracle()


def ref_binary(op: str, a: np.ndarray, b: np.ndarray, n: int, es: int) -> np.ndarray:
    vals = ref_values(n, es)
    out = []
    for x, y in zip(a.tolist(), b.tolist()):
        u, v = vals[x], vals[y]
        r = None if u is None or v is None else EXACT[op](u, v)
        out.append(1 << (n - 1) if r is None else ref_encode(r, n, es))
    return np.array(out, dtype=np.int64)


def all_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.meshgrid(np.arange(1 << n), np.arange(1 << n))
    return a.ravel(), b.ravel()


def mismatches(got: np.ndarray, want: np.ndarray, *inputs: np.ndarray) -> str:
    bad = np.nonzero(got != want)[0]
    rows = [tuple(hex(int(x[i])) for x in (*inputs, got, want)) for i in bad[:5]]
    return f"{len(bad)} mismatches (inputs..., got, want): {rows}"


# --- the encoding -----------------------------------------------------------------------


def test_bit_length_is_exact_where_float64_rounds():
    """arith.bit_length reads frexp's exponent of x as a float64, which rounds every
    x above 2^53 and can round it up to the next power of two: the correction must
    give Python's int.bit_length at and around every power of two up to 2^63 - 1."""
    xs = {0, 1, 2**63 - 1}
    for k in range(64):
        xs |= {2**k + d for d in range(-3, 4) if 0 <= 2**k + d < 2**63}
        xs |= {2**k - 2**j for j in range(max(k - 12, 0), k) if 2**k - 2**j < 2**63}
    rng = np.random.default_rng(8)
    xs |= {int(v) for v in rng.integers(0, 2**63 - 1, 5000) >> rng.integers(0, 63, 5000)}
    x = np.array(sorted(xs), dtype=np.int64)
    assert P.bit_length(x).tolist() == [int(v).bit_length() for v in x.tolist()]


def test_minun_section_2_2_worked_example():
    """MinUn §2.2: with es = 2 and 8 bits, 01101101 is sign 0, regime 110 (k = 1),
    exponent 11 (2^3), fraction 01 (1.25): 16^1 * 2^3 * 1.25 = 160."""
    pattern = 0b01101101
    assert ref_decode(pattern, 8, 2) == 16**1 * 2**3 * Fraction(5, 4) == 160
    assert P.decode(pattern, 8, 2) == 160.0
    assert P.encode(160.0, 8, 2) == pattern
    parts = P.unpack(np.array([pattern]), 8, 2)
    assert parts.scale[0] == 1 * 4 + 3  # k * 2^es + E
    assert parts.sig[0] == Fraction(5, 4) * 2**P.HIDDEN


def test_minun_table_1_values():
    """MinUn Table 1 / Procedure 2 (es = 2): the printed 16- and 8-bit values of the
    working example's tensors, t1 = W1 x X1 in the quire and t2 = t1 + B1."""
    def as_posit(xs, n):
        return P.encode(np.array(xs), n, 2)

    def printed(p, n):
        return [float(f"{v:.6g}") for v in np.atleast_1d(P.decode(p, n, 2))]

    W, X, B = [-2.139562, 1.885351], [1.185109, -2.206466], [0.146048]
    assert printed(as_posit(W, 16), 16) == [-2.13965, 1.88525]
    assert printed(as_posit(X, 16), 16) == [1.18506, -2.20605]
    assert printed(as_posit(B, 16), 16) == [0.146057]
    assert printed(as_posit(W, 8), 8) == [-2.25, 1.875]
    assert printed(as_posit(X, 8), 8) == [1.125, -2.25]
    assert printed(as_posit(B, 8), 8) == [0.140625]
    for n, t1, t2 in ((16, -6.69531, -6.54883), (8, -7, -7)):
        dot = P.dot(as_posit(W, n), as_posit(X, n), n, 2)
        assert printed(dot, n) == [t1]
        assert printed(P.add(dot, as_posit(B, n), n, 2), n) == [t2]


def test_reference_agrees_with_softposit():
    """The exact reference is itself right where softposit can tell: decoding every posit8
    and posit16 pattern, rounding random reals to posit16."""
    for n, es, convert in ((8, 0, sp.convertP8ToDouble), (16, 1, sp.convertP16ToDouble)):
        cls = sp.posit8_t if n == 8 else sp.posit16_t
        for p in range(1 << n):
            x = cls()
            x.v = p
            want = convert(x)
            got = ref_decode(p, n, es)
            assert (got is None and not math.isfinite(want)) or got == Fraction(want), (n, p)
    rng = np.random.default_rng(0)
    for x in rng.standard_normal(3000) * np.exp2(rng.integers(-40, 40, 3000)):
        assert ref_encode(Fraction(float(x)), 16, 1) == sp.convertDoubleToP16(float(x)).v, x
        assert ref_encode(Fraction(float(x)), 12, 2) == \
            sp.convertDoubleToPX2(float(x), 12).v >> 20, x


@pytest.mark.parametrize("n,es", [(n, es) for n in (8, 9, 10, 11, 12, 16) for es in P.ES_VALUES])
def test_decode_every_pattern(n, es):
    got = P.decode(np.arange(1 << n), n, es)
    for p, value in enumerate(ref_values(n, es)):
        assert (value is None and math.isnan(got[p])) or Fraction(float(got[p])) == value, p


@pytest.mark.parametrize("n,es", [(13, 0), (14, 1), (15, 2), (32, 0), (32, 1), (32, 2)])
def test_decode_sampled_patterns(n, es):
    patterns = np.random.default_rng(n + es).integers(0, 1 << n, 4000)
    patterns[:4] = [0, 1, 1 << (n - 1), (1 << n) - 1]
    got = P.decode(patterns, n, es)
    for p, g in zip(patterns.tolist(), got):
        value = ref_decode(p, n, es)
        assert (value is None and math.isnan(g)) or Fraction(float(g)) == value, p


def hard_reals(n: int, es: int) -> np.ndarray:
    """Every posit value of the format (n <= 16), the midpoints of neighbours and the
    doubles just beside them (where rounding decides), values beyond maxpos and below
    minpos, specials."""
    v = np.unique(P.decode(np.arange(1 << n), n, es))
    v = v[np.isfinite(v)]
    mids = (v[1:] + v[:-1]) / 2
    geo = np.sqrt(np.abs(v[1:] * v[:-1])) * np.sign(v[1:])
    close = np.concatenate([mids, geo])
    return np.concatenate([v, close, np.nextafter(close, np.inf), np.nextafter(close, -np.inf),
                           [1e300, -1e300, 5e-324, -5e-324, 0.0, np.inf, -np.inf, np.nan]])


@pytest.mark.parametrize("n,es", [(8, 0), (16, 1), (8, 2), (12, 2), (16, 2)])
def test_encode_matches_softposit(oracle, n, es):
    rng = np.random.default_rng(n)
    x = np.concatenate([hard_reals(n, es),
                        rng.standard_normal(10**5) * np.exp(rng.uniform(-90, 90, 10**5))])
    got = P.encode(x, n, es)
    assert np.array_equal(got, oracle.from_double(x, n, es)), \
        mismatches(got, oracle.from_double(x, n, es), x.view(np.int64))


def test_encode_posit32_matches_softposit(oracle):
    rng = np.random.default_rng(32)
    v = P.decode(rng.integers(0, 1 << 32, 10**5), 32, 2)
    v = v[np.isfinite(v)]
    x = np.concatenate([v, np.nextafter(v, np.inf), np.nextafter(v, -np.inf),
                        rng.standard_normal(10**5) * np.exp(rng.uniform(-90, 90, 10**5))])
    assert np.array_equal(P.encode(x, 32, 2), oracle.from_double(x, 32, 2))


@pytest.mark.parametrize("n,es", [(8, 1), (10, 0), (12, 1), (16, 0), (32, 1)])
def test_encode_matches_reference(n, es):
    x = hard_reals(min(n, 12), es)
    got = P.encode(x, n, es)
    for xi, g in zip(x.tolist(), got.tolist()):
        want = 1 << (n - 1) if not math.isfinite(xi) else ref_encode(Fraction(xi), n, es)
        assert g == want, (xi, hex(g), hex(want))


# --- arithmetic ---------------------------------------------------------------------------


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("es", [0, 2])
def test_posit8_every_pair_matches_softposit(oracle, op, es):
    a, b = all_pairs(8)
    got = getattr(P, op)(a, b, 8, es)
    want = oracle.binary(op, a, b, 8, es)
    assert np.array_equal(got, want), mismatches(got, want, a, b)


@pytest.mark.parametrize("op", OPS)
def test_posit8_es1_every_pair_matches_reference(op):
    a, b = all_pairs(8)
    got = getattr(P, op)(a, b, 8, 1)
    want = ref_binary(op, a, b, 8, 1)
    assert np.array_equal(got, want), mismatches(got, want, a, b)


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_small_formats_every_pair_and_function(n):
    """Below the sizes the compiler uses, the kernels hold too (regime-only patterns)."""
    a, b = all_pairs(n)
    for es in P.ES_VALUES:
        for op in OPS:
            got = getattr(P, op)(a, b, n, es)
            want = ref_binary(op, a, b, n, es)
            assert np.array_equal(got, want), (es, op, mismatches(got, want, a, b))
        x = np.arange(1 << n)
        for fn in FUNCTIONS:
            assert np.array_equal(getattr(P, fn)(x, n, es), correctly_rounded(fn, x, n, es))


@pytest.mark.parametrize("n,es", [(16, 1), (32, 2)])
@pytest.mark.parametrize("op", ["add", "mul"])
def test_million_random_pairs_match_softposit(oracle, n, es, op):
    rng = np.random.default_rng(n * 7 + len(op))
    a = rng.integers(0, 1 << n, 10**6)
    b = rng.integers(0, 1 << n, 10**6)
    # also pairs of nearby magnitudes (cancellation in add, carries in mul)
    b[::2] = (P.neg(a[::2], n) + rng.integers(-3, 4, a[::2].size)) & ((1 << n) - 1)
    got = getattr(P, op)(a, b, n, es)
    want = oracle.binary(op, a, b, n, es)
    assert np.array_equal(got, want), mismatches(got, want, a, b)


@pytest.mark.parametrize("n,es", [(16, 1), (32, 2), (9, 2), (10, 2), (12, 2), (14, 2),
                                  (16, 2)])
@pytest.mark.parametrize("op", ["sub", "div"])
def test_random_pairs_match_softposit(oracle, n, es, op):
    rng = np.random.default_rng(n + es)
    a, b = rng.integers(0, 1 << n, (2, 2 * 10**5))
    got = getattr(P, op)(a, b, n, es)
    want = oracle.binary(op, a, b, n, es)
    assert np.array_equal(got, want), mismatches(got, want, a, b)


@pytest.mark.parametrize("n,es", [(n, es) for n, es in UNCOVERED if n != 8])
def test_random_pairs_match_reference(n, es):
    rng = np.random.default_rng(100 * n + es)
    a, b = rng.integers(0, 1 << n, (2, 600))
    a[:4], b[:4] = [0, 1 << (n - 1), 1, (1 << (n - 1)) - 1], [5, 7, 1, (1 << (n - 1)) - 1]
    for op in OPS:
        vals = [ref_decode(x, n, es) for x in a.tolist()], [ref_decode(x, n, es)
                                                           for x in b.tolist()]
        want = []
        for u, v in zip(*vals):
            r = None if u is None or v is None else EXACT[op](u, v)
            want.append(1 << (n - 1) if r is None else ref_encode(r, n, es))
        got = getattr(P, op)(a, b, n, es)
        assert np.array_equal(got, want), (op, mismatches(got, np.array(want), a, b))


# --- conversions ----------------------------------------------------------------------------


@pytest.mark.parametrize("src,dst", [((8, 0), (16, 1)), ((8, 0), (32, 2)), ((16, 1), (8, 0)),
                                     ((16, 1), (32, 2)), ((16, 2), (8, 2)), ((12, 2), (9, 2)),
                                     ((8, 2), (16, 2))])
def test_convert_every_pattern_matches_softposit(oracle, src, dst):
    a = np.arange(1 << src[0])
    got = P.convert(a, *src, *dst)
    want = oracle.convert(a, *src, *dst)
    assert np.array_equal(got, want), mismatches(got, want, a)


def test_convert_posit32_matches_softposit(oracle):
    a = np.random.default_rng(3).integers(0, 1 << 32, 10**6)
    for dst in ((8, 0), (16, 1)):
        assert np.array_equal(P.convert(a, 32, 2, *dst), oracle.convert(a, 32, 2, *dst))


@pytest.mark.parametrize("src,dst", [((16, 0), (8, 1)), ((16, 1), (12, 0)), ((8, 1), (16, 0)),
                                     ((16, 2), (10, 1))])
def test_convert_every_pattern_matches_reference(src, dst):
    a = np.arange(1 << src[0])
    got = P.convert(a, *src, *dst)
    want = [1 << (dst[0] - 1) if v is None else ref_encode(v, *dst) for v in ref_values(*src)]
    assert np.array_equal(got, want), mismatches(got, np.array(want), a)


@pytest.mark.parametrize("n,es", [(8, 0), (16, 1), (32, 2)])
def test_to_integer_matches_softposit(oracle, n, es):
    """SoftPosit's p*_to_i64 rounds to nearest even; its NaR gives 0 / INT64_MIN, ours
    the most negative integer of the width (left out here, tested below)."""
    a = np.arange(1 << n) if n < 32 else np.random.default_rng(1).integers(0, 1 << 32, 10**6)
    keep = (a != 1 << (n - 1)) & (np.abs(P.decode(a, n, es)) < 2.0**60)
    a = a[keep]
    got = P.to_fixed(a, 0, n, es, bits=62)
    want = oracle.to_int(a, n, es)
    assert np.array_equal(got, want), mismatches(got, want, a)


def _round(v: Fraction, rounding: str) -> int:
    fl = math.floor(v)
    if rounding == "trunc":
        return math.trunc(v)
    if rounding == "floor":
        return fl
    if rounding == "nearest":
        return math.floor(v + Fraction(1, 2))
    r = v - fl
    return fl + (1 if r > Fraction(1, 2) or (r == Fraction(1, 2) and fl % 2) else 0)


@pytest.mark.parametrize("n,es,scale,bits", [(16, 1, 5, 16), (16, 0, 12, 16), (12, 2, -3, 8),
                                             (8, 1, 3, 8), (16, 2, 20, 32)])
@pytest.mark.parametrize("rounding", P.ROUNDINGS)
def test_to_fixed_every_pattern_matches_exact_rounding(n, es, scale, bits, rounding):
    got = P.to_fixed(np.arange(1 << n), scale, n, es, bits=bits, rounding=rounding)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    for p, (value, scaled) in enumerate(zip(ref_values(n, es), scaled_values(n, es, scale))):
        want = lo if value is None else min(max(_round(scaled, rounding), lo), hi)
        assert got[p] == want, (p, value, rounding)


@functools.cache
def scaled_values(n: int, es: int, scale: int) -> tuple:
    """value * 2**scale of every pattern (None for NaR), once for the four roundings."""
    return tuple(None if v is None else v * 2**scale for v in ref_values(n, es))


@pytest.mark.parametrize("n,es", [(8, 0), (16, 1), (32, 2)])
def test_from_integer_matches_softposit(oracle, n, es):
    rng = np.random.default_rng(n)
    q = np.concatenate([np.arange(-(1 << 16), 1 << 16), rng.integers(-(2**40), 2**40, 10**5)])
    got = P.from_fixed(q, 0, n, es)
    want = oracle.from_int(q, n, es)
    assert np.array_equal(got, want), mismatches(got, want, q)


@pytest.mark.parametrize("n,es,scale", [(16, 1, 12), (8, 0, 4), (16, 2, -6), (12, 1, 30),
                                        (32, 2, 15)])
def test_from_fixed_int16_range_matches_reference(n, es, scale):
    q = np.arange(-(1 << 15), 1 << 15)
    got = P.from_fixed(q, scale, n, es)
    want = [ref_encode(Fraction(int(x), 2**scale) if scale >= 0 else Fraction(int(x) << -scale),
                       n, es) for x in q.tolist()]
    assert np.array_equal(got, want), mismatches(got, np.array(want), q)


# --- comparisons ----------------------------------------------------------------------------


@pytest.mark.parametrize("es", P.ES_VALUES)
def test_order_every_pair_matches_the_values(es):
    """lt/le/eq/max/relu on patterns agree with the exact values, NaR below every real;
    argmax is the first maximum."""
    a, b = all_pairs(8)
    key = [-math.inf if v is None else v for v in ref_values(8, es)]
    ka, kb = np.array([key[x] for x in a.tolist()], dtype=object), \
        np.array([key[x] for x in b.tolist()], dtype=object)
    assert np.array_equal(P.lt(a, b, 8), ka < kb)
    assert np.array_equal(P.le(a, b, 8), ka <= kb)
    assert np.array_equal(P.eq(a, b, 8), ka == kb)
    assert np.array_equal(P.maximum(a, b, 8), np.where(ka < kb, b, a))
    relu = P.relu(np.arange(256), 8, )
    assert all(key[r] == max(key[p], 0) for p, r in enumerate(relu.tolist()))
    rows = np.random.default_rng(es).integers(0, 256, (200, 9))
    for row, i in zip(rows, P.argmax(rows, 8)):
        keys = [key[x] for x in row.tolist()]
        assert i == keys.index(max(keys))


# --- the quire ------------------------------------------------------------------------------


@pytest.mark.parametrize("n,es,k", [(8, 0, 16), (16, 1, 64), (32, 2, 64), (12, 2, 32),
                                    (8, 2, 32), (16, 2, 64)])
def test_dot_matches_softposit_quire(oracle, n, es, k):
    rng = np.random.default_rng(n * k)
    shape = (3000, k)
    a = rng.integers(0, 1 << n, shape)
    b = rng.integers(0, 1 << n, shape)
    # realistic rows, and rows whose big terms cancel exactly (the result is what is left)
    x = P.encode(rng.standard_normal(shape) * 2.0 ** rng.integers(-6, 6, shape), n, es)
    y = P.encode(rng.standard_normal(shape), n, es)
    x[:, 1::2] = x[:, ::2][:, : x[:, 1::2].shape[1]]
    y[:, 1::2] = P.neg(y[:, ::2][:, : y[:, 1::2].shape[1]], n)
    y[:500, 0] = P.encode(rng.standard_normal(500) * 1e-3, n, es)
    for u, v in ((a, b), (x, y)):
        got = P.dot(u, v, n, es)
        want = oracle.dot(u, v, n, es)
        assert np.array_equal(got, want), mismatches(got, want, np.arange(len(u)))


@pytest.mark.parametrize("n,es,k", [(8, 0, 16), (16, 1, 24), (8, 2, 24), (16, 2, 24)])
def test_rounded_dot_is_softposits_mul_and_add_term_by_term(oracle, n, es, k):
    """quire=false: from 0, each product rounded and added to the partial sum, rounded,
    in order: SoftPosit's mul and add one term at a time (NaR terms included)."""
    rng = np.random.default_rng(n * k + es)
    shape = (2000, k)
    a = P.encode(rng.standard_normal(shape) * 2.0 ** rng.integers(-6, 6, shape), n, es)
    b = P.encode(rng.standard_normal(shape), n, es)
    a[::97, 3] = 1 << (n - 1)  # NaR
    want = np.zeros(shape[0], dtype=np.int64)
    for j in range(k):
        want = oracle.binary("add", want, oracle.binary("mul", a[:, j], b[:, j], n, es), n, es)
    got = P.rounded_dot(a, b, n, es)
    assert np.array_equal(got, want), mismatches(got, want, np.arange(shape[0]))
    assert np.array_equal(P.rounded_dot(a.T, b.T, n, es, axis=0), got)


@pytest.mark.parametrize("n,es", [(16, 0), (12, 1), (8, 1), (32, 0)])
def test_dot_matches_exact_sum(n, es):
    rng = np.random.default_rng(n + es)
    a = P.encode(rng.standard_normal((300, 20)) * 2.0 ** rng.integers(-8, 8, (300, 20)), n, es)
    b = P.encode(rng.standard_normal((300, 20)), n, es)
    a[::3, 5] = 1 << (n - 1)  # NaR
    got = P.dot(a, b, n, es)
    for row, g in zip(range(len(a)), got.tolist()):
        us = [ref_decode(x, n, es) for x in a[row].tolist()]
        vs = [ref_decode(x, n, es) for x in b[row].tolist()]
        if any(u is None or v is None for u, v in zip(us, vs)):
            assert g == 1 << (n - 1)
        else:
            assert g == ref_encode(sum(u * v for u, v in zip(us, vs)), n, es), row


def maxpos_rows(n: int, rows: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of k products +-maxpos^2, a tenth of them negative: with k between 1.25 and
    2.5 times 2^(n-1), the sum passes the n - 1 carry bits of the quire once, so wrapped
    around it is negative. The first product is maxpos^2 / useed instead, so that no
    running sum is a multiple of maxpos^2 (SoftPosit's quire8 turns a sum landing exactly
    on its NaR pattern, 2^31, into 0)."""
    rng = np.random.default_rng(seed)
    a = np.full((rows, k), (1 << (n - 1)) - 1)
    b = a.copy()
    b[:, 0] -= 1
    return np.where(rng.random((rows, k)) < 0.1, P.neg(a, n), a), b


@pytest.mark.parametrize("n,es,k", [(8, 0, 200), (16, 1, 50000)])
def test_quire_wraps_like_softposit(oracle, n, es, k):
    """Past its carry bits the quire wraps around (two's complement), as SoftPosit's."""
    a, b = maxpos_rows(n, 6, k, seed=k)
    got = P.dot(a, b, n, es)
    want = oracle.dot(a, b, n, es)
    assert np.array_equal(got, want), mismatches(got, want, np.arange(len(a)))
    assert np.all(P.signed(got, n) < 0)


@pytest.mark.parametrize("n,es,k", [(12, 1, 3000), (8, 2, 200), (9, 0, 400)])
def test_quire_wraps_at_its_width(n, es, k):
    """The exact sum, reduced to a two's complement integer of quire_bits(n, es) bits
    counting minpos^2, then rounded."""
    a, b = maxpos_rows(n, 4, k, seed=n)
    got = P.dot(a, b, n, es)
    unit = Fraction(1, 2 ** (2 * P.maxscale(n, es)))  # minpos^2
    width = P.quire_bits(n, es)
    for row, g in enumerate(got.tolist()):
        exact = sum(ref_decode(x, n, es) * ref_decode(y, n, es)
                    for x, y in zip(a[row].tolist(), b[row].tolist()))
        z = exact / unit
        assert z.denominator == 1  # every product is a whole number of minpos^2
        z = (int(z) + 2 ** (width - 1)) % 2**width - 2 ** (width - 1)
        assert abs(exact) >= Fraction(2**(width - 1)) * unit  # it did overflow
        assert g == ref_encode(z * unit, n, es), row


def test_quire_accumulates_across_calls_like_one_dot():
    """Quire.fma called term by term (and on a batch axis) gives the dot product."""
    rng = np.random.default_rng(5)
    a = P.encode(rng.standard_normal((7, 5, 30)), 16, 1)
    b = P.encode(rng.standard_normal((7, 5, 30)), 16, 1)
    q = P.Quire((7, 5), 16, 1)
    for i in range(30):
        q.fma(a[..., i], b[..., i])
    assert np.array_equal(q.to_posit(), P.dot(a, b, 16, 1))
    assert np.array_equal(P.dot(np.moveaxis(a, -1, 0), np.moveaxis(b, -1, 0), 16, 1, axis=0),
                          P.dot(a, b, 16, 1))
    q.clear()
    assert np.all(q.to_posit() == 0)


# --- exp, sigmoid, tanh: correctly rounded ------------------------------------------------

FUNCTIONS = {"exp": ref_exp, "sigmoid": ref_sigmoid, "tanh": ref_tanh}


def correctly_rounded(fn: str, patterns, n: int, es: int, digits: int = 60) -> list[int]:
    # up to 16 bits, the exact values of every pattern are decoded once (ref_values)
    vals = ref_values(n, es) if n <= 16 else None
    mask = (1 << n) - 1
    decode = (lambda p: vals[p & mask]) if vals else (lambda p: ref_decode(p, n, es))
    out = []
    for p in patterns:
        x = decode(int(p))
        if x is None:
            out.append(1 << (n - 1))
        elif x == 0 and fn != "sigmoid":
            out.append(0 if fn == "tanh" else ref_encode(Fraction(1), n, es))
        else:
            out.append(ref_encode(FUNCTIONS[fn](x, digits), n, es))
    return out


@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("es", P.ES_VALUES)
def test_posit8_functions_correctly_rounded(fn, es):
    a = np.arange(256)
    got = getattr(P, fn)(a, 8, es)
    assert np.array_equal(got, correctly_rounded(fn, a, 8, es))


FLOAT64 = {"exp": np.exp, "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh}


def boundaries(n: int, es: int) -> np.ndarray:
    """The rounding boundaries between consecutive positive posit<n, es>: the values of the
    odd posit<n + 1, es> patterns (rounding to nearest even on the unbounded pattern)."""
    odd = range(1, 1 << n, 2)  # decoded one by one: a quarter of the n + 1 bit patterns
    return np.array([float(ref_decode(p, n + 1, es)) for p in odd])


def correctly_rounded_fast(fn: str, patterns: np.ndarray, n: int, es: int) -> np.ndarray:
    """The correctly rounded patterns, from float64 math where the float64 result is more
    than 2^-40 (relative) away from every rounding boundary (so the exact value, within
    a few float64 ulps of it, rounds the same way), from 60-digit decimals elsewhere."""
    vals = ref_values(n, es)
    x = np.array([0.0 if vals[p] is None else float(vals[p]) for p in patterns.tolist()])
    with np.errstate(over="ignore", under="ignore"):
        v = np.abs(FLOAT64[fn](x))
    bounds = boundaries(n, es)
    idx = np.searchsorted(bounds, v)
    below = bounds[np.clip(idx - 1, 0, len(bounds) - 1)]
    above = bounds[np.clip(idx, 0, len(bounds) - 1)]
    margin = np.minimum(np.abs(v - below), np.abs(above - v))
    sure = np.isfinite(v) & (v > 1e-290) & (margin > v * 2.0**-40) & (x != 0)
    out = np.clip(idx, 1, (1 << (n - 1)) - 1)
    out = np.where((fn == "tanh") & (x < 0), P.neg(out, n), out)
    unsure = np.nonzero(~sure)[0]
    out[unsure] = correctly_rounded(fn, patterns[unsure], n, es)
    return out


def test_rounding_boundaries_are_the_odd_longer_patterns():
    """What correctly_rounded_fast relies on, checked with the reference rounding."""
    for es in P.ES_VALUES:
        for p, b in enumerate(boundaries(8, es).tolist(), start=1):
            b = Fraction(b)
            assert ref_encode(b * (1 - Fraction(1, 2**30)), 8, es) == p - 1 or p == 1
            assert ref_encode(b * (1 + Fraction(1, 2**30)), 8, es) == min(p, 127)


@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("es", P.ES_VALUES)
def test_posit16_functions_correctly_rounded(fn, es):
    """Every posit16 input."""
    a = np.arange(1 << 16)
    got = getattr(P, fn)(a, 16, es)
    want = correctly_rounded_fast(fn, a, 16, es)
    assert np.array_equal(got, want), mismatches(got, want, a)


@pytest.mark.slow
@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("es", P.ES_VALUES)
def test_posit16_functions_correctly_rounded_all_decimal(fn, es):
    """The same as above with 60-digit decimals for every input (no float64 shortcut)."""
    a = np.arange(1 << 16)
    got = getattr(P, fn)(a, 16, es)
    want = correctly_rounded(fn, a, 16, es)
    assert np.array_equal(got, want), mismatches(got, np.array(want), a)


@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("es", P.ES_VALUES)
def test_posit32_functions_correctly_rounded_sampled(fn, es):
    """Random posit32 inputs, weighted to where the functions are not saturated."""
    rng = np.random.default_rng(es)
    x = rng.standard_normal(700) * 2.0 ** rng.integers(-30, 8, 700)
    a = np.concatenate([P.encode(x, 32, es), rng.integers(0, 1 << 32, 100)])
    got = getattr(P, fn)(a, 32, es)
    want = correctly_rounded(fn, a, 32, es, digits=80)
    assert np.array_equal(got, want), mismatches(got, np.array(want), a)


# --- sqrt and log (normalise_l2, log_softmax) -------------------------------------------


@pytest.mark.parametrize(("n", "es"), [(8, 0), (16, 1), (8, 2), (12, 2), (16, 2)])
def test_sqrt_every_pattern_matches_softposit(oracle, n, es):
    a = np.arange(1 << n)
    got = P.sqrt(a, n, es)
    want = oracle.sqrt(a, n, es)
    assert np.array_equal(got, want), mismatches(got, want, a)


def test_sqrt_posit32_matches_softposit(oracle):
    rng = np.random.default_rng(32)
    a = np.concatenate([rng.integers(0, 1 << 31, 10**5),
                        P.encode(rng.random(10**4) * 2.0 ** rng.integers(-100, 100, 10**4),
                                 32, 2)])
    got = P.sqrt(a, 32, 2)
    want = oracle.sqrt(a, 32, 2)
    assert np.array_equal(got, want), mismatches(got, want, a)


def exact_sqrt(x: Fraction, n: int, es: int) -> int:
    """The correctly rounded sqrt from integers alone: floor(sqrt(x 4^k)) / 2^k with a
    remainder flag is enough for the reference rounding (it needs n + 2 bits and a
    sticky bit): the root with 2n + 8 bits, nudged up by 2^-(2n+12) when inexact."""
    k = 2 * n + 8 - (x.numerator.bit_length() - x.denominator.bit_length()) // 2
    num = x.numerator << (2 * k) if k >= 0 else x.numerator
    den = x.denominator if k >= 0 else x.denominator << (-2 * k)
    q = num // den
    r = math.isqrt(q)
    exact = r * r == q and q * den == num
    root = Fraction(r, 1 << k) if k >= 0 else Fraction(r << -k)
    if not exact:
        root += Fraction(1, 1 << (k + 4)) if k + 4 >= 0 else Fraction(1 << -(k + 4))
    return ref_encode(root, n, es)


@pytest.mark.parametrize("n", [8, 9, 10, 12, 16])
@pytest.mark.parametrize("es", P.ES_VALUES)
def test_sqrt_every_pattern_matches_exact_rounding(n, es):
    a = np.arange(1 << n)
    got = P.sqrt(a, n, es)
    want = []
    for x in ref_values(n, es):
        want.append(1 << (n - 1) if x is None or x < 0 else 0 if x == 0
                    else exact_sqrt(x, n, es))
    assert np.array_equal(got, want), mismatches(got, np.array(want), a)


@functools.lru_cache(maxsize=1 << 17)
def ref_log(x: Fraction, digits: int) -> Fraction:
    """ln x to `digits` digits; kept, as posit8 values are posit16 values and the es
    variants share half of theirs."""
    with localcontext() as ctx:
        ctx.prec = digits
        return Fraction((Decimal(x.numerator) / Decimal(x.denominator)).ln())


@pytest.mark.parametrize("n", [8, 16])
@pytest.mark.parametrize("es", P.ES_VALUES)
def test_log_every_posit8_and_posit16_correctly_rounded(n, es):
    """Against 60-digit decimal logarithms rounded by the exact reference; 0 and
    negatives give NaR, log(1) = 0."""
    a = np.arange(1 << n)
    got = P.log(a, n, es)
    want = []
    for x in ref_values(n, es):
        want.append(1 << (n - 1) if x is None or x <= 0 else 0 if x == 1
                    else ref_encode(ref_log(x, 60), n, es))
    assert np.array_equal(got, want), mismatches(got, np.array(want), a)


@pytest.mark.parametrize("es", P.ES_VALUES)
def test_log_posit32_sampled_correctly_rounded(es):
    """Random posit32 inputs, near 1 (where ln is small) and across the range."""
    rng = np.random.default_rng(40 + es)
    x = np.concatenate([1 + rng.standard_normal(300) * 2.0 ** rng.integers(-27, -1, 300),
                        2.0 ** rng.uniform(-100, 100, 300)])
    a = P.encode(np.abs(x), 32, es)
    got = P.log(a, 32, es)
    want = [0 if ref_decode(int(p), 32, es) == 1
            else ref_encode(ref_log(ref_decode(int(p), 32, es), 80), 32, es) for p in a]
    assert np.array_equal(got, want), mismatches(got, np.array(want), a)


# --- the evaluator's fast paths equal the arithmetic they stand for -----------------------


@pytest.mark.parametrize(("n", "es"), [(16, 2), (16, 0), (12, 1), (8, 0), (8, 2), (5, 1)])
def test_fast_paths_equal_the_computed_arithmetic(monkeypatch, n, es):
    """For n <= 16 the quire adds short sums' products of the short significands to its
    limbs and sums long ones in float64 bins (in chunks of 2^11 terms), and the
    functions read tables; with TABLE_BITS = PAIR_TABLE_BITS = 0 every value is
    computed by the limb quire and the integer code instead. Both give the same patterns:
    long dot products with NaR, zeros and maxpos, a scalar quire, every function."""
    rng = np.random.default_rng(n * 3 + es)
    a = rng.integers(0, 1 << n, (3, 5000))
    b = rng.integers(0, 1 << n, (3, 5000))
    a[0, :50], b[1, :50], a[2, 7] = P.maxpos(n), 0, P.nar(n)

    def run():
        q = P.Quire((), n, es)
        q.fma(a[0, :3], b[0, :3], axis=-1)
        q.fma(a[1, 0], b[1, 0])
        x = a[0] - (1 << (n - 1))  # signed patterns too
        return ([P.dot(a, b, n, es), P.dot(a[:, None, :40], b[None, :, :40], n, es),
                 q.to_posit()]
                + [getattr(P, f)(x, n, es) for f in ("exp", "sigmoid", "tanh", "sqrt", "log")]
                + [getattr(P, f)(a[0], b[0], n, es) for f in ("add", "mul", "div")])

    fast = run()
    monkeypatch.setattr(P, "TABLE_BITS", 0)
    monkeypatch.setattr(P, "PAIR_TABLE_BITS", 0)
    for got, want in zip(fast, run(), strict=True):
        assert np.array_equal(got, want)
