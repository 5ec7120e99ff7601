"""Zero-skew's own integer forms (minun_mlir/formats/zero_skew/own.py) on the suite's
ProtoNNs: they disagree with the float program on no more test inputs than TFLite's
integers for the same program (the function marked as a TFLite model, which keeps
TFLite's ADD/SUB, MUL and requantized sums), and on the Uno (simavr) they take at most
1.1 times fixed8's cycles (issue 31). C == evaluator for these programs on x86, the Uno
and the Cortex-M4: test_zero_skew_targets.py."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_support import SUITE, expected_for, quantized
from xdsl.dialects.builtin import StringAttr

from minun_mlir import driver
from minun_mlir.codegen import emit_c
from minun_mlir.driver import Options, compile_model
from minun_mlir.modules import main_function
from minun_mlir.targets import run_model

PROTONN = sorted(m for m in SUITE if m.startswith("protonn-"))


def _compiled(model: str):
    folder = SUITE[model].program.parent
    return compile_model(folder / "model.sd", Options(repr="zero-skew", bits=8),
                         train=folder / "train.npy", test=folder / "test.npy")


@pytest.mark.parametrize("model", PROTONN)
def test_own_forms_disagree_with_float_no_more_than_tflite_integers(model, monkeypatch):
    own = _compiled(model)
    load = driver.load_model

    def as_tflite(*args, **kwargs):
        l1 = load(*args, **kwargs)
        main_function(l1, "test").attributes["minun.requantize"] = StringAttr("tflite")
        return l1

    monkeypatch.setattr(driver, "load_model", as_tflite)
    tflite = _compiled(model)
    assert "factor" in str(own.l2) and "factor" not in str(tflite.l2)
    assert own.disagreement <= tflite.disagreement, (own.disagreement, tflite.disagreement)


def _uno_cycles(model: str, config: str, tmp_path) -> float:
    name = f"suite/{model}"
    l2, _ = quantized(name, config)
    exp = expected_for(name, config, limit=4)
    emit_c(l2, "avr", tmp_path / config)
    r = run_model(tmp_path / config, "avr", exp.inputs, name=model, config=config,
                  ram_budget=2048 - 256)
    np.testing.assert_array_equal(r.outputs, exp.scores)
    return r.latency_median


@pytest.mark.parametrize("model", [
    pytest.param(m, marks=[] if m in ("protonn-breast-cancer",) else [pytest.mark.slow])
    for m in PROTONN])
def test_uno_cycles_within_1_1_of_fixed8(model, tmp_path):
    zs, f8 = (_uno_cycles(model, c, tmp_path) for c in ("zero-skew8", "fixed8"))
    assert zs <= 1.1 * f8, (zs, f8)


@pytest.mark.parametrize("e", range(20))
def test_the_rounding_shift_is_gemmlowps_requantization_by_a_power_of_two(e):
    """loops.shift_requantize prints MBQM(x, 2^30, -e) (SaturatingRoundingDoublingHighMul,
    then RoundingDivideByPOT: gemmlowp's two roundings, arith.mbqm) as one floor:
    (x + 2^e + 1 - 2 [x < -1]) >> (e + 1), and (x + 1) >> 1 for e = 0. The identity on
    every |x| < 2^30 it is used for: dense around 0 and the multiples of 2^e where the
    roundings tie, plus random values over the whole range."""
    from minun_mlir.formats.zero_skew import arith as af

    rng = np.random.default_rng(e)
    ties = np.arange(-64, 65, dtype=np.int64) << e
    x = np.unique(np.concatenate([
        np.arange(-5000, 5001, dtype=np.int64), ties - 1, ties, ties + 1,
        (ties << 1) - 1, ties << 1, (ties << 1) + 1,
        rng.integers(-(1 << 30) + 1, 1 << 30, 200_000, dtype=np.int64),
        np.array([-(1 << 30) + 1, (1 << 30) - 1], dtype=np.int64)]))
    x = x[np.abs(x) < 1 << 30]
    bias = np.where(x < -1, (1 << e) - 1, (1 << e) + 1) if e else np.ones_like(x)
    floor_form = (x + bias) >> (e + 1)
    assert np.array_equal(floor_form, af.mbqm(x, 1 << 30, -e))
    # a sum of squares (never negative) drops the sign test
    nonneg = x[x >= 0]
    bias = (1 << e) + 1 if e else 1
    assert np.array_equal((nonneg + bias) >> (e + 1), af.mbqm(nonneg, 1 << 30, -e))
