"""Per-feature input scales (quantize's `input-scales=feature`): fold each input feature's
range into the weights that read it, so that fixed point sees balanced numbers.

A model trained on raw features (breast-cancer measurements from 0.001 to 4,000) gives its
input one fixed-point scale, set by the largest feature: the small features keep a few
bits, and the first layer's weights, tiny for the large features and large for the small
ones, lose the tiny ones under one weight scale. Writing each feature j as
x_j = c_j + r_j x'_j, with c_j and r_j the centre and half-width of its range on the
training data, the program takes x' (every feature in [-1, 1]) and the first layer
computes x W = x' (diag(r) W) + c W: its weights are scaled per row (per column for
`W x`), and the constant c W is added after the product. Exact in real arithmetic; the
rescaled weights and inputs are balanced, so fixed16 stays with float and fixed8 works.

The input op records the centres and half-widths (`minun.feature_scales`, [c..., r...]
along the feature axis), which the input's encoding applies (`normalize`): the evaluator,
the C harness and minun_predict_float take the raw features as before. Applied where
every use of the input is a matmul with a constant (a parameter) on the other side;
elsewhere the input keeps one scale, with a warning.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, f64
from xdsl.ir import Operation, SSAValue

from minun_mlir.diagnostics import warn
from minun_mlir.dialects import minun

# on minun.input / num.input: [feature axis, centres..., half-widths...]
ATTR = "minun.feature_scales"


def affine_of(op: Operation) -> tuple[np.ndarray, np.ndarray, int] | None:
    """(centres, half-widths, feature axis of the value without its batch) of an input
    op with per-feature scales, else None."""
    attr = op.attributes.get(ATTR)
    if attr is None:
        return None
    values = np.asarray(attr.get_values(), dtype=np.float64)
    centre, half = np.split(values[1:], 2)
    return centre, half, int(values[0])


def _feature_axis(shape: tuple[int, ...]) -> int:
    """The axis of the features: a row [1, F] -> 1, a column [F, 1] -> 0."""
    return 0 if len(shape) == 2 and shape[1] == 1 and shape[0] != 1 else len(shape) - 1


def normalize(op: Operation, values: np.ndarray) -> np.ndarray:
    """The real input -> what the program takes: (x - c) / r per feature, in float32 (as
    minun_predict_float computes it in C). `values` has the batch axis first."""
    found = affine_of(op)
    if found is None:
        return values
    centre, half, axis = found
    shape = [1] * values.ndim
    shape[axis + 1] = len(centre)
    x = np.asarray(values, dtype=np.float32)
    c = centre.astype(np.float32).reshape(shape)
    r = half.astype(np.float32).reshape(shape)
    return ((x - c) / r).astype(np.float64)


def _uses(value: SSAValue) -> list[tuple[Operation, int]]:
    return [(use.operation, use.index) for use in value.uses]


def _foldable(x: SSAValue, axis: int) -> bool:
    """Every use is `x @ P` (features on x's columns) or `P @ x` (on its rows), P a
    parameter."""
    for op, index in _uses(x):
        if not isinstance(op, (minun.MatMulOp, minun.SparseMatMulOp)):
            return False
        other = op.operands[1 - index]
        if not isinstance(other.owner, minun.ParamOp) or (index, axis) not in ((0, 1), (1, 0)):
            return False
        if isinstance(op, minun.SparseMatMulOp) and index == 0:
            return False
    return True


def _constant(v: SSAValue) -> np.ndarray | None:
    op = v.owner
    if isinstance(op, minun.ParamOp):
        return op.array().astype(np.float64)
    if isinstance(op, minun.ConstantOp):
        return minun.dense_to_numpy(op.value).astype(np.float64)
    return None


def _per_feature(k: np.ndarray, shape: tuple[int, ...], axis: int, bias: bool
                 ) -> np.ndarray | None:
    """k (an operand broadcast against a value of `shape`) as one number per feature, or
    None where it varies along another axis."""
    if bias:  # bias_add/bias_sub: along the last axis
        return k if axis == len(shape) - 1 else None
    if k.ndim > len(shape):
        return None
    k = k.reshape((1,) * (len(shape) - k.ndim) + k.shape)
    if any(n != 1 for i, n in enumerate(k.shape) if i != axis):
        return None
    return np.broadcast_to(k.reshape(-1), (shape[axis],)).astype(np.float64)


AFFINE = (minun.AddOp, minun.SubOp, minun.HadamardOp, minun.DivOp, minun.BiasAddOp,
          minun.BiasSubOp)


def _affine_chain(x: SSAValue, axis: int) -> tuple[SSAValue, np.ndarray, np.ndarray,
                                                     list[Operation]]:
    """Follow x through element-wise ops with a per-feature constant (a Keras
    Normalization layer's Sub and Mul): (the chain's end, a, b, its ops) with
    end = a x + b per feature."""
    shape = tuple(x.type.get_shape())
    a, b = np.ones(shape[axis]), np.zeros(shape[axis])
    chain: list[Operation] = []
    v = x
    while len(uses := _uses(v)) == 1:
        op, index = uses[0]
        if not isinstance(op, AFFINE) or tuple(op.results[0].type.get_shape()) != shape:
            break
        k = _constant(op.operands[1 - index])
        bias = isinstance(op, (minun.BiasAddOp, minun.BiasSubOp))
        k = None if k is None else _per_feature(k, shape, axis, bias)
        if k is None or (isinstance(op, minun.DivOp) and (index == 1 or np.any(k == 0))):
            break
        if isinstance(op, (minun.AddOp, minun.BiasAddOp)):
            b = b + k
        elif isinstance(op, (minun.SubOp, minun.BiasSubOp)):
            a, b = (a, b - k) if index == 0 else (-a, k - b)
        elif isinstance(op, minun.HadamardOp):
            a, b = a * k, b * k
        else:
            a, b = a / k, b / k
        chain.append(op)
        v = op.results[0]
    return v, a, b, chain


# input-scales=auto folds when the input's largest magnitude is this many times the
# median feature's half-width or more: raw measurements (breast cancer: 4,000 against
# fractions; wine: 1,680), not pixels or standardised features (2 to 4 on the suite's data)
AUTO_SPREAD = 64.0


def spread(data: np.ndarray, axis: int) -> float:
    """The input's largest magnitude over the median feature's half-width (its range on
    the data): how many times finer a typical feature's grid is with its own scale."""
    other = tuple(k for k in range(data.ndim) if k != axis + 1)
    half = (data.max(axis=other) - data.min(axis=other)) / 2
    return float(np.abs(data).max() / max(float(np.median(half)), 1e-30))


def fold(module, features: np.ndarray, auto: bool = False) -> np.ndarray | None:
    """Rewrite `module`'s single input for per-feature scales from `features` (the
    training data, batch axis first); returns them as the program now takes them, or
    None when the input is left as it was. With `auto` (input-scales=auto) only where the
    features' ranges are AUTO_SPREAD apart, and silently: elsewhere one scale is right."""
    inputs = [op for op in module.walk() if isinstance(op, minun.InputOp)]
    if len(inputs) != 1:
        if not auto:
            warn("input-scales=feature: the model has several inputs; each keeps one scale")
        return None
    op = inputs[0]
    shape = tuple(op.result.type.get_shape())
    axis = _feature_axis(shape)
    one_row = len(shape) == 2 and shape[1 - axis] == 1  # a batch of one: [1, F] or [F, 1]
    data = np.asarray(features, dtype=np.float64).reshape((-1, *shape))
    if auto and (not one_row or spread(data, axis) < AUTO_SPREAD):
        return None
    end, a, b, chain = _affine_chain(op.result, axis) if one_row else (
        op.result, None, None, [])
    if not one_row or not _foldable(end, axis):
        if not auto:
            warn(f"input-scales=feature: input '{op.sym_name.data}' is not only read by "
                 f"matmuls with weights; it keeps one scale")
        return None
    other = tuple(k for k in range(data.ndim) if k != axis + 1)
    lo, hi = data.min(axis=other), data.max(axis=other)
    centre = (hi + lo) / 2
    half = (hi - lo) / 2
    half[half == 0] = 1.0  # a constant feature: only its centre is taken off
    # the float32 values the program and minun_predict_float use
    centre, half = centre.astype(np.float32), half.astype(np.float32)
    # the chain's end is a (c + r x') + b: its own centre a c + b and half-width a r
    c_end = a * centre.astype(np.float64) + b
    r_end = a * half.astype(np.float64)
    for use, index in _uses(end):
        _fold_use(use, index, c_end, r_end)
        use.operands[index] = op.result
    for dead in reversed(chain):
        leaves = [v.owner for v in dead.operands if isinstance(
            v.owner, (minun.ParamOp, minun.ConstantOp))]
        dead.detach()
        dead.erase()
        for leaf in leaves:  # the normalisation's constants, now unused
            if not leaf.results[0].uses:
                leaf.detach()
                leaf.erase()
    op.attributes[ATTR] = DenseArrayBase.from_list(
        f64, [float(axis), *map(float, centre), *map(float, half)])
    op.attributes["range_lo"] = minun.f64_attr(-1.0)
    op.attributes["range_hi"] = minun.f64_attr(1.0)
    return normalize(op, np.asarray(features, dtype=np.float64).reshape((-1, *shape)))


def _param(like: minun.ParamOp, array: np.ndarray, name: str, sparse: bool = False
           ) -> minun.ParamOp:
    """A new parameter, before `like`, with a name no other parameter has."""
    array = np.ascontiguousarray(array, dtype=np.float32)
    taken = {op.sym_name.data for op in like.parent_block().ops
             if isinstance(op, minun.ParamOp)}
    unique, k = name, 1
    while unique in taken:
        unique, k = f"{name}_{k}", k + 1
    p = minun.ParamOp(unique, array, float(array.min()), float(array.max()), sparse=sparse)
    like.parent_block().insert_op_before(p, like)
    return p


def _fold_use(mm: Operation, index: int, centre: np.ndarray, half: np.ndarray) -> None:
    """mm = x @ W (index 0) or W @ x (index 1) -> x' @ (diag(r) W) + c W, or
    (W diag(r)) @ x' + W c."""
    w_op = mm.operands[1 - index].owner
    w = w_op.array().astype(np.float64)
    if index == 0:
        scaled, const = w * half[:, None], (centre @ w)[None, :]
    else:
        scaled, const = w * half[None, :], (w @ centre)[:, None]
    name = w_op.sym_name.data
    new_w = _param(w_op, scaled, f"{name}_feature_scaled", sparse=w_op.sparse is not None)
    mm.operands[1 - index] = new_w.result
    if not w_op.result.uses:
        w_op.detach()
        w_op.erase()
    c_op = _param(new_w, np.broadcast_to(const, mm.results[0].type.get_shape()),
                  f"{name}_feature_centre")
    users = _uses(mm.results[0])
    add = minun.AddOp.make(mm.results[0], c_op.result)
    mm.parent_block().insert_op_after(add, mm)
    for user, k in users:
        user.operands[k] = add.results[0]
