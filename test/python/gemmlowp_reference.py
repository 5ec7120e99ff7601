"""gemmlowp's requantization primitives on Python integers (unbounded, so no int32/int64
step of the code under test can hide an overflow): the oracle for formats/zero_skew/arith.py and
for the C of minun_zs_mbqm on every target. Written from gemmlowp's fixedpoint.h and
TFLite's MultiplyByQuantizedMultiplier, line by line."""

from __future__ import annotations

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1


def srdhm(a: int, b: int) -> int:
    """SaturatingRoundingDoublingHighMul(a, b)."""
    if a == b == I32_MIN:
        return I32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    q = abs(ab + nudge) // (1 << 31)  # C's division truncates toward zero
    return q if ab + nudge >= 0 else -q


def rdbpot(x: int, e: int) -> int:
    """RoundingDivideByPOT(x, e)."""
    mask = (1 << e) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> e) + (1 if remainder > threshold else 0)


def mbqm(x: int, m: int, shift: int) -> int:
    """MultiplyByQuantizedMultiplier(x, m, shift) (the left shift wraps to int32)."""
    a = ((x << max(shift, 0)) + (1 << 31)) % (1 << 32) - (1 << 31)
    return rdbpot(srdhm(a, m), max(-shift, 0))
