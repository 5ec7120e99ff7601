"""Shape operators on run-time values. Their shape arguments must be static: a value
computed from initializers or from `Shape` (always folded, as input shapes are static).

Transpose emits nothing (it changes the recorded layout); Reshape, Flatten, Squeeze and
Unsqueeze are one `minun.reshape` that reads the IR value in ONNX element order.
"""

from __future__ import annotations

import math

import numpy as np

from minun_mlir.dialects import minun

from .importer import Importer, Node, Value, normalize_axis


def _axes(imp: Importer, node: Node, rank: int, required: bool) -> list[int] | None:
    """Squeeze/Unsqueeze axes: an attribute before opset 13, an (optional) input after."""
    if node.version < 13:
        raw = node.attr("axes")
    else:
        v = node.input(1)
        raw = None if v is None else imp.const(v, "the axes input").reshape(-1).tolist()
    if raw is None:
        if required:
            raise imp.error("axes are required")
        return None
    axes = sorted(normalize_axis(int(a), rank, "axis") for a in raw)
    if len(set(axes)) != len(axes):
        raise imp.error(f"repeated axes {list(raw)}")
    return axes


def _reshape(imp: Importer, node: Node) -> list[Value]:
    x = node.inputs[0]
    target = imp.const(node.input(1), "the shape input").reshape(-1).astype(np.int64).tolist()
    allow_zero = node.version >= 14 and int(node.attr("allowzero", 0))
    shape = [x.shape[i] if d == 0 and not allow_zero else d for i, d in enumerate(target)]
    if shape.count(-1) > 1:
        raise imp.error(f"shape {target} has more than one -1")
    known = math.prod(d for d in shape if d != -1)
    total = math.prod(x.shape)
    if -1 in shape:
        if known == 0 or total % known:
            raise imp.error(f"cannot reshape {minun.shape_str(x.shape)} to {target}")
        shape[shape.index(-1)] = total // known
    if math.prod(shape) != total or any(d < 1 for d in shape):
        raise imp.error(f"cannot reshape {minun.shape_str(x.shape)} to {target} (empty or "
                        f"element count differs)")
    return [imp.reshape(x, shape)]


def _flatten(imp: Importer, node: Node) -> list[Value]:
    x = node.inputs[0]
    axis = int(node.attr("axis", 1))  # in [-rank, rank]
    axis = axis + x.rank if axis < 0 else axis
    if not 0 <= axis <= x.rank:
        raise imp.error(f"axis {node.attr('axis')} is out of range for rank {x.rank}")
    return [imp.reshape(x, (math.prod(x.shape[:axis]), math.prod(x.shape[axis:])))]


def _squeeze(imp: Importer, node: Node) -> list[Value]:
    x = node.inputs[0]
    axes = _axes(imp, node, x.rank, required=False)
    if axes is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    for a in axes:
        if x.shape[a] != 1:
            raise imp.error(f"cannot squeeze axis {a} of size {x.shape[a]}")
    return [imp.reshape(x, [d for i, d in enumerate(x.shape) if i not in axes])]


def _unsqueeze(imp: Importer, node: Node) -> list[Value]:
    x = node.inputs[0]
    pre = node.attr("axes") if node.version < 13 else None
    rank = x.rank + len(pre if pre is not None else
                        imp.const(node.input(1), "the axes input").reshape(-1))
    axes = _axes(imp, node, rank, required=True)
    dims = iter(x.shape)
    return [imp.reshape(x, [1 if i in axes else next(dims) for i in range(rank)])]


def _transpose(imp: Importer, node: Node) -> list[Value]:
    x = node.inputs[0]
    perm = node.attr("perm") or list(reversed(range(x.rank)))
    if sorted(perm) != list(range(x.rank)):
        raise imp.error(f"perm {perm} is not a permutation of {x.rank} dimensions")
    return [imp.transpose(x, perm)]


def _concat(imp: Importer, node: Node) -> list[Value]:
    values = [v for v in node.inputs if v is not None]
    rank = values[0].rank
    axis = normalize_axis(int(node.attr("axis")), rank)
    for v in values:
        if v.rank != rank or any(a != b for i, (a, b) in enumerate(zip(v.shape, values[0].shape))
                                 if i != axis):
            raise imp.error("inputs differ outside the concatenation axis: " + ", ".join(
                minun.shape_str(w.shape) for w in values))
    values = [v for v in values if v.shape[axis] > 0]  # ONNX allows empty inputs
    return [imp.concat(values, axis)]


def _identity(imp: Importer, node: Node) -> list[Value]:
    return [node.inputs[0]]


