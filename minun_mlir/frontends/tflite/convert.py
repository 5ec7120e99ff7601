"""A TFLite subgraph as the ONNX graph that computes the same reals, so the ONNX importer
(and its pre-quantized machinery, frontends/onnx/quantized.py) imports it.

Each TFLite operator becomes the ONNX nodes of its meaning, named
`operator K (NAME)` so the importer's diagnostics name the TFLite operator. Layouts:
TFLite is NHWC with OHWI filters; a convolution or pooling reads its input through an
ONNX Transpose (a layout change, no op, in the importer) and writes NHWC back. Filters are
permuted here, as numpy arrays, so their per-channel scales stay attached.

Quantized tensors (int8 with a scale and zero point) are the reals they stand for:

- a run-time tensor: its producer's nodes, then QuantizeLinear / DequantizeLinear with
  the tensor's (scale, zero point), which the importer records on the L1 op computing it;
  so quantize{repr=zero-skew} gives it exactly the file's type;
- a constant int8 tensor (a weight): DequantizeLinear of the file's integers (per-channel
  scales along its quantized dimension); an int32 one (a bias): DequantizeLinear at its
  scale, which quantize stores as the file's integers again.

The int32 -> int8 requantization is then TFLite's (MultiplyByQuantizedMultiplier, the
zero-skew default), not onnxruntime's: the import leaves the function unmarked.
"""

from __future__ import annotations

import numpy as np
import onnx
import tflite
from onnx import TensorProto, helper, numpy_helper

from minun_mlir.diagnostics import MinunError

OPSET = 13
OP_NAMES = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
TYPES = {tflite.TensorType.FLOAT32: np.float32, tflite.TensorType.FLOAT16: np.float16,
         tflite.TensorType.INT32: np.int32, tflite.TensorType.INT8: np.int8,
         tflite.TensorType.UINT8: np.uint8, tflite.TensorType.INT64: np.int64,
         tflite.TensorType.INT16: np.int16, tflite.TensorType.BOOL: np.bool_}
TYPE_NAMES = {v: k for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}
ACT = tflite.ActivationFunctionType
CONTROL_FLOW = ("WHILE", "IF", "CALL_ONCE", "CALL")
# integer and boolean operators computed at import when their inputs are constants
FOLD = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "LESS": np.less,
        "LESS_EQUAL": np.less_equal, "GREATER": np.greater,
        "GREATER_EQUAL": np.greater_equal, "EQUAL": np.equal, "NOT_EQUAL": np.not_equal,
        "LOGICAL_AND": np.logical_and, "LOGICAL_OR": np.logical_or, "MAXIMUM": np.maximum,
        "MINIMUM": np.minimum}
ACT_NAMES = {v: k for k, v in vars(ACT).items() if not k.startswith("_")}


class Unsupported(MinunError):
    """An operator (or a use of one) this frontend does not import."""


def op_name(model: tflite.Model, op: tflite.Operator) -> str:
    code = model.OperatorCodes(op.OpcodeIndex())
    builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
    if builtin == tflite.BuiltinOperator.CUSTOM:
        return f"CUSTOM '{(code.CustomCode() or b'').decode(errors='replace')}'"
    return OP_NAMES.get(builtin, f"builtin code {builtin}")


def options(op: tflite.Operator, cls):
    """The operator's builtin options as `cls` (e.g. tflite.FullyConnectedOptions)."""
    table = op.BuiltinOptions()
    opts = cls()
    if table is None:
        return None
    opts.Init(table.Bytes, table.Pos)
    return opts


