"""Write examples/: one SeeDot program per model family, each next to a weights directory.

- protonn, bonsai, fastgrnn, lenet: copies of suite models (program, weights, test.npy) from
  benchmarks/models/ (run the training scripts first).
- fastgrnn_lr_usps: the real low-rank FastGRNN of ../shared/data/fastgrnn-lr-usps (weights
  copied unchanged; stdDevInv.npy = 1 / stdDev added because SeeDot has no division; the 10
  labelled examples as test.npy).
- rnnpool: an RNNPool-style block with small random weights (numpy, seed 0) and 32 random
  inputs labelled with the reference's own prediction.

Needs numpy only. Usage: python tools/train/make_examples.py
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import EXAMPLES, MODELS, REPO, decl, lit, ref  # noqa: E402

SUITE_EXAMPLES = {
    "protonn": "protonn-digits10",
    "bonsai": "bonsai-digits-binary",
    "fastgrnn": "fastgrnn-digits10",
    "lenet": "lenet-digits10",
}
USPS = REPO.parent / "shared" / "data" / "fastgrnn-lr-usps"


def copy_suite_example(example: str, model: str) -> None:
    src = MODELS / model
    dst = EXAMPLES / example
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    for p in sorted(src.glob("*.npy")):
        if p.name in ("train.npy", "val.npy"):
            continue
        shutil.copyfile(p, dst / p.name)
    text = (src / "model.sd").read_text()
    (EXAMPLES / f"{example}.sd").write_text(
        f"// Copy of benchmarks/models/{model}/model.sd; weights in examples/{example}/.\n" + text
    )


def usps_program(p: dict[str, np.ndarray]) -> str:
    return f"""// Low-rank FastGRNN for USPS digits: the real trained model of
// ../shared/data/fastgrnn-lr-usps (Microsoft EdgeML's C reference tests), weights in
// examples/fastgrnn_lr_usps/. 16 time steps of 16 features (the image rows), hidden 32,
// rank 5 (W = W2 * W1, U = U2 * U1), 10 classes.
// Input: the 256 raw pixels, 16 rows of 16, row-major, in [-1, 1]. Each row is normalised as
// (x_t - mean[t]) / stdDev[t]; SeeDot has no division, so the program multiplies by
// stdDevInv = 1 / stdDev (float32, computed from stdDev.npy by tools/train/make_examples.py).
// zeta and nu are the model's post-sigmoid values (zeta.npy, nu.npy), written exactly.
let X = (256, 1) in [-1.0, 1.0] in
{decl("W1", p["W1"])}
{decl("W2", p["W2"])}
{decl("U1", p["U1"])}
{decl("U2", p["U2"])}
{decl("Bg", p["Bg"], (32, 1))}
{decl("Bh", p["Bh"], (32, 1))}
{decl("FC", p["FC"])}
{decl("FCbias", p["FCbias"], (10, 1))}
{decl("mean", p["mean"])}
{decl("stdDevInv", p["stdDevInv"])}
let zeta = {lit(p["zeta"].item())} in
let nu = {lit(p["nu"].item())} in

