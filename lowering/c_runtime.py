"""minun_runtime.h: the C side of docs/numerics.md that generated code calls.

The header is generated per model: it holds only the helpers the model calls (and what
they call), so that nothing unused is compiled (`-Wall` warns about unused static tables).
Table contents come from the Python functions of formats/fixed/arith.py that the evaluator
uses (`shiftry_tables`), so the evaluator and the C read the same integers; the rounding
of each shift is spelled by `shift_right` below, the C twin of `fixed.shift_right`.

Tables live in program memory on AVR (`PROGMEM`, read with `pgm_read_*`); elsewhere they
are plain `const` arrays (flash on Cortex-M, .rodata on x86).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal, localcontext

from minun_mlir.formats.fixed import arith as fx


@dataclass(frozen=True)
class Profile:
    """What differs between targets in the generated C."""

    name: str
    flash: bool  # const arrays in program memory, read through pgm_read_*
    avr_asm: bool = False  # 16x16->32 multiplies and 32-bit shifts as AVR inline asm
    cortex_m: bool = False  # SMLAD (under __ARM_FEATURE_DSP), padding tests out of dot loops
    sse2: bool = False  # int16 dot products with PMADDWD (under __SSE2__)

    def flash_decl(self) -> str:
        return " MINUN_FLASH" if self.flash else ""

    def read(self, ctype: str, lvalue: str) -> str:
        """Read one element of a const array (a table or a weight)."""
        if not self.flash:
            return lvalue
        macro = {"int8_t": "MINUN_RD8", "uint8_t": "MINUN_RD8", "int16_t": "MINUN_RD16",
                 "int32_t": "MINUN_RD32", "float": "MINUN_RDF"}.get(ctype)
        if macro is None:
            raise ValueError(f"no program-memory read for {ctype}")
        return f"{macro}(&{lvalue})"


PROFILES = {
    "x86": Profile("x86", flash=False, sse2=True),
    "avr": Profile("avr", flash=True, avr_asm=True),
    "cortex-m": Profile("cortex-m", flash=False, cortex_m=True),
}

# harness target names -> C profile
PROFILE_OF_TARGET = {"x86": "x86", "avr": "avr", "cortex-m": "cortex-m",
                     "cortex-m0plus": "cortex-m", "cortex-m3": "cortex-m",
                     "cortex-m4": "cortex-m", "cortex-m4f": "cortex-m",
                     "cortex-m4-mps2": "cortex-m"}


def shift_right(expr: str, n: int, rounding: str, nonneg: bool = False) -> str:
    """C for x / 2^n rounded per docs/numerics.md (`expr` is a variable: used more than
    once). On a non-negative x, trunc and floor are the same shift."""
    if n <= 0:
        return expr
    if rounding == "floor" or (rounding == "trunc" and nonneg):
        return f"({expr} >> {n})"
    if rounding == "nearest":
        return f"(({expr} >> {n}) + (({expr} >> {n - 1}) & 1))"
    return f"(({expr} + (({expr} >> 31) & {(1 << n) - 1}L)) >> {n})"  # int32_t expr


def c_array(ctype: str, name: str, values: Iterable[int], profile: Profile) -> str:
    vals = [str(int(v)) for v in values]
    lines = [", ".join(vals[i:i + 16]) for i in range(0, len(vals), 16)]
    body = ",\n    ".join(lines)
    return (f"static const {ctype} {name}[{len(vals)}]{profile.flash_decl()} = {{\n"
            f"    {body}\n}};\n")


# --------------------------------------------------------------------------------------
# Helpers: name -> (dependencies, C source); the source is made for a profile
# --------------------------------------------------------------------------------------


def _exp16(rounding: str) -> Callable[[Profile], str]:
    def make(p: Profile) -> str:
        t1, t2 = fx.shiftry_tables(16)
        _, s_out, psi = fx.SHIFTRY_EXP[16]
        return (
            c_array("int16_t", "minun_exp16_t1", t1, p)
            + c_array("int16_t", "minun_exp16_t2", t2, p)
            + f"""
/* e^x for x <= 0 at Shiftry's scales (in 2^-11, out 2^-14); positive x count as 0. */
{_inline(p)} int16_t minun_exp16_{rounding}(int16_t x)
{{
    int32_t u = x < 0 ? -(int32_t)x : 0;
    int32_t prod;
    if (u > 32767)
        u = 32767;
    prod = (int32_t){p.read("int16_t", f"minun_exp16_t1[u >> {psi}]")}
        * {p.read("int16_t", f"minun_exp16_t2[u & {(1 << psi) - 1}]")};
    return (int16_t){shift_right("prod", s_out, rounding, nonneg=True)};
}}
""")

    return make


def _div(p: Profile, num: str, den: str) -> str:
    """num / den of Shiftry's sigmoid and tanh: 0 <= num, 16384 <= den (a = e^x in [0,
    16384]), so the quotient is the unsigned one and at most 2^14. On AVR a 16-step
    division (minun_udiv32_16) instead of libgcc's 32-step __divmodsi4."""
    if p.avr_asm:
        return f"minun_udiv32_16((uint32_t)({num}), (uint16_t)({den}))"
    return f"({num}) / ({den})"


def _inline(p: Profile) -> str:
    """Cortex-M: Shiftry's exp, sigmoid and tanh always inline (gcc -Os otherwise calls
    them, a call and a stack frame a hidden unit in FastGRNN's cells)."""
    return "static inline __attribute__((always_inline))" if p.cortex_m else "static inline"


def _sigmoid16(rounding: str) -> Callable[[Profile], str]:
    def make(p: Profile) -> str:
        if p.cortex_m:  # one exp of -|x| (the same integers: x <= 0 reads exp(x))
            return f"""
/* Shiftry's sigmoid (Library 8), in 2^-11, out 2^-14, C integer division. */
{_inline(p)} int16_t minun_sigmoid16_{rounding}(int16_t x)
{{
    const int32_t a = minun_exp16_{rounding}(x <= 0 ? x : (int16_t)-x);
    return (int16_t)(({_div(p, "x <= 0 ? 16384L * a : 16384L * 16384L", "16384L + a")}));
}}
"""
        return f"""
/* Shiftry's sigmoid (Library 8), in 2^-11, out 2^-14, C integer division. */
static inline int16_t minun_sigmoid16_{rounding}(int16_t x)
{{
    int32_t a;
    if (x <= 0) {{
        a = minun_exp16_{rounding}(x);
        return (int16_t)({_div(p, "16384L * a", "16384L + a")});
    }}
    a = minun_exp16_{rounding}((int16_t)-x);
    return (int16_t)({_div(p, "16384L * 16384L", "16384L + a")});
}}
"""

    return make


def _tanh16(rounding: str) -> Callable[[Profile], str]:
    def make(p: Profile) -> str:
        return f"""
/* Shiftry's tanh (Library 9): a = e^(-2|x|) (saturated to 16 bits), in 2^-11, out 2^-14. */
{_inline(p)} int16_t minun_tanh16_{rounding}(int16_t x)
{{
    int32_t ax = x < 0 ? -(int32_t)x : (int32_t)x;
    int32_t n2 = -2 * ax;
    int32_t a, m;
    if (n2 < -32768L)
        n2 = -32768L;
    a = minun_exp16_{rounding}((int16_t)n2);
    m = {_div(p, "16384L * (16384L - a)", "a + 16384L")};
    return (int16_t)(x <= 0 ? -m : m);
}}
"""

    return make


def _exp8(p: Profile) -> str:
    (t,) = fx.shiftry_tables(8)
    return c_array("int8_t", "minun_exp8_t", t, p) + f"""
/* e^x for x <= 0 at Shiftry's 8-bit scales (in 2^-4, out 2^-6). */
static inline int8_t minun_exp8(int8_t x)
{{
    int u = x < 0 ? -(int)x : 0;
    if (u > 127)
        u = 127;
    return {p.read("int8_t", "minun_exp8_t[u]")};
}}
"""


def _sigmoid8(p: Profile) -> str:
    return """
/* Shiftry's sigmoid at 8 bits (in 2^-4, out 2^-6). */
static inline int8_t minun_sigmoid8(int8_t x)
{
    int a;
    if (x <= 0) {
        a = minun_exp8(x);
        return (int8_t)((64 * a) / (64 + a));
    }
    a = minun_exp8((int8_t)-x);
    return (int8_t)((64 * 64) / (64 + a));
}
"""


def _tanh8(p: Profile) -> str:
    return """
/* Shiftry's tanh at 8 bits (in 2^-4, out 2^-6). */
static inline int8_t minun_tanh8(int8_t x)
{
    int ax = x < 0 ? -(int)x : (int)x;
    int n2 = -2 * ax;
    int a, m;
    if (n2 < -128)
        n2 = -128;
    a = minun_exp8((int8_t)n2);
    m = (64 * (64 - a)) / (a + 64);
    return (int8_t)(x <= 0 ? -m : m);
}
"""


def _isqrt(bits: int) -> Callable[[Profile], str]:
    def make(p: Profile) -> str:
        return f"""
/* floor(sqrt(v)) of a non-negative integer, exactly (bit by bit). */
static inline int{bits}_t minun_isqrt{bits}(int{bits}_t v)
{{
    uint{bits}_t x = (uint{bits}_t)v, r = 0, bit = (uint{bits}_t)1 << {bits - 2};
    while (bit > x)
        bit >>= 2;
    while (bit != 0) {{
        if (x >= r + bit) {{
            x -= r + bit;
            r = (r >> 1) + bit;
        }} else {{
            r >>= 1;
        }}
        bit >>= 2;
    }}
    return (int{bits}_t)r;
}}
"""

    return make


