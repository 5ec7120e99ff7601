"""Plain-numpy reference forward passes of the model families in the benchmark suite.

Written from the algorithms' papers (ProtoNN, Bonsai, FastGRNN, LeNet, RNNPool), independently
of the compiler: these are the oracles that the frontend's float evaluator, the fixed-point
code and the ONNX exports are checked against. Everything is computed in float64 (inputs and
parameters are widened first) so that predictions do not depend on the BLAS build.

Every function takes the parameter dict (``NAME -> ndarray`` as stored in a model directory,
any shape with the right element count) and a batch of inputs ``X`` of shape ``[N, features]``
(one row per example, as in the SeeDot dataset files without the label column). They return
real-valued scores ``[N, classes]`` (``[N, 1]`` for Bonsai's binary score); ``predict`` turns
scores into labels the way the SeeDot programs do (``argmax``, or ``sgn`` for a scalar score).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np

Params = Mapping[str, np.ndarray]

DATASET_FILES = ("train.npy", "val.npy", "test.npy")


# --------------------------------------------------------------------------------------------
# Elementary functions
# --------------------------------------------------------------------------------------------


def _f64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Logistic function, written to avoid overflow for large |x|."""
    x = _f64(x)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def relu6(x: np.ndarray) -> np.ndarray:
    return np.clip(x, 0.0, 6.0)


def scalar(params: Params, name: str) -> float:
    """A parameter stored as a one-element array (gamma^2, sigma, zeta, nu)."""
    a = _f64(params[name])
    if a.size != 1:
        raise ValueError(f"parameter {name} should hold one value, has shape {a.shape}")
    return float(a.reshape(()))


