"""`lower-composite-ops`: rewrite L1's composite ops into the primitive ones that number
representations implement, so that each primitive's values can be profiled and scaled:

- mbconv -> conv2d (1x1) * W1 + B1, relu6, depthwise conv2d * W2 + B2, relu6, conv2d * W3 + B3
- batchnorm with constant statistics -> x <*> a <+> b, with a, b folded at compile time
- avgpool / global_avgpool -> depthwise conv2d with a constant 1/k filter (and a constant
  correction map when padding is not counted)
- div by a constant -> hadamard with the reciprocal
- erf -> tanh of an odd quintic of x clipped to [-4, 4] (error < 5.3e-5)

It is the first stage of the compile pipeline (minun_mlir/pipeline.py), before quantize,
which rejects the composite ops it would otherwise have to scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnitAttr,
    f64,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from minun_mlir.diagnostics import error
from minun_mlir.dialects import minun
from minun_mlir.formats.zero_skew.representation import (
    MEAN_DIVISOR,
    ORT_AVGPOOL,
    QUANTIZATION,
    REQUANTIZE,
    TFLITE_AVGPOOL,
)


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The compile-time value of a parameter or constant, else None."""
    owner = value.owner
    if isinstance(owner, (minun.ParamOp, minun.ConstantOp)):
        return owner.array().astype(np.float64)
    return None


def _const(array: np.ndarray) -> minun.ConstantOp:
    return minun.ConstantOp(np.asarray(array, dtype=np.float32))


def _conv(x: SSAValue, f: SSAValue, strides, pads, groups: int) -> minun.Conv2DOp:
    return minun.Conv2DOp.create(
        operands=[x, f],
        attributes={"strides": minun.i64_array(strides), "pads": minun.i64_array(pads),
                    "dilations": minun.i64_array((1, 1)), "groups": IntegerAttr(groups, i64)},
        result_types=[_conv_type(x, f, strides, pads)])


def _conv_type(x: SSAValue, f: SSAValue, strides, pads):
    n, h, w, _ = x.type.get_shape()
    g, kh, kw, _, co = f.type.get_shape()
    ho = minun.conv_out_dim(h, kh, strides[0], pads[0] + pads[1], 1)
    wo = minun.conv_out_dim(w, kw, strides[1], pads[2] + pads[3], 1)
    return minun.tensor_of((n, ho, wo, g * co), x.type.element_type)


class MBConvToPrimitives(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: minun.MBConvOp, rewriter: PatternRewriter) -> None:
        ops: list[Operation] = []

        def add(o: Operation) -> SSAValue:
            ops.append(o)
            return o.results[0]

        def scale_bias(x: SSAValue, w: SSAValue, b: SSAValue) -> SSAValue:
            return add(minun.BiasAddOp.make(add(minun.HadamardOp.make(x, w)), b))

        t = op.f1.type.get_shape()[4]
        x = add(_conv(op.input, op.f1, (1, 1), (0, 0, 0, 0), 1))
        x = add(minun.Relu6Op.make(scale_bias(x, op.w1, op.b1)))
        x = add(_conv(x, op.f2, minun.ints(op.strides), minun.ints(op.pads), t))
        x = add(minun.Relu6Op.make(scale_bias(x, op.w2, op.b2)))
        x = add(_conv(x, op.f3, (1, 1), (0, 0, 0, 0), 1))
        scale_bias(x, op.w3, op.b3)
        rewriter.replace(op, ops)


class BatchNormToScaleBias(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: minun.BatchNormOp, rewriter: PatternRewriter) -> None:
        stats = [constant_array(v) for v in (op.scale, op.bias, op.mean, op.var)]
        if any(s is None for s in stats):
            raise error(f"{op.name}: scale, bias, mean and var must be constants to "
                        "quantize batch-norm", at=op)
        scale, bias, mean, var = stats
        a = scale / np.sqrt(var + float(op.epsilon.value.data))
        b = bias - mean * a
        ca, cb = _const(a), _const(b)
        mul = minun.HadamardOp.make(op.input, ca)
        out = minun.BiasAddOp.make(mul, cb)
        rewriter.replace(op, [ca, cb, mul, out])


