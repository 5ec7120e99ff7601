"""The zero-skew helpers of minun_runtime.h: TFLite's MultiplyByQuantizedMultiplier
(gemmlowp's rounding, one rounding of the exact product on AVR), its int8 softmax and
onnxruntime's float32 requantization. lowering/c_runtime.py adds HELPERS to its table
(name -> (dependencies, C text for a profile))."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minun_mlir.lowering.c_runtime import Profile



# zero-skew int8 (formats/zero_skew/arith.py, minun_mlir/formats/zero_skew/loops.py): TFLite's
# MultiplyByQuantizedMultiplier with gemmlowp's rounding, integer-only.
_ZS_MBQM_HEAD = """
/* TFLite's MultiplyByQuantizedMultiplier(x, m, shift): x * 2^max(shift, 0), then gemmlowp's
 * SaturatingRoundingDoublingHighMul by m (the high word of 2 x m, rounded to nearest, ties
 * toward +infinity; only m = x = INT32_MIN saturates) and RoundingDivideByPOT by
 * 2^max(-shift, 0) (to nearest, ties away from zero). */
static inline int32_t minun_zs_mbqm(int32_t x, int32_t m, int32_t shift)
{
    int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int32_t a = (int32_t)((uint32_t)x << left), high;
"""
# the 64-bit product: one instruction on Cortex-M3/M4 (SMULL) and x86
_ZS_MBQM_INLINE = _ZS_MBQM_HEAD.replace(
    "static inline int32_t", "static inline __attribute__((always_inline)) int32_t")
_ZS_MBQM_WIDE = _ZS_MBQM_INLINE + """    int32_t mask, remainder, threshold;
    int64_t ab;
    if (a == INT32_MIN && m == INT32_MIN)
        high = INT32_MAX;
    else {
        ab = (int64_t)a * (int64_t)m;
        ab += ab >= 0 ? (1LL << 30) : 1 - (1LL << 30);
        /* ab / 2^31 truncated toward zero, as a shift */
        high = (int32_t)((ab >= 0 ? ab : ab + ((1LL << 31) - 1)) >> 31);
    }
    if (right == 0)
        return high;
    mask = (int32_t)(((uint32_t)1 << right) - 1);
    remainder = high & mask;
    threshold = (mask >> 1) + (high < 0 ? 1 : 0);
    return (high >> right) + (remainder > threshold ? 1 : 0);
}
"""
# AVR: avr-gcc's 64-bit product and shifts are library calls and loops (about 700 cycles
# a call); here the same integers from one rounding of the exact 64-bit product P = a m
# (minun_umul32's 16 mul of the two words as unsigned, then a - 2^32 [a < 0] and
# m - 2^32 [m < 0] corrected in the high word). gemmlowp rounds twice, high =
# floor((P + 2^30) / 2^31) (SRDHM: its nudge and truncation are that floor), then
# floor((high + 2^(r-1) - [high < 0]) / 2^r) (RoundingDivideByPOT, r = right); a floor of
# a floor plus an integer is one floor, so the result is floor((Q + 2^(30+r)) / 2^(31+r))
# with Q = P + 2^30 - 2^31 [high < 0] ([high < 0] iff P < -2^30), which is
# (t >> 1) + (t & 1) for t = floor(Q / 2^(30+r)): the high word shifted right r - 2
# (whole bytes first: avr-gcc shifts a 32-bit value by a variable count one bit a loop
# iteration). The saturating case (a = m = INT32_MIN, high = INT32_MAX) takes the P that
# gives INT32_MAX, 2^62 - 2^31 - 2^30.
_ZS_MBQM_NARROW = _ZS_MBQM_HEAD.replace(
    "    int32_t a = (int32_t)((uint32_t)x << left), high;\n", """    uint32_t ux = (uint32_t)x;
    int32_t a, t;
    uint8_t k;
    if (left & 16)
        ux <<= 16;
    if (left & 8)
        ux <<= 8;
    for (k = (uint8_t)(left & 7); k; k--)
        ux <<= 1;
    a = (int32_t)ux;
