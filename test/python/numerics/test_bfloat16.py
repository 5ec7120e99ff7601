"""The bfloat16 representation's kernels (numerics/bfloat16_repr.py) against ml_dtypes:
rounding float32 to bfloat16 (nearest, ties to even; NaN, infinities, subnormals), the
order-preserving storage keys, the per-operation roundings and the float32 dot products;
and whole programs, whose C equals the evaluator (test_crosscheck.py)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from minun_mlir.numerics import bfloat16_repr as B

BF16 = ml_dtypes.bfloat16


def oracle(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 patterns by ml_dtypes."""
    return np.asarray(x, dtype=np.float32).astype(BF16).view(np.uint16).astype(np.int64)


def random_f32(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    return x[~np.isnan(x)]


def test_rounding_equals_ml_dtypes():
    x = np.concatenate([random_f32(200_000), np.array(
        [0.0, -0.0, np.inf, -np.inf, 1e-45, -1e-45, 3.4028235e38, -3.4028235e38,
         1.00390625, 1.01171875, -1.00390625, 1.0 + 2.0**-8 + 2.0**-20], dtype=np.float32)])
    # ties: exactly half way between two bfloat16s, both parities
    ties = (np.arange(0x3F80, 0x3F90, dtype=np.uint32) << 16 | 0x8000).view(np.float32)
    x = np.concatenate([x, ties, -ties])
    np.testing.assert_array_equal(B.round_f32(x), oracle(x))
    nan = B.round_f32(np.array([np.nan, -np.nan], dtype=np.float32))
    assert all(np.isnan(B.pattern_to_f32(nan)))


def test_keys_order_like_the_values_and_invert():
    p = np.arange(1 << 16)
    ok = (p & 0x7FFF) <= 0x7F80  # not a NaN pattern (some are signalling: no float casts)
    v = np.where(ok, B.pattern_to_f32(p & np.where(ok, 0xFFFF, 0)), 0).astype(np.float64)
    k = B.key(p)
    assert k.min() == -(1 << 15) and k.max() == (1 << 15) - 1
    np.testing.assert_array_equal(B.pattern(k), p)
    order = np.argsort(k[ok], kind="stable")
    assert np.all(np.diff(v[ok][order]) >= 0)
    # the only values whose keys differ but compare equal: -0 (key -1) just below +0
    assert B.key(np.array([0x8000]))[0] == -1 and B.key(np.array([0]))[0] == 0
    # negation is ~key
    np.testing.assert_array_equal(B.to_f32(~k[ok]), -B.to_f32(k[ok]))


@pytest.mark.parametrize("op,fn", [("num.add", np.add), ("num.sub", np.subtract),
                                    ("num.mul", np.multiply)])
def test_elementwise_rounds_once_like_ml_dtypes(op, fn):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(100_000) * np.exp2(rng.integers(-30, 30, 100_000)))
    b = (rng.standard_normal(100_000) * np.exp2(rng.integers(-30, 30, 100_000)))
    ab, bb = a.astype(np.float32).astype(BF16), b.astype(np.float32).astype(BF16)
    want = fn(ab.astype(np.float32), bb.astype(np.float32)).astype(BF16)
    ka, kb = B.encode(a), B.encode(b)
    got = B._KERNELS[op](None, ka[None], kb[None])[0]
    np.testing.assert_array_equal(B.pattern(got), want.view(np.uint16))


def test_matmul_sums_exact_products_in_float32_and_rounds_once():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((1, 5, 64)).astype(np.float32).astype(BF16)
    b = rng.standard_normal((1, 64, 3)).astype(np.float32).astype(BF16)
    acc = np.zeros((1, 5, 3), dtype=np.float32)
    for k in range(64):  # the C loop: products exact in float32, summed in order
        acc = acc + a[:, :, k:k + 1].astype(np.float32) * b[:, k:k + 1, :].astype(np.float32)
    want = acc.astype(BF16).view(np.uint16)
    got = B._matmul(None, B.key(a.view(np.uint16)), B.key(b.view(np.uint16)))
    np.testing.assert_array_equal(B.pattern(got), want)


def test_exp_sigmoid_tanh_are_float32_rounded_once():
    x = np.linspace(-12, 12, 4001).astype(np.float32).astype(BF16)
    k = B.key(x.view(np.uint16))
    xf = x.astype(np.float32)
    for op, fn in (("num.exp", np.exp), ("num.tanh", np.tanh),
                   ("num.sigmoid", lambda v: np.float32(1) / (np.float32(1) + np.exp(-v)))):
        want = fn(xf).astype(np.float32).astype(BF16).view(np.uint16)
        np.testing.assert_array_equal(B.pattern(B._KERNELS[op](None, k)), want, err_msg=op)