_LNSUM = """
/* ln(s / 2^se) in units of 2^-16, for 2^se <= s < 2^62 (formats/fixed/arith.py ln_sum): log2 by
 * repeated squaring of s normalised to [1, 2) in Q30 (16 fraction bits), times ln 2. */
static inline int32_t minun_lnsum(int64_t s, int32_t se)
{
    uint64_t v = (uint64_t)s, u;
    int32_t k = 0, i, frac = 0;
    while (v >> 1) {
        v >>= 1;
        k++;
    }
    u = k <= 30 ? (uint64_t)s << (30 - k) : (uint64_t)s >> (k - 30);
    for (i = 0; i < 16; i++) {
        u = (u * u) >> 30;
        frac <<= 1;
        if (u >> 31) {
            u >>= 1;
            frac |= 1;
        }
    }
    return (int32_t)((((int64_t)(k - se) * 65536 + frac) * 1488522236LL
                      + ((int64_t)1 << 30)) >> 31);
}
"""


def _sigmoidf(p: Profile) -> str:
    return """
static inline float minun_sigmoidf(float x)
{
    return 1.0f / (1.0f + expf(-x));
}
"""


# --------------------------------------------------------------------------------------
# Target kernels: the same integers as the portable C they replace (the C printer uses
# them only where the profile asks for them), written for the instructions gcc does not
# use on its own
# --------------------------------------------------------------------------------------

# AVR (AVR201): a 16x16->32 product from four 8x8 products, muls/mulsu/mul taking their
# operands in r16-r23 ("a"). mulsu's carry is bit 15 of its (signed) partial product: the
# sbc sign-extends that partial product into the top byte. mul leaves r1, avr-gcc's zero
# register, dirty: cleared at the end.
_AVR_MUL16 = """
/* (int32_t)a * b without libgcc's __mulhisi3 call (AVR201). */
static inline __attribute__((always_inline)) int32_t minun_mul16(int16_t a, int16_t b)
{
    int32_t r;
    uint8_t z;
    __asm__ ("clr %[z]\\n\\t"
             "muls %B[a], %B[b]\\n\\t" "movw %C[r], r0\\n\\t"
             "mul %A[a], %A[b]\\n\\t" "movw %A[r], r0\\n\\t"
             "mulsu %B[a], %A[b]\\n\\t" "sbc %D[r], %[z]\\n\\t"
             "add %B[r], r0\\n\\t" "adc %C[r], r1\\n\\t" "adc %D[r], %[z]\\n\\t"
             "mulsu %B[b], %A[a]\\n\\t" "sbc %D[r], %[z]\\n\\t"
             "add %B[r], r0\\n\\t" "adc %C[r], r1\\n\\t" "adc %D[r], %[z]\\n\\t"
             "clr __zero_reg__"
             : [r] "=&r" (r), [z] "=&r" (z)
             : [a] "a" (a), [b] "a" (b)
             : "r0");
    return r;
}
"""

_AVR_UDIV = """
/* n / d (unsigned): 16 shift-and-subtract steps when the quotient has 16 bits
 * (n < d * 2^16), C's division otherwise. */
static inline __attribute__((always_inline)) uint32_t minun_udiv32_16(uint32_t n, uint16_t d)
{
    uint8_t c;
    if ((uint16_t)(n >> 16) >= d)
        return n / d;
    __asm__ ("ldi %[c], 16\\n"
             "1:\\n\\t"
             "lsl %A[n]\\n\\t" "rol %B[n]\\n\\t" "rol %C[n]\\n\\t" "rol %D[n]\\n\\t"
             "brcs 2f\\n\\t"
             "cp %C[n], %A[d]\\n\\t" "cpc %D[n], %B[d]\\n\\t" "brcs 3f\\n"
             "2:\\n\\t"
             "sub %C[n], %A[d]\\n\\t" "sbc %D[n], %B[d]\\n\\t" "inc %A[n]\\n"
             "3:\\n\\t"
             "dec %[c]\\n\\t" "brne 1b"
             : [n] "+r" (n), [c] "=&d" (c)
             : [d] "r" (d));
    return (uint16_t)n;
}
"""

_AVR_MAC16 = """
/* acc + (int32_t)a * b, modulo 2^32 (the wrapping C sum), in registers (AVR201). */
static inline __attribute__((always_inline)) int32_t minun_mac16(int32_t acc, int16_t a,
                                                                 int16_t b)
{
    uint8_t z;
    __asm__ ("clr %[z]\\n\\t"
             "muls %B[a], %B[b]\\n\\t" "add %C[acc], r0\\n\\t" "adc %D[acc], r1\\n\\t"
             "mul %A[a], %A[b]\\n\\t" "add %A[acc], r0\\n\\t" "adc %B[acc], r1\\n\\t"
             "adc %C[acc], %[z]\\n\\t" "adc %D[acc], %[z]\\n\\t"
             "mulsu %B[a], %A[b]\\n\\t" "sbc %D[acc], %[z]\\n\\t"
             "add %B[acc], r0\\n\\t" "adc %C[acc], r1\\n\\t" "adc %D[acc], %[z]\\n\\t"
             "mulsu %B[b], %A[a]\\n\\t" "sbc %D[acc], %[z]\\n\\t"
             "add %B[acc], r0\\n\\t" "adc %C[acc], r1\\n\\t" "adc %D[acc], %[z]\\n\\t"
             "clr __zero_reg__"
             : [acc] "+r" (acc), [z] "=&r" (z)
             : [a] "a" (a), [b] "a" (b)
             : "r0");
    return acc;
}
"""


def _avr_asr32(n: int) -> Callable[[Profile], str]:
    """x >> n on an int32_t: whole bytes moved by C (avr-gcc does those with moves), then
    r = n mod 8 bits: r right shifts of the 4 bytes, or for r >= 6 the 8 - r left shifts of
    5 bytes (sign byte on top) whose upper 4 are the result. avr-gcc -Os would loop n times
    over 4 bytes (7 cycles a bit)."""
    k, r = divmod(n, 8)
    moved = f"    x = x >> {8 * k};\n" if k else ""
    if r <= 5:
        steps = "".join('"asr %D[x]\\n\\t" "ror %C[x]\\n\\t" "ror %B[x]\\n\\t" '
                        '"ror %A[x]\\n\\t"\n             ' for _ in range(r))
        asm = f"""    __asm__ ({steps}: [x] "+r" (x));"""
    else:
        steps = "".join('"lsl %A[x]\\n\\t" "rol %B[x]\\n\\t" "rol %C[x]\\n\\t" '
                        '"rol %D[x]\\n\\t" "rol %[e]\\n\\t"\n             '
                        for _ in range(8 - r))
        asm = f"""    __asm__ ("clr %[e]\\n\\t" "sbrc %D[x], 7\\n\\t" "com %[e]\\n\\t"
             {steps}"mov %A[x], %B[x]\\n\\t" "mov %B[x], %C[x]\\n\\t"
             "mov %C[x], %D[x]\\n\\t" "mov %D[x], %[e]"
             : [x] "+r" (x), [e] "=&r" (e));"""

    decl = "    uint8_t e;\n" if r > 5 else ""

    def make(p: Profile) -> str:
        return f"""
/* x >> {n} (arithmetic): bytes moved, then {r if r <= 5 else 8 - r} bit shift(s). */
static inline __attribute__((always_inline)) int32_t minun_asr32_{n}(int32_t x)
{{
{decl}{moved}{asm}
    return x;
}}
"""

    return make


def _avr_step(ptr: str, stride: int) -> str:
    """Asm moving a pointer already advanced by one int16 on to the next element."""
    extra = 2 * stride - 2
    if extra == 0:
        return ""
    return (f'"subi %A[{ptr}], lo8({-extra})\\n\\t" '
            f'"sbci %B[{ptr}], hi8({-extra})\\n\\t"\n             ')


def _avr_dot(kind: str, sa: int, sb: int) -> Callable[[Profile], str]:
    """acc + sum of a[i * sa] * b[i * sb] over n elements, modulo 2^32: one asm loop with
    the pointers in Z (a; program memory when kind is "fr") and X (b), the 16x16
    multiply-accumulate of minun_mac16 and a 16-bit down counter."""
    load_a = ("lpm" if kind == "fr" else "ld") + " %A[a], Z+\\n\\t\" \"" + \
        ("lpm" if kind == "fr" else "ld") + " %B[a], Z+"
    name = f"minun_dot16_{kind}_{sa}_{sb}".replace("-", "m")
    what = "program memory" if kind == "fr" else "RAM"

    def make(p: Profile) -> str:
        return f"""
/* acc + a[0]*b[0] + a[{sa}]*b[{sb}] + ... (n products, modulo 2^32), a in {what}, b in
 * RAM: lpm/ld with post-increment and the multiply-accumulate of minun_mac16. */
static inline __attribute__((always_inline)) int32_t {name}(int32_t acc, const int16_t *pa,
                                                          const int16_t *pb, int n)
{{
    int16_t a, b;
    uint8_t z;
    if (n <= 0)
        return acc;
    /* volatile: it reads memory (gcc 5.4 hoists a plain asm out of a loop storing there) */
    __asm__ __volatile__ ("clr %[z]\\n"
             "1:\\n\\t"
             "{load_a}\\n\\t"
             {_avr_step("pa", sa)}"ld %A[b], X+\\n\\t" "ld %B[b], X+\\n\\t"
             {_avr_step("pb", sb)}"muls %B[a], %B[b]\\n\\t"
             "add %C[acc], r0\\n\\t" "adc %D[acc], r1\\n\\t"
             "mul %A[a], %A[b]\\n\\t" "add %A[acc], r0\\n\\t" "adc %B[acc], r1\\n\\t"
             "adc %C[acc], %[z]\\n\\t" "adc %D[acc], %[z]\\n\\t"
             "mulsu %B[a], %A[b]\\n\\t" "sbc %D[acc], %[z]\\n\\t"
             "add %B[acc], r0\\n\\t" "adc %C[acc], r1\\n\\t" "adc %D[acc], %[z]\\n\\t"
             "mulsu %B[b], %A[a]\\n\\t" "sbc %D[acc], %[z]\\n\\t"
             "add %B[acc], r0\\n\\t" "adc %C[acc], r1\\n\\t" "adc %D[acc], %[z]\\n\\t"
             "subi %A[n], 1\\n\\t" "sbci %B[n], 0\\n\\t" "brne 1b\\n\\t"
             "clr __zero_reg__"
             : [acc] "+r" (acc), [pa] "+z" (pa), [pb] "+x" (pb), [n] "+d" (n),
               [a] "=&a" (a), [b] "=&a" (b), [z] "=&r" (z)
             :
             : "r0", "memory");
    return acc;
}}
"""

    return make


