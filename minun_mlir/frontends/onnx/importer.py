"""ONNX -> L1 (minun dialect): the graph walk, value layouts, constants and diagnostics.

The op handlers (elementwise.py, linear.py, convpool.py, shape.py, recurrent.py) only see
`Value`s and the helpers here, so the layout bookkeeping lives in one place:

* ONNX is NCHW, the L1 convolution/pooling ops are NHWC. Instead of transposing around
  every conv, each run-time value records `perm`, the permutation of its ONNX dimensions
  that the IR value holds (`ir = onnx_value.transpose(perm)`). Element-wise ops keep the
  layout, ONNX Transpose only changes `perm` (no op), Reshape/Flatten use
  `minun.reshape`'s `order` to read elements in ONNX order, and a `minun.transpose` is
  emitted only where an op needs a specific layout. Graph outputs are returned in ONNX
  layout, so results are exactly the ONNX values.
* Values known at import time (initializers, Constant nodes, anything computed only from
  them, and shapes, which are static) stay numpy arrays; they are folded with ONNX's own
  reference implementation, so folding has exact ONNX semantics for every operator. They
  become `minun.param` (or `minun.constant` for one element) only where a run-time op
  uses them, in the layout that op needs, so filters are permuted at import, not at run
  time.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f64,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from minun_mlir.diagnostics import MinunError, warn
from minun_mlir.dialects import minun
from minun_mlir.formats.zero_skew.representation import QUANTIZATION
from minun_mlir.limits import params_size_problem, tensor_size_problem
from minun_mlir.modules import mark_regression

from .fuse import FUSED_DOMAIN

# Opsets we read. Handlers branch on each operator's `since_version` at the model's
# opset, so later opsets work as long as the operators we use did not change meaning
# (the onnx package's schemas tell us when they did).
MIN_OPSET = 7
DEFAULT_INPUT_RANGE = (-1.0, 1.0)

# Operators whose outputs depend on a random generator are never folded.
# handled even on initializers (frontends/onnx/quantized.py): folded, the float weights
# would lose the scale and zero point the zero-skew representation keeps; Loop and Scan
# are unrolled by frontends/onnx/loop.py, whose body nodes fold one by one (onnx's
# reference Loop runs no iteration when the optional condition is absent)
NOT_FOLDED = {"QuantizeLinear", "DequantizeLinear", "Loop", "Scan"}
NONDETERMINISTIC = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                    "Multinomial", "Bernoulli"}

Perm = tuple[int, ...]

# counts that are at least 1 in every operator that has them (a 0 divided by zero in a
# handler); the per-axis ones (strides, pads, ...) are checked in convpool.py
POSITIVE_ATTRIBUTES = {"group", "hidden_size", "num_outputs", "blocksize", "size"}


def identity(rank: int) -> Perm:
    return tuple(range(rank))


def inverse(perm: Sequence[int]) -> Perm:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < max(rank, 1):
        raise MinunError(f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


_NAME_BAD = re.compile(r"[^\w$.-]")


def ssa_name(name: str) -> str | None:
    """An xDSL-valid SSA name hint from an ONNX name (so the IR reads like the model)."""
    name = _NAME_BAD.sub("_", name)
    if not name:
        return None
    return name if not name[0].isdigit() else "v" + name


CLASS_LABELS = "minun.class_labels"  # the func attribute naming a classifier's labels
# on the func of a pre-quantized model: quantize{repr=zero-skew} requantizes its int32
# accumulators as onnxruntime does (float32, half to even), not as TFLite
REQUANTIZE = "minun.requantize"
# Domains whose operators have no ONNX schema: the importer's own fused nodes (fuse.py)
# and onnxruntime's contrib operators (quantized.py); their handlers check their inputs.
SCHEMALESS_DOMAINS = (FUSED_DOMAIN, "com.microsoft")
# the ai.onnx.ml operators whose output is a predicted value (no label: minun.regression)
REGRESSORS = ("LinearRegressor", "TreeEnsembleRegressor", "SVMRegressor", "TreeEnsemble")
# the handler table's entry for an int8 graph input (quantized.py's int8_input): its
# reals and quantization, found from the nodes that dequantize it
INT8_INPUT = "<int8 graph input>"
# on the func of a model whose one input / one output is uint8 (ONNX UINT8, TFLite's
# uint8 tensors): the C's minun_predict_uint8 takes / gives those bytes as they are
# (lowering/c_abi.py), beside minun_predict's int8 u - 128
UINT8_IO = ("minun.input_uint8", "minun.output_uint8")


def mark_uint8_io(main: func.FuncOp, inputs: list[bool], outputs: list[bool]) -> None:
    """Mark main's single input / single output as uint8 (UINT8_IO) where it is."""
    for attr, flags in zip(UINT8_IO, (inputs, outputs), strict=True):
        if flags == [True]:
            main.attributes[attr] = UnitAttr()
# float attributes where NaN is a value, not a damaged file: the missing-value marker
NAN_MARKERS = {("Imputer", "replaced_value_float")}
PASS_THROUGH = ("Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Cast")


