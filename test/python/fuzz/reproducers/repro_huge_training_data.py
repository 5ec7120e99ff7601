"""Training data of magnitude 1e30 (finite, so the data checks pass): the data-driven
scales need a rescale by 2^100, which num.rescale rejects, and quantize reports
'quantize produced invalid IR (a bug, please report): num.rescale: shift 100 is out of
range'. Expected: a diagnostic that names the value and its range (or clamped scales).
Fix in minun_mlir/numerics/fixed_repr.py (scale_for / rescale)."""

import contextlib
import io
import sys
import tempfile
from pathlib import Path

import numpy as np

from minun_mlir.tools.minun_compile import main

with tempfile.TemporaryDirectory() as tmp:
    d = Path(tmp)
    (d / "m.sd").write_text("let X = (2, 1) in [0.0, 1.0] in\nlet W = (2, 2) in [-1.0, 1.0] in\n"
                            "let B = (2, 1) in [-1.0, 1.0] in\nrelu(W * X + B)\n")
    np.save(d / "W.npy", np.eye(2, dtype=np.float32))
    np.save(d / "B.npy", np.ones((2, 1), np.float32))
    np.save(d / "train.npy", np.array([[0, 1e30, 1e30], [0, -1e30, 2e30]], np.float32))
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main([str(d / "m.sd"), "--train", str(d / "train.npy")])
    text = err.getvalue()
    print(text.strip() or f"exit {rc}")
    sys.exit(1 if "a bug" in text or "internal error" in text else 0)
