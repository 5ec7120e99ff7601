"""`cemit`: the L4 dialect, C as IR (xDSL's own `emitc` is a stub, so this one is ours).

It is deliberately close to the C text so that the printer (lowering/c_printer.py) is one
method per op and makes no decisions about semantics:

- file scope: `cemit.include`, `cemit.verbatim`, `cemit.global` (a static array, `const`
  with its initial values, `flash` when it must live in program memory), `cemit.scratch`
  (the one planned scratch array, a union of typed views), `cemit.func`;
- statements: `cemit.decl` (a local variable with its initial value), `cemit.assign`,
  `cemit.store` (an array element), `cemit.for`, `cemit.if`, `cemit.return`;
- expressions, one result each: `cemit.literal`, `cemit.ref` (a variable or parameter by
  name), `cemit.load` (an array element, `flash` when read from program memory),
  `cemit.binary`, `cemit.unary`, `cemit.cast`, `cemit.cond` (`?:`), `cemit.call`;
- target kernels, made by select-target-kernels (passes/select_target_kernels.py):
  `cemit.kernel` / `cemit.kernel_stmt` (a call of a runtime kernel, its name and operand
  types checked against lowering/c_runtime.py's table), `cemit.addr` (`&array[index]`,
  a `!cemit.ptr<T>`), `cemit.block` (`{ ... }`), `cemit.target_if` (`#if defined(F)` ...
  `#else` ... `#endif`: the kernel where the compiler has the feature, the portable loop
  otherwise), `cemit.array` (a local array) and `cemit.bare` (an expression written
  without its outer parentheses, as the kernels' C spells their bounds).

Variables and arrays are referred to by name, as in C. Every expression result is used
exactly once, by the statement or expression right after it in the same block: an
expression is a tree that the printer writes where it is used. A value needed twice is a
`cemit.decl` variable (lower-to-emitc decides which). Types are builtin integer types
(signless iN is intN_t, unsigned uiN is uintN_t, i1 is int), `index` (C `int`), `f32`
(`float`) and `!cemit.opaque<"...">` for a C type spelled out (`unsigned`, `int`, a
typedef).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, Region, TypeAttribute
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    MessageConstraint,
    ParamAttrConstraint,
    VarConstraint,
    attr_def,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, NoTerminator, Pure
from xdsl.utils.exceptions import VerifyException

BINARY_OPS = ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "&&", "||",
              "<", "<=", ">", ">=", "==", "!=")
UNARY_OPS = ("-", "!", "~")


@irdl_attr_definition
class OpaqueType(ParametrizedAttribute, TypeAttribute):
    """A C type spelled verbatim: `!cemit.opaque<"unsigned">`."""

    name = "cemit.opaque"
    spelling: StringAttr

    def __init__(self, spelling: str):
        super().__init__(StringAttr(spelling))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(self.spelling.data)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[StringAttr]:
        with parser.in_angle_brackets():
            return (StringAttr(parser.parse_str_literal()),)


@irdl_attr_definition
class PointerType(ParametrizedAttribute, TypeAttribute):
    """The address of an array element: `!cemit.ptr<i16>` (a kernel's operand)."""

    name = "cemit.ptr"
    elem: TypeAttribute

    def __init__(self, elem: TypeAttribute):
        super().__init__(elem)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_attribute(self.elem)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[TypeAttribute]:
        with parser.in_angle_brackets():
            return (parser.parse_type(),)


# --------------------------------------------------------------------------------------
# File scope
# --------------------------------------------------------------------------------------


@irdl_op_definition
class IncludeOp(IRDLOperation):
    """`#include "header"` (or `<header>` with `system`)."""

    name = "cemit.include"
    header = attr_def(StringAttr)
    system = opt_attr_def(UnitAttr)
    assembly_format = "$header (`system` $system^)? attr-dict"


@irdl_op_definition
class VerbatimOp(IRDLOperation):
    """A line of C written as it is (file scope or statement)."""

    name = "cemit.verbatim"
    text = attr_def(StringAttr)
    assembly_format = "$text attr-dict"


@irdl_op_definition
class GlobalOp(IRDLOperation):
    """A static array at file scope: `cemit.global "p_W" : i16[256] const flash = dense<..>`.

    `const` arrays carry their values; `flash` ones are read with cemit.load {flash}
    (program memory on AVR). Without a value the array is zero-initialised (.bss).
    `if "FEATURE"`: only a target kernel under that compiler feature reads it
    (cemit.target_if), so it is defined under `#if defined(FEATURE)` too (a core without
    the feature would warn of an unused array). `maybe_unused`: only the portable branch
    of such a kernel reads it, so a core with the feature leaves it unread (C's
    `__attribute__((unused))`; the linker drops it).
    """

    name = "cemit.global"
    sym_name = attr_def(StringAttr)
    elem = attr_def(TypeAttribute)
    size = attr_def(IntAttr)
    value = opt_attr_def(DenseIntOrFPElementsAttr)
    is_const = opt_attr_def(UnitAttr, attr_name="const")
    flash = opt_attr_def(UnitAttr)
    feature = opt_attr_def(StringAttr)
    maybe_unused = opt_attr_def(UnitAttr)

    def verify_(self) -> None:
        if self.value is not None and self.value.get_element_type() != self.elem:
            raise VerifyException(f"{self.name} {self.sym_name.data}: values must be {self.elem}")
        if self.value is not None and len(self.value) != self.size.data:
            raise VerifyException(f"{self.name} {self.sym_name.data}: {len(self.value)} values "
                                  f"for {self.size.data} elements")
        if self.flash is not None and self.is_const is None:
            raise VerifyException(f"{self.name} {self.sym_name.data}: flash arrays are const")
        if self.feature is not None and not self.feature.data.isidentifier():
            raise VerifyException(f"{self.name} {self.sym_name.data}: '{self.feature.data}' "
                                  "is not a macro name")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.sym_name.data)
        printer.print_string(" : ")
        printer.print_attribute(self.elem)
        printer.print_string(f"[{self.size.data}]")
        if self.is_const is not None:
            printer.print_string(" const")
        if self.flash is not None:
            printer.print_string(" flash")
        if self.feature is not None:
            printer.print_string(" if ")
            printer.print_string_literal(self.feature.data)
        if self.maybe_unused is not None:
            printer.print_string(" maybe_unused")
        if self.value is not None:
            printer.print_string(" = ")
            printer.print_attribute(self.value)

    @classmethod
    def parse(cls, parser: Parser) -> GlobalOp:
        attrs: dict[str, Attribute] = {"sym_name": StringAttr(parser.parse_str_literal())}
        parser.parse_punctuation(":")
        attrs["elem"] = parser.parse_type()
        parser.parse_punctuation("[")
        attrs["size"] = IntAttr(parser.parse_integer())
        parser.parse_punctuation("]")
        if parser.parse_optional_keyword("const") is not None:
            attrs["const"] = UnitAttr()
        if parser.parse_optional_keyword("flash") is not None:
            attrs["flash"] = UnitAttr()
        if parser.parse_optional_keyword("if") is not None:
            attrs["feature"] = StringAttr(parser.parse_str_literal())
        if parser.parse_optional_keyword("maybe_unused") is not None:
            attrs["maybe_unused"] = UnitAttr()
        if parser.parse_optional_punctuation("=") is not None:
            attrs["value"] = parser.parse_attribute()
        return cls.create(attributes=attrs)