@dataclass(eq=False)
class Value:
    """One ONNX tensor during import.

    Either `array` is set (known at import time, in ONNX layout) or `ssa` is (a run-time
    IR value holding the ONNX value transposed by `perm`). `shape` is always the ONNX
    shape. An `i32` ssa (ArgMax) has `perm` None.
    """

    shape: tuple[int, ...]
    array: np.ndarray | None = None
    ssa: SSAValue | None = None
    perm: Perm | None = None
    name: str = ""
    cache: dict[Perm, SSAValue] = field(default_factory=dict)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_const(self) -> bool:
        return self.array is not None

    @property
    def is_int(self) -> bool:
        return self.ssa is not None and not isinstance(self.ssa.type, TensorType)

    @staticmethod
    def const(array: Any, name: str = "") -> Value:
        array = np.asarray(array)
        return Value(tuple(array.shape), array=array, name=name)

    @staticmethod
    def of(ssa: SSAValue, perm: Perm | None = None, name: str = "") -> Value:
        """Wrap an IR tensor whose dimensions are the ONNX ones permuted by `perm`."""
        ty = ssa.type
        assert isinstance(ty, TensorType)
        ir_shape = tuple(ty.get_shape())
        perm = identity(len(ir_shape)) if perm is None else tuple(perm)
        shape = [0] * len(ir_shape)
        for i, p in enumerate(perm):
            shape[p] = ir_shape[i]
        return Value(tuple(shape), ssa=ssa, perm=perm, name=name)


@dataclass
class Node:
    """A node being imported: its proto, inputs (None for absent optional ones), its
    attributes as Python values, and the operator version in force at the model's opset.
    """

    proto: onnx.NodeProto
    inputs: list[Value | None]
    attrs: dict[str, Any]
    version: int

    @property
    def op_type(self) -> str:
        return self.proto.op_type

    def input(self, i: int) -> Value | None:
        return self.inputs[i] if i < len(self.inputs) else None

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)


Handler = Callable[["Importer", Node], Sequence[Value | None]]


def node_label(node: onnx.NodeProto) -> str:
    name = node.name or next((o for o in node.output if o), "?")
    return f"node '{name}' ({node.op_type})"


def _attr_value(attr: onnx.AttributeProto) -> Any:
    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode() for v in value]
    return value


