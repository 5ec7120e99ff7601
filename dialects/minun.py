"""The tensor-level (L1) dialect: one op per operator of the SeeDot language, plus the
few extra operators that small ONNX models need.

Values are builtin ranked tensors (a real scalar is a rank-0 tensor) and `i32` for
integers (loop indices, argmax, node arithmetic). At L1 the element type is `f32` and
the semantics are float; the same structural ops (reshape, splice, loop, ...) are reused
at L2 with representation-typed elements, so the verifiers here check shapes and that
element types agree, never that they are `f32`.

Every verifier error names the op and the shapes involved, so a shape bug reads like
`minun.matmul: inner dimensions differ: lhs 10x64, rhs 63x1`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    f32,
    f64,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    MessageConstraint,
    ParamAttrConstraint,
    RangeOf,
    RangeVarConstraint,
    VarConstraint,
    attr_def,
    base,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.printer import Printer
from xdsl.traits import (
    HasCanonicalizationPatternsTrait,
    IsTerminator,
    Pure,
    RecursiveMemoryEffect,
)
from xdsl.utils.exceptions import VerifyException

# --------------------------------------------------------------------------------------
# Helpers shared by the ops (and by frontends that build ops)
# --------------------------------------------------------------------------------------

Shape = tuple[int, ...]


def shape_str(shape: Sequence[int]) -> str:
    """`10x64`, or `scalar` for rank 0: how shapes appear in diagnostics."""
    return "x".join(str(d) for d in shape) if len(shape) else "scalar"


def tensor_of(shape: Sequence[int], element: Attribute = f32) -> TensorType:
    return _tensor_type(tuple(shape), element)


@functools.cache  # types are immutable; quantize and the lowerings ask for the same ones
def _tensor_type(shape: tuple[int, ...], element: Attribute) -> TensorType:
    return TensorType(element, list(shape))


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def ints(attr: DenseArrayBase) -> tuple[int, ...]:
    return tuple(int(v) for v in attr.get_values())


def f64_attr(value: float) -> FloatAttr:
    return FloatAttr(float(value), f64)


def _tensor(op: Operation, value: SSAValue, what: str) -> TensorType:
    if not isinstance(value.type, TensorType):
        raise VerifyException(f"{op.name}: {what} must be a tensor, got {value.type}")
    return value.type


def _shape(op: Operation, value: SSAValue, what: str) -> Shape:
    return tuple(_tensor(op, value, what).get_shape())


def _same_element(op: Operation, *values: SSAValue) -> Attribute:
    elements = {_tensor(op, v, f"operand {i}").element_type for i, v in enumerate(values)}
    if len(elements) != 1:
        shown = ", ".join(str(v.type) for v in values)
        raise VerifyException(f"{op.name}: operands must have one element type, got {shown}")
    return elements.pop()


def _check_result(op: Operation, result: SSAValue, shape: Shape, element: Attribute) -> None:
    expected = tensor_of(shape, element)
    if result.type != expected:
        raise VerifyException(
            f"{op.name}: result type {result.type} does not match the inferred {expected}"
        )


def broadcast_shapes(op_name: str, a: Shape, b: Shape) -> Shape:
    """numpy broadcasting: SeeDot's scalar broadcast is the rank-0 case."""
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        raise VerifyException(
            f"{op_name}: shapes {shape_str(a)} and {shape_str(b)} do not broadcast"
        ) from None


def _is_int(value: SSAValue) -> bool:
    return isinstance(value.type, IntegerType)


def _int_operand(op: Operation, value: SSAValue, what: str) -> None:
    if not _is_int(value):
        raise VerifyException(f"{op.name}: {what} must be an integer (i32), got {value.type}")


def conv_out_dim(size: int, kernel: int, stride: int, pad: int, dilation: int) -> int:
    """Output size of one spatial dimension, as in PyTorch's Conv2d / MaxPool2d."""
    return (size + pad - dilation * (kernel - 1) - 1) // stride + 1


def padding_only_window(shape: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
                        pads: Sequence[int]) -> str | None:
    """Why a pooling window of an NHWC `shape` lies wholly in the padding, or None. Such a
    window has no element to pool: ONNX leaves its value undefined (its reference evaluator
    fails, onnxruntime refuses pads not smaller than the kernel), and a representation's
    lowest value there would be -inf or a NaN pattern, so pooling ops refuse it."""
    for size, k, s, before, after in ((shape[1], kernel[0], strides[0], *pads[:2]),
                                      (shape[2], kernel[1], strides[1], *pads[2:])):
        last = (conv_out_dim(size, k, s, before + after, 1) - 1) * s  # the last window's start
        if before >= k or last >= before + size:
            return (f"a {kernel[0]}x{kernel[1]} window with pads {list(pads)} (top, bottom, "
                    f"left, right) and strides {list(strides)} lies wholly in the padding: "
                    "each pad must be smaller than the kernel and every window must hold "
                    "an input element")
    return None


def _positive(op: Operation, name: str, values: Sequence[int], count: int, zero_ok=False):
    if len(values) != count:
        raise VerifyException(f"{op.name}: {name} needs {count} values, got {len(values)}")
    if any(v < (0 if zero_ok else 1) for v in values):
        bound = "non-negative" if zero_ok else "positive"
        raise VerifyException(f"{op.name}: {name} must be {bound}, got {list(values)}")


# --------------------------------------------------------------------------------------
# Canonicalization patterns (the patterns are at the end of this module)
# --------------------------------------------------------------------------------------


class _TransposeCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (ComposeTransposes(),)


class _NegCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (NegNeg(),)


class _ReshapeCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (IdentityReshape(),)



# --------------------------------------------------------------------------------------
# Leaves: input, parameters, constants
# --------------------------------------------------------------------------------------


def _print_range(printer: Printer, lo: FloatAttr, hi: FloatAttr) -> None:
    printer.print_string(f" [{lo.value.data!r}, {hi.value.data!r}]")


def _parse_range(parser: Parser) -> tuple[FloatAttr, FloatAttr]:
    parser.parse_punctuation("[")
    lo = parser.parse_number()
    parser.parse_punctuation(",")
    hi = parser.parse_number()
    parser.parse_punctuation("]")
    return f64_attr(lo), f64_attr(hi)


def _verify_range(op: Operation, lo: FloatAttr, hi: FloatAttr) -> None:
    if not lo.value.data <= hi.value.data:
        raise VerifyException(
            f"{op.name}: empty range [{lo.value.data}, {hi.value.data}] (lower bound above upper)"
        )