@irdl_op_definition
class ScratchOp(IRDLOperation):
    """The planned scratch memory: `size` bytes seen as arrays of each member type
    (a union, so that every view is accessed through the union: no aliasing issue).
    Views are cemit.load/store on `<name>.<member>` (`minun_scratch.i16`)."""

    name = "cemit.scratch"
    sym_name = attr_def(StringAttr)
    size = attr_def(IntAttr)
    members = attr_def(ArrayAttr)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.sym_name.data)
        printer.print_string(f"[{self.size.data}] (")
        printer.print_list(self.members.data, printer.print_attribute)
        printer.print_string(")")

    @classmethod
    def parse(cls, parser: Parser) -> ScratchOp:
        name = parser.parse_str_literal()
        parser.parse_punctuation("[")
        size = parser.parse_integer()
        parser.parse_punctuation("]")
        members = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        return cls.create(attributes={"sym_name": StringAttr(name), "size": IntAttr(size),
                                      "members": ArrayAttr(members)})


@irdl_op_definition
class FuncOp(IRDLOperation):
    """A C function: parameters are C declarations (`"const minun_input_t *x"`), read in
    the body by name; `static` functions are private to the file."""

    name = "cemit.func"
    sym_name = attr_def(StringAttr)
    params = attr_def(ArrayAttr)
    result = attr_def(TypeAttribute)
    is_static = opt_attr_def(UnitAttr, attr_name="static")
    comment = opt_attr_def(StringAttr)  # C comment lines written before the function
    needs = opt_attr_def(ArrayAttr)  # runtime helpers (or "math.h") its verbatim lines use
    body = region_def("single_block")
    traits = traits_def(NoTerminator())

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.sym_name.data)
        printer.print_string("(")
        printer.print_list(self.params.data, lambda p: printer.print_string_literal(p.data))
        printer.print_string(") -> ")
        printer.print_attribute(self.result)
        extra = {k: v for k, v in self.attributes.items()
                 if k not in ("sym_name", "params", "result")}
        printer.print_op_attributes(extra, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name = parser.parse_str_literal()
        params = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: StringAttr(parser.parse_str_literal()))
        parser.parse_punctuation("->")
        result = parser.parse_type()
        extra = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region()
        attrs = {"sym_name": StringAttr(name), "params": ArrayAttr(params), "result": result}
        if extra is not None:
            attrs.update(extra.data)
        return cls.create(attributes=attrs, regions=[body])

    def verify_(self) -> None:
        for op in self.body.walk():
            if isinstance(op, ExpressionOp):
                uses = list(op.results[0].uses)
                if len(uses) != 1 or uses[0].operation.parent_block() is not op.parent_block():
                    raise VerifyException(
                        f"{op.name}: an expression must be used exactly once, in its own "
                        f"block (bind shared values with cemit.decl)")