_AVR_SCATTER = """
/* y[rows[k]] += vals[k] * xv for k < n, modulo 2^32 (a column of a sparse matrix in
 * compressed form times one input): rows (int8_t, non-negative) and vals in program memory
 * read with lpm through Z in turn, y in RAM through X, the AVR201 multiply-accumulate. */
static inline __attribute__((always_inline)) void minun_scatter16(int32_t *y,
    const int8_t *rows, const int16_t *vals, int16_t xv, int n)
{
    const void *p;
    void *q;
    int32_t t;
    int16_t a;
    uint8_t r, z;
    if (n <= 0)
        return;
    __asm__ __volatile__ ("clr %[z]\\n"
             "1:\\n\\t"
             "movw %[p], %[rows]\\n\\t" "lpm %[r], Z+\\n\\t" "movw %[rows], %[p]\\n\\t"
             "movw %[p], %[vals]\\n\\t" "lpm %A[a], Z+\\n\\t" "lpm %B[a], Z+\\n\\t"
             "movw %[vals], %[p]\\n\\t"
             "movw %[q], %[y]\\n\\t" "lsl %[r]\\n\\t"
             "add %A[q], %[r]\\n\\t" "adc %B[q], %[z]\\n\\t"
             "add %A[q], %[r]\\n\\t" "adc %B[q], %[z]\\n\\t"
             "ld %A[t], X+\\n\\t" "ld %B[t], X+\\n\\t" "ld %C[t], X+\\n\\t" "ld %D[t], X+\\n\\t"
             "muls %B[a], %B[x]\\n\\t" "add %C[t], r0\\n\\t" "adc %D[t], r1\\n\\t"
             "mul %A[a], %A[x]\\n\\t" "add %A[t], r0\\n\\t" "adc %B[t], r1\\n\\t"
             "adc %C[t], %[z]\\n\\t" "adc %D[t], %[z]\\n\\t"
             "mulsu %B[a], %A[x]\\n\\t" "sbc %D[t], %[z]\\n\\t"
             "add %B[t], r0\\n\\t" "adc %C[t], r1\\n\\t" "adc %D[t], %[z]\\n\\t"
             "mulsu %B[x], %A[a]\\n\\t" "sbc %D[t], %[z]\\n\\t"
             "add %B[t], r0\\n\\t" "adc %C[t], r1\\n\\t" "adc %D[t], %[z]\\n\\t"
             "st -X, %D[t]\\n\\t" "st -X, %C[t]\\n\\t" "st -X, %B[t]\\n\\t" "st -X, %A[t]\\n\\t"
             "subi %A[n], 1\\n\\t" "sbci %B[n], 0\\n\\t" "brne 1b\\n\\t"
             "clr __zero_reg__"
             : [rows] "+r" (rows), [vals] "+r" (vals), [n] "+d" (n), [p] "=&z" (p),
               [q] "=&x" (q), [t] "=&r" (t), [a] "=&a" (a), [r] "=&r" (r), [z] "=&r" (z)
             : [y] "r" (y), [x] "a" (xv)
             : "r0", "memory");
}
"""


def _avr_dot8(kind: str, z128: bool = False) -> Callable[[Profile], str]:
    """acc + sum of a[i] * b[i] over n int8 elements, modulo 2^32 (per-channel 8-bit
    weights accumulate in 32 bits): one asm loop, a in Z (program memory when kind is
    "fr"), b in X, MULS and the sign-extended product added without a branch. With
    `z128`, a[i] * (b[i] + 128) (zero-skew terms of an input whose zero point is -128):
    b + 128 taken as b's unsigned byte (SUBI 0x80) and MULSU for the signed x unsigned
    product (within [-32640, 32385]: exact in 16 bits)."""
    load_a = ("lpm" if kind == "fr" else "ld") + " %[a], Z+"
    name = f"minun_dot8_z128_{kind}" if z128 else f"minun_dot8_{kind}"
    what = "program memory" if kind == "fr" else "RAM"
    indent = " " * (63 if z128 else 58)
    if z128:
        about = (f"acc + a[0]*(b[0] + 128) + ... + a[n-1]*(b[n-1] + 128) (int8_t, modulo "
                 f"2^32), a in {what},\n * b in RAM: b + 128 is b's byte read as unsigned, "
                 "MULSU the 16-bit product.")
        why, offset, mul, regs = "", '"subi %[b], 0x80\\n\\t"', "mulsu", "a"
    else:
        about = (f"acc + a[0]*b[0] + ... + a[n-1]*b[n-1] (int8_t, modulo 2^32), a in {what}, "
                 "b in RAM:\n * MULS gives the 16-bit product, its sign (LSL, SBC) the two "
                 "upper bytes.")
        why = ("    /* volatile: it reads memory (gcc 5.4 hoists a plain asm out of a loop "
               "storing there) */\n")
        offset, mul, regs = "", "muls", "d"
    load_b = '"ld %[b], X+\\n\\t"' + (f" {offset}" if offset else "")

    def make(p: Profile) -> str:
        return f"""
/* {about} */
static inline __attribute__((always_inline)) int32_t {name}(int32_t acc, const int8_t *pa,
{indent}const int8_t *pb, int n)
{{
    int8_t a, b;
    uint8_t s;
    if (n <= 0)
        return acc;
{why}    __asm__ __volatile__ ("1:\\n\\t"
             "{load_a}\\n\\t" {load_b}
             "{mul} %[a], %[b]\\n\\t"
             "mov %[s], r1\\n\\t" "lsl %[s]\\n\\t" "sbc %[s], %[s]\\n\\t"
             "add %A[acc], r0\\n\\t" "adc %B[acc], r1\\n\\t"
             "adc %C[acc], %[s]\\n\\t" "adc %D[acc], %[s]\\n\\t"
             "subi %A[n], 1\\n\\t" "sbci %B[n], 0\\n\\t" "brne 1b\\n\\t"
             "clr __zero_reg__"
             : [acc] "+r" (acc), [pa] "+z" (pa), [pb] "+x" (pb), [n] "+d" (n),
               [a] "=&{regs}" (a), [b] "=&{regs}" (b), [s] "=&r" (s)
             :
             : "r0", "memory");
    return acc;
}}
"""

    return make


def _avr_dot8_off(kind: str) -> Callable[[Profile], str]:
    """acc + sum of a[i] * (b[i] + k) over n int8 elements, modulo 2^32, k in [-127, 128]
    (zero-skew terms of an input at zero point -k): b + k = u + (k - 128) with u = b +
    128, b's byte read as unsigned, so the sum is sum a*u (minun_dot8_z128's loop) plus
    (k - 128) times sum a, kept in 16 bits beside it (exact over at most 255 elements a
    chunk)."""
    load_a = ("lpm" if kind == "fr" else "ld") + " %[a], Z+"
    name = f"minun_dot8_off_{kind}"
    what = "program memory" if kind == "fr" else "RAM"

    def make(p: Profile) -> str:
        return f"""
/* acc + a[0]*(b[0] + k) + ... + a[n-1]*(b[n-1] + k) (int8_t, modulo 2^32), a in {what},
 * b in RAM: per chunk of at most 255 elements, MULSU's a * (b + 128) summed with the sum
 * of a (int16_t: exact), then (k - 128) times that sum added. */
static inline __attribute__((always_inline)) int32_t {name}(int32_t acc, const int8_t *pa,
                                                              const int8_t *pb, int n,
                                                              int16_t k)
{{
    int8_t a, b;
    uint8_t s, z;
    int16_t w;
    int c;
    while (n > 0) {{
        c = n > 255 ? 255 : n;
        n -= c;
        w = 0;
        __asm__ __volatile__ ("clr %[z]\\n"
                 "1:\\n\\t"
                 "{load_a}\\n\\t" "ld %[b], X+\\n\\t" "subi %[b], 0x80\\n\\t"
                 "mulsu %[a], %[b]\\n\\t"
                 "mov %[s], r1\\n\\t" "lsl %[s]\\n\\t" "sbc %[s], %[s]\\n\\t"
                 "add %A[acc], r0\\n\\t" "adc %B[acc], r1\\n\\t"
                 "adc %C[acc], %[s]\\n\\t" "adc %D[acc], %[s]\\n\\t"
                 "add %A[w], %[a]\\n\\t" "adc %B[w], %[z]\\n\\t"
                 "sbrc %[a], 7\\n\\t" "dec %B[w]\\n\\t"
                 "subi %A[c], 1\\n\\t" "sbci %B[c], 0\\n\\t" "brne 1b\\n\\t"
                 "clr __zero_reg__"
                 : [acc] "+r" (acc), [pa] "+z" (pa), [pb] "+x" (pb), [c] "+d" (c),
                   [w] "+r" (w), [a] "=&a" (a), [b] "=&a" (b), [s] "=&r" (s), [z] "=&r" (z)
                 :
                 : "r0", "memory");
        acc = (int32_t)((uint32_t)acc + (uint32_t)((int32_t)(int16_t)(k - 128) * (int32_t)w));
    }}
    return acc;
}}
"""

    return make