""") + """    uint32_t lo, hi, sum;
    int neg;
    int16_t s = (int16_t)(ux >> 16);
    if (m > 0 && (!(ux & 0xffffU) || (int32_t)(int16_t)ux == a)) {
        /* a = s 2^16 or a = s for an int16 s (a requantized int8 or a 16-bit product):
         * P = s m from 8 mul, less m 2^16 when s < 0, times 2^16 in the first case */
        uint16_t h16;
        if (ux & 0xffffU)
            s = (int16_t)ux;
        minun_umul16x32((uint16_t)s, (uint32_t)m, &lo, &h16);
        hi = h16;
        if (s < 0) {
            hi -= ((uint32_t)m >> 16) + (lo < ((uint32_t)m << 16) ? 1 : 0);
            lo -= (uint32_t)m << 16;
        }
        if (!(ux & 0xffffU)) {
            hi = (hi << 16) | (lo >> 16);
            lo <<= 16;
        }
    } else {
        minun_umul32(ux, (uint32_t)m, &lo, &hi);
        if (a < 0)
            hi -= (uint32_t)m;
        if (m < 0)
            hi -= ux;
        if (a == INT32_MIN && m == INT32_MIN) {
            hi = 0x3fffffffUL;
            lo = 0x40000000UL;
        }
    }
    neg = (int32_t)hi < -1 || ((int32_t)hi == -1 && lo < 0xc0000000UL);
    sum = lo + 0x40000000UL;
    hi += sum < lo ? 1 : 0;
    if (right == 0)
        return (int32_t)((hi << 1) | (sum >> 31));
    if (neg) {
        hi -= sum < 0x80000000UL ? 1 : 0;
        sum -= 0x80000000UL;
    }
    if (right == 1)
        t = (int32_t)((hi << 1) | (sum >> 31));
    else {
        t = (int32_t)hi;
        k = (uint8_t)(right - 2);
        if (k & 16)
            t >>= 16;
        if (k & 8)
            t >>= 8;
        for (k &= 7; k; k--)
            t >>= 1;
    }
    return (t >> 1) + (t & 1);  /* (t + 1) >> 1 without overflow */
}
"""
HELPERS: dict[str, tuple[tuple[str, ...], Callable[[Profile], str]]] = {
    "minun_zs_mbqm": (("minun_umul32", "minun_umul16x32"), lambda p: (
        _ZS_MBQM_NARROW if p.avr_asm else _ZS_MBQM_WIDE))}
# a requantization run often (formats/zero_skew/loops.py: in a loop or over many elements):
# on AVR the same text inlined, its shifts then constants (about 130 cycles less a call,
# some 500 bytes of flash a call site); elsewhere minun_zs_mbqm, already inline
HELPERS["minun_zs_mbqm_hot"] = (("minun_zs_mbqm",), lambda p: _ZS_MBQM_NARROW.replace(
    "static inline int32_t minun_zs_mbqm(", "static inline __attribute__((always_inline)) "
    "int32_t minun_zs_mbqm_hot(") if p.avr_asm else """
static inline __attribute__((always_inline)) int32_t minun_zs_mbqm_hot(int32_t x, int32_t m,
                                                                       int32_t shift)
{
    return minun_zs_mbqm(x, m, shift);
}
""")

# TFLite's int8 softmax (formats/zero_skew/tflite_softmax.py): GetReciprocal of a row's sum, then
# one output before its zero point
HELPERS["minun_zs_tflsm"] = (("minun_zs_mbqm",), lambda p: """
/* gemmlowp's SaturatingRoundingMultiplyByPOT<e>, e > 0 */
static inline int32_t minun_zs_satshl(int32_t x, int32_t e)
{
    int32_t threshold = (int32_t)(((uint32_t)1 << (31 - e)) - 1);
    return x > threshold ? INT32_MAX : x < -threshold ? INT32_MIN
        : (int32_t)((uint32_t)x << e);
}

/* TFLite's int8 softmax output (before the zero point -128) of exp e (Q0.31) in a row
 * whose exps sum to `sum` (Q12.19, > 0): GetReciprocal(sum, 12) (gemmlowp's
 * one_over_one_plus_x_for_x_in_0_1), then RoundingDivideByPOT(SRDHM(e, 1/sum),
 * bits over unit + 23). */
static int32_t minun_zs_tflsm(int32_t e, int32_t sum)
{
    uint32_t u = (uint32_t)sum;
    int32_t clz = 0, half, r, i;
    int64_t s;
    while (!(u & 0x80000000u)) {
        u <<= 1;
        clz++;
    }
    s = (int64_t)(int32_t)(u - 0x80000000u) + INT32_MAX;
    half = (int32_t)((s + 1) / 2);
    r = (int32_t)(1515870810u + (uint32_t)minun_zs_mbqm(half, -1010580540, 0));
    for (i = 0; i < 3; i++) {
        int32_t t = (int32_t)(((uint32_t)1 << 29) - (uint32_t)minun_zs_mbqm(half, r, 0));
        r = (int32_t)((uint32_t)r + (uint32_t)minun_zs_satshl(minun_zs_mbqm(r, t, 0), 2));
    }
    return minun_zs_mbqm(e, minun_zs_satshl(r, 1), -(12 - clz + 23));
}
""")

HELPERS["minun_zs_f32"] = ((), lambda p: """
/* float32 arithmetic on magnitudes, integers only (formats/zero_skew/arith.py): a float32 is
 * a 2^n with a < 2^24 kept in a uint64_t. */
static inline uint64_t minun_zs_rne(uint64_t v, int32_t n)
{
    uint64_t q, rest, half;
    if (n <= 0)
        return v;
    q = v >> n;
    rest = v - (q << n);
    half = (uint64_t)1 << (n - 1);
    return q + ((rest > half || (rest == half && (q & 1))) ? 1 : 0);
}

/* v rounded to 24 significant bits, ties to even (a set sticky flag: nonzero bits below
 * v, so a tie is above one); *n += the bits dropped */