class Importer:
    """Walks one ONNX graph and builds `func.func @main` in the minun dialect."""

    def __init__(self, model: onnx.ModelProto, handlers: dict[str, Handler],
                 dims: dict[str, int] | None = None,
                 input_ranges: dict[str, tuple[float, float]] | None = None,
                 outputs: Sequence[str] | None = None, requantize: str | None = "onnxruntime"):
        self.model = model
        # the int32 -> int8 rounding of a pre-quantized model (onnxruntime's; None: TFLite's,
        # quantize's default, for the TFLite frontend's models)
        self.requantize = requantize
        self.outputs = None if outputs is None else list(outputs)
        self.graph = model.graph
        self.handlers = handlers
        self.dims = dict(dims or {})
        self.input_ranges = dict(input_ranges or {})
        self.opsets = {(d.domain or ""): d.version for d in model.opset_import}
        if "ai.onnx" in self.opsets:
            self.opsets[""] = self.opsets.pop("ai.onnx")
        self.opset = self.opsets.get("", 0)
        self.values: dict[str, Value] = {}
        self.node: onnx.NodeProto | None = None
        self.func_block = Block()
        self.block = self.func_block
        self.leaves: list[Operation] = []
        self.param_names: set[str] = set()
        self.index_cache: dict[int, SSAValue] = {}
        self.scalars: dict[tuple, SSAValue] = {}
        # initializers dequantized by the model: name -> (scale, zero point), recorded on
        # their minun.param (frontends/onnx/quantized.py)
        self.quantized: dict[str, tuple[float | list[float], int]] = {}
        # a classifier's class labels (ai.onnx.ml classlabels_strings, or integers other
        # than 0..n-1): the program returns the class index, the labels go on @main as
        # minun.class_labels (model.h)
        self.class_labels: list[str] | list[int] | None = None
        self.prequantized = False  # the model has QDQ pairs or QLinear operators
        self.inferred: dict[str, tuple[int, ...]] = {}  # ONNX shape inference's shapes
        self.used = {n for node in self.graph.node
                     for n in (*node.input, *subgraph_reads(node)) if n}
        self.used |= {o.name for o in self.graph.output}

    # -- diagnostics -------------------------------------------------------------------

    def error(self, message: str) -> MinunError:
        """A user error, prefixed with the node being imported."""
        if self.node is None:
            return MinunError(message)
        return MinunError(f"{node_label(self.node)}: {message}")

    def record_class_labels(self, labels: Sequence[str] | Sequence[int]) -> None:
        """The labels of class indices 0..n-1: strings, or integers (int32) other than
        0..n-1 themselves (which need no table); every classifier of the graph must
        agree."""
        if all(isinstance(x, (int, np.integer)) for x in labels):
            labels = [int(x) for x in labels]
            if self.class_labels is None and labels == list(range(len(labels))):
                return  # the index is the label
            wide = [x for x in labels if not -(1 << 31) <= x < (1 << 31)]
            if wide:
                raise self.error(f"class label {wide[0]} does not fit 32 bits (model.h "
                                 f"stores integer labels as int32_t)")
        else:
            labels = [str(x) for x in labels]
        if self.class_labels is not None and self.class_labels != labels:
            raise self.error(f"class labels {labels} differ from {self.class_labels}, given "
                             f"earlier in the graph")
        self.class_labels = labels

    # -- building ----------------------------------------------------------------------

    def emit(self, op: Operation, name: str | None = None) -> SSAValue:
        self.block.add_op(op)
        if self.node is not None:  # the node it came from (a per-layer profile's name)
            op.location = NameLoc(StringAttr(self.node.name or next(
                (o for o in self.node.output if o), "?")), NoneAttr())
        if op.results and name:
            op.results[0].name_hint = ssa_name(name)
        return op.results[0] if op.results else None

    def make(self, cls: type, *operands: SSAValue, **attrs: Any) -> SSAValue:
        """Emit an op whose result type the dialect infers (`_InferredOp.make`)."""
        return self.emit(cls.make(*operands, **attrs))

    def leaf(self, op: Operation, name: str | None = None) -> SSAValue:
        """Operand-free ops (inputs, params, constants) go to the top of `main`, so they
        dominate every use, including uses inside loop bodies.
        """
        self.leaves.append(op)
        if name:
            op.results[0].name_hint = ssa_name(name)
        return op.results[0]

    def index(self, i: int) -> SSAValue:
        if i not in self.index_cache:
            self.index_cache[i] = self.leaf(arith.ConstantOp(IntegerAttr(i, i32)), f"c{i}")
        return self.index_cache[i]

    def loop(self, steps: int, inits: Sequence[SSAValue],
             body: Callable[[SSAValue, list[SSAValue]], Sequence[SSAValue]],
             names: Sequence[str] = ()) -> list[SSAValue]:
        """`minun.loop` over t = 0 .. steps-1 carrying `inits`; `body(t, carried)` emits
        the step's ops (into the loop body) and returns the new carried values.
        """
        types = [v.type for v in inits]
        block = Block(arg_types=[i32, *types])
        block.args[0].name_hint = "t"
        for arg, name in zip(block.args[1:], names):
            arg.name_hint = name
        saved, self.block = self.block, block
        try:
            outs = body(block.args[0], list(block.args[1:]))
        finally:
            self.block = saved
        block.add_op(minun.YieldOp(*outs))
        op = minun.LoopOp.create(
            operands=list(inits),
            attributes={"lower": IntegerAttr(0, i64), "upper": IntegerAttr(steps, i64)},
            result_types=types, regions=[Region(block)])
        self.emit(op)
        return list(op.results)

    def materialize(self, array: np.ndarray, name: str) -> SSAValue:
        """A float array as a leaf: one element -> minun.constant, else minun.param with
        its observed range (a unique symbol derived from the ONNX name).
        """
        if array.dtype.kind not in "f":
            kind = "boolean" if array.dtype.kind == "b" else "integer"
            raise self.error(
                f"{kind} tensor '{name}' is used as run-time data; the L1 dialect computes "
                f"in float32")
        if array.size == 0:
            raise self.error(f"tensor '{name}' is empty; zero-size tensors are not supported")
        array = array.astype(np.float32)
        if array.size == 1:
            key = (array.shape, array.tobytes())
            if key not in self.scalars:
                self.scalars[key] = self.leaf(minun.ConstantOp(array), "cst")
            return self.scalars[key]
        base = name or "const"
        sym, k = base, 1
        while sym in self.param_names:
            sym, k = f"{base}_{k}", k + 1
        self.param_names.add(sym)
        lo, hi = float(np.nanmin(array)), float(np.nanmax(array))
        param = minun.ParamOp(sym, array, lo, hi)
        if name in self.quantized:
            scale, zp = self.quantized[name]  # a list of scales: per channel
            scales = scale if isinstance(scale, list) else [scale]
            param.attributes[QUANTIZATION] = DenseArrayBase.from_list(
                f64, [*scales, float(zp)])
        return self.leaf(param, sym)

    # -- values in a layout ------------------------------------------------------------

    def ir(self, v: Value, perm: Sequence[int] | None = None) -> SSAValue:
        """The IR value of `v` with its ONNX dimensions in order `perm` (default: the
        layout it already has; identity for constants). Emits at most one transpose.
        """
        if v.is_int:
            raise self.error("an integer (ArgMax) result can only be a graph output")
        if perm is None:
            perm = v.perm if v.ssa is not None else identity(v.rank)
        perm = tuple(perm)
        if perm in v.cache:
            return v.cache[perm]
        if v.array is not None:
            result = self.materialize(v.array.transpose(perm), v.name)
        else:
            assert v.ssa is not None and v.perm is not None
            if perm == v.perm:
                return v.ssa
            q_inv = inverse(v.perm)
            t = tuple(q_inv[p] for p in perm)
            result = self.make(minun.TransposeOp, v.ssa, perm=minun.i64_array(t))
        if v.array is not None or self.block is self.func_block:
            v.cache[perm] = result  # never reuse a value defined inside a loop body
        return result

    def const(self, v: Value | None, what: str) -> np.ndarray:
        """The import-time value of an input that must be static (shapes, axes, bounds)."""
        if v is None:
            raise self.error(f"{what} is missing")
        if v.array is None:
            raise self.error(
                f"{what} must be a constant (an initializer or computable from them), "
                f"but it is computed at run time")
        return v.array

    # -- value-level operations (fold constants, track layouts) --------------------------

    def transpose(self, v: Value, perm: Sequence[int]) -> Value:
        """ONNX Transpose: free, it only changes which layout the IR value is read in."""
        perm = tuple(perm)
        if v.array is not None:
            return Value.const(v.array.transpose(perm), v.name)
        assert v.perm is not None and v.ssa is not None
        p_inv = inverse(perm)
        new_perm = tuple(p_inv[q] for q in v.perm)
        return Value.of(v.ssa, new_perm, v.name)

    def reshape(self, v: Value, shape: Sequence[int]) -> Value:
        """Reshape in ONNX (row-major, ONNX layout) element order."""
        shape = tuple(int(d) for d in shape)
        if shape == v.shape:
            return v
        if v.is_int:  # a label (ArgMax): one index, any shape of one element
            return Value(shape, ssa=v.ssa)
        if v.array is not None:
            return Value.const(v.array.reshape(shape), v.name)
        assert v.perm is not None and v.ssa is not None
        # `order` reads the IR value in ONNX element order, whatever its layout.
        result = self.emit(minun.ReshapeOp(v.ssa, shape, inverse(v.perm)))
        return Value.of(result, None, v.name)

    def expand_rank(self, v: Value, rank: int) -> Value:
        """Prepend size-1 dims (numpy broadcasting alignment), keeping v's layout."""
        d = rank - v.rank
        if d <= 0:
            return v
        if v.array is not None:
            return Value.const(v.array.reshape((1,) * d + v.shape), v.name)
        assert v.perm is not None and v.ssa is not None
        ty = v.ssa.type
        assert isinstance(ty, TensorType)
        result = self.emit(minun.ReshapeOp(v.ssa, (1,) * d + tuple(ty.get_shape())))
        return Value.of(result, identity(d) + tuple(p + d for p in v.perm), v.name)

    def slice(self, v: Value, axis: int, start: int, size: int) -> Value:
        """v[..., start:start+size, ...] along one ONNX axis (a splice in v's layout)."""
        if v.array is not None:
            index = [slice(None)] * v.rank
            index[axis] = slice(start, start + size)
            return Value.const(v.array[tuple(index)], v.name)
        assert v.perm is not None and v.ssa is not None
        ir_axis = v.perm.index(axis)
        ty = v.ssa.type
        assert isinstance(ty, TensorType)
        sizes = list(ty.get_shape())
        sizes[ir_axis] = size
        starts = [self.index(start if i == ir_axis else 0) for i in range(len(sizes))]
        result = self.emit(minun.SpliceOp(v.ssa, starts, sizes))
        return Value.of(result, v.perm, v.name)

    def concat(self, values: Sequence[Value], axis: int) -> Value:
        if all(v.array is not None for v in values):
            return Value.const(np.concatenate([v.array for v in values], axis=axis))
        ref = next(v for v in values if v.array is None)
        perm = ref.perm
        assert perm is not None
        operands = [self.ir(v, perm) for v in values]
        if len(operands) == 1:
            return Value.of(operands[0], perm)
        result = self.emit(minun.ConcatOp.create(
            operands=operands, attributes={"axis": IntegerAttr(perm.index(axis), i64)},
            result_types=[_concat_type(operands, perm.index(axis))]))
        return Value.of(result, perm)

    def unary(self, cls: type, v: Value, **attrs: Any) -> Value:
        """An element-wise op: keeps the layout."""
        return Value.of(self.make(cls, self.ir(v), **attrs), self._perm_of(v))

    def binary(self, cls: type, a: Value, b: Value, bias: type | None = None) -> Value:
        """An element-wise binary op with ONNX (numpy) broadcasting, in the layout of the
        run-time operand; constant operands are permuted at import time. A constant
        one-element operand stays a rank-0 constant (scalar broadcast, any layout). With
        `bias`, a constant rhs that varies only along the IR's last axis becomes a 1-D
        parameter of that op (`minun.bias_add`: a conv bias lands on the NHWC channels).
        """
        try:
            shape = tuple(np.broadcast_shapes(a.shape, b.shape))
        except ValueError:
            raise self.error(f"shapes {minun.shape_str(a.shape)} and "
                             f"{minun.shape_str(b.shape)} do not broadcast") from None
        rank = len(shape)
        runtime = [v for v in (a, b) if v.array is None]
        ref_src = next((v for v in runtime if v.rank == rank), runtime[0])
        ref = self.expand_rank(ref_src, rank)
        perm = ref.perm
        assert perm is not None
        if bias is not None and b.array is not None and ref_src is a and b.array.size > 1:
            const = b.array.reshape((1,) * (rank - b.rank) + b.shape).transpose(perm)
            if const.shape[:-1] == (1,) * (rank - 1) and const.shape[-1] == shape[perm[-1]]:
                vec = self.materialize(const.reshape(-1), b.name)
                return Value.of(self.make(bias, self.ir(ref, perm), vec), perm)
        operands = []
        for v in (a, b):
            if v is ref_src:
                operands.append(self.ir(ref, perm))
            elif v.array is not None and v.array.size == 1:
                operands.append(self.materialize(v.array.reshape(()), v.name))
            else:
                operands.append(self.ir(self.expand_rank(v, rank), perm))
        return Value.of(self.make(cls, *operands), perm)

    def _perm_of(self, v: Value) -> Perm:
        return v.perm if v.ssa is not None and v.perm is not None else identity(v.rank)

    # -- the walk ----------------------------------------------------------------------

    def check_graph(self) -> None:
        """What the ONNX spec requires of a graph and onnx.checker does not always catch:
        a known opset, unique initializers, and one writer per tensor."""
        default = any(n.domain in ("", "ai.onnx") for n in self.graph.node)
        if self.opset < MIN_OPSET and (default or "" in self.opsets):
            raise MinunError(
                f"the model imports ONNX opset {self.opset or 'none'}; opsets {MIN_OPSET} and "
                f"later are supported (convert it with onnx.version_converter)")
        newest = onnx.defs.onnx_opset_version()
        if self.opset > newest:
            raise MinunError(f"the model imports ONNX opset {self.opset}, newer than the "
                             f"newest this onnx package knows ({newest})")
        if self.graph.sparse_initializer:
            raise MinunError(f"sparse initializers are not supported (the model has "
                             f"{len(self.graph.sparse_initializer)}: "
                             f"'{self.graph.sparse_initializer[0].values.name}', ...); store "
                             "them dense")
        writers: dict[str, str] = {}
        for t in self.graph.initializer:
            if t.name in writers:
                raise MinunError(f"initializer '{t.name}' is defined twice")
            writers[t.name] = "an initializer"
        for inp in self.graph.input:
            writers.setdefault(inp.name, "a graph input")
        for proto in self.graph.node:
            for name in proto.output:
                if name and name in writers:
                    raise MinunError(f"{node_label(proto)}: output '{name}' is already "
                                     f"written by {writers[name]}; a tensor has one writer")
                if name:
                    writers[name] = node_label(proto)

    def run(self) -> ModuleOp:
        self.check_graph()
        initializers = {t.name for t in self.graph.initializer}
        for t in self.graph.initializer:
            self.values[t.name] = Value.const(_to_numpy(t), t.name)
        self._check_dims()
        self._default_dims(initializers)
        for inp in self.graph.input:
            if inp.name not in initializers:
                self.values[inp.name] = self._input(inp)
        inferred = self.inferred = self._inferred_shapes()
        outs = list(self.graph.output)
        nodes = list(self.graph.node)
        if self.outputs is not None:
            by_name = {o.name: o for o in outs}
            unknown = [n for n in self.outputs if n not in by_name]
            if unknown or not self.outputs:
                raise MinunError(f"outputs {self.outputs}: the graph outputs are "
                                 f"{', '.join(by_name) or 'none'}")
            outs = [by_name[n] for n in self.outputs]
            nodes = self._needed(nodes, self.outputs)
            self.used = {n for node in nodes for n in (*node.input, *subgraph_reads(node))
                         if n} | set(self.outputs)
        for proto in nodes:
            self.node = proto
            self._import_node(proto)
            for name in proto.output:
                v = self.values.get(name)
                if v is not None and name in inferred and inferred[name] != v.shape:
                    raise self.error(
                        f"output '{name}' has shape {minun.shape_str(v.shape)} here but ONNX "
                        f"shape inference gives {minun.shape_str(inferred[name])}")
        self.node = None
        results = [self._output(out) for out in outs]
        self.func_block.add_op(func.ReturnOp(*results))
        for op in reversed(self.leaves):
            if self.func_block.first_op is None:
                self.func_block.add_op(op)
            else:
                self.func_block.insert_op_before(op, self.func_block.first_op)
        main = func.FuncOp("main", ([], [r.type for r in results]), Region(self.func_block))
        if self.prequantized and self.requantize is not None:
            main.attributes[REQUANTIZE] = StringAttr(self.requantize)
        if self.class_labels is not None:
            main.attributes[CLASS_LABELS] = ArrayAttr([
                IntegerAttr(x, i32) if isinstance(x, int) else StringAttr(x)
                for x in self.class_labels])
        if all(self._regressor_output(o.name, nodes) for o in outs):
            mark_regression(main)
        inputs = [i for i in self.graph.input if i.name not in initializers]
        mark_uint8_io(main, [i.type.tensor_type.elem_type == onnx.TensorProto.UINT8
                             for i in inputs],
                      [o.type.tensor_type.elem_type == onnx.TensorProto.UINT8 for o in outs])
        module = ModuleOp([main])
        try:
            module.verify()
        except VerifyException as e:  # a bug of ours: say so, with the IR message
            raise MinunError(f"internal error: the imported IR does not verify: {e}") from None
        return module

    @staticmethod
    def _regressor_output(name: str, nodes: list[onnx.NodeProto]) -> bool:
        """Whether the graph output `name` is a regressor's value (through nodes that only
        reshape or copy it)."""
        writer = {o: n for n in nodes for o in n.output}
        node = writer.get(name)
        while node is not None and node.op_type in PASS_THROUGH and not node.domain:
            node = writer.get(node.input[0])
        return node is not None and node.domain == "ai.onnx.ml" and node.op_type in REGRESSORS

    @staticmethod
    def _needed(nodes: list[onnx.NodeProto], outputs: Sequence[str]) -> list[onnx.NodeProto]:
        """The nodes the chosen outputs depend on, in graph order (the others are not
        imported, so an unsupported operator feeding only other outputs is no error)."""
        wanted, kept = set(outputs), []
        for node in reversed(nodes):
            if wanted & set(node.output):
                kept.append(node)
                wanted |= {n for n in node.input if n} | subgraph_reads(node)
        return kept[::-1]

    def _default_dims(self, initializers: set[str]) -> None:
        """Every symbolic (or unknown) input dimension that `dims` does not fix compiles
        as 1, with a one-line warning naming the input, the dimension and the override
        (the leading one of an input with two or more axes is called the batch). A
        dimension name shared by several inputs or axes is warned about once."""
        for inp in self.graph.input:
            if inp.name in initializers or not inp.type.tensor_type.HasField("shape"):
                continue
            dims = inp.type.tensor_type.shape.dim
            for k, d in enumerate(dims):
                if d.HasField("dim_value"):  # a size (0 or negative is refused in _input)
                    continue
                key = d.dim_param or f"{inp.name}:{k}"
                if key in self.dims:
                    continue
                self.dims[key] = 1
                what = f"symbolic ('{d.dim_param}')" if d.dim_param else "unknown"
                if k == 0 and len(dims) >= 2:
                    warn(f"graph input '{inp.name}': dimension 0 is {what}; compiled for a "
                         f"batch of 1 (choose with `--dim {key}=<size>`)")
                else:
                    warn(f"graph input '{inp.name}': dimension {k} is {what}; compiled as 1 "
                         f"(choose with `--dim {key}=<size>`)")

    def _check_dims(self) -> None:
        symbolic = {d.dim_param for i in self.graph.input
                    for d in i.type.tensor_type.shape.dim if d.dim_param}
        unnamed = {f"{i.name}:{k}" for i in self.graph.input
                   for k, d in enumerate(i.type.tensor_type.shape.dim)
                   if not d.dim_param and not d.HasField("dim_value")}
        for key, n in self.dims.items():
            if key not in symbolic and key not in unnamed:
                shown = ", ".join(sorted(symbolic | unnamed)) or "none"
                raise MinunError(f"--dim {key}={n}: the model has no symbolic input dimension "
                                 f"'{key}' (symbolic dimensions: {shown})")
            if not isinstance(n, int) or n < 1:
                raise MinunError(f"--dim {key}={n}: a dimension must be a positive integer")

    def _inferred_shapes(self) -> dict[str, tuple[int, ...]]:
        """Static shapes from ONNX shape inference (inputs fixed with `dims`), checked
        against the shapes the importer computes, node by node: a disagreement is either a
        malformed model or an importer bug, and is reported at the node where it appears.
        """
        model = onnx.ModelProto()
        model.CopyFrom(self.model)
        for inp in model.graph.input:
            for k, d in enumerate(inp.type.tensor_type.shape.dim):
                key = d.dim_param or f"{inp.name}:{k}"
                if not d.HasField("dim_value") and key in self.dims:
                    d.dim_value = self.dims[key]
        del model.graph.value_info[:]
        try:
            model = onnx.shape_inference.infer_shapes(model, data_prop=True)
        except Exception:  # inference is a cross-check only; the walk reports real errors
            return {}
        shapes = {}
        for vi in model.graph.value_info:
            tt = vi.type.tensor_type
            if vi.type.HasField("tensor_type") and tt.HasField("shape") and all(
                    d.HasField("dim_value") for d in tt.shape.dim):
                shapes[vi.name] = tuple(d.dim_value for d in tt.shape.dim)
        return shapes

    def _input(self, inp: onnx.ValueInfoProto) -> Value:
        tt = inp.type.tensor_type
        if not inp.type.HasField("tensor_type"):
            raise MinunError(f"graph input '{inp.name}' is not a tensor; only tensor inputs "
                             f"are supported")
        quantized = None
        if tt.elem_type in (onnx.TensorProto.INT8, onnx.TensorProto.UINT8) and \
                INT8_INPUT in self.handlers:
            # its reals, with the model's quantization (quantized.py; uint8: the int8 q - 128)
            quantized = self.handlers[INT8_INPUT](self, inp.name)
        elif tt.elem_type != onnx.TensorProto.FLOAT:
            dtype = (onnx.TensorProto.DataType.Name(tt.elem_type)
                     if tt.elem_type in onnx.TensorProto.DataType.values()
                     else f"element type {tt.elem_type} (not an ONNX type)")
            raise MinunError(
                f"graph input '{inp.name}' has element type {dtype}; the L1 dialect computes "
                f"in float32 (only FLOAT inputs, and INT8 or UINT8 ones a model dequantizes, "
                f"are supported)")
        if not tt.HasField("shape"):
            raise MinunError(f"graph input '{inp.name}' has no declared shape; the importer "
                             f"needs static shapes")
        shape = []
        for k, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value") and d.dim_value > 0:
                shape.append(d.dim_value)
                continue
            if d.HasField("dim_value"):
                raise MinunError(f"graph input '{inp.name}': dimension {k} has size "
                                 f"{d.dim_value}; sizes must be positive")
            key = d.dim_param or f"{inp.name}:{k}"
            shape.append(self.dims[key])
        why = tensor_size_problem(shape, f"graph input '{inp.name}'")
        if why:
            raise MinunError(why)
        lo, hi = self.input_ranges.get(inp.name, DEFAULT_INPUT_RANGE)
        if quantized is not None:
            lo, hi = quantized[1]
        ssa = self.leaf(minun.InputOp(inp.name, shape, lo, hi), inp.name)
        if quantized is not None:
            ssa.owner.attributes[QUANTIZATION] = quantized[0]
        return Value.of(ssa, None, inp.name)

    def _output(self, out: onnx.ValueInfoProto) -> SSAValue:
        v = self.values.get(out.name)
        if v is None:
            raise MinunError(f"graph output '{out.name}' is not produced by any node")
        if v.is_int:
            return v.ssa
        declared = out.type.tensor_type.shape
        if out.type.tensor_type.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else None for d in declared.dim]
            fitted = _fit_declared(dims, v.shape)
            if fitted is not None and fitted != v.shape:  # CatBoost's [N] for a [N, 1]
                v = self.reshape(v, fitted)
            elif fitted is None:
                raise MinunError(
                    f"graph output '{out.name}': the model declares shape "
                    f"{'x'.join('?' if d is None else str(d) for d in dims) or 'scalar'}, the "
                    f"importer computed {minun.shape_str(v.shape)}")
        if v.array is not None and v.array.dtype.kind in "iu":
            # A static integer result (e.g. a Shape): L1 tensors are f32, which holds
            # these integers exactly.
            exact = v.array.astype(np.float32)
            if not np.array_equal(exact.astype(v.array.dtype), v.array):
                raise MinunError(f"graph output '{out.name}' is a constant integer tensor "
                                 f"that float32 cannot represent exactly")
            v = Value.const(exact, out.name)
        return self.ir(v, identity(v.rank))

    def _import_node(self, proto: onnx.NodeProto) -> None:
        domain = proto.domain if proto.domain != "ai.onnx" else ""
        inputs: list[Value | None] = []
        for name in proto.input:
            if not name:
                inputs.append(None)
            elif name in self.values:
                inputs.append(self.values[name])
            else:
                raise self.error(f"input '{name}' is not produced by an earlier node (the "
                                 f"graph is not topologically sorted, or it is corrupt)")
        present = [v for v in inputs if v is not None]
        # values an If/Loop/Scan body reads from this scope by name count as its inputs
        present += [self.values[n] for n in sorted(subgraph_reads(proto)) if n in self.values]
        if proto.op_type in ("Shape", "Size") and domain == "" and present:
            outputs = self._static_shape(proto, present[0])
        elif (all(v.array is not None for v in present) and
              proto.op_type not in NONDETERMINISTIC and proto.op_type not in NOT_FOLDED):
            for name in proto.output:  # refused before the reference evaluator allocates
                shape = self.inferred.get(name)
                why = shape and params_size_problem(math.prod(shape), f"the constant "
                                                    f"'{name}' of shape {minun.shape_str(shape)}")
                if why:
                    raise self.error(why)
            outputs = self._fold(proto, inputs)
        else:
            key = proto.op_type if domain == "" else f"{domain}:{proto.op_type}"
            handler = self.handlers.get(key)
            if handler is None:
                raise self.error(self._unsupported(domain))
            if domain not in self.opsets:
                raise self.error(f"the model does not import the domain '{domain}' it uses")
            try:  # fuse.py's nodes and onnxruntime's contrib operators have no ONNX schema
                schema = None if domain in SCHEMALESS_DOMAINS else onnx.defs.get_schema(
                    proto.op_type, self.opsets[domain], domain)
            except onnx.defs.SchemaError:  # the operator came after the model's opset
                first = min((s.since_version for s in onnx.defs.get_all_schemas_with_history()
                             if s.name == proto.op_type and s.domain == domain), default=None)
                raise self.error(f"{proto.op_type} is not in opset {self.opsets[domain]} of "
                                 f"domain '{domain or 'ai.onnx'}'" + (
                                     f"; it was introduced in opset {first}" if first else
                                     "")) from None
            if schema is not None:  # a contrib operator's handler checks its inputs
                self._check_schema(proto, schema)
            attrs = {a.name: _attr_value(a) for a in proto.attribute}
            version = schema.since_version if schema is not None else self.opsets[domain]
            node = Node(proto, inputs, attrs, version)
            try:
                outputs = list(handler(self, node))
            except VerifyException as e:
                raise self.error(str(e)) from None
            except MinunError as e:
                if str(e).startswith("node '"):
                    raise
                raise self.error(str(e)) from None
            except Exception as e:  # a bug of ours: still one line, cause kept for the API
                raise self.error(f"internal error of the ONNX importer ({type(e).__name__}: "
                                 f"{e}); please report it with the model") from e
        for name, value in zip(proto.output, outputs):
            if not name:
                continue
            if value is None:
                if name in self.used:
                    raise self.error(f"output '{name}' is not supported (it is used)")
                continue
            if value.ssa is not None and value.ssa.name_hint is None:
                value.ssa.name_hint = ssa_name(name)
            self.values[name] = value

    def _check_schema(self, proto: onnx.NodeProto, schema: onnx.defs.OpSchema) -> None:
        """What the operator's schema says of a node's inputs and attributes, checked before
        its handler reads them: counts of inputs and outputs, attribute names and types."""
        n_in = len(proto.input)
        if not schema.min_input <= n_in <= schema.max_input:
            expected = (str(schema.min_input) if schema.min_input == schema.max_input
                        else f"{schema.min_input} to {schema.max_input}")
            raise self.error(f"has {n_in} inputs, {proto.op_type}-{schema.since_version} "
                             f"takes {expected}")
        missing = [f.name for i, f in enumerate(schema.inputs)
                   if i < n_in and not proto.input[i]
                   and f.option == onnx.defs.OpSchema.FormalParameterOption.Single]
        if missing:
            raise self.error(f"the required input '{missing[0]}' is empty")
        if not schema.min_output <= len(proto.output) <= schema.max_output:
            raise self.error(f"has {len(proto.output)} outputs, {proto.op_type} gives at "
                             f"most {schema.max_output}")
        for attr in proto.attribute:
            spec = schema.attributes.get(attr.name)
            if spec is None:
                raise self.error(f"unknown attribute '{attr.name}' (not in "
                                 f"{proto.op_type}-{schema.since_version})")
            if attr.type != spec.type.value:
                want = onnx.AttributeProto.AttributeType.Name(spec.type.value)
                got = (onnx.AttributeProto.AttributeType.Name(attr.type)
                       if attr.type in onnx.AttributeProto.AttributeType.values()
                       else str(attr.type))
                raise self.error(f"attribute '{attr.name}' must be {want}, got {got}")
            floats = ([attr.f] if attr.type == onnx.AttributeProto.FLOAT else
                      list(attr.floats) if attr.type == onnx.AttributeProto.FLOATS else [])
            if not all(math.isfinite(v) for v in floats) and (
                    proto.op_type, attr.name) not in NAN_MARKERS:
                raise self.error(f"attribute '{attr.name}' must be finite, got "
                                 f"{helper.get_attribute_value(attr)}")
            if attr.name in POSITIVE_ATTRIBUTES and attr.type == onnx.AttributeProto.INT \
                    and attr.i < 1:
                raise self.error(f"attribute '{attr.name}' must be at least 1, got {attr.i}")

    def _unsupported(self, domain: str) -> str:
        shown = domain or "ai.onnx"
        ops = ", ".join(sorted(k for k in self.handlers if ":" not in k and k != INT8_INPUT))
        ml = ", ".join(sorted(k.split(":")[1] for k in self.handlers
                              if k.startswith("ai.onnx.ml:")))
        return (f"unsupported operator {self.node.op_type} in domain '{shown}'; supported "
                f"(domain ai.onnx): {ops}, Shape, Size, and any operator whose inputs are "
                f"all constant (folded at import)" + (f"; (domain ai.onnx.ml): {ml}" if ml
                                                      else ""))

    def _static_shape(self, proto: onnx.NodeProto, v: Value) -> list[Value]:
        if proto.op_type == "Size":
            return [Value.const(np.array(math.prod(v.shape), dtype=np.int64))]
        attrs = {a.name: _attr_value(a) for a in proto.attribute}
        start, end = attrs.get("start", 0), attrs.get("end", None)
        return [Value.const(np.array(v.shape[start:end], dtype=np.int64))]

    def _fold(self, proto: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
        """Evaluate a node whose inputs are all known with ONNX's reference implementation
        (exact ONNX semantics for every operator, at the model's opset).
        """
        from onnx.reference import ReferenceEvaluator

        names = [n for n in proto.input if n]
        feeds = {n: v.array for n, v in zip(proto.input, inputs) if n and v is not None}
        outer = sorted(n for n in subgraph_reads(proto) if n in self.values)
        names += outer  # the constants a subgraph reads from this scope
        feeds.update({n: self.values[n].array for n in outer})
        undefined = onnx.TensorProto.UNDEFINED
        graph = helper.make_graph(
            [proto], "fold", [helper.make_tensor_value_info(n, undefined, None)
                              for n in dict.fromkeys(names)],
            [helper.make_tensor_value_info(o, undefined, None) for o in proto.output if o])
        try:
            evaluator = ReferenceEvaluator(graph, opsets=dict(self.opsets),
                                           functions=list(self.model.functions) or None)
            results = evaluator.run(None, feeds)
        except MinunError:
            raise
        except Exception as e:  # the reference implementation rejects the node
            raise self.error(f"cannot fold this constant node: {type(e).__name__}: {e}") from None
        outs = iter(results)
        return [Value.const(np.asarray(next(outs)), o) if o else None for o in proto.output]


def _fit_declared(dims: list[int | None], shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape a graph output is compiled with: the computed `shape` when it is the
    declared `dims` (None: unknown, any size); else, for a declaration with unknown dims
    that differs only by axes of 1 (CatBoost's regressor declares [N] for its [N, 1]),
    the declared shape with the unknowns as 1; else None (a real mismatch)."""
    if len(dims) == len(shape) and all(d in (None, s) for d, s in zip(dims, shape)):
        return tuple(shape)
    if None not in dims:
        return None
    fitted = tuple(1 if d is None else d for d in dims)
    return fitted if [d for d in fitted if d != 1] == [d for d in shape if d != 1] else None
def subgraph_reads(node: onnx.NodeProto) -> set[str]:
    """Every name the node's subgraphs (If, Loop, Scan bodies) read, at any depth."""
    names: set[str] = set()
    for a in node.attribute:
        for g in (*([a.g] if a.HasField("g") else []), *a.graphs):
            for n in g.node:
                names.update(x for x in n.input if x)
                names |= subgraph_reads(n)
    return names


def _concat_type(operands: Sequence[SSAValue], axis: int) -> TensorType:
    types = [v.type for v in operands]
    shape = list(types[0].get_shape())
    shape[axis] = sum(t.get_shape()[axis] for t in types)
    return minun.tensor_of(shape, types[0].element_type)


def _to_numpy(t: onnx.TensorProto) -> np.ndarray:
    try:
        return numpy_helper.to_array(t)
    except Exception as e:
        raise MinunError(f"initializer '{t.name}' cannot be read: {e}") from None
