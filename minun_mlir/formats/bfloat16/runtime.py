"""The bfloat16 helpers of minun_runtime.h: conversions and the integer-only exp,
sigmoid, tanh, log and sqrt every target computes to the same bits. lowering/c_runtime.py
adds HELPERS to its table (name -> (dependencies, C text for a profile))."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, localcontext
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minun_mlir.lowering.c_runtime import Profile



# bfloat16 (minun_mlir/formats/bfloat16/: representation.py, loops.py): values stored as
# 16-bit keys (the pattern with a negative's magnitude bits flipped: integer order = value
# order); arithmetic in float32, rounded to nearest even once per operation.
_BF16_BASE = """
/* bfloat16 stored as an order-preserving key: the pattern p for p >= 0, p ^ 0x7fff for
 * a negative p (as int16_t); its own inverse. */
static inline float minun_bf16_f32(int16_t k)
{
    uint32_t u = (uint32_t)(uint16_t)(k < 0 ? k ^ 0x7fff : k) << 16;
    float f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
}

/* float32 -> bfloat16 key, to nearest, ties to even (a NaN stays a quiet NaN); -0 is
 * stored as +0 (one zero, so that key comparisons follow -0 == +0). */
static inline int16_t minun_f32_bf16(float f)
{
    uint32_t u, p;
    int16_t s;
    __builtin_memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffUL) > 0x7f800000UL)
        p = (u >> 16) | 0x40;
    else
        p = (u + 0x7fffUL + ((u >> 16) & 1)) >> 16;
    if (p == 0x8000UL)
        p = 0;
    s = (int16_t)(uint16_t)p;
    return (int16_t)(s < 0 ? s ^ 0x7fff : s);
}
"""
HELPERS: dict[str, tuple[tuple[str, ...], Callable[[Profile], str]]] = {
    "minun_bf16": ((), lambda p: _BF16_BASE)}
HELPERS["minun_bf16_f32"] = (("minun_bf16",), lambda p: "")
HELPERS["minun_f32_bf16"] = (("minun_bf16",), lambda p: "")
for _op, _sym in (("add", "+"), ("sub", "-"), ("mul", "*"), ("div", "/")):
    HELPERS[f"minun_bf16_{_op}"] = (("minun_bf16",), (lambda op, sym: lambda p: (
        f"static inline int16_t minun_bf16_{op}(int16_t a, int16_t b)\n{{\n"
        f"    return minun_f32_bf16(minun_bf16_f32(a) {sym} minun_bf16_f32(b));\n}}\n"))(
            _op, _sym))
# bfloat16 exp, sigmoid, tanh, log and sqrt: integer-only, so every target computes the
# same bits (the boards' expf/tanhf/logf differ from each other and from numpy's): each
# returns the real function's value correctly rounded to bfloat16 (checked on all 65,536
# inputs against formats/bfloat16/representation.py's tables, on the host and the simulated Uno
# and M4).
# exp: |x| log2(e) in Q32 (from the 8-bit significand times log2(e) in Q40), 2^frac by an
# order-11 polynomial in Q1.31; sigmoid and tanh: quotients of e = exp(-|x|) or
# exp(-2|x|) in Q32; log: e ln 2 + 2 atanh((m - 1) / (m + 1)) in Q40; sqrt: the integer
# square root of the significand with a sticky bit. Rounding from a 64-bit significand in
# minun_bf16_pack.
def _ln2() -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 60
        return Decimal(2).ln()


def _q(v: Decimal, bits: int) -> int:
    return int((v * (1 << bits)).to_integral_value())


def _exp2_horner() -> str:
    """2^f (f in Q0.32) in Q1.31: sum of (f ln 2)^i / i!, i <= 11, by Horner."""
    coeffs, term = [], Decimal(1)
    with localcontext() as ctx:
        ctx.prec = 60
        for i in range(12):
            coeffs.append(_q(term, 31))
            term = term * _ln2() / (i + 1)
    lines = [f"    p = {coeffs[-1]}UL;"]
    lines += [f"    p = {c}UL + minun_bf16_mulhi(p, f);"
              for c in reversed(coeffs[1:-1])]
    lines.append(f"    t2 = {coeffs[0]}ULL + minun_bf16_mulhi(p, f);")
    lines.append("    return t2 > 0xffffffffUL ? 0xffffffffUL : (uint32_t)t2;")
    return "\n".join(lines)


def _atanh_horner() -> str:
    """sum of w^j / (2j + 1), j <= 10 (w in Q0.32), in Q1.31, by Horner."""
    coeffs = [_q(Decimal(1) / (2 * j + 1), 31) for j in range(11)]
    lines = [f"    s = {coeffs[-1]}UL;"]
    lines += [f"    s = {c}UL + minun_bf16_mulhi(s, w);"
              for c in reversed(coeffs[:-1])]
    return "\n".join(lines)


def _bf16_functions(p: Profile) -> str:
    with localcontext() as ctx:
        ctx.prec = 60
        log2e, ln2 = _q(1 / _ln2(), 40), _q(_ln2(), 40)
    exp2, atanh = _exp2_horner(), _atanh_horner()
    mulhi = ("    uint32_t lo, hi;\n    minun_umul32(a, b, &lo, &hi);\n"
             "    return hi + (lo >> 31);" if p.avr_asm else
             "    return (uint32_t)(((uint64_t)a * b + 0x80000000UL) >> 32);")
    return f"""
