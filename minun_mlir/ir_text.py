"""Parsing textual IR with source locations, and verification errors that point at them.

xDSL's parser only records a location when the text spells `loc(...)`; ours records the
`file:line:col` of every op, so that a verifier error reads like a compiler error.
"""

from __future__ import annotations

import bisect
import re

from xdsl.context import Context
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRLexer

from minun_mlir.diagnostics import location_of


class LinearLexer(MLIRLexer):
    """xDSL 0.74's string-literal regex nests `+` inside `*`, so a string that is never
    closed (a truncated file: every L1/L2 file holds long hex weight blobs) backtracks
    exponentially and the parser never returns. Matching one character per repetition,
    possessively, makes it linear; the error is then xDSL's own "End of file reached
    before closing string literal" (docs/reliability.md)."""

    _unescaped_characters_regex = re.compile(
        r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')

_OP_NAME = re.compile(r'(?:%[^=]*=\s*)?"?([A-Za-z_][\w$.]*)')


class LocatingParser(Parser):
    def __init__(self, ctx: Context, text: str, name: str, line_offset: int = 0):
        super().__init__(ctx, "", name)
        self._parser_state = ParserState(LinearLexer(Input(text, name)))
        self._name = name
        self._line_offset = line_offset
        self._line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def parse_operation(self) -> Operation:
        start = self.pos
        try:
            op = super().parse_operation()
        except VerifyException as error:
            # A declarative assembly format checks attribute constraints while parsing
            # (`rounding = "up"` where #num<rounding ...> is expected): report it like a
            # verifier error, with the op's name, at the op.
            match = _OP_NAME.match(self.lexer.input.content, start)
            name = match.group(1) if match else "operation"
            end = match.end(1) if match else start + 1
            message = " ".join(str(error).split())
            self.raise_error(f"{name}: {message}", start, end)
        except ValueError as e:  # a dialect's custom parser on a bad value (xDSL's own
            # attribute constructors raise ValueError): a parse error at the op
            self.raise_error(str(e), start, self.pos)
        if isinstance(op.location, UnknownLoc):
            line = bisect.bisect_right(self._line_starts, start) - 1
            col = start - self._line_starts[line] + 1
            op.location = FileLineColLoc(
                StringAttr(self._name), IntAttr(line + 1 + self._line_offset), IntAttr(col))
        return op


def make_context() -> Context:
    """A context with xDSL's dialects and ours (what minun-opt knows)."""
    from xdsl.universe import Universe

    from minun_mlir import registry

    ctx = Context()
    for name, factory in Universe.get_multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    for name, factory in registry.DIALECTS.items():
        ctx.register_dialect(name, factory)
    return ctx


def parse_ir(text: str, name: str = "<ir>") -> ModuleOp:
    """Parse textual IR (with locations) and verify it."""
    module = LocatingParser(make_context(), text, name).parse_module()
    verify_located(module)
    return module


def check_defined(module: ModuleOp) -> None:
    """No operand is a value the parser saw used but never defined (xDSL leaves those in
    nested regions as forward declarations, and its verifier then fails on them)."""
    for op in module.walk():
        for operand in op.operands:
            if isinstance(operand, ForwardDeclaredValue):
                where = location_of(op)
                prefix = f"{where}: error: " if where else "error: "
                raise VerifyException(f"{prefix}{op.name}: operand {op.operands.index(operand)} "
                                      f"is a value that is never defined before its use")


def check_dominance(module: ModuleOp) -> None:
    """Every operand is defined before its use: earlier in the same block, or in a block
    that encloses it (xDSL's verifier does not check this; a pass would fail on it)."""
    position: dict[Operation, int] = {}
    for op in module.walk():
        block = op.parent_block()
        if block is not None and op not in position:
            position.update((o, i) for i, o in enumerate(block.ops))
    for op in module.walk():
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, Operation):
                def_block, defined = owner.parent_block(), owner
            else:  # a block argument
                def_block, defined = owner, None
            user = op
            while user is not None and user.parent_block() is not def_block:
                user = user.parent_op()
            if user is None or (defined is not None and position[defined] >= position[user]):
                where = location_of(op)
                name = operand.name_hint or "an operand"
                prefix = f"{where}: error: " if where else "error: "
                raise VerifyException(f"{prefix}{op.name}: operand %{name} is used before "
                                      f"it is defined (or outside its scope)")


def check_model_modes(module: ModuleOp) -> None:
    """The model-wide `num.rounding` / `num.overflow` attributes (on the L2 function) name
    modes that exist: the lowering and the evaluator read them as they are."""
    from minun_mlir.formats.fixed import arith as fx

    for op in module.walk():
        for key, modes in (("num.rounding", fx.ROUNDING_MODES),
                           ("num.overflow", fx.OVERFLOW_MODES)):
            attr = op.attributes.get(key)
            if attr is not None and not (isinstance(attr, StringAttr) and attr.data in modes):
                where = location_of(op)
                prefix = f"{where}: error: " if where else "error: "
                raise VerifyException(f"{prefix}{op.name}: {key} must be one of "
                                      f"{', '.join(modes)} (a string), got {attr}")
        attr = op.attributes.get("num.quire")  # posits: quantize{quire=false}
        if attr is not None and not (isinstance(attr, IntegerAttr)
                                     and attr.type == IntegerType(1)):
            where = location_of(op)
            prefix = f"{where}: error: " if where else "error: "
            raise VerifyException(f"{prefix}{op.name}: num.quire must be true or false, "
                                  f"got {attr}")


def verify_located(module: ModuleOp) -> None:
    """Verify; on failure raise a VerifyException naming the first bad op's location."""
    check_defined(module)
    check_model_modes(module)
    try:
        module.verify()
    except VerifyException as error:
        for op in module.walk():
            try:
                op.verify(verify_nested_ops=False)
            except VerifyException as inner:
                where = location_of(op)
                message = " ".join(str(inner).split())
                if not message.startswith(op.name):
                    message = f"{op.name}: {message}"
                prefix = f"{where}: error: " if where else "error: "
                raise VerifyException(prefix + message) from None
        raise error
    check_dominance(module)
