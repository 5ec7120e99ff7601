"""Error-compensating weight rounding (`quantize{weight-rounding=gptq data=...}`,
`minun-compile --weight-rounding gptq`): instead of rounding each int8 weight to its
nearest code on its own, choose the codes of a layer together so that the layer's output
on the calibration inputs stays as close as possible to the float model's.

For a matmul `x W` or convolution (its input windows as rows of X) followed by a bias b,
with per-channel (or per-tensor) scales s fixed as round-to-nearest would choose them
(max |w_c| / 127):

1. X_q: what the quantized program feeds the layer, decoded to reals, with the layers
   before it already rounded this way (so a layer also makes up for what earlier layers
   and the activations' rounding moved); T = X_f W + b: the float model's output.
2. [W*; b*] = argmin ||[X_q 1] [V; c] - T||^2 (ridge-damped by 1% of the mean of
   X_q^T X_q's diagonal, so a layer with more weights than calibration rows stays near W).
3. The rows of W* are rounded one at a time, largest input energy first, and each
   rounding error is pushed onto the rows not yet rounded (and the bias, which is never
   rounded: it is stored in int32) through the inverse of H = [X_q 1]^T [X_q 1]: GPTQ
   (Frantar et al., "GPTQ: Accurate Post-Training Quantization for Generative Pre-trained
   Transformers", ICLR 2023, Algorithm 1 with its activation order), which is Optimal
   Brain Quantization's greedy step.

The chosen codes are written back as weights on the grid (s * q) with the scales pinned by
the `quantization` attribute a pre-quantized model's weights carry, so quantize keeps them
exactly. For the zero-skew representation; loops are left alone (a recurrent cell's
weights serve every step), as are SeeDot's `W x` products and grouped convolutions with
several output channels per group.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, f64
from xdsl.ir import SSAValue

from minun_mlir.dialects import minun, num
from minun_mlir.modules import main_function
from minun_mlir.numerics import affine as af
from minun_mlir.numerics import float_eval
from minun_mlir.numerics import repr as reprs
from minun_mlir.numerics.float_eval import Profile
from minun_mlir.numerics.l2_eval import encode_input, l2_lookup

METHODS = ("nearest", "gptq")
# of the mean of H's diagonal (GPTQ uses 0.01), chosen per layer by choose_damping
DAMPINGS = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
QUANTIZATION = "quantization"  # the attribute that pins a weight's scales (quantized.py)


@dataclass
class Layer:
    """A matmul `x W` or convolution whose weight is a parameter only it reads, and the
    bias (a parameter only it reads) added to its result, if any."""

    op: minun.MatMulOp | minun.Conv2DOp
    weight: minun.ParamOp
    bias: minun.ParamOp | None


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
    found = []
    for op in fn.body.block.ops:
        if isinstance(op, minun.MatMulOp):
            w = op.operands[1].owner
        elif isinstance(op, minun.Conv2DOp):
            groups, cout = op.groups.value.data, op.filter.type.get_shape()[4]
            w = op.filter.owner if groups == 1 or cout == 1 else None
        else:
            continue
        if not isinstance(w, minun.ParamOp) or uses[w.results[0]] != 1 or \
                QUANTIZATION in w.attributes or w.results[0] is op.operands[0]:
            continue
        bias = None
        users = [u.operation for u in op.results[0].uses]
        if len(users) == 1 and isinstance(users[0], minun.BiasAddOp) and \
                users[0].operands[0] is op.results[0]:
            b = users[0].operands[1].owner
            if isinstance(b, minun.ParamOp) and uses[b.results[0]] == 1:
                bias = b
        found.append(Layer(op, w, bias))
    return found


def round_weights(l1: ModuleOp, features: np.ndarray | Mapping[str, np.ndarray],
                  quantize: Callable[[ModuleOp], ModuleOp], per_channel: bool) -> ModuleOp:
    """A copy of `l1` whose `layers` have GPTQ-rounded weights (on the int8 grid, scales
    pinned) and refitted biases; `quantize(module)` -> L2 gives the program whose layer
    inputs are measured. `l1` is not changed."""
    work = l1.clone()
    todo = layers(work)
    if not todo:
        return work
    floats = float_eval.evaluate(work, features,
                                 record=[layer.op.operands[0] for layer in todo]).recorded
    x_float = [floats[layer.op.operands[0]] for layer in todo]
    for layer, xf in zip(todo, x_float):
        fn = main_function(quantize(work.clone()))
        value = _l2_input(fn, layer.weight.sym_name.data)
        if value is None:  # folded away by the quantizer
            continue
        (stored,) = float_eval.evaluate(fn, features, lookup=l2_lookup,
                                        encode=encode_input(fn),
                                        record=[value]).recorded.values()
        el = value.type.element_type
        xq = reprs.of_element(el).decode(np.asarray(stored), el)
        _round_layer(layer, np.asarray(xf, np.float64), xq, per_channel)
    return work


def _l2_input(fn, weight: str) -> SSAValue | None:
    """The L2 value the matmul or convolution reading parameter `weight` takes as input."""
    for op in fn.walk():
        if isinstance(op, (num.MatMulOp, num.Conv2DOp)) and \
                isinstance(op.operands[1].owner, num.ParamOp) and \
                op.operands[1].owner.sym_name.data == weight:
            return op.operands[0]
    return None


def _round_layer(layer: Layer, xf: np.ndarray, xq: np.ndarray, per_channel: bool) -> None:
    w = np.asarray(layer.weight.array(), np.float64)
    b = None if layer.bias is None else np.asarray(layer.bias.array(), np.float64)
    op = layer.op
    if isinstance(op, minun.MatMulOp):
        k, c = w.shape
        problems = [(xf.reshape(len(xf), -1, k), xq.reshape(len(xq), -1, k), w, slice(None))]
        axis = 1
    else:
        strides, pads, dil = (minun.ints(a) for a in (op.strides, op.pads, op.dilations))
        groups = op.groups.value.data
        _, kh, kw, cg, co = w.shape
        problems = []
        for g in range(groups):
            cols = slice(g * co, (g + 1) * co)
            rows = [_patches(x, (kh, kw), strides, pads, dil)[..., g * cg:(g + 1) * cg]
                    .reshape(len(x), -1, kh * kw * cg) for x in (xf, xq)]
            problems.append((*rows, w[g].reshape(kh * kw * cg, co), cols))
        axis = 4 if groups == 1 else 0
    if per_channel:
        moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
        scales = np.array([af.symmetric_scale(ch) for ch in moved])
    else:
        scales = np.full(1, af.symmetric_scale(w))
    q_all, bias_all = [], []
    for xf_rows, xq_rows, wg, cols in problems:
        s = np.broadcast_to(scales[cols] if per_channel and len(problems) > 1 else scales,
                            (wg.shape[1],))
        bg = None if b is None else b.reshape(-1)[cols]
        damping = choose_damping(xf_rows, xq_rows, wg, bg, s)
        q, fitted = gptq(xf_rows.reshape(-1, wg.shape[0]), xq_rows.reshape(-1, wg.shape[0]),
                         wg, bg, s, damping)
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
    layer.weight.value = minun.dense_f32(grid.astype(np.float32))
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


def choose_damping(xf: np.ndarray, xq: np.ndarray, w: np.ndarray, b: np.ndarray | None,
                   scales: np.ndarray) -> float:
    """The damping (of DAMPINGS) whose rounding, chosen on one half of the calibration
    inputs, matches the float output best on the other half (both ways round): a layer
    with few calibration rows per weight gets more damping (its least-squares fit would
    follow the noise of those rows)."""
    if len(xf) < 2:
        return DAMPINGS[len(DAMPINGS) // 2]
    folds = (np.arange(len(xf)) % 2 == 0, np.arange(len(xf)) % 2 == 1)
    k = w.shape[0]
    best, best_err = None, np.inf
    for damping in DAMPINGS:
        err = 0.0
        for fit, check in (folds, folds[::-1]):
            q, fitted = gptq(xf[fit].reshape(-1, k), xq[fit].reshape(-1, k), w, b, scales,
                             damping)
            y = xq[check].reshape(-1, k) @ (q * scales) + (0.0 if b is None else fitted)
            target = xf[check].reshape(-1, k) @ w + (0.0 if b is None else b)
            err += float(np.sum((y - target) ** 2))
        if err < best_err:
            best, best_err = damping, err
    return best


def gptq(xf: np.ndarray, xq: np.ndarray, w: np.ndarray, b: np.ndarray | None,
         scales: np.ndarray, damping: float = 0.01) -> tuple[np.ndarray, np.ndarray | None]:
    """Integer codes q (K, C), |q| <= 127, and the bias, minimising
    ||xq (q * scales) + bias - (xf w + b)||^2 greedily (module docstring); the bias is
    None when the layer has none."""
    m, k = xq.shape
    target = xf @ w + (0.0 if b is None else b)
    x = xq if b is None else np.concatenate([xq, np.ones((m, 1))], axis=1)
    h = x.T @ x / m
    damp = damping * float(np.mean(np.diag(h))) or 1.0
    h = h + damp * np.eye(len(h))
    # start from the damped least-squares optimum (the float weights where x carries no
    # information: the damping pulls towards them)
    start = w if b is None else np.concatenate([w, b[None]], axis=0)
    v = start + np.linalg.solve(h, x.T @ (target - x @ start) / m)
    hinv = np.linalg.inv(h)
    order = [int(i) for i in np.argsort(-np.diag(h)[:k], kind="stable")]
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
