"""The RNNPool face-4 network of benchmarks/real/edgeml-rnnpool-face-4/input.sd in
PyTorch, op for op, with its parameters named and shaped as the program declares them
(so the trained values are exported as NAME.npy with no reordering).

Internally NCHW; `forward` returns the program's 18,000-value answer (the NHWC
score and box maps flattened as the program's reshapes do). `RANGES` holds each
parameter's declared `in [low, high]`, read from the program; `clamp_()` keeps every
parameter inside it.
"""

from __future__ import annotations

import re
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

PROGRAM = (Path(__file__).resolve().parents[2] / "benchmarks" / "real"
           / "edgeml-rnnpool-face-4" / "input.sd")
DECL = re.compile(r"^let (\w+) = \(([\d, ]+)\) in \[([-\d.e]+), ([-\d.e]+)\]", re.M)


def declarations(path: Path = PROGRAM) -> dict[str, tuple[tuple[int, ...], float, float]]:
    """NAME -> (shape, low, high) of every parameter the program declares (not X)."""
    out = {}
    for name, shape, lo, hi in DECL.findall(path.read_text()):
        if name != "X":
            out[name] = (tuple(int(s) for s in shape.split(",")), float(lo), float(hi))
    return out


DECLS = declarations()
FILTERS = re.compile(r"(CBR1F|L\dF\d|conf\dw|loc\dw)$")


def _init(name: str, shape: tuple[int, ...], lo: float, hi: float,
          g: torch.Generator) -> torch.Tensor:
    """Filters and matrices: Kaiming-like uniform; scales and biases: the in-range value
    nearest 1 (scales) or 0 (biases); all clamped into [lo, hi]."""
    if FILTERS.match(name) or name in ("W1", "U1", "W2", "U2"):
        if FILTERS.match(name) and shape[0] > 1:  # depthwise [C, kh, kw, 1, 1]
            fan_in = shape[1] * shape[2]
        elif FILTERS.match(name):
            fan_in = shape[1] * shape[2] * shape[3]
        else:
            fan_in = shape[1]
        bound = (3.0 / fan_in) ** 0.5
        t = (torch.rand(shape, generator=g) * 2 - 1) * bound
    elif re.match(r"(L\dW\d|normW\d|CBR1W)$", name):
        t = torch.full(shape, 1.0)
    else:
        t = torch.zeros(shape)
    return t.clamp(lo, hi)


def _conv(x: torch.Tensor, f: torch.Tensor, stride: int = 1, pad: int = 0) -> torch.Tensor:
    """SeeDot conv2d with g = 1: filter [1, kh, kw, C, Cout] -> torch [Cout, C, kh, kw]."""
    return F.conv2d(x, f[0].permute(3, 2, 0, 1), stride=stride, padding=pad)


def _chan(v: torch.Tensor) -> torch.Tensor:
    return v.reshape(1, -1, 1, 1)


def _mbconv(x, f1, w1, b1, f2, w2, b2, f3, w3, b3, stride: int) -> torch.Tensor:
    t = torch.clamp(_conv(x, f1) * _chan(w1) + _chan(b1), 0, 6)
    dw = f2.reshape(f2.shape[0], 1, 3, 3)  # [T, 3, 3, 1, 1] -> groups T
    t = F.conv2d(t, dw, stride=stride, padding=1, groups=f2.shape[0])
    t = torch.clamp(t * _chan(w2) + _chan(b2), 0, 6)
    return _conv(t, f3) * _chan(w3) + _chan(b3)


