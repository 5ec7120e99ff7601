/* posit<n, es> arithmetic, integers only: see posit.h. Mirrors
 * minun_mlir/numerics/posit.py step for step (the same internal form, the same
 * fixed-point evaluation of exp, sigmoid and tanh), so the two agree bit for bit.
 * MIT licence (the repository's LICENSE). */
#include "posit.h"

#include <limits.h>


#define HIDDEN 29 /* a nonzero posit is sig * 2^(scale - 29), sig in [2^29, 2^30) */
#define Q 60      /* fraction bits of the fixed-point numbers of exp/sigmoid/tanh */
#define ONE_Q ((int64_t)1 << Q)
#define LOG2E_Q20 1512775                       /* round(log2(e) * 2^20) */
#define LN2_A ((uint64_t)799144290325165575ULL) /* floor(ln(2) * 2^60) */
#define LN2_B ((uint64_t)4050946426UL)          /* the next 32 bits */
#define EXP_TERMS 17
#define EXPM1_TERMS 14

/* the n <= 16 cores are inlined into each per-format entry point (posit_p16e2_add, ...),
   where n and es are constants: no shift loops on the AVR, no es branches */
#if defined(__GNUC__)
#define CORE static inline __attribute__((always_inline))
#else
#define CORE static inline
#endif

typedef struct {
    int zero, nar, neg;
    uint32_t sig;
    int32_t scale;
} parts_t;

CORE uint32_t mask_of(int n) { return n >= 32 ? 0xFFFFFFFFUL : ((uint32_t)1 << n) - 1; }

CORE int32_t maxscale_of(int n, int es) { return (int32_t)(n - 2) << es; }

/* Leading zeros of a nonzero x: one instruction (CLZ) on Cortex-M3/M4, libgcc's
   __clzsi2/__clzhi2 on the AVR and Cortex-M0+ (GCC's builtins take unsigned int, 16 bits
   on the AVR), a binary search elsewhere. */
static int clz32(uint32_t x)
{
#if defined(__GNUC__) && UINT_MAX == 0xFFFFFFFFUL
    return __builtin_clz(x);
#elif defined(__GNUC__) && ULONG_MAX == 0xFFFFFFFFUL
    return __builtin_clzl(x);
#else
    int z = 0;
    if (!(x >> 16)) {
        x <<= 16;
        z = 16;
    }
    if (!(x >> 24)) {
        x <<= 8;
        z += 8;
    }
    if (!(x >> 28)) {
        x <<= 4;
        z += 4;
    }
    if (!(x >> 30)) {
        x <<= 2;
        z += 2;
    }
    return z + (int)!(x >> 31);
#endif
}

static int clz16(uint16_t x)
{
#if defined(__GNUC__) && UINT_MAX == 0xFFFFU
    return __builtin_clz(x);
#else
    return clz32((uint32_t)x << 16);
#endif
}

static int bitlen32(uint32_t x) { return x ? 32 - clz32(x) : 0; }

/* x << s, x >> s for 0 <= s < 32 (16): on the AVR, whose variable shifts are loops of one
   bit per iteration, whole bytes first */
CORE uint32_t shl32(uint32_t x, int s)
{
#if defined(__AVR__)
    if (s & 16)
        x <<= 16;
    if (s & 8)
        x <<= 8;
    s &= 7;
#endif
    return x << s;
}

CORE uint32_t shr32(uint32_t x, int s)
{
#if defined(__AVR__)
    if (s & 16)
        x >>= 16;
    if (s & 8)
        x >>= 8;
    s &= 7;
#endif
    return x >> s;
}

CORE uint16_t shl16(uint16_t x, int s)
{
#if defined(__AVR__)
    if (s & 8)
        x = (uint16_t)(x << 8);
    s &= 7;
#endif
    return (uint16_t)(x << s);
}

CORE uint16_t shr16(uint16_t x, int s)
{
#if defined(__AVR__)
    if (s & 8)
        x >>= 8;
    s &= 7;
#endif
    return (uint16_t)(x >> s);
}

static int bitlen64(uint64_t x)
{
    uint32_t hi = (uint32_t)(x >> 32);
    return hi ? 32 + bitlen32(hi) : bitlen32((uint32_t)x);
}

/* x >> s, 0 for s >= 63 (as the Python kernels' _shr) */
static uint64_t shr(uint64_t x, int32_t s) { return s > 62 ? 0 : x >> s; }

static int32_t floor_shift(int32_t x, int es)
{
    return x >= 0 ? x >> es : -(int32_t)(((uint32_t)(-x) + ((1u << es) - 1)) >> es);
}

/* uint64 -> int64 two's complement without the implementation-defined conversion */
static int64_t to_signed(uint64_t u)
{
    return (u >> 63) ? -(int64_t)(~u) - 1 : (int64_t)u;
}

posit_t posit_nar(int n) { return (uint32_t)1 << (n - 1); }

posit_t posit_neg(posit_t a, int n) { return (0UL - a) & mask_of(n); }