# --------------------------------------------------------------------------------------
# Statements
# --------------------------------------------------------------------------------------


@irdl_op_definition
class DeclOp(IRDLOperation):
    """`T name = init;` (`const T` with `const`)."""

    name = "cemit.decl"
    var = attr_def(StringAttr)
    init = operand_def()
    is_const = opt_attr_def(UnitAttr, attr_name="const")
    assembly_format = "$var `=` $init (`const` $const^)? attr-dict `:` type($init)"


@irdl_op_definition
class AssignOp(IRDLOperation):
    """`name = value;`"""

    name = "cemit.assign"
    var = attr_def(StringAttr)
    value = operand_def()
    assembly_format = "$var `=` $value attr-dict `:` type($value)"


@irdl_op_definition
class StoreOp(IRDLOperation):
    """`array[index] = value;`"""

    name = "cemit.store"
    value = operand_def()
    array = attr_def(StringAttr)
    index = operand_def()
    assembly_format = (
        "$value `,` $array `[` $index `]` attr-dict `:` type($value) `,` type($index)")


@irdl_op_definition
class ForOp(IRDLOperation):
    """`for (int var = lower; var < upper; var++) { body }`"""

    name = "cemit.for"
    var = attr_def(StringAttr)
    lower = operand_def()
    upper = operand_def()
    body = region_def("single_block")
    traits = traits_def(NoTerminator())
    assembly_format = (
        "$var `=` $lower `to` $upper attr-dict `:` type($lower) `,` type($upper) $body")


@irdl_op_definition
class IfOp(IRDLOperation):
    """`if (cond) { then } else { other }` (an empty else, or none, is not printed)."""

    name = "cemit.if"
    cond = operand_def()
    then = region_def("single_block")
    other = region_def()
    traits = traits_def(NoTerminator())
    assembly_format = "$cond attr-dict `:` type($cond) $then `else` $other"


@irdl_op_definition
class ReturnOp(IRDLOperation):
    name = "cemit.return"
    value = opt_operand_def()
    traits = traits_def(IsTerminator())
    assembly_format = "($value^ `:` type($value))? attr-dict"


# --------------------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------------------


@irdl_op_definition
class CallStmtOp(IRDLOperation):
    """`callee(args);`: a call made for its effect (the native profiler's probes)."""

    name = "cemit.call_stmt"
    callee = attr_def(StringAttr)
    args = var_operand_def()
    assembly_format = "$callee `(` $args `)` attr-dict `:` type($args)"


class ExpressionOp(IRDLOperation):
    """An op printed inside the statement that uses its result."""


