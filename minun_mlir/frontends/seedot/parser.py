"""Recursive-descent parser for SeeDot, one method per binding level (loosest first):

    expr     := 'let' ... | cond
    cond     := additive ('>=' number '?' expr ':' expr)?
    additive := product (('+' | '-') product)*
    product  := unary (('*' | '|*|' | '<*>' | '<+>' | '<->') unary)*
    unary    := ('-' | '+') unary | postfix
    postfix  := primary ('^T' | '[' expr ']' | '[' expr ':+' INT ']')*
    primary  := literal | name | call | '(' expr ')' | declaration | built-in | '$' | loop | let

`let`, `$(..)` and `loop(..)` are prefix forms: they may start any operand and their body
extends as far to the right as it can (the body of `$` and `loop` is an additive
expression, as in the original ANTLR grammar where they bind looser than the arithmetic
operators and tighter than `? :`). A syntax error stops parsing: the first one is reported.
"""

from __future__ import annotations

from collections.abc import Callable

from . import ast
from .lexer import Token, tokenize
from .source import Pos, Source

PRODUCT_OPS = ("*", "|*|", "<*>", "<+>", "<->")
BUILTINS = ("relu", "relu6", "exp", "tanh", "sigmoid", "argmax", "sgn", "normaliseL2")

# Option groups: letter -> (name in messages, how many integers it takes).
OPTIONS = {
    "k": ("kernel", 2),
    "p": ("padding", 4),
    "s": ("stride", 2),
    "d": ("dilation", 2),
    "g": ("groups", 1),
}