/* --- n <= 16: 16-bit patterns, 32-bit arithmetic ----------------------------------- */
/* The formats the compiler uses most (posit8, posit16) decode in 16 bits with one
   count-leading-zeros for the regime and compute in 32 bits: no 64-bit arithmetic,
   which costs libgcc calls on the AVR and several instructions per step on Cortex-M.
   The results are those of the generic code (the same rounding of the same values). */

/* a nonzero, non-NaR posit as (-1)^neg sig 2^(scale - 15), sig in [2^15, 2^16) */
typedef struct {
    uint16_t sig;
    int16_t scale;
    uint8_t neg;
} small_t;

CORE small_t decode16(uint32_t p, int n, int es)
{
    small_t r;
    uint16_t x = (uint16_t)(p << (16 - n)), y; /* the pattern left-aligned */
    int run;
    int16_t k;
    r.neg = (uint8_t)(x >> 15);
    if (r.neg)
        x = (uint16_t)(0U - x);
    y = (uint16_t)(x << 1); /* regime first; its low bit is 0, so ~y is nonzero */
    if (y >> 15) {
        run = clz16((uint16_t)~y);
        k = (int16_t)(run - 1);
    } else {
        run = clz16(y);
        k = (int16_t)-run;
    }
    y = (uint16_t)(shl16(y, run) << 1); /* exponent, then fraction (0s past n) */
    r.scale = (int16_t)(k * (1 << es) + (es ? y >> (16 - es) : 0));
    r.sig = (uint16_t)(0x8000U | (uint16_t)(y << es) >> 1);
    return r;
}

/* pack for n <= 16: round (-1)^neg (m + sticky') 2^e, m nonzero */
CORE posit_t pack16(int neg, uint32_t m, int32_t e, int sticky, int n, int es)
{
    int lz = clz32(m);
    int32_t S = e + 31 - lz, ms = maxscale_of(n, es);
    uint16_t body;
    if (S >= ms) {
        body = (uint16_t)mask_of(n - 1);
    } else if (S < -ms) {
        body = 1;
    } else {
        /* (shifts by whole bytes where it matters: avr-gcc -Os loops bit by bit) */
        int16_t s = (int16_t)S, k, ex;
        int rlen, lost;
        uint16_t f, word, reg, bits;
        m = shl32(m, lz);                      /* the leading 1 at bit 31 */
        f = (uint16_t)((uint16_t)(m >> 16) << 1); /* 15 fraction bits, enough for n <= 16 */
        lost = sticky || (uint16_t)m != 0;
        k = s >= 0 ? (int16_t)(s >> es) : (int16_t)-(int16_t)((uint16_t)(-s + (1 << es) - 1) >> es);
        ex = (int16_t)(s - k * (1 << es));
        if (es) {
            lost |= (f & ((1U << es) - 1)) != 0;
            word = (uint16_t)((((uint32_t)(uint16_t)ex << 16) | f) >> es);
        } else {
            word = f;
        }
        if (k >= 0) { /* k + 1 ones, a zero */
            rlen = k + 2;
            reg = (uint16_t)~shr16(0x7FFFU, k);
        } else { /* -k zeros, a one */
            rlen = 1 - k;
            reg = shr16(0x8000U, -k);
        }
        lost |= shl16(word, 16 - rlen) != 0;
        bits = (uint16_t)(reg | shr16(word, rlen)); /* the body left-aligned in 16 bits */
        body = (uint16_t)(bits >> (17 - n));
        lost |= (bits & ((1U << (16 - n)) - 1)) != 0;
        if (((bits >> (16 - n)) & 1) && (lost || (body & 1)))
            body++;
    }
    return neg ? (0UL - body) & mask_of(n) : body;
}

CORE posit_t add16(posit_t a, posit_t b, int n, int es)
{
    posit_t nar = (posit_t)1 << (n - 1);
    small_t A, B, t;
    int d, lost;
    int32_t e;
    uint32_t MA, MB, Mb0, m;
    a &= mask_of(n);
    b &= mask_of(n);
    if (a == nar || b == nar)
        return nar;
    if (a == 0)
        return b;
    if (b == 0)
        return a;
    A = decode16(a, n, es);
    B = decode16(b, n, es);
    if (B.scale > A.scale || (B.scale == A.scale && B.sig > A.sig)) {
        t = A;
        A = B;
        B = t;
    }
    d = A.scale - B.scale;
    e = (int32_t)A.scale - 31;
    MA = (uint32_t)A.sig << 16; /* A = MA 2^e */
    Mb0 = (uint32_t)B.sig << 16;
    if (d > 31) {
        MB = 0;
        lost = 1;
    } else {
        MB = shr32(Mb0, d);
        lost = shl32(MB, d) != Mb0;
    }
    if (A.neg != B.neg) {
        m = MA - MB - (uint32_t)lost;
        if (m == 0)
            return 0;
    } else {
        m = MA + MB;
        if (m < MA) { /* the sum is 2^32 + m: one bit to the right */
            lost |= (int)(m & 1);
            m = (m >> 1) | 0x80000000UL;
            e++;
        }
    }
    return pack16(A.neg, m, e, lost, n, es);
}

