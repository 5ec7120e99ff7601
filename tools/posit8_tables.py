"""Write the posit8 function tables of third_party/softposit/posit.c (between its BEGIN and
END markers): exp, sigmoid, tanh, sqrt and log of every posit<8, es> pattern, es = 0..2,
as the Python kernels (minun_mlir/formats/posit/arith.py) compute them, which are the
runtime's own results bit for bit (test_softposit_c.py checks every posit8 input;
test_posit_fast_paths.py checks the tables against the computed functions).

Usage: .venv/bin/python tools/posit8_tables.py [--check]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from minun_mlir.formats.posit import arith as P

POSIT_C = Path(__file__).resolve().parent.parent / "third_party" / "softposit" / "posit.c"
BEGIN = "/* BEGIN posit8 tables (tools/posit8_tables.py writes them) */\n"
END = "/* END posit8 tables */\n"
FUNCTIONS = ("exp", "sigmoid", "tanh", "sqrt", "log")


def block() -> str:
    out = [BEGIN]
    for es in (0, 1, 2):
        for fn in FUNCTIONS:
            values = getattr(P, fn)(np.arange(256), 8, es)
            out.append(f"static const uint8_t P8E{es}_{fn.upper()}[256] TABLE = {{\n")
            for row in range(0, 256, 16):
                out.append("    " + ", ".join(f"0x{int(v):02x}" for v in values[row:row + 16])
                           + ",\n")
            out.append("};\n")
    out.append(END)
    return "".join(out)


def main(argv: list[str]) -> int:
    text = POSIT_C.read_text()
    i, j = text.index(BEGIN), text.index(END) + len(END)
    new = text[:i] + block() + text[j:]
    if "--check" in argv:
        if new != text:
            print(f"error: {POSIT_C}: posit8 tables differ from tools/posit8_tables.py's",
                  file=sys.stderr)
            return 1
        return 0
    POSIT_C.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
