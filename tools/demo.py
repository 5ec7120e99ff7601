#!/usr/bin/env python3
"""`make demo`: the main job on the bundled default example.

Compiles the real low-rank FastGRNN for USPS digits (examples/fastgrnn_lr_usps.sd, weights
from Microsoft's EdgeML) to 16-bit fixed-point C for the Arduino Uno, builds it with
avr-gcc, runs its 10 labelled test images on the simulated ATmega328P (simavr, exact
cycles), and compares with the float32 C baseline of the same model.
"""

from __future__ import annotations

import sys
from pathlib import Path

from minun_mlir.tools.minun_compile import main as compile_main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "fastgrnn_lr_usps.sd"
DATA = ROOT / "examples" / "fastgrnn_lr_usps" / "test.npy"
BUILD = ROOT / "build" / "demo"


def main() -> int:
    common = [str(EXAMPLE), "--test", str(DATA), "--target", "avr", "--run"]
    print("== 16-bit fixed point (Shiftry's data-driven scales), Arduino Uno ==", flush=True)
    rc = compile_main([*common, "--train", str(DATA), "--out", str(BUILD / "fixed16"),
                       "--json", str(BUILD / "fixed16.json")])
    if rc:
        return rc
    print("\n== float32 baseline (avr-gcc soft float), Arduino Uno ==", flush=True)
    rc = compile_main([*common, "--repr", "float32", "--out", str(BUILD / "float32"),
                       "--json", str(BUILD / "float32.json")])
    if rc:
        return rc
    import json

    fixed = json.loads((BUILD / "fixed16.json").read_text())["run"]
    flt = json.loads((BUILD / "float32.json").read_text())["run"]
    speedup = flt["latency"]["median"] / fixed["latency"]["median"]
    print(f"\nspeedup over float32 on the Uno: {speedup:.2f}x; static RAM "
          f"{fixed['ram_bytes']:,} B vs {flt['ram_bytes']:,} B; generated C in {BUILD}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
