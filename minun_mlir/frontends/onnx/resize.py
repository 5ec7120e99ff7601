"""Resize (opset 10+) and Upsample (opsets 7-9) in nearest mode: data movement only.

Nearest resizing is a static gather along each axis. Which input index each output index
reads (coordinate_transformation_mode, nearest_mode, scales or sizes, opset) is taken from
ONNX's reference implementation run at import on a tensor of element indices, so every
attribute form has exact ONNX semantics without re-deriving its rounding rules here. An
axis repeated by an integer factor (nn.Upsample) becomes reshape + concat of copies;
any other index map a concat of contiguous slices. Linear and cubic modes (a weighted
sum of neighbours) are refused naming the node.
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from minun_mlir.dialects import minun

from .importer import Importer, Node, Value

MAX_PIECES = 256  # slices of one axis for a non-repeat index map


def _old_maps(imp: Importer, node: Node) -> list[np.ndarray]:
    """Upsample (opsets 7-9) and Resize-10: output index o reads floor(o / s), or
    ceil(o / s) on a downsampled axis (onnxruntime's rule before opset 11, where the
    reference implementation has no separate version), for floor(n s) outputs."""
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
    maps = []
    for n, s in zip(x.shape, scales):
        o = np.arange(int(np.floor(n * s)))
        i = np.floor(o / s) if s >= 1 else np.ceil(o / s)
        maps.append(np.minimum(i.astype(np.int64), n - 1))
    return maps


def _index_maps(imp: Importer, node: Node) -> list[np.ndarray]:
    """Per ONNX axis, the input index each output index reads."""
    from onnx.reference import ReferenceEvaluator

    x = node.inputs[0]
    if x.array is not None:
        raise imp.error("the input is a constant")
    if node.op_type == "Upsample" or node.version < 11:
        return _old_maps(imp, node)
    size = int(np.prod(x.shape))
    if size >= 1 << 24:
        raise imp.error(f"input {minun.shape_str(x.shape)} is too large to index in float32")
    names = ["x"] + [f"in{i}" if v is not None else "" for i, v in enumerate(node.inputs)
                     if i > 0]
    feeds = {"x": np.arange(size, dtype=np.float32).reshape(x.shape)}
    for i, v in enumerate(node.inputs[1:], 1):
        if v is not None:
            what = {1: "roi", 2: "scales", 3: "sizes"}[i]
            feeds[f"in{i}"] = imp.const(v, f"the {what} input")
    proto = helper.make_node(node.op_type, names, ["y"])
    proto.attribute.extend(node.proto.attribute)
    graph = helper.make_graph([proto], "resize", [helper.make_tensor_value_info(
        n, 0, None) for n in names if n], [helper.make_tensor_value_info("y", 0, None)])
    try:
        out = ReferenceEvaluator(graph, opsets={"": imp.opset}).run(None, feeds)[0]
    except Exception as e:  # the reference implementation rejects the node
        raise imp.error(f"cannot compute the index map: {type(e).__name__}: {e}") from None
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
    if mode != "nearest":
        raise imp.error(f"mode '{mode}' is not supported (only 'nearest': linear and cubic "
                        f"resizing are weighted sums of neighbours)")
    x = node.inputs[0]
    maps = _index_maps(imp, node)
    perm = imp._perm_of(x)
    v = Value.of(imp.ir(x, perm))  # the IR tensor, its own (identity) layout
    for ir_axis, a in enumerate(perm):
        v = _gather_axis(imp, v, ir_axis, maps[a])
    return [Value.of(imp.ir(v), perm)]


HANDLERS = {
    "Resize": _resize,
    "Upsample": _resize,
}