/* bfloat16 exp, sigmoid, tanh, log, sqrt on integers only: the real function correctly
 * rounded to bfloat16 on every target (docs/numerics.md). Patterns are uint16_t here. */
/* (a b + 2^31) >> 32: the rounded high word of the 64-bit product (AVR: 16 mul) */
static inline uint32_t minun_bf16_mulhi(uint32_t a, uint32_t b)
{{
{mulhi}
}}

static inline uint16_t minun_bf16_pattern(int16_t k)
{{
    return (uint16_t)(k < 0 ? k ^ 0x7fff : k);
}}

static inline int16_t minun_bf16_key(uint16_t p)
{{
    int16_t s = (int16_t)p;
    return (int16_t)(s < 0 ? s ^ 0x7fff : s);
}}

/* m * 2^e (m > 0) to the nearest bfloat16 pattern, ties to even (m's last bit may be a
 * sticky bit standing for a nonzero rest). */
static inline uint16_t minun_bf16_pack(uint64_t m, int16_t e)
{{
    int16_t be, s;
    uint64_t r, rest, half;
    if (!m)
        return 0;
    while (!(m >> 56)) {{
        m <<= 8;
        e -= 8;
    }}
    while (!(m >> 63)) {{
        m <<= 1;
        e -= 1;
    }}
    be = (int16_t)(e + 63 + 127);  /* biased exponent of the leading bit */
    if (be >= 255)
        return 0x7f80;
    s = (int16_t)(be >= 1 ? 56 : 57 - be);
    if (s > 64)
        return 0;
    if (s == 64) {{
        r = 0;
        rest = m;
    }} else {{
        r = m >> s;
        rest = m & ((((uint64_t)1) << s) - 1);
    }}
    half = ((uint64_t)1) << (s - 1);
    if (rest > half || (rest == half && (r & 1)))
        r++;
    if (be < 1)
        return (uint16_t)r;
    r += (uint64_t)(be - 1) << 7;
    return r >= 0x7f80 ? 0x7f80 : (uint16_t)r;
}}

/* |x| 2^d log2(e) in Q32 for the pattern p (no NaN), saturated at 2^40 (256). */
static inline uint64_t minun_bf16_log2e(uint16_t p, int16_t d)
{{
    int16_t be = (int16_t)((p >> 7) & 0xff), sh;
    uint64_t m = be ? ((p & 0x7f) | 0x80) : (p & 0x7f);
    sh = (int16_t)(8 - ((be ? be : 1) - 134) - d);  /* x 2^d = m 2^(e + d), e <= -1 */
    if (be + d >= 134)
        return ((uint64_t)1) << 40;
    if (sh >= 64)
        return 0;
    return (m * {log2e}ULL) >> sh;
}}

/* 2^(neg ? -t : t) (t in Q32, >= 0) as q 2^(k - 31), q in [2^31, 2^32): returns q,
 * sets *k. */
static inline uint32_t minun_bf16_exp2(uint64_t t, int16_t *k, int neg)
{{
    uint64_t u = neg ? (uint64_t)0 - t : t;
    uint32_t f = (uint32_t)u, p;
    uint64_t t2;
    *k = (int16_t)(int32_t)(uint32_t)(u >> 32);  /* floor: the high word, two's complement */
{exp2}
}}

/* e 2^32 for e = 2^(k - 31) q (k <= 0) */
static inline uint64_t minun_bf16_q32(uint32_t q, int16_t k)
{{
    if (k >= -1)
        return (uint64_t)q << (k + 1);
    return k + 1 > -64 ? (uint64_t)q >> -(k + 1) : 0;
}}

static inline int16_t minun_bf16_exp(int16_t key)
{{
    uint16_t p = minun_bf16_pattern(key);
    int16_t k;
    uint32_t q;
    if ((p & 0x7fff) > 0x7f80)
        return minun_bf16_key(p | 0x40);
    q = minun_bf16_exp2(minun_bf16_log2e(p, 0), &k, p >> 15);
    return minun_bf16_key(minun_bf16_pack(q, (int16_t)(k - 31)));
}}