class Converter:
    """One TFLite model's subgraph 0 -> onnx.ModelProto; `handlers` (ops.py) by operator
    name."""

    def __init__(self, model: tflite.Model, data: bytes, handlers: dict):
        self.model, self.data, self.handlers = model, data, handlers
        if model.SubgraphsLength() < 1:
            raise MinunError("the model has no subgraph")
        self.graph = model.Subgraphs(0)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[TensorProto] = []
        self.names: dict[int, str] = {}  # tensor index -> the ONNX name of its reals
        self.used_names: set[str] = set()
        self.label = ""
        # a PAD's output -> (its input, NHWC pads [top, left, bottom, right]): folded into
        # the convolution reading it (ops.py)
        self.padded: dict[int, tuple[int, list[int]]] = {}
        # the declared range of each int8 graph input (the reals its integers stand for)
        self.input_ranges: dict[str, tuple[float, float]] = {}
        # tensors computed at import from constants (a SHAPE of a static tensor, the
        # STRIDED_SLICE and PACK of it that Keras' Flatten writes before a RESHAPE)
        self.folded: dict[int, np.ndarray] = {}
        # inside a loop body (control.py): its constants' permuted views by (tensor,
        # layout, selection), converted once for all the steps
        self.views: dict[tuple, str] | None = None
        # per loop subgraph: its constants' ONNX names and views, kept across the steps
        self.subgraph_names: dict[int, dict[int, str]] = {}
        self.subgraph_views: dict[int, dict[tuple, str]] = {}
        # tensors with no element (a loop body's SLICE of zero rows): left out of the
        # CONCATENATION reading them
        self.empty: set[int] = set()

    # -- tensors -----------------------------------------------------------------------

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.used_names:
            name, k = f"{base}_{k}", k + 1
        self.used_names.add(name)
        return name

    def tensor(self, i: int) -> tflite.Tensor:
        return self.graph.Tensors(i)

    def tname(self, i: int) -> str:
        return (self.tensor(i).Name() or b"").decode(errors="replace") or f"tensor{i}"

    def shape(self, i: int) -> list[int]:
        t = self.tensor(i)
        return [int(d) for d in t.ShapeAsNumpy()] if t.ShapeLength() else []

    def qparams(self, i: int) -> tuple[list[float], list[int], int] | None:
        q = self.tensor(i).Quantization()
        if q is None or q.ScaleLength() == 0:
            return None
        zps = [int(z) for z in q.ZeroPointAsNumpy()] if q.ZeroPointLength() else [0]
        return [float(s) for s in q.ScaleAsNumpy()], zps, q.QuantizedDimension()

    def buffer(self, i: int) -> np.ndarray | None:
        if i in self.folded:
            return self.folded[i]
        t = self.tensor(i)
        if t.Buffer() <= 0 or t.Buffer() >= self.model.BuffersLength():
            return None
        b = self.model.Buffers(t.Buffer())
        if b.Offset() > 1:  # a large model's buffer, stored after the flatbuffer
            raw = self.data[b.Offset():b.Offset() + b.Size()]
        elif b.DataLength():
            raw = b.DataAsNumpy().tobytes()
        else:
            return None
        dtype = TYPES.get(t.Type())
        if dtype is None:
            raise self.unsupported(f"tensor '{self.tname(i)}' has element type "
                                   f"{TYPE_NAMES.get(t.Type(), t.Type())}")
        return np.frombuffer(raw, dtype=dtype).reshape(self.shape(i)).copy()

    def const(self, array: np.ndarray, base: str) -> str:
        name = self.fresh(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op_type: str, inputs: list[str], outputs: list[str] | None = None,
             **attrs) -> str:
        out = outputs or [self.fresh(f"{self.label}/{op_type}")]
        # every node of an operator is named after it: the importer's diagnostics and
        # the L1 ops' locations (a profile's layer names) say "operator K (NAME)"
        self.nodes.append(helper.make_node(op_type, inputs, out, name=self.label or "output",
                                           **attrs))
        return out[0]

    def value(self, i: int, layout: tuple[int, ...] | None = None,
              select: tuple[int, list[int]] | None = None) -> str:
        """The ONNX name of tensor i's reals (a constant's filter permuted by `layout`;
        `select` = (axis, indices): only those indices of the file's axis, with their
        per-channel scales)."""
        if i in self.names and layout is None and select is None:
            return self.names[i]
        key = (i, layout, None if select is None else (select[0], tuple(select[1])))
        if self.views is not None and key in self.views:  # a loop body's weight, again
            return self.views[key]
        name = self._value(i, layout, select)
        if self.views is not None and self.buffer(i) is not None:
            self.views[key] = name
        return name

    def _value(self, i: int, layout: tuple[int, ...] | None,
               select: tuple[int, list[int]] | None) -> str:
        if i in self.padded:  # read by something other than a convolution: the zeros
            return self.pad(i)
        array = self.buffer(i)
        if array is None:
            raise self.unsupported(f"input tensor '{self.tname(i)}' is neither computed "
                                   "nor a constant")
        q = self.qparams(i)
        axis = q[2] if q else 0
        if select is not None:
            array = np.take(array, select[1], axis=select[0])
            if q is not None and len(q[0]) > 1 and q[2] == select[0]:
                q = ([q[0][k] for k in select[1]], [q[1][k] for k in select[1]], q[2])
        if layout is not None:
            array = array.transpose(layout)
            axis = layout.index(axis)
        if array.dtype == np.float16:
            array = array.astype(np.float32)
        if q is None or array.dtype == np.float32:
            name = self.const(array, self.tname(i))
        else:
            scales, zps, _ = q
            name = self.const(array, self.tname(i))
            s = np.asarray(scales if len(scales) > 1 else scales[0], dtype=np.float32)
            zdt = np.int32 if array.dtype == np.int32 else np.int8
            z = np.asarray(zps if len(scales) > 1 else zps[0], dtype=zdt)
            if array.dtype not in (np.int8, np.int32):
                raise self.unsupported(f"tensor '{self.tname(i)}' is a quantized "
                                       f"{array.dtype}; int8 (and int32 biases) only")
            name = self.node("DequantizeLinear", [name, self.const(s, f"{name}/scale"),
                                                  self.const(z, f"{name}/zero_point")],
                             [self.fresh(f"{self.tname(i)}/dq")], axis=axis)
        if layout is None and select is None:
            self.names[i] = name
        return name

    def define(self, i: int, name: str) -> None:
        """Tensor i is `name`'s reals, quantized as the file says when it is int8."""
        self.names[i] = self.quantized(i, name)

    def quantized(self, i: int, name: str) -> str:
        """`name` through QuantizeLinear / DequantizeLinear with tensor i's (scale, zero
        point) when i is a quantized int8 tensor (float32: `name` itself)."""
        q = self.qparams(i)
        dtype = TYPES.get(self.tensor(i).Type())
        if q is not None and dtype in (np.int8, np.uint8):  # uint8: the int8 u - 128
            scales, zps, _ = q
            if len(scales) != 1:
                raise self.unsupported(f"tensor '{self.tname(i)}' has per-axis scales; "
                                       "run-time tensors take one scale")
            s = self.const(np.float32(scales[0]), f"{self.tname(i)}/scale")
            z = self.const(dtype(zps[0]), f"{self.tname(i)}/zero_point")
            qn = self.node("QuantizeLinear", [name, s, z], [self.fresh(f"{self.tname(i)}/q")])
            return self.node("DequantizeLinear", [qn, s, z], [self.fresh(self.tname(i))])
        if dtype != np.float32:
            kind = TYPE_NAMES.get(self.tensor(i).Type(), "?")
            why = " without quantization parameters" if dtype in (np.int8, np.uint8) else ""
            raise self.unsupported(f"tensor '{self.tname(i)}' is {kind}{why}; float32 "
                                   "and quantized int8 or uint8 only")
        return name

    def pad(self, i: int) -> str:
        """PAD's output i as its input between blocks of zeros (the output's zero point in
        int8, as TFLite pads a quantized tensor), along H then W."""
        src, (top, left, bottom, right) = self.padded.pop(i)
        y = self.value(src)
        n, h, w, ch = self.shape(src)
        for axis, before, after in ((1, top, bottom), (2, left, right)):
            parts = []
            for count in (before, after):
                shape = [n, h + top + bottom if axis == 2 else h, w, ch]
                shape[axis] = count
                parts.append(self.const(np.zeros(shape, np.float32), "pad") if count else None)
            names = [p for p in (parts[0], y, parts[1]) if p is not None]
            if len(names) > 1:  # each concatenation in the output's type
                y = self.quantized(i, self.node("Concat", names, axis=axis))
        self.names[i] = y
        return y

    options = staticmethod(options)

    def unsupported(self, message: str) -> Unsupported:
        return Unsupported(f"{self.label}: {message}" if self.label else message)

    # -- the graph ---------------------------------------------------------------------

    def run(self) -> onnx.ModelProto:
        g = self.graph
        inputs = []
        for i in (int(k) for k in g.InputsAsNumpy()):
            name = self.fresh(self.tname(i))
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                        self.shape(i)))
            q = self.qparams(i)
            if q is not None and len(q[0]) == 1:  # an int8 input's reals: its whole range
                s, z = float(np.float32(q[0][0])), q[1][0]
                lo = 0 if self.tensor(i).Type() == tflite.TensorType.UINT8 else -128
                self.input_ranges[name] = (s * (lo - z), s * (lo + 255 - z))
            self.define(i, name)
        self.run_ops(g)
        self.label = ""
        outputs = []
        for i in (int(k) for k in g.OutputsAsNumpy()):
            if i in self.padded:
                self.pad(i)
            if i not in self.names:
                raise self.unsupported(f"graph output '{self.tname(i)}' is not computed")
            name = self.fresh(self.tname(i) + "/out")
            self.node("Identity", [self.names[i]], [name])
            outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                         self.shape(i)))
        onnx_graph = helper.make_graph(self.nodes, "tflite", inputs, outputs, self.inits)
        opsets = [helper.make_opsetid("", OPSET)]
        domains = sorted({n.domain for n in self.nodes} - {""})  # the importer's own (minun)
        opsets += [helper.make_opsetid(d, 1) for d in domains]
        model = helper.make_model(onnx_graph, opset_imports=opsets,
                                  producer_name="minun tflite frontend")
        model.ir_version = 8
        return model

    def run_ops(self, g: tflite.SubGraph, where: str = "") -> None:
        """Convert subgraph g's operators in order (`where`: the enclosing operator, for
        a loop body's labels); integer bookkeeping on constants (a loop's counters and
        its condition) is computed here (FOLD)."""
        for k in range(g.OperatorsLength()):
            op = g.Operators(k)
            kind = op_name(self.model, op)
            self.label = f"{where}operator {k} ({kind})"
            ins = [int(x) for x in op.InputsAsNumpy()] if op.InputsLength() else []
            outs = [int(x) for x in op.OutputsAsNumpy()] if op.OutputsLength() else []
            if kind in (*FOLD, "RESHAPE", "CONCATENATION") and len(outs) == 1:
                value = self.fold(kind, op, ins, outs[0])
                if value is not None:
                    self.folded[outs[0]] = value
                    continue
            handler = self.handlers.get(kind)
            if handler is None and kind in CONTROL_FLOW:
                raise self.unsupported(
                    "control flow (subgraphs) is not supported; TensorFlow converts a "
                    "Keras 3 recurrent layer (or a Keras 2 one with an activation other "
                    "than tanh) to a WHILE loop: convert it from tf_keras with a fixed "
                    "batch for UNIDIRECTIONAL_SEQUENCE_LSTM")
            if handler is None:
                raise self.unsupported("not supported by the TFLite frontend (supported: "
                                       f"{', '.join(self.handlers)})")
            handler(self, op, ins, outs)

    def fold(self, kind: str, op, ins: list[int], out: int) -> np.ndarray | None:
        """The value of an integer or boolean operator on constants (None: not one)."""
        args = [self.buffer(i) for i in ins]
        if kind == "RESHAPE":
            args = args[:1]
        if not args or not all(a is not None and a.dtype.kind in "iub" and
                               self.qparams(i) is None for a, i in zip(args, ins)):
            return None
        dtype = TYPES.get(self.tensor(out).Type(), np.int32)
        if kind == "RESHAPE":
            shape = self.shape(out)
            return args[0].reshape(shape).astype(dtype) if -1 not in shape else None
        if kind == "CONCATENATION":
            axis = self.options(op, tflite.ConcatenationOptions).Axis()
            return np.concatenate([np.atleast_1d(a) for a in args], axis=axis).astype(dtype)
        return np.asarray(FOLD[kind](*args)).astype(dtype)

    def activation(self, name: str, fused: int, out: int) -> str:
        """A fused activation after `name`, output tensor `out`. TFLite's int8 kernels
        clamp the requantized integers to the activation's range on the output's grid, so
        the activation reads `name` already quantized as the output."""
        if fused != ACT.NONE:
            name = self.quantized(out, name)
        if fused == ACT.NONE:
            return name
        if fused == ACT.RELU:
            return self.node("Relu", [name])
        if fused in (ACT.RELU6, ACT.RELU_N1_TO_1):
            lo, hi = (0.0, 6.0) if fused == ACT.RELU6 else (-1.0, 1.0)
            return self.node("Clip", [name, self.const(np.float32(lo), "lo"),
                                      self.const(np.float32(hi), "hi")])
        if fused == ACT.TANH:
            return self.node("Tanh", [name])
        raise self.unsupported(f"fused activation {ACT_NAMES.get(fused, fused)} is not "
                               "supported")