def avr_dot8_off_helper(flash_a: bool) -> str:
    """The AVR zero-skew int8 dot-product kernel for any input zero point (registered on
    first use)."""
    kind = "fr" if flash_a else "rr"
    name = f"minun_dot8_off_{kind}"
    if name not in HELPERS:
        HELPERS[name] = ((), _avr_dot8_off(kind))
    return name


def avr_dot8_z128_helper(flash_a: bool) -> str:
    """The AVR zero-skew int8 dot-product kernel for an input zero point of -128
    (registered on first use)."""
    kind = "fr" if flash_a else "rr"
    name = f"minun_dot8_z128_{kind}"
    if name not in HELPERS:
        HELPERS[name] = ((), _avr_dot8(kind, z128=True))
    return name


def avr_dot8_helper(flash_a: bool) -> str:
    """The AVR int8 dot-product kernel (stride 1, 32-bit sum; registered on first use)."""
    kind = "fr" if flash_a else "rr"
    name = f"minun_dot8_{kind}"
    if name not in HELPERS:
        HELPERS[name] = ((), _avr_dot8(kind))
    return name


def avr_dot_helper(flash_a: bool, sa: int, sb: int) -> str:
    """The name of the AVR dot-product kernel for these strides (registered on first use)."""
    kind = "fr" if flash_a else "rr"
    name = f"minun_dot16_{kind}_{sa}_{sb}".replace("-", "m")
    if name not in HELPERS:
        HELPERS[name] = ((), _avr_dot(kind, sa, sb))
    return name


# Cortex-M4/M7 (DSP extension): SMLAD adds both 16x16 products of two int16 pairs to a
# 32-bit accumulator, wrapping modulo 2^32 (it only sets the Q flag on overflow).
_ARM_PAIR16 = """
/* Two neighbouring int16_t as one word (p[0] low half): one load, unaligned allowed. */
static inline int32_t minun_pair16(const int16_t *p)
{
    int32_t v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}
"""

_ARM_SMLAD = """
#if defined(__ARM_FEATURE_DSP)
/* acc + a.lo * b.lo + a.hi * b.hi, modulo 2^32 (SMLAD). */
static inline int32_t minun_smlad(int32_t a, int32_t b, int32_t acc)
{
    int32_t r;
    __asm__ ("smlad %0, %1, %2, %3" : "=r" (r) : "r" (a), "r" (b), "r" (acc));
    return r;
}
#endif
"""

# x86 (SSE2, every x86-64 core): PMADDWD multiplies eight int16 pairs and adds neighbouring
# products into four int32 lanes, wrapping modulo 2^32 like the C's unsigned sum, so the
# total is the same integer whatever the order.
_X86_DOT16 = """
#if defined(__SSE2__)
#include <emmintrin.h>
/* acc + sum a[i] * b[i] for i < n, modulo 2^32, eight products per PMADDWD. */
static inline int32_t minun_dot16_sse2(const int16_t *a, const int16_t *b, int n,
                                       int32_t acc)
{
    __m128i s = _mm_setzero_si128();
    uint32_t r;
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i va, vb;
        __builtin_memcpy(&va, a + i, sizeof va);
        __builtin_memcpy(&vb, b + i, sizeof vb);
        s = _mm_add_epi32(s, _mm_madd_epi16(va, vb));
    }
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    r = (uint32_t)acc + (uint32_t)_mm_cvtsi128_si32(s);
    for (; i < n; i++)
        r += (uint32_t)((int32_t)a[i] * (int32_t)b[i]);
    return (int32_t)r;
}
#endif
"""

_ARM_DOT16 = r"""
#if defined(__ARM_FEATURE_DSP)
/* acc + sum of a[i] * b[i] for i < n, modulo 2^32: eight products per step (four words
 * of each array with post-increment loads, four SMLADs), then four, a pair and a
 * product. */
static inline __attribute__((always_inline)) int32_t minun_dot16_dsp(
    int32_t acc, const int16_t *a, const int16_t *b, int n)
{
    int k;
    if (n <= 0)
        return acc;
    k = n >> 3;
    if (k) {
        int32_t t0, t1, t2, t3;
        __asm__ ("1:\n\t"
                 "ldr %[t0], [%[a]], #4\n\t"
                 "ldr %[t1], [%[b]], #4\n\t"
                 "ldr %[t2], [%[a]], #4\n\t"
                 "ldr %[t3], [%[b]], #4\n\t"
                 "smlad %[acc], %[t0], %[t1], %[acc]\n\t"
                 "smlad %[acc], %[t2], %[t3], %[acc]\n\t"
                 "ldr %[t0], [%[a]], #4\n\t"
                 "ldr %[t1], [%[b]], #4\n\t"
                 "ldr %[t2], [%[a]], #4\n\t"
                 "ldr %[t3], [%[b]], #4\n\t"
                 "smlad %[acc], %[t0], %[t1], %[acc]\n\t"
                 "smlad %[acc], %[t2], %[t3], %[acc]\n\t"
                 "subs %[k], %[k], #1\n\t"
                 "bne 1b"
                 : [acc] "+r" (acc), [a] "+r" (a), [b] "+r" (b), [k] "+r" (k),
                   [t0] "=&r" (t0), [t1] "=&r" (t1), [t2] "=&r" (t2), [t3] "=&r" (t3)
                 : : "cc", "memory");
    }
    if (n & 4) {
        acc = minun_smlad(minun_pair16(a), minun_pair16(b), acc);
        acc = minun_smlad(minun_pair16(a + 2), minun_pair16(b + 2), acc);
        a += 4;
        b += 4;
    }
    if (n & 2) {
        acc = minun_smlad(minun_pair16(a), minun_pair16(b), acc);
        a += 2;
        b += 2;
    }
    if (n & 1)
        acc = (int32_t)((uint32_t)acc + (uint32_t)((int32_t)*a * (int32_t)*b));
    return acc;
}
#endif
"""

_ARM_DOT8 = r"""
#if defined(__ARM_FEATURE_DSP)
/* acc + sum of a[i] * b[i] for i < n over int8_t arrays, modulo 2^32: two words of each
 * array per step, SXTB16 splitting each into the int16 pairs of its bytes 0, 2 and 1, 3,
 * four SMLADs; then one word of each, and the last products one by one. */
static inline __attribute__((always_inline)) int32_t minun_dot8_dsp(
    int32_t acc, const int8_t *a, const int8_t *b, int n)
{
    int k;
    int32_t t0, t1, t2, t3, t4, t5;
    if (n <= 0)
        return acc;
    k = n >> 3;
    if (k) {
        __asm__ ("1:\n\t"
                 "ldr %[t0], [%[a]], #4\n\t"
                 "ldr %[t1], [%[b]], #4\n\t"
                 "ldr %[t4], [%[a]], #4\n\t"
                 "ldr %[t5], [%[b]], #4\n\t"
                 "sxtb16 %[t2], %[t0], ror #8\n\t"
                 "sxtb16 %[t3], %[t1], ror #8\n\t"
                 "sxtb16 %[t0], %[t0]\n\t"
                 "sxtb16 %[t1], %[t1]\n\t"
                 "smlad %[acc], %[t2], %[t3], %[acc]\n\t"
                 "smlad %[acc], %[t0], %[t1], %[acc]\n\t"
                 "sxtb16 %[t2], %[t4], ror #8\n\t"
                 "sxtb16 %[t3], %[t5], ror #8\n\t"
                 "sxtb16 %[t4], %[t4]\n\t"
                 "sxtb16 %[t5], %[t5]\n\t"
                 "smlad %[acc], %[t2], %[t3], %[acc]\n\t"
                 "smlad %[acc], %[t4], %[t5], %[acc]\n\t"
                 "subs %[k], %[k], #1\n\t"
                 "bne 1b"
                 : [acc] "+r" (acc), [a] "+r" (a), [b] "+r" (b), [k] "+r" (k),
                   [t0] "=&r" (t0), [t1] "=&r" (t1), [t2] "=&r" (t2), [t3] "=&r" (t3),
                   [t4] "=&r" (t4), [t5] "=&r" (t5)
                 : : "cc", "memory");
    }
    if (n & 4) {
        __asm__ ("ldr %[t0], [%[a]], #4\n\t"
                 "ldr %[t1], [%[b]], #4\n\t"
                 "sxtb16 %[t2], %[t0], ror #8\n\t"
                 "sxtb16 %[t3], %[t1], ror #8\n\t"
                 "sxtb16 %[t0], %[t0]\n\t"
                 "sxtb16 %[t1], %[t1]\n\t"
                 "smlad %[acc], %[t2], %[t3], %[acc]\n\t"
                 "smlad %[acc], %[t0], %[t1], %[acc]"
                 : [acc] "+r" (acc), [a] "+r" (a), [b] "+r" (b),
                   [t0] "=&r" (t0), [t1] "=&r" (t1), [t2] "=&r" (t2), [t3] "=&r" (t3)
                 : : "memory");
    }
    for (k = n & 3; k > 0; k--)
        acc = (int32_t)((uint32_t)acc + (uint32_t)((int32_t)*a++ * (int32_t)*b++));
    return acc;
}
#endif
"""

