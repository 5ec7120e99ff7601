"""The bfloat16 representation's kernels (formats/bfloat16/representation.py) against ml_dtypes:
rounding float32 to bfloat16 (nearest, ties to even; NaN, infinities, subnormals), the
order-preserving storage keys, the per-operation roundings and the float32 dot products;
exp, sigmoid, tanh, log and sqrt correctly rounded, in the evaluator and the C;
and whole programs, whose C equals the evaluator (test_crosscheck.py)."""

from __future__ import annotations

import math
import subprocess
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from minun_mlir.formats.bfloat16 import representation as B
from minun_mlir.lowering.c_runtime import PROFILES, runtime_header

BF16_FUNCTIONS = ("exp", "sigmoid", "tanh", "log", "sqrt")

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


FUNCTIONS = {"exp": math.exp, "tanh": math.tanh, "log": math.log, "sqrt": math.sqrt,
             "sigmoid": lambda v: 1.0 / (1.0 + math.exp(-v)) if v > -700 else 0.0}


def exact_round(y: float) -> int:
    """A finite float64 -> bfloat16 pattern, by rational arithmetic: nearest, ties to even
    (Python's round of a Fraction), one rounding."""
    if y == 0:
        return 0x8000 if math.copysign(1, y) < 0 else 0
    _, ex = math.frexp(abs(y))
    q = max(ex - 1, -126) - 7
    n = round(Fraction(abs(y)) / Fraction(2) ** q)
    v = Fraction(n) * Fraction(2) ** q
    p = 0x7F80 if v >= 2 ** 128 else int(np.float32(float(v)).view(np.uint32)) >> 16
    return p | (0x8000 if y < 0 else 0)


def test_round_f64_rounds_once():
    rng = np.random.default_rng(5)
    y = rng.standard_normal(20_000) * np.exp2(rng.integers(-140, 130, 20_000))
    # halfway between two bfloat16s in float64 (a float32 would round them first)
    mid = (np.arange(0x3F80, 0x3FA0, dtype=np.int64) << 48 | (1 << 44) | 1).view(np.float64)
    y = np.concatenate([y, mid, -mid, [2.0 ** -134, 3 * 2.0 ** -135, 2.0 ** -135]])
    np.testing.assert_array_equal(B.round_f64(y), [exact_round(v) for v in y])


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_functions_are_the_real_function_rounded_once(name):
    """exp, sigmoid, tanh, log, sqrt on every non-NaN bfloat16: the function (here
    Python's math, not numpy) rounded once to bfloat16; NaN in, NaN out."""
    p = np.arange(1 << 16)
    table = B.function_table(name)
    fn = FUNCTIONS[name]
    with np.errstate(invalid="ignore"):  # signalling NaN patterns
        xs = B.pattern_to_f32(p).astype(np.float64).tolist()
    for x, got in zip(xs, table.tolist()):
        if math.isnan(x):
            assert (got & 0x7FFF) > 0x7F80
            continue
        try:
            y = fn(x)
        except (ValueError, OverflowError):  # log/sqrt of a negative or 0, exp overflow
            y = {"log": -math.inf if x == 0 else math.nan, "sqrt": math.nan}.get(name, math.inf)
        if math.isnan(y):
            assert got == 0x7FC0, x
        elif math.isinf(y):
            assert got == (0x7F80 if y > 0 else 0xFF80), x
        else:
            assert got == exact_round(y), x


def test_runtime_functions_on_the_host_equal_the_evaluator_on_every_input(tmp_path):
    """minun_bf16_{exp,sigmoid,tanh,log,sqrt} (integer C) on all 65,536 keys compute
    the evaluator's tables (the Uno: targets/test_target_kernels.py)."""
    (tmp_path / "minun_runtime.h").write_text(runtime_header(PROFILES["x86"], [
        f"minun_bf16_{f}" for f in BF16_FUNCTIONS]))
    calls = ", ".join(f"minun_bf16_{f}(k)" for f in BF16_FUNCTIONS)
    (tmp_path / "t.c").write_text(
        '#include <stdio.h>\n#include "minun_runtime.h"\nint main(void)\n{\n'
        "    for (long i = -32768; i < 32768; i++) {\n        int16_t k = (int16_t)i;\n"
        f'        printf("%d %d %d %d %d\\n", {calls});\n    }}\n    return 0;\n}}\n')
    exe = tmp_path / "t"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2",
                    "-o", str(exe), str(tmp_path / "t.c")], check=True)
    got = np.array(subprocess.run([str(exe)], capture_output=True, text=True, check=True)
                   .stdout.split(), dtype=np.int64).reshape(-1, len(BF16_FUNCTIONS))
    keys = np.arange(-(1 << 15), 1 << 15)
    for i, f in enumerate(BF16_FUNCTIONS):
        bad = np.nonzero(got[:, i] != B.apply(f, keys))[0]
        assert not len(bad), f"{f}: {len(bad)} keys differ, first {keys[bad[0]]}"


def test_one_zero_so_key_order_follows_ieee_equality():
    """Issue item 6: -0 is stored as +0 (rounding, encoding, negation), so argmax, max and
    relu over keys agree with numpy's float comparisons (-0 == +0)."""
    w = np.array([-0.5, 0.5, -0.0, 0.0], dtype=np.float32)
    prod = B._KERNELS["num.mul"](None, B.encode(w)[None], B.encode(np.zeros(4))[None])[0]
    assert (prod == 0).all() and (B.encode(np.array([-0.0])) == 0).all()
    assert (B._KERNELS["num.neg"](None, prod) == 0).all()
    f = w * np.float32(0)  # numpy: -0, +0, -0, +0
    assert np.signbit(f).any() and int(np.argmax(prod)) == int(np.argmax(f)) == 0