def as_shape(params: Params, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Parameter ``name`` reshaped to ``shape`` (the element counts must match)."""
    a = _f64(params[name])
    if a.size != int(np.prod(shape)):
        raise ValueError(f"parameter {name} has {a.size} elements, expected shape {shape}")
    return a.reshape(shape)


# --------------------------------------------------------------------------------------------
# ProtoNN  (Gupta et al., ICML 2017)
# --------------------------------------------------------------------------------------------


def protonn(params: Params, X: np.ndarray) -> np.ndarray:
    """score_c(x) = sum_j Z[j, c] * exp(-g2 * ||W x - B_j||^2).

    W: [d, D] projection; B: m prototypes of size d; Z: their label vectors [m, L];
    g2 = gamma^2 (a one-element parameter).
    """
    W = _f64(params["W"])
    d, D = W.shape
    B = _f64(params["B"]).reshape(-1, d)
    m = B.shape[0]
    Z = _f64(params["Z"]).reshape(m, -1)
    g2 = scalar(params, "g2")
    WX = _f64(X).reshape(-1, D) @ W.T  # [N, d]
    dist = ((WX[:, None, :] - B[None, :, :]) ** 2).sum(axis=2)  # [N, m]
    return np.exp(-g2 * dist) @ Z  # [N, L]


# --------------------------------------------------------------------------------------------
# Bonsai  (Kumar et al., ICML 2017)
# --------------------------------------------------------------------------------------------


def bonsai(params: Params, X: np.ndarray) -> np.ndarray:
    """Hard-routed Bonsai tree.

    Z: [d, D] sparse projection; internal nodes k = 0 .. 2^depth - 2 carry theta_k = T[k]
    ([d]); every node k (2^(depth+1) - 1 of them, heap order) carries W_k and V_k ([L, d]).
    The path starts at the root 0; from node k it goes to 2k+1 when theta_k . Zx >= 0 and to
    2k+2 otherwise, for ``depth`` steps. score(x) = sum over the path's nodes of
    (W_k Zx) * tanh(sigma * V_k Zx), elementwise. L = 1 for binary tasks (predict score > 0).
    """
    Zp = _f64(params["Z"])
    d, D = Zp.shape
    T = _f64(params["T"]).reshape(-1, d)
    n_internal = T.shape[0]
    n_nodes = 2 * n_internal + 1
    depth = int(np.log2(n_internal + 1))
    if 2**depth - 1 != n_internal:
        raise ValueError(f"T has {n_internal} rows, not 2^depth - 1")
    W = _f64(params["W"]).reshape(n_nodes, -1, d)
    V = _f64(params["V"]).reshape(n_nodes, -1, d)
    sigma = scalar(params, "sigma")
    ZX = _f64(X).reshape(-1, D) @ Zp.T  # [N, d]
    N = ZX.shape[0]
    node = np.zeros(N, dtype=np.int64)
    score = np.zeros((N, W.shape[1]))
    for level in range(depth + 1):
        wz = np.einsum("nld,nd->nl", W[node], ZX)
        vz = np.einsum("nld,nd->nl", V[node], ZX)
        score = score + wz * np.tanh(sigma * vz)
        if level < depth:
            t = np.einsum("nd,nd->n", T[node], ZX)
            node = np.where(t >= 0, 2 * node + 1, 2 * node + 2)
    return score


# --------------------------------------------------------------------------------------------
# FastGRNN and low-rank FastGRNN  (Kusupati et al., NeurIPS 2018)
# --------------------------------------------------------------------------------------------


def fastgrnn(params: Params, X: np.ndarray, steps: int, inverse_std: bool = False) -> np.ndarray:
    """FastGRNN over ``steps`` time steps of ``features / steps`` inputs each, then FC.

    Per step: pre = W x_t + U h; z = sigmoid(pre + Bg); c = tanh(pre + Bh);
    h = (zeta (1 - z) + nu) * c + z * h; h starts at 0. Scores = FC h + FCbias.
    Full rank uses W [H, F] and U [H, H]; low rank uses W = W2 W1, U = U2 U1 and computes
    W2 (W1 x) + U2 (U1 h) in that order. When the dict holds ``mean`` the input is
    normalised per step as (x_t - mean_t) / stdDev_t (the USPS model), or, with
    ``inverse_std``, as (x_t - mean_t) * stdDevInv_t, which is what a SeeDot program can
    write (the language has no division).
    """
    X = _f64(X)
    N = X.shape[0]
    xs = X.reshape(N, steps, -1)
    F = xs.shape[2]
    low_rank = "W1" in params
    if low_rank:
        W1, W2 = _f64(params["W1"]), _f64(params["W2"])
        U1, U2 = _f64(params["U1"]), _f64(params["U2"])
        H = W2.shape[0]
        W1 = W1.reshape(-1, F)
        U1 = U1.reshape(-1, H)
        W2 = W2.reshape(H, -1)
        U2 = U2.reshape(H, -1)
    else:
        W, U = _f64(params["W"]), _f64(params["U"])
        H = U.shape[0]
        W = W.reshape(H, F)
        U = U.reshape(H, H)
    Bg = _f64(params["Bg"]).reshape(H)
    Bh = _f64(params["Bh"]).reshape(H)
    FC = _f64(params["FC"]).reshape(-1, H)
    FCbias = _f64(params["FCbias"]).reshape(-1)
    zeta = scalar(params, "zeta")
    nu = scalar(params, "nu")
    mean = std = None
    if "mean" in params:
        mean = _f64(params["mean"]).reshape(steps, F)
        std = _f64(params["stdDevInv" if inverse_std else "stdDev"]).reshape(steps, F)
    h = np.zeros((N, H))
    for t in range(steps):
        x = xs[:, t, :]
        if mean is not None:
            x = (x - mean[t]) * std[t] if inverse_std else (x - mean[t]) / std[t]
        if low_rank:
            pre = (x @ W1.T) @ W2.T + (h @ U1.T) @ U2.T
        else:
            pre = x @ W.T + h @ U.T
        z = sigmoid(pre + Bg)
        c = np.tanh(pre + Bh)
        h = (zeta * (1.0 - z) + nu) * c + z * h
    return h @ FC.T + FCbias


def fastgrnn_lr_usps(params: Params, X: np.ndarray, inverse_std: bool = False) -> np.ndarray:
    """The real USPS model of ../shared/data/fastgrnn-lr-usps: 256 raw pixels, 16 rows of 16."""
    return fastgrnn(params, X, steps=16, inverse_std=inverse_std)


# --------------------------------------------------------------------------------------------
# Convolutional building blocks (NHWC, filters [G, HF, WF, C/G, Cout])
# --------------------------------------------------------------------------------------------


def conv2d(
    A: np.ndarray,
    F: np.ndarray,
    stride: tuple[int, int] = (1, 1),
    pad: tuple[int, int, int, int] = (0, 0, 0, 0),
    dilation: tuple[int, int] = (1, 1),
    groups: int = 1,
) -> np.ndarray:
    """Cross-correlation as in PyTorch's Conv2d, on NHWC data.

    A: [N, H, W, C]; F: [G, HF, WF, C/G, Cout]; pad = (top, bottom, left, right);
    output [N, Hout, Wout, G*Cout], group g reading input channels g*C/G .. (g+1)*C/G - 1
    and writing output channels g*Cout .. (g+1)*Cout - 1.
    """
    A = _f64(A)
    F = _f64(F)
    G, HF, WF, Cg, Cout = F.shape
    N, Hin, Win, C = A.shape
    if G != groups or Cg * G != C:
        raise ValueError(f"filter {F.shape} does not fit input {A.shape} with {groups} groups")
    t, b, l, r = pad
    Ap = np.pad(A, ((0, 0), (t, b), (l, r), (0, 0)))
    sh, sw = stride
    dh, dw = dilation
    Hout = (Hin + t + b - dh * (HF - 1) - 1) // sh + 1
    Wout = (Win + l + r - dw * (WF - 1) - 1) // sw + 1
    out = np.zeros((N, Hout, Wout, G * Cout))
    for g in range(G):
        Ag = Ap[..., g * Cg : (g + 1) * Cg]
        acc = np.zeros((N, Hout, Wout, Cout))
        for i in range(HF):
            for j in range(WF):
                r0, c0 = i * dh, j * dw
                patch = Ag[
                    :, r0 : r0 + sh * (Hout - 1) + 1 : sh, c0 : c0 + sw * (Wout - 1) + 1 : sw, :
                ]
                acc += patch @ F[g, i, j]
        out[..., g * Cout : (g + 1) * Cout] = acc
    return out


def maxpool(A: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int]) -> np.ndarray:
    """Max pooling without padding on NHWC data (floor of the output size)."""
    A = _f64(A)
    N, H, W, C = A.shape
    kh, kw = kernel
    sh, sw = stride
    Hout = (H - kh) // sh + 1
    Wout = (W - kw) // sw + 1
    out = np.full((N, Hout, Wout, C), -np.inf)
    for i in range(kh):
        for j in range(kw):
            out = np.maximum(
                out, A[:, i : i + sh * (Hout - 1) + 1 : sh, j : j + sw * (Wout - 1) + 1 : sw, :]
            )
    return out


def mbconv(
    A: np.ndarray,
    layer1: tuple[np.ndarray, np.ndarray, np.ndarray],
    layer2: tuple[np.ndarray, np.ndarray, np.ndarray],
    layer3: tuple[np.ndarray, np.ndarray, np.ndarray],
    stride: tuple[int, int],
    pad: tuple[int, int, int, int],
) -> np.ndarray:
    """Inverted bottleneck: 1x1 expand + BN + ReLU6, depthwise + BN + ReLU6, 1x1 project + BN.

    Batch norm is folded to a per-channel scale W and bias B: y = x * W + B.
    """
    F1, W1, B1 = (_f64(a) for a in layer1)
    F2, W2, B2 = (_f64(a) for a in layer2)
    F3, W3, B3 = (_f64(a) for a in layer3)
    x = relu6(conv2d(A, F1) * W1.reshape(-1) + B1.reshape(-1))
    x = relu6(conv2d(x, F2, stride, pad, groups=F2.shape[0]) * W2.reshape(-1) + B2.reshape(-1))
    return conv2d(x, F3) * W3.reshape(-1) + B3.reshape(-1)


def normalise_l2(A: np.ndarray) -> np.ndarray:
    """Divide the channel vector at every spatial position by its L2 norm."""
    A = _f64(A)
    return A / np.sqrt((A * A).sum(axis=-1, keepdims=True))


# --------------------------------------------------------------------------------------------
# LeNet-style CNN for 8x8 single-channel images
# --------------------------------------------------------------------------------------------


def lenet(params: Params, X: np.ndarray, side: int = 8) -> np.ndarray:
    """conv3x3(pad 1) -> +bias -> ReLU -> maxpool 2x2/2, twice; flatten (NHWC); FC-ReLU-FC.

    The SeeDot program pools before adding the bias and applying ReLU, which is the same
    function (max commutes with a per-channel constant and with ReLU).
    """
    X = _f64(X)
    N = X.shape[0]
    A = X.reshape(N, side, side, 1)
    for conv, bias in (("CF1", "CB1"), ("CF2", "CB2")):
        F = _f64(params[conv])
        A = conv2d(A, F, pad=(1, 1, 1, 1))
        A = np.maximum(A + _f64(params[bias]).reshape(-1), 0.0)
        A = maxpool(A, (2, 2), (2, 2))
    v = A.reshape(N, -1)
    FW1 = _f64(params["FW1"]).reshape(v.shape[1], -1)
    h = np.maximum(v @ FW1 + _f64(params["FB1"]).reshape(-1), 0.0)
    FW2 = _f64(params["FW2"]).reshape(h.shape[1], -1)
    return h @ FW2 + _f64(params["FB2"]).reshape(-1)


# --------------------------------------------------------------------------------------------
# RNNPool-style block (Saha et al., NeurIPS 2020), as in examples/rnnpool.sd
# --------------------------------------------------------------------------------------------


def _fastgrnn_cell_seq(xs: np.ndarray, p: Params, sfx: str) -> np.ndarray:
    """Run a full-rank FastGRNN cell over xs [N, T, F]; returns the final state [N, H]."""
    W = _f64(p["W" + sfx])
    U = _f64(p["U" + sfx])
    H = U.shape[0]
    Bg = _f64(p["Bg" + sfx]).reshape(H)
    Bh = _f64(p["Bh" + sfx]).reshape(H)
    zeta = scalar(p, "zeta" + sfx)
    nu = scalar(p, "nu" + sfx)
    h = np.zeros((xs.shape[0], H))
    for t in range(xs.shape[1]):
        pre = xs[:, t, :] @ W.T + h @ U.T
        z = sigmoid(pre + Bg)
        c = np.tanh(pre + Bh)
        h = (z * h) + (zeta * (1.0 - z) + nu) * c
    return h


def rnnpool_block(params: Params, X: np.ndarray) -> np.ndarray:
    """Scores [N, 10] of the RNNPool-style block in examples/rnnpool.sd.

    8x8x1 image -> conv 3x3 (pad 1, 4 channels) + bias, ReLU6 -> RNNPool over the four 4x4
    patches (stride 4): per patch, RNN1 (hidden 4) sweeps every row left to right and every
    column top to bottom; RNN2 (hidden 4) summarises the row states forwards and backwards and
    the column states forwards and backwards; the 4 final states (16 values) fill the patch's
    position of a [1, 2, 2, 16] map -> residual mbconv (expand 32, depthwise 3x3 pad 1) ->
    normaliseL2 -> per-channel scale (grouped 1x1 conv) -> flatten (NHWC) -> FC + bias.
    """
    X = _f64(X)
    N = X.shape[0]
    A = X.reshape(N, 8, 8, 1)
    A = relu6(conv2d(A, params["CF"], pad=(1, 1, 1, 1)) + _f64(params["CB"]).reshape(-1))
    out = np.zeros((N, 2, 2, 16))
    for px in range(2):
        for py in range(2):
            P = A[:, 4 * px : 4 * px + 4, 4 * py : 4 * py + 4, :]  # [N, 4 (row), 4 (col), 4]
            rows = np.stack([_fastgrnn_cell_seq(P[:, r, :, :], params, "1") for r in range(4)], 1)
            cols = np.stack([_fastgrnn_cell_seq(P[:, :, c, :], params, "1") for c in range(4)], 1)
            summaries = [
                _fastgrnn_cell_seq(rows, params, "2"),
                _fastgrnn_cell_seq(rows[:, ::-1, :], params, "2"),
                _fastgrnn_cell_seq(cols, params, "2"),
                _fastgrnn_cell_seq(cols[:, ::-1, :], params, "2"),
            ]
            out[:, px, py, :] = np.concatenate(summaries, axis=1)
    M = out + mbconv(
        out,
        (params["F1"], params["BW1"], params["BB1"]),
        (params["F2"], params["BW2"], params["BB2"]),
        (params["F3"], params["BW3"], params["BB3"]),
        stride=(1, 1),
        pad=(1, 1, 1, 1),
    )
    S = conv2d(normalise_l2(M), params["NW"], groups=16)
    v = S.reshape(N, -1)
    return v @ _f64(params["FCW"]).reshape(v.shape[1], -1) + _f64(params["FCB"]).reshape(-1)


# --------------------------------------------------------------------------------------------
# Dispatch on a model directory
# --------------------------------------------------------------------------------------------


def predict(scores: np.ndarray) -> np.ndarray:
    """Labels from scores: argmax over classes, or sgn (score > 0 -> 1) for one column."""
    scores = np.asarray(scores)
    if scores.shape[1] == 1:
        return (scores[:, 0] > 0).astype(np.int64)
    return np.argmax(scores, axis=1).astype(np.int64)


def forward(family: str, params: Params, X: np.ndarray, arch: Mapping | None = None) -> np.ndarray:
    """Scores of a model of ``family`` (the ``family`` field of info.json)."""
    arch = dict(arch or {})
    if family == "protonn":
        return protonn(params, X)
    if family == "bonsai":
        return bonsai(params, X)
    if family in ("fastgrnn", "fastgrnn-lr"):
        return fastgrnn(params, X, steps=int(arch["steps"]))
    if family == "lenet":
        return lenet(params, X, side=int(arch.get("side", 8)))
    if family == "rnnpool":
        return rnnpool_block(params, X)
    raise ValueError(f"unknown model family {family!r}")


def load_params(model_dir: Path | str) -> dict[str, np.ndarray]:
    """Every NAME.npy of a model directory except the datasets."""
    model_dir = Path(model_dir)
    return {
        p.stem: np.load(p) for p in sorted(model_dir.glob("*.npy")) if p.name not in DATASET_FILES
    }


def load_dataset(path: Path | str) -> tuple[np.ndarray, np.ndarray]:
    """SeeDot dataset [N, 1 + features]: (features, 0-based integer labels)."""
    data = np.load(path)
    return data[:, 1:], data[:, 0].astype(np.int64)


def load_info(model_dir: Path | str) -> dict:
    return json.loads((Path(model_dir) / "info.json").read_text())


def evaluate_arrays(
    family: str, params: Params, data: np.ndarray, arch: Mapping | None = None
) -> tuple[int, int]:
    """(correct, count) of the reference on a SeeDot dataset array [N, 1 + features]."""
    X, y = data[:, 1:], data[:, 0].astype(np.int64)
    return int((predict(forward(family, params, X, arch)) == y).sum()), int(len(y))


def evaluate(model_dir: Path | str, split: str = "test") -> tuple[int, int]:
    """(correct, count) of the reference on ``split`` of a suite model directory."""
    model_dir = Path(model_dir)
    info = load_info(model_dir)
    data = np.load(model_dir / f"{split}.npy")
    return evaluate_arrays(info["family"], load_params(model_dir), data, info.get("architecture"))