# zero-skew int8 (minun_mlir/formats/zero_skew/loops.py): the terms (a[i] - z) * b[i] with the
# offset k = -z added as CMSIS-NN does, SXTAB16 widening the bytes of a and adding k to
# both halves (a[i] + k is within [-255, 255]: exact in 16 bits), then SMLAD
_ARM_DOT8_OFF = r"""
#if defined(__ARM_FEATURE_DSP)
/* acc + sum of (a[i] + k) * b[i] for i < n over int8_t arrays, modulo 2^32, |k| <= 128:
 * two words of each array per step, SXTAB16 giving the int16 pairs a[0] + k, a[2] + k
 * and a[1] + k, a[3] + k, SXTB16 those of b, four SMLADs; then one word of each, a
 * pair and a product (no loop: a convolution's rows are often short). */
static inline __attribute__((always_inline)) int32_t minun_dot8_off_dsp(
    int32_t acc, const int8_t *a, const int8_t *b, int n, int32_t k)
{
    int m;
    int32_t t0, t1, t2, t3, t4, t5, kk = (int32_t)(((uint32_t)k & 0xffffu) * 0x10001u);
    if (n <= 0)
        return acc;
    m = n >> 3;
    if (m) {
        __asm__ ("1:\n\t"
                 "ldr %[t0], [%[a]], #4\n\t"
                 "ldr %[t1], [%[b]], #4\n\t"
                 "ldr %[t4], [%[a]], #4\n\t"
                 "ldr %[t5], [%[b]], #4\n\t"
                 "sxtab16 %[t2], %[kk], %[t0], ror #8\n\t"
                 "sxtb16 %[t3], %[t1], ror #8\n\t"
                 "sxtab16 %[t0], %[kk], %[t0]\n\t"
                 "sxtb16 %[t1], %[t1]\n\t"
                 "smlad %[acc], %[t2], %[t3], %[acc]\n\t"
                 "smlad %[acc], %[t0], %[t1], %[acc]\n\t"
                 "sxtab16 %[t2], %[kk], %[t4], ror #8\n\t"
                 "sxtb16 %[t3], %[t5], ror #8\n\t"
                 "sxtab16 %[t4], %[kk], %[t4]\n\t"
                 "sxtb16 %[t5], %[t5]\n\t"
                 "smlad %[acc], %[t2], %[t3], %[acc]\n\t"
                 "smlad %[acc], %[t4], %[t5], %[acc]\n\t"
                 "subs %[m], %[m], #1\n\t"
                 "bne 1b"
                 : [acc] "+r" (acc), [a] "+r" (a), [b] "+r" (b), [m] "+r" (m),
                   [t0] "=&r" (t0), [t1] "=&r" (t1), [t2] "=&r" (t2), [t3] "=&r" (t3),
                   [t4] "=&r" (t4), [t5] "=&r" (t5)
                 : [kk] "r" (kk) : "cc", "memory");
    }
    if (n & 4) {
        __asm__ ("ldr %[t0], [%[a]], #4\n\t"
                 "ldr %[t1], [%[b]], #4\n\t"
                 "sxtab16 %[t2], %[kk], %[t0], ror #8\n\t"
                 "sxtb16 %[t3], %[t1], ror #8\n\t"
                 "sxtab16 %[t0], %[kk], %[t0]\n\t"
                 "sxtb16 %[t1], %[t1]\n\t"
                 "smlad %[acc], %[t2], %[t3], %[acc]\n\t"
                 "smlad %[acc], %[t0], %[t1], %[acc]"
                 : [acc] "+r" (acc), [a] "+r" (a), [b] "+r" (b),
                   [t0] "=&r" (t0), [t1] "=&r" (t1), [t2] "=&r" (t2), [t3] "=&r" (t3)
                 : [kk] "r" (kk) : "memory");
    }
    if (n & 2) {
        acc = (int32_t)((uint32_t)acc + (uint32_t)((a[0] + k) * b[0])
                        + (uint32_t)((a[1] + k) * b[1]));
        a += 2;
        b += 2;
    }
    if (n & 1)
        acc = (int32_t)((uint32_t)acc + (uint32_t)((*a + k) * *b));
    return acc;
}
#endif
"""

_ARM_DOT8_OFF_ROWS = r"""
#if defined(__ARM_FEATURE_DSP)
/* The sum of `rows` dot products of n zero-skew terms (minun_dot8_off_dsp), the arrays
 * advancing by sa and sb elements from one to the next (a convolution's window rows). */
static inline __attribute__((always_inline)) int32_t minun_dot8_off_rows_dsp(
    int32_t acc, const int8_t *a, int sa, const int8_t *b, int sb, int n, int rows,
    int32_t k)
{
    for (; rows > 0; rows--) {
        acc = minun_dot8_off_dsp(acc, a, b, n, k);
        a += sa;
        b += sb;
    }
    return acc;
}
#endif
"""


def _arm_rows(bits: int) -> str:
    t = f"int{bits}_t"
    return f"""
#if defined(__ARM_FEATURE_DSP)
/* The sum of `rows` dot products of n elements (minun_dot{bits}_dsp), the arrays
 * advancing by sa and sb elements from one to the next (a convolution's window rows). */
static inline __attribute__((always_inline)) int32_t minun_dot{bits}_rows_dsp(
    int32_t acc, const {t} *a, int sa, const {t} *b, int sb, int n, int rows)
{{
    for (; rows > 0; rows--) {{
        acc = minun_dot{bits}_dsp(acc, a, b, n);
        a += sa;
        b += sb;
    }}
    return acc;
}}
#endif
"""



# Register blocking over output channels (issue 31): a convolution's window for several
# channels at once, each word of the input loaded (and for int8 widened) once for all
# their filters (SMLAD is exact for int16 products, so every channel's sum is its dot
# product modulo 2^32). int16: four channels, a word (two elements) a step; int8: two
# channels (the SXTB16 halves take the registers of two more), a word (four) a step;
# zero-skew int8 (8_off): the same with SXTAB16 adding k to the input's halves.
def _arm_rows_mc(kind: str) -> str:
    """minun_dot{16,8,8_off}_rows_mc_dsp: the sums minun_dot{kind}_rows_dsp gives for
    `chans` filters sc elements apart, several channels a pass over the window, the rest
    one by one."""
    bits, off = (16 if kind == "16" else 8), kind == "8_off"
    t, block, step = f"int{bits}_t", (4 if bits == 16 else 2), (2 if bits == 16 else 4)
    ch = range(block)
    if bits == 16:
        x_ops = ["ldr %[x], [%[p]], #4"]
        per = ["ldr %[t], [%[q{j}]], #4", "smlad %[a{j}], %[x], %[t], %[a{j}]"]
        temps = '[x] "=&r" (x), [t] "=&r" (t)'
    else:
        ext = "sxtab16 %[{d}], %[kk], %[x]" if off else "sxtb16 %[{d}], %[x]"
        x_ops = ["ldr %[x], [%[p]], #4", ext.format(d="y") + ", ror #8", ext.format(d="x")]
        per = ["ldr %[t], [%[q{j}]], #4", "sxtb16 %[u], %[t], ror #8",
               "sxtb16 %[t], %[t]", "smlad %[a{j}], %[x], %[t], %[a{j}]",
               "smlad %[a{j}], %[y], %[u], %[a{j}]"]
        temps = '[x] "=&r" (x), [y] "=&r" (y), [t] "=&r" (t), [u] "=&r" (u)'
    lines = ["1:", *x_ops, *(ln.format(j=j) for j in ch for ln in per), "subs %[m], %[m], #1"]
    asm = "".join(f'                         "{ln}\\n\\t"\n' for ln in lines)
    accs = ", ".join(f"a{j} = 0" for j in ch)
    ptrs = ", ".join(["*p = ap", "*q0 = w0"] + [f"*q{j} = q{j - 1} + sc" for j in ch if j])
    outs = ", ".join(f'[a{j}] "+r" (a{j})' for j in ch)
    qs = ", ".join(f'[q{j}] "+r" (q{j})' for j in ch)
    tail = "".join(f"\n                a{j} = (int32_t)((uint32_t)a{j} + (uint32_t)(x * q{j}[i]));"
                   for j in ch)
    store = "".join(f"\n        out[c + {j}] = a{j};" for j in ch)
    regs = "x, t" if bits == 16 else "x, y, t, u"
    name, one = f"minun_dot{kind}_rows_mc_dsp", f"minun_dot{kind}_rows_dsp"
    karg, kin, kx = (", int32_t k", ' : [kk] "r" (kk) :', " + k") if off else ("", " : :", "")
    kdecl = ("\n    const int32_t kk = (int32_t)(((uint32_t)k & 0xffffu) * 0x10001u);"
             if off else "")
    what = ("one word of a (two elements) loaded once for their four SMLADs" if bits == 16
            else "one word of a (four elements) loaded and split by " +
                 ("SXTAB16, adding k," if off else "SXTB16") + " once for their two pairs "
                 "of SMLADs")
    doc = textwrap.fill(
        f"out[c] = the sum over r < rows, i < n of (a[r * sa + i]{kx}) * w[c * sc + r * sw + "
        f"i] for c < chans, modulo 2^32 ({one}'s sum for each filter): {block} channels a "
        f"pass, {what}; the last n % {step} elements one by one, the channels after the "
        f"last {block} by {one}. */", width=88, initial_indent="/* ",
        subsequent_indent=" * ")
    return f"""
#if defined(__ARM_FEATURE_DSP)
{doc}
static inline __attribute__((always_inline)) void {name}(
    int32_t *out, const {t} *a, int sa, const {t} *w, int sw, int sc, int n, int rows,
    int chans{karg})
{{
    int c, r, i, m;
    int32_t {regs};{kdecl}
    if (n < 0)
        n = 0;
    for (c = 0; c + {block} <= chans; c += {block}) {{
        const {t} *w0 = w + c * sc, *ap = a;
        int32_t {accs};
        for (r = rows; r > 0; r--) {{
            const {t} {ptrs};
            m = n / {step};
            if (m) {{
                __asm__ ({asm.strip()[:-1].rstrip()}"
                         "bne 1b"
                         : {outs},
                           [p] "+r" (p), {qs}, [m] "+r" (m),
                           {temps}
                        {kin} "cc", "memory");
            }}
            for (i = 0; i < n % {step}; i++) {{
                x = p[i]{kx};{tail}
            }}
            ap += sa;
            w0 += sw;
        }}{store}
    }}
    for (; c < chans; c++)
        out[c] = {one}(0, a, sa, w + c * sc, sw, n, rows{", k" if off else ""});
}}
#endif
"""


