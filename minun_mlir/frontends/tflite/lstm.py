"""TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM as one ONNX LSTM node, so the ONNX frontend's
recurrent lowering (frontends/onnx/recurrent.py: a `minun.loop` over the time steps)
imports it; there is one LSTM lowering in the project, not one per frontend.

TFLite keeps each gate's weights in tensors of their own (inputs 1-8 and biases 12-15:
input, forget, cell, output gates; peepholes 9-11: input, forget, output) and the states
in variable tensors (18, 19) that start at zero, as ONNX's absent initial_h / initial_c.
ONNX stacks the gates i, o, f, c (peepholes i, o, f). The fused activation is the cell
gate's and the output's, as in TFLite's kernel (lstm_eval.cc; TFLM's float kernel gives
other outputs with ReLU). TFLite clips the new cell state to [-cell_clip, cell_clip] (its
converter writes 10 for a Keras LSTM): the node is then the lowering's `minun:LSTM`, an
ONNX LSTM with a `cell_clip` (recurrent.CLIPPED_LSTM). What ONNX's LSTM cannot say is
refused in one line: projection, layer normalisation, CIFG (TFLite's coupled gates:
i = 1 - f; ONNX's couple the other way), and quantized tensors (TFLite's integer LSTM:
int16 cell state and its own rescaling).
"""

from __future__ import annotations

import numpy as np
import tflite

from ..onnx.fuse import FUSED_DOMAIN
from .convert import ACT, ACT_NAMES, TYPE_NAMES, Converter

GATES = "iofc"  # ONNX's order of TFLite's gates
TFL_GATE = {"i": 0, "f": 1, "c": 2, "o": 3}  # TFLite's order: input, forget, cell, output
ACTIVATIONS = {ACT.TANH: "Tanh", ACT.RELU: "Relu"}


def _arg(ins: list[int], k: int) -> int:
    return ins[k] if k < len(ins) else -1


def _const(c: Converter, i: int, what: str) -> np.ndarray:
    array = c.buffer(i)
    if array is None:
        raise c.unsupported(f"{what} '{c.tname(i)}' must be a constant")
    return array.astype(np.float32)


def _unidirectional_sequence_lstm(c: Converter, op, ins: list[int], outs: list[int]) -> None:
    opts = c.options(op, tflite.UnidirectionalSequenceLSTMOptions)
    for i in [ins[0], outs[0], *(k for k in ins[1:] if k >= 0)]:
        if c.tensor(i).Type() != tflite.TensorType.FLOAT32:
            kind = TYPE_NAMES.get(c.tensor(i).Type(), "?")
            raise c.unsupported(
                f"tensor '{c.tname(i)}' is {kind}: only the float32 LSTM is supported "
                "(TFLite's integer LSTM, int16 cell state and its own rescaling, is not)")
    if _arg(ins, 1) < 0 or _arg(ins, 5) < 0:
        raise c.unsupported("CIFG (no input gate: TFLite's i = 1 - f) is not supported")
    if _arg(ins, 16) >= 0:
        raise c.unsupported("the projection layer (input 16) is not supported")
    if any(_arg(ins, k) >= 0 for k in range(20, 24)):
        raise c.unsupported("layer normalisation (inputs 20-23) is not supported")
    act = opts.FusedActivationFunction() if opts else ACT.TANH
    if act not in ACTIVATIONS:
        raise c.unsupported(f"fused activation {ACT_NAMES.get(act, act)} is not supported "
                            f"(supported: {', '.join(ACT_NAMES[a] for a in ACTIVATIONS)})")
    clip = float(opts.CellClip()) if opts else 0.0
    if clip < 0:
        raise c.unsupported(f"cell_clip {clip} is negative")
    if opts is not None and opts.DiagonalRecurrentTensors():
        raise c.unsupported("diagonal recurrent tensors are not supported")
    for k in (18, 19):
        state = c.buffer(ins[k]) if _arg(ins, k) >= 0 else None
        if state is not None and np.any(state != 0):
            raise c.unsupported(f"state tensor '{c.tname(ins[k])}' starts non-zero")
    time_major = bool(opts.TimeMajor()) if opts else False
    shape = c.shape(ins[0])
    if len(shape) != 3:
        raise c.unsupported(f"the input must be 3-D, got {shape}")
    seq, batch = (shape[0], shape[1]) if time_major else (shape[1], shape[0])
    w = np.concatenate([_const(c, ins[1 + TFL_GATE[g]], "input weight") for g in GATES])
    r = np.concatenate([_const(c, ins[5 + TFL_GATE[g]], "recurrent weight")
                        for g in GATES])
    hidden = r.shape[1]
    bias = [_const(c, ins[12 + TFL_GATE[g]], "gate bias") if _arg(ins, 12 + TFL_GATE[g]) >= 0
            else np.zeros(hidden, np.float32) for g in GATES]
    b = np.concatenate([*bias, np.zeros(4 * hidden, np.float32)])
    inputs = [c.value(ins[0]) if time_major
              else c.node("Transpose", [c.value(ins[0])], perm=[1, 0, 2])]
    inputs += [c.const(w[None], f"{c.tname(ins[2])}/W"),
               c.const(r[None], f"{c.tname(ins[6])}/R"),
               c.const(b[None], f"{c.tname(ins[13])}/B")]
    peep = [_arg(ins, k) for k in (9, 11, 10)]  # cell to input, output, forget: i, o, f
    if any(p >= 0 for p in peep):
        p = np.concatenate([_const(c, k, "peephole weight") if k >= 0
                            else np.zeros(hidden, np.float32) for k in peep])
        inputs += ["", "", "", c.const(p[None], f"{c.tname(ins[0])}/P")]
    name = ACTIVATIONS[act]
    y = c.node("LSTM", inputs, [c.fresh(f"{c.label}/Y")], hidden_size=hidden,
               activations=["Sigmoid", name, name],
               **({"domain": FUSED_DOMAIN, "cell_clip": clip} if clip else {}))
    y = c.node("Reshape", [y, c.const(np.array([seq, batch, hidden], np.int64), "shape")])
    c.define(outs[0], y if time_major else c.node("Transpose", [y], perm=[1, 0, 2]))


HANDLERS = {"UNIDIRECTIONAL_SEQUENCE_LSTM": _unidirectional_sequence_lstm}
