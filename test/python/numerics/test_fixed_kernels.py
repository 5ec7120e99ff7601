"""The fixed-point kernels against independent references: exact rational arithmetic for
rounding, Python integers for wrapping, the papers' printed numbers for scales, numpy
float64 for the table functions, and a literal transcription of TreeSum (Algorithm 2)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minun_mlir.formats.fixed import arith as fx


@given(st.integers(-(2**40), 2**40), st.integers(0, 20))
def test_shift_right_modes_match_exact_rationals(x, n):
    exact = Fraction(x, 2**n)
    assert fx.shift_right(np.array([x]), n, "trunc")[0] == math.trunc(exact)
    assert fx.shift_right(np.array([x]), n, "floor")[0] == math.floor(exact)
    assert fx.shift_right(np.array([x]), n, "nearest")[0] == math.floor(exact + Fraction(1, 2))


@given(st.integers(-(2**45), 2**45), st.sampled_from([8, 16, 32]))
def test_narrow_wrap_is_twos_complement_and_saturate_clamps(x, bits):
    half = 2 ** (bits - 1)
    assert fx.narrow(np.array([x]), bits, "wrap")[0] == (x + half) % (2 * half) - half
    assert fx.narrow(np.array([x]), bits, "saturate")[0] == min(max(x, -half), half - 1)


def test_scales_and_constants_from_the_papers():
    # SeeDot §5.3: 1.23 at 16 bits has scale 14 and is stored as 20152
    assert fx.get_scale(1.23, 16) == 14
    assert fx.quantize(np.array(1.23), 16, 14, "trunc") == 20152
    # Shiftry §2.2: 5.697 is 23334 at scale 12 (16 bits), 364 at scale 6, 91 at scale 4 (8 bits)
    assert fx.get_scale(5.697, 16) == 12
    assert fx.quantize(np.array(5.697), 16, 12, "trunc") == 23334
    assert fx.quantize(np.array(5.697), 16, 6, "trunc") == 364
    assert fx.get_scale(5.697, 8) == 4
    assert fx.quantize(np.array(5.697), 8, 4, "trunc") == 91
    # SeeDot §3: x and w of the motivating example get scales 7 and 6 at 8 bits
    assert fx.get_scale(0.9238, 8) == 7 and fx.get_scale(1.8622, 8) == 6
    # at an exact power of two the value still fits (GETP's ceil would overflow here)
    assert fx.quantize(np.array(1.0), 16, fx.get_scale(1.0, 16), "trunc") == 16384


def test_seedot_scale_rules_worked_examples():
    # §5.3: x + x with x at scale 14 and maxscale below 13 halves once: scale 13, S_add 1
    assert fx.SeeDotRules(16, 12).addscale(14) == (13, 1)
    assert fx.SeeDotRules(16, 13).addscale(14) == (14, 0)
    # §3/§4: 8 bits, scales 7 and 6, maxscale 5: shift 4 each, product at scale 5,
    # and 4 terms summed without halving
    rules = fx.SeeDotRules(8, 5)
    assert rules.mulscale(7, 6) == (5, 8)
    assert rules.treesumscale(5, 4) == (5, 0)
    # with maxscale 3 both TreeSum levels halve
    assert fx.SeeDotRules(8, 3).treesumscale(5, 4) == (3, 2)


def treesum_transcribed(a: list[int], s_add: int) -> int:
    """Algorithm 2's TREESUM, with its loop counter made explicit (the printed version
    never updates `s`); C division for `/`."""
    def div(x: int, k: int) -> int:
        return int(Fraction(x, 2**k).__trunc__())

    a = list(a)
    n = len(a)
    level = 0
    while n > 1:
        s = 1 if level < s_add else 0
        k = n // 2
        for i in range(k):
            a[i] = div(a[2 * i], s) + div(a[2 * i + 1], s)
        if n % 2:
            a[k] = div(a[2 * k], s)
        n = (n + 1) // 2
        level += 1
    return a[0]


@given(st.lists(st.integers(-3000, 3000), min_size=1, max_size=37), st.integers(0, 6))
def test_tree_sum_matches_algorithm_2(terms, halvings):
    got = fx.tree_sum(np.array([terms]), halvings, 32, "trunc")[0]
    assert got == treesum_transcribed(terms, halvings)


# -- table functions over every input in their valid range ------------------------------

EXP16_BOUND = 2.0**-10
EXP8_BOUND = 2.0**-5
SIGMOID16_BOUND = 2.0**-11
TANH16_BOUND = 2.0**-10
SIGMOID8_BOUND = 2.0**-5
TANH8_BOUND = 2.0**-4


def _max_error(fn, bits, s_in, s_out, reference, lo, hi):
    x = np.arange(lo, hi + 1, dtype=np.int64)
    got = fn(x, bits, "trunc") / 2.0**s_out
    return float(np.max(np.abs(got - reference(x / 2.0**s_in))))


def test_exp16_over_all_non_positive_inputs(capsys):
    err = _max_error(fx.exp_shiftry, 16, 11, 14, np.exp, -32768, 0)
    with capsys.disabled():
        print(f"\n  exp16 max abs error over 32769 inputs: {err:.3g} (bound {EXP16_BOUND:.3g})")
    assert err < EXP16_BOUND


def test_exp8_over_all_non_positive_inputs():
    assert _max_error(fx.exp_shiftry, 8, 4, 6, np.exp, -128, 0) < EXP8_BOUND


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


@pytest.mark.parametrize("fn,ref,bits,s_in,s_out,bound", [
    (fx.sigmoid_shiftry, sigmoid, 16, 11, 14, SIGMOID16_BOUND),
    (fx.tanh_shiftry, np.tanh, 16, 11, 14, TANH16_BOUND),
    (fx.sigmoid_shiftry, sigmoid, 8, 4, 6, SIGMOID8_BOUND),
    (fx.tanh_shiftry, np.tanh, 8, 4, 6, TANH8_BOUND),
])
def test_sigmoid_tanh_over_every_input(fn, ref, bits, s_in, s_out, bound, capsys):
    lo, hi = fx.int_range(bits)
    err = _max_error(fn, bits, s_in, s_out, ref, lo, hi)
    with capsys.disabled():
        print(f"\n  {fn.__name__} {bits}-bit max abs error over {2**bits} inputs: {err:.3g}")
    assert err < bound


def test_seedot_two_table_exp_is_accurate_on_its_range(capsys):
    # inputs at scale 11 over [-8, 0], 16 bits, maxscale 14. MULSCALE shifts each table
    # entry right by 7 so that their product fits 16 bits: each factor keeps 7 fractional
    # bits, which bounds the error near 2^-6 (the price of SeeDot's 16-bit product; the
    # Shiftry tables multiply in 32 bits instead).
    e = fx.SeeDotExp(16, 11, -8 * 2048, 0, 14)
    x = np.arange(-8 * 2048, 1)
    p_mul, s_mul = e.out_scale()
    assert (p_mul, s_mul) == (14, 14)
    got = e(x, "trunc") / 2.0**p_mul
    err = float(np.max(np.abs(got - np.exp(x / 2048.0))))
    with capsys.disabled():
        print(f"\n  SeeDot two-table exp16 max abs error on [-8, 0]: {err:.3g}")
    assert err < 2.0**-5


def test_isqrt_is_exact():
    x = np.array([0, 1, 2, 3, 4, 15, 16, 17, 2**40 - 1, 2**40, 2**52 + 12345])
    assert [int(v) for v in fx.isqrt(x)] == [math.isqrt(int(v)) for v in x]