# Register blocking (issue 31): a matrix times a vector two rows at a time, each word of
# the vector loaded (and widened) once for both rows, as CMSIS-NN's blocked kernels do;
# every row's sum is the same integer modulo 2^32 as its single-row dot product.
def _arm_mv(kind: str) -> str:
    """minun_dot{16,8,8_off}_mv_dsp: out[r] = the dot product of row r of w (rows sw
    elements apart) and x, for r < rows; an odd last row by the single-row kernel."""
    t = "int16_t" if kind == "16" else "int8_t"
    off = kind == "8_off"
    name = f"minun_dot{kind}_mv_dsp"
    step = 8
    if kind == "16":
        what = "four words of x, each row's four, eight SMLADs"
        xs = [f"ldr %[t{j}], [%[x]], #4" for j in range(4)]
        row = ["ldr %[t4], [%[w]], #4", "ldr %[t5], [%[w]], #4",
               "smlad %[a], %[t0], %[t4], %[a]", "smlad %[a], %[t1], %[t5], %[a]",
               "ldr %[t4], [%[w]], #4", "ldr %[t5], [%[w]], #4",
               "smlad %[a], %[t2], %[t4], %[a]", "smlad %[a], %[t3], %[t5], %[a]"]
    else:
        what = ("two words of x widened once" + (" adding k (SXTAB16)" if off else "") +
                ", each row's two, eight SMLADs")
        ext = [("sxtab16 %[{d}], %[kk], %[{s}]" if off else "sxtb16 %[{d}], %[{s}]") + r
               for r in ("", ", ror #8")]
        xs = ["ldr %[t1], [%[x]], #4", "ldr %[t3], [%[x]], #4",
              ext[0].format(d="t0", s="t1"), ext[1].format(d="t1", s="t1"),
              ext[0].format(d="t2", s="t3"), ext[1].format(d="t3", s="t3")]
        word = ["ldr %[t4], [%[w]], #4", "sxtb16 %[t5], %[t4], ror #8", "sxtb16 %[t4], %[t4]"]
        row = [*word, "smlad %[a], %[t0], %[t4], %[a]", "smlad %[a], %[t1], %[t5], %[a]",
               *word, "smlad %[a], %[t2], %[t4], %[a]", "smlad %[a], %[t3], %[t5], %[a]"]
    rows = [ln.replace("%[w]", f"%[w{r}]").replace("%[a]", f"%[a{r}]")
            for r in (0, 1) for ln in row]
    body = "".join(ln + "\\n\\t" for ln in xs + rows)
    lines = "".join(f'                 "{ln}"\n' for ln in
                    ["1:\\n\\t", *re.findall(r".*?\\n\\t", body),
                     "subs %[m], %[m], #1\\n\\t", "bne 1b"])
    xk = "(xp[i] + k)" if off else "xp[i]"
    karg = ", int32_t k" if off else ""
    kin = ' : [kk] "r" (kk) :' if off else " : :"
    kdecl = ("\n    const int32_t kk = (int32_t)(((uint32_t)k & 0xffffu) * 0x10001u);"
             if off else "")
    last = ("minun_dot8_off_dsp(0, x, w, n, k)" if off
            else f"minun_dot{kind}_dsp(0, w, x, n)")
    doc = textwrap.fill(
        f"out[r] = sum over i < n of {xk.replace('xp', 'x')} * w[r * sw + i] for r < rows, "
        f"modulo 2^32, two rows at a time: {step} elements a step ({what}); the last n % "
        f"{step} one by one, an odd last row by {last.split('(')[0]}. */", width=88,
        initial_indent="/* ", subsequent_indent=" * ")
    # int16: the last n % 8 by pairs (each x word loaded once for both rows), then one
    pairs = ("""for (i = 0; i + 2 <= n % 8; i += 2) {
            const int32_t xx = minun_pair16(xp + i);
            a0 = minun_smlad(xx, minun_pair16(w0 + i), a0);
            a1 = minun_smlad(xx, minun_pair16(w1 + i), a1);
        }
        """ if kind == "16" else "")
    start = "" if kind == "16" else "i = 0"
    if kind == "16":
        doc = doc.replace("one by one", "by SMLAD pairs, then one")
    return f"""
#if defined(__ARM_FEATURE_DSP)
{doc}
static inline __attribute__((always_inline)) void {name}(
    int32_t *out, const {t} *w, int sw, const {t} *x, int n, int rows{karg})
{{
    int r, i, m;
    int32_t t0, t1, t2, t3, t4, t5;{kdecl}
    if (n <= 0) {{
        for (r = 0; r < rows; r++)
            out[r] = 0;
        return;
    }}
    for (r = 0; r + 2 <= rows; r += 2) {{
        const {t} *w0 = w + r * sw, *w1 = w0 + sw, *xp = x;
        int32_t a0 = 0, a1 = 0;
        m = n / {step};
        if (m) {{
            __asm__ (
{lines}                 : [a0] "+r" (a0), [a1] "+r" (a1), [x] "+r" (xp), [w0] "+r" (w0),
                   [w1] "+r" (w1), [m] "+r" (m), [t0] "=&r" (t0), [t1] "=&r" (t1),
                   [t2] "=&r" (t2), [t3] "=&r" (t3), [t4] "=&r" (t4), [t5] "=&r" (t5)
                {kin} "cc", "memory");
        }}
        {pairs}for ({start}; i < n % {step}; i++) {{
            a0 = (int32_t)((uint32_t)a0 + (uint32_t)({xk} * w0[i]));
            a1 = (int32_t)((uint32_t)a1 + (uint32_t)({xk} * w1[i]));
        }}
        out[r] = a0;
        out[r + 1] = a1;
    }}
    if (r < rows)
        out[r] = {last.replace(" w,", " w + r * sw,")};
}}
#endif
"""



HELPERS: dict[str, tuple[tuple[str, ...], Callable[[Profile], str]]] = {
    "minun_dot16_sse2": ((), lambda p: _X86_DOT16),
    "minun_dot16_rows_dsp": (("minun_dot16_dsp",), lambda p: _arm_rows(16)),
    "minun_dot8_rows_dsp": (("minun_dot8_dsp",), lambda p: _arm_rows(8)),
    "minun_dot16_rows_mc_dsp": (("minun_dot16_rows_dsp",), lambda p: _arm_rows_mc("16")),
    "minun_dot8_rows_mc_dsp": (("minun_dot8_rows_dsp",), lambda p: _arm_rows_mc("8")),
    "minun_dot8_off_rows_mc_dsp": (("minun_dot8_off_rows_dsp",),
                                   lambda p: _arm_rows_mc("8_off")),
    "minun_dot16_dsp": (("minun_pair16", "minun_smlad"), lambda p: _ARM_DOT16),
    "minun_dot8_dsp": ((), lambda p: _ARM_DOT8),
    "minun_dot8_off_dsp": ((), lambda p: _ARM_DOT8_OFF),
    "minun_dot8_off_rows_dsp": (("minun_dot8_off_dsp",), lambda p: _ARM_DOT8_OFF_ROWS),
    "minun_dot16_mv_dsp": (("minun_dot16_dsp",), lambda p: _arm_mv("16")),
    "minun_dot8_mv_dsp": (("minun_dot8_dsp",), lambda p: _arm_mv("8")),
    "minun_dot8_off_mv_dsp": (("minun_dot8_off_dsp",), lambda p: _arm_mv("8_off")),
    "minun_pair16": ((), lambda p: _ARM_PAIR16),
    "minun_smlad": ((), lambda p: _ARM_SMLAD),
    "minun_mul16": ((), lambda p: _AVR_MUL16),
    "minun_mac16": ((), lambda p: _AVR_MAC16),
    "minun_udiv32_16": ((), lambda p: _AVR_UDIV if p.avr_asm else ""),
    "minun_scatter16": ((), lambda p: _AVR_SCATTER),
    "minun_exp8": ((), _exp8),
    "minun_sigmoid8": (("minun_exp8",), _sigmoid8),
    "minun_tanh8": (("minun_exp8",), _tanh8),
    "minun_isqrt32": ((), _isqrt(32)),
    "minun_isqrt64": ((), _isqrt(64)),
    "minun_sigmoidf": (("expf",), _sigmoidf),
    "minun_lnsum": ((), lambda p: _LNSUM),
}
# The native evaluator's probes (minun_mlir/native.py defines them in its host builds).
HELPERS["minun_profile"] = ((), lambda p: (
    "/* Records one value of the tensor numbered id (the native profiler defines it). */\n"
    "void minun_profile(int32_t id, float v);\n"))
HELPERS["minun_record"] = ((), lambda p: (
    "/* Records one stored value of the tensor numbered id (native value maps). */\n"
    "void minun_record(int32_t id, int32_t v);\n"))
for _r in fx.ROUNDING_MODES:
    HELPERS[f"minun_exp16_{_r}"] = ((), _exp16(_r))
    HELPERS[f"minun_sigmoid16_{_r}"] = ((f"minun_exp16_{_r}", "minun_udiv32_16"),
                                        _sigmoid16(_r))
    HELPERS[f"minun_tanh16_{_r}"] = ((f"minun_exp16_{_r}", "minun_udiv32_16"), _tanh16(_r))

# Posits (!num.posit<n, es>, minun_mlir/formats/posit/loops.py): thin wrappers of the integer-only
# runtime third_party/softposit/posit.c (shipped with the model's C when it is used), on
# patterns stored in n-bit signed integers. A dot product accumulates in the quire of its
# nesting depth d (1 unless a dot product reads a lazy dot product): only the depths a
# model uses get a quire, each sized for the widest format that uses it (`quire_bytes`:
# the format's words and the NaR flag), and the wrappers name it (no current-quire pointer).
MAX_QUIRE_DEPTH = 4
_QUIRE_WRAPPER = re.compile(r"minun_p(?P<n>\d+)e(?P<es>\d)_(?:qclear|fma|qpop)_(?P<d>\d)")
_POSIT_BASE = """
/* posit<n, es> arithmetic: third_party/softposit (posit.h, posit.c beside this file). */
#include "posit.h"
"""


