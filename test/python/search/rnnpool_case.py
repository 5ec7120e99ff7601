"""A small RNNPool-style classifier on which truncating shifts lose most of the accuracy
at 8 bits and rounding to nearest does not (the held-out RNNPool program of the
reliability issue, item 8, in miniature), built deterministically for the search tests.

The recurrent weights are seeded random; the FC layer reads the 4 pooled values along
two directions: the one along which fixed8 with truncating shifts is biased away from
float (and fixed8 rounding to nearest is not, on average), and the main direction of the
data orthogonal to it; each class is one sign of one direction, so the labels (float's
argmax) depend on the values that truncation shifts."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

PROGRAM = Path(__file__).with_name("rnnpool_small.sd")
SHAPES = {"CF": (1, 3, 3, 1, 2), "CB": (2,), "W1": (2, 2), "U1": (2, 2), "Bg1": (2, 1),
          "Bh1": (2, 1), "W2": (2, 2), "U2": (2, 2), "Bg2": (2, 1), "Bh2": (2, 1)}


def make_case(folder: Path, n: int = 48, seed: int = 1) -> tuple[Path, Path, Path]:
    """(program, train.npy, test.npy) in `folder`, n examples each."""
    from minun_mlir.driver import Options, compile_model
    from minun_mlir.frontends.seedot import load_program
    from minun_mlir.native import evaluate_outputs, float_outputs
    from minun_mlir.numerics.l2_eval import decode_outputs

    rng = np.random.default_rng(seed)
    weights = folder / "rnnpool_small"
    weights.mkdir(parents=True, exist_ok=True)
    for name, shape in SHAPES.items():
        scale = 0.45 if name.startswith(("CB", "B")) else 1.4
        np.save(weights / f"{name}.npy", rng.uniform(-scale, scale, shape).astype(np.float32))
    x = rng.uniform(-1, 1, (2 * n, 16)).astype(np.float32)
    text = PROGRAM.read_text()
    flat = folder / "flat.sd"  # the program up to the FC layer
    flat.write_text("\n".join(line for line in text.replace("(flat * FCW) <+> FCB", "flat")
                               .splitlines() if not line.startswith(("let FCW", "let FCB"))))
    shutil.copytree(weights, folder / "flat", dirs_exist_ok=True)
    np.save(folder / "x.npy", np.concatenate([np.zeros((2 * n, 1)), x], 1).astype(np.float32))
    f = float_outputs(load_program(flat), x, "numpy")[0].reshape(2 * n, -1).astype(np.float64)
    bias = {}
    for rounding in ("trunc", "nearest"):
        c = compile_model(flat, Options(bits=8, rounding=rounding), train=folder / "x.npy")
        g = decode_outputs(c.l2, evaluate_outputs(c.l2, x, "numpy"))[0].reshape(2 * n, -1)
        bias[rounding] = (g - f).mean(0)
    t, r = bias["trunc"], bias["nearest"]
    w = t - r * (t @ r) / (r @ r)  # truncation's bias, without the part nearest shares
    w /= np.linalg.norm(w)
    d = f - np.median(f, 0)
    v = np.linalg.svd(d - np.outer(d @ w, w), full_matrices=False)[2][0]
    fcw = np.stack([w, -w, v, -v], 1) / np.array([(d @ w).std()] * 2 + [(d @ v).std()] * 2)
    fcw *= 7.5 / max(np.abs(fcw).max(), np.abs(np.median(f, 0) @ fcw).max())
    fcb = -np.median(f, 0) @ fcw
    np.save(weights / "FCW.npy", fcw.astype(np.float32))
    np.save(weights / "FCB.npy", fcb.astype(np.float32))
    program = folder / PROGRAM.name
    shutil.copy(PROGRAM, program)
    scores = float_outputs(load_program(program), x, "numpy")[0].reshape(2 * n, -1)
    labels = np.argmax(scores, 1)
    paths = []
    for name, rows in (("train", slice(0, n)), ("test", slice(n, 2 * n))):
        paths.append(folder / f"{name}.npy")
        np.save(paths[-1], np.concatenate([labels[rows, None], x[rows]], 1).astype(np.float32))
    return program, paths[0], paths[1]
