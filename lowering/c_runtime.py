"""minun_runtime.h: the C side of docs/numerics.md that generated code calls.

The header is generated per model: it holds only the helpers the model calls (and what
they call), so that nothing unused is compiled (`-Wall` warns about unused static tables).
Table contents come from the Python functions of formats/fixed/arith.py that the evaluator
uses (`shiftry_tables`), so the evaluator and the C read the same integers; the rounding
of each shift is spelled by `shift_right` below, the C twin of `fixed.shift_right`.

Tables live in program memory on AVR (`PROGMEM`, read with `pgm_read_*`); elsewhere they
are plain `const` arrays (flash on Cortex-M, .rodata on x86).

The helpers of fixed point and the target kernels are here; the posit, bfloat16 and
zero-skew helpers are in their formats' packages (minun_mlir/formats/<name>/runtime.py),
each a HELPERS table this module adds to its own.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from minun_mlir.formats.bfloat16 import runtime as bfloat16_runtime
from minun_mlir.formats.fixed import arith as fx
from minun_mlir.formats.posit import runtime as posit_runtime
from minun_mlir.formats.zero_skew import runtime as zero_skew_runtime


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
        return (
            c_array("int16_t", "minun_exp16_t1", t1, p)
            + c_array("int16_t", "minun_exp16_t2", t2, p)
            + f"""
/* e^x for x <= 0 at Shiftry's scales (in 2^-11, out 2^-14); positive x count as 0. */
static inline int16_t minun_exp16_{rounding}(int16_t x)
{_exp16_body(p, rounding)}""")

    return make


def _exp16_body(p: Profile, rounding: str) -> str:
    _, s_out, psi = fx.SHIFTRY_EXP[16]
    return f"""{{
    int32_t u = x < 0 ? -(int32_t)x : 0;
    int32_t prod;
    if (u > 32767)
        u = 32767;
    prod = (int32_t){p.read("int16_t", f"minun_exp16_t1[u >> {psi}]")}
        * {p.read("int16_t", f"minun_exp16_t2[u & {(1 << psi) - 1}]")};
    return (int16_t){shift_right("prod", s_out, rounding, nonneg=True)};
}}
"""


def _div(p: Profile, num: str, den: str) -> str:
    """num / den of Shiftry's sigmoid and tanh: 0 <= num, 16384 <= den (a = e^x in [0,
    16384]), so the quotient is the unsigned one and at most 2^14. On AVR a 16-step
    division (minun_udiv32_16) instead of libgcc's 32-step __divmodsi4."""
    if p.avr_asm:
        return f"minun_udiv32_16((uint32_t)({num}), (uint16_t)({den}))"
    return f"({num}) / ({den})"


def _sigmoid16(rounding: str, shared: bool = False) -> Callable[[Profile], str]:
    """Shiftry's sigmoid; `shared`: the copy a model calls from several places
    (select-target-kernels picks it on Cortex-M), with its own always-inlined exp: gcc -Os
    keeps such a sigmoid out of line, and exp, then called from three places (twice
    here, once by tanh), too: a nested call per hidden unit. Called from one place,
    the sigmoid is inlined into the model's loop, where a larger body costs registers."""
    def make(p: Profile) -> str:
        name, exp, head = f"minun_sigmoid16_{rounding}", f"minun_exp16_{rounding}", ""
        if shared:
            name, exp = name + "_shared", exp + "_in"
            head = f"""
/* Shiftry's exp for minun_sigmoid16_{rounding}_shared, always inlined there. */
static inline __attribute__((always_inline)) int16_t {exp}(int16_t x)
{_exp16_body(p, rounding)}"""
        return head + f"""
/* Shiftry's sigmoid (Library 8), in 2^-11, out 2^-14, C integer division. */
static inline int16_t {name}(int16_t x)
{{
    int32_t a;
    if (x <= 0) {{
        a = {exp}(x);
        return (int16_t)({_div(p, "16384L * a", "16384L + a")});
    }}
    a = {exp}((int16_t)-x);
    return (int16_t)({_div(p, "16384L * 16384L", "16384L + a")});
}}
"""

    return make


def _tanh16(rounding: str) -> Callable[[Profile], str]:
    def make(p: Profile) -> str:
        return f"""
/* Shiftry's tanh (Library 9): a = e^(-2|x|) (saturated to 16 bits), in 2^-11, out 2^-14. */
static inline int16_t minun_tanh16_{rounding}(int16_t x)
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


# A fixed-point input s bits down (a rescale that truncates: x / 2^s toward zero) read
# inside an int16 dot product (kernel_match.shifted_dot): both halves of a word halved
# at once, SHADD16 adding each half's sign bit (the word shifted right 15, masked to bits
# 0 and 16) and halving, exactly (x + ((x >> 15) & 1)) >> 1 for each; s halvings toward
# zero are one division by 2^s toward zero, (x + ((x >> 15) & (2^s - 1))) >> s; then
# SMLAD.
SHIFTED_DOT_BITS = (1, 2, 3)


def _arm_dot16_shr(s: int) -> str:
    def halve(t: str) -> str:
        return s * (f'                 "and %[t4], %[m], %[{t}], lsr #15\\n\\t"\n'
                    f'                 "shadd16 %[{t}], %[{t}], %[t4]\\n\\t"\n')

    bias = (1 << s) - 1
    return rf"""