@irdl_op_definition
class LiteralOp(ExpressionOp):
    """An integer or float constant: `cemit.literal 16384 : i32`."""

    name = "cemit.literal"
    T: ClassVar = VarConstraint("T", AnyAttr())
    value = attr_def(MessageConstraint(
        ParamAttrConstraint(IntegerAttr, (AnyAttr(), T))
        | ParamAttrConstraint(FloatAttr, (AnyAttr(), T)),
        "result type must be the literal's type"))
    result = result_def(T)
    traits = traits_def(Pure())

    def __init__(self, value: IntegerAttr | FloatAttr):
        # what IRDL's builder makes of these arguments, without its per-call argument
        # matching (lower-to-emitc makes tens of thousands of literals)
        Operation.__init__(self, attributes={"value": value}, result_types=[value.type])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)

    @classmethod
    def parse(cls, parser: Parser) -> LiteralOp:
        value = parser.parse_attribute()
        if not isinstance(value, IntegerAttr | FloatAttr):
            parser.raise_error("expected an integer or float literal")
        return cls(value)


@irdl_op_definition
class RefOp(ExpressionOp):
    """A variable or parameter read by name."""

    name = "cemit.ref"
    var = attr_def(StringAttr)
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$var attr-dict `:` type($result)"


@irdl_op_definition
class LoadOp(ExpressionOp):
    """`array[index]`; with `flash`, a read from program memory."""

    name = "cemit.load"
    array = attr_def(StringAttr)
    index = operand_def()
    flash = opt_attr_def(UnitAttr)
    result = result_def()
    assembly_format = (
        "$array `[` $index `]` (`flash` $flash^)? attr-dict `:` type($index) `->` type($result)")


@irdl_op_definition
class BinaryOp(ExpressionOp):
    """`(lhs op rhs)` with C's own operator and promotions (lower-to-emitc casts first)."""

    name = "cemit.binary"
    op = attr_def(StringAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$op $lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        if self.op.data not in BINARY_OPS:
            raise VerifyException(f"{self.name}: unknown C operator '{self.op.data}'")


@irdl_op_definition
class UnaryOp(ExpressionOp):
    name = "cemit.unary"
    op = attr_def(StringAttr)
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$op $input attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        if self.op.data not in UNARY_OPS:
            raise VerifyException(f"{self.name}: unknown C operator '{self.op.data}'")


@irdl_op_definition
class CastOp(ExpressionOp):
    """`(T)input`"""

    name = "cemit.cast"
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"


@irdl_op_definition
class CondOp(ExpressionOp):
    """`(cond ? lhs : rhs)`: both branches and the result have one type."""

    name = "cemit.cond"
    T: ClassVar = VarConstraint("T", AnyAttr())
    cond = operand_def()
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)"


@irdl_op_definition
class CallOp(ExpressionOp):
    """`callee(args)`: a runtime helper or libm function (pure)."""

    name = "cemit.call"
    callee = attr_def(StringAttr)
    args = var_operand_def()
    result = result_def()
    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $result)"


# --------------------------------------------------------------------------------------
# Target kernels (select-target-kernels)
# --------------------------------------------------------------------------------------


@irdl_op_definition
class BlockOp(IRDLOperation):
    """`{ body }`: a compound statement (the scope of a kernel's local declarations)."""

    name = "cemit.block"
    body = region_def("single_block")
    traits = traits_def(NoTerminator())
    assembly_format = "attr-dict-with-keyword $body"


@irdl_op_definition
class TargetIfOp(IRDLOperation):
    """`#if defined(feature)` then `#else` other `#endif`: a kernel that needs a compiler
    feature (`__SSE2__`, `__ARM_FEATURE_DSP`) and the portable statements it replaces."""

    name = "cemit.target_if"
    feature = attr_def(StringAttr)
    then = region_def("single_block")
    other = region_def("single_block")
    traits = traits_def(NoTerminator())
    assembly_format = "$feature attr-dict-with-keyword $then `else` $other"

    def verify_(self) -> None:
        if not self.feature.data.isidentifier():
            raise VerifyException(f"{self.name}: '{self.feature.data}' is not a macro name")


@irdl_op_definition
class LocalArrayOp(IRDLOperation):
    """`T name[size];`: an uninitialised local array."""

    name = "cemit.array"
    var = attr_def(StringAttr)
    elem = attr_def(TypeAttribute)
    size = attr_def(IntAttr)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.var.data)
        printer.print_string(" : ")
        printer.print_attribute(self.elem)
        printer.print_string(f"[{self.size.data}]")

    @classmethod
    def parse(cls, parser: Parser) -> LocalArrayOp:
        var = StringAttr(parser.parse_str_literal())
        parser.parse_punctuation(":")
        elem = parser.parse_type()
        parser.parse_punctuation("[")
        size = IntAttr(parser.parse_integer())
        parser.parse_punctuation("]")
        return cls.create(attributes={"var": var, "elem": elem, "size": size})

    def verify_(self) -> None:
        if self.size.data <= 0:
            raise VerifyException(f"{self.name} {self.var.data}: size must be positive")


