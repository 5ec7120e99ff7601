"""Error-compensating weight rounding (`quantize{weight-rounding=gptq data=...}`,
`minun-compile --weight-rounding gptq`): instead of rounding each int8 weight to its
nearest code on its own, choose the codes of a layer together so that the layer's output
on the calibration inputs stays as close as possible to the float model's.

For a matmul (`x W`, or SeeDot's `W x` read as its transpose) or convolution (its input
windows as rows of X) followed by a bias b, with per-channel (or per-tensor) scales s
fixed as round-to-nearest would choose them (max |w_c| / 127):

1. X_q: what the quantized program feeds the layer, decoded to reals, with the layers
   before it already rounded this way (so a layer also makes up for what earlier layers
   and the activations' rounding moved); T = X_f W + b: the float model's output.
2. [W*; b*] = argmin ||[X_q 1] [V; c] - T||^2, ridge-damped towards [W; b] by d times the
   mean of H's diagonal, H = [X_q 1]^T [X_q 1] / rows; d of DAMPINGS, chosen per layer by
   fitting on half of the calibration inputs and measuring on the other half (a layer
   with few rows per weight would otherwise follow their noise).
3. The rows of W* are rounded one at a time, largest input energy first, and each
   rounding error is pushed onto the rows not yet rounded (and the bias, which is never
   rounded: it is stored in int32) through H's inverse: GPTQ (Frantar et al., "GPTQ:
   Accurate Post-Training Quantization for Generative Pre-trained Transformers", ICLR
   2023, Algorithm 1 with its activation order), which is Optimal Brain Quantization's
   greedy step.

The chosen codes are written back as weights on the grid (s * q) with the scales pinned by
the `quantization` attribute a pre-quantized model's weights carry, so quantize keeps them
exactly. For the zero-skew representation; loops are left alone (a recurrent cell's
weights serve every step), as are grouped convolutions with several output channels per
group.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, f64
from xdsl.ir import SSAValue

from minun_mlir.diagnostics import warn
from minun_mlir.dialects import minun, num
from minun_mlir.formats.zero_skew import arith as af
from minun_mlir.formats.zero_skew.representation import QUANTIZATION
from minun_mlir.modules import main_function
from minun_mlir.numerics import float_eval, formats
from minun_mlir.numerics.float_eval import Profile
from minun_mlir.numerics.l2_eval import encode_input, l2_lookup

METHODS = ("nearest", "gptq")
# of the mean of H's diagonal (GPTQ uses 0.01), chosen per layer by choose_damping
DAMPINGS = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)


@dataclass
class Layer:
    """A matmul (`x W`, ONNX's; or `W x`, SeeDot's: `transposed`) or convolution whose
    weight is a parameter only it reads, and the bias (a parameter only it reads, one value
    per output channel) added to its result, if any."""

    op: minun.MatMulOp | minun.Conv2DOp
    weight: minun.ParamOp
    bias: minun.ParamOp | None
    transposed: bool = False

    @property
    def input(self) -> SSAValue:
        return self.op.operands[1] if self.transposed else self.op.operands[0]


def carry_profile(profile: Profile, source: ModuleOp, target: ModuleOp) -> Profile:
    """`profile` (of `source`'s values) for `target`, a copy of `source` with other
    parameter values: value for value in walk order (op results and block arguments)."""

    def values(module: ModuleOp) -> list[SSAValue]:
        out: list[SSAValue] = []
        for op in module.walk():
            out += op.results
            for region in op.regions:
                for block in region.blocks:
                    out += block.args
        return out

    pairs = list(zip(values(source), values(target), strict=True))
    return {new: profile[old] for old, new in pairs if old in profile}


def layers(module: ModuleOp) -> list[Layer]:
    """The layers whose weights are rounded, in program order (top level only)."""
    fn = main_function(module)
    uses: dict[SSAValue, int] = {}
    for op in fn.walk():
        for v in op.operands:
            uses[v] = uses.get(v, 0) + 1
    def only_param(v: SSAValue) -> minun.ParamOp | None:
        p = v.owner
        return p if isinstance(p, minun.ParamOp) and uses[v] == 1 and \
            QUANTIZATION not in p.attributes else None

    found = []
    for op in fn.body.block.ops:
        transposed = False
        if isinstance(op, minun.MatMulOp):
            w = only_param(op.operands[1])
            if w is None and not isinstance(op.operands[1].owner, minun.ParamOp):
                w, transposed = only_param(op.operands[0]), True
        elif isinstance(op, minun.Conv2DOp):
            groups, cout = op.groups.value.data, op.filter.type.get_shape()[4]
            w = only_param(op.filter) if groups == 1 or cout == 1 else None
        else:
            continue
        if w is None or w.results[0] is (op.operands[1] if transposed else op.operands[0]):
            continue
        channels = op.results[0].type.get_shape()[0 if transposed else -1]
        bias = None
        users = [u.operation for u in op.results[0].uses]
        if len(users) == 1 and isinstance(users[0], (minun.BiasAddOp, minun.AddOp)) and \
                users[0].operands[0] is op.results[0]:
            b = only_param(users[0].operands[1])
            shape = tuple(b.results[0].type.get_shape()) if b is not None else None
            # one value per output channel, broadcast along the other axis
            if shape == ((channels, 1) if transposed else (channels,)):
                bias = b
        found.append(Layer(op, w, bias, transposed))
    return found


def round_weights(l1: ModuleOp, features: np.ndarray | Mapping[str, np.ndarray],
                  quantize: Callable[[ModuleOp], ModuleOp], per_channel: bool) -> ModuleOp:
    """A copy of `l1` whose `layers` have GPTQ-rounded weights (on the int8 grid, scales
    pinned) and refitted biases; `quantize(module)` -> L2 gives the program whose layer
    inputs are measured. `l1` is not changed."""
    work = l1.clone()
    todo = layers(work)
    if not todo:
        warn("weight-rounding=gptq: no matmul or convolution outside a loop has a weight of "
             "its own to round: every weight is rounded to nearest",
             at=main_function(work))
        return work
    floats = float_eval.evaluate(work, features,
                                 record=[layer.input for layer in todo]).recorded
    x_float = [floats[layer.input] for layer in todo]
    for layer, xf in zip(todo, x_float):
        fn = main_function(quantize(work.clone()))
        value = _l2_input(fn, layer.weight.sym_name.data)
        if value is None:  # folded away by the quantizer
            continue
        (stored,) = float_eval.evaluate(fn, features, lookup=l2_lookup,
                                        encode=encode_input(fn),
                                        record=[value]).recorded.values()
        el = value.type.element_type
        xq = formats.of_element(el).decode(np.asarray(stored), el)
        _round_layer(layer, np.asarray(xf, np.float64), xq, per_channel)
    return work


def _l2_input(fn, weight: str) -> SSAValue | None:
    """The L2 value the matmul or convolution reading parameter `weight` takes as input
    (its other operand)."""
    for op in fn.walk():
        if isinstance(op, (num.MatMulOp, num.Conv2DOp)):
            for i, v in enumerate(op.operands[:2]):
                if isinstance(v.owner, num.ParamOp) and v.owner.sym_name.data == weight:
                    return op.operands[1 - i]
    return None


def _round_layer(layer: Layer, xf: np.ndarray, xq: np.ndarray, per_channel: bool) -> None:
    w = np.asarray(layer.weight.array(), np.float64)
    if layer.transposed:  # W x: the rows of W are the output channels, x's columns the rows
        w = w.T
        xf, xq = np.swapaxes(xf, -1, -2), np.swapaxes(xq, -1, -2)
    b = None if layer.bias is None else np.asarray(layer.bias.array(), np.float64).reshape(-1)
    op = layer.op
    if isinstance(op, minun.MatMulOp):
        k = w.shape[0]
        problems = [(lambda x: x.reshape(-1, k), w, slice(None))]
        axis = 1
    else:
        strides, pads, dil = (minun.ints(a) for a in (op.strides, op.pads, op.dilations))
        groups = op.groups.value.data
        _, kh, kw, cg, co = w.shape
        problems = [(lambda x, g=g: _patches(x, (kh, kw), strides, pads, dil)
                     [..., g * cg:(g + 1) * cg].reshape(-1, kh * kw * cg),
                     w[g].reshape(kh * kw * cg, co), slice(g * co, (g + 1) * co))
                    for g in range(groups)]
        axis = 4 if groups == 1 else 0
    if per_channel:
        moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
        scales = np.array([af.symmetric_scale(ch) for ch in moved])
    else:
        scales = np.full(1, af.symmetric_scale(w))
    q_all, bias_all = [], []
    for rows, wg, cols in problems:
        s = np.broadcast_to(scales[cols] if per_channel else scales, (wg.shape[1],))
        bg = None if b is None else b.reshape(-1)[cols]
        folds = fold_stats(xf, xq, rows, wg, bg)
        damping = choose_damping(folds, wg, bg, s)
        q, fitted = gptq_stats(folds[0] + folds[1], wg, bg, s, damping)
        q_all.append(q)
        bias_all.append(fitted)
    if isinstance(op, minun.MatMulOp):
        q = q_all[0]
    else:
        q = np.stack([qg.reshape(w.shape[1:]) for qg in q_all])
    shape = [1] * w.ndim
    if per_channel:
        shape[axis] = len(scales)
    grid = q * scales.reshape(shape)
    layer.weight.value = minun.dense_f32((grid.T if layer.transposed else grid)
                                         .astype(np.float32))
    pinned = [*scales.tolist(), 0.0] if per_channel else [float(scales[0]), 0.0]
    layer.weight.attributes[QUANTIZATION] = DenseArrayBase.from_list(f64, pinned)
    if layer.bias is not None:
        fitted = np.concatenate(bias_all).reshape(layer.bias.array().shape)
        layer.bias.value = minun.dense_f32(fitted.astype(np.float32))


def _patches(x: np.ndarray, kernel, strides, pads, dil) -> np.ndarray:
    """(B, N, H, W, C) -> (B*N*Ho*Wo, kh, kw, C) input windows (zero padding: a zero-skew
    value pads with its zero point, the real 0)."""
    b, n = x.shape[:2]
    win = float_eval._windows(x.reshape(b * n, *x.shape[2:]), kernel, strides, pads, dil,
                              0.0)  # (M, Ho, Wo, C, kh, kw)
    win = np.moveaxis(win, 3, -1)  # (M, Ho, Wo, kh, kw, C)
    return win.reshape(-1, *win.shape[3:])


@dataclass
class Stats:
    """What the fit needs of a layer's rows X (with a column of ones when it has a bias)
    and float outputs T: X^T X, X^T T and sum T^2, and the number of rows. Summed over
    the calibration inputs a few at a time, so a convolution's input windows are never
    all in memory at once."""

    xx: np.ndarray
    xt: np.ndarray
    tt: float
    rows: int

    def __add__(self, other: Stats) -> Stats:
        return Stats(self.xx + other.xx, self.xt + other.xt, self.tt + other.tt,
                     self.rows + other.rows)

    @staticmethod
    def of(xf_rows: np.ndarray, xq_rows: np.ndarray, w: np.ndarray, b: np.ndarray | None
           ) -> Stats:
        t = xf_rows @ w + (0.0 if b is None else b)
        x = xq_rows if b is None else np.concatenate(
            [xq_rows, np.ones((len(xq_rows), 1))], axis=1)
        return Stats(x.T @ x, x.T @ t, float(np.sum(t * t)), len(x))

    def error(self, v: np.ndarray) -> float:
        """sum ||X v - T||^2 (v: the codes times their scales, and the bias as a last row
        when the layer has one)."""
        return float(np.sum(v * (self.xx @ v)) - 2 * np.sum(v * self.xt) + self.tt)


CHUNK = 16  # calibration inputs per step of fold_stats


def fold_stats(xf: np.ndarray, xq: np.ndarray, rows: Callable[[np.ndarray], np.ndarray],
               w: np.ndarray, b: np.ndarray | None) -> tuple[Stats, Stats]:
    """The Stats of the even- and the odd-numbered calibration inputs (`rows` turns a few
    inputs' values into the layer's rows)."""
    folds = []
    for first in (0, 1):
        parts = [Stats.of(rows(xf[i:i + 2 * CHUNK:2]), rows(xq[i:i + 2 * CHUNK:2]), w, b)
                 for i in range(first, len(xf), 2 * CHUNK)]
        folds.append(sum(parts[1:], parts[0]) if parts else None)
    if folds[1] is None:  # one calibration input: both halves are it
        folds[1] = folds[0]
    return folds[0], folds[1]


def choose_damping(folds: tuple[Stats, Stats], w: np.ndarray, b: np.ndarray | None,
                   scales: np.ndarray) -> float:
    """The damping (of DAMPINGS) whose rounding, chosen on one half of the calibration
    inputs, matches the float output best on the other half (both ways round): a layer
    with few calibration rows per weight gets more damping (its least-squares fit would
    follow the noise of those rows)."""
    best, best_err = DAMPINGS[0], np.inf
    for damping in DAMPINGS:
        err = 0.0
        for fit, check in (folds, folds[::-1]):
            q, fitted = gptq_stats(fit, w, b, scales, damping)
            v = q * scales if b is None else np.concatenate([q * scales, fitted[None]])
            err += check.error(v)
        if err < best_err:
            best, best_err = damping, err
    return best


def gptq(xf: np.ndarray, xq: np.ndarray, w: np.ndarray, b: np.ndarray | None,
         scales: np.ndarray, damping: float = 0.01) -> tuple[np.ndarray, np.ndarray | None]:
    """Integer codes q (K, C), |q| <= 127, and the bias, minimising
    ||xq (q * scales) + bias - (xf w + b)||^2 greedily (module docstring) over the rows of
    xq and xf; the bias is None when the layer has none."""
    return gptq_stats(Stats.of(xf, xq, w, b), w, b, scales, damping)


def gptq_stats(stats: Stats, w: np.ndarray, b: np.ndarray | None, scales: np.ndarray,
               damping: float) -> tuple[np.ndarray, np.ndarray | None]:
    """`gptq` from the rows' Stats."""
    k = w.shape[0]
    h = stats.xx / stats.rows
    damped = h + (damping * float(np.mean(np.diag(h))) or 1.0) * np.eye(len(h))
    # start from the damped least-squares optimum (the float weights where x carries no
    # information: the damping pulls towards them)
    start = w if b is None else np.concatenate([w, b[None]], axis=0)
    v = start + np.linalg.solve(damped, stats.xt / stats.rows - h @ start)
    hinv = np.linalg.inv(damped)
    order = [int(i) for i in np.argsort(-np.diag(damped)[:k], kind="stable")]
    left = list(range(len(h)))
    q = np.zeros((k, w.shape[1]))
    for i in order:
        left.remove(i)
        qi = np.clip(np.round(v[i] / scales), -127, 127)
        err = (v[i] - qi * scales) / hinv[i, i]
        v[left] -= np.outer(hinv[left, i], err)
        hinv[np.ix_(left, left)] -= np.outer(hinv[left, i], hinv[i, left]) / hinv[i, i]
        q[i] = qi
    return q, (None if b is None else v[k])