def _dropout(imp: Importer, node: Node) -> list[Value | None]:
    """Inference: the identity. The mask output (no boolean tensors at L1) is refused if
    used; training mode must be statically off."""
    if node.version >= 12 and node.input(2) is not None:
        if bool(np.asarray(imp.const(node.input(2), "the training_mode input")).reshape(-1)[0]):
            raise imp.error("training_mode=true is not supported (inference only)")
    return [node.inputs[0], None]


def _cast(imp: Importer, node: Node) -> list[Value]:
    if node.inputs[0].is_int and int(node.attr("to")) in (1, 6, 7):
        return [node.inputs[0]]  # a label (an index) is exact as FLOAT, INT32 or INT64
    if int(node.attr("to")) != 1:  # TensorProto.FLOAT
        raise imp.error("only casts to FLOAT are supported on run-time values")
    return [node.inputs[0]]


def _cast_like(imp: Importer, node: Node) -> list[Value]:
    """CastLike to a float32 target: run-time values are float32 already, constants are
    converted (expanded ONNX functions use it to cast their constants)."""
    x, like = node.inputs[0], node.inputs[1]
    if like.array is not None and like.array.dtype != np.float32:
        raise imp.error(f"only casts to FLOAT are supported, not to {like.array.dtype}")
    if x.array is not None:
        return [Value.const(x.array.astype(np.float32), x.name)]
    return [x]


def _gather(imp: Importer, node: Node) -> list[Value]:
    """Constant indices (PyTorch's `h[-1]`, a row of an embedding): slices along the axis,
    concatenated; a scalar index drops the axis."""
    x = node.inputs[0]
    axis = normalize_axis(int(node.attr("axis", 0)), x.rank)
    indices = np.asarray(imp.const(node.input(1), "the indices"))
    if indices.dtype.kind not in "iu":
        raise imp.error("Gather indices must be integers")
    n = x.shape[axis]
    flat = [int(i) + n if int(i) < 0 else int(i) for i in indices.reshape(-1)]
    if any(not 0 <= i < n for i in flat):
        raise imp.error(f"Gather index out of range for axis {axis} of size {n}: "
                        f"{indices.reshape(-1).tolist()}")
    if not flat:
        raise imp.error("Gather with no indices (an empty result) is not supported")
    picked = imp.concat([imp.slice(x, axis, i, 1) for i in flat], axis)
    shape = x.shape[:axis] + tuple(indices.shape) + x.shape[axis + 1:]
    return [imp.reshape(picked, shape)]