def _norm_l2(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """conv2d(normaliseL2(x), scale, {g C}): unit channel vectors times a per-channel scale."""
    n = torch.sqrt((x * x).sum(1, keepdim=True) + 1e-20)
    return x / n * _chan(scale)


def _fastgrnn(xs, w, u, bg, bh, h):
    """FastGRNN (zeta 1, nu 1e-17) over the steps xs[..., t, :]; the final state."""
    for t in range(xs.shape[-2]):
        c = xs[..., t, :] @ w.T + h @ u.T
        g = torch.sigmoid(c + bg[:, 0])
        h = g * h + ((1.0 - g) + 1e-17) * torch.tanh(c + bh[:, 0])
    return h


class Face4(nn.Module):
    def __init__(self, seed: int = 0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.p = nn.ParameterDict({
            n: nn.Parameter(_init(n, s, lo, hi, g)) for n, (s, lo, hi) in DECLS.items()})

    @torch.no_grad()
    def clamp_(self) -> None:
        for n, (_, lo, hi) in DECLS.items():
            self.p[n].clamp_(lo, hi)

    def rnnpool(self, xp: torch.Tensor) -> torch.Tensor:
        """[N, 4, 120, 160] -> [N, 64, 30, 40]: the two FastGRNNs over 8x8 patches at
        stride 4 (29 x 39 of them), the last row and column copied (the program's fix-up)."""
        p = self.p
        n = xp.shape[0]
        patches = xp.unfold(2, 8, 4).unfold(3, 8, 4)  # [N, 4, 29, 39, 8(r), 8(c)]
        patches = patches.permute(0, 2, 3, 4, 5, 1)  # [N, 29, 39, r, c, 4]
        h0 = xp.new_zeros(n, 29, 39, 8, 16)
        rows = _fastgrnn(patches, p["W1"], p["U1"], p["Bg1"], p["Bh1"], h0)  # per row r
        cols = _fastgrnn(patches.transpose(3, 4), p["W1"], p["U1"], p["Bg1"], p["Bh1"], h0)
        # bidirinput: acc1, reverse(acc1), acc2, reverse(acc2), each 8 steps of 16
        seqs = torch.stack([rows, rows.flip(3), cols, cols.flip(3)], 3)  # [N,29,39,4,8,16]
        h = _fastgrnn(seqs, p["W2"], p["U2"], p["Bg2"], p["Bh2"], xp.new_zeros(
            n, 29, 39, 4, 16))  # [N, 29, 39, 4, 16]: channel = 16 * direction + hidden
        out = h.reshape(n, 29, 39, 64).permute(0, 3, 1, 2)
        return F.pad(out, (0, 1, 0, 1), mode="replicate")

    def maps(self, x: torch.Tensor) -> list[torch.Tensor]:
        """x [N, 240, 320] (bytes - 117) -> [CN0, CN1, CN2, CN3, LC0, LC1, LC2, LC3] NCHW."""
        p = self.p
        x = x.reshape(-1, 1, 240, 320)
        cf = _conv(x, p["CBR1F"], stride=2, pad=1) + _chan(p["CBR1B"])
        xp = torch.clamp(cf * _chan(p["CBR1W"]), 0, 6)
        r = self.rnnpool(xp)

        def mb(x, i, stride=1):
            return _mbconv(x, *(p[f"L{i}{k}"] for k in (
                "F1", "W1", "B1", "F2", "W2", "B2", "F3", "W3", "B3")), stride)

        def head(x, i):
            return (_conv(x, p[f"conf{i}w"], pad=1) + _chan(p[f"conf{i}b"]),
                    _conv(x, p[f"loc{i}w"], pad=1) + _chan(p[f"loc{i}b"]))

        m0 = mb(r, 0)
        craw, lc0 = head(_norm_l2(m0, p["normW1"]), 0)
        cn0 = torch.cat([craw[:, :3].amax(1, keepdim=True), craw[:, 3:4]], 1)  # max-out bg
        m1 = m0 + mb(m0, 1)
        cn1, lc1 = head(_norm_l2(m1, p["normW2"]), 1)
        m2 = mb(m1, 2, stride=2)
        cn2, lc2 = head(_norm_l2(m2, p["normW3"]), 2)
        m3 = m2 + mb(m2, 3)
        cn3, lc3 = head(m3, 3)
        return [cn0, cn1, cn2, cn3, lc0, lc1, lc2, lc3]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The program's answer [N, 18000]: each map NHWC-flattened, in the program's order."""
        return torch.cat([m.permute(0, 2, 3, 1).reshape(m.shape[0], -1)
                          for m in self.maps(x)], 1)
