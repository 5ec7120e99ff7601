"""L2 text whose function says num.rounding = "bogus": the num dialect does not verify its
function attributes, so the text is accepted and lower-to-loops fails in
minun_mlir/numerics/fixed.py:round_real with 'minun-opt: internal error: ValueError:
unknown rounding mode 'bogus''. Expected: a located verification error at the func.
Fix in dialects/num.py (verify num.rounding / num.overflow where they are read), or in
lowering/lower_to_loops.py (a diagnostic when reading them)."""

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
    (d / "m.sd").write_text("let X = (2, 1) in [0.0, 1.0] in\nlet B = (2, 1) in [-1.0, 1.0] in\n"
                            "let H = init([2, 1], 0.3) in\nX + H + B\n")
    import numpy as np

    np.save(d / "B.npy", np.full((2, 1), 0.3, np.float32))
    rc, l2, _ = opt([str(d / "m.sd"), "--pass-pipeline=builtin.module(quantize{bits=8})"])
    assert rc == 0 and 'num.rounding = "trunc"' in l2
    (d / "m.mlir").write_text(l2.replace('num.rounding = "trunc"', 'num.rounding = "bogus"'))
    rc, _, err = opt([str(d / "m.mlir"), "--pass-pipeline=builtin.module(lower-to-loops)"])
    print(err.strip() or f"exit {rc}")
    sys.exit(1 if "internal error" in err else 0)
