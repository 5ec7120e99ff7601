"""The zero-skew int8 representation's C computes the evaluator's integers: on x86 for
every input of every suite model's test set, and on the simulated boards, the Uno
(simavr) and the Cortex-M4 (QEMU), for 2 inputs of every suite model (each fits the
Uno's 2 KB of RAM). Labels and the stored int8 / int32 scores are compared. Prints sizes
and latencies (-s)."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_support import (
    SUITE,
    build_host,
    expected,
    expected_for,
    quantized,
    run_host,
)
from test_crosscheck import assert_same

from minun_mlir.codegen import emit_c
from minun_mlir.targets import run_model

CONFIG = "zero-skew8"
N_BOARD = 2
AVR_RAM_BUDGET = 2048 - 256  # as test_targets.py: leave the stack 256 B
FAST = ("protonn-breast-cancer", "protonn-wine", "bonsai-wine", "bonsai-breast-cancer")


@pytest.mark.parametrize("model", sorted(SUITE))
def test_x86_build_equals_evaluator(model, tmp_path):
    name = f"suite/{model}"
    l2, _ = quantized(name, CONFIG)
    exp = expected_for(name, CONFIG)
    emit_c(l2, "x86", tmp_path)
    exe = build_host(tmp_path, tmp_path / "host")
    labels, scores = run_host(exe, exp.inputs, exp.scores.dtype, exp.scores.shape[1])
    assert_same(labels, scores, exp)


@pytest.mark.parametrize("model,target", [
    pytest.param(m, t, marks=[] if m in FAST else [pytest.mark.slow])
    for t in ("cortex-m4", "avr") for m in sorted(SUITE)])
def test_board_equals_evaluator(model, target, tmp_path, capsys):
    name = f"suite/{model}"
    l2, _ = quantized(name, CONFIG)
    exp = expected_for(name, CONFIG)
    emit_c(l2, target, tmp_path)
    r = run_model(tmp_path, target, exp.inputs[:N_BOARD], name=model, config=CONFIG,
                  ram_budget=AVR_RAM_BUDGET if target == "avr" else None)
    np.testing.assert_array_equal(r.labels, exp.labels[:N_BOARD], err_msg=target)
    np.testing.assert_array_equal(r.outputs, exp.scores[:N_BOARD], err_msg=target)
    with capsys.disabled():
        print(f"\n  {model} {CONFIG} {target}: flash {r.flash_bytes} B, RAM {r.ram_bytes} B, "
              f"stack {r.stack_bytes} B, {r.latency_median:,.0f} {r.latency_unit}")


@pytest.mark.parametrize("model", ["lenet-digits-binary", "bonsai-breast-cancer",
                                   "fastgrnn-digits-binary"])
def test_float_wrapper_quantizes_like_the_evaluator(model, tmp_path):
    """minun_predict_float(x) = the evaluator on reals: round(x / s) + zp (ties away from
    zero, saturated) in, scores dequantized as s (q - zp) out; also on inputs beyond the
    profiled range (saturation) and half way between two steps."""
    from minun_mlir.numerics.zero_skew_repr import el_of

    l2, test = quantized(f"suite/{model}", CONFIG)
    emit_c(l2, "x86", tmp_path)
    exe = build_host(tmp_path, tmp_path / "host")
    feats = np.ascontiguousarray(test.features.reshape(len(test.features), -1),
                                 dtype=np.float32)[:100]
    x_el = el_of(next(op for op in l2.walk() if op.name == "num.input").result)
    ties = np.float32(x_el.real_scale) * (np.arange(feats.shape[1]) % 7 - 3 + 0.5)
    feats = np.concatenate([feats, 40 * feats[:5], ties[None].astype(np.float32)])
    exp = expected(l2, feats)
    labels, scores = run_host(exe, feats, np.dtype("<f4"), exp.scores.shape[1], as_float=True)
    np.testing.assert_array_equal(labels, exp.labels)
    s_out = el_of(next(op for op in l2.walk() if op.name == "num.argmax"
                       or op.name == "num.sgn").operands[0])
    want = (s_out.real_scale * (exp.scores.astype(np.float64) - s_out.zp)).astype(np.float32)
    np.testing.assert_array_equal(scores, want)
