"""Every example's generated C on the simulated boards (issue 7's remaining items): the
fixed-point build on the Uno (simavr) and on Cortex-M0+/M3/M4 (QEMU) computes the same
labels and scores as the x86 build; the float baseline runs too, or is reported as not
fitting. Prints the sizes and latencies (run with -s to see them)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from codegen_support import (
    EXAMPLES,
    STRICT,
    build_host,
    expected,
    expected_for,
    quantized,
    run_host,
)

from minun_mlir.codegen import emit_c
from minun_mlir.ir_text import parse_ir
from minun_mlir.lowering.c_runtime import PROFILES, runtime_header
from minun_mlir.targets import BudgetExceeded, run_model

FIXED_TARGETS = ("avr", "cortex-m0plus", "cortex-m3", "cortex-m4")
FLOAT_TARGETS = ("avr", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m4f")
N_FIXED, N_FLOAT = 16, 4
# On the Uno the stack shares the 2 KB with static data: keep 256 B for it, so that a
# model too large is reported by the budget check rather than by a crashing simulation.
AVR_RAM_BUDGET = 2048 - 256


def budget(target: str) -> int | None:
    return AVR_RAM_BUDGET if target == "avr" else None



def x86_outputs(model: str, config: str, inputs: np.ndarray, out_dir):
    exp = expected_for(model, config, limit=len(inputs))  # for the scores' type
    l2, _ = quantized(model, config)
    emit_c(l2, "x86", out_dir)
    exe = build_host(out_dir, out_dir / "host")
    return run_host(exe, inputs, exp.scores.dtype, exp.scores.shape[1])


@pytest.mark.parametrize("model", sorted(EXAMPLES))
def test_fixed_point_on_every_board_equals_x86(model, tmp_path, capsys):
    l2, _ = quantized(model, "fixed16")
    exp = expected_for(model, "fixed16", limit=N_FIXED)
    inputs = exp.inputs[:N_FIXED]
    labels86, scores86 = x86_outputs(model, "fixed16", inputs, tmp_path / "x86")
    np.testing.assert_array_equal(labels86, exp.labels[:N_FIXED])
    rows = []
    for target in FIXED_TARGETS:
        out = tmp_path / target
        emit_c(l2, target, out)
        r = run_model(out, target, inputs, name=model, config="fixed16",
                      ram_budget=budget(target))
        np.testing.assert_array_equal(r.labels, labels86, err_msg=target)
        np.testing.assert_array_equal(r.outputs, scores86, err_msg=target)
        rows.append(f"{target} flash {r.flash_bytes} B, RAM {r.ram_bytes} B, stack "
                    f"{r.stack_bytes} B, {r.latency_median:,.0f} {r.latency_unit}")
    with capsys.disabled():
        print(f"\n  {model} fixed16: " + "; ".join(rows))


@pytest.mark.parametrize("model", sorted(EXAMPLES))
def test_float_baseline_runs_or_reports_not_fitting(model, tmp_path, capsys):
    l2, _ = quantized(model, "float32")
    exp = expected_for(model, "float32", limit=N_FLOAT)
    inputs = exp.inputs[:N_FLOAT]
    labels86, scores86 = x86_outputs(model, "float32", inputs, tmp_path / "x86")
    rows = []
    for target in FLOAT_TARGETS:
        out = tmp_path / target
        emit_c(l2, target, out)
        try:
            r = run_model(out, target, inputs, name=model, config="float32",
                          ram_budget=budget(target))
        except BudgetExceeded as err:
            text = str(err)
            assert target == "avr", text  # only the Uno is that small
            assert "does not fit" in text, text
            rows.append(f"{target}: does not fit ({text.splitlines()[0][:90]}...)")
            continue
        np.testing.assert_array_equal(r.labels, labels86, err_msg=target)
        np.testing.assert_allclose(r.outputs, scores86, rtol=1e-4,
                                   atol=1e-4 * float(np.abs(scores86).max()), err_msg=target)
        rows.append(f"{target} flash {r.flash_bytes} B, RAM {r.ram_bytes} B, "
                    f"{r.latency_median:,.0f} {r.latency_unit}")
    with capsys.disabled():
        print(f"\n  {model} float32: " + "; ".join(rows))


# The target kernels (AVR asm multiply-accumulate, dot products, shifts, division;
# Cortex-M4's SMLAD) in other number formats: 8-bit, 8-bit parameters (int8 x int16
# products), SeeDot's wrapping products and TreeSum, nearest rounding with saturation.
KERNEL_CONFIGS = ("fixed8", "mixed16-8", "maxscale16", "fixed16-nearest-sat")


@pytest.mark.parametrize("config", KERNEL_CONFIGS)
@pytest.mark.parametrize("model", sorted(EXAMPLES))
def test_target_kernels_equal_the_evaluator_in_every_format(model, config, tmp_path):
    l2, _ = quantized(model, config)
    n = 6
    exp = expected_for(model, config, limit=n)
    for target in ("avr", "cortex-m4"):
        out = tmp_path / target
        emit_c(l2, target, out)
        try:
            r = run_model(out, target, exp.inputs[:n], name=model, config=config,
                          ram_budget=budget(target))
        except BudgetExceeded:
            assert target == "avr" and model == "rnnpool"  # the Uno's 2 KB
            continue
        np.testing.assert_array_equal(r.labels, exp.labels[:n], err_msg=target)
        np.testing.assert_array_equal(r.outputs, exp.scores[:n], err_msg=target)


TWO_SIGMOIDS = (Path(__file__).resolve().parents[2] / "lit" / "select-target-kernels" /
                "Inputs" / "two-sigmoids.mlir")


def test_shared_sigmoid_equals_the_evaluator_on_the_boards(tmp_path):
    """Shiftry's sigmoid called from two places: the Cortex-M C calls its _shared copy
    (exp inlined into it); the M0+, M3 and M4 give the evaluator's scores, on inputs
    whose sums reach both signs and saturate."""
    l2 = parse_ir(TWO_SIGMOIDS.read_text())
    exp = expected(l2, np.random.default_rng(5).uniform(-2, 2, (12, 4)))
    out = tmp_path / "cortex-m"
    emit_c(l2, "cortex-m4", out)
    assert (out / "model.c").read_text().count("minun_sigmoid16_trunc_shared(") == 2
    for target in ("cortex-m0plus", "cortex-m3", "cortex-m4"):
        r = run_model(out, target, exp.inputs, name="two-sigmoids")
        np.testing.assert_array_equal(r.outputs, exp.scores, err_msg=target)
        np.testing.assert_array_equal(r.labels, exp.labels, err_msg=target)


def test_shared_sigmoid_is_the_sigmoid_on_every_input(tmp_path):
    """The Cortex-M runtime's minun_sigmoid16_trunc_shared and minun_sigmoid16_trunc give
    the same integer on each of the 65,536 int16 inputs (the host compiler, strict)."""
    header = tmp_path / "minun_runtime.h"
    header.write_text(runtime_header(PROFILES["cortex-m"], {"minun_sigmoid16_trunc",
                                                            "minun_sigmoid16_trunc_shared"}))
    main = tmp_path / "main.c"
    main.write_text('#include <stdio.h>\n#include "minun_runtime.h"\nint main(void)\n{\n'
                    "    long x, bad = 0;\n    for (x = -32768; x <= 32767; x++)\n"
                    "        bad += minun_sigmoid16_trunc((int16_t)x) != "
                    "minun_sigmoid16_trunc_shared((int16_t)x);\n"
                    '    printf("%ld\\n", bad);\n    return 0;\n}\n')
    exe = tmp_path / "check"
    subprocess.run(["gcc", *STRICT, "-O2", "-o", str(exe), str(main)], check=True)
    assert subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout == "0\n"