static inline uint64_t minun_zs_sig24(uint64_t v, int sticky, int32_t *n)
{
    int32_t k = v >> 24 ? 40 - __builtin_clzll(v) : 0;
    uint64_t q = v >> k, rest = v - (q << k), half = k ? (uint64_t)1 << (k - 1) : 0;
    if (k && (rest > half || (rest == half && (sticky || (q & 1)))))
        q++;
    if (q >> 24) {
        q >>= 1;
        k++;
    }
    *n += k;
    return q;
}

/* p 2^t rounded to an integer, ties to even, saturated at 2^30 (p < 2^25) */
static inline uint32_t minun_zs_toint(uint64_t p, int32_t t)
{
    if (t > 8)
        p = p ? (uint64_t)1 << 40 : 0;
    else if (t >= 0)
        p <<= t;
    else
        p = minun_zs_rne(p, t < -63 ? 63 : -t);
    return p > (uint64_t)1 << 30 ? (uint32_t)1 << 30 : (uint32_t)p;
}

/* float32(p 2^e / (my 2^ey)) rounded to an integer (p < 2^24): p shifted left 38 bits,
 * divided by my with the remainder as a sticky bit, rounded to 24 bits, then to an
 * integer, ties to even */
static inline uint32_t minun_zs_ortdiv(uint64_t p, int32_t e, int32_t my, int32_t ey)
{
    uint64_t num = p << 38;
    p = minun_zs_sig24(num / (uint32_t)my, num % (uint32_t)my != 0, &e);
    return minun_zs_toint(p, e - 38 - ey);
}
""")

HELPERS["minun_zs_ortq"] = (("minun_zs_f32",), lambda p: """
/* onnxruntime's float32 requantization with integers only (affine.ort_mul):
 * RNE(float32(float32(x) * (m 2^e))) for a 24-bit m, saturated to +-2^30. */
static inline int32_t minun_zs_ortq(int32_t x, int32_t m, int32_t e)
{
    int32_t t = e;
    uint64_t a = minun_zs_sig24(x < 0 ? (uint64_t)(-(int64_t)x) : (uint64_t)x, 0, &t);
    uint64_t p = minun_zs_sig24(a * (uint64_t)(uint32_t)m, 0, &t);
    int32_t y = (int32_t)minun_zs_toint(p, t);
    return x < 0 ? -y : y;
}
""")

HELPERS["minun_zs_ortadd"] = (("minun_zs_f32",), lambda p: """
/* onnxruntime's float32 Add of dequantized int8s with integers only (affine.ort_add):
 * RNE(float32(float32(a ma 2^ea) + float32(b mb 2^eb)) / (my 2^ey)), |a|, |b| < 2^9,
 * saturated to +-2^30. */
static inline int32_t minun_zs_ortadd(int32_t a, int32_t b, int32_t ma, int32_t ea,
                                      int32_t mb, int32_t eb, int32_t my, int32_t ey)
{
    int32_t na = ea, nb = eb, ns = 0, base, y;
    uint64_t pa = minun_zs_sig24((uint64_t)(uint32_t)(a < 0 ? -a : a) * (uint32_t)ma, 0, &na);
    uint64_t pb = minun_zs_sig24((uint64_t)(uint32_t)(b < 0 ? -b : b) * (uint32_t)mb, 0, &nb);
    int64_t sa = a < 0 ? -(int64_t)pa : (int64_t)pa, sb = b < 0 ? -(int64_t)pb : (int64_t)pb;
    int64_t total;
    uint64_t ps;
    if (pa == 0 || pb == 0 || na - nb > 38 || nb - na > 38) {
        int keep_a = pb == 0 || (pa != 0 && na > nb); /* the sum rounds to the larger */
        total = keep_a ? sa : sb;
        base = keep_a ? na : nb;
    } else {
        base = na < nb ? na : nb;
        total = sa * ((int64_t)1 << (na - base)) + sb * ((int64_t)1 << (nb - base));
    }
    ps = minun_zs_sig24(total < 0 ? (uint64_t)(-total) : (uint64_t)total, 0, &ns);
    y = (int32_t)minun_zs_ortdiv(ps, ns + base, my, ey);
    return total < 0 ? -y : y;
}
""")

HELPERS["minun_zs_ortmul"] = (("minun_zs_f32",), lambda p: """
/* onnxruntime's float32 Mul of dequantized int8s with integers only (affine.ort_product):
 * RNE(float32(float32(a ma 2^ea) * float32(b mb 2^eb)) / (my 2^ey)), |a|, |b| < 2^9,
 * saturated to +-2^30. */
static inline int32_t minun_zs_ortmul(int32_t a, int32_t b, int32_t ma, int32_t ea,
                                      int32_t mb, int32_t eb, int32_t my, int32_t ey)
{
    int32_t n = ea + eb, y;
    uint64_t pa = minun_zs_sig24((uint64_t)(uint32_t)(a < 0 ? -a : a) * (uint32_t)ma, 0, &n);
    uint64_t pb = minun_zs_sig24((uint64_t)(uint32_t)(b < 0 ? -b : b) * (uint32_t)mb, 0, &n);
    uint64_t pp = minun_zs_sig24(pa * pb, 0, &n);
    y = (int32_t)minun_zs_ortdiv(pp, n, my, ey);
    return (a < 0) != (b < 0) ? -y : y;
}
""")
