"""TFLite's int8 softmax kernel (reference_ops::Softmax, int8 in, int8 out at (1/256, -128),
as TFLM runs it), integer for integer: `num.softmax {tflite}` in the zero-skew
representation, for TFLite models (the frontend marks them), so their probabilities are
TFLM's.

Per row, with d = max - q: the exp of the rescaled difference is gemmlowp's
exp_on_negative_values in Q0.31 (`exp_table`, a function of d only: a table of 256; 0
where TFLite skips d past its input radius); sum = the sum of those exps rounded to Q12.19;
GetReciprocal(sum) = gemmlowp's one_over_one_plus_x_for_x_in_0_1 Newton-Raphson on the
sum's normalised mantissa; each output = RoundingDivideByPOT(SRDHM(exp, reciprocal),
bits_over_unit + 23) - 128, clamped. The C (minun_mlir/formats/zero_skew/loops.py, the runtime's
minun_zs_tflsm) computes the same steps; rows are at most MAX_ROW long, so the shift stays
below 32.
"""

from __future__ import annotations

import math

import numpy as np

from .arith import INT32_MAX, INT32_MIN, quantize_multiplier, rdbpot, srdhm

SCALED_DIFF_BITS = 5  # kScaledDiffIntegerBits
ACCUM_BITS = 12  # kAccumulationIntegerBits
MAX_ROW = 511  # a row's sum of exps stays below 2^28: the final shift is at most 31
SCALE, ZP = 1.0 / 256, -128  # TFLite's int8 softmax output quantization


def _wrap(x: int) -> int:
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _mul(a: int, b: int) -> int:
    return int(srdhm(np.int64(a), b))


def _sat_shl(x: int, e: int) -> int:
    """gemmlowp's SaturatingRoundingMultiplyByPOT<e> for e > 0."""
    threshold = (1 << (31 - e)) - 1
    return INT32_MAX if x > threshold else INT32_MIN if x < -threshold else x << e


def _rdbpot(x: int, e: int) -> int:
    return int(rdbpot(np.int64(x), e))


def _exp_quarter(a: int) -> int:
    """exp_on_interval_between_negative_one_quarter_and_0_excl of Q0.31 a."""
    x = _wrap(a + (1 << 28))
    x2 = _mul(x, x)
    x3 = _mul(x2, x)
    x4 = _mul(x2, x2)
    x4_over_4 = _rdbpot(x4, 2)
    poly = _rdbpot(_wrap(_mul(_wrap(x4_over_4 + x3), 715827883) + x2), 1)
    return _wrap(1895147668 + _mul(1895147668, _wrap(x + poly)))


def exp_on_negative_values(a: int) -> int:
    """gemmlowp's exp_on_negative_values of Q5.26 a <= 0, in Q0.31."""
    frac = 31 - SCALED_DIFF_BITS
    quarter = 1 << (frac - 2)
    a_mod = _wrap((a & (quarter - 1)) - quarter)
    result = _exp_quarter(_sat_shl(a_mod, SCALED_DIFF_BITS))
    remainder = _wrap(a_mod - a)
    for shift, multiplier in ((-2, 1672461947), (-1, 1302514674), (0, 790015084),
                              (1, 290630308), (2, 39332535), (3, 720401), (4, 242)):
        if remainder & (1 << (frac + shift)):
            result = _mul(result, multiplier)
    return INT32_MAX if a == 0 else result


def input_scaling(s_in: float) -> tuple[int, int, int]:
    """(multiplier, left shift, diff_min) of PreprocessSoftmaxScaling(beta = 1, s_in, 5)
    and CalculateInputRadius."""
    real = min(s_in * float(1 << (31 - SCALED_DIFF_BITS)), float((1 << 31) - 1))
    m, shift = quantize_multiplier(real)
    radius = math.floor(((1 << SCALED_DIFF_BITS) - 1) * float(1 << (31 - SCALED_DIFF_BITS))
                        / float(1 << shift))
    return m, shift, -radius


def exp_table(s_in: float) -> np.ndarray:
    """T[d] for d = max - q in 0..255: the Q0.31 exp TFLite computes, 0 past diff_min."""
    m, shift, diff_min = input_scaling(s_in)
    out = np.zeros(256, dtype=np.int64)
    for d in range(256):
        if -d >= diff_min:
            out[d] = exp_on_negative_values(_mul(_wrap(-d * (1 << shift)), m))
    return out


def sum_table(s_in: float) -> np.ndarray:
    """T[d] rounded to Q12.19 (gemmlowp's Rescale<12>): the terms of a row's sum."""
    return rdbpot(exp_table(s_in), ACCUM_BITS)


def reciprocal(total: int) -> tuple[int, int]:
    """TFLite's GetReciprocal(total, 12): (Q0.31 scale, bits over unit)."""
    clz = 32 - int(total).bit_length()
    x = _wrap((total << clz) - (1 << 31))
    s = x + INT32_MAX
    half = (s + (1 if s >= 0 else -1)) // 2 if s >= 0 else -((-s + 1) // 2)
    r = _wrap(1515870810 + _mul(half, -1010580540))
    for _ in range(3):
        r = _wrap(r + _sat_shl(_mul(r, _wrap((1 << 29) - _mul(half, r))), 2))
    return _sat_shl(r, 1), ACCUM_BITS - clz


def softmax(q: np.ndarray, s_in: float) -> np.ndarray:
    """TFLite's int8 softmax over the last axis of int8 q at scale s_in (beta 1)."""
    q = np.asarray(q, dtype=np.int64)
    d = np.max(q, axis=-1, keepdims=True) - q
    e = exp_table(s_in)[d]
    sums = sum_table(s_in)[d].sum(axis=-1)
    out = np.empty_like(q)
    for idx in np.ndindex(*q.shape[:-1]):
        scale, bits = reciprocal(int(sums[idx]))
        out[idx] = rdbpot(srdhm(e[idx], scale), bits + 31 - 8)
    return np.clip(out + ZP, -128, 127)