let H = init([32, 1], 0.0) in
let res = loop(t = [0:16], H) (
    let xt = (X[16 * t:+16][0:+1] - mean[t:+1][0:+16]^T) <*> stdDevInv[t:+1][0:+16]^T in
    let pre = W2 * (W1 * xt) + U2 * (U1 * H) in
    let z = sigmoid(pre + Bg) in
    let c = tanh(pre + Bh) in
    let H = (z <*> H) + (zeta * (1.0 - z) + nu) <*> c in
    H
) in
let score = FC * res + FCbias in
argmax(score)
"""


def make_usps() -> None:
    dst = EXAMPLES / "fastgrnn_lr_usps"
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    params = {}
    for p in sorted(USPS.glob("*.npy")):
        if p.name == "examples_label_first_raw.npy":
            continue
        shutil.copyfile(p, dst / p.name)
        params[p.stem] = np.load(p)
    inv = (1.0 / params["stdDev"].astype(np.float64)).astype(np.float32)
    np.save(dst / "stdDevInv.npy", inv)
    params["stdDevInv"] = inv
    raw = np.load(USPS / "examples_label_first_raw.npy")
    np.save(dst / "test.npy", raw.astype(np.float32))
    (EXAMPLES / "fastgrnn_lr_usps.sd").write_text(usps_program(params))


# --------------------------------------------------------------------------------------------
# RNNPool-style block
# --------------------------------------------------------------------------------------------


def rnnpool_params(seed: int = common.SEED) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def normal(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)

    def uniform(shape: tuple[int, ...], lo: float, hi: float) -> np.ndarray:
        return rng.uniform(lo, hi, shape).astype(np.float32)

    p: dict[str, np.ndarray] = {
        "CF": normal((1, 3, 3, 1, 4), 9),
        "CB": uniform((4,), -0.1, 0.3),
    }
    for s, fan in (("1", 4), ("2", 4)):
        p["W" + s] = normal((4, fan), fan)
        p["U" + s] = normal((4, 4), 4)
        p["Bg" + s] = uniform((4, 1), -0.5, 0.5)
        p["Bh" + s] = uniform((4, 1), -0.5, 0.5)
        p["zeta" + s] = uniform((1,), 0.6, 0.9)
        p["nu" + s] = uniform((1,), 0.02, 0.1)
    p.update(
        F1=normal((1, 1, 1, 16, 32), 16),
        BW1=uniform((32,), 0.5, 1.5),
        BB1=uniform((32,), -0.2, 0.2),
        F2=normal((32, 3, 3, 1, 1), 9),
        BW2=uniform((32,), 0.5, 1.5),
        BB2=uniform((32,), -0.2, 0.2),
        F3=normal((1, 1, 1, 32, 16), 32),
        BW3=uniform((16,), 0.5, 1.5),
        BB3=uniform((16,), -0.2, 0.2),
        NW=uniform((16, 1, 1, 1, 1), 1.0, 3.0),
        FCW=normal((64, 10), 64),
        FCB=uniform((10,), -0.1, 0.1),
    )
    return p


def rnnpool_program(p: dict[str, np.ndarray]) -> str:
    def rnn_step(i: str, x: str, h: str, sfx: str) -> str:
        ind = " " * 16
        return (
            f"{ind}let a{i} = W{sfx} * {x} + U{sfx} * {h} in\n"
            f"{ind}let z{i} = sigmoid(a{i} + Bg{sfx}) in\n"
            f"{ind}let c{i} = tanh(a{i} + Bh{sfx}) in\n"
            f"{ind}let {h} = (z{i} <*> {h}) + (zeta{sfx} * (1.0 - z{i}) + nu{sfx}) <*> c{i} in\n"
            f"{ind}{h}"
        )

    decls = "\n".join(decl(k, v) for k, v in p.items() if v.size > 1)
    consts = "\n".join(f"let {k} = {lit(v.item())} in" for k, v in p.items() if v.size == 1)
    return f"""// An RNNPool-style block (Saha et al., NeurIPS 2020) with small random weights
// (numpy, seed 0: tools/train/make_examples.py), weights in examples/rnnpool/.
// 8x8x1 image -> conv 3x3 (4 channels) + bias, relu6 -> RNNPool over the four 4x4 patches
// (stride 4): RNN1 (FastGRNN cell, hidden 4) sweeps each patch's rows and columns, RNN2
// (hidden 4) summarises the row states and the column states forwards and backwards; the
// 16 summary values of patch (px, py) are written into rnnOut[0][px][py] by a left splice
// from inside the nested loops (which carry dummy accumulators) -> residual mbconv ->
// normaliseL2 -> per-channel scale (grouped 1x1 conv) -> flatten -> FC.
// The program returns the (1, 10) score row (not an argmax).
let X = (64, 1) in [-1.0, 1.0] in
{decls}
{consts}

let A0 = reshape(X, (1, 8, 8, 1), (1, 2)) in
let A = relu6(conv2d(A0, CF, {{s 1 1}}, {{p 1 1 1 1}}, {{d 1 1}}, {{g 1}}) <+> CB) in

