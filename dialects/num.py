"""The numeric (L2) dialect: values typed by a number representation, every shift and every
widening explicit.

Types: `!num.fixed<bits, scale>` (a bits-wide two's complement integer q standing for
q / 2^scale); `f32` is the float32 representation. Tensors carry them as element types:
`tensor<10x1x!num.fixed<16, 12>>`.

The ops here say exactly which integers they compute (docs/numerics.md,
minun_mlir/formats/fixed/arith.py). Which ops an L2 program uses follows one rule:

- An op is a `num` op when its result depends on how numbers are encoded: arithmetic
  (rescale, add, mul, matmul, exp, ...), comparisons and selections on stored values
  (relu, max, min, maxpool, argmax, sgn), bounds that must be encoded (relu6, clip) and
  negation, which can overflow (neg). Their operands must be L2 number types
  (`!num.fixed` or `f32`).
- Pure data movement (reshape, transpose, splice, index, reverse, concat, splice_assign)
  and structure (init, loop, sum, if_nonneg, call, yield) stay `minun` ops, which are
  generic in the element type: they move stored values without looking at them.
"""

from __future__ import annotations

import functools
import math
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    FloatData,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    i32,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AnyAttr,
    EqAttrConstraint,
    IRDLOperation,
    MessageConstraint,
    VarConstraint,
    attr_def,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from minun_mlir.dialects import minun
from minun_mlir.dialects.minun import shape_str, tensor_of
from minun_mlir.formats.fixed.arith import Overflow, Rounding, SeeDotExp


class ExpMethod(StrEnum):
    """How num.exp computes: Shiftry's fixed-scale tables, SeeDot's two profiled tables,
    or float32 expf."""

    SHIFTRY = "shiftry"
    SEEDOT = "seedot"
    FLOAT = "float"
    POSIT = "posit"  # posit<n, es>: e^x correctly rounded (formats/posit/arith.py)
    TABLE = "table"  # zero-skew int8: a 256-entry table from the affine types (affine.py)


class RequantizeMode(StrEnum):
    """How num.requantize rounds: TFLite's fixed-point MultiplyByQuantizedMultiplier (the
    default, for models we quantize), or onnxruntime's float32 multiply with round half to
    even, emulated with integers (for pre-quantized models, to match onnxruntime's
    integers exactly)."""

    TFLITE = "tflite"
    ONNXRUNTIME = "onnxruntime"


# Enum attributes: `#num<rounding trunc>`, `#num<overflow saturate>`, `#num<exp_method
# seedot>`; `.data` is the member (a str: `op.rounding.data == "trunc"`). The modes
# themselves are defined once, in formats/fixed/arith.py (Rounding, Overflow).


@irdl_attr_definition
class RoundingAttr(EnumAttribute[Rounding], SpacedOpaqueSyntaxAttribute):
    """A rounding mode: `#num<rounding trunc|floor|nearest>`."""

    name = "num.rounding"


@irdl_attr_definition
class OverflowAttr(EnumAttribute[Overflow], SpacedOpaqueSyntaxAttribute):
    """An overflow mode: `#num<overflow wrap|saturate>`."""

    name = "num.overflow"


@irdl_attr_definition
class ExpMethodAttr(EnumAttribute[ExpMethod], SpacedOpaqueSyntaxAttribute):
    """num.exp's method: `#num<exp_method shiftry|seedot|float>`."""

    name = "num.exp_method"


@irdl_attr_definition
class RequantizeModeAttr(EnumAttribute[RequantizeMode], SpacedOpaqueSyntaxAttribute):
    """num.requantize's mode: `#num<requantize_mode tflite|onnxruntime>`."""

    name = "num.requantize_mode"


def rounding_attr(mode: str) -> RoundingAttr:
    return RoundingAttr(Rounding(mode))


def overflow_attr(mode: str) -> OverflowAttr:
    return OverflowAttr(Overflow(mode))


@irdl_attr_definition
class FixedType(ParametrizedAttribute, TypeAttribute):
    """`!num.fixed<bits, scale>`: real = integer / 2^scale."""

    name = "num.fixed"
    bits: IntAttr
    scale: IntAttr

    def __init__(self, bits: int, scale: int):
        super().__init__(IntAttr(bits), IntAttr(scale))

    @property
    def width(self) -> int:
        return self.bits.data

    @property
    def frac(self) -> int:
        return self.scale.data

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.bits.data}, {self.scale.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr, IntAttr]:
        with parser.in_angle_brackets():
            bits = parser.parse_integer()
            parser.parse_punctuation(",")
            scale = parser.parse_integer(allow_negative=True)
        return IntAttr(bits), IntAttr(scale)

    def verify(self) -> None:
        if self.bits.data not in (8, 16, 32, 64):
            raise VerifyException(f"!num.fixed: bits must be 8, 16, 32 or 64, got {self.bits.data}")


POSIT_WIDTHS = (*range(8, 17), 32)  # n of posit<n, es>


@irdl_attr_definition
class PositType(ParametrizedAttribute, TypeAttribute):
    """`!num.posit<n, es>`: an n-bit posit pattern with es exponent bits (docs/numerics.md,
    "Posits"); stored as an n-bit two's complement integer, whose order is the posits'."""

    name = "num.posit"
    nbits: IntAttr
    es: IntAttr

    def __init__(self, n: int, es: int):
        super().__init__(IntAttr(n), IntAttr(es))

    @property
    def width(self) -> int:
        return self.nbits.data

    @property
    def exponent_bits(self) -> int:
        return self.es.data

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.nbits.data}, {self.es.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr, IntAttr]:
        with parser.in_angle_brackets():
            n = parser.parse_integer()
            parser.parse_punctuation(",")
            es = parser.parse_integer()
        return IntAttr(n), IntAttr(es)

    @property
    def storage_width(self) -> int:
        """The C integer a pattern is stored in (sign-extended from n bits): 8, 16 or 32."""
        n = self.nbits.data
        return 8 if n <= 8 else 16 if n <= 16 else 32

    def verify(self) -> None:
        if self.nbits.data not in POSIT_WIDTHS or not 0 <= self.es.data <= 2:
            raise VerifyException(f"!num.posit: n must be 8..16 or 32 and es 0..2, got "
                                  f"<{self.nbits.data}, {self.es.data}>")


def _float_text(x: float) -> str:
    """A float64 as an MLIR float literal that parses back to the same double."""
    text = repr(float(x))
    if "." not in text and "inf" not in text and "nan" not in text:
        text = text.replace("e", ".0e") if "e" in text else text + ".0"
    return text


@irdl_attr_definition
class AffineType(ParametrizedAttribute, TypeAttribute):
    """`!num.affine<bits, scale, zero_point>`: a bits-wide two's complement integer q
    standing for scale * (q - zero_point) (the zero-skew representation, TFLite's
    affine quantization; docs/numerics.md). 8-bit values, 32-bit accumulators (zero
    point 0) and 16-bit exact differences (zero point 0: a variable minus a constant on its
    grid, formats/zero_skew/representation.py); the scale is a positive float64, printed
    so that it parses back exactly."""

    name = "num.affine"
    bits: IntAttr
    scale: FloatData
    zero_point: IntAttr

    def __init__(self, bits: int, scale: float, zero_point: int):
        super().__init__(IntAttr(bits), FloatData(float(scale)), IntAttr(zero_point))

    @property
    def width(self) -> int:
        return self.bits.data

    @property
    def real_scale(self) -> float:
        return self.scale.data

    @property
    def zp(self) -> int:
        return self.zero_point.data

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            f"<{self.bits.data}, {_float_text(self.scale.data)}, {self.zero_point.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr, FloatData, IntAttr]:
        with parser.in_angle_brackets():
            bits = parser.parse_integer()
            parser.parse_punctuation(",")
            scale = parser.parse_number()
            parser.parse_punctuation(",")
            zp = parser.parse_integer(allow_negative=True)
        return IntAttr(bits), FloatData(float(scale)), IntAttr(zp)

    def verify(self) -> None:
        bits, scale, zp = self.bits.data, self.scale.data, self.zero_point.data
        if bits not in (8, 16, 32):
            raise VerifyException(f"!num.affine: bits must be 8, 16 or 32, got {bits}")
        if not (math.isfinite(scale) and scale > 0):
            raise VerifyException(f"!num.affine: scale must be a positive finite real, got "
                                  f"{scale}")
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        if bits != 8 and zp != 0:
            raise VerifyException(f"!num.affine: a {bits}-bit value has zero point 0, "
                                  f"got {zp}")
        if not lo <= zp <= hi:
            raise VerifyException(f"!num.affine: zero point {zp} outside [{lo}, {hi}]")