@irdl_op_definition
class AddrOp(ExpressionOp):
    """`&array[index]` (the index written without outer parentheses); `flash` when the
    array lives in program memory."""

    name = "cemit.addr"
    array = attr_def(StringAttr)
    index = operand_def()
    flash = opt_attr_def(UnitAttr)
    result = result_def(PointerType)
    traits = traits_def(Pure())
    assembly_format = (
        "$array `[` $index `]` (`flash` $flash^)? attr-dict `:` type($index) `->` type($result)")


@irdl_op_definition
class BareOp(ExpressionOp):
    """Its operand written without one pair of parentheses enclosing it all (`a + b`
    rather than `(a + b)`): where the kernels' C has no parentheses to keep. A result type
    other than the operand's is C's implicit conversion (a declaration's initialiser)."""

    name = "cemit.bare"
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type($input, $result)"


KERNELS_MARK = "cemit.kernels"  # module attribute: the profile select-target-kernels ran for


def _is(t: Attribute, spec: str) -> bool:
    """Whether type t is one of a kernel signature's types ("i8|i16", "ptr16", "int")."""
    if spec == "int":
        return isinstance(t, IntegerType | IndexType)
    if spec.startswith("ptr"):
        return isinstance(t, PointerType) and _is(t.elem, "i" + spec[3:])
    return isinstance(t, IntegerType) and f"i{t.width.data}" in spec.split("|")


def _verify_kernel(op: IRDLOperation, types: list[Attribute], result: Attribute | None) -> None:
    from minun_mlir.lowering.c_runtime import kernel_signature

    name = op.callee.data
    signature = kernel_signature(name)
    if signature is None:
        raise VerifyException(f"{op.name}: '{name}' is not a target kernel")
    params, returns = signature
    if len(params) != len(types):
        raise VerifyException(f"{op.name} {name}: {len(types)} operands, the kernel takes "
                              f"{len(params)}")
    for k, (want, got) in enumerate(zip(params, types)):
        if not _is(got, want):
            raise VerifyException(f"{op.name} {name}: operand {k} has type {got}")
    if (returns is None) != (result is None) or returns is not None and not _is(result, returns):
        raise VerifyException(f"{op.name} {name}: result type {result} does not match the "
                              "kernel's")


@irdl_op_definition
class KernelOp(ExpressionOp):
    """`callee(args)`: a target kernel of the runtime (lowering/c_runtime.py), its name
    and operand types checked against the kernel's signature."""

    name = "cemit.kernel"
    callee = attr_def(StringAttr)
    args = var_operand_def()
    result = result_def()
    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $result)"

    def verify_(self) -> None:
        _verify_kernel(self, [a.type for a in self.args], self.result.type)


@irdl_op_definition
class KernelStmtOp(IRDLOperation):
    """`callee(args);`: a target kernel that returns nothing (it stores to an array)."""

    name = "cemit.kernel_stmt"
    callee = attr_def(StringAttr)
    args = var_operand_def()
    assembly_format = "$callee `(` $args `)` attr-dict `:` type($args)"

    def verify_(self) -> None:
        _verify_kernel(self, [a.type for a in self.args], None)


def statements(region: Region) -> list[Operation]:
    """The statements of a region in order (expressions are printed through their users)."""
    if not region.blocks:
        return []
    # the op's class looked up in a set: isinstance on these ABC classes costs more, and
    # the printer asks this of every op of every block
    return [op for op in region.block.ops if type(op) in STATEMENT_TYPES or (
        type(op) not in EXPRESSION_TYPES and not isinstance(op, ExpressionOp))]


OPS = (IncludeOp, VerbatimOp, GlobalOp, ScratchOp, FuncOp, DeclOp, AssignOp, StoreOp, ForOp,
       IfOp, ReturnOp, CallStmtOp, LiteralOp, RefOp, LoadOp, BinaryOp, UnaryOp, CastOp, CondOp,
       CallOp, BlockOp, TargetIfOp, LocalArrayOp, AddrOp, BareOp, KernelOp, KernelStmtOp)
EXPRESSION_TYPES = frozenset(op for op in OPS if issubclass(op, ExpressionOp))
STATEMENT_TYPES = frozenset(OPS) - EXPRESSION_TYPES

Cemit = Dialect("cemit", list(OPS), [OpaqueType, PointerType])