CORE posit_t mul16(posit_t a, posit_t b, int n, int es)
{
    posit_t nar = (posit_t)1 << (n - 1);
    small_t A, B;
    a &= mask_of(n);
    b &= mask_of(n);
    if (a == nar || b == nar)
        return nar;
    if (a == 0 || b == 0)
        return 0;
    A = decode16(a, n, es);
    B = decode16(b, n, es);
    return pack16(A.neg ^ B.neg, (uint32_t)A.sig * B.sig,
                  (int32_t)A.scale + B.scale - 30, 0, n, es);
}

CORE posit_t div16(posit_t a, posit_t b, int n, int es)
{
    posit_t nar = (posit_t)1 << (n - 1);
    small_t A, B;
    uint32_t num, quo;
    a &= mask_of(n);
    b &= mask_of(n);
    if (a == nar || b == nar || b == 0)
        return nar;
    if (a == 0)
        return 0;
    A = decode16(a, n, es);
    B = decode16(b, n, es);
    num = (uint32_t)A.sig << 16;
    quo = num / B.sig;
    return pack16(A.neg ^ B.neg, quo, (int32_t)A.scale - B.scale - 16, num - quo * B.sig != 0,
                  n, es);
}

/* the cores for n and es known only at run time (one copy each) */
static small_t decode16_n(uint32_t p, int n, int es) { return decode16(p, n, es); }

static posit_t pack16_n(int neg, uint32_t m, int32_t e, int sticky, int n, int es)
{
    return pack16(neg, m, e, sticky, n, es);
}

static parts_t unpack(posit_t p, int n, int es)
{
    parts_t r;
    uint32_t mask = mask_of(n), m1 = mask >> 1, a, body, x, tail, f;
    int run, rlen, rem, fb;
    int32_t k, e;
    p &= mask;
    r.zero = p == 0;
    r.nar = p == posit_nar(n);
    r.neg = !r.nar && ((p >> (n - 1)) & 1);
    r.sig = (uint32_t)1 << HIDDEN;
    r.scale = 0;
    if (r.zero || r.nar)
        return r;
    if (n <= 16) {
        small_t s = decode16_n(p, n, es);
        r.sig = (uint32_t)s.sig << (HIDDEN - 15);
        r.scale = s.scale;
        return r;
    }
    a = r.neg ? posit_neg(p, n) : p;
    body = a & m1;
    if ((body >> (n - 2)) & 1) {
        x = ~body & m1;
        run = (n - 1) - bitlen32(x);
        k = run - 1;
    } else {
        run = (n - 1) - bitlen32(body);
        k = -run;
    }
    rlen = run + 1 < n - 1 ? run + 1 : n - 1;
    rem = (n - 1) - rlen;
    tail = body & (((uint32_t)1 << rem) - 1);
    if (rem >= es) {
        fb = rem - es;
        e = (int32_t)(tail >> fb);
        f = tail & (((uint32_t)1 << fb) - 1);
    } else {
        fb = 0;
        e = (int32_t)(tail << (es - rem));
        f = 0;
    }
    r.sig = ((uint32_t)1 << HIDDEN) | (f << (HIDDEN - fb));
    r.scale = k * ((int32_t)1 << es) + e;
    return r;
}

/* Round (-1)^neg (m + sticky') 2^e to posit<n, es>: 0 < m < 2^62, sticky says the exact
   value lies strictly between m and m + 1. Nearest, ties to the even pattern; never 0
   or NaR. */
static posit_t pack(int neg, uint64_t m, int32_t e, int sticky, int n, int es)
{
    int L;
    int32_t S, ms = maxscale_of(n, es);
    uint32_t body;
    if (n <= 16) { /* m to 32 bits and a sticky bit: enough for 16-bit posits */
        uint32_t hi = (uint32_t)(m >> 32), lo = (uint32_t)m;
        if (hi) {
            int sh = 32 - clz32(hi); /* 1..30 */
            sticky |= (lo << (32 - sh)) != 0;
            lo = (hi << (32 - sh)) | (lo >> sh);
            e += sh;
        }
        return pack16_n(neg, lo, e, sticky, n, es);
    }
    L = bitlen64(m) - 1;
    S = L + e;
    if (S >= ms) {
        body = mask_of(n - 1);
    } else if (S < -ms) {
        body = 1;
    } else {
        int32_t k = floor_shift(S, es), ex = S - k * ((int32_t)1 << es);
        int rlen = k >= 0 ? (int)k + 2 : 1 - (int)k;
        uint32_t regime = k >= 0 ? (((uint32_t)1 << (k + 1)) - 1) << 1 : 1;
        int K = (n - 1) - rlen, W = es + L, d = W - K, rb = 0, st = sticky;
        uint64_t frac = m & (((uint64_t)1 << L) - 1);
        uint64_t tail = ((uint64_t)ex << L) | frac, kept;
        if (d <= 0) {
            kept = tail << -d;
        } else {
            kept = tail >> d;
            rb = (int)((tail >> (d - 1)) & 1);
            if (d > 1 && (tail & (((uint64_t)1 << (d - 1)) - 1)))
                st = 1;
        }
        body = (regime << K) | (uint32_t)kept;
        if (rb && (st || (body & 1)))
            body++;
    }
    return neg ? posit_neg(body, n) : body;
}