class PoolToDepthwiseConv(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, minun.GlobalAvgPoolOp):
            _, h, w, c = op.input.type.get_shape()
            kernel, strides, pads, count_pad = (h, w), (1, 1), (0, 0, 0, 0), True
        elif isinstance(op, minun.AvgPoolOp):
            _, h, w, c = op.input.type.get_shape()
            kernel, strides, pads = minun.ints(op.kernel), minun.ints(op.strides), minun.ints(
                op.pads)
            count_pad = op.count_include_pad is not None or not any(pads)
        else:
            return
        k = kernel[0] * kernel[1]
        if isinstance(op, minun.GlobalAvgPoolOp) and QUANTIZATION in op.attributes and \
                _tflite_model(op):
            # TFLM's int8 MEAN: the sum (weights 1 stored as 1), 1/k in the requantization
            filt = _const(np.ones((c, kernel[0], kernel[1], 1, 1)))
            filt.attributes[QUANTIZATION] = DenseArrayBase.from_list(f64, [1.0, 0.0])
            conv = _conv(op.operands[0], filt.result, strides, pads, c)
            conv.attributes[QUANTIZATION] = op.attributes[QUANTIZATION]
            conv.attributes[MEAN_DIVISOR] = IntegerAttr(k, i64)
            rewriter.replace(op, [filt, conv])
            return
        filt = _const(np.full((c, kernel[0], kernel[1], 1, 1), 1.0 / k))
        conv = _conv(op.operands[0], filt.result, strides, pads, c)
        ops: list[Operation] = [filt, conv]
        if QUANTIZATION in op.attributes and count_pad and _tflite_model(op, "onnxruntime"):
            # zero-skew: onnxruntime's QLinear(Global)AveragePool, the int32 sum requantized
            # with MLAS's float32 scale s_x / (s_y k); other formats: the 1/k filter
            conv.attributes[ORT_AVGPOOL] = UnitAttr()
            conv.attributes[MEAN_DIVISOR] = IntegerAttr(k, i64)
        if not count_pad:
            # divide by the number of real pixels instead of k at the borders
            ones = np.pad(np.ones((h, w)), ((pads[0], pads[1]), (pads[2], pads[3])))
            win = np.lib.stride_tricks.sliding_window_view(ones, kernel)[::strides[0],
                                                                          ::strides[1]]
            factor = k / win.sum(axis=(-2, -1))
            corr = _const(factor[None, :, :, None])
            ops += [corr, minun.HadamardOp.make(conv, corr)]
        if QUANTIZATION in op.attributes:  # a pre-quantized model's type for the result
            for o in ops[1::2]:  # (and for the average before the border correction)
                o.attributes[QUANTIZATION] = op.attributes[QUANTIZATION]
                if _tflite_model(op):  # zero-skew: TFLite's own kernel (num.avgpool)
                    o.attributes[TFLITE_AVGPOOL] = UnitAttr()
        rewriter.replace(op, ops)


def _tflite_model(op: Operation, producer: str = "tflite") -> bool:
    """Whether op is in a TFLite model's function (its frontend marks it), or another
    pre-quantized model's (`producer` "onnxruntime": the ONNX importer's mark)."""
    fn = op.parent_op()
    while fn is not None and not isinstance(fn, func.FuncOp):
        fn = fn.parent_op()
    return fn is not None and fn.attributes.get(REQUANTIZE) == StringAttr(producer)


class DivByConstant(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: minun.DivOp, rewriter: PatternRewriter) -> None:
        divisor = constant_array(op.rhs)
        if divisor is None:
            return
        if np.any(divisor == 0):
            raise error(f"{op.name}: division by a constant that is zero", at=op)
        recip = _const(1.0 / divisor)
        rewriter.replace(op, [recip, minun.HadamardOp.make(op.lhs, recip)])


# erf(x) ~ tanh(x (A + x^2 (B + C x^2))) for |x| <= ERF_CLIP, fitted for the smallest
# largest error on [0, 6] (odd, so on every x): |error| < 3.7e-5, 5.3e-5 with the stretch
# below (test_erf_expansion);
# erf(4) = 1 - 1.5e-8, so the clip costs nothing and keeps the quintic monotone
ERF_A, ERF_B, ERF_C = 1.1281433796274163, 0.10408118540635568, -0.001786474434467003
ERF_CLIP = 4.0
ERF_STRETCH = 2.0 ** -16  # tanh(u) (1 + 2^-16), clipped to [-1, 1]


class ErfToTanh(RewritePattern):
    """minun.erf has no table of its own: one tanh of an odd quintic, which every number
    format computes (its error, 5.3e-5, is below fixed16's tanh table's)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: minun.ErfOp, rewriter: PatternRewriter) -> None:
        ops: list[Operation] = []

        def add(o: Operation) -> SSAValue:
            ops.append(o)
            return o.results[0]

        def const(v: float) -> SSAValue:
            return add(_const(np.array(v)))

        x = add(minun.ClipOp.make(op.input, lo=minun.f64_attr(-ERF_CLIP),
                                  hi=minun.f64_attr(ERF_CLIP)))
        s = add(minun.HadamardOp.make(x, x))
        t = add(minun.AddOp.make(add(minun.ScalarMulOp.make(const(ERF_C), s)), const(ERF_B)))
        u = add(minun.AddOp.make(add(minun.HadamardOp.make(s, t)), const(ERF_A)))
        t = add(minun.TanhOp.make(add(minun.HadamardOp.make(x, u))))
        # erf reaches +-1 (from |x| ~ 3.5 on), as a fixed-point tanh does but a float one
        # never: without this, 1 + erf (GELU's) is profiled below 2 and overflows there
        t = add(minun.ScalarMulOp.make(const(1.0 + ERF_STRETCH), t))
        add(minun.ClipOp.make(t, lo=minun.f64_attr(-1.0), hi=minun.f64_attr(1.0)))
        rewriter.replace(op, ops)


COMPOSITE_OPS = (minun.ErfOp, minun.MBConvOp, minun.BatchNormOp, minun.AvgPoolOp,
                 minun.GlobalAvgPoolOp)


def is_composite(op: Operation) -> bool:
    """Whether lower-composite-ops would rewrite `op` (quantize rejects such ops)."""
    if isinstance(op, minun.DivOp):
        return constant_array(op.rhs) is not None
    return isinstance(op, COMPOSITE_OPS)


def lower_composite_ops(module: ModuleOp) -> None:
    PatternRewriteWalker(
        GreedyRewritePatternApplier([MBConvToPrimitives(), BatchNormToScaleBias(),
                                     PoolToDepthwiseConv(), DivByConstant(),
                                     ErfToTanh()]),
        apply_recursively=False,
    ).rewrite_module(module)


@dataclass(frozen=True)
class LowerCompositeOps(ModulePass):
    """Rewrite mbconv, batchnorm, pooling, erf and division by constants into primitives."""

    name = "lower-composite-ops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_composite_ops(op)
