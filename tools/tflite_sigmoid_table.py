"""TFLite's 256-entry sigmoid table (sigmoid(i / 24) at 0.16, which TFLite's int16 Logistic
and Tanh interpolate in; the int8 LSTM's gates use them), measured from TFLM's own
interpreter, into minun_mlir/formats/zero_skew/tflite_sigmoid_table.py.

One int16 TANH (input 2^-12: its input is multiplied by 3; output 2^-15) on every
non-negative int16 x: 3x falls in segment u = 3x >> 8 at offset t = 3x & 255, and TFLite's
output is T[u] - 32768 + floor((t (T[u+1] - T[u]) + 128) / 256). T[0] = 32768 (its output
at 0 is 0); each next entry is the one slope that gives every output of its segment (the
script checks there is exactly one).

    .venv/bin/python tools/tflite_sigmoid_table.py          # writes the module
    .venv/bin/python tools/tflite_sigmoid_table.py --check  # measures and compares
"""

from __future__ import annotations

import os
import sys
import tempfile

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "minun_mlir", "formats", "zero_skew", "tflite_sigmoid_table.py")


def tanh_outputs() -> np.ndarray:
    """TFLM's int16 TANH of x = 0..32767 at input scale 2^-12."""
    sys.path.insert(0, os.path.join(ROOT, "test", "python", "tflite"))
    from tflite_builder import ModelBuilder
    from tflite_micro.python.tflite_micro import runtime

    m = ModelBuilder()
    n = 1 << 15
    x = m.tensor([1, n], "int16", scale=2.0 ** -12, zp=0)
    y = m.tensor([1, n], "int16", scale=2.0 ** -15, zp=0)
    m.op("TANH", [x], [y])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tanh.tflite")
        with open(path, "wb") as f:
            f.write(m.build([x], [y]))
        interp = runtime.Interpreter.from_file(path, arena_size=1 << 20)
        interp.set_input(np.arange(n, dtype=np.int16)[None], 0)
        interp.invoke()
        return interp.get_output(0).reshape(-1).astype(np.int64)


def measure() -> list[int]:
    out = tanh_outputs()
    v = 3 * np.arange(len(out))
    table = [32768]
    for u in range(255):
        seg = (v >> 8) == u
        t, got = v[seg] & 255, out[seg]
        d = np.arange(2048)[:, None]
        fits = np.nonzero(((table[u] - 32768 + ((t * d + 128) >> 8)) == got).all(1))[0]
        if len(fits) != 1:
            raise SystemExit(f"segment {u}: {len(fits)} slopes fit TFLM's outputs")
        table.append(table[u] + int(fits[0]))
    return table


def module_text(table: list[int]) -> str:
    rows = "\n".join("    " + ", ".join(str(v) for v in table[k:k + 12]) + ","
                     for k in range(0, 256, 12))
    return ('"""TFLite\'s sigmoid table (sigmoid(i / 24) at 0.16, i = 0..255), which its int16\n'
            'Logistic and Tanh interpolate in: measured from TFLM\'s interpreter by\n'
            'tools/tflite_sigmoid_table.py (generated; do not edit)."""\n\n'
            f"SIGMOID_TABLE = (\n{rows}\n)\n")


def main() -> int:
    text = module_text(measure())
    if "--check" in sys.argv[1:]:
        with open(OUT) as f:
            same = f.read() == text
        print("tflite_sigmoid_table.py: " + ("equal to TFLM's" if same else "DIFFERS"))
        return 0 if same else 1
    with open(OUT, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