def quire_words(n: int, es: int) -> int:
    """posit.h's POSIT_QUIRE_WORDS: 32-bit words of the quire of posit<n, es>."""
    return (4 * (n - 2) * (1 << es) + n + 31) // 32


def _quire_formats(names: Iterable[str]) -> dict[int, int]:
    """{depth: words} of the quires that the wrappers in `names` use: each depth's sized
    for the widest format that uses it."""
    words: dict[int, int] = {}
    for name in names:
        m = _QUIRE_WRAPPER.fullmatch(name)
        if m:
            d = int(m["d"])
            words[d] = max(words.get(d, 0), quire_words(int(m["n"]), int(m["es"])))
    return words


def quire_bytes(names: Iterable[str]) -> int:
    """The static RAM the quires of a program calling `names` take: per depth its words
    and the NaR flag byte (avr-gcc's .bss; 32-bit targets may pad each to a word)."""
    return sum(4 * w + 1 for w in _quire_formats(names).values())


def _quire_storage(d: int, names: Iterable[str]) -> str:
    w = _quire_formats(names)[d]
    return (f"\n/* The quire of depth {d}: {w} word{'s' if w > 1 else ''} and the NaR flag "
            "(posit.h). */\n"
            f"static struct {{\n    uint32_t w[{w}];\n    uint8_t nar;\n}} minun_quire_{d};\n")


_POSIT_FORMATS = [(n, es) for n in (*range(8, 17), 32) for es in (0, 1, 2)]


def posit_storage(n: int) -> int:
    """The C integer width a posit<n, es> pattern is stored in, sign-extended from n bits
    (as dialects/num.py's PositType.storage_width)."""
    return 8 if n <= 8 else 16 if n <= 16 else 32


def posit_result(expr: str, n: int) -> str:
    """The runtime's n-bit pattern `expr` (in the low bits of a posit_t) as the stored,
    sign-extended integer."""
    w = posit_storage(n)
    if n == w:
        return f"(int{w}_t){expr}"
    return f"(int{w}_t)((int32_t)((uint32_t){expr} << {32 - n}) >> {32 - n})"


def _posit_wrappers(n: int, es: int) -> dict[str, tuple[tuple[str, ...], Callable]]:
    w = posit_storage(n)
    t, u = f"int{w}_t", f"uint{w}_t"
    p = f"minun_p{n}e{es}"
    out: dict[str, tuple[tuple[str, ...], Callable]] = {}

    def fn(text: str) -> Callable[[Profile], str]:
        return lambda prof: text

    for op in ("add", "sub", "mul", "div"):
        out[f"{p}_{op}"] = (("minun_posit",), fn(
            f"static inline {t} {p}_{op}({t} a, {t} b)\n{{\n"
            f"    return {posit_result(f'posit_{op}(({u})a, ({u})b, {n}, {es})', n)};\n}}\n"))
    for op in ("exp", "sigmoid", "tanh", "sqrt", "log"):
        out[f"{p}_{op}"] = (("minun_posit",), fn(
            f"static inline {t} {p}_{op}({t} x)\n{{\n"
            f"    return {posit_result(f'posit_{op}(({u})x, {n}, {es})', n)};\n}}\n"))
    if n != w:  # two's complement of the n-bit pattern (minun_mlir/formats/posit/loops.py)
        out[f"{p}_neg"] = (("minun_posit",), fn(
            f"static inline {t} {p}_neg({t} x)\n{{\n"
            f"    return {posit_result('(0u - (uint32_t)x)', n)};\n}}\n"))
    for n2, es2 in _POSIT_FORMATS:
        if (n2, es2) != (n, es):
            t2 = f"int{posit_storage(n2)}_t"
            out[f"{p}_to_p{n2}e{es2}"] = (("minun_posit",), fn(
                f"static inline {t2} {p}_to_p{n2}e{es2}({t} x)\n{{\n    return "
                f"{posit_result(f'posit_convert(({u})x, {n}, {es}, {n2}, {es2})', n2)};"
                "\n}\n"))
    for d in range(1, MAX_QUIRE_DEPTH + 1):
        q, deps = f"&minun_quire_{d}", (f"minun_quire_{d}",)
        out[f"{p}_qclear_{d}"] = (deps, fn(
            f"static inline void {p}_qclear_{d}(void)\n{{\n"
            f"    posit_quire_clear({q}, {n}, {es});\n}}\n"))
        out[f"{p}_fma_{d}"] = (deps, fn(
            f"static inline void {p}_fma_{d}({t} a, {t} b)\n{{\n"
            f"    posit_quire_fma({q}, ({u})a, ({u})b, {n}, {es});\n}}\n"))
        pop = posit_result(f"posit_quire_to_posit({q}, {n}, {es})", n)
        out[f"{p}_qpop_{d}"] = (deps, fn(
            f"static inline {t} {p}_qpop_{d}(void)\n{{\n    return {pop};\n}}\n"))
    return out


HELPERS["minun_posit"] = ((), lambda p: _POSIT_BASE)
for _d in range(1, MAX_QUIRE_DEPTH + 1):  # the text: _quire_storage (runtime_header)
    HELPERS[f"minun_quire_{_d}"] = (("minun_posit",), lambda p: "")
for _n, _es in _POSIT_FORMATS:
    HELPERS.update(_posit_wrappers(_n, _es))


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
HELPERS["minun_bf16"] = ((), lambda p: _BF16_BASE)
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
# byte products (i, j) added at byte i + j, each carry taken up to byte 7; the four (i, i)
# first, moved into place (they do not overlap). mul leaves r1, avr-gcc's zero register,
# dirty: cleared at the end. Elsewhere (host tests of this text) the C product.
_AVR_UMUL32 = """
/* The 64-bit product a * b as two words: 16 mul, no libgcc call. */
static inline __attribute__((always_inline)) void minun_umul32(uint32_t a, uint32_t b,
                                                              uint32_t *lo, uint32_t *hi)
{
#ifdef __AVR__
    uint32_t l, h;
    uint8_t z;
    __asm__ ("clr %[z]\\n\\t" "mul %A[a], %A[b]\\n\\t" "movw %A[l], r0\\n\\t"
             "mul %B[a], %B[b]\\n\\t" "movw %C[l], r0\\n\\t" "mul %C[a], %C[b]\\n\\t"
             "movw %A[h], r0\\n\\t" "mul %D[a], %D[b]\\n\\t" "movw %C[h], r0\\n\\t"
             "mul %B[a], %A[b]\\n\\t" "add %B[l], r0\\n\\t" "adc %C[l], r1\\n\\t"
             "adc %D[l], %[z]\\n\\t" "adc %A[h], %[z]\\n\\t" "adc %B[h], %[z]\\n\\t"
             "adc %C[h], %[z]\\n\\t" "adc %D[h], %[z]\\n\\t" "mul %A[a], %B[b]\\n\\t"
             "add %B[l], r0\\n\\t" "adc %C[l], r1\\n\\t" "adc %D[l], %[z]\\n\\t"
             "adc %A[h], %[z]\\n\\t" "adc %B[h], %[z]\\n\\t" "adc %C[h], %[z]\\n\\t"
             "adc %D[h], %[z]\\n\\t" "mul %C[a], %A[b]\\n\\t" "add %C[l], r0\\n\\t"
             "adc %D[l], r1\\n\\t" "adc %A[h], %[z]\\n\\t" "adc %B[h], %[z]\\n\\t"
             "adc %C[h], %[z]\\n\\t" "adc %D[h], %[z]\\n\\t" "mul %A[a], %C[b]\\n\\t"
             "add %C[l], r0\\n\\t" "adc %D[l], r1\\n\\t" "adc %A[h], %[z]\\n\\t"
             "adc %B[h], %[z]\\n\\t" "adc %C[h], %[z]\\n\\t" "adc %D[h], %[z]\\n\\t"
             "mul %D[a], %A[b]\\n\\t" "add %D[l], r0\\n\\t" "adc %A[h], r1\\n\\t"
             "adc %B[h], %[z]\\n\\t" "adc %C[h], %[z]\\n\\t" "adc %D[h], %[z]\\n\\t"
             "mul %A[a], %D[b]\\n\\t" "add %D[l], r0\\n\\t" "adc %A[h], r1\\n\\t"
             "adc %B[h], %[z]\\n\\t" "adc %C[h], %[z]\\n\\t" "adc %D[h], %[z]\\n\\t"
             "mul %C[a], %B[b]\\n\\t" "add %D[l], r0\\n\\t" "adc %A[h], r1\\n\\t"
             "adc %B[h], %[z]\\n\\t" "adc %C[h], %[z]\\n\\t" "adc %D[h], %[z]\\n\\t"
             "mul %B[a], %C[b]\\n\\t" "add %D[l], r0\\n\\t" "adc %A[h], r1\\n\\t"
             "adc %B[h], %[z]\\n\\t" "adc %C[h], %[z]\\n\\t" "adc %D[h], %[z]\\n\\t"
             "mul %D[a], %B[b]\\n\\t" "add %A[h], r0\\n\\t" "adc %B[h], r1\\n\\t"
             "adc %C[h], %[z]\\n\\t" "adc %D[h], %[z]\\n\\t" "mul %B[a], %D[b]\\n\\t"
             "add %A[h], r0\\n\\t" "adc %B[h], r1\\n\\t" "adc %C[h], %[z]\\n\\t"
             "adc %D[h], %[z]\\n\\t" "mul %D[a], %C[b]\\n\\t" "add %B[h], r0\\n\\t"
             "adc %C[h], r1\\n\\t" "adc %D[h], %[z]\\n\\t" "mul %C[a], %D[b]\\n\\t"
             "add %B[h], r0\\n\\t" "adc %C[h], r1\\n\\t" "adc %D[h], %[z]\\n\\t"
             "clr __zero_reg__"
             : [l] "=&r" (l), [h] "=&r" (h), [z] "=&r" (z)
             : [a] "r" (a), [b] "r" (b)
             : "r0");
    *lo = l;
    *hi = h;
#else
    uint64_t p = (uint64_t)a * b;
    *lo = (uint32_t)p;
    *hi = (uint32_t)(p >> 32);
#endif
}
"""
HELPERS["minun_umul32"] = ((), lambda p: _AVR_UMUL32 if p.avr_asm else "")
_AVR_UMUL16X32 = """
/* The 48-bit product a * b as a word and a half: 8 mul, no libgcc call. */
static inline __attribute__((always_inline)) void minun_umul16x32(uint16_t a, uint32_t b,
                                                                 uint32_t *lo, uint16_t *hi)
{
#ifdef __AVR__
    uint32_t l;
    uint16_t h;
    uint8_t z;
    __asm__ ("clr %[z]\\n\\t" "mul %A[a], %A[b]\\n\\t" "movw %A[l], r0\\n\\t"
             "mul %A[a], %C[b]\\n\\t" "movw %C[l], r0\\n\\t"
             "mul %B[a], %D[b]\\n\\t" "movw %A[h], r0\\n\\t"
             "mul %A[a], %B[b]\\n\\t" "add %B[l], r0\\n\\t" "adc %C[l], r1\\n\\t"
             "adc %D[l], %[z]\\n\\t" "adc %A[h], %[z]\\n\\t" "adc %B[h], %[z]\\n\\t"
             "mul %B[a], %A[b]\\n\\t" "add %B[l], r0\\n\\t" "adc %C[l], r1\\n\\t"
             "adc %D[l], %[z]\\n\\t" "adc %A[h], %[z]\\n\\t" "adc %B[h], %[z]\\n\\t"
             "mul %B[a], %B[b]\\n\\t" "add %C[l], r0\\n\\t" "adc %D[l], r1\\n\\t"
             "adc %A[h], %[z]\\n\\t" "adc %B[h], %[z]\\n\\t"
             "mul %A[a], %D[b]\\n\\t" "add %D[l], r0\\n\\t" "adc %A[h], r1\\n\\t"
             "adc %B[h], %[z]\\n\\t"
             "mul %B[a], %C[b]\\n\\t" "add %D[l], r0\\n\\t" "adc %A[h], r1\\n\\t"
             "adc %B[h], %[z]\\n\\t"
             "clr __zero_reg__"
             : [l] "=&r" (l), [h] "=&r" (h), [z] "=&r" (z)
             : [a] "r" (a), [b] "r" (b)
             : "r0");
    *lo = l;
    *hi = h;
#else
    uint64_t p = (uint64_t)a * b;
    *lo = (uint32_t)p;
    *hi = (uint16_t)(p >> 32);
#endif
}
"""
HELPERS["minun_umul16x32"] = ((), lambda p: _AVR_UMUL16X32 if p.avr_asm else "")
HELPERS["minun_zs_mbqm"] = (("minun_umul32", "minun_umul16x32"), lambda p: (
    _ZS_MBQM_NARROW if p.avr_asm else _ZS_MBQM_WIDE))
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
        int32_t t = (int32_t)((1u << 29) - (uint32_t)minun_zs_mbqm(half, r, 0));
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