@irdl_op_definition
class InputOp(IRDLOperation):
    """The run-time input of the model, with its declared value range (scale choice uses it).

    `%x = minun.input "X" [0.0, 16.0] : tensor<64x1xf32>`
    """

    name = "minun.input"
    sym_name = attr_def(StringAttr)
    range_lo = attr_def(FloatAttr)
    range_hi = attr_def(FloatAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, name: str, shape: Sequence[int], lo: float, hi: float,
                 element: Attribute = f32):
        super().__init__(
            attributes={"sym_name": StringAttr(name), "range_lo": f64_attr(lo),
                        "range_hi": f64_attr(hi)},
            result_types=[tensor_of(shape, element)],
        )

    def verify_(self) -> None:
        _verify_range(self, self.range_lo, self.range_hi)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.sym_name.data)
        _print_range(printer, self.range_lo, self.range_hi)
        extra = {k: v for k, v in self.attributes.items()
                 if k not in ("sym_name", "range_lo", "range_hi")}
        printer.print_op_attributes(extra)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> InputOp:
        name = parser.parse_str_literal()
        lo, hi = _parse_range(parser)
        extra = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        op = cls.create(
            attributes={"sym_name": StringAttr(name), "range_lo": lo, "range_hi": hi, **extra},
            result_types=[ty],
        )
        return op