#if defined(__ARM_FEATURE_DSP)
/* acc + sum of ((a[i] + ((a[i] >> 15) & {bias})) >> {s}) * b[i] for i < n, modulo 2^32
 * (a[i] / 2^{s} toward zero): four products per step (two words of each array, each word
 * of a halved {s} times by AND + SHADD16, two SMLADs), then a pair and a product. */
static inline __attribute__((always_inline)) int32_t minun_dot16_shr{s}_dsp(
    int32_t acc, const int16_t *a, const int16_t *b, int n)
{{
    int k;
    int32_t t0, t1, t2, t3, t4;
    const int32_t m = 0x10001;
    if (n <= 0)
        return acc;
    k = n >> 2;
    if (k) {{
        __asm__ ("1:\n\t"
                 "ldr %[t0], [%[a]], #4\n\t"
                 "ldr %[t1], [%[b]], #4\n\t"
                 "ldr %[t2], [%[a]], #4\n\t"
                 "ldr %[t3], [%[b]], #4\n\t"
{halve("t0")}{halve("t2")}                 "smlad %[acc], %[t0], %[t1], %[acc]\n\t"
                 "smlad %[acc], %[t2], %[t3], %[acc]\n\t"
                 "subs %[k], %[k], #1\n\t"
                 "bne 1b"
                 : [acc] "+r" (acc), [a] "+r" (a), [b] "+r" (b), [k] "+r" (k),
                   [t0] "=&r" (t0), [t1] "=&r" (t1), [t2] "=&r" (t2), [t3] "=&r" (t3),
                   [t4] "=&r" (t4)
                 : [m] "r" (m) : "cc", "memory");
    }}
    if (n & 2) {{
        __asm__ ("ldr %[t0], [%[a]], #4\n\t"
                 "ldr %[t1], [%[b]], #4\n\t"
{halve("t0")}                 "smlad %[acc], %[t0], %[t1], %[acc]"
                 : [acc] "+r" (acc), [a] "+r" (a), [b] "+r" (b),
                   [t0] "=&r" (t0), [t1] "=&r" (t1), [t4] "=&r" (t4)
                 : [m] "r" (m) : "memory");
    }}
    if (n & 1)
        acc = (int32_t)((uint32_t)acc + (uint32_t)((int32_t)((*a + ((*a >> 15) & {bias})) >> {s})
                                                   * (int32_t)*b));
    return acc;
}}
#endif
"""


def _arm_rows(bits: int, kind: str = "") -> str:
    t = f"int{bits}_t"
    return f"""
#if defined(__ARM_FEATURE_DSP)
/* The sum of `rows` dot products of n elements (minun_dot{bits}{kind}_dsp), the arrays
 * advancing by sa and sb elements from one to the next (a convolution's window rows). */
static inline __attribute__((always_inline)) int32_t minun_dot{bits}{kind}_rows_dsp(
    int32_t acc, const {t} *a, int sa, const {t} *b, int sb, int n, int rows)
{{
    for (; rows > 0; rows--) {{
        acc = minun_dot{bits}{kind}_dsp(acc, a, b, n);
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
for _s in SHIFTED_DOT_BITS:  # an int16 dot product over its input divided by 2^s
    HELPERS[f"minun_dot16_shr{_s}_dsp"] = ((), lambda p, s=_s: _arm_dot16_shr(s))
    HELPERS[f"minun_dot16_shr{_s}_rows_dsp"] = ((f"minun_dot16_shr{_s}_dsp",),
                                               lambda p, s=_s: _arm_rows(16, f"_shr{s}"))
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
    HELPERS[f"minun_sigmoid16_{_r}_shared"] = ((f"minun_exp16_{_r}", "minun_udiv32_16"),
                                               _sigmoid16(_r, shared=True))

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


# The formats' own helpers (their packages' runtime.py): same table, one dict each.
HELPERS.update(posit_runtime.HELPERS)
HELPERS.update(bfloat16_runtime.HELPERS)
HELPERS.update(zero_skew_runtime.HELPERS)




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
            text += posit_runtime.quire_storage(int(n.rsplit("_", 1)[1]), names)
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
for _s in SHIFTED_DOT_BITS:
    _KERNELS[f"minun_dot16_shr{_s}_dsp"] = _KERNELS["minun_dot16_dsp"]
    _KERNELS[f"minun_dot16_shr{_s}_rows_dsp"] = _KERNELS["minun_dot16_rows_dsp"]
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