class Parser:
    def __init__(self, source: Source):
        self.source = source
        self.tokens = tokenize(source)
        self.i = 0

    # ---- token helpers -------------------------------------------------------------

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        tok = self.tok
        if tok.kind != "EOF":
            self.i += 1
        return tok

    def at(self, text: str) -> bool:
        return self.tok.text == text and self.tok.kind in ("PUNCT", "KEYWORD")

    def accept(self, text: str) -> Token | None:
        return self.advance() if self.at(text) else None

    def fail(self, message: str, tok: Token | None = None):
        tok = tok or self.tok
        raise self.source.error(tok.pos, message)

    def expect(self, text: str, context: str = "") -> Token:
        if self.at(text):
            return self.advance()
        where = f" {context}" if context else ""
        self.fail(f"expected '{text}'{where}, got {self.tok.describe()}")

    def expect_int(self, what: str) -> tuple[int, Pos]:
        tok = self.tok
        sign = 1
        if tok.is_("PUNCT", "-") and self.peek().kind == "INT":
            sign = -1
            self.advance()
        if self.tok.kind != "INT":
            self.fail(f"expected an integer for {what}, got {self.tok.describe()}")
        value = self.advance()
        return sign * int(value.text), tok.pos

    def expect_positive(self, what: str) -> int:
        value, pos = self.expect_int(what)
        if value < 1:
            raise self.source.error(pos, f"{what} must be a positive integer, got {value}")
        return value

    def expect_number(self, what: str) -> float:
        sign = 1.0
        if self.tok.is_("PUNCT", "-") or self.tok.is_("PUNCT", "+"):
            sign = -1.0 if self.advance().text == "-" else 1.0
        if self.tok.kind not in ("INT", "FLOAT"):
            self.fail(f"expected a number for {what}, got {self.tok.describe()}")
        return sign * float(self.advance().text)

    def expect_ident(self, what: str) -> Token:
        if self.tok.kind != "IDENT":
            extra = " (a reserved word)" if self.tok.kind == "KEYWORD" else ""
            self.fail(f"expected {what}, got {self.tok.describe()}{extra}")
        return self.advance()

    def sequence(self, close: str, item: Callable[[], object], what: str) -> list:
        """`item (',' item)*` up to (and eating) `close`; at least one item."""
        items = [item()]
        while self.accept(","):
            items.append(item())
        self.expect(close, f"to close the {what}")
        return items

    # ---- grammar -------------------------------------------------------------------

    def program(self) -> ast.Expr:
        if self.tok.kind == "EOF":
            self.fail("the program is empty: expected an expression")
        e = self.expr()
        if self.tok.kind != "EOF":
            hint = ""
            if self.tok.is_("KEYWORD", "let") or self.tok.kind in ("IDENT", "INT", "FLOAT"):
                hint = " (is an 'in' missing before it?)"
            self.fail(f"unexpected {self.tok.describe()} after the end of the expression{hint}")
        return e

    def expr(self) -> ast.Expr:
        if self.at("let"):
            return self.let()
        return self.cond()

    def let(self) -> ast.Let:
        self.expect("let")
        name = self.expect_ident("a variable name after 'let'")
        starts: list[ast.Expr] = []
        sizes: list[int] = []
        while self.at("["):
            start, size = self.splice_bracket(required=True)
            starts.append(start)
            sizes.append(size)
        self.expect("=", f"after 'let {name.text}'")
        value = self.expr()
        self.expect("in", f"after the value of '{name.text}'")
        body = self.expr()
        return ast.Let(name.pos, name.text, value, body, starts, sizes)

    def splice_bracket(self, required: bool) -> tuple[ast.Expr, int | None]:
        """`[start:+size]` (size an integer) or, unless required, `[index]`."""
        self.expect("[")
        start = self.expr()
        spaced = self.at(":") and self.peek().is_("PUNCT", "+")  # `: +` spelled apart
        if self.accept(":+") or spaced:
            if spaced:
                self.advance()
                self.advance()
            size = self.expect_positive("the size of a splice")
            self.expect("]", "to close the splice")
            return start, size
        if required:
            self.fail(f"expected ':+' and a size in a left splice, got {self.tok.describe()}")
        self.expect("]", "to close the index")
        return start, None

    def cond(self) -> ast.Expr:
        e = self.additive()
        if self.at(">="):
            op = self.advance()
            threshold = self.expect_number("the right side of '>='")
            self.expect("?", "after the condition")
            then = self.expr()
            self.expect(":", "between the branches of '? :'")
            else_ = self.expr()
            return ast.Cond(op.pos, e, threshold, then, else_)
        return e

    def additive(self) -> ast.Expr:
        e = self.product()
        while self.at("+") or self.at("-"):
            op = self.advance()
            e = ast.Binary(op.pos, op.text, e, self.product())
        return e

    def product(self) -> ast.Expr:
        e = self.unary()
        while any(self.at(op) for op in PRODUCT_OPS):
            op = self.advance()
            e = ast.Binary(op.pos, op.text, e, self.unary())
        return e

    def unary(self) -> ast.Expr:
        if self.at("-") or self.at("+"):
            op = self.advance()
            operand = self.unary()
            if op.text == "+":
                return operand
            # Fold the sign into a literal: `-1e-5` is one number, as in the original lexer.
            if isinstance(operand, ast.IntLit | ast.FloatLit) and operand.pos.line == op.pos.line:
                operand.value = -operand.value
                length = operand.pos.col + operand.pos.length - op.pos.col
                operand.pos = Pos(op.pos.line, op.pos.col, length)
                return operand
            return ast.Unary(op.pos, "-", operand)
        return self.postfix()

    def postfix(self) -> ast.Expr:
        e = self.primary()
        open_splice: ast.Splice | None = None  # `A[i:+2][j:+3]` is one 2-D splice
        while True:
            if self.at("^T"):
                e = ast.Transpose(self.advance().pos, e)
                open_splice = None
            elif self.at("["):
                pos = self.tok.pos
                start, size = self.splice_bracket(required=False)
                if size is None:
                    e = ast.Index(pos, e, start)
                    open_splice = None
                elif open_splice is not None:
                    open_splice.starts.append(start)
                    open_splice.sizes.append(size)
                else:
                    e = open_splice = ast.Splice(pos, e, [start], [size])
            else:
                return e

    def primary(self) -> ast.Expr:
        tok = self.tok
        if tok.kind == "INT":
            self.advance()
            return ast.IntLit(tok.pos, int(tok.text))
        if tok.kind == "FLOAT":
            self.advance()
            return ast.FloatLit(tok.pos, float(tok.text))
        if tok.kind == "IDENT":
            self.advance()
            if self.at("("):
                self.advance()
                if self.at(")"):
                    self.fail(f"external function '{tok.text}' needs at least one argument", tok)
                args = self.sequence(")", self.expr, f"arguments of '{tok.text}'")
                return ast.Call(tok.pos, tok.text, args)
            return ast.Var(tok.pos, tok.text)
        if tok.is_("PUNCT", "("):
            if self._is_declaration():
                return self.declaration()
            self.advance()
            e = self.expr()
            self.expect(")", "to close the parenthesis")
            return e
        if tok.is_("PUNCT", "$"):
            return self.sum()
        if tok.kind == "KEYWORD":
            if tok.text == "let":
                return self.let()
            method = getattr(self, f"kw_{tok.text}", None)
            if method is not None:
                return method()
            if tok.text in BUILTINS:
                self.advance()
                self.expect("(", f"after '{tok.text}'")
                operand = self.expr()
                if self.at(","):
                    self.fail(f"'{tok.text}' takes one argument")
                self.expect(")", f"to close '{tok.text}('")
                return ast.Builtin(tok.pos, tok.text, operand)
            self.fail(f"'{tok.text}' cannot start an expression")
        if tok.kind == "OPTION":
            self.fail(f"option group '{tok.text}' is only allowed in conv2d, maxpool and mbconv")
        if tok.kind == "EOF":
            self.fail("unexpected end of the program: expected an expression")
        self.fail(f"expected an expression, got {tok.describe()}")

    # ---- forms that start with '(' or a keyword ------------------------------------

    def _is_declaration(self) -> bool:
        """`( INT (, INT)* ) in [` starts a declaration; anything else is a parenthesis."""
        j = self.i + 1
        while True:
            if self.tokens[j].kind != "INT":
                return False
            j += 1
            if self.tokens[j].is_("PUNCT", ","):
                j += 1
                continue
            return (self.tokens[j].is_("PUNCT", ")") and self.tokens[j + 1].is_("KEYWORD", "in")
                    and self.tokens[j + 2].is_("PUNCT", "["))

    def declaration(self) -> ast.Decl:
        pos = self.expect("(").pos
        shape = self.sequence(")", lambda: self.expect_positive("a dimension"), "shape")
        self.expect("in")
        self.expect("[")
        lo = self.expect_number("the lower bound of the range")
        self.expect(",", "between the bounds of the range")
        hi = self.expect_number("the upper bound of the range")
        self.expect("]", "to close the range")
        return ast.Decl(pos, tuple(shape), lo, hi)

    def kw_init(self) -> ast.Init:
        pos = self.advance().pos
        self.expect("(", "after 'init'")
        self.expect("[", "before the shape of init")
        shape = self.sequence("]", lambda: self.expect_positive("a dimension"), "shape")
        self.expect(",", "after the shape of init")
        fill = self.expect_number("the fill value of init")
        self.expect(")", "to close 'init('")
        return ast.Init(pos, tuple(shape), fill)

    def kw_reshape(self) -> ast.Reshape:
        pos = self.advance().pos
        self.expect("(", "after 'reshape'")
        operand = self.expr()
        self.expect(",", "after the operand of reshape")
        self.expect("(", "before the shape of reshape")
        shape = self.sequence(")", lambda: self.expect_positive("a dimension"), "shape")
        self.expect(",", "after the shape of reshape")
        order_pos = self.expect("(", "before the traversal order of reshape").pos
        order = self.sequence(")", lambda: self.expect_int("the traversal order")[0], "order")
        self.expect(")", "to close 'reshape('")
        return ast.Reshape(pos, operand, tuple(shape), tuple(order), order_pos)

    def kw_reverse(self) -> ast.Reverse:
        pos = self.advance().pos
        self.expect("(", "after 'reverse'")
        operand = self.expr()
        self.expect(",", "after the operand of reverse")
        axis, axis_pos = self.expect_int("the axis of reverse")
        self.expect(")", "to close 'reverse('")
        return ast.Reverse(pos, operand, axis, axis_pos)

    def options(self, op: str, letters: str) -> dict[str, tuple[int, ...]]:
        """`, {x n ...}` groups for `op`, exactly the groups in `letters`, in any order."""
        found: dict[str, tuple[int, ...]] = {}
        while self.accept(","):
            tok = self.tok
            if tok.kind != "OPTION":
                self.fail(f"expected an option group of {op} "
                          f"({', '.join('{' + c for c in letters)}), got {tok.describe()}")
            letter = tok.text[1]
            name, count = OPTIONS[letter]
            if letter not in letters:
                self.fail(f"{op} takes no {name} option group '{tok.text}' (it takes "
                          f"{', '.join('{' + c for c in letters)})")
            if letter in found:
                self.fail(f"{op}: option group '{tok.text}' given twice")
            self.advance()
            values = []
            while self.tok.kind == "INT":
                values.append(int(self.advance().text))
            if not self.at("}"):
                self.fail(f"expected an integer or '}}' in option group '{tok.text}', got "
                          f"{self.tok.describe()}")
            self.advance()
            if len(values) != count:
                raise self.source.error(
                    tok.pos, f"{op}: option group '{tok.text}' ({name}) takes {count} "
                             f"integer{'s' if count > 1 else ''}, got {len(values)}")
            found[letter] = tuple(values)
        missing = [c for c in letters if c not in found]
        if missing:
            self.fail(f"{op}: missing option group{'s' if len(missing) > 1 else ''} "
                      f"{', '.join('{' + c for c in missing)} (expected "
                      f"{', '.join('{' + c + ' ...}' for c in letters)})")
        self.expect(")", f"to close '{op}('")
        return found

    def kw_maxpool(self) -> ast.MaxPool:
        pos = self.advance().pos
        self.expect("(", "after 'maxpool'")
        operand = self.expr()
        o = self.options("maxpool", "kps")
        return ast.MaxPool(pos, operand, o["k"], o["p"], o["s"])

    def kw_conv2d(self) -> ast.Conv2D:
        pos = self.advance().pos
        self.expect("(", "after 'conv2d'")
        a = self.expr()
        self.expect(",", "after the input of conv2d")
        f = self.expr()
        o = self.options("conv2d", "spdg")
        return ast.Conv2D(pos, a, f, o["s"], o["p"], o["d"], o["g"][0])

    def kw_mbconv(self) -> ast.MBConv:
        pos = self.advance().pos
        self.expect("(", "after 'mbconv'")
        a = self.expr()
        layers = []
        for k in range(1, 4):
            self.expect(",", "in mbconv")
            self.expect("[", f"before layer {k} [F{k}, W{k}, B{k}] of mbconv")
            layer = self.sequence("]", self.expr, f"layer {k} of mbconv")
            if len(layer) != 3:
                raise self.source.error(
                    pos, f"mbconv: layer {k} must be [F{k}, W{k}, B{k}] (3 tensors), "
                         f"got {len(layer)}")
            layers.append(layer)
        o = self.options("mbconv", "sp")
        return ast.MBConv(pos, a, layers, o["s"], o["p"])

    def range_header(self, what: str) -> tuple[str, Pos, int, int]:
        """`name = [lo:hi]` of `$` and `loop`."""
        var = self.expect_ident(f"the index variable of {what}")
        self.expect("=", f"after the index of {what}")
        self.expect("[", f"before the range of {what}")
        lo, _ = self.expect_int(f"the start of the range of {what}")
        self.expect(":", f"in the range of {what}")
        hi, _ = self.expect_int(f"the end of the range of {what}")
        self.expect("]", f"to close the range of {what}")
        return var.text, var.pos, lo, hi

    def sum(self) -> ast.Sum:
        pos = self.advance().pos
        self.expect("(", "after '$'")
        var, var_pos, lo, hi = self.range_header("'$'")
        self.expect(")", "after the range of '$'")
        return ast.Sum(pos, var, var_pos, lo, hi, self.body())

    def kw_loop(self) -> ast.Loop:
        pos = self.advance().pos
        self.expect("(", "after 'loop'")
        var, var_pos, lo, hi = self.range_header("loop")
        self.expect(",", "before the carried variable of loop")
        carried = self.expr()
        self.expect(")", "after the carried variable of loop")
        return ast.Loop(pos, var, var_pos, lo, hi, carried, self.body())

    def body(self) -> ast.Expr:
        if self.at("let"):
            return self.let()
        return self.additive()


def parse(text: str, path: str = "<string>") -> ast.Expr:
    """Parse a whole program; raises CompileError with the first syntax error."""
    return Parser(Source(text, path)).program()


def parse_source(source: Source) -> ast.Expr:
    return Parser(source).program()
