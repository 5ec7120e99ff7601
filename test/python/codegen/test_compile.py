"""Generated C (fixed-point and the float baseline) of every example and suite model
compiles without a warning under -std=c99 -Wall -Wextra -Werror -pedantic with gcc (x86),
avr-gcc for the Uno and arm-none-eabi-gcc for Cortex-M0+/M3/M4, each with its profile;
and the output is deterministic."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from codegen_support import ALL_MODELS, ROOT, STRICT, have, quantized

from minun_mlir.codegen import emit_c
from minun_mlir.pipeline import pipeline_text

EXAMPLE_COPIES = {"suite/protonn-digits10", "suite/bonsai-digits-binary",
                  "suite/fastgrnn-digits10", "suite/lenet-digits10"}
MODELS = [m for m in ALL_MODELS if m not in EXAMPLE_COPIES]
COMPILERS = {
    "x86": [["gcc", "-O2"]],
    "avr": [["avr-gcc", "-mmcu=atmega328p", "-Os"]],
    "cortex-m": [["arm-none-eabi-gcc", f"-mcpu={cpu}", "-mthumb", "-Os"]
                 for cpu in ("cortex-m0plus", "cortex-m3", "cortex-m4")],
}


@pytest.mark.parametrize("config", ["fixed16", "float32"])
@pytest.mark.parametrize("model", MODELS)
def test_compiles_without_warnings(model, config, tmp_path):
    l2, _ = quantized(model, config)
    for profile, compilers in COMPILERS.items():
        out = tmp_path / profile
        emit_c(l2, profile, out)
        for cc in compilers:
            assert have(cc[0]), f"{cc[0]} is not installed: run `make toolchains`"
            proc = subprocess.run([*cc, *STRICT, "-c", str(out / "model.c"), "-o",
                                   str(out / "model.o")], capture_output=True, text=True)
            assert proc.returncode == 0, f"{' '.join(cc)}:\n{proc.stderr}"
            assert proc.stderr == "", proc.stderr


@pytest.mark.parametrize("model", ["rnnpool", "bonsai"])
def test_output_is_deterministic(model):
    l2, _ = quantized(model, "fixed16")
    for profile in ("x86", "avr"):
        assert emit_c(l2, profile) == emit_c(l2, profile)


def test_cli_output_is_identical_across_processes(tmp_path):
    """`minun-opt prog.sd --pass-pipeline=<the compile pipeline> -t c` twice, with
    different hash seeds."""
    opt = Path(sys.executable).parent / "minun-opt"
    text = pipeline_text({"quantize": {"bits": 16,
                                       "data": str(ROOT / "examples" / "bonsai" / "test.npy")}})
    args = [str(opt), str(ROOT / "examples" / "bonsai.sd"), f"--pass-pipeline={text}",
            "-t", "c{profile=avr}"]
    outs = [subprocess.run(args, capture_output=True, text=True, check=True,
                           env=dict(os.environ, PYTHONHASHSEED=seed)).stdout
            for seed in ("1", "2")]
    assert outs[0] == outs[1]
    assert "// ----- model.c -----" in outs[0] and "PROGMEM" in outs[0]