let rnnOut = init([1, 2, 2, 16], 0.0) in
let accX = init([1, 1], 0.0) in
let accY = init([1, 1], 0.0) in

let dummyX = loop(px = [0:2], accX) (
    let dummyY = loop(py = [0:2], accY) (
        // the patch, as (row, column, channel)
        let P = reshape(A[0:+1][4 * px:+4][4 * py:+4][0:+4], (4, 4, 4), (1, 2, 3, 4)) in

        // RNN1 along every row: rowState[0:+4][r:+1] = final state of row r
        let rowState = init([4, 4], 0.0) in
        let rows = loop(r = [0:4], rowState) (
            let H1 = init([4, 1], 0.0) in
            let rowState[0:+4][r:+1] = loop(c = [0:4], H1) (
                let x1 = reshape(P[r:+1][c:+1][0:+4], (4, 1), (1, 2, 3)) in
{rnn_step("1", "x1", "H1", "1")}
            ) in
            rowState
        ) in

        // RNN1 along every column
        let colState = init([4, 4], 0.0) in
        let cols = loop(c = [0:4], colState) (
            let H2 = init([4, 1], 0.0) in
            let colState[0:+4][c:+1] = loop(r = [0:4], H2) (
                let x2 = reshape(P[r:+1][c:+1][0:+4], (4, 1), (1, 2, 3)) in
{rnn_step("2", "x2", "H2", "1")}
            ) in
            colState
        ) in

        // the four sequences RNN2 summarises: rows, rows reversed, columns, columns reversed
        let seqs = init([4, 4, 4], 0.0) in
        let seqs[0:+1][0:+4][0:+4] = reshape(rows, (1, 4, 4), (1, 2)) in
        let seqs[1:+1][0:+4][0:+4] = reshape(reverse(rows, 1), (1, 4, 4), (1, 2)) in
        let seqs[2:+1][0:+4][0:+4] = reshape(cols, (1, 4, 4), (1, 2)) in
        let seqs[3:+1][0:+4][0:+4] = reshape(reverse(cols, 1), (1, 4, 4), (1, 2)) in

        let summary = init([4, 4], 0.0) in
        let sums = loop(k = [0:4], summary) (
            let S = seqs[k] in
            let H3 = init([4, 1], 0.0) in
            let summary[0:+4][k:+1] = loop(s = [0:4], H3) (
                let x3 = S[0:+4][s:+1] in
{rnn_step("3", "x3", "H3", "2")}
            ) in
            summary
        ) in

        // summary column k = direction k; store direction-major: [k * 4 + unit]
        let rnnOut[0:+1][px:+1][py:+1][0:+16] = reshape(sums, (1, 1, 1, 16), (2, 1)) in
        accY
    ) in
    accX
) in

let M = rnnOut + mbconv(rnnOut, [F1, BW1, BB1], [F2, BW2, BB2], [F3, BW3, BB3],
                        {{s 1 1}}, {{p 1 1 1 1}}) in
let N = conv2d(normaliseL2(M), NW, {{s 1 1}}, {{p 0 0 0 0}}, {{d 1 1}}, {{g 16}}) in
let flat = reshape(N, (1, 64), (1, 2, 3, 4)) in
(flat * FCW) <+> FCB
"""


def make_rnnpool() -> None:
    dst = EXAMPLES / "rnnpool"
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    p = rnnpool_params()
    for k, v in p.items():
        np.save(dst / f"{k}.npy", v)
    rng = np.random.default_rng(common.SEED + 1)
    X = rng.uniform(-1.0, 1.0, (32, 64)).astype(np.float32)
    labels = ref.predict(ref.rnnpool_block(p, X))
    np.save(dst / "test.npy", common.dataset_array(X, labels))
    (EXAMPLES / "rnnpool.sd").write_text(rnnpool_program(p))


def main() -> None:
    EXAMPLES.mkdir(exist_ok=True)
    for example, model in SUITE_EXAMPLES.items():
        copy_suite_example(example, model)
    make_usps()
    make_rnnpool()
    print("examples written:", ", ".join(sorted(p.name for p in EXAMPLES.glob("*.sd"))))


if __name__ == "__main__":
    main()
