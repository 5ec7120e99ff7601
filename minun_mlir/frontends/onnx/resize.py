"""Resize (opset 10+) and Upsample (opsets 7-9): nearest is data movement, linear and
cubic (from opset 11) a constant matrix per axis.

Nearest resizing is a static gather along each axis. Which input index each output index
reads (coordinate_transformation_mode, nearest_mode, scales or sizes, opset) is taken from
ONNX's reference implementation run at import on a tensor of element indices, so every
attribute form has exact ONNX semantics without re-deriving its rounding rules here. An
axis repeated by an integer factor (nn.Upsample) becomes reshape + concat of copies;
any other index map a concat of contiguous slices. Linear and cubic modes weigh
neighbours with weights that depend only on the sizes: per axis a constant [out, in]
matrix, read from the reference implementation too (one run per input index), applied
as one matmul (dense: 2 of a row's n weights are non-zero for linear).
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from minun_mlir.dialects import minun

from .importer import Importer, Node, Value

MAX_PIECES = 256  # slices of one axis for a non-repeat index map


def _old_scales(imp: Importer, node: Node) -> np.ndarray:
    """The scales of Upsample (an attribute before opset 9, an input after) and Resize-10."""
    x = node.inputs[0]
    if node.op_type == "Upsample" and node.version < 9:
        scales = node.attr("scales")
        if scales is None:
            raise imp.error("the scales attribute is missing")
    else:
        scales = imp.const(node.input(1), "the scales input")
    scales = np.asarray(scales, np.float64).reshape(-1)
    if scales.size != x.rank or np.any(scales <= 0):
        raise imp.error(f"scales {scales.tolist()}: {x.rank} positive values are expected")
    if node.op_type == "Upsample" and np.any(scales < 1):
        raise imp.error(f"scales {scales.tolist()}: Upsample scales must be at least 1")
    return scales


def _old_maps(imp: Importer, node: Node) -> list[np.ndarray]:
    """Upsample (opsets 7-9) and Resize-10: output index o reads floor(o / s), or
    ceil(o / s) on a downsampled axis (onnxruntime's rule before opset 11, where the
    reference implementation has no separate version), for floor(n s) outputs."""
    x = node.inputs[0]
    scales = _old_scales(imp, node)
    maps = []
    for n, s in zip(x.shape, scales):
        o = np.arange(int(np.floor(n * s)))
        i = np.floor(o / s) if s >= 1 else np.ceil(o / s)
        maps.append(np.minimum(i.astype(np.int64), n - 1))
    return maps


def _reference(imp: Importer, node: Node):
    """The node run by onnx.reference on a given input tensor (its other inputs are
    constants)."""
    from onnx.reference import ReferenceEvaluator

    opset = imp.opset
    if node.op_type == "Upsample" or node.version < 11:  # linear: asymmetric, as Resize-11
        names, opset = ["x", "", "in2"], 13
        feeds = {"in2": _old_scales(imp, node).astype(np.float32)}
        proto = helper.make_node("Resize", names, ["y"], mode=node.attr("mode", "nearest"),
                                 coordinate_transformation_mode="asymmetric")
    else:
        names = ["x"] + [f"in{i}" if v is not None else "" for i, v in
                         enumerate(node.inputs) if i > 0]
        feeds = {}
        for i, v in enumerate(node.inputs[1:], 1):
            if v is not None:
                what = {1: "roi", 2: "scales", 3: "sizes"}[i]
                feeds[f"in{i}"] = imp.const(v, f"the {what} input")
        proto = helper.make_node(node.op_type, names, ["y"])
        proto.attribute.extend(node.proto.attribute)
    graph = helper.make_graph([proto], "resize", [helper.make_tensor_value_info(
        n, 0, None) for n in names if n], [helper.make_tensor_value_info("y", 0, None)])
    evaluator = ReferenceEvaluator(graph, opsets={"": opset})

    def run(x: np.ndarray) -> np.ndarray:
        try:
            return np.asarray(evaluator.run(None, {"x": x, **feeds})[0])
        except Exception as e:  # the reference implementation rejects the node
            raise imp.error(f"cannot compute the index map: {type(e).__name__}: "
                            f"{e}") from None

    return run


def _weight_matrices(imp: Importer, node: Node) -> list[np.ndarray]:
    """Linear and cubic modes: per ONNX axis the [out, in] matrix of weights, column k
    read from the reference's result for the input that is 1 at index k of that axis
    (and constant along the others, which a separable resize keeps constant)."""
    x = node.inputs[0]
    run = _reference(imp, node)
    mats = []
    for a, n in enumerate(x.shape):
        cols = []
        for k in range(n):
            e = np.zeros(x.shape, np.float32)
            e[tuple(k if b == a else slice(None) for b in range(x.rank))] = 1
            out = run(e)
            line = out[tuple(slice(None) if b == a else 0 for b in range(x.rank))]
            shaped = line.reshape([-1 if b == a else 1 for b in range(x.rank)])
            if out.ndim != x.rank or not np.allclose(out, np.broadcast_to(shaped, out.shape),
                                                      rtol=0, atol=1e-6):
                raise imp.error("the resize is not separable by axis (an extrapolation "
                                "value?)")
            cols.append(line.astype(np.float64))
        mats.append(np.stack(cols, 1))
    return mats


def _as_index_map(w: np.ndarray) -> np.ndarray | None:
    """The index map of a weight matrix that only selects (a 1 per row), else None."""
    ones = np.isclose(w, 1.0, rtol=0, atol=1e-7)
    if np.all(ones.sum(1) == 1) and np.all(np.isclose(w[~ones], 0, rtol=0, atol=1e-7)):
        return ones.argmax(1)
    return None


def _weigh_axis(imp: Importer, v: Value, axis: int, w: np.ndarray) -> Value:
    """v (identity layout) with `axis` replaced by w [out, n] times it: one matmul, the
    weights on the left when the axis leads the elements (no copy), else on the right of
    the value read with that axis last."""
    m = _as_index_map(w)
    if m is not None:
        return _gather_axis(imp, v, axis, m)
    n, o = v.shape[axis], w.shape[0]
    outer = int(np.prod(v.shape[:axis]))
    if outer == 1:  # [n, rest] already
        rows = imp.reshape(v, (n, int(np.prod(v.shape[axis + 1:]))))
        y = Value.of(imp.make(minun.MatMulOp, imp.ir(Value.const(w.astype(np.float32),
                                                                  "resize_w")), imp.ir(rows)))
        return imp.reshape(y, v.shape[:axis] + (o,) + v.shape[axis + 1:])
    order = tuple(b for b in range(v.rank) if b != axis) + (axis,)
    moved = imp.transpose(v, order)
    rows = imp.reshape(moved, (int(np.prod(moved.shape[:-1])), n))
    wt = Value.const(np.ascontiguousarray(w.T).astype(np.float32), "resize_w")
    y = Value.of(imp.make(minun.MatMulOp, imp.ir(rows), imp.ir(wt)))
    y = imp.reshape(y, moved.shape[:-1] + (o,))
    back = [0] * v.rank
    for i, b in enumerate(order):
        back[b] = i
    return imp.transpose(y, back)


def _index_maps(imp: Importer, node: Node) -> list[np.ndarray]:
    """Per ONNX axis, the input index each output index reads."""
    x = node.inputs[0]
    if node.op_type == "Upsample" or node.version < 11:
        return _old_maps(imp, node)
    size = int(np.prod(x.shape))
    if size >= 1 << 24:
        raise imp.error(f"input {minun.shape_str(x.shape)} is too large to index in float32")
    out = _reference(imp, node)(np.arange(size, dtype=np.float32).reshape(x.shape))
    if out.ndim != x.rank:
        raise imp.error(f"the result has rank {out.ndim}, the input {x.rank}")
    if out.size == 0:
        raise imp.error(f"the result {minun.shape_str(out.shape)} is empty")
    coords = np.unravel_index(np.rint(out).astype(np.int64), x.shape)
    maps = []
    for a, c in enumerate(coords):
        line = c[tuple(slice(None) if b == a else 0 for b in range(x.rank))]
        shaped = line.reshape([-1 if b == a else 1 for b in range(x.rank)])
        if not np.array_equal(np.broadcast_to(shaped, c.shape), c):
            raise imp.error("the index map is not separable by axis")
        maps.append(line)
    return maps


def _repeat_factor(m: np.ndarray, n: int) -> int | None:
    """s when m is 0,..,0 (s times), 1,..,1, ..., n-1 (nn.Upsample's nearest)."""
    if len(m) % n:
        return None
    s = len(m) // n
    return s if np.array_equal(m, np.repeat(np.arange(n), s)) else None


def _gather_axis(imp: Importer, v: Value, axis: int, m: np.ndarray) -> Value:
    """v (identity layout) gathered along `axis` by the index map m."""
    n = v.shape[axis]
    if np.array_equal(m, np.arange(n)):
        return v
    s = _repeat_factor(m, n)
    if s is not None:
        col = imp.reshape(v, v.shape[:axis + 1] + (1,) + v.shape[axis + 1:])
        copies = imp.concat([col] * s, axis + 1)
        return imp.reshape(copies, v.shape[:axis] + (n * s,) + v.shape[axis + 1:])
    pieces, start = [], 0
    for i in range(1, len(m) + 1):
        if i == len(m) or m[i] != m[i - 1] + 1:
            pieces.append(imp.slice(v, axis, int(m[start]), i - start))
            start = i
    if len(pieces) > MAX_PIECES:
        raise imp.error(f"the index map of axis {axis} needs {len(pieces)} slices (more "
                        f"than {MAX_PIECES})")
    return imp.concat(pieces, axis)


def _resize(imp: Importer, node: Node) -> list[Value]:
    mode = node.attr("mode", "nearest")
    x = node.inputs[0]
    if x.array is not None:
        raise imp.error("the input is a constant")
    perm = imp._perm_of(x)
    v = Value.of(imp.ir(x, perm))  # the IR tensor, its own (identity) layout
    if mode == "nearest":
        maps = _index_maps(imp, node)
        for ir_axis, a in enumerate(perm):
            v = _gather_axis(imp, v, ir_axis, maps[a])
        return [Value.of(imp.ir(v), perm)]
    old = node.op_type == "Upsample" or node.version < 11
    if mode not in (("linear",) if old else ("linear", "cubic")):
        raise imp.error(f"mode '{mode}' is not supported (nearest, linear; cubic from "
                        f"Resize-11)")
    mats = _weight_matrices(imp, node)
    for ir_axis, a in enumerate(perm):
        if mats[a].shape[0] != mats[a].shape[1] or not np.allclose(
                mats[a], np.eye(len(mats[a])), rtol=0, atol=1e-7):
            v = _weigh_axis(imp, v, ir_axis, mats[a])
    return [Value.of(imp.ir(v, tuple(range(v.rank))), perm)]


HANDLERS = {
    "Resize": _resize,
    "Upsample": _resize,
}