static posit_t add_wide(posit_t a, posit_t b, int n, int es)
{
    parts_t A = unpack(a, n, es), B = unpack(b, n, es), t;
    int32_t d;
    uint64_t MA, MB, Mb0, m;
    int lost;
    if (A.nar || B.nar)
        return posit_nar(n);
    if (A.zero)
        return b & mask_of(n);
    if (B.zero)
        return a & mask_of(n);
    if (B.scale > A.scale || (B.scale == A.scale && B.sig > A.sig)) {
        t = A;
        A = B;
        B = t;
    }
    d = A.scale - B.scale;
    MA = (uint64_t)A.sig << 30;
    Mb0 = (uint64_t)B.sig << 30;
    if (d >= 63) {
        MB = 0;
        lost = 1;
    } else {
        MB = Mb0 >> d;
        lost = (Mb0 & (((uint64_t)1 << d) - 1)) != 0;
    }
    m = A.neg == B.neg ? MA + MB : MA - MB - (uint64_t)lost;
    if (m == 0)
        return 0;
    return pack(A.neg, m, A.scale - HIDDEN - 30, lost, n, es);
}

posit_t posit_add(posit_t a, posit_t b, int n, int es)
{
    return n <= 16 ? add16(a, b, n, es) : add_wide(a, b, n, es);
}

posit_t posit_sub(posit_t a, posit_t b, int n, int es)
{
    return posit_add(a, posit_neg(b, n), n, es);
}

static posit_t mul_wide(posit_t a, posit_t b, int n, int es)
{
    parts_t A = unpack(a, n, es), B = unpack(b, n, es);
    if (A.nar || B.nar)
        return posit_nar(n);
    if (A.zero || B.zero)
        return 0;
    return pack(A.neg ^ B.neg, (uint64_t)A.sig * B.sig, A.scale + B.scale - 2 * HIDDEN, 0,
                n, es);
}

posit_t posit_mul(posit_t a, posit_t b, int n, int es)
{
    return n <= 16 ? mul16(a, b, n, es) : mul_wide(a, b, n, es);
}

static posit_t div_wide(posit_t a, posit_t b, int n, int es)
{
    parts_t A = unpack(a, n, es), B = unpack(b, n, es);
    uint64_t num, quo;
    if (A.nar || B.nar || B.zero)
        return posit_nar(n);
    if (A.zero)
        return 0;
    num = (uint64_t)A.sig << 32;
    quo = num / B.sig;
    return pack(A.neg ^ B.neg, quo, A.scale - B.scale - 32, num - quo * B.sig != 0, n, es);
}

posit_t posit_div(posit_t a, posit_t b, int n, int es)
{
    return n <= 16 ? div16(a, b, n, es) : div_wide(a, b, n, es);
}

posit_t posit_convert(posit_t a, int n, int es, int n_to, int es_to)
{
    parts_t A;
    if (n <= 16 && n_to <= 16) {
        small_t s;
        a &= mask_of(n);
        if (a == posit_nar(n))
            return posit_nar(n_to);
        if (a == 0)
            return 0;
        s = decode16_n(a, n, es);
        return pack16_n(s.neg, s.sig, (int32_t)s.scale - 15, 0, n_to, es_to);
    }
    A = unpack(a, n, es);
    if (A.nar)
        return posit_nar(n_to);
    if (A.zero)
        return 0;
    return pack(A.neg, A.sig, A.scale - HIDDEN, 0, n_to, es_to);
}

posit_t posit_from_fixed(int32_t q, int scale, int n, int es)
{
    uint64_t m;
    if (q == 0)
        return 0;
    m = q < 0 ? (uint64_t)0 - (uint64_t)(int64_t)q : (uint64_t)q;
    return pack(q < 0, m, -(int32_t)scale, 0, n, es);
}

int32_t posit_to_fixed(posit_t a, int scale, int bits, int n, int es)
{
    parts_t A = unpack(a, n, es);
    int64_t lo = -((int64_t)1 << (bits - 1)), hi = ((int64_t)1 << (bits - 1)) - 1, v;
    int32_t t = A.scale - HIDDEN + scale;
    uint64_t mag;
    if (A.nar)
        return (int32_t)lo;
    if (A.zero)
        return 0;
    if (t >= bits - HIDDEN - 1)
        return (int32_t)(A.neg ? lo : hi);
    if (t >= 0) {
        mag = (uint64_t)A.sig << t;
    } else {
        int32_t d = -t > 63 ? 63 : -t;
        uint64_t whole = shr(A.sig, d), half = shr(A.sig, d - 1) & 1;
        int below = d > 1 && (d > 62 ? A.sig : (A.sig & (((uint64_t)1 << (d - 1)) - 1))) != 0;
        mag = whole + (half && (below || (whole & 1)));
    }
    v = A.neg ? -(int64_t)mag : (int64_t)mag;
    return (int32_t)(v < lo ? lo : v > hi ? hi : v);
}

