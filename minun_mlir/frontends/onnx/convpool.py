"""Conv, pooling and batch normalisation: ONNX NCHW onto the NHWC L1 ops.

The input is read in NHWC (one transpose for the model input, none between NHWC ops),
results are recorded as NHWC values, constant filters are permuted to
[G, KH, KW, C/G, M/G] at import. 1-D (NCW) ops run as 2-D with H = 1. `auto_pad` and
`ceil_mode` are turned into explicit pads, so the L1 ops only know explicit padding.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, UnitAttr, i64

from minun_mlir.dialects import minun

from .importer import Importer, Node, Value

NHWC = (0, 2, 3, 1)


def _spatial_2d(imp: Importer, x: Value) -> tuple[Value, bool]:
    """NCW -> NC1W so 1-D ops reuse the 2-D ones; returns (value, was_1d)."""
    if x.rank == 3:
        return imp.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2])), True
    if x.rank != 4:
        raise imp.error(f"only 1-D and 2-D spatial inputs are supported, got rank {x.rank} "
                        f"({minun.shape_str(x.shape)})")
    return x, False


def _ints(imp: Importer, node: Node, name: str, spatial: int, was_1d: bool) -> list[int]:
    """A per-spatial-dim attribute (kernel_shape, strides, dilations: one value per spatial
    axis, at least 1; pads: two, at least 0), widened for the H of a 1-D op. A value of
    the wrong length or sign is refused here (it divided by zero or reached the verifier)."""
    least, count = (0, 2 * spatial) if name == "pads" else (1, spatial)
    value = node.attr(name)
    value = [least if name == "pads" else 1] * count if value is None else list(value)
    if len(value) != count:
        raise imp.error(f"{name} {value} has {len(value)} values; a {spatial}-D "
                        f"{node.op_type} takes {count}")
    if any(v < least for v in value):
        raise imp.error(f"{name} {value}: every value must be at least {least}")
    if was_1d:
        half = len(value) // 2
        value = [1] + value if name != "pads" else [0, value[0], 0, value[half]]
    return value


def window_pads(imp: Importer, node: Node, size: Sequence[int], kernel: Sequence[int],
                strides: Sequence[int], dilations: Sequence[int], pads: Sequence[int],
                ceil_mode: bool) -> list[int]:
    """Explicit L1 pads [top, bottom, left, right] from ONNX pads [hb, wb, he, we],
    auto_pad and ceil_mode (ONNX/PyTorch rules: a window may not start in the end
    padding).
    """
    auto_pad = node.attr("auto_pad", "NOTSET")
    begin, end = list(pads[:2]), list(pads[2:])
    for i in range(2):
        eff = dilations[i] * (kernel[i] - 1) + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out = -(-size[i] // strides[i])
            total = max(0, (out - 1) * strides[i] + eff - size[i])
            small, large = total // 2, total - total // 2
            begin[i], end[i] = (small, large) if auto_pad == "SAME_UPPER" else (large, small)
        elif auto_pad == "VALID":
            begin[i] = end[i] = 0
        elif auto_pad != "NOTSET":
            raise imp.error(f"unknown auto_pad '{auto_pad}'")
        if ceil_mode and auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
            span = size[i] + begin[i] + end[i] - eff
            out = -(-span // strides[i]) + 1
            if (out - 1) * strides[i] >= size[i] + begin[i]:
                out -= 1
            end[i] += max(0, (out - 1) * strides[i] + eff - (size[i] + begin[i] + end[i]))
    return [begin[0], end[0], begin[1], end[1]]


def _arr(values: Sequence[int]):
    return minun.i64_array(values)


def _conv(imp: Importer, node: Node) -> list[Value]:
    x, w, b = node.inputs[0], node.inputs[1], node.input(2)
    x4, was_1d = _spatial_2d(imp, x)
    if w.rank != x.rank:
        raise imp.error(f"filter {minun.shape_str(w.shape)} does not match input "
                        f"{minun.shape_str(x.shape)}")
    w4 = imp.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2])) if was_1d else w
    g = int(node.attr("group", 1))
    m, cg, kh, kw = w4.shape
    kernel = node.attr("kernel_shape")
    if kernel is not None and _ints(imp, node, "kernel_shape", x.rank - 2, was_1d) != [kh, kw]:
        raise imp.error(f"kernel_shape {kernel} does not match the filter "
                        f"{minun.shape_str(w.shape)}")
    if m % g or x4.shape[1] != cg * g:
        raise imp.error(f"channels do not match group={g}: input {minun.shape_str(x.shape)}, "
                        f"filter {minun.shape_str(w.shape)}")
    strides = _ints(imp, node, "strides", x.rank - 2, was_1d)
    dilations = _ints(imp, node, "dilations", x.rank - 2, was_1d)
    pads = window_pads(imp, node, x4.shape[2:], (kh, kw), strides, dilations,
                       _ints(imp, node, "pads", x.rank - 2, was_1d), False)
    out = _emit_conv(imp, x4, w4, g, strides, pads, dilations)
    if b is not None:
        out = Value.of(imp.make(minun.BiasAddOp, imp.ir(out), imp.ir(b)), NHWC)
    return [_back_to_1d(imp, out, was_1d)]


def _emit_conv(imp: Importer, x4: Value, w4: Value, g: int, strides, pads,
               dilations) -> Value:
    """minun.conv2d of NCHW-viewed x4 with ONNX filter w4 [M, C/G, KH, KW]; NHWC result."""
    m, cg, kh, kw = w4.shape
    # [M, C/G, KH, KW] -> [G, M/G, C/G, KH, KW] -> L1's [G, KH, KW, C/G, M/G]
    filt = imp.ir(imp.reshape(w4, (g, m // g, cg, kh, kw)), (0, 3, 4, 2, 1))
    y = imp.emit(minun.Conv2DOp.create(
        operands=[imp.ir(x4, NHWC), filt],
        attributes={"strides": _arr(strides), "pads": _arr(pads),
                    "dilations": _arr(dilations), "groups": IntegerAttr(g, i64)},
        result_types=[minun.tensor_of(
            (x4.shape[0], *_out_hw(x4.shape[2:], (kh, kw), strides, pads, dilations), m))]))
    return Value.of(y, NHWC)


def _zero_insert(imp: Importer, v: Value, axis: int, s: int) -> Value:
    """s - 1 zeros between neighbours along `axis` of v (identity layout): a reshape, a
    concat with a zero block on a new axis, a reshape and a slice of the last zeros."""
    if s == 1:
        return v
    n = v.shape[axis]
    col = imp.reshape(v, v.shape[:axis + 1] + (1,) + v.shape[axis + 1:])
    zeros = Value.const(np.zeros(v.shape[:axis + 1] + (s - 1,) + v.shape[axis + 1:],
                                 np.float32), "zeros")
    spread = imp.reshape(imp.concat([col, zeros], axis + 1),
                         v.shape[:axis] + (n * s,) + v.shape[axis + 1:])
    return imp.slice(spread, axis, 0, (n - 1) * s + 1)


def _conv_transpose(imp: Importer, node: Node) -> list[Value]:
    """The transposed convolution as a convolution: s - 1 zeros inserted between the
    input's pixels, padded by d (k - 1) - pad on each side (+ output_padding at the end;
    a negative padding crops), convolved at stride 1 with the filter flipped in space and
    its input/output channels swapped per group ([C, M/G, KH, KW] -> [M, C/G, KH, KW])."""
    x, w, b = node.inputs[0], node.inputs[1], node.input(2)
    x4, was_1d = _spatial_2d(imp, x)
    spatial = x.rank - 2
    filt = imp.const(w, "the filter W")
    if filt.ndim != x.rank:
        raise imp.error(f"filter {minun.shape_str(w.shape)} does not match input "
                        f"{minun.shape_str(x.shape)}")
    if was_1d:
        filt = filt.reshape(filt.shape[0], filt.shape[1], 1, filt.shape[2])
    g = int(node.attr("group", 1))
    c, mg, kh, kw = filt.shape
    if c % g or x4.shape[1] != c:
        raise imp.error(f"channels do not match group={g}: input {minun.shape_str(x.shape)}, "
                        f"filter {minun.shape_str(w.shape)}")
    if node.attr("kernel_shape") is not None and \
            _ints(imp, node, "kernel_shape", spatial, was_1d) != [kh, kw]:
        raise imp.error(f"kernel_shape {node.attr('kernel_shape')} does not match the filter "
                        f"{minun.shape_str(w.shape)}")
    strides = _ints(imp, node, "strides", spatial, was_1d)
    dilations = _ints(imp, node, "dilations", spatial, was_1d)
    pads = _ints(imp, node, "pads", spatial, was_1d)
    adj = node.attr("output_padding")
    adj = [0] * spatial if adj is None else list(adj)
    if len(adj) != spatial or any(a < 0 for a in adj):
        raise imp.error(f"output_padding {adj}: {spatial} values of at least 0 are expected")
    adj = [0] + adj if was_1d else adj
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise imp.error(f"unknown auto_pad '{auto_pad}'")
    out_shape = node.attr("output_shape")
    if out_shape is not None:
        out_shape = list(out_shape)[-spatial:]
        out_shape = [1] + out_shape if was_1d else out_shape
    size, kernel = x4.shape[2:], (kh, kw)
    begin, end = [pads[0], pads[1]], [pads[2], pads[3]]
    for i in range(2):
        full = (size[i] - 1) * strides[i] + adj[i] + dilations[i] * (kernel[i] - 1) + 1
        if auto_pad == "VALID":
            begin[i] = end[i] = 0
        elif out_shape is not None or auto_pad != "NOTSET":  # onnxruntime's rule
            want = out_shape[i] if out_shape is not None else size[i] * strides[i]
            total = full - want
            small, large = total // 2, total - total // 2
            begin[i], end[i] = (small, large) if auto_pad == "SAME_UPPER" else (large, small)
            if total < 0:  # a larger output: zeros (the bias) at the end
                begin[i], end[i] = 0, total
    v = Value.of(imp.ir(x4, NHWC))  # [N, H, W, C], identity layout
    if list(kernel) == list(strides) and dilations == [1, 1] and g == 1 and adj == [0, 0] \
            and min(begin + end) >= 0:
        out = _pixel_blocks(imp, v, filt, begin, end)
    else:
        out = _zero_inserted_conv(imp, v, filt, g, strides, dilations, begin, end, adj)
    if b is not None:
        out = Value.of(imp.make(minun.BiasAddOp, imp.ir(out), imp.ir(b)), NHWC)
    return [_back_to_1d(imp, out, was_1d)]


def _pixel_blocks(imp: Importer, v: Value, filt: np.ndarray, begin, end) -> Value:
    """Kernel = stride (nn.ConvTranspose2d(k, stride=k), a decoder's upsampling): each
    input pixel writes its own KH x KW block, so one matmul [N H W, C] x [C, KH KW M]
    and a reshape that reads the blocks in place (no zeros, a quarter of the zero-insertion
    conv's multiplications at stride 2); pads crop."""
    n, h, w, c = v.shape
    _, m, kh, kw = filt.shape
    rows = imp.reshape(v, (n * h * w, c))
    wm = Value.const(np.ascontiguousarray(filt.transpose(0, 2, 3, 1)).reshape(c, -1), "W")
    y = Value.of(imp.make(minun.MatMulOp, imp.ir(rows), imp.ir(wm)))
    blocks = imp.transpose(imp.reshape(y, (n, h, w, kh, kw, m)), (0, 1, 3, 2, 4, 5))
    out = imp.reshape(blocks, (n, h * kh, w * kw, m))
    for axis, lo, hi in ((1, begin[0], end[0]), (2, begin[1], end[1])):
        if lo or hi:
            if out.shape[axis] - lo - hi < 1:
                raise imp.error(f"pads {begin + end} leave no output")
            out = imp.slice(out, axis, lo, out.shape[axis] - lo - hi)
    return Value.of(imp.ir(out), NHWC)


def _zero_inserted_conv(imp: Importer, v: Value, filt: np.ndarray, g: int, strides,
                        dilations, begin, end, adj) -> Value:
    """The general case (see _conv_transpose)."""
    c, mg, kh, kw = filt.shape
    kernel = (kh, kw)
    pads = begin + end
    for axis in (1, 2):
        v = _zero_insert(imp, v, axis, strides[axis - 1])
    ir_pads = []
    for i, axis in enumerate((1, 2)):
        lo = dilations[i] * (kernel[i] - 1) - begin[i]
        hi = dilations[i] * (kernel[i] - 1) - end[i] + adj[i]
        if lo < 0 or hi < 0:
            n = v.shape[axis] + min(lo, 0) + min(hi, 0)
            if n < 1:
                raise imp.error(f"pads {pads} leave no output along spatial axis {i}")
            v = imp.slice(v, axis, -min(lo, 0), n)
        ir_pads += [max(lo, 0), max(hi, 0)]
    flipped = filt.reshape(g, c // g, mg, kh, kw)[:, :, :, ::-1, ::-1]
    flipped = np.ascontiguousarray(flipped.transpose(0, 2, 1, 3, 4)).reshape(
        g * mg, c // g, kh, kw)
    return _emit_conv(imp, Value.of(imp.ir(v), NHWC), Value.const(flipped, "W"), g,
                      (1, 1), ir_pads, dilations)


def _instance_norm(imp: Importer, node: Node) -> list[Value]:
    """(x - mean) / sqrt(var + eps) over the spatial axes of each (n, c), then scale and
    bias per channel: reduce.py's LayerNormalization code from axis 2."""
    from .reduce import affine, standardise

    x, scale, bias = node.inputs
    if x.rank < 3:
        raise imp.error(f"input must be [N, C, D1, ...], got {minun.shape_str(x.shape)}")
    c = x.shape[1]
    for v, what in ((scale, "scale"), (bias, "B")):
        if v.shape != (c,):
            raise imp.error(f"{what} must be 1-D of the {c} channels, got "
                            f"{minun.shape_str(v.shape)}")
    y = standardise(imp, x, 2, float(node.attr("epsilon", 1e-5)))
    per_channel = (c,) + (1,) * (x.rank - 2)
    return [affine(imp, y, imp.reshape(scale, per_channel), imp.reshape(bias, per_channel))]


def _out_hw(size, kernel, strides, pads, dilations) -> tuple[int, int]:
    t, bt, left, r = pads
    return (minun.conv_out_dim(size[0], kernel[0], strides[0], t + bt, dilations[0]),
            minun.conv_out_dim(size[1], kernel[1], strides[1], left + r, dilations[1]))


def _back_to_1d(imp: Importer, v: Value, was_1d: bool) -> Value:
    return imp.reshape(v, (v.shape[0], v.shape[1], v.shape[3])) if was_1d else v


def _pool(cls: type):
    def handler(imp: Importer, node: Node) -> list[Value | None]:
        x, was_1d = _spatial_2d(imp, node.inputs[0])
        spatial = node.inputs[0].rank - 2
        if not node.attr("kernel_shape"):
            raise imp.error("kernel_shape is required")
        kernel = _ints(imp, node, "kernel_shape", spatial, was_1d)
        strides = _ints(imp, node, "strides", spatial, was_1d)
        dilations = _ints(imp, node, "dilations", spatial, was_1d)
        if any(d != 1 for d in dilations):
            raise imp.error(f"pooling dilations {node.attr('dilations')} are not supported "
                            f"(the L1 pooling ops have none)")
        ceil_mode = bool(node.attr("ceil_mode", 0))
        pads = _ints(imp, node, "pads", spatial, was_1d)
        explicit = window_pads(imp, node, x.shape[2:], kernel, strides, dilations, pads, False)
        full = window_pads(imp, node, x.shape[2:], kernel, strides, dilations, pads, ceil_mode)
        why = minun.padding_only_window((x.shape[0], *x.shape[2:], x.shape[1]), kernel, strides,
                                        full)
        if why:
            raise imp.error(why)
        attrs = {"kernel": _arr(kernel), "strides": _arr(strides), "pads": _arr(full)}
        if cls is minun.AvgPoolOp and int(node.attr("count_include_pad", 0)):
            if full != explicit:
                raise imp.error("ceil_mode with count_include_pad=1 is not supported")
            attrs["count_include_pad"] = UnitAttr()
        out_hw = _out_hw(x.shape[2:], kernel, strides, full, (1, 1))
        y = imp.emit(cls.create(operands=[imp.ir(x, NHWC)], attributes=attrs, result_types=[
            minun.tensor_of((x.shape[0], *out_hw, x.shape[1]))]))
        return [_back_to_1d(imp, Value.of(y, NHWC), was_1d), None]

    return handler


def _global_avg(imp: Importer, node: Node) -> list[Value]:
    x, was_1d = _spatial_2d(imp, node.inputs[0])
    y = Value.of(imp.make(minun.GlobalAvgPoolOp, imp.ir(x, NHWC)), NHWC)
    return [_back_to_1d(imp, y, was_1d)]


def _global_max(imp: Importer, node: Node) -> list[Value]:
    x, was_1d = _spatial_2d(imp, node.inputs[0])
    attrs = {"kernel": _arr(x.shape[2:]), "strides": _arr((1, 1)), "pads": _arr((0,) * 4)}
    y = imp.emit(minun.MaxPoolOp.create(operands=[imp.ir(x, NHWC)], attributes=attrs,
                                        result_types=[minun.tensor_of((x.shape[0], 1, 1,
                                                                       x.shape[1]))]))
    return [_back_to_1d(imp, Value.of(y, NHWC), was_1d)]


def _batchnorm(imp: Importer, node: Node) -> list[Value | None]:
    """Inference batch norm along the channel axis 1, which the NHWC-style layout puts last.
    Training mode (and the running statistics outputs) is refused."""
    x = node.inputs[0]
    if node.version >= 14 and int(node.attr("training_mode", 0)):
        raise imp.error("training_mode=1 is not supported (inference only)")
    if node.version < 9 and not int(node.attr("spatial", 1)):
        raise imp.error("spatial=0 (per-activation statistics) is not supported")
    if x.rank < 2:
        raise imp.error(f"input must have a channel axis, got {minun.shape_str(x.shape)}")
    perm = (0, *range(2, x.rank), 1)
    c = x.shape[1]
    params = []
    for i, what in ((1, "scale"), (2, "bias"), (3, "mean"), (4, "var")):
        v = node.inputs[i]
        if v.shape != (c,):
            raise imp.error(f"{what} must be 1-D of the {c} channels, got "
                            f"{minun.shape_str(v.shape)}")
        params.append(imp.ir(v))
    eps = float(node.attr("epsilon", 1e-5))
    y = imp.emit(minun.BatchNormOp.create(
        operands=[imp.ir(x, perm), *params], attributes={"epsilon": minun.f64_attr(eps)},
        result_types=[minun.tensor_of(tuple(x.shape[p] for p in perm))]))
    return [Value.of(y, perm)] + [None] * (len(node.proto.output) - 1)


HANDLERS = {
    "Conv": _conv,
    "MaxPool": _pool(minun.MaxPoolOp),
    "AveragePool": _pool(minun.AvgPoolOp),
    "GlobalAveragePool": _global_avg,
    "GlobalMaxPool": _global_max,
    "BatchNormalization": _batchnorm,
    "ConvTranspose": _conv_transpose,
    "InstanceNormalization": _instance_norm,
}
