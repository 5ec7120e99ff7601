"""Integer kernels of the zero-skew (affine) int8 representation, as TFLite's reference
integer kernels and gemmlowp compute them (docs/numerics.md, "The zero-skew int8
representation").

A value is an integer q standing for `scale * (q - zero_point)`. Everything here is
integer-only except what a compiler does once per tensor: choosing (scale, zero_point)
from a profiled range (`choose_params`, TFLite's ChooseQuantizationParams with its
nudging of the range to include 0), turning a real multiplier into a 32-bit fixed-point
multiplier and a shift (`quantize_multiplier`, TFLite's QuantizeMultiplier) and building
the 256-entry tables of exp, sigmoid and tanh (`table`).

The requantization primitives are gemmlowp's (fixedpoint.h):

- `srdhm(a, b)`: SaturatingRoundingDoublingHighMul, the high 32 bits of 2ab rounded to
  nearest, ties toward +infinity (the nudge, +2^30 or 1 - 2^30 by the sign, then C's
  truncating division: 0.5 -> 1 but -0.5 -> 0), the one overflowing case
  (a = b = -2^31) saturated to 2^31 - 1;
- `rdbpot(x, e)`: RoundingDivideByPOT, x / 2^e rounded to nearest, ties away from zero;
- `mbqm(x, m, shift)`: TFLite's MultiplyByQuantizedMultiplier (the double-rounding
  form): `rdbpot(srdhm(x * 2^max(shift, 0), m), max(-shift, 0))`.

numpy arrays of int64 in, int64 out; every intermediate is what the int32/int64 C
computes (minun_zs_mbqm in minun_runtime.h, formats/zero_skew/runtime.py).
"""

from __future__ import annotations

import math

import numpy as np

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
QMIN, QMAX = -128, 127  # int8
# the left shift of TFLite's int8 ADD/SUB kernels (kernels/add.cc: 20 for int8)
ADD_LEFT_SHIFT = 20


def int_range(bits: int) -> tuple[int, int]:
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def round_away(x) -> np.ndarray:
    """Round to nearest, ties away from zero (C's round(), TFLite's TfLiteRound), on
    doubles: x - trunc(x) is exact, so there is no double rounding."""
    x = np.asarray(x, dtype=np.float64)
    t = np.trunc(x)
    return t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0.0)


def wrap32(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.int64)
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _tdiv(n: np.ndarray, d: int) -> np.ndarray:
    """C's integer division (truncation toward zero) by a positive d."""
    return np.where(n >= 0, n // d, -((-n) // d))


def srdhm(a, b: int) -> np.ndarray:
    """gemmlowp's SaturatingRoundingDoublingHighMul(a, b) on int32 a (array) and b."""
    a = np.asarray(a, dtype=np.int64)
    ab = a * np.int64(b)  # |a|, |b| <= 2^31: exact in int64
    nudge = np.where(ab >= 0, np.int64(1 << 30), np.int64(1 - (1 << 30)))
    high = _tdiv(ab + nudge, 1 << 31)
    overflow = (a == INT32_MIN) & (b == INT32_MIN)
    return np.where(overflow, np.int64(INT32_MAX), high)


def rdbpot(x, exponent: int) -> np.ndarray:
    """gemmlowp's RoundingDivideByPOT(x, exponent), 0 <= exponent <= 31."""
    x = np.asarray(x, dtype=np.int64)
    if exponent == 0:
        return x
    mask = np.int64((1 << exponent) - 1)
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> np.int64(exponent)) + (remainder > threshold)


def mbqm(x, multiplier: int, shift: int) -> np.ndarray:
    """TFLite's MultiplyByQuantizedMultiplier(x, multiplier, shift) on int32 x."""
    left, right = max(shift, 0), max(-shift, 0)
    return rdbpot(srdhm(wrap32(np.asarray(x, dtype=np.int64) << np.int64(left)),
                        multiplier), right)


