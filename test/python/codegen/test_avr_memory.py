"""On the Uno, every weight and table stays in flash: the linked program's symbols show
the model's constant arrays in program memory and, in RAM, only the planned scratch
array (plus the harness's own input/output buffers)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from codegen_support import EXAMPLES, expected_for, quantized

from minun_mlir.codegen import emit_c
from minun_mlir.pipeline import lower_l2
from minun_mlir.targets import run_model

AVR_DATA = 0x800000  # avr ELF addresses of data space (RAM) start here



def symbols(elf) -> list[tuple[str, int, int, str]]:
    out = subprocess.run(["avr-nm", "-S", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            rows.append((parts[3], int(parts[0], 16), int(parts[1], 16), parts[2]))
    return rows


@pytest.mark.parametrize("config", ["fixed16", "fixed8"])
@pytest.mark.parametrize("model", sorted(EXAMPLES))
def test_weights_in_flash_and_only_scratch_in_ram(model, config, tmp_path):
    l2, _ = quantized(model, config)
    files = emit_c(l2, "avr", tmp_path / "c")
    scratch = lower_l2(l2, stop="memory-plan").ops.last.attributes["minun.scratch_bytes"].value.data
    exp = expected_for(model, config, limit=2)
    work = tmp_path / "build"
    r = run_model(tmp_path / "c", "avr", exp.inputs[:2], name=model, work_dir=work)
    np.testing.assert_array_equal(r.labels, exp.labels[:2])
    (elf,) = work.glob("*.elf")
    syms = symbols(elf)
    in_ram = {name: size for name, addr, size, kind in syms if addr >= AVR_DATA}
    model_ram = {n: s for n, s in in_ram.items() if not n.startswith("minun_harness_")}
    assert model_ram == {"minun_scratch": scratch}, model_ram
    constants = [line.split("[")[0].split()[-1] for line in files["model.c"].splitlines()
                 + files["minun_runtime.h"].splitlines() if line.startswith("static const")]
    assert constants, "the model has no constant arrays?"
    placed = {name: (addr, kind) for name, addr, _, kind in syms}
    for name in constants:
        if name in placed:  # the linker drops unused ones
            addr, kind = placed[name]
            assert addr < AVR_DATA and kind in "tTrR", f"{name} is not in flash ({kind})"
    # static RAM = scratch + the harness's buffers and strings, nothing of the model
    harness = sum(s for n, s in in_ram.items() if n.startswith("minun_harness_"))
    assert r.ram_bytes - harness - scratch <= 32  # the harness's format strings (.data)