@irdl_op_definition
class ParamOp(IRDLOperation):
    """A trained model parameter: its values (a dense attribute, printed as hex, never as
    decimal text) and its declared value range. `sparse` marks the left operand of a
    sparse matmul, which lowering stores compressed.

    `%w = minun.param "W" [-0.8, 0.9] dense<"0x..."> : tensor<10x64xf32>`
    (the value's type is the result type)
    """

    name = "minun.param"
    sym_name = attr_def(StringAttr)
    range_lo = attr_def(FloatAttr)
    range_hi = attr_def(FloatAttr)
    value = attr_def(DenseIntOrFPElementsAttr)
    sparse = opt_attr_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, name: str, array: np.ndarray, lo: float, hi: float,
                 sparse: bool = False):
        ty = tensor_of(array.shape, f32)
        attrs: dict[str, Attribute] = {
            "sym_name": StringAttr(name), "range_lo": f64_attr(lo), "range_hi": f64_attr(hi),
            "value": dense_f32(array),
        }
        if sparse:
            attrs["sparse"] = UnitAttr()
        super().__init__(attributes=attrs, result_types=[ty])

    def array(self) -> np.ndarray:
        return dense_to_numpy(self.value)

    def verify_(self) -> None:
        _verify_range(self, self.range_lo, self.range_hi)
        if tuple(self.value.get_shape()) != tuple(self.result.type.get_shape()):
            raise VerifyException(
                f"{self.name} \"{self.sym_name.data}\": value shape "
                f"{shape_str(self.value.get_shape())} differs from result shape "
                f"{shape_str(self.result.type.get_shape())}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.sym_name.data)
        _print_range(printer, self.range_lo, self.range_hi)
        if self.sparse is not None:
            printer.print_string(" sparse")
        extra = {k: v for k, v in self.attributes.items()
                 if k not in ("sym_name", "range_lo", "range_hi", "value", "sparse")}
        printer.print_op_attributes(extra)
        printer.print_string(" ")
        printer.print_attribute(self.value)

    @classmethod
    def parse(cls, parser: Parser) -> ParamOp:
        name = parser.parse_str_literal()
        lo, hi = _parse_range(parser)
        sparse = parser.parse_optional_keyword("sparse") is not None
        extra = parser.parse_optional_attr_dict()
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error("expected a dense<...> : tensor<...> value", pos, parser.pos)
        attrs = {"sym_name": StringAttr(name), "range_lo": lo, "range_hi": hi, **extra,
                 "value": value}
        if sparse:
            attrs["sparse"] = UnitAttr()
        return cls.create(attributes=attrs, result_types=[value.type])


def dense_f32(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    """A dense f32 attribute from raw bytes: fast, and printed as hex."""
    data = np.asarray(array, dtype="<f4", order="C")  # keeps rank 0 (ascontiguousarray does not)
    return DenseIntOrFPElementsAttr(tensor_of(data.shape, f32), BytesAttr(data.tobytes()))


def dense_to_numpy(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    element = attr.get_element_type()
    if element == f32:
        dtype = "<f4"
    elif isinstance(element, Float64Type):
        dtype = "<f8"
    elif isinstance(element, IntegerType):
        dtype = {8: "<i1", 16: "<i2", 32: "<i4", 64: "<i8"}[element.width.data]
    else:
        raise ValueError(f"unsupported dense element type {element}")
    shape = tuple(attr.get_shape())
    data = np.frombuffer(attr.data.data, dtype=dtype)
    if data.size == 1 and int(np.prod(shape)) != 1:  # splat
        data = np.full(shape, data[0])
    return data.reshape(shape).copy()


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A real literal or a folded constant tensor (no declared range: its value is its range).

    `%c = minun.constant dense<1.23> : tensor<f32>`
    """

    name = "minun.constant"
    T: ClassVar = VarConstraint("T", base(TensorType))
    value = attr_def(MessageConstraint(
        ParamAttrConstraint(DenseIntOrFPElementsAttr, (T, AnyAttr())),
        "the value's type must be the result type"))
    result = result_def(T)
    traits = traits_def(Pure())

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes({k: v for k, v in self.attributes.items() if k != "value"})

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error("expected a dense<...> : tensor<...> value", pos, parser.pos)
        extra = parser.parse_optional_attr_dict()
        return cls.create(attributes={"value": value, **extra}, result_types=[value.type])

    def __init__(self, array: np.ndarray | float):
        value = dense_f32(np.asarray(array, dtype=np.float32))
        super().__init__(attributes={"value": value}, result_types=[value.type])

    def array(self) -> np.ndarray:
        return dense_to_numpy(self.value)


@irdl_op_definition
class InitOp(IRDLOperation):
    """`init([d1..dk], c)`: a tensor filled with one constant (kept as a fill, not a dense
    array, so it costs no flash).

    `%z = minun.init 0.0 : tensor<32x1xf32>`
    """

    name = "minun.init"
    fill = attr_def(FloatAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.fill.value.data!r}")
        printer.print_op_attributes({k: v for k, v in self.attributes.items() if k != "fill"})
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> InitOp:
        fill = parser.parse_number()
        extra = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        return cls.create(attributes={"fill": f64_attr(fill), **extra}, result_types=[ty])

    def __init__(self, shape: Sequence[int], fill: float, element: Attribute = f32):
        super().__init__(attributes={"fill": f64_attr(fill)},
                         result_types=[tensor_of(shape, element)])


# --------------------------------------------------------------------------------------
# Arithmetic
# --------------------------------------------------------------------------------------


class _InferredOp(IRDLOperation):
    """An op whose result type is a function of its operands and attributes.

    Subclasses implement `infer(operands, attributes) -> (shape, element)`, raising
    VerifyException with a readable message; the same function builds and verifies.
    """

    @classmethod
    def infer_type(cls, operands: Sequence[SSAValue], attributes: dict[str, Attribute]
                   ) -> TensorType:
        probe = cls.create(operands=list(operands), attributes=attributes, result_types=[])
        shape, element = probe.infer()
        probe.erase(safe_erase=False)
        return tensor_of(shape, element)

    @classmethod
    def make(cls, *operands: SSAValue | Operation, **attributes: Attribute):
        values = [SSAValue.get(o) for o in operands]
        ty = cls.infer_type(values, attributes)
        return cls.create(operands=values, attributes=dict(attributes), result_types=[ty])

    def infer(self) -> tuple[Shape, Attribute]:
        raise NotImplementedError

    def verify_(self) -> None:
        shape, element = self.infer()
        _check_result(self, self.results[0], shape, element)


class _BinaryOp(_InferredOp):
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"


class _ElementwiseBinaryOp(_BinaryOp):
    """Equal shapes, or numpy broadcasting (SeeDot's scalar broadcast is the rank-0 case)."""

    def infer(self):
        element = _same_element(self, self.lhs, self.rhs)
        shape = broadcast_shapes(self.name, _shape(self, self.lhs, "lhs"),
                                 _shape(self, self.rhs, "rhs"))
        return shape, element


@irdl_op_definition
class AddOp(_ElementwiseBinaryOp):
    """`a + b` (element-wise, scalar broadcast; general numpy broadcast for ONNX)."""

    name = "minun.add"


@irdl_op_definition
class SubOp(_ElementwiseBinaryOp):
    """`a - b`."""

    name = "minun.sub"


@irdl_op_definition
class HadamardOp(_ElementwiseBinaryOp):
    """`a <*> b`: element-wise product (ONNX Mul)."""

    name = "minun.hadamard"


@irdl_op_definition
class DivOp(_ElementwiseBinaryOp):
    """Element-wise division (ONNX Div)."""

    name = "minun.div"


@irdl_op_definition
class MaxOp(_ElementwiseBinaryOp):
    """Element-wise maximum (ONNX Max)."""

    name = "minun.max"


@irdl_op_definition
class MinOp(_ElementwiseBinaryOp):
    """Element-wise minimum (ONNX Min)."""

    name = "minun.min"


class _BiasOp(_BinaryOp):
    def infer(self):
        element = _same_element(self, self.lhs, self.rhs)
        a, b = _shape(self, self.lhs, "lhs"), _shape(self, self.rhs, "bias")
        if len(b) != 1 or len(a) < 1 or a[-1] != b[0]:
            raise VerifyException(
                f"{self.name}: bias must be 1-D with the last dimension of the lhs: "
                f"lhs {shape_str(a)}, bias {shape_str(b)}"
            )
        return a, element


@irdl_op_definition
class BiasAddOp(_BiasOp):
    """`a <+> b`: add a 1-D tensor along the last dimension of `a`."""

    name = "minun.bias_add"


@irdl_op_definition
class BiasSubOp(_BiasOp):
    """`a <-> b`: subtract a 1-D tensor along the last dimension of `a`."""

    name = "minun.bias_sub"


@irdl_op_definition
class MatMulOp(_BinaryOp):
    """`A * B` for 2-D tensors."""

    name = "minun.matmul"

    def infer(self):
        element = _same_element(self, self.lhs, self.rhs)
        a, b = _shape(self, self.lhs, "lhs"), _shape(self, self.rhs, "rhs")
        if len(a) != 2 or len(b) != 2:
            raise VerifyException(
                f"{self.name}: operands must be 2-D, got lhs {shape_str(a)}, rhs {shape_str(b)}"
            )
        if a[1] != b[0]:
            raise VerifyException(
                f"{self.name}: inner dimensions differ: lhs {shape_str(a)}, rhs {shape_str(b)}"
            )
        return (a[0], b[1]), element


@irdl_op_definition
class SparseMatMulOp(_BinaryOp):
    """`A |*| x`: A is a sparse 2-D model parameter (stored compressed after lowering)."""

    name = "minun.sparse_matmul"

    def infer(self):
        element = _same_element(self, self.lhs, self.rhs)
        a, b = _shape(self, self.lhs, "lhs"), _shape(self, self.rhs, "rhs")
        if len(a) != 2 or len(b) != 2 or a[1] != b[0]:
            raise VerifyException(
                f"{self.name}: needs 2-D operands with matching inner dimensions: "
                f"lhs {shape_str(a)}, rhs {shape_str(b)}"
            )
        owner = self.lhs.owner
        if not isinstance(owner, ParamOp):
            raise VerifyException(f"{self.name}: the sparse lhs must be a model parameter")
        return (a[0], b[1]), element


@irdl_op_definition
class ScalarMulOp(_BinaryOp):
    """`s * A`: a real scalar times a tensor."""

    name = "minun.scalar_mul"

    def infer(self):
        element = _same_element(self, self.lhs, self.rhs)
        s = _shape(self, self.lhs, "scalar")
        if s != ():
            raise VerifyException(
                f"{self.name}: lhs must be a scalar, got {shape_str(s)}"
            )
        return _shape(self, self.rhs, "rhs"), element


# --------------------------------------------------------------------------------------
# Element-wise unary ops
# --------------------------------------------------------------------------------------


class _UnaryOp(_InferredOp):
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def infer(self):
        ty = _tensor(self, self.input, "input")
        return tuple(ty.get_shape()), ty.element_type


@irdl_op_definition
class NegOp(_UnaryOp):
    name = "minun.neg"
    traits = traits_def(Pure(), _NegCanonicalization())


@irdl_op_definition
class ReluOp(_UnaryOp):
    name = "minun.relu"


@irdl_op_definition
class Relu6Op(_UnaryOp):
    name = "minun.relu6"


@irdl_op_definition
class ExpOp(_UnaryOp):
    name = "minun.exp"


@irdl_op_definition
class TanhOp(_UnaryOp):
    name = "minun.tanh"


@irdl_op_definition
class SigmoidOp(_UnaryOp):
    name = "minun.sigmoid"


@irdl_op_definition
class ErfOp(_UnaryOp):
    """The error function (ONNX Erf, GELU's); composite: lower-composite-ops expands it."""

    name = "minun.erf"


@irdl_op_definition
class ClipOp(_UnaryOp):
    """`min(max(x, lo), hi)` (ONNX Clip with constant bounds)."""

    name = "minun.clip"
    lo = attr_def(FloatAttr)
    hi = attr_def(FloatAttr)

    def infer(self):
        if not self.lo.value.data <= self.hi.value.data:
            raise VerifyException(
                f"{self.name}: lo {self.lo.value.data} is above hi {self.hi.value.data}"
            )
        return super().infer()


@irdl_op_definition
class LeakyReluOp(_UnaryOp):
    """`x >= 0 ? x : alpha * x`."""

    name = "minun.leaky_relu"
    alpha = attr_def(FloatAttr)


class _AxisOp(_UnaryOp):
    axis = attr_def(IntegerAttr)

    def infer(self):
        shape, element = super().infer()
        axis = self.axis.value.data
        if not 0 <= axis < len(shape):
            raise VerifyException(
                f"{self.name}: axis {axis} is out of range for shape {shape_str(shape)}"
            )
        return shape, element


@irdl_op_definition
class SoftmaxOp(_AxisOp):
    name = "minun.softmax"


@irdl_op_definition
class LogSoftmaxOp(_AxisOp):
    name = "minun.log_softmax"


@irdl_op_definition
class ReverseOp(_AxisOp):
    """`reverse(e, axis)`."""

    name = "minun.reverse"


@irdl_op_definition
class NormaliseL2Op(_UnaryOp):
    """Per spatial position of an NHWC tensor, divide the channel vector by its L2 norm."""

    name = "minun.normalise_l2"

    def infer(self):
        shape, element = super().infer()
        if len(shape) != 4:
            raise VerifyException(f"{self.name}: input must be 4-D NHWC, got {shape_str(shape)}")
        return shape, element


class _ToIntOp(IRDLOperation):
    input = operand_def(TensorType)
    result = result_def(i32)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input)"


@irdl_op_definition
class ArgMaxOp(_ToIntOp):
    """Flat index of the largest element (the first one on ties)."""

    name = "minun.argmax"


@irdl_op_definition
class SgnOp(_ToIntOp):
    """1 if the scalar is > 0, else 0 (binary classifiers)."""

    name = "minun.sgn"

    def verify_(self) -> None:
        shape = _shape(self, self.input, "input")
        if int(np.prod(shape)) != 1:
            raise VerifyException(
                f"{self.name}: input must hold one element, got {shape_str(shape)}"
            )


# --------------------------------------------------------------------------------------
# Shape manipulation
# --------------------------------------------------------------------------------------


@irdl_op_definition
class TransposeOp(_UnaryOp):
    """Permute dimensions (`e^T` is perm [1, 0]; ONNX Transpose)."""

    name = "minun.transpose"
    perm = attr_def(DenseArrayBase)
    traits = traits_def(Pure(), _TransposeCanonicalization())

    def infer(self):
        shape, element = super().infer()
        perm = ints(self.perm)
        if sorted(perm) != list(range(len(shape))):
            raise VerifyException(
                f"{self.name}: perm {list(perm)} is not a permutation of the "
                f"{len(shape)} dimensions of {shape_str(shape)}"
            )
        return tuple(shape[p] for p in perm), element


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """`reshape(e, shape, order)`: traverse the input's dimensions in `order` (0-based,
    outermost first), then fill the result shape: numpy `x.transpose(order).reshape(shape)`.

    `%r = minun.reshape %a {order = array<i64: 0, 2, 1, 3>}
         : tensor<2x4x5x10xf32> -> tensor<20x20xf32>`
    """

    name = "minun.reshape"
    input = operand_def(TensorType)
    order = attr_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure(), _ReshapeCanonicalization())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue | Operation, shape: Sequence[int],
                 order: Sequence[int] | None = None):
        ty = SSAValue.get(value).type
        assert isinstance(ty, TensorType)
        order = list(range(ty.get_num_dims())) if order is None else list(order)
        super().__init__(operands=[value], attributes={"order": i64_array(order)},
                         result_types=[tensor_of(shape, ty.element_type)])

    def verify_(self) -> None:
        src = _tensor(self, self.input, "input")
        dst = _tensor(self, self.result, "result")
        order = ints(self.order)
        if sorted(order) != list(range(src.get_num_dims())):
            raise VerifyException(
                f"{self.name}: order {list(order)} is not a permutation of the "
                f"{src.get_num_dims()} dimensions of {shape_str(src.get_shape())}"
            )
        if src.element_count() != dst.element_count():
            raise VerifyException(
                f"{self.name}: element counts differ: {shape_str(src.get_shape())} has "
                f"{src.element_count()}, {shape_str(dst.get_shape())} has {dst.element_count()}"
            )
        if src.element_type != dst.element_type:
            raise VerifyException(f"{self.name}: element types differ: {src} vs {dst}")


def _verify_starts(op: Operation, starts: Sequence[SSAValue], sizes: Sequence[int],
                   shape: Shape, what: str) -> None:
    if len(starts) != len(sizes) or len(sizes) != len(shape):
        raise VerifyException(
            f"{op.name}: needs one start and one size per dimension of {shape_str(shape)}, "
            f"got {len(starts)} starts and {len(sizes)} sizes"
        )
    for i, (start, size, dim) in enumerate(zip(starts, sizes, shape)):
        _int_operand(op, start, f"start {i}")
        if not 1 <= size <= dim:
            raise VerifyException(
                f"{op.name}: size {size} of dimension {i} does not fit in {what} "
                f"{shape_str(shape)}"
            )
        const = constant_int(start)
        if const is not None and not 0 <= const <= dim - size:
            raise VerifyException(
                f"{op.name}: slice [{const}:+{size}] of dimension {i} is outside {what} "
                f"{shape_str(shape)}"
            )


def constant_int(value: SSAValue) -> int | None:
    """The value of an `arith.constant` integer, or None."""
    from xdsl.dialects import arith

    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


@irdl_op_definition
class SpliceOp(IRDLOperation):
    """`e[i:+n][j:+m]`: a slice with one (run-time integer) start and one constant size per
    dimension.

    `%s = minun.splice %a[%i, %j] {sizes = array<i64: 8, 1>} : tensor<64x1xf32> -> tensor<8x1xf32>`
    """

    name = "minun.splice"
    input = operand_def(TensorType)
    starts = var_operand_def(i32)
    sizes = attr_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `[` $starts `]` attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(self, value: SSAValue | Operation, starts: Sequence[SSAValue | Operation],
                 sizes: Sequence[int]):
        ty = SSAValue.get(value).type
        assert isinstance(ty, TensorType)
        super().__init__(operands=[value, list(starts)], attributes={"sizes": i64_array(sizes)},
                         result_types=[tensor_of(sizes, ty.element_type)])

    def verify_(self) -> None:
        ty = _tensor(self, self.input, "input")
        sizes = ints(self.sizes)
        _verify_starts(self, self.starts, sizes, tuple(ty.get_shape()), "input")
        _check_result(self, self.result, sizes, ty.element_type)


@irdl_op_definition
class SpliceAssignOp(IRDLOperation):
    """Left splice `let A[i:+n] = v in ...`: A with that slice replaced by v. The frontend
    threads the new A through enclosing loops, so the write stays visible afterwards.

    `%a2 = minun.splice_assign %v into %a[%i, %j] : tensor<8x1xf32> into tensor<64x1xf32>`
    """

    name = "minun.splice_assign"
    E: ClassVar = VarConstraint("E", AnyAttr())  # one element type
    T: ClassVar = VarConstraint("T", MessageConstraint(  # dest and result
        TensorType.constr(element_type=E), "value and destination need one element type"))
    value = operand_def(TensorType.constr(element_type=E))
    dest = operand_def(T)
    starts = var_operand_def(i32)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = (
        "$value `into` $dest `[` $starts `]` attr-dict `:` type($value) `into` type($dest)"
    )

    def __init__(self, value: SSAValue | Operation, dest: SSAValue | Operation,
                 starts: Sequence[SSAValue | Operation]):
        super().__init__(operands=[value, dest, list(starts)],
                         result_types=[SSAValue.get(dest).type])

    def verify_(self) -> None:
        dest = _shape(self, self.dest, "destination")
        value = _shape(self, self.value, "value")
        if len(value) != len(dest):
            raise VerifyException(
                f"{self.name}: value {shape_str(value)} and destination {shape_str(dest)} "
                f"have different ranks"
            )
        _verify_starts(self, self.starts, value, dest, "destination")


@irdl_op_definition
class IndexOp(IRDLOperation):
    """`e[i]`: index the first dimension; the result has one dimension less.

    `%r = minun.index %a[%i] : tensor<20x10x1xf32> -> tensor<10x1xf32>`
    """

    name = "minun.index"
    input = operand_def(TensorType)
    index = operand_def(i32)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `[` $index `]` attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue | Operation, index: SSAValue | Operation):
        ty = SSAValue.get(value).type
        assert isinstance(ty, TensorType)
        super().__init__(operands=[value, index],
                         result_types=[tensor_of(ty.get_shape()[1:], ty.element_type)])

    def verify_(self) -> None:
        ty = _tensor(self, self.input, "input")
        shape = tuple(ty.get_shape())
        if not shape:
            raise VerifyException(f"{self.name}: cannot index a scalar")
        const = constant_int(self.index)
        if const is not None and not 0 <= const < shape[0]:
            raise VerifyException(
                f"{self.name}: index {const} is outside the first dimension of {shape_str(shape)}"
            )
        _check_result(self, self.result, shape[1:], ty.element_type)