int32_t posit_signed(posit_t a, int n)
{
    a &= mask_of(n);
    if ((a >> (n - 1)) & 1)
        return -(int32_t)((uint32_t)(((uint64_t)1 << n) - a) - 1) - 1;
    return (int32_t)a;
}

int posit_lt(posit_t a, posit_t b, int n) { return posit_signed(a, n) < posit_signed(b, n); }
int posit_le(posit_t a, posit_t b, int n) { return posit_signed(a, n) <= posit_signed(b, n); }
int posit_eq(posit_t a, posit_t b, int n) { return posit_signed(a, n) == posit_signed(b, n); }

posit_t posit_max(posit_t a, posit_t b, int n)
{
    return (posit_lt(a, b, n) ? b : a) & mask_of(n);
}

posit_t posit_relu(posit_t a, int n) { return posit_max(a, 0, n); }

/* --- exp, sigmoid, tanh: Q60 fixed point ------------------------------------------- */

/* a * b / 2^60 rounded toward zero, |a|, |b| < 2^61, exact with 30-bit halves */
static int64_t mulq(int64_t a, int64_t b)
{
    int s = (a < 0) != (b < 0);
    uint64_t ua = a < 0 ? (uint64_t)0 - (uint64_t)a : (uint64_t)a;
    uint64_t ub = b < 0 ? (uint64_t)0 - (uint64_t)b : (uint64_t)b;
    uint64_t m30 = ((uint64_t)1 << 30) - 1;
    uint64_t a1 = ua >> 30, a0 = ua & m30, b1 = ub >> 30, b0 = ub & m30;
    uint64_t p = a1 * b1 + ((a1 * b0 + a0 * b1 + ((a0 * b0) >> 30)) >> 30);
    return s ? -(int64_t)p : (int64_t)p;
}

/* floor(a * 2^60 / b) for 0 <= a < 4b, 0 < b < 2^62 (restoring division) */
static uint64_t divq(uint64_t a, uint64_t b)
{
    uint64_t q = a / b, r = a - q * b;
    int i;
    for (i = 0; i < Q; i++) {
        r <<= 1;
        q <<= 1;
        if (r >= b) {
            r -= b;
            q |= 1;
        }
    }
    return q;
}

/* e^x, x = (-1)^neg sig 2^(scale - 29), as m 2^(i - 60) */
static void exp_parts(int neg, uint32_t sig, int32_t scale, int64_t *m, int32_t *i)
{
    uint64_t xq, xa, ia, iln2;
    int64_t r, total, term;
    int k;
    if (scale < -40) {
        *m = ONE_Q;
        *i = 0;
        return;
    }
    if (scale >= 8) {
        *m = ONE_Q;
        *i = neg ? -400 : 400;
        return;
    }
    /* |x| in Q60 modulo 2^64: the reduced argument fits, the wrap cancels */
    xq = scale + 31 >= 0 ? (uint64_t)sig << (scale + 31) : (uint64_t)sig >> -(scale + 31);
    xa = (uint64_t)sig >> (9 - scale); /* |x| in Q20 */
    ia = (xa * LOG2E_Q20 + ((uint64_t)1 << 39)) >> 40;
    iln2 = ia * LN2_A + ((ia * LN2_B) >> 32);
    r = to_signed(neg ? iln2 - xq : xq - iln2);
    *i = neg ? -(int32_t)ia : (int32_t)ia;
    total = ONE_Q + r;
    term = r;
    for (k = 2; k <= EXP_TERMS; k++) {
        term = mulq(term, r) / k;
        total += term;
    }
    *m = total;
}

posit_t posit_exp(posit_t a, int n, int es)
{
    parts_t A = unpack(a, n, es);
    int64_t m;
    int32_t i;
    if (A.nar)
        return posit_nar(n);
    exp_parts(A.neg, A.sig, A.zero ? -1000 : A.scale, &m, &i);
    return pack(0, (uint64_t)m, i - Q, !A.zero, n, es);
}

posit_t posit_sigmoid(posit_t a, int n, int es)
{
    parts_t A = unpack(a, n, es);
    int64_t m;
    int32_t i;
    uint64_t den, q;
    if (A.nar)
        return posit_nar(n);
    exp_parts(1, A.sig, A.zero ? -1000 : A.scale, &m, &i); /* e^-|x|, i <= 0 */
    den = (uint64_t)ONE_Q + shr((uint64_t)m, -i);
    q = divq(A.neg ? (uint64_t)m : (uint64_t)ONE_Q, den);
    return pack(0, q, (A.neg ? i : 0) - Q, 1, n, es);
}