def affine(value: SSAValue) -> AffineType | None:
    el = element(value)
    return el if isinstance(el, AffineType) else None


def _same_shape(var: VarConstraint) -> MessageConstraint:
    """A tensor whose shape is the constraint variable `var` (input and result of an op
    that does not change shapes)."""
    return MessageConstraint(TensorType.constr(shape=var), "shape must not change")


def element(value: SSAValue) -> Attribute:
    ty = value.type
    return ty.element_type if isinstance(ty, TensorType) else ty


def fixed(value: SSAValue) -> FixedType | None:
    el = element(value)
    return el if isinstance(el, FixedType) else None


def storage_type(el: Attribute) -> IntegerType:
    """The integer a fixed-point value, a posit pattern or a bfloat16 key is stored in."""
    if isinstance(el, BFloat16Type):
        return integer_type(16)
    if isinstance(el, PositType):
        return integer_type(el.storage_width)
    assert isinstance(el, (FixedType, AffineType))
    return integer_type(el.width)


@functools.cache  # types are immutable; quantize and the verifier ask for the same few
def integer_type(width: int) -> IntegerType:
    """`i<width>` (signless), made once."""
    return IntegerType(width)


def integer_stored(el: Attribute) -> bool:
    """Whether a representation's values are stored as integers (all but f32)."""
    return isinstance(el, (FixedType, PositType, BFloat16Type, AffineType))


def _shape(value: SSAValue) -> tuple[int, ...]:
    ty = value.type
    return tuple(ty.get_shape()) if isinstance(ty, TensorType) else ()


def _is_repr(el: Attribute) -> bool:
    return isinstance(el, (FixedType, Float32Type, PositType, BFloat16Type, AffineType))


def _check_repr(op: Operation, *values: SSAValue) -> None:
    for v in values:
        if not _is_repr(element(v)):
            raise VerifyException(
                f"{op.name}: operands must be !num.fixed, !num.posit, !num.affine, f32 or bf16 "
                f"tensors, got "
                f"{v.type}")


def _same_kind(op: Operation, *values: SSAValue) -> bool:
    """True for fixed-point operands (of any scales), False for float32 or posits (one
    element type); mixing representations is an error."""
    kinds = {type(element(v)) if isinstance(element(v), (FixedType, AffineType)) else element(v)
             for v in values}
    if len(kinds) != 1:
        raise VerifyException(f"{op.name}: cannot mix number representations")
    return isinstance(element(values[0]), FixedType)


def _expect_result(op: Operation, shape: tuple[int, ...], el_check) -> None:
    res = op.results[0]
    if _shape(res) != tuple(shape):
        raise VerifyException(
            f"{op.name}: result shape {shape_str(_shape(res))} should be {shape_str(shape)}")
    el_check(element(res))


# --------------------------------------------------------------------------------------
# Leaves
# --------------------------------------------------------------------------------------