@irdl_op_definition
class ConcatOp(IRDLOperation):
    """Concatenate along an axis (ONNX Concat)."""

    name = "minun.concat"
    inputs = var_operand_def(TensorType)
    axis = attr_def(IntegerAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, results)"

    def verify_(self) -> None:
        if not self.inputs:
            raise VerifyException(f"{self.name}: needs at least one input")
        element = _same_element(self, *self.inputs)
        shapes = [_shape(self, v, f"input {i}") for i, v in enumerate(self.inputs)]
        axis = self.axis.value.data
        rank = len(shapes[0])
        if not 0 <= axis < rank:
            raise VerifyException(f"{self.name}: axis {axis} out of range for rank {rank}")
        for s in shapes:
            if len(s) != rank or any(a != b for d, (a, b) in enumerate(zip(s, shapes[0]))
                                     if d != axis):
                raise VerifyException(
                    f"{self.name}: shapes {', '.join(shape_str(x) for x in shapes)} differ "
                    f"outside axis {axis}"
                )
        out = list(shapes[0])
        out[axis] = sum(s[axis] for s in shapes)
        _check_result(self, self.result, tuple(out), element)


# --------------------------------------------------------------------------------------
# Convolutions and pooling (NHWC)
# --------------------------------------------------------------------------------------