posit_t posit_tanh(posit_t a, int n, int es)
{
    parts_t A = unpack(a, n, es);
    uint64_t q;
    int32_t e, sc = A.scale;
    if (A.nar)
        return posit_nar(n);
    if (A.zero)
        return 0;
    if (sc <= -4) {
        /* w / (1 + w), w = |x| sum_k (2|x|)^k / (k+1)! = expm1(2|x|) / 2 */
        int64_t z = sc + 32 >= 0 ? (int64_t)((uint64_t)A.sig << (sc + 32))
                                 : (int64_t)shr(A.sig, -(sc + 32));
        int64_t term = ONE_Q, total = ONE_Q, w;
        int k;
        for (k = 1; k <= EXPM1_TERMS; k++) {
            term = mulq(term, z) / (k + 1);
            total += term;
        }
        w = mulq((int64_t)A.sig << 31, total);
        q = divq((uint64_t)w, (uint64_t)ONE_Q + shr((uint64_t)w, -sc));
        e = sc - Q;
    } else {
        /* (1 - t) / (1 + t), t = e^(-2|x|) */
        int64_t m;
        int32_t i;
        uint64_t t;
        exp_parts(1, A.sig, sc + 1, &m, &i);
        t = shr((uint64_t)m, -i);
        q = divq((uint64_t)ONE_Q - t, (uint64_t)ONE_Q + t);
        e = -Q;
    }
    return pack(A.neg, q, e, 1, n, es);
}

/* --- sqrt and log ------------------------------------------------------------------ */

