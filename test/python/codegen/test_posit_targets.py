"""The posit and bfloat16 representations' C on the simulated boards: on the Cortex-M4 (QEMU) and
the Uno (simavr) every suite model (on the Uno, 2 inputs each: posit arithmetic is
software, a few thousand cycles per operation; each fits the Uno's 2 KB of RAM and 32 KB
of flash with the runtime) computes the evaluator's patterns, at
posit<16, 2> and posit<8, 2> (codegen_support's posit16 and posit8), and in bfloat16
(whose exp, sigmoid and tanh are the runtime's integer code, not the board's libm). The
x86 build is
checked on every suite model in test_crosscheck.py. Prints sizes and latencies (-s)."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_support import SUITE, expected_for, quantized

from minun_mlir.codegen import emit_c
from minun_mlir.targets import run_model

N = {"cortex-m4": 4, "avr": 2}
AVR_RAM_BUDGET = 2048 - 256  # as test_targets.py: leave the stack 256 B
AVR_MODELS = tuple(sorted(SUITE))
# the quick ones (under about 2 s each) run in `make test-fast` too
FAST = ("protonn-breast-cancer", "protonn-wine", "bonsai-wine", "bonsai-breast-cancer")
CASES = [pytest.param(m, t, marks=[] if m in FAST else [pytest.mark.slow])
         for m, t in [(m, "cortex-m4") for m in sorted(SUITE)]
         + [(m, "avr") for m in AVR_MODELS]]


@pytest.mark.parametrize("config", ("posit16", "posit8", "bfloat16"))
@pytest.mark.parametrize("model,target", CASES)
def test_posit_c_on_the_board_equals_the_evaluator(model, target, config, tmp_path, capsys):
    name = f"suite/{model}"
    l2, _ = quantized(name, config)
    exp = expected_for(name, config, limit=N[target])
    emit_c(l2, target, tmp_path)
    assert (tmp_path / "posit.c").is_file() == config.startswith("posit")
    n = N[target]
    r = run_model(tmp_path, target, exp.inputs[:n], name=model, config=config,
                  ram_budget=AVR_RAM_BUDGET if target == "avr" else None)
    np.testing.assert_array_equal(r.labels, exp.labels[:n], err_msg=target)
    np.testing.assert_array_equal(r.outputs, exp.scores[:n], err_msg=target)
    with capsys.disabled():
        print(f"\n  {model} {config} {target}: flash {r.flash_bytes} B, RAM {r.ram_bytes} B, "
              f"stack {r.stack_bytes} B, {r.latency_median:,.0f} {r.latency_unit}")


@pytest.mark.parametrize("config", ("posit16-params8", "posit8-params16", "posit12",
                                    "posit8e0-params16e1"))
@pytest.mark.parametrize("target", ("cortex-m4", "avr"))
@pytest.mark.parametrize("model", FAST)
def test_mixed_posit_formats_on_the_board_equal_the_evaluator(model, target, config,
                                                             tmp_path):
    """Per-tensor posit formats: the board's num.convert (posit_convert) and the wrappers
    of both formats compute the evaluator's patterns."""
    name = f"suite/{model}"
    l2, _ = quantized(name, config)
    exp = expected_for(name, config, limit=N[target])
    emit_c(l2, target, tmp_path)
    n = N[target]
    r = run_model(tmp_path, target, exp.inputs[:n], name=model, config=config,
                  ram_budget=AVR_RAM_BUDGET if target == "avr" else None)
    np.testing.assert_array_equal(r.outputs, exp.scores[:n], err_msg=target)


@pytest.mark.parametrize("target", ("cortex-m4", "avr"))
def test_posit_without_a_quire_on_the_board_equals_the_evaluator(target, tmp_path):
    """quantize{quire=false}: the board's dot products, each product and partial sum
    rounded, are the evaluator's; the C declares no quire."""
    name = "suite/protonn-wine"
    l2, _ = quantized(name, "posit8-noquire")
    exp = expected_for(name, "posit8-noquire", limit=N[target])
    files = emit_c(l2, target, tmp_path)
    assert "minun_quire" not in files["minun_runtime.h"] + files["model.c"]
    n = N[target]
    r = run_model(tmp_path, target, exp.inputs[:n], name="protonn-wine",
                  config="posit8-noquire",
                  ram_budget=AVR_RAM_BUDGET if target == "avr" else None)
    np.testing.assert_array_equal(r.outputs, exp.scores[:n], err_msg=target)


ROWOPS = """func.func @main() -> tensor<4x3x{el}> attributes {{num.rounding = "nearest"}} {{
  %x = num.input "X" : tensor<1x2x2x3x{el}>
  %n = num.normalise_l2 %x : tensor<1x2x2x3x{el}> -> tensor<1x2x2x3x{el}>
  %r = minun.reshape %n {{order = array<i64: 0, 1, 2, 3>}} : tensor<1x2x2x3x{el}> -> tensor<4x3x{el}>
  %s = num.softmax %r : tensor<4x3x{el}> -> tensor<4x3x{el}>
  func.return %s : tensor<4x3x{el}>
}}
"""


@pytest.mark.parametrize("el", ["!num.posit<16, 1>", "!num.posit<8, 2>", "bf16"])
@pytest.mark.parametrize("target", ["avr", "cortex-m4"])
def test_softmax_and_normalise_l2_on_the_board(target, el, tmp_path):
    """L2 normalisation then softmax (posit: quire sums, sqrt, exp and division of the
    runtime; bfloat16: float32 sums, sqrtf, expf, division): the board's patterns are the
    evaluator's, on inputs that include an all-zero position."""
    from minun_mlir.ir_text import parse_ir
    from minun_mlir.numerics.l2_eval import evaluate_l2, storage_inputs

    l2 = parse_ir(ROWOPS.format(el=el))
    x = np.random.default_rng(5).standard_normal((3, 1, 2, 2, 3)) * 2
    x[0, 0, 0, 0] = 0.0
    emit_c(l2, target, tmp_path)
    r = run_model(tmp_path, target, storage_inputs(l2, x), name="rowops")
    expected = np.asarray(evaluate_l2(l2, x).outputs[0]).reshape(3, -1)
    np.testing.assert_array_equal(np.asarray(r.outputs).reshape(3, -1).astype(np.int64),
                                  expected)
