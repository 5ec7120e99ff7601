"""lower-to-emitc run directly on L2 (lower-to-loops skipped): the pass unpacks the entry
block's arguments, finds none, and raises ValueError: 'minun-opt: internal error:
ValueError: not enough values to unpack (expected 2, got 0)'. Expected: a diagnostic
like lower-to-loops' ("lower-to-emitc needs L3: run lower-to-loops first").
Fix in lowering/lower_to_emitc.py (LowerToEmitC.function, or a level check in run)."""

import contextlib
import io
import sys
import tempfile
from pathlib import Path

from minun_mlir.tools.minun_opt import main


def opt(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


with tempfile.TemporaryDirectory() as tmp:
    d = Path(tmp)
    (d / "m.sd").write_text("let X = (2, 1) in [0.0, 1.0] in\nrelu(X)\n")
    rc, l2, _ = opt([str(d / "m.sd"), "--pass-pipeline=builtin.module(quantize{bits=16})"])
    assert rc == 0
    (d / "m.mlir").write_text(l2)
    rc, _, err = opt([str(d / "m.mlir"), "--pass-pipeline=builtin.module(lower-to-emitc)"])
    print(err.strip() or f"exit {rc}")
    sys.exit(1 if "internal error" in err else 0)