/* floor(sqrt(x)) and the remainder, bit by bit (32 fixed steps), x < 2^63 */
static uint64_t isqrt64(uint64_t x, uint64_t *rem)
{
    uint64_t r = 0, bit = (uint64_t)1 << 62;
    int i;
    for (i = 0; i < 32; i++) {
        uint64_t t = r + bit;
        if (x >= t) {
            x -= t;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    *rem = x;
    return r;
}

posit_t posit_sqrt(posit_t a, int n, int es)
{
    parts_t A = unpack(a, n, es);
    int32_t e0, s;
    uint64_t root, rem;
    if (A.nar || A.neg)
        return posit_nar(n);
    if (A.zero)
        return 0;
    /* value = (sig << s) 2^(e0 - s), e0 - s even, sig << s in [2^61, 2^63) */
    e0 = A.scale - HIDDEN;
    s = 32 + (int32_t)((uint32_t)e0 & 1);
    root = isqrt64((uint64_t)A.sig << s, &rem);
    return pack(0, root, (e0 - s) / 2, rem != 0, n, es);
}

#define LN2_LOW ((((uint64_t)LN2_A & 63) << 32) | LN2_B) /* ln 2 below Q54, units 2^-92 */
#define LOG_TERMS 14

/* ln x = k ln 2 + 2 atanh(z), z = (m - 1) / (m + 1), m in [0.75, 1.5) (posit.py's log) */
posit_t posit_log(posit_t a, int n, int es)
{
    parts_t A = unpack(a, n, es);
    int upper, dneg, t, j;
    int32_t k;
    uint64_t base, ad, den, zq, w, total, power, L, ak, kq, lq;
    if (A.nar || A.neg || A.zero)
        return posit_nar(n);
    upper = A.sig >= ((uint32_t)3 << (HIDDEN - 1)); /* m >= 1.5: m / 2, k + 1 */
    base = (uint64_t)1 << (upper ? HIDDEN + 1 : HIDDEN);
    k = A.scale + upper;
    dneg = A.sig < base;
    ad = dneg ? base - A.sig : A.sig - base;
    den = A.sig + base;
    if (ad == 0 && k == 0)
        return 0;
    t = bitlen64(den) - bitlen64(ad ? ad : 1);
    zq = divq(ad ? ad << t : den, den); /* z 2^t in Q60 */
    w = shr((uint64_t)mulq((int64_t)zq, (int64_t)zq), 2 * t);
    total = power = (uint64_t)ONE_Q;
    for (j = 1; j <= LOG_TERMS; j++) {
        power = (uint64_t)mulq((int64_t)power, (int64_t)w);
        total += power / (uint64_t)(2 * j + 1);
    }
    L = (uint64_t)mulq((int64_t)zq, (int64_t)total); /* |ln m| = L 2^(1 - t - 60) */
    if (k == 0)
        return pack(dneg, L ? L : 1, 1 - t - Q, 1, n, es);
    ak = (uint64_t)(k < 0 ? -k : k);
    kq = ak * (LN2_A >> 6) + ((ak * LN2_LOW) >> 38); /* |k| ln 2 in Q54, < 2^61 */
    lq = shr(L, t + 5);
    return pack(k < 0, ((k < 0) == dneg) ? kq + lq : kq - lq, -54, 1, n, es);
}

/* --- quire ------------------------------------------------------------------------- */

/* the quire's width: 4 maxscale + n bits (SoftPosit's quire8/16/32 for posit<8,0>,
   posit<16,1>, posit<32,2>); words hold it modulo 2^(32 words), read modulo 2^width */
CORE int32_t quire_bits(int n, int es) { return 4 * maxscale_of(n, es) + n; }

CORE int quire_words(int n, int es) { return (int)((quire_bits(n, es) + 31) / 32); }

/* the storage (posit.h): nw words, then the NaR flag byte */
#define QUIRE_NAR(q, nw) (((uint8_t *)(q))[4 * (nw)])

void posit_quire_clear(void *q, int n, int es)
{
    uint32_t *w = (uint32_t *)q;
    int nw = quire_words(n, es), i;
    for (i = 0; i < nw; i++)
        w[i] = 0;
    QUIRE_NAR(q, nw) = 0;
}

/* q += a b for n <= 16: the product is 32 bits, added at its offset in two words, the
   carry (or borrow) carried up while there is one */
CORE void quire_fma16(void *q, posit_t a, posit_t b, int n, int es)
{
    uint32_t *qw = (uint32_t *)q, P, lo, hi, s, t, c;
    int nw = quire_words(n, es);
    posit_t nar = (posit_t)1 << (n - 1);
    small_t A, B;
    int o, i, sh;
    a &= mask_of(n);
    b &= mask_of(n);
    if (a == nar || b == nar) {
        QUIRE_NAR(q, nw) = 1;
        return;
    }
    if (a == 0 || b == 0)
        return;
    A = decode16(a, n, es);
    B = decode16(b, n, es);
    P = (uint32_t)A.sig * B.sig;
    o = A.scale + B.scale - 30 + 2 * (int)maxscale_of(n, es);
    if (o < 0) { /* exact: a product of posits is a multiple of minpos^2 */
        P = shr32(P, -o);
        o = 0;
    }
    sh = o & 31;
    lo = shl32(P, sh);
    hi = sh ? shr32(P, 32 - sh) : 0; /* < 2^31: hi + carry does not overflow */
    qw += o >> 5;
    nw -= (int)(o >> 5);
    if (A.neg == B.neg) {
        s = qw[0] + lo;
        c = s < lo;
        qw[0] = s;
        for (i = 1; i < nw; i++) {
            t = (i == 1 ? hi : 0) + c;
            if (t == 0)
                break;
            s = qw[i] + t;
            c = s < t;
            qw[i] = s;
        }
    } else {
        s = qw[0];
        c = s < lo;
        qw[0] = s - lo;
        for (i = 1; i < nw; i++) {
            t = (i == 1 ? hi : 0) + c;
            if (t == 0)
                break;
            s = qw[i];
            c = s < t;
            qw[i] = s - t;
        }
    }
}

void posit_quire_fma(void *q, posit_t a, posit_t b, int n, int es)
{
    parts_t A, B;
    uint32_t *qw = (uint32_t *)q;
    int nw = quire_words(n, es), j, sh, i, neg;
    uint64_t P, c[3], carry = 0;
    int32_t o;
    if (n <= 16) {
        quire_fma16(q, a, b, n, es);
        return;
    }
    A = unpack(a, n, es);
    B = unpack(b, n, es);
    if (A.nar || B.nar) {
        QUIRE_NAR(q, nw) = 1;
        return;
    }
    if (A.zero || B.zero)
        return;
    P = (uint64_t)A.sig * B.sig;
    o = A.scale + B.scale - 2 * HIDDEN + 2 * maxscale_of(n, es);
    if (o < 0) { /* exact: a product of posits is a multiple of minpos^2 */
        P >>= -o;
        o = 0;
    }
    j = (int)(o / 32);
    sh = (int)(o % 32);
    c[0] = (uint32_t)(P << sh);
    c[1] = (uint32_t)(sh ? P >> (32 - sh) : P >> 32);
    c[2] = (uint32_t)(sh ? P >> (64 - sh) : 0);
    neg = A.neg ^ B.neg;
    for (i = j; i < nw; i++) {
        uint64_t chunk = i - j < 3 ? c[i - j] : 0, s;
        if (i - j >= 3 && carry == 0)
            break;
        if (!neg) {
            s = (uint64_t)qw[i] + chunk + carry;
            carry = s >> 32;
        } else {
            s = (uint64_t)qw[i] - chunk - carry;
            carry = (s >> 63) & 1;
        }
        qw[i] = (uint32_t)s;
    }
}

/* the quire's value rounded, n <= 16: its words negated if negative, the 32 bits from
   the leading 1 and a sticky bit for the rest */
CORE posit_t quire_to_posit16(const void *q, int n, int es)
{
    const uint32_t *qw = (const uint32_t *)q;
    uint32_t w[8], hi, lo, carry = 1;
    int nw = quire_words(n, es), i, neg, top = nw - 1, lz, sticky = 0;
    int top_bits = (int)(quire_bits(n, es) - 32 * (nw - 1)); /* 1..32 */
    uint32_t keep = top_bits == 32 ? 0xFFFFFFFFUL : (((uint32_t)1 << top_bits) - 1);
    if (((const uint8_t *)q)[4 * nw])
        return (posit_t)1 << (n - 1);
    for (i = 0; i < nw - 1; i++)
        w[i] = qw[i];
    neg = (int)((qw[nw - 1] >> (top_bits - 1)) & 1); /* the sign at the quire's width */
    w[nw - 1] = neg ? (qw[nw - 1] | ~keep) : (qw[nw - 1] & keep);
    if (neg) {
        for (i = 0; i < nw; i++) {
            w[i] = ~w[i] + carry;
            carry = carry && w[i] == 0;
        }
    }
    while (top >= 0 && !w[top])
        top--;
    if (top < 0)
        return 0;
    lz = clz32(w[top]);
    hi = shl32(w[top], lz);
    lo = top >= 1 ? w[top - 1] : 0;
    if (lz)
        hi |= shr32(lo, 32 - lz);
    sticky = shl32(lo, lz) != 0; /* lo << 0 is all of lo */
    for (i = 0; i < top - 1; i++)
        sticky |= w[i] != 0;
    return pack16(neg, hi, 32 * top - lz - 2 * maxscale_of(n, es), sticky, n, es);
}

posit_t posit_quire_to_posit(const void *q, int n, int es)
{
    const uint32_t *qw = (const uint32_t *)q;
    uint32_t w[16];
    int nw = quire_words(n, es), i, neg, top = nw - 1, lz, sticky;
    uint64_t m;
    uint32_t hi, lo, below, carry = 1;
    int32_t e;
    int top_bits = (int)(quire_bits(n, es) - 32 * (nw - 1)); /* 1..32 */
    uint32_t keep = top_bits == 32 ? 0xFFFFFFFFUL : (((uint32_t)1 << top_bits) - 1);
    if (n <= 16)
        return quire_to_posit16(q, n, es);
    if (((const uint8_t *)q)[4 * nw])
        return posit_nar(n);
    for (i = 0; i < nw - 1; i++) /* the format's words */
        w[i] = qw[i];
    /* two's complement at the quire's width: sign-extend its top bit */
    neg = (int)((qw[nw - 1] >> (top_bits - 1)) & 1);
    w[nw - 1] = neg ? (qw[nw - 1] | ~keep) : (qw[nw - 1] & keep);
    if (neg) {
        for (i = 0; i < nw; i++) {
            w[i] = ~w[i] + carry;
            carry = carry && w[i] == 0;
        }
    }
    while (top >= 0 && !w[top])
        top--;
    if (top < 0)
        return 0;
    /* the top 64 bits from the leading 1 (bit 0 of lo weighs 2^(32 (top - 1) - lz)
       minpos^2), the bits below them as the sticky bit */
    lz = clz32(w[top]);
    hi = w[top] << lz;
    lo = top >= 1 ? w[top - 1] : 0;
    below = top >= 2 ? w[top - 2] : 0;
    if (lz) {
        hi |= lo >> (32 - lz);
        lo = (lo << lz) | (below >> (32 - lz));
        below <<= lz;
    }
    sticky = below != 0;
    for (i = 0; i < top - 2; i++)
        sticky |= w[i] != 0;
    e = 32 * (top - 1) - lz - 2 * maxscale_of(n, es);
    m = ((uint64_t)hi << 30) | (lo >> 2); /* < 2^62, as pack wants */
    return pack(neg, m, e + 2, sticky || (lo & 3), n, es);
}

/* --- per-format entry points (posit.h): the n <= 16 cores with constant n and es ---- */

#define POSIT_FORMAT(N, ES)                                                               \
    posit_t posit_p##N##e##ES##_add(posit_t a, posit_t b) { return add16(a, b, N, ES); } \
    posit_t posit_p##N##e##ES##_sub(posit_t a, posit_t b)                                 \
    {                                                                                     \
        return posit_p##N##e##ES##_add(a, posit_neg(b, N));                               \
    }                                                                                     \
    posit_t posit_p##N##e##ES##_mul(posit_t a, posit_t b) { return mul16(a, b, N, ES); } \
    posit_t posit_p##N##e##ES##_div(posit_t a, posit_t b) { return div16(a, b, N, ES); } \
    void posit_p##N##e##ES##_quire_fma(void *q, posit_t a, posit_t b)                     \
    {                                                                                     \
        quire_fma16(q, a, b, N, ES);                                                      \
    }                                                                                     \
    posit_t posit_p##N##e##ES##_quire_to_posit(const void *q)                             \
    {                                                                                     \
        return quire_to_posit16(q, N, ES);                                                \
    }

POSIT_FORMAT(8, 0)
POSIT_FORMAT(8, 1)
POSIT_FORMAT(8, 2)
POSIT_FORMAT(16, 0)
POSIT_FORMAT(16, 1)
POSIT_FORMAT(16, 2)