def _window_out(op: Operation, shape: Shape, kernel: Sequence[int], strides: Sequence[int],
                pads: Sequence[int], dilations: Sequence[int], what: str) -> tuple[int, int]:
    _positive(op, "strides", strides, 2)
    _positive(op, "dilations", dilations, 2)
    _positive(op, "pads", pads, 4, zero_ok=True)
    t, b, left, r = pads
    ho = conv_out_dim(shape[1], kernel[0], strides[0], t + b, dilations[0])
    wo = conv_out_dim(shape[2], kernel[1], strides[1], left + r, dilations[1])
    if ho < 1 or wo < 1:
        raise VerifyException(
            f"{op.name}: {what} {kernel[0]}x{kernel[1]} (dilation {list(dilations)}) does not "
            f"fit input {shape_str(shape)} with pads {list(pads)}"
        )
    return ho, wo


class _ConvLike(IRDLOperation):
    strides = attr_def(DenseArrayBase)
    pads = attr_def(DenseArrayBase)
    traits = traits_def(Pure())


@irdl_op_definition
class Conv2DOp(_ConvLike):
    """2-D convolution: A NHWC [N,H,W,C], F [G, HF, WF, C/G, Cout] -> [N, Ho, Wo, G*Cout];
    zero padding [top, bottom, left, right], stride, dilation and groups as in PyTorch.
    """

    name = "minun.conv2d"
    input = operand_def(TensorType)
    filter = operand_def(TensorType)
    dilations = attr_def(DenseArrayBase)
    groups = attr_def(IntegerAttr)
    result = result_def(TensorType)
    assembly_format = "$input `,` $filter attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        element = _same_element(self, self.input, self.filter)
        a, f = _shape(self, self.input, "input"), _shape(self, self.filter, "filter")
        if len(a) != 4 or len(f) != 5:
            raise VerifyException(
                f"{self.name}: input must be 4-D NHWC and filter 5-D [G,HF,WF,C/G,Cout], "
                f"got input {shape_str(a)}, filter {shape_str(f)}"
            )
        g = self.groups.value.data
        if g < 1 or f[0] != g or a[3] != g * f[3]:
            raise VerifyException(
                f"{self.name}: channels do not match groups {g}: input {shape_str(a)}, "
                f"filter {shape_str(f)} (needs filter[0] == groups and C == groups * filter[3])"
            )
        ho, wo = _window_out(self, a, f[1:3], ints(self.strides), ints(self.pads),
                             ints(self.dilations), "filter")
        _check_result(self, self.result, (a[0], ho, wo, g * f[4]), element)


@irdl_op_definition
class MBConvOp(_ConvLike):
    """Inverted bottleneck block (MobileNetV2): 1x1 expand conv F1 + BN (W1,B1) + ReLU6;
    depthwise conv F2 with stride/pads + BN (W2,B2) + ReLU6; 1x1 project conv F3 + BN (W3,B3).
    F1 [1,1,1,C,T], F2 [T,HF,WF,1,1], F3 [1,1,1,T,Cout]; W/B 1-D of T, T, Cout.
    """

    name = "minun.mbconv"
    input = operand_def(TensorType)
    f1 = operand_def(TensorType)
    w1 = operand_def(TensorType)
    b1 = operand_def(TensorType)
    f2 = operand_def(TensorType)
    w2 = operand_def(TensorType)
    b2 = operand_def(TensorType)
    f3 = operand_def(TensorType)
    w3 = operand_def(TensorType)
    b3 = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        element = _same_element(self, *self.operands)
        a = _shape(self, self.input, "input")
        f1, f2, f3 = (_shape(self, v, n) for v, n in ((self.f1, "F1"), (self.f2, "F2"),
                                                        (self.f3, "F3")))
        shown = (f"input {shape_str(a)}, F1 {shape_str(f1)}, F2 {shape_str(f2)}, "
                 f"F3 {shape_str(f3)}")
        if len(a) != 4 or len(f1) != 5 or len(f2) != 5 or len(f3) != 5:
            raise VerifyException(f"{self.name}: needs 4-D input and 5-D filters: {shown}")
        t = f1[4]
        if f1[:4] != (1, 1, 1, a[3]) or f2[0] != t or f2[3:] != (1, 1) or f3[:4] != (1, 1, 1, t):
            raise VerifyException(
                f"{self.name}: filter shapes must be F1 [1,1,1,C,T], F2 [T,HF,WF,1,1], "
                f"F3 [1,1,1,T,Cout]: {shown}"
            )
        for v, n, size in ((self.w1, "W1", t), (self.b1, "B1", t), (self.w2, "W2", t),
                           (self.b2, "B2", t), (self.w3, "W3", f3[4]), (self.b3, "B3", f3[4])):
            s = _shape(self, v, n)
            if s != (size,):
                raise VerifyException(f"{self.name}: {n} must be 1-D of {size}, got {shape_str(s)}")
        ho, wo = _window_out(self, a, f2[1:3], ints(self.strides), ints(self.pads), (1, 1),
                             "depthwise filter")
        _check_result(self, self.result, (a[0], ho, wo, f3[4]), element)