static inline int16_t minun_bf16_sigmoid(int16_t key)
{{
    uint16_t p = minun_bf16_pattern(key);
    int16_t k;
    uint32_t q;
    uint64_t d;
    if ((p & 0x7fff) > 0x7f80)
        return minun_bf16_key(p | 0x40);
    q = minun_bf16_exp2(minun_bf16_log2e(p, 0), &k, 1);  /* e = exp(-|x|) */
    d = ((uint64_t)1 << 32) + minun_bf16_q32(q, k);
    if (p >> 15)  /* e / (1 + e) */
        return minun_bf16_key(minun_bf16_pack(((uint64_t)q << 32) / d, (int16_t)(k - 31)));
    return minun_bf16_key(minun_bf16_pack(((uint64_t)1 << 63) / d, -31));  /* 1 / (1 + e) */
}}

static inline int16_t minun_bf16_tanh(int16_t key)
{{
    uint16_t p = minun_bf16_pattern(key);
    int16_t k;
    uint32_t q;
    uint64_t e;
    if ((p & 0x7fff) > 0x7f80)
        return minun_bf16_key(p | 0x40);
    if (((p >> 7) & 0xff) < 122)  /* |x| < 2^-5: tanh x rounds to x */
        return key;
    q = minun_bf16_exp2(minun_bf16_log2e(p, 1), &k, 1);  /* e = exp(-2|x|) */
    e = minun_bf16_q32(q, k);
    return minun_bf16_key((uint16_t)((p & 0x8000) | minun_bf16_pack(
        ((((uint64_t)1 << 32) - e) << 31) / (((uint64_t)1 << 32) + e), -31)));
}}

static inline int16_t minun_bf16_log(int16_t key)
{{
    uint16_t p = minun_bf16_pattern(key);
    int16_t be = (int16_t)((p >> 7) & 0xff), e;
    uint32_t m = be ? ((p & 0x7f) | 0x80) : (p & 0x7f), z, w, s;
    int64_t y;
    if ((p & 0x7fff) > 0x7f80)
        return minun_bf16_key(p | 0x40);
    if (!(p & 0x7fff))
        return minun_bf16_key(0xff80);  /* log(+-0) = -inf */
    if (p >> 15)
        return minun_bf16_key(0x7fc0);
    if (p == 0x7f80)
        return key;
    e = (int16_t)((be ? be : 1) - 127);  /* x = (m / 128) 2^e */
    while (m < 128) {{
        m <<= 1;
        e--;
    }}
    z = (uint32_t)(((uint64_t)(m - 128) << 32) / (m + 128));  /* (m - 1) / (m + 1), Q0.32 */
    w = (uint32_t)(((uint64_t)z * z) >> 32);
{atanh}
    y = (int64_t)e * {ln2}LL + (int64_t)(((uint64_t)z * s) >> 22);  /* Q40 */
    if (y == 0)
        return 0;
    return minun_bf16_key(y < 0 ? (uint16_t)(0x8000 | minun_bf16_pack((uint64_t)-y, -40))
                                : minun_bf16_pack((uint64_t)y, -40));
}}

static inline int16_t minun_bf16_sqrt(int16_t key)
{{
    uint16_t p = minun_bf16_pattern(key);
    int16_t be = (int16_t)((p >> 7) & 0xff), e;
    uint32_t v, r = 0, one = (uint32_t)1 << 30;
    if ((p & 0x7fff) > 0x7f80)
        return minun_bf16_key(p | 0x40);
    if (!(p & 0x7fff) || p == 0x7f80)
        return key;
    if (p >> 15)
        return minun_bf16_key(0x7fc0);
    v = be ? ((p & 0x7f) | 0x80) : (p & 0x7f);
    e = (int16_t)((be ? be : 1) - 134);  /* x = v 2^e */
    if (e & 1) {{
        v <<= 1;
        e--;
    }}
    v <<= 22;
    while (one > v)
        one >>= 2;
    while (one) {{  /* r = floor(sqrt(v)), v = the rest */
        if (v >= r + one) {{
            v -= r + one;
            r = (r >> 1) + one;
        }} else
            r >>= 1;
        one >>= 2;
    }}
    return minun_bf16_key(minun_bf16_pack(((uint64_t)r << 1) | (v != 0),
                                          (int16_t)((e - 22) / 2 - 1)));
}}
"""


HELPERS["minun_bf16_functions"] = (("minun_bf16", "minun_umul32"), _bf16_functions)
for _op in ("exp", "sigmoid", "tanh", "sqrt", "log"):
    HELPERS[f"minun_bf16_{_op}"] = (("minun_bf16_functions",), lambda p: "")
