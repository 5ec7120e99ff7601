"""Least and greatest values of affine array indices inside loop nests whose bounds are
clamped (a convolution's clipped window: `for (ky = max(0, p - y); ky < min(K, ...); ...)`).

kernel_match.interval treats every variable as independent, so `y + ky` with y in
[0, 13] and ky in [0, 4] spans [0, 17] even when ky >= p - y makes y + ky >= p. Here a
loop variable with a clamped bound is replaced by each affine term of the clamp (each is
a valid bound: max(a, b) >= a and >= b), the terms cancel, and the tightest result is
kept. Sound (every answer bounds every index the loops reach) and None when unsure.
select-target-kernels uses it to prove that moving a convolution's reads before its
stores reads the same bytes (passes/select_target_kernels.py, DspConvChannels).
"""

from __future__ import annotations

from itertools import product

from xdsl.ir import Operation, SSAValue

from minun_mlir.dialects import cemit
from minun_mlir.modules import walk_ops
from minun_mlir.passes.kernel_match import literal_int

Affine = tuple[tuple[tuple[str, int], ...], int]  # ((var, k), ...) sorted, constant
MAX_TERMS = 16  # candidate bounds per expression (clamps multiply them)


def _make(terms: dict[str, int], c: int) -> Affine:
    return tuple(sorted((v, k) for v, k in terms.items() if k)), c


def _add(a: Affine, b: Affine, sign: int = 1) -> Affine:
    terms = dict(a[0])
    for v, k in b[0]:
        terms[v] = terms.get(v, 0) + sign * k
    return _make(terms, a[1] + sign * b[1])


def _scale(a: Affine, k: int) -> Affine:
    return _make({v: k * x for v, x in a[0]}, k * a[1])


class Scope:
    """The const declarations and loops of a function, by name (a name declared twice
    is unknown, so nothing is assumed about it)."""

    def __init__(self, root: Operation):
        self.decls: dict[str, SSAValue | None] = {}
        self.loops: dict[str, cemit.ForOp | None] = {}
        for op in walk_ops(root):
            if isinstance(op, cemit.DeclOp):
                name = op.var.data
                self.decls[name] = None if name in self.decls or op.is_const is None \
                    else op.init
            elif isinstance(op, cemit.ForOp):
                name = op.var.data
                self.loops[name] = None if name in self.loops else op

    def affine(self, v: SSAValue) -> Affine | None:
        """v as k1*x1 + ... + c over loop variables (declarations expanded), or None."""
        c = literal_int(v)
        if c is not None:
            return (), c
        op = v.owner
        if isinstance(op, cemit.RefOp):
            name = op.var.data
            if name in self.decls:
                init = self.decls[name]
                return None if init is None else self.affine(init)
            return ((name, 1),), 0
        if isinstance(op, cemit.BinaryOp) and op.op.data in ("+", "-", "*"):
            a, b = self.affine(op.lhs), self.affine(op.rhs)
            if a is None or b is None:
                return None
            if op.op.data != "*":
                return _add(a, b, 1 if op.op.data == "+" else -1)
            if not a[0]:
                return _scale(b, a[1])
            if not b[0]:
                return _scale(a, b[1])
        return None

    def bounds(self, v: SSAValue, upper: bool) -> list[Affine]:
        """Affine expressions each >= v (upper) or each <= v (lower) wherever v is
        evaluated; [] when none is known."""
        form = self.affine(v)
        if form is not None:
            return [form]
        op = v.owner
        if isinstance(op, cemit.RefOp):
            init = self.decls.get(op.var.data)
            return [] if init is None else self.bounds(init, upper)
        if isinstance(op, cemit.CondOp):
            sides = [self.bounds(x, upper) for x in (op.lhs, op.rhs)]
            if _clamp(self, op) == ("min" if upper else "max"):  # either side bounds it
                return (sides[0] + sides[1])[:MAX_TERMS]
            # any other choice between two sides: the looser of their constant bounds
            consts = [[f[1] for f in side if not f[0]] for side in sides]
            if all(consts):
                best = [min(c) if upper else max(c) for c in consts]
                return [((), max(best) if upper else min(best))]
            return []
        if isinstance(op, cemit.BinaryOp) and op.op.data in ("+", "-"):
            sign = 1 if op.op.data == "+" else -1
            lhs = self.bounds(op.lhs, upper)
            rhs = self.bounds(op.rhs, upper if sign == 1 else not upper)
            return [_add(a, b, sign) for a, b in product(lhs, rhs)][:MAX_TERMS]
        if isinstance(op, cemit.BinaryOp) and op.op.data == "*":
            for k, e in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
                n = literal_int(k)
                if n is not None:
                    return [_scale(a, n) for a in self.bounds(e, upper if n >= 0 else not upper)]
        return []

    def extreme(self, form: Affine, upper: bool, depth: int = 0) -> int | None:
        """The greatest (upper) or least value of `form` over the loops' iterations, or
        a bound of it on the safe side; None when a variable is not a known loop's."""
        if depth > 8:
            return None
        terms, c = form
        for v, k in terms:
            loop = self.loops.get(v)
            if loop is None:
                return None
            lo, hi = literal_int(loop.lower), literal_int(loop.upper)
            if lo is not None and hi is not None:
                continue
            high = upper == (k > 0)  # the bound of v that moves form the way we want
            subs = [_add(b, ((), -1)) for b in self.bounds(loop.upper, True)] if high \
                else self.bounds(loop.lower, False)
            rest = _make({x: y for x, y in terms if x != v}, c)
            found = [self.extreme(_add(rest, _scale(s, k)), upper, depth + 1) for s in subs]
            found = [x for x in found if x is not None]
            if not found:
                return None
            return min(found) if upper else max(found)
        total = c
        for v, k in terms:
            loop = self.loops[v]
            lo, hi = literal_int(loop.lower), literal_int(loop.upper) - 1
            total += k * (hi if upper == (k > 0) else lo)
        return total

    def span(self, index: SSAValue) -> tuple[int, int] | None:
        """The least and greatest value of an index expression, or None."""
        form = self.affine(index)
        if form is None:
            return None
        lo, hi = self.extreme(form, False), self.extreme(form, True)
        return None if lo is None or hi is None else (lo, hi)


def _clamp(scope: Scope, op: cemit.CondOp) -> str | None:
    """"max" or "min" when op is `(a > b) ? a : b` and the like, else None."""
    test = op.cond.owner
    if not isinstance(test, cemit.BinaryOp) or test.op.data not in (">", ">=", "<", "<="):
        return None
    forms = [scope.affine(x) for x in (test.lhs, test.rhs, op.lhs, op.rhs)]
    if None in forms:
        return None
    a, b, t, e = forms
    greater = test.op.data in (">", ">=")
    if (t, e) == (a, b):
        return "max" if greater else "min"
    if (t, e) == (b, a):
        return "min" if greater else "max"
    return None
