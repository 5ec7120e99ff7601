"""Empirical bias correction (`quantize{bias-correction=true data=...}`, `minun-compile
--bias-correction`): rounding a layer's weights and inputs to int8 moves the mean of its
output, and the layers after it see that shift as a systematic error. Measured on the
calibration inputs, per output channel c of every bias add after a matmul or convolution,

    delta_c = mean(quantized output_c - float output_c)

is subtracted from the float bias b_c, and the model is quantized again (Nagel et al.,
"Data-Free Quantization Through Weight Equalization and Bias Correction", ICCV 2019,
section 4.2, its empirical variant). Layer by layer in program order, each measured with
the layers before it already corrected: measured all at once, a layer's shift would also
hold what the earlier corrections remove, and be corrected twice (on the zoo's DS-CNN that
made the error 2.8x larger instead of smaller).

For the zero-skew representation: its bias adds are int32 accumulators whose channels
have their own real scales (per-channel weights), read here from the bias parameter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue

from minun_mlir.dialects import minun, num
from minun_mlir.modules import main_function
from minun_mlir.numerics import float_eval, formats
from minun_mlir.numerics.l2_eval import encode_input, l2_lookup

# the name hint given to an unnamed bias add, to find it in L2 (not ending in _<digits>,
# which xDSL strips from a hint)
NAME = "bias{}_corrected"


def bias_adds(module: ModuleOp) -> list[minun.BiasAddOp]:
    """The bias adds the correction moves: a parameter (used by this op alone) added to a
    matmul's or convolution's result, outside any loop (one bias serves every step of a
    recurrent cell, whose state's error changes from step to step: corrected too, the
    zoo's GRU had 2.48% median output error instead of 2.15%)."""
    fn = main_function(module)
    uses: dict[SSAValue, int] = {}
    for op in fn.walk():
        for v in op.operands:
            uses[v] = uses.get(v, 0) + 1
    return [op for op in fn.body.block.ops
            if isinstance(op, minun.BiasAddOp)
            and isinstance(op.operands[1].owner, minun.ParamOp)
            and uses[op.operands[1]] == 1
            and isinstance(op.operands[0].owner, (minun.MatMulOp, minun.Conv2DOp))]


def correct_biases(l1: ModuleOp, features: np.ndarray | Mapping[str, np.ndarray],
                   quantize: Callable[[ModuleOp], ModuleOp]) -> ModuleOp:
    """A copy of `l1` with every bias of `bias_adds` moved by the mean error the quantized
    program (`quantize(module)` -> L2) makes at that add on `features`. `l1` is not
    changed."""
    work = l1.clone()
    ops = bias_adds(work)
    if not ops:
        return work
    for k, op in enumerate(ops):
        if op.results[0].name_hint is None:
            op.results[0].name_hint = NAME.format(k)
    # the float model's values, before any bias moves: what every layer is brought back to
    floats = float_eval.evaluate(work, features, record=[op.results[0] for op in ops]).recorded
    for op in ops:
        name = op.results[0].name_hint
        l2 = quantize(work.clone())
        fn = main_function(l2)
        value = _l2_value(fn, name, op.results[0].type.get_shape())
        if value is None:  # folded away by the quantizer (nothing to measure)
            continue
        (stored,) = float_eval.evaluate(fn, features, lookup=l2_lookup,
                                        encode=encode_input(fn),
                                        record=[value]).recorded.values()
        f, q = floats[op.results[0]], _decode(value, stored)
        channels = f.shape[-1]
        delta = (q.reshape(-1, channels) - f.reshape(-1, channels)).mean(axis=0)
        param = op.operands[1].owner
        values = param.array() - delta.reshape(param.array().shape)
        param.value = minun.dense_f32(values.astype(np.float32))
    for k, op in enumerate(ops):  # the hints given above are not the model's names
        if op.results[0].name_hint == NAME.format(k):
            op.results[0].name_hint = None
    return work


def _l2_value(fn, name: str, shape) -> SSAValue | None:
    """The L2 value that holds the L1 bias add `name`: the int32 sum of accumulator and
    bias (a num.add), else the value it was requantized to (an output); of the L1 value's
    shape (the quantizer may give its name to a reshape or transpose around it too)."""
    found = [v for o in fn.walk() for v in o.results if v.name_hint == name
             and isinstance(v.type, TensorType) and v.type.get_shape() == shape]
    sums = [v for v in found if isinstance(v.owner, num.AddOp)]
    return (sums or found or [None])[0]


def _decode(value: SSAValue, stored: np.ndarray) -> np.ndarray:
    """The reals of an L2 value: a per-channel int32 accumulator by its bias parameter's
    channel scales (along the last axis), anything else by its type."""
    el = value.type.element_type if isinstance(value.type, TensorType) else value.type
    owner = value.owner
    if isinstance(owner, num.AddOp):
        for operand in owner.operands:
            if isinstance(operand.owner, num.ParamOp) and operand.owner.real_scales():
                return np.asarray(stored, np.float64) * np.asarray(operand.owner.real_scales())
    return formats.of_element(el).decode(np.asarray(stored), el)
