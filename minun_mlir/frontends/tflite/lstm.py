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
i = 1 - f; ONNX's couple the other way).

An int8 LSTM (int8 input, weights and hidden state, int16 cell state: TFLite's integer
LSTM, TFLM's 8x8->16 kernel) is one node `minun:TFLiteLSTM` carrying the file's integers
and the kernel's parameters as TFLM's Prepare computes them
(formats/zero_skew/tflite_lstm.py), imported as one `minun.tflite_lstm`; it compiles onto
zero-skew. What TFLM's integer kernel does not run (peepholes, projection, layer
normalisation, CIFG, an activation other than tanh) is refused in one line.
"""

from __future__ import annotations

import numpy as np
import tflite
from onnx import numpy_helper
from xdsl.dialects.builtin import UnitAttr

from minun_mlir.dialects import minun
from minun_mlir.formats.zero_skew import tflite_lstm as tl

from ..onnx.fuse import FUSED_DOMAIN
from ..onnx.importer import Importer, Node, Value, identity
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
    if c.tensor(ins[0]).Type() == tflite.TensorType.INT8:
        return _integer_lstm(c, opts, ins, outs)
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


def _scale(c: Converter, i: int, what: str, kind: int, zero: bool = True) -> tuple[float, int]:
    """Tensor i's one (scale, zero point), checked to be of `kind` (and zero point 0)."""
    q = c.qparams(i)
    name = TYPE_NAMES.get(kind, "?")
    if c.tensor(i).Type() != kind or q is None:
        got = TYPE_NAMES.get(c.tensor(i).Type(), "?")
        raise c.unsupported(f"the int8 LSTM's {what} '{c.tname(i)}' must be a quantized "
                            f"{name} tensor, got {got}{'' if q else ' without quantization'}")
    if len(q[0]) != 1:
        raise c.unsupported(f"the int8 LSTM's {what} '{c.tname(i)}' has per-channel scales "
                            "(TFLM's integer LSTM takes one scale per tensor)")
    if zero and q[1][0] != 0:
        raise c.unsupported(f"the int8 LSTM's {what} '{c.tname(i)}' has zero point {q[1][0]}"
                            " (TFLM's integer LSTM takes 0)")
    return float(np.float32(q[0][0])), int(q[1][0])


def _integer_lstm(c: Converter, opts, ins: list[int], outs: list[int]) -> None:
    """TFLite's integer LSTM as one `minun:TFLiteLSTM` node (TFLM's 8x8->16 kernel)."""
    missing = {"peepholes (inputs 9-11)": range(9, 12),
               "projection (inputs 16-17)": range(16, 18),
               "layer normalisation (inputs 20-23)": range(20, 24)}
    for what, ks in missing.items():
        if any(_arg(ins, k) >= 0 for k in ks):
            raise c.unsupported(f"the int8 LSTM with {what} is not supported (TFLM's "
                                "integer kernel runs the plain LSTM only)")
    if any(_arg(ins, k) < 0 for k in (*range(1, 9), *range(12, 16), 18, 19)):
        raise c.unsupported("the int8 LSTM without an input gate (CIFG), a weight, a bias "
                            "or a state tensor is not supported")
    act = opts.FusedActivationFunction() if opts else ACT.TANH
    if act != ACT.TANH:
        raise c.unsupported(f"the int8 LSTM with fused activation {ACT_NAMES.get(act, act)} "
                            "is not supported (TFLM's integer kernel: TANH)")
    if opts is not None and opts.DiagonalRecurrentTensors():
        raise c.unsupported("diagonal recurrent tensors are not supported")
    s_x, zp_x = _scale(c, ins[0], "input", tflite.TensorType.INT8, zero=False)
    s_h, zp_h = _scale(c, ins[18], "hidden state", tflite.TensorType.INT8, zero=False)
    s_c, _ = _scale(c, ins[19], "cell state", tflite.TensorType.INT16)
    if c.qparams(outs[0]) is None or c.qparams(outs[0])[:2] != c.qparams(ins[18])[:2]:
        raise c.unsupported(f"the output '{c.tname(outs[0])}' is not quantized as the hidden "
                            "state (TFLM's kernel copies the hidden state's integers)")
    for k in (18, 19):
        state = c.buffer(ins[k])
        if state is not None and np.any(state != 0):
            raise c.unsupported(f"state tensor '{c.tname(ins[k])}' starts non-zero")
    w, r, b, s_w, s_r = [], [], [], [], []
    for g in range(4):  # TFLite's order: input, forget, cell, output
        for k, arrays, scales in ((1 + g, w, s_w), (5 + g, r, s_r)):
            scales.append(_scale(c, ins[k], "weight", tflite.TensorType.INT8)[0])
            arrays.append(c.buffer(ins[k]))
        _scale(c, ins[12 + g], "bias", tflite.TensorType.INT32)
        b.append(c.buffer(ins[12 + g]))
    if any(a is None for a in (*w, *r, *b)):
        raise c.unsupported("the int8 LSTM's weights and biases must be constants")
    clip = float(opts.CellClip()) if opts else 0.0
    if clip < 0:
        raise c.unsupported(f"cell_clip {clip} is negative")
    p = tl.make_params(np.stack(w), np.stack(r), np.stack(b), s_x, zp_x, s_w, s_r, s_h, zp_h,
                       s_c, clip)
    time_major = bool(opts.TimeMajor()) if opts else False
    if len(c.shape(ins[0])) != 3:
        raise c.unsupported(f"the input must be 3-D, got {c.shape(ins[0])}")
    tensors = {"w": p.w.astype(np.int8), "r": p.r.astype(np.int8),
               "bias": p.bias.astype(np.int32), "params": p.vector().astype(np.int32),
               "scales": np.array([s_x, s_h], np.float32)}
    y = c.node("TFLiteLSTM", [c.value(ins[0])], [c.fresh(f"{c.label}/Y")], domain=FUSED_DOMAIN,
               time_major=int(time_major),
               **{k: numpy_helper.from_array(v, k) for k, v in tensors.items()})
    c.define(outs[0], y)


def _import_integer_lstm(imp: Importer, node: Node) -> list[Value]:
    """`minun:TFLiteLSTM` -> `minun.tflite_lstm` (its result's shape: the input's, H last)."""
    x = node.input(0)
    arrays = {k: numpy_helper.to_array(node.attr(k))
              for k in ("w", "r", "bias", "params", "scales")}
    shape = [*x.shape[:2], arrays["w"].shape[1]]
    attrs = {k: minun.dense_ints(v, 8 if k in ("w", "r") else 32) for k, v in arrays.items()
             if k != "scales"}
    attrs["scales"] = minun.dense_f32(arrays["scales"])
    if node.attr("time_major"):
        attrs["time_major"] = UnitAttr()
    op = minun.TFLiteLstmOp.create(operands=[imp.ir(x, identity(3))], attributes=attrs,
                                   result_types=[minun.tensor_of(shape)])
    return [Value.of(imp.emit(op))]


HANDLERS = {"UNIDIRECTIONAL_SEQUENCE_LSTM": _unidirectional_sequence_lstm}
# the ONNX importer's handler of the node the integer LSTM becomes
ONNX_HANDLERS = {f"{FUSED_DOMAIN}:TFLiteLSTM": _import_integer_lstm}