@irdl_op_definition
class ParamOp(IRDLOperation):
    """A quantized parameter: stored integers (a dense iN attribute, printed as hex when
    large) typed by the representation. `sparse` marks the left operand of a sparse matmul.

    `%w = num.param "W" dense<...> : tensor<10x64xi16> -> tensor<10x64x!num.fixed<16, 14>>`

    Per-channel scales (`quantize{per-channel=true}`): `channel_scales` gives the scale of
    each index of axis `channel_axis` (a weight's output channels), the element type the
    lowest of them; such a parameter feeds only `num.matmul` / `num.conv2d` ops with
    `channel_shifts`, which bring every channel to their result's one scale.

    `%w = num.param "W" {channel_axis = 1 : i64, channel_scales = array<i64: 9, 7>}
           dense<...> : tensor<64x2xi8> -> tensor<64x2x!num.fixed<8, 7>>`

    Zero-skew per-channel weights (`quantize{repr=zero-skew per-channel=true}`):
    `channel_real_scales` gives the real scale of each index of `channel_axis` (zero point
    0), the element type the largest of them; an int8 weight feeds matmul / conv2d, an
    int32 bias (at the products' scales) an add or sub of their accumulator.

    Packed 4-bit weights (`quantize{weight_bits=4}`, formats/int4/weights.py):
    `packed_bits = 4` on a per-channel 8-bit weight whose codes all lie in [-8, 7];
    lower-to-loops stores it two codes per byte.
    """

    name = "num.param"
    sym_name = attr_def(StringAttr)
    value = attr_def(DenseIntOrFPElementsAttr)
    sparse = opt_attr_def(UnitAttr)
    channel_axis = opt_attr_def(IntegerAttr)
    channel_scales = opt_attr_def(DenseArrayBase)
    channel_real_scales = opt_attr_def(ArrayAttr)
    packed_bits = opt_attr_def(IntegerAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @staticmethod
    def build_param(name: str, stored: np.ndarray, ty: TensorType, sparse: bool = False
                    ) -> ParamOp:
        el = ty.element_type
        if integer_stored(el):
            width = storage_type(el).width.data
            dtype = {8: "<i1", 16: "<i2", 32: "<i4", 64: "<i8"}[width]
            data = np.asarray(stored, dtype=dtype, order="C")
            value = DenseIntOrFPElementsAttr(tensor_of(data.shape, integer_type(width)),
                                             BytesAttr(data.tobytes()))
        else:
            value = minun.dense_f32(stored)
        attrs: dict[str, Attribute] = {"sym_name": StringAttr(name), "value": value}
        if sparse:
            attrs["sparse"] = UnitAttr()
        return ParamOp.create(attributes=attrs, result_types=[ty])

    def array(self) -> np.ndarray:
        return minun.dense_to_numpy(self.value)

    def verify_(self) -> None:
        _check_repr(self, self.result)
        if tuple(self.value.get_shape()) != _shape(self.result):
            raise VerifyException(f"{self.name}: value and result shapes differ")
        el = element(self.result)
        want = storage_type(el) if integer_stored(el) else el
        if self.value.get_element_type() != want:
            raise VerifyException(
                f"{self.name} \"{self.sym_name.data}\": values must be {want} for {el}")
        self._verify_channels()
        self._verify_packed()

    def _verify_packed(self) -> None:
        """packed_bits = 4: a per-channel 8-bit weight whose codes fit in 4 bits."""
        if self.packed_bits is None:
            return
        where = f"{self.name} \"{self.sym_name.data}\""
        bits = self.packed_bits.value.data
        if bits != 4 or self.channel_axis is None or element(self.result).width != 8:
            raise VerifyException(f"{where}: packed_bits must be 4, on a per-channel "
                                  "8-bit weight")
        values = self.array()
        if values.size and not (values.min() >= -8 and values.max() <= 7):
            raise VerifyException(f"{where}: packed_bits = 4 but a code lies outside "
                                  "[-8, 7]")

    def scales(self) -> list[int] | None:
        """The per-channel scales, or None for one scale (the element type's)."""
        return None if self.channel_scales is None else minun.ints(self.channel_scales)

    def real_scales(self) -> list[float] | None:
        """The per-channel real scales of a zero-skew parameter, or None."""
        if self.channel_real_scales is None:
            return None
        return [float(a.value.data) for a in self.channel_real_scales.data]

    def _verify_channels(self) -> None:
        where = f"{self.name} \"{self.sym_name.data}\""
        if self.channel_scales is not None and self.channel_real_scales is not None:
            raise VerifyException(f"{where}: channel_scales (fixed point) and "
                                  "channel_real_scales (zero-skew) exclude each other")
        given = self.channel_scales or self.channel_real_scales
        if (self.channel_axis is None) != (given is None):
            raise VerifyException(f"{where}: channel_axis and channel_scales go together")
        if self.channel_real_scales is not None:
            self._verify_real_channels(where)
        if self.channel_scales is None:
            return
        el, shape = element(self.result), _shape(self.result)
        axis = self.channel_axis.value.data
        if not isinstance(el, FixedType) or self.sparse is not None:
            raise VerifyException(f"{where}: per-channel scales need a dense !num.fixed "
                                  "parameter")
        if not 0 <= axis < len(shape):
            raise VerifyException(f"{where}: channel_axis {axis} outside a "
                                  f"{len(shape)}-D tensor")
        scales = self.scales()
        if len(scales) != shape[axis]:
            raise VerifyException(f"{where}: {len(scales)} channel scales for "
                                  f"{shape[axis]} channels (axis {axis})")
        if min(scales) != el.frac:
            raise VerifyException(f"{where}: the element scale must be the lowest channel "
                                  f"scale, {min(scales)}, got {el.frac}")
        for use in self.result.uses:
            user = use.operation
            if not isinstance(user, (MatMulOp, Conv2DOp)) or user.channel_shifts is None:
                raise VerifyException(f"{where}: a parameter with per-channel scales may "
                                      f"only feed num.matmul / num.conv2d with "
                                      f"channel_shifts, not {user.name}")

    def _verify_real_channels(self, where: str) -> None:
        el, shape = element(self.result), _shape(self.result)
        axis = self.channel_axis.value.data
        if not isinstance(el, AffineType) or el.zp != 0 or self.sparse is not None:
            raise VerifyException(f"{where}: per-channel real scales need a dense "
                                  "!num.affine parameter with zero point 0")
        if not 0 <= axis < len(shape):
            raise VerifyException(f"{where}: channel_axis {axis} outside a "
                                  f"{len(shape)}-D tensor")
        scales = self.real_scales()
        if not all(isinstance(a, FloatAttr) for a in self.channel_real_scales.data) or \
                len(scales) != shape[axis] or not all(v > 0 for v in scales):
            raise VerifyException(f"{where}: channel_real_scales must be {shape[axis]} "
                                  f"positive floats (axis {axis})")
        if max(scales) != el.real_scale:
            raise VerifyException(f"{where}: the element scale must be the largest channel "
                                  f"scale, {max(scales)!r}, got {el.real_scale!r}")
        for use in self.result.uses:
            user = use.operation
            ok = (MatMulOp, Conv2DOp) if el.width == 8 else (AddOp, SubOp)
            if not isinstance(user, ok):
                raise VerifyException(f"{where}: a zero-skew per-channel parameter of "
                                      f"{el.width} bits may not feed {user.name}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.sym_name.data)
        if self.sparse is not None:
            printer.print_string(" sparse")
        printer.print_op_attributes(
            {k: v for k, v in self.attributes.items() if k not in ("sym_name", "value",
                                                                   "sparse")})
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ParamOp:
        name = parser.parse_str_literal()
        sparse = parser.parse_optional_keyword("sparse") is not None
        extra = parser.parse_optional_attr_dict()
        value = parser.parse_attribute()
        parser.parse_punctuation("->")
        ty = parser.parse_type()
        attrs = {"sym_name": StringAttr(name), "value": value, **extra}
        if sparse:
            attrs["sparse"] = UnitAttr()
        return cls.create(attributes=attrs, result_types=[ty])


@irdl_op_definition
class InputOp(IRDLOperation):
    """The model input, already in the representation (the C entry point takes integers
    at this scale; a float wrapper quantizes with the same rounding).

    `%x = num.input "X" : tensor<64x1x!num.fixed<16, 11>>`
    """

    name = "num.input"
    sym_name = attr_def(StringAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$sym_name attr-dict `:` type($result)"

    def verify_(self) -> None:
        _check_repr(self, self.result)


# --------------------------------------------------------------------------------------
# Rescale: the only op that changes a value's scale or bitwidth by itself
# --------------------------------------------------------------------------------------


# A rescale by 64 or more shifts is still defined (every bit shifted out: 0, -1 for floor
# of a negative, or the saturated bound); beyond this the scales are nonsense.
MAX_SHIFT = 1024


@irdl_op_definition
class RescaleOp(IRDLOperation):
    """Change scale and/or bitwidth: y = narrow(round(x / 2^(s_in - s_out))). A negative
    shift multiplies. Rounding and overflow are explicit attributes.

    `%y = num.rescale %x {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>}
           : tensor<2x1x!num.fixed<32, 27>> -> tensor<2x1x!num.fixed<16, 12>>`
    """

    name = "num.rescale"
    S: ClassVar = VarConstraint("S", AnyAttr())
    input = operand_def(_same_shape(S))
    rounding = attr_def(RoundingAttr)
    overflow = attr_def(OverflowAttr)
    result = result_def(_same_shape(S))
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @staticmethod
    def make(value: SSAValue | Operation, to: FixedType, rounding: str, overflow: str
             ) -> RescaleOp:
        value = SSAValue.get(value)
        return RescaleOp.create(
            operands=[value],
            attributes={"rounding": rounding_attr(rounding), "overflow": overflow_attr(overflow)},
            result_types=[tensor_of(_shape(value), to)])

    @property
    def shift(self) -> int:
        return fixed(self.input).frac - fixed(self.result).frac

    def verify_(self) -> None:
        a, b = fixed(self.input), fixed(self.result)
        if a is None or b is None:
            raise VerifyException(f"{self.name}: operand and result must be !num.fixed tensors")
        if abs(a.frac - b.frac) > MAX_SHIFT:
            raise VerifyException(f"{self.name}: shift {a.frac - b.frac} is out of range "
                                  f"(at most {MAX_SHIFT} either way)")


@irdl_op_definition
class RequantizeOp(IRDLOperation):
    """Change the scale and zero point of a zero-skew (affine) value, TFLite's output
    stage: `y = clamp(zp_out + MBQM((x - zp_in) * 2^left_shift, multiplier, shift))` with
    gemmlowp's rounding (formats/zero_skew/arith.py), clamped to the result's bits. `multiplier`
    and `shift` are QuantizeMultiplier(s_in / (s_out * 2^left_shift)); the verifier checks
    them against the types, so the IR shows the integers the C uses.

    `%y = num.requantize %acc {multiplier = 1518500250 : i64, shift = -7 : i64,
           left_shift = 0 : i64} : tensor<4x1x!num.affine<32, 1.2e-05, 0>>
           -> tensor<4x1x!num.affine<8, 0.0039, -128>>`

    Per channel (the int32 accumulator of a per-channel weight, TFLite's per-channel
    output stage): `channel_axis`, `channel_real_scales` (the input's real scale of each
    index of that axis, its type's scale nominal: the largest), and
    `channel_multipliers` / `channel_shifts` = QuantizeMultiplier(s_c / s_out) in place of
    `multiplier` / `shift`; zero points 0 in, left shift 0.

    `mode = #num<requantize_mode onnxruntime>` (pre-quantized models), emulated with
    integers: of an int32 accumulator (zero point 0, left shift 0) to int8, onnxruntime's
    float32 requantization `y = clamp(zp_out + RNE(float32(x) * scale))` with scale =
    float32(float32(s_in) / s_out) (affine.ort_mul), `multiplier` and `shift` (or the
    channel_ ones) the scale's 24-bit significand and exponent,
    affine.ort_multiplier(s_in, s_out); of an int8 value to int8, its DequantizeLinear
    then QuantizeLinear, `y = clamp(zp_out + RNE(float32(float32((x - zp_in) s_in) /
    s_out)))` (affine.ort_requantize8), `multiplier` and `shift` s_out's float32
    significand and exponent (affine.f32_parts; s_in's come from the input type).
    """

    name = "num.requantize"
    S: ClassVar = VarConstraint("S", AnyAttr())
    input = operand_def(_same_shape(S))
    multiplier = opt_attr_def(IntegerAttr)
    shift = opt_attr_def(IntegerAttr)
    left_shift = attr_def(IntegerAttr)
    channel_axis = opt_attr_def(IntegerAttr)
    channel_real_scales = opt_attr_def(ArrayAttr)
    channel_multipliers = opt_attr_def(DenseArrayBase)
    channel_shifts = opt_attr_def(DenseArrayBase)
    mode = opt_attr_def(RequantizeModeAttr)
    # a mean's count n folded into the multiplier as TFLM's int8 MEAN does
    # (affine.fold_divisor), or onnxruntime's average pools (MLAS: the scale
    # float32(s_in / float32(s_out n))): the requantized sum is the requantized mean
    divisor = opt_attr_def(IntegerAttr)
    # a positive real constant c folded into the multiplier, QuantizeMultiplier(c s_in /
    # s_out): the requantized value is c times the input's (a SeeDot `c * (x^T x)`)
    factor = opt_attr_def(FloatAttr)
    result = result_def(_same_shape(S))
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @staticmethod
    def _pair(s_in: float, s_out: float, left_shift: int, mode: RequantizeMode,
              width: int = 32, divisor: int | None = None, factor: float | None = None
              ) -> tuple[int, int]:
        from minun_mlir.formats.zero_skew.arith import (
            f32_parts,
            fold_divisor,
            ort_multiplier,
            quantize_multiplier,
        )

        if mode == RequantizeMode.ONNXRUNTIME:
            if divisor is not None:  # MLAS's average pool: float32(s_in / float32(s_out n))
                s_out = float(np.float32(s_out) * np.float32(divisor))
            return ort_multiplier(s_in, s_out) if width == 32 else f32_parts(s_out)
        if factor is not None:
            s_in = factor * s_in
        pair = quantize_multiplier(s_in / (s_out * 2.0**left_shift))
        return pair if divisor is None else fold_divisor(*pair, divisor)

    @staticmethod
    def _mode_attrs(mode: RequantizeMode) -> dict[str, Attribute]:
        return {} if mode == RequantizeMode.TFLITE else {"mode": RequantizeModeAttr(mode)}

    @staticmethod
    def make(value: SSAValue | Operation, to: AffineType, left_shift: int = 0,
             mode: RequantizeMode = RequantizeMode.TFLITE, divisor: int | None = None,
             factor: float | None = None) -> RequantizeOp:
        value = SSAValue.get(value)
        a = affine(value)
        m, s = RequantizeOp._pair(a.real_scale, to.real_scale, left_shift, mode, a.width,
                                  divisor, factor)
        extra = {} if divisor is None else {"divisor": IntegerAttr(divisor, 64)}
        if factor is not None:
            extra["factor"] = FloatAttr(factor, 64)
        return RequantizeOp.create(
            operands=[value],
            attributes={"multiplier": IntegerAttr(m, 64), "shift": IntegerAttr(s, 64),
                        "left_shift": IntegerAttr(left_shift, 64),
                        **RequantizeOp._mode_attrs(mode), **extra},
            result_types=[tensor_of(_shape(value), to)])

    @staticmethod
    def make_channels(value: SSAValue | Operation, to: AffineType, axis: int,
                      scales: list[float], mode: RequantizeMode = RequantizeMode.TFLITE
                      ) -> RequantizeOp:
        value = SSAValue.get(value)
        pairs = [RequantizeOp._pair(s, to.real_scale, 0, mode) for s in scales]
        return RequantizeOp.create(
            operands=[value],
            attributes={"left_shift": IntegerAttr(0, 64), "channel_axis": IntegerAttr(axis, 64),
                        "channel_real_scales": real_scales_attr(scales),
                        "channel_multipliers": DenseArrayBase.from_list(
                            IntegerType(64), [m for m, _ in pairs]),
                        "channel_shifts": DenseArrayBase.from_list(
                            IntegerType(64), [k for _, k in pairs]),
                        **RequantizeOp._mode_attrs(mode)},
            result_types=[tensor_of(_shape(value), to)])

    def requantize_mode(self) -> RequantizeMode:
        return RequantizeMode.TFLITE if self.mode is None else self.mode.data

    def channels(self) -> tuple[int, list[int], list[int]] | None:
        """(axis, multipliers, shifts) of a per-channel requantization, or None."""
        if self.channel_axis is None:
            return None
        return (self.channel_axis.value.data, list(minun.ints(self.channel_multipliers)),
                list(minun.ints(self.channel_shifts)))

    def verify_(self) -> None:
        a, b = affine(self.input), affine(self.result)
        if a is None or b is None:
            raise VerifyException(f"{self.name}: operand and result must be !num.affine "
                                  "tensors")
        left = self.left_shift.value.data
        if not 0 <= left <= (24 if a.width == 8 else 0):
            raise VerifyException(f"{self.name}: left_shift must be in 0..24 for an 8-bit "
                                  f"operand and 0 for a 32-bit one, got {left}")
        mode = self.requantize_mode()
        if mode == RequantizeMode.ONNXRUNTIME and (b.width != 8 or left != 0 or (
                a.width == 32 and a.zp != 0)):
            raise VerifyException(f"{self.name}: mode onnxruntime requantizes an int32 "
                                  f"accumulator (zero point 0) or an int8 value to 8 bits "
                                  f"with no left shift, got {a} -> {b}")
        per_channel = (self.channel_axis, self.channel_real_scales,
                       self.channel_multipliers, self.channel_shifts)
        if any(v is not None for v in per_channel):
            self._verify_channels(a, b, left, mode)
            return
        if self.multiplier is None or self.shift is None:
            raise VerifyException(f"{self.name}: needs multiplier and shift (or the "
                                  "channel_ attributes)")
        divisor = None if self.divisor is None else self.divisor.value.data
        if divisor is not None and (divisor < 1 or left or mode == RequantizeMode.ONNXRUNTIME
                                    and a.width != 32):
            raise VerifyException(f"{self.name}: a divisor is a count >= 1 of a requantization "
                                  "with no left shift (onnxruntime mode: of an int32 sum)")
        factor = None if self.factor is None else self.factor.value.data
        if factor is not None and (not (factor > 0 and math.isfinite(factor)) or left or
                                   mode == RequantizeMode.ONNXRUNTIME):
            raise VerifyException(f"{self.name}: a factor is a positive finite real of a "
                                  "TFLite-mode requantization with no left shift")
        want = self._pair(a.real_scale, b.real_scale, left, mode, a.width, divisor, factor)
        got = (self.multiplier.value.data, self.shift.value.data)
        if got != want:
            how = (f"float32({b.real_scale!r}) as m 2^e" if mode == RequantizeMode.ONNXRUNTIME
                   and a.width == 8 else
                   f"onnxruntime's float32({a.real_scale!r} / {b.real_scale!r}) as m 2^e"
                   if mode == RequantizeMode.ONNXRUNTIME else
                   f"QuantizeMultiplier({a.real_scale!r} / ({b.real_scale!r} * 2^{left}))"
                   if factor is None else
                   f"QuantizeMultiplier({factor!r} * {a.real_scale!r} / {b.real_scale!r})")
            raise VerifyException(
                f"{self.name}: multiplier and shift must be {want[0]} and {want[1]} "
                f"({how}), got {got[0]} and {got[1]}")

    def _verify_channels(self, a: AffineType, b: AffineType, left: int,
                         mode: RequantizeMode) -> None:
        if None in (self.channel_axis, self.channel_real_scales, self.channel_multipliers,
                    self.channel_shifts) or self.multiplier is not None or \
                self.shift is not None:
            raise VerifyException(f"{self.name}: per channel needs channel_axis, "
                                  "channel_real_scales, channel_multipliers and "
                                  "channel_shifts, and no multiplier or shift")
        if a.zp != 0 or left != 0:
            raise VerifyException(f"{self.name}: per channel needs an input zero point 0 "
                                  "and left_shift 0")
        shape = _shape(self.input)
        axis = self.channel_axis.value.data
        if not 0 <= axis < len(shape):
            raise VerifyException(f"{self.name}: channel_axis {axis} outside a "
                                  f"{len(shape)}-D tensor")
        scales = [float(v.value.data) for v in self.channel_real_scales.data]
        if len(scales) != shape[axis] or max(scales) != a.real_scale:
            raise VerifyException(f"{self.name}: {shape[axis]} channel scales whose "
                                  f"largest is the input's scale {a.real_scale!r}")
        want = [self._pair(s, b.real_scale, 0, mode) for s in scales]
        _, ms, ks = self.channels()
        if list(zip(ms, ks)) != want:
            raise VerifyException(f"{self.name}: channel multipliers and shifts must be "
                                  f"{want} (mode {mode}, s_c / {b.real_scale!r})")


def real_scales_attr(scales) -> ArrayAttr:
    """Per-channel real scales as an array of f64 attributes (printed so that they parse
    back to the same doubles)."""
    return ArrayAttr([FloatAttr(float(v), 64) for v in scales])


@irdl_op_definition
class ConvertOp(IRDLOperation):
    """Change the format of a posit value (posit<n, es> -> posit<m, es'>): y is the
    target format's value nearest x, ties to even (exact when widening with the same es).
    A program with per-tensor posit formats (MinUn's Procedure 3: posit16 with t2 as
    posit8) converts where a value meets an op of another format. Fixed point changes
    scale and width with num.rescale instead.

    `%y = num.convert %x : tensor<1x1x!num.posit<16, 2>> -> tensor<1x1x!num.posit<8, 2>>`
    """

    name = "num.convert"
    S: ClassVar = VarConstraint("S", AnyAttr())
    input = operand_def(_same_shape(S))
    result = result_def(_same_shape(S))
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        a, b = element(self.input), element(self.result)
        if not (isinstance(a, PositType) and isinstance(b, PositType)):
            raise VerifyException(f"{self.name}: operand and result must be !num.posit "
                                  f"tensors, got {a} -> {b} (fixed point: num.rescale)")
        if a == b:
            raise VerifyException(f"{self.name}: converts {a} to itself")


# --------------------------------------------------------------------------------------
# Arithmetic
# --------------------------------------------------------------------------------------


class _Elementwise(IRDLOperation):
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def _broadcast(self) -> tuple[int, ...]:
        return minun.broadcast_shapes(self.name, _shape(self.lhs), _shape(self.rhs))


def in_ort_mode(op: Operation) -> bool:
    """Whether a num.requantize, add, sub or mul computes onnxruntime's float32 arithmetic
    (`mode = #num<requantize_mode onnxruntime>`) rather than TFLite's (no mode)."""
    mode = getattr(op, "mode", None)
    return mode is not None and mode.data == RequantizeMode.ONNXRUNTIME


def _check_ort_mode(op: _Elementwise, shape: tuple[int, ...]) -> bool:
    """Whether an add, sub or mul is in mode onnxruntime (then checked here: int8
    !num.affine operands and result)."""
    if not in_ort_mode(op):
        return False
    if any(t is None or t.width != 8 for t in (affine(v) for v in (op.lhs, op.rhs,
                                                                    op.result))):
        raise VerifyException(f"{op.name}: mode onnxruntime takes and gives int8 "
                              f"!num.affine values, got {op.lhs.type}, {op.rhs.type} -> "
                              f"{op.result.type}")
    _expect_result(op, shape, lambda el: None)
    return True


class _AddLike(_Elementwise):
    """Exact sum of two values at the same scale, narrowed (wrap) to the result's bits.

    Zero-skew with `mode = #num<requantize_mode onnxruntime>` (pre-quantized models):
    int8 operands and result of any scales and zero points, onnxruntime's float32
    DequantizeLinear, Add (Sub) and QuantizeLinear emulated with integers
    (affine.ort_add)."""

    mode = opt_attr_def(RequantizeModeAttr)

    def verify_(self) -> None:
        _check_repr(self, self.lhs, self.rhs, self.result)
        shape = self._broadcast()
        if _check_ort_mode(self, shape):
            return
        if affine(self.lhs) is not None and not (
                element(self.lhs) == element(self.rhs) == element(self.result)
                and affine(self.lhs).width in (16, 32)):
            raise VerifyException(
                f"{self.name}: zero-skew sums take and give one 16- or 32-bit !num.affine type "
                f"(insert num.requantize), got {self.lhs.type}, {self.rhs.type} -> "
                f"{self.result.type}")
        if _same_kind(self, self.lhs, self.rhs, self.result):
            a, b, r = fixed(self.lhs), fixed(self.rhs), fixed(self.result)
            if not a.frac == b.frac == r.frac:
                raise VerifyException(
                    f"{self.name}: operands and result need one scale, got {a.frac}, "
                    f"{b.frac} -> {r.frac} (insert num.rescale)")
        _expect_result(self, shape, lambda el: None)


@irdl_op_definition
class AddOp(_AddLike):
    name = "num.add"


@irdl_op_definition
class SubOp(_AddLike):
    name = "num.sub"


@irdl_op_definition
class MulOp(_Elementwise):
    """Element-wise (or scalar-broadcast) product, exact, narrowed (wrap) to the result's
    bits; result scale = lhs scale + rhs scale.

    Zero-skew with `mode = #num<requantize_mode onnxruntime>` (pre-quantized models):
    int8 operands and result of any scales and zero points, onnxruntime's float32
    DequantizeLinear, Mul and QuantizeLinear emulated with integers
    (affine.ort_product)."""

    name = "num.mul"
    mode = opt_attr_def(RequantizeModeAttr)

    def verify_(self) -> None:
        _check_repr(self, self.lhs, self.rhs, self.result)
        shape = self._broadcast()
        if _check_ort_mode(self, shape):
            return
        _check_affine_product(self, self.lhs, self.rhs)
        if _same_kind(self, self.lhs, self.rhs, self.result):
            a, b, r = fixed(self.lhs), fixed(self.rhs), fixed(self.result)
            if r.frac != a.frac + b.frac:
                raise VerifyException(
                    f"{self.name}: result scale must be {a.frac} + {b.frac}, got {r.frac}")
        _expect_result(self, shape, lambda el: None)


def _check_affine_product(op: Operation, a: SSAValue, b: SSAValue) -> None:
    """Zero-skew products and dot products: sums of (qa - zpa)(qb - zpb), exact in an
    !num.affine<32, sa * sb, 0> accumulator (operands int8, or int16 exact differences
    whose bounds quantize checked)."""
    fa, fb, fr = affine(a), affine(b), affine(op.results[0])
    if fa is None:
        return
    if fa.width not in (8, 16) or fb.width not in (8, 16) or fr.width != 32 or fr.zp != 0 \
            or fr.real_scale != fa.real_scale * fb.real_scale:
        raise VerifyException(
            f"{op.name}: zero-skew operands must be 8- or 16-bit and the result "
            f"!num.affine<32, {_float_text(fa.real_scale * fb.real_scale)}, 0>, got "
            f"{a.type}, {b.type} -> {op.results[0].type}")


def _check_reduction(op: Operation, a: SSAValue, b: SSAValue, shape, removed: int) -> None:
    _check_affine_product(op, a, b)
    if getattr(op, "bias", None) is not None and op.channel_shifts is None:
        raise VerifyException(f"{op.name}: a bias operand needs channel_shifts")
    if getattr(op, "channel_shifts", None) is not None:
        _check_channel_shifts(op, a, b, shape, removed)
    elif _same_kind(op, a, b, op.results[0]):
        fa, fb, fr = fixed(a), fixed(b), fixed(op.results[0])
        if fr.frac != fa.frac + fb.frac - removed:
            raise VerifyException(
                f"{op.name}: result scale must be {fa.frac} + {fb.frac} - {removed}, "
                f"got {fr.frac}")
    _expect_result(op, shape, lambda el: None)


def channel_operand(op: Operation) -> tuple[int, ParamOp, int] | None:
    """(operand index, parameter, result axis of its channels) of a matmul or conv2d
    whose weight has per-channel scales: lhs rows or rhs columns of a matmul, the
    filter's output channels of a (one-group) convolution."""
    for i, (v, out_axis) in enumerate(zip(op.operands[:2], (0, 1) if isinstance(op, MatMulOp)
                                          else (None, 3))):
        owner = v.owner
        if isinstance(owner, ParamOp) and owner.channel_scales is not None:
            return i, owner, out_axis
    return None


def _check_channel_shifts(op: Operation, a: SSAValue, b: SSAValue, shape, removed: int
                          ) -> None:
    found = channel_operand(op)
    if found is None:
        raise VerifyException(f"{op.name}: channel_shifts need an operand that is a "
                              "num.param with channel_scales")
    index, param, out_axis = found
    want_axis = {(MatMulOp, 0): 0, (MatMulOp, 1): 1}.get((type(op), index))
    if isinstance(op, Conv2DOp) and index == 1:
        # the output channels: the filter's last axis (one group), or its group axis (one
        # output channel per group: depthwise)
        want_axis = 4 if op.groups.value.data == 1 else 0 if _shape(op.filter)[4] == 1 \
            else None
    if want_axis is None or param.channel_axis.value.data != want_axis:
        raise VerifyException(f"{op.name}: the per-channel operand's channels must be its "
                              "output channels (lhs axis 0, rhs axis 1, the filter's axis 4 "
                              "with one group, its axis 0 with one channel per group)")
    if removed:
        raise VerifyException(f"{op.name}: channel_shifts need halvings = 0")
    other = fixed(op.operands[1 - index])
    res = fixed(op.results[0])
    if other is None or res is None:
        raise VerifyException(f"{op.name}: channel_shifts need !num.fixed operands and result")
    shifts, scales = minun.ints(op.channel_shifts), param.scales()
    if len(shifts) != shape[out_axis]:
        raise VerifyException(f"{op.name}: {len(shifts)} channel shifts for "
                              f"{shape[out_axis]} output channels")
    for j, (n, sw) in enumerate(zip(shifts, scales)):
        if n < 0 or other.frac + sw - n != res.frac:
            raise VerifyException(
                f"{op.name}: channel {j}: result scale must be {other.frac} + {sw} - shift "
                f"with a shift >= 0, got shift {n} and result scale {res.frac}")
    if op.bias is not None:
        bias = op.bias.owner
        if not isinstance(bias, ParamOp) or bias.scales() is None or \
                len(_shape(op.bias)) != 1 or bias.channel_axis.value.data != 0 or \
                fixed(op.bias).width != res.width:
            raise VerifyException(f"{op.name}: the bias must be a 1-D num.param with "
                                  f"channel_scales, {res.width} bits like the result")
        want = [other.frac + sw for sw in scales]
        if list(bias.scales()) != want:
            raise VerifyException(f"{op.name}: the bias's channel scales must be the "
                                  f"products' {want}, got {list(bias.scales())}")
    _expect_result(op, shape, lambda el: None)


class _MatMulLike(IRDLOperation):
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    rounding = attr_def(RoundingAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def removed_bits(self) -> int:
        """How much the summation lowers the product's scale."""
        raise NotImplementedError

    def verify_(self) -> None:
        _check_repr(self, self.lhs, self.rhs, self.result)
        a, b = _shape(self.lhs), _shape(self.rhs)
        if len(a) != 2 or len(b) != 2 or a[1] != b[0]:
            raise VerifyException(
                f"{self.name}: needs 2-D operands with matching inner dimensions: "
                f"lhs {shape_str(a)}, rhs {shape_str(b)}")
        _check_reduction(self, self.lhs, self.rhs, (a[0], b[1]), self.removed_bits())


@irdl_op_definition
class MatMulOp(_MatMulLike):
    """Matrix product: each product exact then wrapped to the result's bits; the terms of
    a dot product are summed by TreeSum whose first `halvings` levels divide by two
    (SeeDot); with halvings = 0 it is the plain wrapping sum (Shiftry's wide accumulator).
    Result scale = sa + sb - halvings.
    """

    name = "num.matmul"
    lhs = operand_def(TensorType)  # declared again: the operands' order is lhs, rhs, bias
    rhs = operand_def(TensorType)
    halvings = attr_def(IntegerAttr)
    # per output channel, the right shift (rounding attribute) of its exact wrapping sum
    # (at the product scale of its weight's channel) to the result's scale
    channel_shifts = opt_attr_def(DenseArrayBase)
    # with channel_shifts: a per-channel parameter added to each channel's sum (at that
    # channel's product scale) before the shift
    bias = opt_operand_def(TensorType)
    assembly_format = ("$lhs `,` $rhs (`bias` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)")

    def removed_bits(self) -> int:
        return self.halvings.value.data


@irdl_op_definition
class SparseMatMulOp(_MatMulLike):
    """A |*| x with A a sparse parameter, stored column by column as (value, 1-based row)
    pairs ending in a 0 index (SeeDot's format). Each term A[j,k]*x[k] is exact, wrapped to
    the result's bits, divided by 2^shift (rounding attribute), and accumulated in column
    order with wrapping. Result scale = sa + sb - shift.
    """

    name = "num.sparse_matmul"
    shift = attr_def(IntegerAttr)

    def removed_bits(self) -> int:
        return self.shift.value.data

    def verify_(self) -> None:
        owner = self.lhs.owner
        if isinstance(owner, RescaleOp):  # SeeDot's MULSCALE pre-shift of the parameter
            owner = owner.input.owner
        if not isinstance(owner, ParamOp):
            raise VerifyException(
                f"{self.name}: the sparse lhs must be a num.param (possibly rescaled)")
        super().verify_()


@irdl_op_definition
class Conv2DOp(IRDLOperation):
    """NHWC convolution with the products summed like num.matmul (TreeSum with `halvings`
    over the kh*kw*C/G terms of each output, in (kh, kw, c) order). Result scale =
    sx + sf - halvings.
    """

    name = "num.conv2d"
    input = operand_def(TensorType)
    filter = operand_def(TensorType)
    strides = attr_def(DenseArrayBase)
    pads = attr_def(DenseArrayBase)
    dilations = attr_def(DenseArrayBase)
    groups = attr_def(IntegerAttr)
    halvings = attr_def(IntegerAttr)
    channel_shifts = opt_attr_def(DenseArrayBase)  # as num.matmul's
    bias = opt_operand_def(TensorType)  # as num.matmul's
    rounding = attr_def(RoundingAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = ("$input `,` $filter (`bias` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)")

    def verify_(self) -> None:
        _check_repr(self, self.input, self.filter, self.result)
        a, f = _shape(self.input), _shape(self.filter)
        if len(a) != 4 or len(f) != 5:
            raise VerifyException(f"{self.name}: needs 4-D input and 5-D filter")
        g = self.groups.value.data
        kh, kw = f[1:3]
        s, p, d = (minun.ints(x) for x in (self.strides, self.pads, self.dilations))
        ho = minun.conv_out_dim(a[1], kh, s[0], p[0] + p[1], d[0])
        wo = minun.conv_out_dim(a[2], kw, s[1], p[2] + p[3], d[1])
        _check_reduction(self, self.input, self.filter, (a[0], ho, wo, g * f[4]),
                         self.halvings.value.data)


class _TableOp(IRDLOperation):
    S: ClassVar = VarConstraint("S", AnyAttr())
    input = operand_def(_same_shape(S))
    result = result_def(_same_shape(S))
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def _check_io(self, scales: dict[int, tuple[int, int]]) -> None:
        a, r = fixed(self.input), fixed(self.result)
        if a is None and r is None:
            return
        if a is None or r is None or a.width != r.width or a.width not in scales:
            raise VerifyException(
                f"{self.name}: fixed-point input and result of one bitwidth in "
                f"{sorted(scales)} expected, got {self.input.type} -> {self.result.type}")
        s_in, s_out = scales[a.width]
        if (a.frac, r.frac) != (s_in, s_out):
            raise VerifyException(
                f"{self.name}: {a.width}-bit tables take scale {s_in} and give scale "
                f"{s_out}, got {a.frac} -> {r.frac} (insert num.rescale)")


_SHIFTRY_SCALES = {16: (11, 14), 8: (4, 6)}


@irdl_op_definition
class ExpOp(_TableOp):
    """e^x by tables. method shiftry: fixed scales (16-bit in 11 / out 14, psi 7; 8-bit in
    4 / out 6), valid for x <= 0. method seedot: two 2^t-entry tables over the profiled
    integer range [lo, hi] at the input's scale; result scale from MULSCALE(maxscale).
    """

    name = "num.exp"
    method = attr_def(ExpMethodAttr)
    lo = opt_attr_def(IntegerAttr)
    hi = opt_attr_def(IntegerAttr)
    maxscale = opt_attr_def(IntegerAttr)

    def seedot(self):
        a = fixed(self.input)
        return SeeDotExp(a.width, a.frac, self.lo.value.data, self.hi.value.data,
                         self.maxscale.value.data)

    def verify_(self) -> None:
        method = self.method.data
        if method == ExpMethod.SHIFTRY:
            self._check_io(_SHIFTRY_SCALES)
        elif method == ExpMethod.SEEDOT:
            if self.lo is None or self.hi is None or self.maxscale is None:
                raise VerifyException(f"{self.name}: method seedot needs lo, hi and maxscale")
            if not self.lo.value.data <= self.hi.value.data:
                raise VerifyException(f"{self.name}: empty range")
            a, r = fixed(self.input), fixed(self.result)
            if a is None or r is None:
                raise VerifyException(f"{self.name}: seedot tables need fixed-point types")
            p_mul, _ = self.seedot().out_scale()
            if (r.width, r.frac) != (a.width, p_mul):
                raise VerifyException(
                    f"{self.name}: result must be !num.fixed<{a.width}, {p_mul}>")
        elif method == ExpMethod.POSIT:
            if not isinstance(element(self.input), PositType) or \
                    element(self.input) != element(self.result):
                raise VerifyException(f"{self.name}: method posit needs posit values of one "
                                      "type")
        elif method == ExpMethod.TABLE:
            _check_table(self)
        elif not isinstance(element(self.input), (Float32Type, BFloat16Type)):
            raise VerifyException(f"{self.name}: method float needs f32 or bf16 values")


def _check_table(op: Operation) -> None:
    """A zero-skew function table: 8-bit affine input and result (any scales)."""
    a, r = affine(op.operands[0]), affine(op.results[0])
    if a is None or r is None or a.width != 8 or r.width != 8:
        raise VerifyException(f"{op.name}: a zero-skew table takes and gives 8-bit "
                              f"!num.affine values, got {op.operands[0].type} -> "
                              f"{op.results[0].type}")


@irdl_op_definition
class SigmoidOp(_TableOp):
    """Shiftry §5.4.1 on the exp tables, integer division (both signs); 16-bit in 11 /
    out 14, 8-bit in 4 / out 6."""

    name = "num.sigmoid"

    def verify_(self) -> None:
        if affine(self.input) is not None or affine(self.result) is not None:
            _check_table(self)
        self._check_io(_SHIFTRY_SCALES)


@irdl_op_definition
class LutOp(_TableOp):
    """A zero-skew int8 -> int8 function given by its 256 outputs (`table`, for inputs
    -128..127): the float ops a pre-quantized model runs between a DequantizeLinear and a
    QuantizeLinear (a HardSwish, say), evaluated once per input integer at import.

    `%y = num.lut %x {table = array<i8: ...>} : tensor<4x!num.affine<8, 0.05, 3>>
           -> tensor<4x!num.affine<8, 0.02, -128>>`"""

    name = "num.lut"
    table = attr_def(DenseArrayBase)

    def verify_(self) -> None:
        _check_table(self)
        if len(self.table.get_values()) != 256:
            raise VerifyException(f"{self.name}: the table needs 256 entries, got "
                                  f"{len(self.table.get_values())}")


@irdl_op_definition
class TanhOp(_TableOp):
    """Shiftry §5.4.1 / Library 9 on the exp tables; 16-bit in 11 / out 14, 8-bit 4 / 6."""

    name = "num.tanh"

    def verify_(self) -> None:
        if affine(self.input) is not None or affine(self.result) is not None:
            _check_table(self)
        self._check_io(_SHIFTRY_SCALES)


@irdl_op_definition
class NormaliseL2Op(IRDLOperation):
    """Per NHWC position: acc = sum of squares (exact), n = isqrt(acc) (input scale),
    y = (x * 2^s_out) / n with C division (0 where n = 0). Posit: the quire sum of squares,
    a correctly rounded sqrt, posit division; f32 and bf16: sqrtf and division."""

    name = "num.normalise_l2"
    S: ClassVar = VarConstraint("S", AnyAttr())
    input = operand_def(_same_shape(S))
    result = result_def(_same_shape(S))
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        _check_repr(self, self.input, self.result)
        if len(_shape(self.input)) != 4:
            raise VerifyException(f"{self.name}: 4-D NHWC input and result of one shape")


SOFTMAX_LEVELS = (255, 256)  # a zero-skew softmax's result scale is 1/D, D one of these


def softmax_levels(el: Attribute) -> int | None:
    """D of a zero-skew softmax result `!num.affine<8, 1/D, -128>` (D in SOFTMAX_LEVELS),
    else None."""
    if not isinstance(el, AffineType) or el.width != 8 or el.zp != -128:
        return None
    d = round(1.0 / el.real_scale)
    return d if d in SOFTMAX_LEVELS and abs(el.real_scale * d - 1.0) < 1e-12 else None


@irdl_op_definition
class SoftmaxOp(IRDLOperation):
    """Softmax over the last axis. Fixed point, per row: m = max; d = x - m (<= 0), brought
    to the exp table's input scale (saturated); e = Shiftry's exp table (16-bit: scale
    11 -> 14, 8-bit: 4 -> 6); s = the exact sum of e; y = (e * 2^(b-2)) / s with C
    division (s >= e(0) > 0). The result is !num.fixed<b, b-2>. f32: e^(x - m) / sum.
    Posit: x - m and exp rounded, the quire sum rounded once, a posit division; bf16: the
    same steps in float32, each rounded to bfloat16 (docs/numerics.md)."""

    name = "num.softmax"
    S: ClassVar = VarConstraint("S", AnyAttr())
    input = operand_def(_same_shape(S))
    # zero-skew: TFLite's own int8 kernel (formats/zero_skew/tflite_softmax.py), for TFLite models
    tflite = opt_attr_def(UnitAttr)
    result = result_def(_same_shape(S))
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        _check_repr(self, self.input, self.result)
        if self.tflite is not None:
            from minun_mlir.formats.zero_skew.tflite_softmax import MAX_ROW

            a = element(self.result)
            if not isinstance(a, AffineType) or softmax_levels(a) != 256 or \
                    not 0 < (_shape(self.input) or [0])[-1] <= MAX_ROW:
                raise VerifyException(f"{self.name}: tflite takes a zero-skew row of at "
                                      f"most {MAX_ROW} to !num.affine<8, 1/256, -128>, got "
                                      f"{self.input.type} -> {self.result.type}")
        r = fixed(self.result)
        if r is not None and (r.width not in (8, 16, 32) or r.frac != r.width - 2):
            raise VerifyException(f"{self.name}: the result is !num.fixed<b, b-2> (b = 8, "
                                  f"16 or 32), got {self.result.type}")
        a = element(self.result)
        if isinstance(a, AffineType) and softmax_levels(a) is None:
            raise VerifyException(f"{self.name}: a zero-skew result is !num.affine<8, 1/255 "
                                  f"or 1/256, -128>, got {self.result.type}")
        if not _shape(self.input):
            raise VerifyException(f"{self.name}: needs a tensor with at least one axis")


@irdl_op_definition
class LogSoftmaxOp(IRDLOperation):
    """log(softmax) over the last axis: y = (x - m) - ln(sum e^(x - m)), m the row's max.
    Fixed point: the sum of Shiftry's exp table values as for num.softmax, its natural log
    by minun_lnsum (an integer log2 by repeated squaring, 16 fraction bits, times ln 2),
    then x - m - log at the result's scale, rounded once and saturated. Zero-skew (int8
    in and out): the sum of num.softmax's int32 exp table, the same ln, s_in (m - x) at
    2^16 added and requantized to the result (formats/zero_skew/arith.py, log_softmax). Posit and
    bfloat16: each step rounded (the sum through the quire, or in float32)."""

    name = "num.log_softmax"
    S: ClassVar = VarConstraint("S", AnyAttr())
    input = operand_def(_same_shape(S))
    result = result_def(_same_shape(S))
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        _check_repr(self, self.input, self.result)
        r = fixed(self.result)
        if r is not None and r.width not in (8, 16, 32):
            raise VerifyException(f"{self.name}: the result is 8, 16 or 32 bits, got "
                                  f"{self.result.type}")
        ins = [element(v) for v in (self.input, self.result)]
        if any(isinstance(t, AffineType) for t in ins) and any(
                not isinstance(t, AffineType) or t.width != 8 for t in ins):
            raise VerifyException(f"{self.name}: zero-skew operands are int8 in and out, "
                                  f"got {self.input.type} -> {self.result.type}")
        if not _shape(self.input):
            raise VerifyException(f"{self.name}: needs a tensor with at least one axis")


# --------------------------------------------------------------------------------------
# Comparison, selection and negation: ops whose result depends on the encoding
# --------------------------------------------------------------------------------------

# An L2 number type: an element type some representation owns.
NUMBER = MessageConstraint(
    base(FixedType) | base(PositType) | EqAttrConstraint(f32) | base(BFloat16Type)
    | base(AffineType),
    "an L2 number type (!num.fixed, !num.posit, !num.affine, f32 or bf16) expected")


class _SameTypeUnaryOp(IRDLOperation):
    """x -> y of the same type (shape and representation)."""

    T: ClassVar = VarConstraint("T", TensorType.constr(NUMBER))
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input)"


@irdl_op_definition
class ReluOp(_SameTypeUnaryOp):
    """max(x, 0) on stored values (exact in every representation).

    `%y = num.relu %x : tensor<8x!num.fixed<16, 12>>`
    """

    name = "num.relu"


@irdl_op_definition
class Relu6Op(_SameTypeUnaryOp):
    """min(max(x, 0), 6) with 6 encoded at the operand's scale by shifting, exactly as
    SeeDot does (`6 << s`, or `6 >> -s` for a negative scale), capped at the largest
    integer of the width; float32 clamps to [0, 6].

    `%y = num.relu6 %x : tensor<8x!num.fixed<16, 12>>`
    """

    name = "num.relu6"


@irdl_op_definition
class ClipOp(_SameTypeUnaryOp):
    """min(max(x, lo), hi) with constant bounds given as reals (f64 `lo` <= `hi`). The
    representation encodes them when the op is lowered or evaluated: fixed-point rounds
    each bound to the operand's scale with the function's `num.rounding` and caps it to
    the integer range of the width (a bound outside it is no bound); float32 uses them as
    floats. Keeping reals here lets one op serve every representation.

    `%y = num.clip %x {lo = -1.5 : f64, hi = 2.25 : f64} : tensor<8x!num.fixed<16, 12>>`
    """

    name = "num.clip"
    lo = attr_def(FloatAttr)
    hi = attr_def(FloatAttr)

    def verify_(self) -> None:
        if not self.lo.value.data <= self.hi.value.data:
            raise VerifyException(
                f"{self.name}: lo {self.lo.value.data} is above hi {self.hi.value.data}")


@irdl_op_definition
class NegOp(IRDLOperation):
    """-x. Fixed-point negation wraps to the width: -(-2^(b-1)) = -2^(b-1). A zero-skew
    value's negation takes the complementary zero point -1 - zp, which makes it exact for
    every stored value: -(s (q - zp)) = s ((-1 - q) - (-1 - zp)), so q becomes ~q (with
    the operand's own zero point a one-sided range, [0, 6] say, has no room for its
    negatives and saturated).

    `%y = num.neg %x : tensor<8x!num.fixed<16, 12>>`
    `%y = num.neg %x : tensor<8x!num.affine<8, 0.02, -128>> -> tensor<8x!num.affine<8, 0.02, 127>>`
    """

    name = "num.neg"
    input = operand_def(TensorType.constr(NUMBER))
    result = result_def(TensorType.constr(NUMBER))
    traits = traits_def(Pure())

    def verify_(self) -> None:
        a, b = self.input.type, self.result.type
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        if a.get_shape() != b.get_shape():
            raise VerifyException(f"num.neg: the result's shape {shape_str(b.get_shape())} "
                                  f"is not the operand's {shape_str(a.get_shape())}")
        x, y = a.element_type, b.element_type
        if x == y or (isinstance(x, AffineType) and isinstance(y, AffineType)
                      and (x.width, x.real_scale) == (y.width, y.real_scale)
                      and y.zp == -1 - x.zp):
            return
        raise VerifyException(f"num.neg: the result's element type must be the operand's "
                              f"{x} (or for !num.affine its width and scale with zero point "
                              f"-1 - zp), got {y}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.input)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        if self.result.type != self.input.type:
            printer.print_string(" -> ")
            printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> NegOp:
        x = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        result = parser.parse_type() if parser.parse_optional_punctuation("->") else ty
        (x,) = parser.resolve_operands([x], [ty], parser.pos)
        return cls.create(operands=[x], result_types=[result], attributes=attrs)


class _SelectOp(IRDLOperation):
    """Element-wise selection between two values of one element type (numpy broadcasting
    of shapes); the quantizer brings both operands to one type first."""

    E: ClassVar = VarConstraint("E", NUMBER)
    lhs = operand_def(TensorType.constr(E))
    rhs = operand_def(TensorType.constr(E))
    result = result_def(TensorType.constr(E))
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        shape = minun.broadcast_shapes(self.name, _shape(self.lhs), _shape(self.rhs))
        _expect_result(self, shape, lambda el: None)


@irdl_op_definition
class MaxOp(_SelectOp):
    """Element-wise maximum of stored values (one type, so it is the maximum of reals).

    `%z = num.max %x, %y : (tensor<8x!num.fixed<16, 12>>, tensor<8x!num.fixed<16, 12>>)
           -> tensor<8x!num.fixed<16, 12>>`
    """

    name = "num.max"


@irdl_op_definition
class MinOp(_SelectOp):
    """Element-wise minimum of stored values of one type.

    `%z = num.min %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>`
    """

    name = "num.min"


@irdl_op_definition
class MaxPoolOp(IRDLOperation):
    """NHWC max pooling over `kernel` windows moved by `strides`; padding (`pads`: top,
    bottom, left, right) counts as the lowest value of the representation (the smallest
    integer of the width for fixed-point, -inf for float32), so it is never chosen; a
    window wholly in the padding is refused (minun.padding_only_window).

    `%y = num.maxpool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
           pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x2x!num.fixed<16, 12>>)
           -> tensor<1x2x2x2x!num.fixed<16, 12>>`
    """

    name = "num.maxpool"
    E: ClassVar = VarConstraint("E", NUMBER)
    input = operand_def(TensorType.constr(E))
    kernel = attr_def(DenseArrayBase)
    strides = attr_def(DenseArrayBase)
    pads = attr_def(DenseArrayBase)
    result = result_def(TensorType.constr(E))
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        a = _shape(self.input)
        if len(a) != 4:
            raise VerifyException(f"{self.name}: input must be 4-D NHWC, got {shape_str(a)}")
        _verify_pool_window(self, a)


@irdl_op_definition
class AvgPoolOp(IRDLOperation):
    """Zero-skew NHWC average pooling as TFLite's int8 kernel (a TFLite model's
    AVERAGE_POOL_2D): per window, the sum of the stored int8 values inside the input
    (`pads`: top, bottom, left, right, outside it) over their count, rounded half away
    from zero; the result has the input's type.

    `%y = num.avgpool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
           pads = array<i64: 0, 1, 0, 1>} : (tensor<1x8x8x3x!num.affine<8, 0.06, 4>>)
           -> tensor<1x4x4x3x!num.affine<8, 0.06, 4>>`
    """

    name = "num.avgpool"
    input = operand_def(TensorType.constr(AffineType))
    kernel = attr_def(DenseArrayBase)
    strides = attr_def(DenseArrayBase)
    pads = attr_def(DenseArrayBase)
    result = result_def(TensorType.constr(AffineType))
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        a = _shape(self.input)
        if len(a) != 4 or element(self.input) != element(self.result) or \
                element(self.input).width != 8:
            raise VerifyException(f"{self.name}: an int8 NHWC input and a result of its "
                                  f"type, got {self.input.type} -> {self.result.type}")
        _verify_pool_window(self, a)


def _verify_pool_window(op, a: tuple[int, ...]) -> None:
    """A pooling op's window (kernel, strides, pads) on its NHWC input of shape `a`, and
    its result's shape; max and average pooling share it."""
    k, s, p = (minun.ints(x) for x in (op.kernel, op.strides, op.pads))
    if len(k) != 2 or len(s) != 2 or len(p) != 4 or min(k + s) < 1 or min(p) < 0:
        raise VerifyException(f"{op.name}: kernel and strides need 2 positive values, pads 4 "
                              "non-negative ones")
    ho = minun.conv_out_dim(a[1], k[0], s[0], p[0] + p[1], 1)
    wo = minun.conv_out_dim(a[2], k[1], s[1], p[2] + p[3], 1)
    if ho < 1 or wo < 1:
        raise VerifyException(f"{op.name}: the window does not fit the input")
    why = minun.padding_only_window(a, k, s, p)
    if why:
        raise VerifyException(f"{op.name}: {why}")
    _expect_result(op, (a[0], ho, wo, a[3]), lambda el: None)


class _LabelOp(IRDLOperation):
    input = operand_def(TensorType.constr(NUMBER))
    result = result_def(i32)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input)"


@irdl_op_definition
class ArgMaxOp(_LabelOp):
    """Flat index of the largest stored value, the first one on ties (an i32 label).

    `%k = num.argmax %x : tensor<10x1x!num.fixed<16, 12>>`
    """

    name = "num.argmax"


@irdl_op_definition
class SgnOp(_LabelOp):
    """1 if the single stored value is > 0, else 0 (binary classifiers).

    `%k = num.sgn %x : tensor<1x1x!num.fixed<16, 12>>`
    """

    name = "num.sgn"

    def verify_(self) -> None:
        if math.prod(_shape(self.input)) != 1:
            raise VerifyException(
                f"{self.name}: input must hold one element, got {shape_str(_shape(self.input))}")


Num = Dialect(
    "num",
    [ParamOp, InputOp, RescaleOp, ConvertOp, AddOp, SubOp, MulOp, MatMulOp, SparseMatMulOp,
     Conv2DOp, ExpOp, SigmoidOp, TanhOp, LutOp, NormaliseL2Op, SoftmaxOp, LogSoftmaxOp,
     ReluOp, Relu6Op, ClipOp, NegOp, MaxOp, MinOp, MaxPoolOp, AvgPoolOp, ArgMaxOp, SgnOp,
     RequantizeOp],
    [FixedType, PositType, AffineType, RoundingAttr, OverflowAttr, ExpMethodAttr,
     RequantizeModeAttr],
)
