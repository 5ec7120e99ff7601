"""Type checker: the shape of every expression, which variable every name refers to, and
what each overloaded operator means, so that the lowering never has to decide anything.

Types are `Int` (with the interval of values it can take, when known, used to check
splices and indices against the tensor's bounds at compile time), real tensors of a fixed
shape (rank 0 is a real scalar), and an error type that silences follow-up errors: after a
bad `let x = ...`, `x` gets the error type and checking goes on, so independent mistakes
are reported together.

Coercions (the spec's "a 1x1 tensor and a scalar convert into each other where needed"):
any one-element real tensor may stand where a scalar or another one-element shape is
expected; the lowering inserts the `minun.reshape`. An integer literal next to a real
operand is read as a real (`1 - z`), an extension of the original language.

Left splices `let A[i:+n] = v in e` update A in place; `writes` records, for every loop,
sum and conditional, the variables bound outside it that are written inside, which the
lowering threads through the region as extra carried values.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from minun_mlir.diagnostics import CompileError, Diagnostic
from minun_mlir.dialects.minun import conv_out_dim, padding_only_window, shape_str
from minun_mlir.limits import params_size_problem, tensor_size_problem

from . import ast
from .source import Pos, Source

MAX_ERRORS = 20
FLOAT32_MAX = 3.4028234663852886e38


# ---- types ---------------------------------------------------------------------------


@dataclass(frozen=True)
class IntType:
    """An i32 value; lo/hi bound it when known (loop indices, literals, argmax).

    `exact` says both bounds are reached by some run (a loop index, `8 * t + 1`), so a
    splice that is out of range at a bound is certainly wrong; an inexact interval (an
    integer sum, `i - i`) is only an over-approximation. `deps` are the loops and sums
    whose index the value depends on: `i + j` is exact, `i - i` is not.
    """

    lo: int | None = None
    hi: int | None = None
    exact: bool = True
    deps: frozenset = frozenset()

    def __str__(self) -> str:
        return "Int"


@dataclass(frozen=True)
class RealType:
    shape: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def one_element(self) -> bool:
        return self.size == 1

    def __str__(self) -> str:
        return shape_str(self.shape)


class ErrorType:
    """The type of an expression that already has an error; it matches everything."""

    def __str__(self) -> str:
        return "<error>"


ERROR = ErrorType()
Type = IntType | RealType | ErrorType
SCALAR = RealType(())


def same_type(a: Type, b: Type) -> bool:
    """Equal up to integer ranges and the one-element coercion."""
    if isinstance(a, IntType) and isinstance(b, IntType):
        return True
    if isinstance(a, RealType) and isinstance(b, RealType):
        return a.shape == b.shape or (a.one_element and b.one_element)
    return False


def join_ints(a: IntType, b: IntType) -> IntType:
    if None in (a.lo, a.hi, b.lo, b.hi):
        return IntType()
    return IntType(min(a.lo, b.lo), max(a.hi, b.hi), a.exact and b.exact, a.deps | b.deps)


def int_arith(op: str, a: IntType, b: IntType) -> IntType:
    """Interval arithmetic; exact when both operands are and depend on different indices."""
    if None in (a.lo, a.hi, b.lo, b.hi):
        return IntType()
    exact = a.exact and b.exact and not (a.deps & b.deps)
    deps = a.deps | b.deps
    if op == "+":
        return IntType(a.lo + b.lo, a.hi + b.hi, exact, deps)
    if op == "-":
        return IntType(a.lo - b.hi, a.hi - b.lo, exact, deps)
    products = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    return IntType(min(products), max(products), exact, deps)


# ---- what the checker hands to the lowering -------------------------------------------


@dataclass(eq=False)
class Binding:
    """One variable: a `let`, the input, a parameter, a loop/sum index or a loop's carried
    value. `depth` is how many loops/sums/conditionals enclose its definition."""

    name: str
    type: Type
    pos: Pos
    kind: str  # "let", "input", "param", "index", "carried"
    depth: int
    carried: Binding | None = None  # the loop-carried variable this let rebinds
    decl: ast.Decl | None = None


@dataclass
class Checked:
    source: Source
    root: ast.Expr
    types: dict[ast.Expr, Type] = field(default_factory=dict)
    # Var -> its binding; Let (left splice) -> the binding it writes.
    refs: dict[ast.Expr, Binding] = field(default_factory=dict)
    # Let -> the new binding; Sum -> [index]; Loop -> [index, carried].
    binds: dict[ast.Expr, list[Binding]] = field(default_factory=dict)
    # Sum/Loop/Cond -> bindings from outside written by a left splice inside.
    writes: dict[ast.Expr, dict[Binding, None]] = field(default_factory=dict)
    # Loop -> the outer variable it carries, when the body left-splices into the carried
    # value: SeeDot's loop works on that variable's buffer in place, so after the loop the
    # variable holds the loop's final value (EdgeML's face programs read it there).
    in_place: dict[ast.Expr, Binding] = field(default_factory=dict)
    # Binary -> "matmul", "scalar_mul", "scalar_mul_swap", "add", "addi", ...
    ops: dict[ast.Expr, str] = field(default_factory=dict)
    real_literals: set[ast.Expr] = field(default_factory=set)
    params: list[Binding] = field(default_factory=list)
    sparse: set[Binding] = field(default_factory=set)
    input: Binding | None = None

    def type_of(self, node: ast.Expr) -> Type:
        return self.types[node]


# ---- the checker ---------------------------------------------------------------------


class Checker:
    def __init__(self, source: Source, root: ast.Expr):
        self.source = source
        self.out = Checked(source, root)
        self.errors: list[Diagnostic] = []
        self.scope: dict[str, Binding] = {}
        self.regions: list[ast.Expr] = []
        self.declared: dict[str, Binding] = {}
        self.spliced: set[Binding] = set()  # targets of left splices
        self.sparse_uses: list[tuple[ast.Expr, Binding]] = []
        self.param_values = 0  # the values of the parameters declared so far

    def error(self, pos: Pos, message: str) -> ErrorType:
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(self.source.diag(pos, message))
        return ERROR

    @contextmanager
    def bound(self, *bindings: Binding) -> Iterator[None]:
        saved = [(b.name, self.scope.get(b.name)) for b in bindings]
        for b in bindings:
            self.scope[b.name] = b
        try:
            yield
        finally:
            for name, old in reversed(saved):
                if old is None:
                    self.scope.pop(name, None)
                else:
                    self.scope[name] = old

    @contextmanager
    def region(self, node: ast.Expr) -> Iterator[None]:
        self.regions.append(node)
        self.out.writes.setdefault(node, {})
        try:
            yield
        finally:
            self.regions.pop()

    def binding(self, name: str, type_: Type, pos: Pos, kind: str, **kw) -> Binding:
        return Binding(name, type_, pos, kind, len(self.regions), **kw)

    def check(self, node: ast.Expr) -> Type:
        method = getattr(self, "check_" + type(node).__name__)
        t = method(node)
        if isinstance(t, RealType) and not isinstance(node, (ast.Var, ast.Let)):
            why = tensor_size_problem(t.shape, "this value")  # before anything allocates it
            if why:
                t = self.error(ast.first_pos(node), why)
        self.out.types[node] = t
        return t

    # ---- helpers -------------------------------------------------------------------

    def real(self, node: ast.Expr, what: str) -> RealType | ErrorType:
        """Check `node` and require a real (tensor or scalar); int literals become reals."""
        t = self.check(node)
        if isinstance(t, IntType):
            if self.as_real_literal(node):
                return SCALAR
            return self.error(ast.first_pos(node), f"{what} must be real, got Int")
        return t

    def as_real_literal(self, node: ast.Expr) -> bool:
        if isinstance(node, ast.IntLit):
            self.out.real_literals.add(node)
            self.out.types[node] = SCALAR
            return True
        return False

    def tensor(self, node: ast.Expr, what: str, rank: int | None = None) -> RealType | ErrorType:
        """Check `node` and require a real tensor (of `rank` dimensions, when given)."""
        t = self.check(node)
        if isinstance(t, ErrorType):
            return t
        if isinstance(t, IntType) or (rank is None and t.rank == 0) or (
                rank is not None and t.rank != rank):
            need = f"a {rank}-D tensor" if rank else "a tensor"
            return self.error(ast.first_pos(node), f"{what} must be {need}, got {t}")
        return t

    def integer(self, node: ast.Expr, what: str) -> IntType | ErrorType:
        t = self.check(node)
        if isinstance(t, RealType):
            return self.error(ast.first_pos(node), f"{what} must be an integer, got {t}")
        return t

    def check_bounds(self, node: ast.Expr, t: IntType | ErrorType, size: int, shape, axis: int,
                     what: str) -> None:
        """A start/index interval must keep [start, start + size) inside dimension `axis`."""
        if not isinstance(t, IntType) or t.lo is None or t.hi is None:
            return
        dim = shape[axis]
        if t.lo >= 0 and t.hi + size <= dim:
            return
        if not t.exact and t.hi >= 0 and t.lo + size <= dim:
            return  # an over-approximation that also holds valid starts: left to run time
        where = f"dimension {axis} of {shape_str(shape)}"
        if t.lo == t.hi:
            shown = f"[{t.lo}:+{size}]" if what == "splice" else f"{t.lo}"
            self.error(ast.first_pos(node), f"{what} {shown} is outside {where}")
        elif t.exact:
            bad = t.lo if t.lo < 0 else t.hi
            shown = f"[start:+{size}]" if what == "splice" else "it"
            self.error(ast.first_pos(node), f"{what} start ranges over [{t.lo}, {t.hi}]; at "
                                            f"{bad}, {shown} is outside {where}")
        else:
            self.error(ast.first_pos(node), f"{what} start lies in [{t.lo}, {t.hi}], always "
                                            f"outside {where}")

    def unify_branches(self, pos: Pos, a: Type, b: Type, what: str) -> Type:
        if isinstance(a, ErrorType) or isinstance(b, ErrorType):
            return ERROR
        if isinstance(a, IntType) and isinstance(b, IntType):
            return join_ints(a, b)
        if isinstance(a, RealType) and isinstance(b, RealType) and same_type(a, b):
            return a if a.rank >= b.rank else b
        return self.error(pos, f"{what} have different types: {a} and {b}")

    # ---- leaves --------------------------------------------------------------------

    def check_IntLit(self, node: ast.IntLit) -> Type:
        if not -(2**31) <= node.value < 2**31:
            return self.error(node.pos, f"integer {node.value} does not fit in 32 bits")
        return IntType(node.value, node.value)

    def check_FloatLit(self, node: ast.FloatLit) -> Type:
        return SCALAR if self.real_value(node.pos, node.value) else ERROR

    def real_value(self, pos: Pos, value: float) -> bool:
        """Reals are float32 at L1: a literal beyond its range is an error, not an inf."""
        if not abs(value) <= FLOAT32_MAX:
            self.error(pos, f"the number {value:g} is too large for a 32-bit real")
            return False
        return True

    def check_Var(self, node: ast.Var) -> Type:
        b = self.scope.get(node.name)
        if b is None:
            return self.unknown(node.pos, node.name)
        self.out.refs[node] = b
        return b.type

    def unknown(self, pos: Pos, name: str, what: str = "") -> ErrorType:
        same_letters = [n for n in self.scope if n.lower() == name.lower()]
        close = same_letters or difflib.get_close_matches(name, list(self.scope), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return self.error(pos, f"unknown name '{name}'{what}{hint}")

    def check_Decl(self, node: ast.Decl) -> Type:
        return self.error(node.pos, "a declaration '(...) in [lo, hi]' is only allowed as the "
                                    "value of a let: let NAME = (...) in [lo, hi] in ...")

    def check_Init(self, node: ast.Init) -> Type:
        return RealType(node.shape) if self.real_value(node.pos, node.fill) else ERROR

    # ---- shape manipulation ---------------------------------------------------------

    def check_Transpose(self, node: ast.Transpose) -> Type:
        t = self.tensor(node.operand, "the operand of ^T", rank=2)
        if isinstance(t, ErrorType):
            return t
        return RealType((t.shape[1], t.shape[0]))

    def check_Reshape(self, node: ast.Reshape) -> Type:
        t = self.tensor(node.operand, "the operand of reshape")
        if isinstance(t, ErrorType):
            return t
        if sorted(node.order) != list(range(1, t.rank + 1)):
            return self.error(node.order_pos,
                              f"reshape order {tuple(node.order)} must be a permutation of "
                              f"1..{t.rank} (the dimensions of {t}, 1-based)")
        new = RealType(node.shape)
        if new.size != t.size:
            return self.error(node.pos, f"reshape cannot change the number of elements: {t} "
                                        f"has {t.size}, {new} has {new.size}")
        return new

    def check_Splice(self, node: ast.Splice) -> Type:
        t = self.tensor(node.operand, "the operand of a splice")
        starts = [self.integer(s, "a splice start") for s in node.starts]
        if isinstance(t, ErrorType):
            return t
        return self.splice_shape(node.pos, t, node.starts, starts, node.sizes, "splice")

    def splice_shape(self, pos: Pos, t: RealType, start_nodes, starts, sizes, what) -> Type:
        if len(sizes) != t.rank:
            return self.error(pos, f"{what} has {len(sizes)} bracket"
                                   f"{'s' if len(sizes) != 1 else ''} [start:+size] but the "
                                   f"tensor is {t} ({t.rank} dimensions): write one per dimension")
        bad = False
        for axis, (node, start, size) in enumerate(zip(start_nodes, starts, sizes)):
            if size > t.shape[axis]:
                self.error(ast.first_pos(node),
                           f"{what} size {size} is larger than dimension {axis} of {t}")
                bad = True
            else:
                before = len(self.errors)
                self.check_bounds(node, start, size, t.shape, axis, "splice")
                bad = bad or len(self.errors) != before
            bad = bad or isinstance(start, ErrorType)
        return ERROR if bad else RealType(tuple(sizes))

    def check_Index(self, node: ast.Index) -> Type:
        t = self.tensor(node.operand, "the indexed value")
        i = self.integer(node.index, "an index")
        if isinstance(t, ErrorType) or isinstance(i, ErrorType):
            return ERROR
        before = len(self.errors)
        self.check_bounds(node.index, i, 1, t.shape, 0, "index")
        if len(self.errors) != before:
            return ERROR
        rest = RealType(t.shape[1:])
        return SCALAR if rest.one_element else rest

    def check_Reverse(self, node: ast.Reverse) -> Type:
        t = self.tensor(node.operand, "the operand of reverse")
        if isinstance(t, ErrorType):
            return t
        if not 0 <= node.axis < t.rank:
            return self.error(node.axis_pos, f"reverse axis {node.axis} is out of range for {t} "
                                             f"(axes 0..{t.rank - 1})")
        return t

    # ---- calls and element-wise functions --------------------------------------------

    def check_Call(self, node: ast.Call) -> Type:
        if node.name in self.scope:
            b = self.scope[node.name]
            self.error(node.pos, f"'{node.name}' is a variable (bound at line {b.pos.line}), "
                                 f"not a function")
        types = [self.check(a) for a in node.args]
        if isinstance(types[0], IntType):
            return IntType()
        return ERROR if any(isinstance(t, ErrorType) for t in types) else types[0]

    def check_Builtin(self, node: ast.Builtin) -> Type:
        name = node.name
        if name in ("argmax", "sgn"):
            t = self.tensor(node.operand, f"the operand of {name}") if name == "argmax" \
                else self.real(node.operand, "the operand of sgn")
            if isinstance(t, ErrorType):
                return t
            if name == "sgn":
                if not t.one_element:
                    return self.error(ast.first_pos(node.operand),
                                      f"sgn needs a scalar (or 1x1) operand, got {t}")
                return IntType(0, 1)
            return IntType(0, t.size - 1)
        if name == "normaliseL2":
            return self.tensor(node.operand, "the operand of normaliseL2 (NHWC)", rank=4)
        return self.real(node.operand, f"the operand of {name}")

    def check_Unary(self, node: ast.Unary) -> Type:
        t = self.check(node.operand)
        if isinstance(t, IntType):
            return IntType() if t.lo is None else IntType(-t.hi, -t.lo, t.exact, t.deps)
        return t

    def check_Binary(self, node: ast.Binary) -> Type:
        a, b = self.check(node.lhs), self.check(node.rhs)
        if isinstance(a, ErrorType) or isinstance(b, ErrorType):
            return ERROR
        op = node.op
        if op in ("+", "-", "*") and isinstance(a, IntType) and isinstance(b, IntType):
            self.out.ops[node] = {"+": "addi", "-": "subi", "*": "muli"}[op]
            return int_arith(op, a, b)
        # An integer literal next to a real is a real.
        if isinstance(a, IntType) and isinstance(b, RealType) and self.as_real_literal(node.lhs):
            a = SCALAR
        if isinstance(b, IntType) and isinstance(a, RealType) and self.as_real_literal(node.rhs):
            b = SCALAR
        if isinstance(a, IntType) or isinstance(b, IntType):
            return self.error(node.pos, f"'{op}' cannot mix an integer and a real: left is {a}, "
                                        f"right is {b}")
        return getattr(self, {"+": "add", "-": "add", "*": "mul", "|*|": "sparse_mul",
                              "<*>": "hadamard", "<+>": "bias", "<->": "bias"}[op])(node, a, b)

    def add(self, node: ast.Binary, a: RealType, b: RealType) -> Type:
        kind = "add" if node.op == "+" else "sub"
        self.out.ops[node] = kind
        if a.shape == b.shape:
            return a
        if a.one_element and b.one_element:
            return a if a.rank >= b.rank else b
        if b.one_element:
            return a
        if a.one_element:
            return b
        verb = "add" if node.op == "+" else "subtract"
        return self.error(node.pos, f"cannot {verb} tensors of different shapes: left is {a}, "
                                    f"right is {b} (needs equal shapes or a scalar operand)")

    def mul(self, node: ast.Binary, a: RealType, b: RealType) -> Type:
        if a.rank == 2 and b.rank == 2 and a.shape[1] == b.shape[0]:
            self.out.ops[node] = "matmul"
            return RealType((a.shape[0], b.shape[1]))
        # A scalar times a tensor; the rank-0 side is the scalar when there is one, so
        # `n * 0.5` keeps the shape of a 1x1 `n`.
        if a.one_element and not (b.rank == 0 and a.rank > 0):
            self.out.ops[node] = "scalar_mul"
            return b
        if b.one_element:
            self.out.ops[node] = "scalar_mul_swap"
            return a
        if a.rank == 2 and b.rank == 2:
            return self.error(node.pos, f"matrix product needs the inner dimensions to agree: "
                                        f"left is {a}, right is {b}")
        return self.error(node.pos, f"'*' needs two 2-D matrices or a scalar operand: left is "
                                    f"{a}, right is {b}")

    def sparse_mul(self, node: ast.Binary, a: RealType, b: RealType) -> Type:
        binding = self.out.refs.get(node.lhs)
        if binding is None or binding.kind != "param":
            return self.error(ast.first_pos(node.lhs),
                              "the left operand of '|*|' must be a model parameter "
                              "(a variable declared as (...) in [lo, hi])")
        if a.rank != 2 or b.rank != 2 or a.shape[1] != b.shape[0]:
            return self.error(node.pos, f"'|*|' needs 2-D operands with matching inner "
                                        f"dimensions: left is {a}, right is {b}")
        self.out.ops[node] = "sparse_matmul"
        self.out.sparse.add(binding)
        self.sparse_uses.append((node.lhs, binding))
        return RealType((a.shape[0], b.shape[1]))

    def hadamard(self, node: ast.Binary, a: RealType, b: RealType) -> Type:
        if same_type(a, b):
            self.out.ops[node] = "hadamard"
            return a if a.rank >= b.rank else b
        if a.rank == 0 or b.rank == 0:  # a scalar times a tensor, element by element
            self.out.ops[node] = "scalar_mul" if a.rank == 0 else "scalar_mul_swap"
            return b if a.rank == 0 else a
        return self.error(node.pos, f"'<*>' needs equal shapes: left is {a}, right is {b}")

    def bias(self, node: ast.Binary, a: RealType, b: RealType) -> Type:
        if a.rank >= 1 and b.rank == 1 and a.shape[-1] == b.shape[0]:
            self.out.ops[node] = "bias_add" if node.op == "<+>" else "bias_sub"
            return a
        return self.error(node.pos, f"'{node.op}' needs a 1-D right operand as long as the last "
                                    f"dimension of the left: left is {a}, right is {b}")

    # ---- convolutions ------------------------------------------------------------------

    def window(self, node: ast.Expr, a: RealType, kernel, strides, pads, dilations,
               what: str) -> tuple[int, int] | None:
        if any(s < 1 for s in strides) or any(d < 1 for d in dilations):
            self.error(node.pos, f"{what}: strides and dilations must be positive")
            return None
        t, b, left, r = pads
        ho = conv_out_dim(a.shape[1], kernel[0], strides[0], t + b, dilations[0])
        wo = conv_out_dim(a.shape[2], kernel[1], strides[1], left + r, dilations[1])
        if ho < 1 or wo < 1:
            self.error(node.pos, f"{what}: the {kernel[0]}x{kernel[1]} window does not fit the "
                                 f"input {a} with padding {list(pads)}")
            return None
        return ho, wo

    def check_MaxPool(self, node: ast.MaxPool) -> Type:
        a = self.tensor(node.operand, "the input of maxpool (NHWC)", rank=4)
        if isinstance(a, ErrorType):
            return a
        if min(node.kernel) < 1:
            return self.error(node.pos, f"maxpool kernel must be positive, got {list(node.kernel)}")
        out = self.window(node, a, node.kernel, node.strides, node.pads, (1, 1), "maxpool")
        if out is None:
            return ERROR
        why = padding_only_window(a.shape, node.kernel, node.strides, node.pads)
        if why:
            return self.error(node.pos, f"maxpool: {why}")
        return RealType((a.shape[0], *out, a.shape[3]))

    def check_Conv2D(self, node: ast.Conv2D) -> Type:
        a = self.tensor(node.input, "the input of conv2d (NHWC)", rank=4)
        f = self.tensor(node.filter, "the filter of conv2d [G, HF, WF, C/G, Cout]", rank=5)
        if isinstance(a, ErrorType) or isinstance(f, ErrorType):
            return ERROR
        g = node.groups
        if g < 1 or f.shape[0] != g or a.shape[3] != g * f.shape[3]:
            return self.error(node.pos, f"conv2d channels do not match {g} group"
                                        f"{'s' if g != 1 else ''}: input is {a}, filter is {f} "
                                        f"(needs filter[0] = groups and C = groups * filter[3])")
        out = self.window(node, a, f.shape[1:3], node.strides, node.pads, node.dilations,
                          "conv2d")
        return ERROR if out is None else RealType((a.shape[0], *out, g * f.shape[4]))

    def check_MBConv(self, node: ast.MBConv) -> Type:
        a = self.tensor(node.input, "the input of mbconv (NHWC)", rank=4)
        types = [[self.check(e) for e in layer] for layer in node.layers]
        if isinstance(a, ErrorType) or any(isinstance(t, ErrorType) for ts in types for t in ts):
            return ERROR
        for k, (layer, ts) in enumerate(zip(node.layers, types), 1):
            for e, t, name in zip(layer, ts, ("F", "W", "B")):
                rank = 5 if name == "F" else 1
                if not isinstance(t, RealType) or t.rank != rank:
                    return self.error(ast.first_pos(e),
                                      f"mbconv: {name}{k} must be a {rank}-D tensor, got {t}")
        (f1, w1, b1), (f2, w2, b2), (f3, w3, b3) = (tuple(t.shape for t in ts) for ts in types)
        c, t = a.shape[3], f1[4]
        shown = f"input {a}, F1 {shape_str(f1)}, F2 {shape_str(f2)}, F3 {shape_str(f3)}"
        if f1[:4] != (1, 1, 1, c) or f2[0] != t or f2[3:] != (1, 1) or f3[:4] != (1, 1, 1, t):
            return self.error(node.pos, f"mbconv filter shapes must be F1 [1,1,1,C,T], "
                                        f"F2 [T,HF,WF,1,1], F3 [1,1,1,T,Cout]: {shown}")
        for k, shapes, size in ((1, (w1, b1), t), (2, (w2, b2), t), (3, (w3, b3), f3[4])):
            for name, s in zip("WB", shapes):
                if s != (size,):
                    e = node.layers[k - 1]["WB".index(name) + 1]
                    return self.error(e.pos, f"mbconv: {name}{k} must have {size} values (the "
                                             f"channels of layer {k}), got {shape_str(s)}")
        out = self.window(node, a, f2[1:3], node.strides, node.pads, (1, 1), "mbconv")
        return ERROR if out is None else RealType((a.shape[0], *out, f3[4]))

    # ---- regions -----------------------------------------------------------------------

    def check_range(self, node: ast.Sum | ast.Loop, what: str) -> bool:
        if node.lo >= node.hi:
            self.error(node.pos, f"empty range [{node.lo}:{node.hi}] of {what} (needs start < end)")
            return False
        return True

    def check_Sum(self, node: ast.Sum) -> Type:
        ok = self.check_range(node, "'$'")
        with self.region(node):
            index = self.binding(node.var, IntType(node.lo, node.hi - 1, deps=frozenset([node])),
                                 node.var_pos, "index")
            self.out.binds[node] = [index]
            with self.bound(index):
                t = self.check(node.body)
        if isinstance(t, IntType) and t.lo is not None:
            n = node.hi - node.lo
            t = IntType(n * t.lo, n * t.hi, exact=False, deps=t.deps - {node})
        return t if ok else ERROR

    def check_Loop(self, node: ast.Loop) -> Type:
        ok = self.check_range(node, "loop")
        if not isinstance(node.carried, ast.Var):
            self.check(node.carried)
            self.error(ast.first_pos(node.carried), "loop carries a variable: the second item of "
                                         "loop(i = [a:b], H) must be a variable name")
            carried_t: Type = ERROR
        else:
            carried_t = self.check(node.carried)
            if node.carried.name == node.var:
                self.error(node.var_pos, f"the loop index and the carried variable are both "
                                         f"named '{node.var}'")
                ok = False
        with self.region(node):
            index = self.binding(node.var, IntType(node.lo, node.hi - 1, deps=frozenset([node])),
                                 node.var_pos, "index")
            name = node.carried.name if isinstance(node.carried, ast.Var) else "<carried>"
            if isinstance(carried_t, IntType):
                carried_t = IntType()  # changes from one iteration to the next
            carried = self.binding(name, carried_t, node.carried.pos, "carried")
            self.out.binds[node] = [index, carried]
            with self.bound(index, carried):
                t = self.check(node.body)
        outer = self.out.refs.get(node.carried)
        if carried in self.spliced and outer is not None:
            self.out.in_place[node] = outer
            self.spliced.add(outer)
            for k, region in enumerate(self.regions):
                if outer.depth <= k:
                    self.out.writes[region][outer] = None
        if isinstance(t, ErrorType) or isinstance(carried_t, ErrorType):
            return ERROR
        if not same_type(t, carried_t):
            return self.error(ast.first_pos(node.body),
                              f"the loop body's value has type {t}, but the carried variable "
                              f"'{name}' is {carried_t} (the body's value becomes the new "
                              f"'{name}')")
        return carried_t if ok else ERROR

    def check_Cond(self, node: ast.Cond) -> Type:
        c = self.check(node.cond)
        if not self.real_value(node.pos, node.threshold):
            c = ERROR
        elif isinstance(c, RealType) and not c.one_element:
            self.error(ast.first_pos(node.cond),
                       f"the condition of '? :' must be a scalar or an integer, got {c}")
            c = ERROR
        if isinstance(c, IntType) and not (node.threshold == int(node.threshold)
                                           and -(2**31) <= node.threshold < 2**31):
            self.error(node.pos, f"an integer condition compares with a 32-bit integer, got "
                                 f"{node.threshold:g}")
        with self.region(node):
            a = self.check(node.then)
            b = self.check(node.else_)
        if isinstance(a, IntType) and isinstance(b, RealType) and self.as_real_literal(node.then):
            a = SCALAR
        if isinstance(b, IntType) and isinstance(a, RealType) and self.as_real_literal(node.else_):
            b = SCALAR
        t = self.unify_branches(node.pos, a, b, "the branches of '? :'")
        return ERROR if isinstance(c, ErrorType) else t

    # ---- let -----------------------------------------------------------------------

    def check_Let(self, node: ast.Let) -> Type:
        if node.is_splice:
            return self.left_splice(node)
        if isinstance(node.value, ast.Decl):
            binding = self.declaration(node)
        else:
            t = self.check(node.value)
            previous = self.scope.get(node.name)
            carried = None
            if previous is not None:
                carried = previous if previous.kind == "carried" else previous.carried
            if carried is not None and not isinstance(t, ErrorType) and not isinstance(
                    carried.type, ErrorType) and not same_type(t, carried.type):
                self.error(node.pos, f"'{node.name}' is carried by the loop at line "
                                     f"{carried.pos.line} with type {carried.type}; rebinding "
                                     f"it to {t} would change its type")
            binding = self.binding(node.name, t, node.pos, "let", carried=carried)
        self.out.binds[node] = [binding]
        with self.bound(binding):
            return self.check(node.body)

    def declaration(self, node: ast.Let) -> Binding:
        decl = node.value
        assert isinstance(decl, ast.Decl)
        t: Type = RealType(decl.shape)
        if not decl.lo <= decl.hi:
            t = self.error(decl.pos, f"empty range [{decl.lo}, {decl.hi}]: the lower bound is "
                                     f"above the upper bound")
        if not (self.real_value(decl.pos, decl.lo) and self.real_value(decl.pos, decl.hi)):
            t = ERROR
        size = math.prod(decl.shape)
        if node.name == "X":
            why = tensor_size_problem(decl.shape, f"the input '{node.name}'")
        else:  # every parameter is stored, so their sizes add up
            self.param_values += size
            why = params_size_problem(self.param_values, f"the parameter '{node.name}'" if
                                      size == self.param_values else "the parameters "
                                      f"declared up to '{node.name}' ({size:,} in it)")
        if why:
            t = self.error(decl.pos, why)
        first = self.declared.get(node.name)
        if first is not None:
            self.error(node.pos, f"'{node.name}' is declared twice (first at line "
                                 f"{first.pos.line}, column {first.pos.col})")
        kind = "input" if node.name == "X" else "param"
        binding = self.binding(node.name, t, node.pos, kind, decl=decl)
        self.out.types[decl] = t
        if first is None:
            self.declared[node.name] = binding
            if kind == "input":
                self.out.input = binding
            else:
                self.out.params.append(binding)
        return binding

    def left_splice(self, node: ast.Let) -> Type:
        target = self.scope.get(node.name)
        starts = [self.integer(s, "a splice start") for s in node.starts]
        value = self.check(node.value)
        if target is None:
            self.unknown(node.pos, node.name, " (the target of a left splice must exist)")
        elif not isinstance(target.type, ErrorType):
            self.out.refs[node] = target
            self.spliced.add(target)
            t = target.type
            if not isinstance(t, RealType) or t.rank == 0:
                self.error(node.pos, f"left splice into '{node.name}' needs a tensor, got {t}")
            else:
                part = self.splice_shape(node.pos, t, node.starts, starts, node.sizes,
                                         "left splice")
                if isinstance(part, RealType) and not isinstance(value, ErrorType) and not (
                        isinstance(value, RealType) and same_type(value, part)):
                    if isinstance(value, IntType) and self.as_real_literal(node.value):
                        value = SCALAR
                    if not same_type(value, part):
                        self.error(ast.first_pos(node.value),
                                   f"left splice writes a value of type {value} into a {part} "
                                   f"slice of '{node.name}' ({t})")
                for k, region in enumerate(self.regions):
                    if target.depth <= k:
                        self.out.writes[region][target] = None
        return self.check(node.body)


def check_collect(source: Source, root: ast.Expr) -> tuple[Checked, list[Diagnostic]]:
    """Type-check, returning the tables and the errors (sorted by position) without raising:
    the declarations are known even when some expressions are wrong."""
    checker = Checker(source, root)
    checker.check(root)
    for node, binding in checker.sparse_uses:
        # The sparse operand is stored compressed as it was trained: never a modified copy.
        if binding in checker.spliced:
            checker.error(node.pos, f"the left operand of '|*|' must be a model parameter as "
                                    f"loaded, but '{binding.name}' is written by a left splice")
    ordered = sorted(checker.errors, key=lambda d: (d.loc.line, d.loc.col))
    return checker.out, list(dict.fromkeys(ordered))


def check_program(source: Source, root: ast.Expr) -> Checked:
    """Type-check a parsed program; raises CompileError with every error found."""
    checked, errors = check_collect(source, root)
    if errors:
        raise CompileError(errors)
    return checked
