"""Zero-skew requantizations as tables (minun_mlir/formats/zero_skew/tables.py): the thresholds
and the guess the C corrects give the evaluator's integers (formats/zero_skew/arith.py,
requantize, itself checked against gemmlowp's definition in test_zero_skew.py) at every
threshold and its neighbours, at the int32 extremes and on random accumulators; and a
program whose requantizations qualify computes the evaluator's integers on x86, the Uno
and the Cortex-M4."""

from __future__ import annotations

import numpy as np
import pytest

from minun_mlir.formats.zero_skew import arith as af
from minun_mlir.formats.zero_skew import tables as tables

RNG = np.random.default_rng(2031)
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1

# (zp, real multiplier): ProtoNN digits10's two (WX - B to int8, Z e to int8), a LeNet-like
# accumulator's, one below 2^-20 and one at 1/3 (thresholds 3 apart)
CASES = [(16, 0.00028156), (-55, 0.11393), (-3, 0.0037), (-128, 3.1e-7), (7, 1 / 3)]


def _emulate(x: np.ndarray, t: np.ndarray, j: int, c: int) -> np.ndarray:
    """The C of threshold_requantize, step by step, in Python integers."""
    lo, top = int(t[0]) - 1, int(t[-1])
    xc = np.clip(x, lo, top)
    p = np.minimum((((xc - lo) >> j) * c) >> 15, tables.COUNT - 2)
    p = p + (xc >= t[p]) + (xc >= t[p + 1])
    return p + af.QMIN


@pytest.mark.parametrize("zp,real", CASES)
def test_threshold_count_equals_requantize(zp, real):
    m, shift = af.quantize_multiplier(real)
    t = tables.thresholds(zp, m, shift)
    assert t is not None and np.all(np.diff(t) >= 0)
    consts = tables.guess_constants(t)
    assert consts is not None
    near = np.concatenate([t - 1, t, t + 1])
    x = np.concatenate([near, RNG.integers(int(t[0]) - 5000, int(t[-1]) + 5000, 20000),
                        RNG.integers(I32_MIN, I32_MAX, 2000, endpoint=True),
                        [I32_MIN, I32_MIN + 1, -1, 0, 1, I32_MAX - 1, I32_MAX]]).astype(np.int64)
    x = np.clip(x, I32_MIN, I32_MAX)
    want = af.requantize(x, 0, zp, 0, m, shift, 8)
    np.testing.assert_array_equal(_emulate(x, t, *consts), want)


@pytest.mark.parametrize("real", [0.93, 2.5])
def test_dense_or_shifted_thresholds_are_refused(real):
    """Near 1 the 255 thresholds lie closer than two apart on average (the guess is not
    tried); above 1 the multiply shifts x left, which wraps in int32, so the result is not
    monotone in x: no thresholds. The helper stays."""
    m, shift = af.quantize_multiplier(real)
    t = tables.thresholds(0, m, shift)
    assert (t is None) == (shift > 0)
    assert t is None or tables.guess_constants(t) is None