def _split(imp: Importer, node: Node) -> list[Value]:
    """Static split sizes (the `split` attribute before opset 13, a constant input after,
    or equal parts): one slice per output."""
    x = node.inputs[0]
    axis = normalize_axis(int(node.attr("axis", 0)), x.rank)
    outputs = len(node.proto.output)
    if node.version >= 13:
        sizes_v = node.input(1)
        sizes = None if sizes_v is None else [int(v) for v in imp.const(sizes_v, "split")]
    else:
        sizes = node.attr("split")
        sizes = None if sizes is None else [int(v) for v in sizes]
    n = x.shape[axis]
    if sizes is None:
        parts = int(node.attr("num_outputs", outputs))
        step = -(-n // parts)
        sizes = [min(step, n - k * step) for k in range(parts)]
    if sum(sizes) != n or any(s <= 0 for s in sizes):
        raise imp.error(f"split sizes {sizes} do not cover axis {axis} of size {n}")
    starts = np.cumsum([0, *sizes[:-1]])
    return [imp.slice(x, axis, int(a), int(s)) for a, s in zip(starts, sizes, strict=True)]


def _slice(imp: Importer, node: Node) -> list[Value]:
    """Constant starts, ends, axes and steps (attributes before opset 10, constant inputs
    after): per axis, one splice for step 1, else one element slice per index, concatenated
    (as Gather). Clamping and negative indices as ONNX (Python's slice.indices is the same
    rule). PyTorch's dynamo exporter writes `x[t]` of an unrolled RNN this way."""
    x = node.inputs[0]
    if node.version < 10:
        starts, ends = node.attr("starts"), node.attr("ends")
        axes, steps = node.attr("axes"), None
    else:
        starts = imp.const(node.input(1), "starts")
        ends = imp.const(node.input(2), "ends")
        axes_v, steps_v = node.input(3), node.input(4)
        axes = None if axes_v is None else imp.const(axes_v, "axes")
        steps = None if steps_v is None else imp.const(steps_v, "steps")
    starts = [int(v) for v in np.asarray(starts).reshape(-1)]
    ends = [int(v) for v in np.asarray(ends).reshape(-1)]
    axes = list(range(len(starts))) if axes is None else [
        normalize_axis(int(a), x.rank) for a in np.asarray(axes).reshape(-1)]
    steps = [1] * len(starts) if steps is None else [int(v) for v in
                                                       np.asarray(steps).reshape(-1)]
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise imp.error(f"starts, ends, axes and steps differ in length: {len(starts)}, "
                        f"{len(ends)}, {len(axes)}, {len(steps)}")
    if len(set(axes)) != len(axes):
        raise imp.error(f"an axis is repeated: {axes}")
    out = x
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        if step == 0:
            raise imp.error("a step of 0")
        n = x.shape[axis]
        picked = range(*slice(start, end, step).indices(n))
        if not picked:
            raise imp.error(f"an empty slice along axis {axis} (L1 has no empty tensors)")
        if len(picked) == n and step == 1:
            continue
        if step == 1:
            out = imp.slice(out, axis, picked[0], len(picked))
        else:
            out = imp.concat([imp.slice(out, axis, i, 1) for i in picked], axis)
    return [out]


def _pad_block(imp: Importer, x: Value, axis: int, count: int, at_start: bool, mode: str,
               value: float) -> list[Value]:
    """The `count` elements Pad puts before (`at_start`) or after x along `axis`."""
    n = x.shape[axis]
    if mode == "constant":
        shape = list(x.shape)
        shape[axis] = count
        return [Value.const(np.full(shape, value, np.float32), "pad")]
    if mode == "edge":
        index = [0 if at_start else n - 1] * count
    elif mode == "reflect":
        index = list(range(count, 0, -1)) if at_start else [n - 2 - i for i in range(count)]
    else:  # wrap
        index = ([(i - count) % n for i in range(count)] if at_start
                 else [i % n for i in range(count)])
    return [imp.slice(x, axis, i, 1) for i in index]


def _pad(imp: Importer, node: Node) -> list[Value]:
    """Constant pads (an attribute before opset 11, an input after; axes from opset 18):
    per axis, blocks of the constant value (mode constant), copies of the border element
    (edge), the mirrored elements (reflect) or the other end's (wrap) concatenated before
    and after, and negative pads cropped: data movement, exact in every format."""
    x = node.inputs[0]
    if x.is_int:
        raise imp.error("the input must be a float tensor, not a label")
    mode = node.attr("mode", "constant")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if node.version < 11:
        pads, value, axes = node.attr("pads"), float(node.attr("value", 0.0)), None
    else:
        pads = imp.const(node.input(1), "pads")
        value = 0.0 if node.input(2) is None else float(
            np.asarray(imp.const(node.input(2), "constant_value")).reshape(-1)[0])
        axes = None if node.input(3) is None else imp.const(node.input(3), "axes")
    pads = [int(p) for p in np.asarray(pads).reshape(-1)]
    axes = list(range(x.rank)) if axes is None else [
        normalize_axis(int(a), x.rank) for a in np.asarray(axes).reshape(-1)]
    if len(pads) != 2 * len(axes):
        raise imp.error(f"{len(pads)} pads for {len(axes)} axes (two per axis)")
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise imp.error(f"mode '{mode}' is not supported (constant, edge, reflect, wrap)")
    out = x
    for k, axis in enumerate(axes):
        before, after = pads[k], pads[k + len(axes)]
        n = out.shape[axis]
        if before < 0 or after < 0:  # a crop
            start, stop = max(-before, 0), n - max(-after, 0)
            if stop <= start:
                raise imp.error(f"the pads crop axis {axis} to nothing")
            out = imp.slice(out, axis, start, stop - start)
            before, after, n = max(before, 0), max(after, 0), stop - start
        if not before and not after:
            continue
        if mode == "reflect" and max(before, after) > n - 1:
            raise imp.error(f"reflect pads of {max(before, after)} on an axis of {n}: at "
                            "most one less than its size")

        parts = (_pad_block(imp, out, axis, before, True, mode, value) if before else []) \
            + [out] + (_pad_block(imp, out, axis, after, False, mode, value) if after else [])
        out = imp.concat(parts, axis)
    return [out]


HANDLERS = {
    "Pad": _pad,
    "Gather": _gather,
    "Slice": _slice,
    "Split": _split,
    "Reshape": _reshape,
    "Flatten": _flatten,
    "Squeeze": _squeeze,
    "Unsqueeze": _unsqueeze,
    "Transpose": _transpose,
    "Concat": _concat,
    "Identity": _identity,
    "Dropout": _dropout,
    "Cast": _cast,
    "CastLike": _cast_like,
}
