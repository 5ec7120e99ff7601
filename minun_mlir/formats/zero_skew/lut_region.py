"""The float ops a pre-quantized model runs between a DequantizeLinear and a QuantizeLinear
(onnxruntime runs a HardSwish, say, in float32 there), as one int8 -> int8 table: the
element-wise L1 ops computing a value the model quantizes from one other value it
quantizes, with scalar constants only, are a function of that value's 256 integers. A
region of one op (a Relu, an Add, a Sigmoid, a LeakyRelu) keeps the op, which zero-skew
computes as onnxruntime does; two or more ops (the steps of a HardSwish, an Elu) would
each be quantized.
zero-skew (formats/zero_skew/representation.py) computes them as num.lut with this table instead of
quantizing each step: onnxruntime's integers, where the steps would round each."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation, SSAValue

from minun_mlir.dialects import minun
from minun_mlir.formats.zero_skew import arith as af

ELEMENTWISE = (minun.ScalarMulOp, minun.AddOp, minun.SubOp, minun.HadamardOp, minun.DivOp,
               minun.MaxOp, minun.MinOp, minun.ClipOp, minun.ReluOp, minun.Relu6Op,
               minun.LeakyReluOp, minun.SigmoidOp, minun.TanhOp, minun.ExpOp, minun.NegOp)


def region(value: SSAValue, given: Callable[[SSAValue], object]
           ) -> tuple[list[Operation], SSAValue] | None:
    """(the ops in order, the source) of the element-wise region computing `value` from
    one run-time value with a given quantization, or None."""
    ops: list[Operation] = []
    sources: set[SSAValue] = set()
    shape = value.type.get_shape()

    def visit(v: SSAValue) -> bool:
        owner = v.owner
        if v is not value and given(v) is not None and not isinstance(owner, minun.ParamOp):
            sources.add(v)
            return True
        if isinstance(owner, (minun.ConstantOp, minun.ParamOp)):
            return owner.array().size == 1 and v is not value
        if not isinstance(owner, ELEMENTWISE) or owner.results[0].type.get_shape() != shape:
            return False
        if v is not value and len(list(v.uses)) != 1:
            return False
        if not all(visit(x) for x in owner.operands):
            return False
        if owner not in ops:
            ops.append(owner)
        return True

    if not visit(value) or len(sources) != 1:
        return None
    source = sources.pop()
    if source.type.get_shape() != shape or len(ops) < 2:
        return None  # one op: zero-skew computes it as onnxruntime does already
    return ops, source


def table(ops: list[Operation], source: SSAValue, s_in: float, zp_in: int, s_out: float,
          zp_out: int) -> np.ndarray:
    """The int8 outputs of the region for inputs -128..127: the float ops (float_eval's)
    on the dequantized integers (float32, onnxruntime's DequantizeLinear), quantized as
    its QuantizeLinear (float32 quotient, half to even, saturated)."""
    from minun_mlir.numerics.float_eval import _IMPLS

    q = np.arange(af.QMIN, af.QMAX + 1)
    env = {source: ((q - zp_in).astype(np.float32) * np.float32(s_in)).astype(
        np.float64)[None]}

    def value(v: SSAValue) -> np.ndarray:
        if v not in env:
            env[v] = np.asarray(_IMPLS[type(v.owner)](v.owner), dtype=np.float64)
        return env[v]

    for op in ops:
        env[op.results[0]] = np.asarray(_IMPLS[type(op)](op, *(value(x) for x in op.operands)),
                                        dtype=np.float64)
    y = env[ops[-1].results[0]].reshape(-1).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.rint((y / np.float32(s_out)).astype(np.float32)).astype(np.float64) + zp_out
    return np.clip(np.nan_to_num(r), af.QMIN, af.QMAX).astype(np.int8)