def quantize_multiplier(real: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplier: real ~= multiplier * 2^(shift - 31), the multiplier in
    [2^30, 2^31) (0 for real = 0 or a shift below -31; shifts above 30 saturate)."""
    if not real > 0.0:
        if real == 0.0:
            return 0, 0
        raise ValueError(f"a requantization multiplier must be >= 0, got {real}")
    q, shift = math.frexp(real)  # real = q * 2^shift, q in [0.5, 1)
    q_fixed = int(round_away(q * float(1 << 31)))
    if q_fixed == 1 << 31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    if shift > 30:
        return INT32_MAX, 30
    return q_fixed, shift


def fold_divisor(multiplier: int, shift: int, n: int) -> tuple[int, int]:
    """TFLM's int8 MEAN (QuantizedMeanOrSum): 1/n folded into (multiplier, shift), the
    multiplier times 2^k / n truncated, k = min(floor(log2 n), 32, 31 + shift)."""
    k = min(n.bit_length() - 1, 32, 31 + shift)
    return (multiplier << k) // n, shift - k


# significant bits the profiled ends keep (rounded outward): the numpy and the native
# profiles may differ in the last bits of a float (minun_mlir/native.py), and both must
# give the same program
RANGE_BITS = 12


def outward(v: float, bits: int = RANGE_BITS) -> float:
    """v rounded away from zero to `bits` significant bits (exact in double)."""
    if v == 0.0 or not math.isfinite(v):
        return v
    m, e = math.frexp(abs(v))
    return math.copysign(math.ldexp(math.ceil(math.ldexp(m, bits)), e - bits), v)


def choose_params(rmin: float, rmax: float, bits: int = 8) -> tuple[float, int]:
    """(scale, zero_point) for reals in [rmin, rmax] (TFLite's ChooseQuantizationParams):
    the range extended to include 0, scale = (rmax - rmin) / (qmax - qmin), the zero point
    the rounded one of the two candidates (from qmin or from qmax) with the smaller error,
    clamped to the integer range, so that 0 is exactly representable. An empty range
    (only 0 seen) gets scale 1 and zero point 0."""
    qmin, qmax = int_range(bits)
    rmin, rmax = min(float(rmin), 0.0), max(float(rmax), 0.0)
    if rmax == rmin:
        return 1.0, 0
    scale = (rmax - rmin) / (qmax - qmin)
    zp_from_min = qmin - rmin / scale
    zp_from_max = qmax - rmax / scale
    err_min = abs(qmin) + abs(rmin / scale)
    err_max = abs(qmax) + abs(rmax / scale)
    zp = zp_from_min if err_min < err_max else zp_from_max
    if zp < qmin:
        return scale, qmin
    if zp > qmax:
        return scale, qmax
    return scale, int(round_away(zp))


def symmetric_scale(values: np.ndarray, bits: int = 8) -> float:
    """Weights: symmetric per-tensor scale max|w| / (2^(bits-1) - 1), zero point 0 (TFLite's
    int8 weights); 1.0 for all-zero weights."""
    m = float(np.abs(values).max()) if np.size(values) else 0.0
    return m / ((1 << (bits - 1)) - 1) if m > 0 else 1.0


def quantize(values, scale: float, zero_point: int, bits: int) -> np.ndarray:
    """Reals -> stored integers: round(v / scale) + zero_point (ties away from zero, in
    double), saturated to the bits."""
    lo, hi = int_range(bits)
    r = round_away(np.asarray(values, dtype=np.float64) / scale)
    r = np.clip(r, lo - 1.0 - abs(zero_point), hi + 1.0 + abs(zero_point))
    return np.clip(r.astype(np.int64) + zero_point, lo, hi)


def tflite_quantize(values, scale: float, zero_point: int, bits: int) -> np.ndarray:
    """TFLite's QUANTIZE of float32 reals (AffineQuantize): the float32 quotient
    v / float32(scale) rounded half away from zero, + zero_point, saturated. (In double, as
    `quantize`, a quotient float32 rounds onto a tie can round the other way.)"""
    lo, hi = int_range(bits)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        f = np.asarray(values, dtype=np.float32) / np.float32(scale)
    r = round_away(np.nan_to_num(f.astype(np.float64)))
    r = np.clip(r, lo - 1.0 - abs(zero_point), hi + 1.0 + abs(zero_point))
    return np.clip(r.astype(np.int64) + zero_point, lo, hi)


def quantize_per_element(values, scales, bits: int) -> np.ndarray:
    """Reals -> stored integers with zero point 0 at scales broadcast against them (a
    per-channel weight or bias): round(v / scale), ties away from zero, saturated."""
    lo, hi = int_range(bits)
    r = round_away(np.asarray(values, dtype=np.float64) / np.asarray(scales, np.float64))
    return np.clip(np.clip(r, lo - 1.0, hi + 1.0).astype(np.int64), lo, hi)


def dequantize(q, scale: float, zero_point: int) -> np.ndarray:
    return scale * (np.asarray(q, dtype=np.float64) - zero_point)


def requantize(x, zp_in: int, zp_out: int, left_shift: int, multiplier: int, shift: int,
               bits: int) -> np.ndarray:
    """`clamp(zp_out + mbqm((x - zp_in) * 2^left_shift, multiplier, shift))` (num.requantize;
    TFLite's output stage of FULLY_CONNECTED / CONV_2D / MUL, and both stages of ADD)."""
    lo, hi = int_range(bits)
    d = wrap32((np.asarray(x, dtype=np.int64) - zp_in) << np.int64(left_shift))
    return np.clip(mbqm(d, multiplier, shift) + zp_out, lo, hi)


FUNCTIONS = {
    "exp": np.exp,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "tanh": np.tanh,
}


def table(function: str, s_in: float, zp_in: int, s_out: float, zp_out: int) -> np.ndarray:
    """The 256 outputs of an int8 -> int8 function, for inputs -128..127 in order: the
    real function (float64) of the dequantized input, quantized at the output's scale and
    zero point (what TFLite's int8 LOGISTIC / TANH build with their LUT)."""
    q = np.arange(QMIN, QMAX + 1)
    with np.errstate(over="ignore"):
        y = FUNCTIONS[function](dequantize(q, s_in, zp_in))
    y = np.where(np.isfinite(y), y, np.sign(y) * 1e300)
    return quantize(y, s_out, zp_out, 8)


# int8 softmax's output quantization: probabilities in [0, 1] on all 256 codes, 1/255 (1.0
# is code 127). TFLite's 1/256 tops out at 255/256: a confident classifier's 1.0 loses
# 0.4% there (the zoo's torch mlp_softmax: 0.26% median output error, 0.22% at 1/255).
# num.softmax takes either (num.softmax_levels of its result type).
SOFTMAX_SCALE, SOFTMAX_ZP = 1.0 / 255, -128


def softmax_bits(n: int) -> int:
    """K, the fraction bits of softmax's exp table for rows of n: the sum of n entries of
    at most 2^K stays below 2^31."""
    return 30 - max(n - 1, 1).bit_length()


def softmax_table(s_in: float, n: int) -> np.ndarray:
    """T[k] = round(exp(-s_in k) 2^K) for k = 0..255 (k = max - q of an int8 row; ties
    away from zero), int64."""
    k = np.arange(256, dtype=np.float64)
    return round_away(np.exp(-s_in * k) * float(1 << softmax_bits(n))).astype(np.int64)


def softmax(q: np.ndarray, s_in: float, levels: int = 255) -> np.ndarray:
    """Zero-skew softmax over the last axis of int8 q at scale s_in: e = T[max - q],
    y = clamp(floor((D e + floor(sum / 2)) / sum) - 128) (the probability e / sum rounded
    half up to 1/D, zero point -128; D = `levels`, 255 or TFLite's 256)."""
    q = np.asarray(q, dtype=np.int64)
    table = softmax_table(s_in, q.shape[-1])
    e = table[np.max(q, axis=-1, keepdims=True) - q]
    total = e.sum(axis=-1, keepdims=True)
    return np.clip((levels * e + total // 2) // total + SOFTMAX_ZP, QMIN, QMAX)


# log_softmax: the softmax exp table's row sum, its ln by fixed point's minun_lnsum
LOG_FRAC = 16  # the ln and x - max are added at this scale (fixed.LOG_SCALE)


def log_softmax_constants(s_in: float, s_out: float) -> tuple[int, int, int]:
    """(c, M, k): s_in d at 2^16 is (d c + 2^15) >> 16 with c = round(s_in 2^32), and the
    sum at 2^16 goes to the output's scale by MBQM with (M, k) =
    QuantizeMultiplier(1 / (s_out 2^16))."""
    c = int(round_away(s_in * float(1 << 32)))
    m, k = quantize_multiplier(1.0 / (s_out * float(1 << LOG_FRAC)))
    return c, m, k


def log_softmax(q: np.ndarray, s_in: float, s_out: float, zp_out: int) -> np.ndarray:
    """Zero-skew log_softmax over the last axis of int8 q (scale s_in) to int8 at
    (s_out, zp_out). Per row: d = max - q, the sum of softmax's table T[d] (= exp(-s_in d)
    at 2^K, so the sum is at least 2^K), L = ln(sum / 2^K) at 2^16 (fixed.ln_sum, within
    2^-15), a = (d c + 2^15) >> 16 (s_in d at 2^16); y = clamp(zp_out - MBQM(min(a + L,
    2^31 - 1), M, k)): -(s_in d + L) = log_softmax at the output's scale, rounded once."""
    from minun_mlir.formats.fixed import arith as fx

    q = np.asarray(q, dtype=np.int64)
    n = q.shape[-1]
    c, m, k = log_softmax_constants(s_in, s_out)
    d = np.max(q, axis=-1, keepdims=True) - q
    total = softmax_table(s_in, n)[d].sum(axis=-1, keepdims=True)
    log = fx.ln_sum(total, softmax_bits(n))
    a = (d * np.int64(c) + np.int64(1 << (LOG_FRAC - 1))) >> np.int64(LOG_FRAC)
    y = np.minimum(a + log, INT32_MAX)
    return np.clip(zp_out - mbqm(y, m, k), QMIN, QMAX)


# -- onnxruntime's requantization (num.requantize {mode = onnxruntime}) --------------------
#
# onnxruntime's CPU kernels for QLinearConv, QLinearMatMul and QGemm (MLAS's
# MlasRequantizeOutput, x86) requantize in float32: y = RNE(float32(acc) * scale), the
# scale float32(float32(s_x * s_w) / s_y), clamped, plus the zero point. Emulated here
# with integers only (as the C does, minun_zs_ortq): the float32 scale is m * 2^e with a
# 24-bit m; float32(acc) and the float32 product are |value| rounded to 24 significant
# bits, to nearest even; the product is then rounded to an integer, to nearest even.

ORT_SIG = 24  # float32's significand bits
ORT_MIN_EXP, ORT_MAX_EXP = -64, 31  # exponents past these give 0, or saturate, anyway


def ort_multiplier(s_in: float, s_out: float) -> tuple[int, int]:
    """(m, e) with m * 2^e = onnxruntime's float32 requantization scale
    float32(float32(s_in) / float32(s_out)) exactly; m < 2^24 (in [2^23, 2^24) unless 0).
    s_in is the accumulator's scale s_x * s_w (exact in double for float32 factors, so
    float32(s_in) is ORT's float32 product). e is kept in [-64, 31]: a smaller one gives
    0 for every int32 (m = 0), a larger one saturates every nonzero value as 31 does."""
    scale = np.float32(np.float32(s_in) / np.float32(s_out))
    if not scale > 0 or not np.isfinite(scale):
        if scale == 0:
            return 0, 0
        raise ValueError(f"a requantization scale must be positive and finite, got {scale}")
    frac, exp = math.frexp(float(scale))  # scale = frac * 2^exp, frac in [0.5, 1)
    m, e = int(math.ldexp(frac, ORT_SIG)), exp - ORT_SIG  # exact: 24 bits at most
    while m and m % 2 == 0 and e < ORT_MIN_EXP:
        m, e = m // 2, e + 1
    if e < ORT_MIN_EXP:
        return 0, 0
    return m, min(e, ORT_MAX_EXP)


def bit_length(v) -> np.ndarray:
    """Bits of each nonnegative int64 (0 for 0)."""
    v = np.asarray(v, dtype=np.int64)
    _, e = np.frexp(v.astype(np.float64))  # may be one too large when v rounds up
    e = e.astype(np.int64)
    over = (e > 0) & ((v >> np.maximum(e - 1, 0)) == 0)
    return e - over


def rne_shift(v, n, sticky=False) -> np.ndarray:
    """v / 2^n rounded to nearest, ties to even, for nonnegative int64 v and 0 <= n < 64;
    `sticky`: v has nonzero bits below it (a tie is then above one)."""
    v, n = np.asarray(v, dtype=np.int64), np.asarray(n, dtype=np.int64)
    q = v >> n
    rest = v - (q << n)
    half = np.where(n > 0, np.int64(1) << np.maximum(n - 1, 0), 1 << 62)
    up = (rest > half) | ((rest == half) & (sticky | (q & 1 == 1)))
    return q + up


def round_significand(v, sticky=False) -> tuple[np.ndarray, np.ndarray]:
    """Nonnegative int64 v rounded to 24 significant bits, ties to even (float32's
    rounding of v; `sticky` as for rne_shift), as (a, n) with v ~ a * 2^n, a < 2^24."""
    v = np.asarray(v, dtype=np.int64)
    n = np.maximum(bit_length(v) - ORT_SIG, 0)
    a = rne_shift(v, n, sticky)
    carry = a >> ORT_SIG  # rounded up to 2^24: one more bit
    return a >> carry, n + carry


ORT_SATURATE = 1 << 30  # past any int8 result; adding a zero point cannot overflow int32


def _to_int(p, t) -> np.ndarray:
    """RNE(p * 2^t) for nonnegative p < 2^25, saturated at 2^30."""
    left = np.minimum(np.maximum(t, 0), 8)  # p << 8 < 2^33: saturates below anyway
    big = np.where(t > 8, np.where(p > 0, np.int64(1) << 40, 0), p << left)
    y = np.where(t >= 0, big, rne_shift(p, np.minimum(-t, 63)))
    return np.minimum(y, ORT_SATURATE)


def ort_mul(x, m: int, e: int) -> np.ndarray:
    """RNE(float32(float32(x) * float32(m 2^e))) on int32 x, integers only, saturated to
    +-2^30 (onnxruntime's requantization before the clamp and the zero point)."""
    x = np.asarray(x, dtype=np.int64)
    a, n = round_significand(np.abs(x))  # float32(x)
    p, k = round_significand(a * np.int64(m))  # the float32 product, < 2^48 before
    y = _to_int(p, n + k + e)
    return np.where(x < 0, -y, y)


def ort_requantize(x, zp_out: int, m: int, e: int, bits: int) -> np.ndarray:
    """`clamp(RNE(float32(x) * scale) + zp_out)` on an int32 accumulator x (zero point
    0) with scale = m 2^e (num.requantize {mode = onnxruntime})."""
    lo, hi = int_range(bits)
    return np.clip(ort_mul(x, m, e) + zp_out, lo, hi)


def ort_quantize(values, scale: float, zero_point: int, bits: int) -> np.ndarray:
    """onnxruntime's QuantizeLinear of float32 reals (MLAS's MlasQuantizeLinear): the
    float32 quotient v / scale rounded to nearest even, plus the zero point, saturated."""
    lo, hi = int_range(bits)
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.rint(np.asarray(values, dtype=np.float32) / np.float32(scale))
    r = np.clip(r.astype(np.float64), lo - 1.0 - abs(zero_point), hi + 1.0 + abs(zero_point))
    return np.clip(r.astype(np.int64) + zero_point, lo, hi)


def c_ort_quantize(v: str, scale: float, zero_point: int, bits: int) -> str:
    """C99 statements setting int32_t q to ort_quantize of the float expression v: the
    float32 division, clamped, then rounded to nearest even (r - floor(r) is exact)."""
    lo, hi = int_range(bits)
    a, b = float(lo - 1 - abs(zero_point)), float(hi + 1 + abs(zero_point))
    return (f"float r = (float)({v}) / {float(np.float32(scale)).hex()}f, t;\n"
            f"int32_t q;\n"
            f"if (r < {a!r}f) r = {a!r}f;\n"
            f"if (r > {b!r}f) r = {b!r}f;\n"
            f"t = floorf(r);\n"
            f"q = (int32_t)t;\n"
            f"if (r - t > 0.5f || (r - t == 0.5f && (q & 1))) q++;\n"
            f"q += {zero_point};\n"
            f"q = q < {lo} ? {lo} : q > {hi} ? {hi} : q;")


# -- onnxruntime's float32 Add of dequantized values (num.add {mode = onnxruntime}) --------
#
# onnxruntime runs a QDQ Add it does not fuse as DequantizeLinear ((q - zp) * s in float32),
# a float32 Add and QuantizeLinear (float32 division, half to even). Emulated with integers:
# each term is |q - zp| * m (33 bits) rounded to 24 bits; the two are aligned and added
# exactly (a term 2^38 times smaller than the other is below its rounding and dropped);
# the sum is rounded to 24 bits, divided by s_y's significand with 38 more bits and the
# remainder as a sticky bit, rounded to 24 bits, then to an integer, half to even.

ADD_ALIGN = 38  # a term this many binades below the other cannot change the rounded sum


def f32_parts(v: float) -> tuple[int, int]:
    """(m, e) with m * 2^e = float32(v) exactly, m < 2^24 (v > 0, normal)."""
    frac, exp = math.frexp(float(np.float32(v)))
    return int(math.ldexp(frac, ORT_SIG)), exp - ORT_SIG


def ort_add(a, b, s_a: float, s_b: float, s_y: float, zp_y: int, bits: int = 8,
            subtract: bool = False) -> np.ndarray:
    """clamp(RNE(float32(float32(a s_a) + float32(b s_b)) / s_y) + zp_y) for integers a, b
    (q - zp, |a|, |b| < 2^9) and float32 scales, with integers only (- for subtract)."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
    if subtract:
        b = -b
    (ma, ea), (mb, eb), (my, ey) = f32_parts(s_a), f32_parts(s_b), f32_parts(s_y)
    pa, na = round_significand(np.abs(a) * np.int64(ma))  # float32(a s_a)
    pb, nb = round_significand(np.abs(b) * np.int64(mb))
    xa, xb = na + ea, nb + eb  # exponents of the two terms
    sa, sb = np.where(a < 0, -pa, pa), np.where(b < 0, -pb, pb)
    low = np.minimum(xa, xb)
    da, db = xa - low, xb - low
    far = (pa == 0) | (pb == 0) | (np.maximum(da, db) > ADD_ALIGN)
    exact = (sa << np.minimum(da, ADD_ALIGN)) + (sb << np.minimum(db, ADD_ALIGN))
    # far apart (or one zero): the sum rounds to the larger term
    keep_a = (pb == 0) | ((pa != 0) & (xa > xb))
    total = np.where(far, np.where(keep_a, sa, sb), exact)
    base = np.where(far, np.where(keep_a, xa, xb), low)
    ps, ns = round_significand(np.abs(total))  # the float32 sum
    y = _divide_to_int(ps, ns + base, my, ey)
    lo, hi = int_range(bits)
    return np.clip(np.where(total < 0, -y, y) + zp_y, lo, hi)


def _divide_to_int(p, e, my: int, ey: int) -> np.ndarray:
    """RNE(float32(p 2^e / (my 2^ey))) for a float32 magnitude p 2^e (p < 2^24): p
    shifted left 38 bits and divided by my (the remainder a sticky bit), rounded to 24
    bits, then to an integer, saturated at 2^30."""
    num = np.asarray(p, dtype=np.int64) << np.int64(ADD_ALIGN)
    q, r = num // np.int64(my), num % np.int64(my)
    pq, nq = round_significand(q, r != 0)  # the float32 quotient
    return _to_int(pq, nq + e - ADD_ALIGN - ey)


def ort_product(a, b, s_a: float, s_b: float, s_y: float, zp_y: int, bits: int = 8
                ) -> np.ndarray:
    """clamp(RNE(float32(float32(a s_a) * float32(b s_b)) / s_y) + zp_y) for integers a, b
    (q - zp, |a|, |b| < 2^9): onnxruntime's float32 DequantizeLinear, Mul, QuantizeLinear,
    with integers only."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
    (ma, ea), (mb, eb), (my, ey) = f32_parts(s_a), f32_parts(s_b), f32_parts(s_y)
    pa, na = round_significand(np.abs(a) * np.int64(ma))  # float32(a s_a)
    pb, nb = round_significand(np.abs(b) * np.int64(mb))
    pp, npp = round_significand(pa * pb)  # the float32 product, < 2^48 before
    y = _divide_to_int(pp, npp + na + ea + nb + eb, my, ey)
    lo, hi = int_range(bits)
    return np.clip(np.where((a < 0) != (b < 0), -y, y) + zp_y, lo, hi)


def ort_requantize8(q, zp_in: int, s_in: float, zp_out: int, s_out: float,
                    bits: int = 8) -> np.ndarray:
    """onnxruntime's DequantizeLinear then QuantizeLinear of int8 q (around a Relu,
    MaxPool, Reshape or Concat it runs in float32, which keep the dequantized value):
    clamp(RNE(float32(float32((q - zp_in) s_in) / s_out)) + zp_out), an add of 0."""
    return ort_add(np.asarray(q, dtype=np.int64) - zp_in, 0, s_in, 1.0, s_out, zp_out, bits)