class _PoolOp(IRDLOperation):
    input = operand_def(TensorType)
    kernel = attr_def(DenseArrayBase)
    strides = attr_def(DenseArrayBase)
    pads = attr_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        ty = _tensor(self, self.input, "input")
        a = tuple(ty.get_shape())
        if len(a) != 4:
            raise VerifyException(f"{self.name}: input must be 4-D NHWC, got {shape_str(a)}")
        kernel = ints(self.kernel)
        _positive(self, "kernel", kernel, 2)
        ho, wo = _window_out(self, a, kernel, ints(self.strides), ints(self.pads), (1, 1),
                             "window")
        why = padding_only_window(a, kernel, ints(self.strides), ints(self.pads))
        if why:
            raise VerifyException(f"{self.name}: {why}")
        _check_result(self, self.result, (a[0], ho, wo, a[3]), ty.element_type)


@irdl_op_definition
class MaxPoolOp(_PoolOp):
    """`maxpool(e, {k h w}, {p t b l r}, {s h w})` on NHWC; padding counts as -inf (no
    window lies wholly in it: `padding_only_window`)."""

    name = "minun.maxpool"


@irdl_op_definition
class AvgPoolOp(_PoolOp):
    """Average pooling on NHWC; `count_include_pad` as in ONNX AveragePool."""

    name = "minun.avgpool"
    count_include_pad = opt_attr_def(UnitAttr)


@irdl_op_definition
class GlobalAvgPoolOp(_UnaryOp):
    """Mean over H and W of an NHWC tensor -> [N,1,1,C]."""

    name = "minun.global_avgpool"

    def infer(self):
        shape, element = super().infer()
        if len(shape) != 4:
            raise VerifyException(f"{self.name}: input must be 4-D NHWC, got {shape_str(shape)}")
        return (shape[0], 1, 1, shape[3]), element


