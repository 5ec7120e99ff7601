"""The SeeDot syntax tree. One class per form of the language; every node has the `pos` of
the token that names it (the operator of a binary expression, the name of a variable, the
keyword of a built-in), which is where diagnostics about that node point.

Nodes compare by identity (`eq=False`), so the type checker can key tables by node.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .source import Pos


@dataclass(eq=False)
class Expr:
    pos: Pos


@dataclass(eq=False)
class IntLit(Expr):
    value: int


@dataclass(eq=False)
class FloatLit(Expr):
    value: float


@dataclass(eq=False)
class Var(Expr):
    name: str


@dataclass(eq=False)
class Decl(Expr):
    """`(d1, ..., dk) in [lo, hi]`: the input X or a model parameter."""

    shape: tuple[int, ...]
    lo: float
    hi: float


@dataclass(eq=False)
class Init(Expr):
    shape: tuple[int, ...]
    fill: float


@dataclass(eq=False)
class Transpose(Expr):
    operand: Expr


@dataclass(eq=False)
class Reshape(Expr):
    operand: Expr
    shape: tuple[int, ...]
    order: tuple[int, ...]  # 1-based, as written
    order_pos: Pos


@dataclass(eq=False)
class Splice(Expr):
    """`e[s1:+n1]...[sk:+nk]`: one start expression and one constant size per dimension."""

    operand: Expr
    starts: list[Expr]
    sizes: list[int]


@dataclass(eq=False)
class Index(Expr):
    operand: Expr
    index: Expr


@dataclass(eq=False)
class MaxPool(Expr):
    operand: Expr
    kernel: tuple[int, int]
    pads: tuple[int, int, int, int]
    strides: tuple[int, int]


@dataclass(eq=False)
class Reverse(Expr):
    operand: Expr
    axis: int
    axis_pos: Pos


@dataclass(eq=False)
class Call(Expr):
    """`Name(e1, ..., en)`: an external function; the result has e1's type."""

    name: str
    args: list[Expr]


@dataclass(eq=False)
class Unary(Expr):
    op: str  # "-" or "+"
    operand: Expr


@dataclass(eq=False)
class Binary(Expr):
    op: str  # "*", "|*|", "<*>", "<+>", "<->", "+", "-"
    lhs: Expr
    rhs: Expr


@dataclass(eq=False)
class Conv2D(Expr):
    input: Expr
    filter: Expr
    strides: tuple[int, int]
    pads: tuple[int, int, int, int]
    dilations: tuple[int, int]
    groups: int


@dataclass(eq=False)
class MBConv(Expr):
    input: Expr
    layers: list[list[Expr]]  # [[F1, W1, B1], [F2, W2, B2], [F3, W3, B3]]
    strides: tuple[int, int]
    pads: tuple[int, int, int, int]


@dataclass(eq=False)
class Builtin(Expr):
    """relu, relu6, exp, tanh, sigmoid, argmax, sgn, normaliseL2 applied to one operand."""

    name: str
    operand: Expr


@dataclass(eq=False)
class Sum(Expr):
    """`$(var = [lo:hi]) body`."""

    var: str
    var_pos: Pos
    lo: int
    hi: int
    body: Expr


@dataclass(eq=False)
class Loop(Expr):
    """`loop(var = [lo:hi], carried) body`; `carried` must be a variable."""

    var: str
    var_pos: Pos
    lo: int
    hi: int
    carried: Expr
    body: Expr


@dataclass(eq=False)
class Cond(Expr):
    """`cond >= threshold ? then : else_` (the original language allows only threshold 0)."""

    cond: Expr
    threshold: float
    then: Expr
    else_: Expr


@dataclass(eq=False)
class Let(Expr):
    """`let name = value in body`, or a left splice `let name[s:+n]... = value in body`."""

    name: str
    value: Expr
    body: Expr
    starts: list[Expr] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)

    @property
    def is_splice(self) -> bool:
        return bool(self.sizes)


REGION_NODES = (Sum, Loop, Cond)


def first_pos(node: Expr) -> Pos:
    """Where the source text of `node` starts (its leftmost token, parentheses aside):
    diagnostics about a whole operand point there rather than at its operator."""
    while True:
        match node:
            case Binary(lhs=e) | Transpose(operand=e) | Index(operand=e) | Splice(
                    operand=e) | Cond(cond=e):
                node = e
            case _:
                return node.pos


def children(node: Expr) -> list[Expr]:
    """Sub-expressions in evaluation order (the order the lowering emits them)."""
    match node:
        case Transpose(operand=e) | Reshape(operand=e) | MaxPool(operand=e) | Reverse(
                operand=e) | Unary(operand=e) | Builtin(operand=e):
            return [e]
        case Splice(operand=e, starts=starts):
            return [e, *starts]
        case Index(operand=e, index=i):
            return [e, i]
        case Call(args=args):
            return list(args)
        case Binary(lhs=a, rhs=b):
            return [a, b]
        case Conv2D(input=a, filter=f):
            return [a, f]
        case MBConv(input=a, layers=layers):
            return [a, *(e for layer in layers for e in layer)]
        case Sum(body=b):
            return [b]
        case Loop(carried=c, body=b):
            return [c, b]
        case Cond(cond=c, then=t, else_=e):
            return [c, t, e]
        case Let(value=v, body=b, starts=starts):
            return [*starts, v, b]
    return []
