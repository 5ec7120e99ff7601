"""Small .tflite models built in the tests, one operator (or a few) each, with the
flatbuffer writers the `tflite` package generates from TFLite's schema; the operator tests
run them in TFLM's interpreter and through the frontend.

    m = ModelBuilder()
    x = m.tensor([1, 8, 8, 3], "int8", scale=0.05, zp=-3)
    w = m.tensor([4, 3, 3, 3], "int8", data=..., scale=[...], zp=[0] * 4, axis=0)
    y = m.tensor([1, 4, 4, 4], "int8", scale=0.1, zp=5)
    m.op("CONV_2D", [x, w, b], [y], "Conv2DOptions", Padding=0, StrideW=2, StrideH=2)
    data = m.build([x], [y])
"""

from __future__ import annotations

import flatbuffers
import numpy as np
import tflite

TYPES = {"float32": tflite.TensorType.FLOAT32, "int8": tflite.TensorType.INT8,
         "int32": tflite.TensorType.INT32, "uint8": tflite.TensorType.UINT8,
         "int16": tflite.TensorType.INT16}
OPTION_TYPES = {v: k for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_")}


def _vector(b: flatbuffers.Builder, table: str, field: str, values, prepend: str) -> int:
    getattr(tflite, f"{table}Start{field}Vector")(b, len(values))
    for v in reversed(list(values)):
        getattr(b, f"Prepend{prepend}")(v)
    return b.EndVector()


def _table(b: flatbuffers.Builder, table: str, **fields) -> int:
    getattr(tflite, f"{table}Start")(b)
    for field, value in fields.items():
        getattr(tflite, f"{table}Add{field}")(b, value)
    return getattr(tflite, f"{table}End")(b)


class ModelBuilder:
    def __init__(self):
        self.tensors: list[dict] = []
        self.buffers: list[bytes] = [b""]  # buffer 0: the empty one of run-time tensors
        self.ops: list[tuple] = []
        self.codes: list[tuple[int, str | None]] = []

    def tensor(self, shape, dtype: str, data: np.ndarray | None = None,
               scale=None, zp=None, axis: int = 0, variable: bool = False) -> int:
        buffer = 0
        if data is not None:
            self.buffers.append(np.ascontiguousarray(data, dtype=dtype).tobytes())
            buffer = len(self.buffers) - 1
        self.tensors.append(dict(shape=list(shape), dtype=dtype, buffer=buffer, scale=scale,
                                 zp=zp, axis=axis, name=f"t{len(self.tensors)}",
                                 variable=variable))
        return len(self.tensors) - 1

    def op(self, name: str, inputs: list[int], outputs: list[int],
           options: str | None = None, custom: str | None = None, **fields) -> None:
        """An operator: a builtin by name, or name "CUSTOM" with its `custom` code."""
        code = (getattr(tflite.BuiltinOperator, name), custom)
        if code not in self.codes:
            self.codes.append(code)
        self.ops.append((self.codes.index(code), inputs, outputs, options, fields))

    def build(self, inputs: list[int], outputs: list[int]) -> bytes:
        b = flatbuffers.Builder(1024)
        buffers = []
        for data in self.buffers:
            if data:
                b.StartVector(1, len(data), 16)
                for byte in reversed(data):
                    b.PrependUint8(byte)
                vec = b.EndVector()
                buffers.append(_table(b, "Buffer", Data=vec))
            else:
                buffers.append(_table(b, "Buffer"))
        tensors = []
        for t in self.tensors:
            shape = _vector(b, "Tensor", "Shape", t["shape"], "Int32")
            name = b.CreateString(t["name"])
            quant = None
            if t["scale"] is not None:
                scales = np.atleast_1d(t["scale"]).astype(np.float32).tolist()
                zps = np.atleast_1d(t["zp"] if t["zp"] is not None else 0).tolist()
                sv = _vector(b, "QuantizationParameters", "Scale", scales, "Float32")
                zv = _vector(b, "QuantizationParameters", "ZeroPoint", zps, "Int64")
                quant = _table(b, "QuantizationParameters", Scale=sv, ZeroPoint=zv,
                               QuantizedDimension=t["axis"])
            fields = dict(Shape=shape, Type=TYPES[t["dtype"]], Buffer=t["buffer"], Name=name)
            if quant is not None:
                fields["Quantization"] = quant
            if t["variable"]:  # a state tensor (an LSTM's), zero at start
                fields["IsVariable"] = True
            tensors.append(_table(b, "Tensor", **fields))
        ops = []
        for code, ins, outs, options, fields in self.ops:
            iv = _vector(b, "Operator", "Inputs", ins, "Int32")
            ov = _vector(b, "Operator", "Outputs", outs, "Int32")
            extra = {}
            if options is not None:
                opts = _table(b, options, **fields)
                extra = dict(BuiltinOptionsType=getattr(tflite.BuiltinOptions, options),
                             BuiltinOptions=opts)
            ops.append(_table(b, "Operator", OpcodeIndex=code, Inputs=iv, Outputs=ov,
                              **extra))
        tv = _vector(b, "SubGraph", "Tensors", tensors, "UOffsetTRelative")
        inv = _vector(b, "SubGraph", "Inputs", inputs, "Int32")
        outv = _vector(b, "SubGraph", "Outputs", outputs, "Int32")
        opv = _vector(b, "SubGraph", "Operators", ops, "UOffsetTRelative")
        subgraph = _table(b, "SubGraph", Tensors=tv, Inputs=inv, Outputs=outv, Operators=opv)
        codes = []
        for c, custom in self.codes:
            extra = {} if custom is None else {"CustomCode": b.CreateString(custom)}
            codes.append(_table(b, "OperatorCode", DeprecatedBuiltinCode=min(c, 127),
                                BuiltinCode=c, Version=1, **extra))
        cv = _vector(b, "Model", "OperatorCodes", codes, "UOffsetTRelative")
        sv = _vector(b, "Model", "Subgraphs", [subgraph], "UOffsetTRelative")
        bv = _vector(b, "Model", "Buffers", buffers, "UOffsetTRelative")
        model = _table(b, "Model", Version=3, OperatorCodes=cv, Subgraphs=sv, Buffers=bv)
        b.Finish(model, file_identifier=b"TFL3")
        return bytes(b.Output())


def lstm_model(time_major: bool, peephole: bool, clip: float, act: int,
               seed: int = 0) -> bytes:
    """One float UNIDIRECTIONAL_SEQUENCE_LSTM, 5 steps, batch 2, 3 features, 4 units."""
    rng = np.random.default_rng(seed)
    t, b, f, h = 5, 2, 3, 4
    m = ModelBuilder()
    x = m.tensor([t, b, f] if time_major else [b, t, f], "float32")

    def const(*shape):
        return m.tensor(shape, "float32", data=rng.uniform(-0.9, 0.9, shape))

    ins = [x] + [const(h, f) for _ in range(4)] + [const(h, h) for _ in range(4)]
    ins += [const(h) if peephole else -1 for _ in range(3)]
    ins += [const(h) for _ in range(4)] + [-1, -1]
    ins += [m.tensor([b, h], "float32", variable=True) for _ in range(2)] + [-1] * 4
    y = m.tensor([t, b, h] if time_major else [b, t, h], "float32")
    m.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y], "UnidirectionalSequenceLSTMOptions",
         FusedActivationFunction=act, CellClip=clip, ProjClip=0.0, TimeMajor=time_major)
    return m.build([x], [y])