@irdl_op_definition
class BatchNormOp(IRDLOperation):
    """Inference batch-norm along the last (channel) axis:
    `(x - mean) / sqrt(var + epsilon) * scale + bias`.
    """

    name = "minun.batchnorm"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    epsilon = attr_def(FloatAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        element = _same_element(self, *self.operands)
        a = _shape(self, self.input, "input")
        if not a:
            raise VerifyException(f"{self.name}: input must have a channel axis")
        for v, n in ((self.scale, "scale"), (self.bias, "bias"), (self.mean, "mean"),
                     (self.var, "var")):
            s = _shape(self, v, n)
            if s != (a[-1],):
                raise VerifyException(
                    f"{self.name}: {n} must be 1-D of the {a[-1]} channels of input "
                    f"{shape_str(a)}, got {shape_str(s)}"
                )
        _check_result(self, self.result, a, element)


# --------------------------------------------------------------------------------------
# Regions: summation, loop, conditional
# --------------------------------------------------------------------------------------


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminator of minun.sum / minun.loop / minun.if_nonneg bodies."""

    name = "minun.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator())
    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, *values: SSAValue | Operation):
        super().__init__(operands=[list(values)])


def _verify_body(op: Operation, body: Region, arg_types: Sequence[Attribute],
                 yield_types: Sequence[Attribute]) -> None:
    if len(body.blocks) != 1:
        raise VerifyException(f"{op.name}: body must have one block")
    block = body.block
    got = [a.type for a in block.args]
    if got != list(arg_types):
        raise VerifyException(
            f"{op.name}: body arguments {', '.join(map(str, got)) or 'none'} must be "
            f"{', '.join(map(str, arg_types))}"
        )
    last = block.last_op
    if not isinstance(last, YieldOp):
        raise VerifyException(f"{op.name}: body must end with minun.yield")
    yielded = [v.type for v in last.values]
    if yielded != list(yield_types):
        raise VerifyException(
            f"{op.name}: body yields {', '.join(map(str, yielded)) or 'nothing'}, "
            f"expected {', '.join(map(str, yield_types))}"
        )


def _print_bounds(printer: Printer, op: Operation) -> None:
    printer.print_string(" (")
    printer.print_ssa_value(op.body.block.args[0])
    printer.print_string(f" = {op.lower.value.data} to {op.upper.value.data})")


def _parse_bounds(parser: Parser):
    parser.parse_punctuation("(")
    arg = parser.parse_argument(expect_type=False)
    parser.parse_punctuation("=")
    lo = parser.parse_integer()
    parser.parse_keyword("to")
    hi = parser.parse_integer()
    parser.parse_punctuation(")")
    return arg, IntegerAttr(lo, i64), IntegerAttr(hi, i64)


def _verify_bounds(op: Operation) -> None:
    lo, hi = op.lower.value.data, op.upper.value.data
    if not lo < hi:
        raise VerifyException(f"{op.name}: empty range [{lo}:{hi}] (needs lower < upper)")


@irdl_op_definition
class SumOp(IRDLOperation):
    """`$(i = [a:b]) e`: the sum of the body's value over i = a .. b-1.

    `%s = minun.sum (%i = 0 to 20) : tensor<10x1xf32> { ... minun.yield %v : tensor<10x1xf32> }`
    """

    name = "minun.sum"
    lower = attr_def(IntegerAttr)
    upper = attr_def(IntegerAttr)
    result = result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def verify_(self) -> None:
        _verify_bounds(self)
        _verify_body(self, self.body, [i32], [self.result.type])

    def print(self, printer: Printer) -> None:
        _print_bounds(printer, self)
        printer.print_op_attributes(
            {k: v for k, v in self.attributes.items() if k not in ("lower", "upper")})
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> SumOp:
        arg, lo, hi = _parse_bounds(parser)
        extra = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        body = parser.parse_region([arg.resolve(i32)])
        return cls.create(attributes={"lower": lo, "upper": hi, **extra}, result_types=[ty],
                          regions=[body])


@irdl_op_definition
class LoopOp(IRDLOperation):
    """`loop(i = [a:b], H) e`: the body maps (i, carried values) to new carried values; the
    result is the final carried values. Left splices inside the body carry their target
    tensor as an extra value.

    `%h = minun.loop (%i = 0 to 16) iter(%hc = %h0) : tensor<32x1xf32> {
       ... minun.yield %n : tensor<32x1xf32> }`
    """

    name = "minun.loop"
    lower = attr_def(IntegerAttr)
    upper = attr_def(IntegerAttr)
    TS: ClassVar = RangeVarConstraint("TS", RangeOf(AnyAttr()))  # carried values = results
    inits = var_operand_def(TS)
    results_ = var_result_def(TS)
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def verify_(self) -> None:
        _verify_bounds(self)
        types = [v.type for v in self.inits]
        if not types:
            raise VerifyException(f"{self.name}: needs at least one carried value")
        _verify_body(self, self.body, [i32, *types], types)

    def print(self, printer: Printer) -> None:
        _print_bounds(printer, self)
        printer.print_string(" iter(")
        printer.print_list(
            zip(self.body.block.args[1:], self.inits),
            lambda p: (printer.print_ssa_value(p[0]), printer.print_string(" = "),
                       printer.print_ssa_value(p[1])),
        )
        printer.print_string(")")
        printer.print_op_attributes(
            {k: v for k, v in self.attributes.items() if k not in ("lower", "upper")})
        printer.print_string(" : ")
        printer.print_list([r.type for r in self.results], printer.print_attribute)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> LoopOp:
        arg, lo, hi = _parse_bounds(parser)
        parser.parse_keyword("iter")

        def pair():
            a = parser.parse_argument(expect_type=False)
            parser.parse_punctuation("=")
            return a, parser.parse_unresolved_operand()

        pairs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, pair)
        extra = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(types) != len(pairs):
            parser.raise_error(f"expected {len(pairs)} types, got {len(types)}")
        inits = [parser.resolve_operand(u, t) for (_, u), t in zip(pairs, types)]
        args = [arg.resolve(i32)] + [a.resolve(t) for (a, _), t in zip(pairs, types)]
        body = parser.parse_region(args)
        return cls.create(operands=inits, attributes={"lower": lo, "upper": hi, **extra},
                          result_types=types, regions=[body])


@irdl_op_definition
class IfNonNegOp(IRDLOperation):
    """`c >= 0 ? e1 : e2` on a scalar real or an integer. Only the taken branch runs in C;
    the batch evaluator runs both and selects per example (the branches are pure).

    `%r = minun.if_nonneg %c : i32 -> i32 { ... minun.yield %a : i32 } else { ... }`
    """

    name = "minun.if_nonneg"
    cond = operand_def()
    result = result_def()
    then_region = region_def("single_block")
    else_region = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def verify_(self) -> None:
        ty = self.cond.type
        if not (isinstance(ty, IntegerType) or
                (isinstance(ty, TensorType) and ty.element_count() == 1)):
            raise VerifyException(
                f"{self.name}: condition must be an integer or a one-element tensor, got {ty}")
        _verify_body(self, self.then_region, [], [self.result.type])
        _verify_body(self, self.else_region, [], [self.result.type])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.cond)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.cond.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)
        printer.print_string(" ")
        printer.print_region(self.then_region)
        printer.print_string(" else ")
        printer.print_region(self.else_region)

    @classmethod
    def parse(cls, parser: Parser) -> IfNonNegOp:
        cond = parser.parse_unresolved_operand()
        extra = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        cond_ty = parser.parse_type()
        parser.parse_punctuation("->")
        ty = parser.parse_type()
        then_r = parser.parse_region()
        parser.parse_keyword("else")
        else_r = parser.parse_region()
        return cls.create(operands=[parser.resolve_operand(cond, cond_ty)], attributes=extra,
                          result_types=[ty], regions=[then_r, else_r])


@irdl_op_definition
class CallOp(IRDLOperation):
    """`Name(e1, ..., en)`: an external function; the result has the type of e1.

    `%r = minun.call @Foo(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`
    """

    name = "minun.call"
    callee = attr_def(SymbolRefAttr)
    args = var_operand_def()
    result = result_def()
    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, results)"

    def verify_(self) -> None:
        if not self.args:
            raise VerifyException(f"{self.name} @{self.callee.string_value()}: needs arguments")
        if self.result.type != self.args[0].type:
            raise VerifyException(
                f"{self.name} @{self.callee.string_value()}: result type {self.result.type} "
                f"must be the first argument's type {self.args[0].type}"
            )


TREE_MODES = ("leq", "lt")
TREE_LOWERINGS = ("table", "branches")


def dense_ints(array: np.ndarray, width: int = 32) -> DenseIntOrFPElementsAttr:
    """A dense signed-integer attribute from raw bytes (printed as hex)."""
    dtype = {8: "<i1", 16: "<i2", 32: "<i4", 64: "<i8"}[width]
    data = np.asarray(array).astype(dtype)
    return DenseIntOrFPElementsAttr(tensor_of(data.shape, IntegerType(width)),
                                    BytesAttr(data.tobytes()))


@irdl_op_definition
class TreeEnsembleOp(IRDLOperation):
    """A sum of decision trees (ONNX TreeEnsembleClassifier/Regressor): for each tree,
    walk from its root; at internal node n go to `nodes[n, 1]` when
    `x[nodes[n, 0]] <= thresholds[n]` (mode "leq"; "<" for mode "lt"), else to
    `nodes[n, 2]`; a child c >= 0 is an internal node, c < 0 is leaf row -c-1 of `leaves`
    ([L, T]). The result (T values) is the sum over the trees of their leaf rows, in tree
    order, plus `base`. x is read flat (row-major). At L1 thresholds, leaves and base are
    f32; at L2 they are stored like the values they meet: thresholds in the input's
    storage, leaves and base in the result's (integers for fixed point, so the sum is an
    exact integer sum). `lowering` picks the C: a node table walked by a loop ("table")
    or nested if/else per tree ("branches"); without it, the one expected to take less
    flash (lowering/loops/trees.py).

    `%s = minun.tree_ensemble %x {mode = "leq", roots = dense<...>, nodes = dense<...>,
    thresholds = dense<...>, leaves = dense<...>, base = dense<...>}
    : tensor<64xf32> -> tensor<10xf32>`
    """

    name = "minun.tree_ensemble"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    mode = attr_def(StringAttr)
    roots = attr_def(DenseIntOrFPElementsAttr)
    nodes = attr_def(DenseIntOrFPElementsAttr)
    thresholds = attr_def(DenseIntOrFPElementsAttr)
    leaves = attr_def(DenseIntOrFPElementsAttr)
    base = attr_def(DenseIntOrFPElementsAttr)
    lowering = opt_attr_def(StringAttr)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: dense_to_numpy(getattr(self, k))
                for k in ("roots", "nodes", "thresholds", "leaves", "base")}

    def depth(self) -> int:
        """The longest root-to-leaf path, in internal nodes (-1 when a path cycles)."""
        a = self.arrays()
        nodes = a["nodes"].reshape(-1, 3)
        frontier = {int(r) for r in a["roots"].reshape(-1) if r >= 0}
        depth = 0
        while frontier:
            depth += 1
            if depth > len(nodes):
                return -1
            frontier = {int(c) for n in frontier for c in nodes[n, 1:] if c >= 0}
        return depth

    def verify_(self) -> None:
        where = self.name
        if self.mode.data not in TREE_MODES:
            raise VerifyException(f"{where}: mode must be one of {', '.join(TREE_MODES)}, "
                                  f"got '{self.mode.data}'")
        if self.lowering is not None and self.lowering.data not in TREE_LOWERINGS:
            raise VerifyException(f"{where}: lowering must be one of "
                                  f"{', '.join(TREE_LOWERINGS)}, got '{self.lowering.data}'")
        in_ty, out_ty = self.input.type, self.result.type
        assert isinstance(in_ty, TensorType) and isinstance(out_ty, TensorType)
        for k in ("roots", "nodes"):
            if not isinstance(getattr(self, k).get_element_type(), IntegerType):
                raise VerifyException(f"{where}: {k} must be integers")
        a = self.arrays()
        nodes, thr, leaves = a["nodes"], a["thresholds"], a["leaves"]
        n_in = int(np.prod(in_ty.get_shape()))
        out_shape = tuple(out_ty.get_shape())
        if nodes.ndim != 2 or nodes.shape[1] != 3:
            raise VerifyException(f"{where}: nodes must be Ix3 (feature, true, false), got "
                                  f"{shape_str(nodes.shape)}")
        i_count = nodes.shape[0]
        if thr.shape != (i_count,):
            raise VerifyException(f"{where}: {i_count} nodes but thresholds "
                                  f"{shape_str(thr.shape)}")
        n_out = int(np.prod(out_shape))
        if leaves.ndim != 2 or leaves.shape[1] != n_out:
            raise VerifyException(f"{where}: leaves {shape_str(leaves.shape)} do not match "
                                  f"the result {shape_str(out_shape)} (L x T)")
        if a["base"].shape != (n_out,):
            raise VerifyException(f"{where}: base {shape_str(a['base'].shape)} is not one "
                                  f"value per result element ({n_out})")
        if i_count and (nodes[:, 0].min() < 0 or nodes[:, 0].max() >= n_in):
            raise VerifyException(f"{where}: a feature index is outside the input's "
                                  f"{n_in} elements")
        refs = np.concatenate([nodes[:, 1:].reshape(-1), a["roots"].reshape(-1)])
        if refs.size and (refs.max() >= i_count or refs.min() < -leaves.shape[0]):
            raise VerifyException(f"{where}: a child or root refers to no node or leaf")
        if a["roots"].size == 0:
            raise VerifyException(f"{where}: no trees")
        if self.depth() < 0:
            raise VerifyException(f"{where}: the trees have a cycle")



@irdl_op_definition
class TFLiteLstmOp(IRDLOperation):
    """TFLite's fully-integer UNIDIRECTIONAL_SEQUENCE_LSTM (TFLM's 8x8->16 kernel), the
    whole sequence: input [B, T, I] ([T, B, I] with `time_major`), result [B, T, H],
    states starting at zero. `w` [4, H, I] and `r` [4, H, H] are the int8 weights and
    `bias` [4, H] the int32 biases of the gates i, f, c, o; `params` the kernel's scalars
    (formats/zero_skew/tflite_lstm.py, LstmParams.vector); `scales` the input's and the
    hidden state's scales (float32), whose zero points are in `params`. At L1 it computes
    the reals of those integers (its input quantized at its scale first); at L2 it is
    zero-skew only: int8 in and out at exactly those (scale, zero point)s.

    `%y = minun.tflite_lstm %x {w = dense<...>, r = dense<...>, bias = dense<...>,
    params = dense<...>, scales = dense<...>} : tensor<1x8x3xf32> -> tensor<1x8x6xf32>`
    """

    name = "minun.tflite_lstm"
    # TFLite's integers compile onto this representation only; a compile given no --repr
    # uses it (driver.implied_representation)
    ONLY_REPRESENTATION: ClassVar[str] = "zero-skew"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    w = attr_def(DenseIntOrFPElementsAttr)
    r = attr_def(DenseIntOrFPElementsAttr)
    bias = attr_def(DenseIntOrFPElementsAttr)
    params = attr_def(DenseIntOrFPElementsAttr)
    scales = attr_def(DenseIntOrFPElementsAttr)
    time_major = opt_attr_def(UnitAttr)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def lstm_params(self):
        from minun_mlir.formats.zero_skew.tflite_lstm import LstmParams

        return LstmParams.from_arrays(dense_to_numpy(self.w), dense_to_numpy(self.r),
                                      dense_to_numpy(self.bias), dense_to_numpy(self.params))

    def verify_(self) -> None:
        from minun_mlir.formats.zero_skew.tflite_lstm import VECTOR_LENGTH

        where = self.name
        w, r, b = (dense_to_numpy(a) for a in (self.w, self.r, self.bias))
        x, y = list(self.input.type.get_shape()), list(self.result.type.get_shape())
        if w.ndim != 3 or w.shape[0] != 4 or r.shape != (4, w.shape[1], w.shape[1]) or \
                b.shape != (4, w.shape[1]):
            raise VerifyException(f"{where}: w must be 4xHxI, r 4xHxH and bias 4xH, got "
                                  f"{shape_str(w.shape)}, {shape_str(r.shape)}, "
                                  f"{shape_str(b.shape)}")
        if len(x) != 3 or x[2] != w.shape[2] or y != [*x[:2], w.shape[1]]:
            raise VerifyException(f"{where}: input {shape_str(x)} and result {shape_str(y)} "
                                  f"do not match weights {shape_str(w.shape)}")
        if dense_to_numpy(self.params).shape != (VECTOR_LENGTH,) or \
                dense_to_numpy(self.scales).shape != (2,):
            raise VerifyException(f"{where}: params must hold {VECTOR_LENGTH} integers and "
                                  "scales 2")


Minun = Dialect(
    "minun",
    [
        InputOp, ParamOp, ConstantOp, InitOp,
        AddOp, SubOp, HadamardOp, DivOp, MaxOp, MinOp, BiasAddOp, BiasSubOp,
        MatMulOp, SparseMatMulOp, ScalarMulOp,
        NegOp, ReluOp, Relu6Op, ExpOp, TanhOp, SigmoidOp, ErfOp, ClipOp, LeakyReluOp,
        SoftmaxOp, LogSoftmaxOp, ReverseOp, NormaliseL2Op, ArgMaxOp, SgnOp,
        TransposeOp, ReshapeOp, SpliceOp, SpliceAssignOp, IndexOp, ConcatOp,
        Conv2DOp, MBConvOp, MaxPoolOp, AvgPoolOp, GlobalAvgPoolOp, BatchNormOp,
        YieldOp, SumOp, LoopOp, IfNonNegOp, CallOp, TreeEnsembleOp, TFLiteLstmOp,
    ],
    [],
)


# --------------------------------------------------------------------------------------
# The canonicalization patterns: they remove work the frontends leave behind (ONNX layout
# transposes that cancel, SeeDot double negation, no-op reshapes); the ops' traits above
# register them with xDSL's `canonicalize` pass
# --------------------------------------------------------------------------------------


class ComposeTransposes(RewritePattern):
    """transpose(transpose(x, p), q) -> transpose(x, p∘q), or x when that is the identity."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, TransposeOp):
            return
        p, q = ints(inner.perm), ints(op.perm)
        composed = [p[i] for i in q]
        if composed == list(range(len(composed))):
            rewriter.replace(op, [], [inner.input])
        else:
            rewriter.replace(op, TransposeOp.make(
                inner.input, perm=i64_array(composed)))


class NegNeg(RewritePattern):
    """-(-x) -> x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: NegOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if isinstance(inner, NegOp):
            rewriter.replace(op, [], [inner.input])


class IdentityReshape(RewritePattern):
    """A reshape to the same type with the identity order does nothing."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        order = ints(op.order)
        if op.input.type == op.result.type and order == tuple(range(len(order))):
            rewriter.replace(op, [], [op.input])
