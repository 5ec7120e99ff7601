"""ReduceMean / ReduceSum / ReduceMax / ReduceMin / ReduceSumSquare over any axes, and the
normalisations built on them (LayerNormalization, RMSNormalization and the importer's
fused `minun:RmsNorm`).

A reduction flattens the value to a matrix whose one side is the reduced axes (K
elements) and the other the kept ones, in whichever of the two orders the value's layout
already has (no transpose for the last axis of a row-major value, nor for the time axis of
a Conv1d's NHWC output). The sum and the mean are then one `minun.matmul` with a constant
vector (ones, or 1/K), exact in real arithmetic and computed by every number format; the
maximum is a `minun.maxpool` whose window is the K elements (the minimum that of the
negation, negated; the sum of squares the sum of a hadamard square). The mean over H and W of an
NCHW tensor stays `minun.global_avgpool`, as before.

Normalisation: `d / sqrt(mean(d^2) + eps)` over the last K elements is
`sqrt(K) * normalise_l2([d, sqrt(K eps)])[:K]`, the L2 normalisation of d with one more
constant element holding the epsilon's share: exact, and `minun.normalise_l2` is
implemented by fixed point, float32, posit and bfloat16.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, i64

from minun_mlir.dialects import minun

from .importer import Importer, Node, Value, identity, normalize_axis

NHWC = (0, 2, 3, 1)


def _axes(imp: Importer, node: Node, rank: int) -> list[int] | None:
    """Sorted axes (None: all, or none with noop_with_empty_axes): an attribute before
    opset 18 (ReduceSum: 13), an optional constant input after."""
    since = 13 if node.op_type == "ReduceSum" else 18
    if node.version >= since:
        v = node.input(1)
        raw = None if v is None else imp.const(v, "the axes input").reshape(-1).tolist()
    else:
        raw = node.attr("axes")
    if raw is None or len(raw) == 0:
        return None
    axes = sorted({normalize_axis(int(a), rank, "axis") for a in raw})
    if len(axes) != len(raw):
        raise imp.error(f"repeated axes {list(raw)}")
    return axes


def _as_matrix(imp: Importer, x: Value, axes: list[int]) -> tuple[Value, bool]:
    """x as [rows, K] (reduced axes last, `True`) or [K, rows] (reduced axes first,
    `False`), read in the order its layout already has when that keeps the reduced axes
    together at one end and the kept ones in ONNX order (size-1 axes do not order
    elements), else transposed once."""
    kept = [a for a in range(x.rank) if a not in axes]
    k = math.prod(x.shape[a] for a in axes)
    rows = math.prod(x.shape[a] for a in kept)
    layout = x.perm if x.ssa is not None and x.perm is not None else identity(x.rank)
    physical = [a for a in layout if x.shape[a] != 1]
    r = sum(a in axes for a in physical)
    order, last = tuple(kept + axes), True
    rows_in_order = [a for a in physical if a not in axes] == sorted(
        a for a in physical if a not in axes)  # the result's elements in ONNX order
    if rows_in_order and all(a in axes for a in physical[len(physical) - r:]):
        order = tuple(layout)
    elif rows_in_order and all(a in axes for a in physical[:r]):
        order, last = tuple(layout), False
    ordered = Value.of(imp.ir(x, order), None)  # its dimensions in `order`
    return imp.reshape(ordered, (rows, k) if last else (k, rows)), last


def _reduce_linear(imp: Importer, x: Value, axes: list[int], weight: float) -> Value:
    """sum(x) * weight over `axes`: one matmul with a constant vector."""
    m, last = _as_matrix(imp, x, axes)
    k = m.shape[1] if last else m.shape[0]
    vec = np.full((k, 1) if last else (1, k), weight, dtype=np.float32)
    w = Value.const(vec, "mean" if weight != 1.0 else "ones")
    ssa = imp.make(minun.MatMulOp, *((imp.ir(m), imp.ir(w)) if last else
                                     (imp.ir(w), imp.ir(m))))
    return Value.of(ssa)  # [rows, 1] or [1, rows]: the kept elements in order


def _reduce_max(imp: Importer, x: Value, axes: list[int]) -> Value:
    m, last = _as_matrix(imp, x, axes)
    rows, k = m.shape if last else m.shape[::-1]
    shape = (1, rows, k, 1) if last else (1, 1, k, rows)
    t = imp.ir(imp.reshape(m, shape))
    attrs = {"kernel": DenseArrayBase.from_list(i64, [1, k]),
             "strides": DenseArrayBase.from_list(i64, [1, 1]),
             "pads": DenseArrayBase.from_list(i64, [0, 0, 0, 0])}
    out = (1, rows, 1, 1) if last else (1, 1, 1, rows)
    return Value.of(imp.emit(minun.MaxPoolOp.create(
        operands=[t], attributes=attrs, result_types=[minun.tensor_of(out)])))


def _reduce(kind: str):
    def handler(imp: Importer, node: Node) -> list[Value]:
        x = node.inputs[0]
        keep = int(node.attr("keepdims", 1))
        axes = _axes(imp, node, x.rank)
        if axes is None:
            if int(node.attr("noop_with_empty_axes", 0)):
                return [x]
            axes = list(range(x.rank))
        if x.rank == 0:
            return [x]
        out_shape = tuple(1 if a in axes else d for a, d in enumerate(x.shape)
                          if keep or a not in axes)
        if kind == "mean" and x.rank == 4 and axes == [2, 3] and x.ssa is not None:
            y = Value.of(imp.make(minun.GlobalAvgPoolOp, imp.ir(x, NHWC)), NHWC)
            return [imp.reshape(y, out_shape)]
        if kind == "max":
            y = _reduce_max(imp, x, axes)
        elif kind == "min":  # min = -max(-x), exact
            y = imp.unary(minun.NegOp, _reduce_max(imp, imp.unary(minun.NegOp, x), axes))
        elif kind == "sum_square":
            y = _reduce_linear(imp, imp.binary(minun.HadamardOp, x, x), axes, 1.0)
        else:
            k = math.prod(x.shape[a] for a in axes)
            y = _reduce_linear(imp, x, axes, 1.0 / k if kind == "mean" else 1.0)
        return [imp.reshape(y, out_shape)]

    return handler


def rms_normalise(imp: Importer, d: Value, axis: int, eps: float) -> Value:
    """d / sqrt(mean(d^2) + eps) over the axes from `axis` on (see the module's doc)."""
    if d.array is not None:
        raise imp.error("the normalised input is a constant")
    lead, tail = d.shape[:axis], d.shape[axis:]
    rows, k = math.prod(lead), math.prod(tail)
    m = imp.reshape(d, (1, rows, 1, k))
    if eps > 0:
        pad = Value.const(np.full((1, rows, 1, 1), math.sqrt(k * eps), np.float32), "eps")
        m = imp.concat([m, pad], 3)
    n = Value.of(imp.make(minun.NormaliseL2Op, imp.ir(m, identity(4))))
    if eps > 0:
        n = imp.slice(n, 3, 0, k)
    scale = imp.materialize(np.array(math.sqrt(k), np.float32), "sqrt_k")
    n = Value.of(imp.make(minun.ScalarMulOp, scale, imp.ir(n)))
    return imp.reshape(n, d.shape)


def affine(imp: Importer, y: Value, scale: Value | None, bias: Value | None) -> Value:
    from .elementwise import _add, _mul

    def run(fn, a, b):
        return fn(imp, Node(None, [a, b], {}, 0))[0]

    if scale is not None and not (scale.array is not None and np.all(scale.array == 1)):
        y = run(_mul, y, scale)
    if bias is not None and not (bias.array is not None and not np.any(bias.array)):
        y = run(_add, y, bias)
    return y


def _layer_norm(imp: Importer, node: Node) -> list[Value | None]:
    """(x - mean) / sqrt(var + eps) * scale + bias over the axes from `axis` on; the
    optional mean and inverse-deviation outputs (training) are refused if used."""
    x = node.inputs[0]
    axis = normalize_axis(int(node.attr("axis", -1)), x.rank)
    y = standardise(imp, x, axis, float(node.attr("epsilon", 1e-5)))
    return [affine(imp, y, node.inputs[1], node.input(2)), None, None]


def standardise(imp: Importer, x: Value, axis: int, eps: float) -> Value:
    """(x - mean) / sqrt(var + eps) over the axes from `axis` on (LayerNormalization;
    InstanceNormalization in convpool.py, from axis 2)."""
    axes = list(range(axis, x.rank))
    mean = imp.reshape(_reduce_linear(imp, x, axes, 1.0 / math.prod(x.shape[axis:])),
                       x.shape[:axis] + (1,) * len(axes))
    d = imp.binary(minun.SubOp, x, mean)
    return rms_normalise(imp, d, axis, eps)


def _rms_norm(imp: Importer, node: Node) -> list[Value]:
    """ONNX RMSNormalization (opset 23): x / sqrt(mean(x^2) + eps) * scale."""
    x = node.inputs[0]
    axis = normalize_axis(int(node.attr("axis", -1)), x.rank)
    y = rms_normalise(imp, x, axis, float(node.attr("epsilon", 1e-5)))
    return [affine(imp, y, node.input(1), None)]


def _fused_rms(imp: Importer, node: Node) -> list[Value]:
    """The importer's `minun:RmsNorm` (fuse.py): Div(d, Sqrt(Add(ReduceMean(Pow(d, 2)),
    eps))), over trailing axes only."""
    d = node.inputs[0]
    axes = sorted({normalize_axis(int(a), d.rank, "axis") for a in node.attr("axes")})
    if axes != list(range(d.rank - len(axes), d.rank)):
        raise imp.error(f"the normalisation Div(d, Sqrt(ReduceMean(d^2) + eps)) over axes "
                        f"{axes} of a {d.rank}-D tensor: only trailing axes are supported")
    return [rms_normalise(imp, d, axes[0], float(node.attr("epsilon")))]


HANDLERS = {
    "ReduceMean": _reduce("mean"),
    "ReduceSum": _reduce("sum"),
    "ReduceMax": _reduce("max"),
    "ReduceMin": _reduce("min"),
    "ReduceSumSquare": _reduce("sum_square"),
    "LayerNormalization": _layer_norm,
    "RMSNormalization": _rms_norm,
    "minun:RmsNorm": _fused_rms,
}