def lstm_int8_model(time_major: bool, clip: float = 0.0, seed: int = 0,
                    shape: tuple[int, int, int] = (6, 3, 4), hidden: int = 5,
                    zp: tuple[int, int] = (7, -3), bias: int = 20000) -> bytes:
    """One int8 UNIDIRECTIONAL_SEQUENCE_LSTM (TFLite's integer LSTM: int8 weights, int32
    biases, an int8 hidden state and an int16 cell state at 2^-11), `shape` = (steps, batch,
    features) and `hidden` units; random weights and biases, input and hidden state at
    zero points `zp`, biases below `bias` in magnitude."""
    rng = np.random.default_rng(seed)
    t, b, f = shape
    h = hidden
    s_x, s_h = 0.03, 0.008
    m = ModelBuilder()
    x = m.tensor([t, b, f] if time_major else [b, t, f], "int8", scale=s_x, zp=zp[0])
    ins = [x]
    scales = rng.uniform(0.003, 0.01, 8)
    for k, cols in enumerate([f] * 4 + [h] * 4):
        data = rng.integers(-127, 128, (h, cols)).astype(np.int8)
        ins.append(m.tensor([h, cols], "int8", data=data, scale=scales[k], zp=0))
    ins += [-1, -1, -1]
    for k in range(4):
        data = rng.integers(-bias, bias, h).astype(np.int32)
        ins.append(m.tensor([h], "int32", data=data, scale=s_x * scales[k], zp=0))
    ins += [-1, -1]
    ins.append(m.tensor([b, h], "int8", scale=s_h, zp=zp[1], variable=True))
    ins.append(m.tensor([b, h], "int16", scale=2.0 ** -11, zp=0, variable=True))
    ins += [-1] * 4
    y = m.tensor([t, b, h] if time_major else [b, t, h], "int8", scale=s_h, zp=zp[1])
    m.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y], "UnidirectionalSequenceLSTMOptions",
         FusedActivationFunction=tflite.ActivationFunctionType.TANH, CellClip=clip,
         ProjClip=0.0, TimeMajor=time_major)
    return m.build([x], [y])