def uses_posits(names: Iterable[str]) -> bool:
    """Whether a model calling `names` needs the posit runtime's files beside its C."""
    return "minun_posit" in closure(names)


# shift counts the C printer replaces on AVR: not 8, 16, 24 (moves) or 31 (a sign fill)
AVR_ASR32 = tuple(n for n in range(1, 31) if n % 8)
for _n in AVR_ASR32:
    HELPERS[f"minun_asr32_{_n}"] = ((), _avr_asr32(_n))
LIBM = ("expf", "tanhf", "sqrtf", "logf")


def closure(names: Iterable[str]) -> list[str]:
    """The helpers needed by `names`, dependencies first, in a stable order."""
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        if name in LIBM:
            order.append(name)
            return
        if name not in HELPERS:
            raise KeyError(f"unknown runtime helper '{name}'")
        for dep in HELPERS[name][0]:
            visit(dep)
        order.append(name)

    for n in sorted(names):
        visit(n)
    return order


def runtime_header(profile: Profile, used: Iterable[str]) -> str:
    names = closure(used)
    lines = [
        "/* minun_runtime.h: helpers of the generated model (docs/numerics.md), generated "
        f"by minun-mlir for the {profile.name} profile. */",
        "#ifndef MINUN_RUNTIME_H",
        "#define MINUN_RUNTIME_H",
        "",
        "#include <stdint.h>",
    ]
    if any(n in LIBM for n in names):
        lines.append("#include <math.h>")
    if profile.flash:
        lines += [
            "#include <avr/pgmspace.h>",
            "",
            "/* Weights and tables stay in program memory and are read with pgm_read_*. */",
            "#define MINUN_FLASH PROGMEM",
            "#define MINUN_RD8(p) ((int8_t)pgm_read_byte(p))",
            "#define MINUN_RD16(p) ((int16_t)pgm_read_word(p))",
            "#define MINUN_RD32(p) ((int32_t)pgm_read_dword(p))",
            "#define MINUN_RDF(p) pgm_read_float(p)",
        ]
    text = "\n".join(lines) + "\n\n"
    for n in names:
        if n.startswith("minun_quire_"):
            text += _quire_storage(int(n.rsplit("_", 1)[1]), names)
        elif n not in LIBM:
            text += HELPERS[n][1](profile)
    return text + "\n#endif /* MINUN_RUNTIME_H */\n"



# --------------------------------------------------------------------------------------
# Target kernels: the signatures cemit.kernel checks (select-target-kernels makes them)
# --------------------------------------------------------------------------------------


# operand and result types: "i32", "i8|i16" (either), "ptr16" (the address of an int16_t
# element), "int" (any integer or index: counts and strides); None: no result
_KERNELS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "minun_mul16": (("i8|i16", "i8|i16"), "i32"),
    "minun_mac16": (("i32", "i8|i16", "i8|i16"), "i32"),
    "minun_dot16_dsp": (("i32", "ptr16", "ptr16", "int"), "i32"),
    "minun_dot8_dsp": (("i16|i32", "ptr8", "ptr8", "int"), "i32"),
    "minun_dot16_rows_dsp": (("i32", "ptr16", "int", "ptr16", "int", "int", "int"), "i32"),
    "minun_dot8_rows_dsp": (("i16|i32", "ptr8", "int", "ptr8", "int", "int", "int"), "i32"),
    "minun_dot8_off_dsp": (("i32", "ptr8", "ptr8", "int", "int"), "i32"),
    "minun_dot8_off_rows_dsp": (("i32", "ptr8", "int", "ptr8", "int", "int", "int", "int"),
                                "i32"),
    "minun_dot16_mv_dsp": (("ptr32", "ptr16", "int", "ptr16", "int", "int"), None),
    "minun_dot16_rows_mc_dsp": (("ptr32", "ptr16", "int", "ptr16", "int", "int", "int", "int",
                                 "int"), None),
    "minun_dot8_rows_mc_dsp": (("ptr32", "ptr8", "int", "ptr8", "int", "int", "int", "int",
                                "int"), None),
    "minun_dot8_off_rows_mc_dsp": (("ptr32", "ptr8", "int", "ptr8", "int", "int", "int", "int",
                                    "int", "int"), None),
    "minun_dot8_mv_dsp": (("ptr32", "ptr8", "int", "ptr8", "int", "int"), None),
    "minun_dot8_off_mv_dsp": (("ptr32", "ptr8", "int", "ptr8", "int", "int", "int"), None),
    "minun_dot16_sse2": (("ptr16", "ptr16", "int", "i32"), "i32"),
    "minun_scatter16": (("ptr32", "ptr8", "ptr16", "i8|i16", "int"), None),
}
_AVR_DOT = re.compile(r"minun_dot(16|8)_(fr|rr)(?:_(m?\d+)_(m?\d+))?")


def kernel_signature(name: str) -> tuple[tuple[str, ...], str | None] | None:
    """(operand types, result type or None) of the target kernel `name` (_KERNELS), or None when
    it is not one. The AVR dot products are named by their strides (minun_dot16_fr_1_m3)
    and registered as helpers here, so IR read back from text prints."""
    if name in _KERNELS:
        return _KERNELS[name]
    m = re.fullmatch(r"minun_dot8_(z128|off)_(fr|rr)", name)
    if m and m.group(1) == "z128":
        avr_dot8_z128_helper(m.group(2) == "fr")
        return ("i32", "ptr8", "ptr8", "int"), "i32"
    if m:
        avr_dot8_off_helper(m.group(2) == "fr")
        return ("i32", "ptr8", "ptr8", "int", "int"), "i32"
    m = re.fullmatch(r"minun_asr32_(\d+)", name)
    if m and int(m.group(1)) in AVR_ASR32:
        return ("i32",), "i32"
    m = _AVR_DOT.fullmatch(name)
    if m is None or (m.group(1) == "8") != (m.group(3) is None):
        return None
    width, flash = int(m.group(1)), m.group(2) == "fr"
    if width == 8:
        avr_dot8_helper(flash)
    else:
        stride = [int(s.replace("m", "-")) for s in m.group(3, 4)]
        if avr_dot_helper(flash, *stride) != name:
            return None
    return ("i32", f"ptr{width}", f"ptr{width}", "int"), "i32"
