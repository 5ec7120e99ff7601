"""The TFLite builtin operators, each as the ONNX nodes computing the same reals
(convert.py says how tensors, layouts and quantization map). A handler gets the converter,
the operator and its input and output tensor indices (-1: an absent optional input)."""

from __future__ import annotations

import numpy as np
import tflite

from .control import HANDLERS as CONTROL_HANDLERS
from .convert import Converter
from .lstm import HANDLERS as LSTM_HANDLERS

NCHW, NHWC = [0, 3, 1, 2], [0, 2, 3, 1]


def _fully_connected(c: Converter, op, ins: list[int], outs: list[int]) -> None:
    opts = c.options(op, tflite.FullyConnectedOptions)
    x, w = ins[0], ins[1]
    n_out, depth = c.shape(w)
    a = c.value(x)
    if len(c.shape(x)) != 2 or c.shape(x)[-1] != depth:
        a = c.node("Reshape", [a, c.const(np.array([-1, depth], np.int64), "shape")])
    y = c.node("MatMul", [a, c.value(w, layout=(1, 0))])  # OI -> IO
    if len(ins) > 2 and ins[2] >= 0:
        y = c.node("Add", [y, c.value(ins[2])])
    y = c.activation(y, opts.FusedActivationFunction() if opts else 0, outs[0])
    if c.shape(outs[0]) != [int(np.prod(c.shape(x))) // depth, n_out]:
        y = c.node("Reshape", [y, c.const(np.array(c.shape(outs[0]), np.int64), "shape")])
    c.define(outs[0], y)


def _reshape(c: Converter, op, ins, outs) -> None:
    shape = np.array(c.shape(outs[0]), np.int64)
    c.define(outs[0], c.node("Reshape", [c.value(ins[0]), c.const(shape, "shape")]))


def _shape(c: Converter, op, ins, outs) -> None:
    """The static shape of its input, a constant (folded: nothing runs)."""
    opts = c.options(op, tflite.ShapeOptions)
    dtype = np.int64 if opts is not None and opts.OutType() == tflite.TensorType.INT64 \
        else np.int32
    c.folded[outs[0]] = np.array(c.shape(ins[0]), dtype)


def _pack(c: Converter, op, ins, outs) -> None:
    """Constants stacked at import (Keras' Flatten packs [batch, -1] for a RESHAPE)."""
    opts = c.options(op, tflite.PackOptions)
    parts = [c.buffer(i) for i in ins]
    if any(p is None for p in parts):
        raise c.unsupported("only a PACK of constants (a shape) is supported")
    c.folded[outs[0]] = np.stack(parts, axis=opts.Axis() if opts is not None else 0)


def _strided_slice(c: Converter, op, ins, outs) -> None:
    """Constant begin / end / strides with begin, end and shrink-axis masks, as ONNX
    Slice then a Reshape to the output's shape (the shrunk axes dropped); of a constant
    (a folded SHAPE), computed at import."""
    opts = c.options(op, tflite.StridedSliceOptions)
    begin, end, strides = (c.buffer(i) for i in ins[1:4])
    if begin is None or end is None or strides is None:
        raise c.unsupported("begin, end and strides must be constants")
    if opts is not None and (opts.EllipsisMask() or opts.NewAxisMask() or opts.Offset()):
        raise c.unsupported("ellipsis and new-axis masks and offsets are not supported")
    bm, em, sm = (0, 0, 0) if opts is None else (
        opts.BeginMask(), opts.EndMask(), opts.ShrinkAxisMask())
    starts, ends, steps = [], [], []
    for k, (b, e, st) in enumerate(zip(begin, end, strides, strict=True)):
        b, e, st = int(b), int(e), int(st)
        far = (1 << 62) if st > 0 else -(1 << 62)
        start = (0 if st > 0 else -1) if bm >> k & 1 else b
        stop = far if em >> k & 1 else e
        if sm >> k & 1:  # one element: begin
            start, stop, st = b, (b + 1) or (1 << 62), 1
        starts.append(start)
        ends.append(stop)
        steps.append(st)
    data = c.buffer(ins[0])
    if data is not None and data.dtype.kind in "iu":  # index arithmetic on constants
        index = tuple(slice(a, None if abs(b) >= 1 << 62 else b, st)
                      for a, b, st in zip(starts, ends, steps, strict=True))
        c.folded[outs[0]] = np.asarray(data[index]).reshape(c.shape(outs[0]))
        return
    arr = lambda v: c.const(np.array(v, np.int64), "slice")  # noqa: E731
    y = c.node("Slice", [c.value(ins[0]), arr(starts), arr(ends),
                         arr(list(range(len(starts)))), arr(steps)])
    shape = np.array(c.shape(outs[0]), np.int64)
    c.define(outs[0], c.node("Reshape", [y, c.const(shape, "shape")]))


def _transpose(c: Converter, op, ins, outs) -> None:
    perm = c.buffer(ins[1])
    if perm is None:
        raise c.unsupported("the permutation must be a constant")
    c.define(outs[0], c.node("Transpose", [c.value(ins[0])],
                             perm=[int(p) for p in np.ravel(perm)]))


def _softmax(c: Converter, op, ins, outs) -> None:
    opts = c.options(op, tflite.SoftmaxOptions)
    x = c.value(ins[0])
    beta = opts.Beta() if opts else 1.0
    if beta != 1.0:
        x = c.node("Mul", [x, c.const(np.float32(beta), "beta")])
    c.define(outs[0], c.node("Softmax", [x], axis=-1))


def _quantize(c: Converter, op, ins, outs) -> None:
    """float -> int8: the input's reals, quantized as the output. int8 -> int8 (TFLite's
    requantization; uint8 <-> int8 too, a uint8 tensor being the int8 u - 128): max(x, x),
    an op of its own whose result has the output's type, so zero-skew requantizes x to it
    (MultiplyByQuantizedMultiplier, as TFLite)."""
    x = c.value(ins[0])
    if c.qparams(ins[0]) is not None and c.tensor(ins[0]).Type() in (
            tflite.TensorType.INT8, tflite.TensorType.UINT8):
        x = c.node("Max", [x, x])
    c.define(outs[0], x)


def _dequantize(c: Converter, op, ins, outs) -> None:
    c.names[outs[0]] = c.value(ins[0])  # the same reals, now float


def _same_pads(c: Converter, x: list[int], kernel: list[int], strides: list[int],
               dilations: list[int], padding: int) -> list[int]:
    """ONNX pads (begins then ends) of TFLite's padding SAME (the extra one at the end)
    or VALID."""
    if padding == tflite.Padding.VALID:
        return [0] * (2 * len(kernel))
    begins, ends = [], []
    for n, k, s, d in zip(x, kernel, strides, dilations, strict=True):
        out = -(-n // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
        begins.append(total // 2)
        ends.append(total - total // 2)
    return begins + ends


def _conv(c: Converter, op, ins, outs, depthwise: bool) -> None:
    cls = tflite.DepthwiseConv2DOptions if depthwise else tflite.Conv2DOptions
    opts = c.options(op, cls)
    x, w = ins[0], ins[1]
    _, h, wd, ch = c.shape(x)
    fshape = c.shape(w)
    kernel = fshape[1:3]
    strides = [opts.StrideH(), opts.StrideW()]
    dil = [opts.DilationHFactor(), opts.DilationWFactor()]
    pads = _same_pads(c, [h, wd], kernel, strides, dil, opts.Padding())
    if x in c.padded:  # PAD then the convolution: its zeros are the convolution's
        x, extra = c.padded[x]
        pads = [p + e for p, e in zip(pads, extra, strict=True)]
    xt = c.node("Transpose", [c.value(x)], perm=NCHW)
    q = c.qparams(w)
    mult = fshape[3] // ch if depthwise else 1
    # on one input channel a depthwise convolution is an ordinary one (one group), whose
    # per-channel scales zero-skew takes as they are: no split, no interleaving copy
    if mult > 1 and ch > 1 and q is not None and len(q[0]) > 1:
        _split_depthwise(c, op, ins, outs, xt, ch, mult, dict(
            kernel_shape=kernel, strides=strides, dilations=dil, pads=pads, group=ch))
        return
    # filters: OHWI -> OIHW; a depthwise [1, H, W, C*M] -> [C*M, 1, H, W], groups C
    wt = c.value(w, layout=(3, 0, 1, 2) if depthwise else (0, 3, 1, 2))
    inputs = [xt, wt]
    if len(ins) > 2 and ins[2] >= 0:
        inputs.append(c.value(ins[2]))
    y = c.node("Conv", inputs, kernel_shape=kernel, strides=strides, dilations=dil,
               pads=pads, group=ch if depthwise else 1)
    y = c.activation(y, opts.FusedActivationFunction(), outs[0])
    c.define(outs[0], c.node("Transpose", [y], perm=NHWC))


def _split_depthwise(c: Converter, op, ins, outs, xt: str, ch: int, mult: int,
                     attrs: dict) -> None:
    """A per-channel int8 depthwise convolution of multiplier M > 1 as M of multiplier 1
    (output channel c M + j is convolution j's channel c), each requantized as the output:
    zero-skew takes per-channel scales on one output channel per group."""
    fused = c.options(op, tflite.DepthwiseConv2DOptions).FusedActivationFunction()
    n, oh, ow, _ = c.shape(outs[0])
    parts = []
    for j in range(mult):
        idx = list(range(j, ch * mult, mult))
        inputs = [xt, c.value(ins[1], layout=(3, 0, 1, 2), select=(3, idx))]
        if len(ins) > 2 and ins[2] >= 0:
            inputs.append(c.value(ins[2], select=(0, idx)))
        y = c.activation(c.node("Conv", inputs, **attrs), fused, outs[0])
        parts.append(c.quantized(outs[0], y))
    y = c.node("Concat", parts, axis=1)  # channel j C + c
    shape = np.array([n, mult, ch, oh, ow], np.int64)
    y = c.node("Transpose", [c.node("Reshape", [y, c.const(shape, "shape")])],
               perm=[0, 2, 1, 3, 4])
    y = c.node("Reshape", [y, c.const(np.array([n, ch * mult, oh, ow], np.int64), "shape")])
    c.define(outs[0], c.node("Transpose", [y], perm=NHWC))


def _pool(c: Converter, op, ins, outs, kind: str) -> None:
    opts = c.options(op, tflite.Pool2DOptions)
    _, h, w, _ = c.shape(ins[0])
    kernel = [opts.FilterHeight(), opts.FilterWidth()]
    strides = [opts.StrideH(), opts.StrideW()]
    pads = _same_pads(c, [h, w], kernel, strides, [1, 1], opts.Padding())
    xt = c.node("Transpose", [c.value(ins[0])], perm=NCHW)
    y = c.node(kind, [xt], kernel_shape=kernel, strides=strides, pads=pads)
    y = c.activation(y, opts.FusedActivationFunction(), outs[0])
    c.define(outs[0], c.node("Transpose", [y], perm=NHWC))


def _binary(kind: str, options_cls):
    def handler(c: Converter, op, ins, outs) -> None:
        opts = c.options(op, options_cls) if options_cls is not None else None
        y = c.node(kind, [c.value(ins[0]), c.value(ins[1])])
        c.define(outs[0], c.activation(y, opts.FusedActivationFunction() if opts else 0,
                                         outs[0]))
    return handler


def _unary(kind: str):
    def handler(c: Converter, op, ins, outs) -> None:
        c.define(outs[0], c.node(kind, [c.value(ins[0])]))
    return handler


def _leaky_relu(c: Converter, op, ins, outs) -> None:
    opts = c.options(op, tflite.LeakyReluOptions)
    c.define(outs[0], c.node("LeakyRelu", [c.value(ins[0])],
                             alpha=float(opts.Alpha()) if opts else 0.2))


def _relu6(c: Converter, op, ins, outs) -> None:
    c.define(outs[0], c.activation(c.value(ins[0]), tflite.ActivationFunctionType.RELU6,
                                     outs[0]))


def _mean(c: Converter, op, ins, outs) -> None:
    opts = c.options(op, tflite.ReducerOptions)
    axes = c.buffer(ins[1])
    if axes is None:
        raise c.unsupported("the axes must be a constant")
    keep = int(bool(opts.KeepDims())) if opts else 0
    rank = len(c.shape(ins[0]))
    axes = sorted({int(a) % rank for a in np.ravel(axes)})
    x = c.value(ins[0])
    if rank == 4 and axes == [1, 2]:  # over H and W of NHWC: the importer's NCHW form
        y = c.node("ReduceMean", [c.node("Transpose", [x], perm=NCHW)], axes=[2, 3],
                   keepdims=keep)
        c.define(outs[0], c.node("Transpose", [y], perm=NHWC) if keep else y)
        return
    c.define(outs[0], c.node("ReduceMean", [x], axes=axes, keepdims=keep))


def _pad(c: Converter, op, ins, outs) -> None:
    """Zeros around H and W of NHWC (the zero point of an int8 tensor, as TFLite pads a
    quantized one): folded into a convolution that reads it, else concatenated
    (Converter.pad)."""
    pads = c.buffer(ins[1])
    if pads is None or pads.shape != (4, 2):
        raise c.unsupported("the paddings must be a constant 4 x 2 (NHWC)")
    if np.any(pads[[0, 3]] != 0) or np.any(pads < 0):
        raise c.unsupported(f"paddings {pads.tolist()}: only H and W are padded")
    if len(ins) > 2 and ins[2] >= 0:
        raise c.unsupported("PADV2's constant value is not supported")
    if c.qparams(ins[0]) != c.qparams(outs[0]):
        raise c.unsupported("the output's quantization differs from the input's")
    c.padded[outs[0]] = (ins[0], [int(pads[1, 0]), int(pads[2, 0]), int(pads[1, 1]),
                                  int(pads[2, 1])])


def _concatenation(c: Converter, op, ins, outs) -> None:
    opts = c.options(op, tflite.ConcatenationOptions)
    parts = [c.value(i) for i in ins if i not in c.empty]  # (a loop body's empty slices)
    y = c.node("Identity", parts) if len(parts) == 1 < len(ins) else \
        c.node("Concat", parts, axis=opts.Axis())
    c.define(outs[0], c.activation(y, opts.FusedActivationFunction(), outs[0]))


HANDLERS = {
    "FULLY_CONNECTED": _fully_connected,
    "RESHAPE": _reshape,
    "SQUEEZE": _reshape,
    "EXPAND_DIMS": _reshape,
    "TRANSPOSE": _transpose,
    "STRIDED_SLICE": _strided_slice,
    "SHAPE": _shape,
    "PACK": _pack,
    "MAXIMUM": _binary("Max", None),
    "MINIMUM": _binary("Min", None),
    "SOFTMAX": _softmax,
    "QUANTIZE": _quantize,
    "DEQUANTIZE": _dequantize,
    "CONV_2D": lambda c, op, ins, outs: _conv(c, op, ins, outs, False),
    "DEPTHWISE_CONV_2D": lambda c, op, ins, outs: _conv(c, op, ins, outs, True),
    "AVERAGE_POOL_2D": lambda c, op, ins, outs: _pool(c, op, ins, outs, "AveragePool"),
    "MAX_POOL_2D": lambda c, op, ins, outs: _pool(c, op, ins, outs, "MaxPool"),
    "ADD": _binary("Add", tflite.AddOptions),
    "SUB": _binary("Sub", tflite.SubOptions),
    "MUL": _binary("Mul", tflite.MulOptions),
    "LOGISTIC": _unary("Sigmoid"),
    "TANH": _unary("Tanh"),
    "RELU": _unary("Relu"),
    "RELU6": _relu6,
    "LEAKY_RELU": _leaky_relu,
    "MEAN": _mean,
    "CONCATENATION": _concatenation,
    "PAD": _pad,
    **LSTM_HANDLERS,
    **CONTROL_HANDLERS,
}
