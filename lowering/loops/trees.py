"""`minun.tree_ensemble`: the trees as a node table walked by a loop (`lowering` "table"),
or as nested if/else with the thresholds in the code ("branches"); without the attribute,
whichever should take less flash (`choose_lowering`).

The table: for each internal node its feature (i8 or i16), its threshold (stored like the
input) and its two children (i8/i16/i32: c >= 0 an internal node, c < 0 leaf row -c-1),
plus the root of each tree. A walk runs `depth` steps of `n = x[f[n]] <= t[n] ? l[n] :
r[n]` guarded by `n >= 0` (leaves stop it). Both forms then add the leaf's row of the leaf
table to the result (T accumulators in the result's storage: exact for fixed point,
since quantize chose an output scale where the worst-case sum fits), in tree order, and
the base last, as the evaluator does. Equal leaf rows are stored once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, IndexType, IntegerType
from xdsl.ir import Operation, SSAValue

from minun_mlir.dialects import minun

from .builder import Lin
from .values import Buf, element_of, is_float, shape_of, storage

if TYPE_CHECKING:
    from minun_mlir.lowering.lower_to_loops import Lowering

INDEX = IndexType()


def _int_width(values: np.ndarray) -> int:
    lo, hi = (int(values.min()), int(values.max())) if values.size else (0, 0)
    return next(w for w in (8, 16, 32) if -(1 << (w - 1)) <= lo and hi < (1 << (w - 1)))


def _index(g, v: SSAValue) -> SSAValue:
    return g.add(arith.IndexCastOp(v, INDEX))


# Without a `lowering` attribute, ensembles of at most this many internal nodes become
# branch code, larger ones a node table: on the Uno the table's walk costs about 100 B of
# code once and branch code about 11 B per node more than the node's table entry, so the
# two meet near 9 nodes (measured at 16 bits: 8 nodes 1,064 B as branches vs 1,104 B as a
# table; 29 nodes 1,312 B vs 1,102 B; 488 nodes 16,922 B vs 9,950 B).
BRANCHES_UP_TO = 8


def choose_lowering(op: minun.TreeEnsembleOp, internal_nodes: int) -> str:
    """The op's `lowering`, else the one expected to take less flash."""
    if op.lowering is not None:
        return op.lowering.data
    return "branches" if internal_nodes <= BRANCHES_UP_TO else "table"


def lower_tree_ensemble(lw: Lowering, op: minun.TreeEnsembleOp) -> Buf:
    g = lw.g
    x = lw.buffer_of(op.input)
    if not x.contiguous:
        x = lw.materialize(x)
    n_in = math.prod(shape_of(op.input))
    flat = Buf(x.buffer, (n_in,), x.el, x.offset, (1,))
    x_st = storage(element_of(op.input))
    res = element_of(op.result)
    st = storage(res)
    shape = shape_of(op.result)
    t_count = math.prod(shape)
    a = op.arrays()
    # equal leaf rows are stored once (a forest's pure leaves repeat: rf_digits has 273
    # distinct rows of 498); children and roots point at the shared row
    rows, inverse = np.unique(a["leaves"], axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)

    def shared(c: np.ndarray) -> np.ndarray:
        return np.where(c < 0, -inverse[np.maximum(-c - 1, 0)] - 1, c)

    nodes = a["nodes"].reshape(-1, 3).copy()
    nodes[:, 1:] = shared(nodes[:, 1:])
    roots = shared(a["roots"].reshape(-1))
    leq = op.mode.data == "leq"
    pred = "sle" if leq else "slt"
    name = op.result.name_hint or "trees"
    out = g.alloc(t_count, st, op.result.name_hint)
    out.owner = op.result
    whole = Buf(out, shape, res)
    leaves = g.global_(f"{name}_leaves", rows, st)
    zero = g.const(0.0, st) if isinstance(st, Float32Type) else g.const(0, st)
    add = arith.AddfOp if is_float(res) else arith.AddiOp

    def at(k: int | SSAValue) -> Lin:
        return Lin.of(k)

    g.for_(0, t_count, [], lambda k: g.store(zero, out, at(k)))

    def accumulate(row: SSAValue) -> None:
        base = g.add(arith.MuliOp(row, g.index(t_count))) if t_count > 1 else row

        def one(k: SSAValue) -> None:
            leaf = g.load(leaves, Lin.of(g.add(arith.AddiOp(base, k))))
            g.store(g.add(add(g.load(out, at(k)), leaf)), out, at(k))

        g.for_(0, t_count, [], one)

    def leaf_row(n: SSAValue) -> SSAValue:  # -n - 1
        return g.add(arith.SubiOp(g.index(-1), n))

    if choose_lowering(op, len(nodes)) == "branches":
        thr = a["thresholds"]

        def branch(n: int) -> list[SSAValue]:
            if n < 0:
                return [g.index(-n - 1)]
            f, left, right = (int(v) for v in nodes[n])
            if left == right:  # a threshold past the input's range: no comparison
                return branch(left)
            c = float(thr[n]) if isinstance(x_st, Float32Type) else int(thr[n])
            go = g.cmp(flat.load(g, [Lin(f)]), g.const(c, x_st), pred)
            return g.if_(go, [INDEX], lambda: branch(left), lambda: branch(right))

        for root in roots:
            accumulate(branch(int(root))[0])
    else:
        child_w = _int_width(np.concatenate([nodes[:, 1:].reshape(-1), roots]))
        feat = g.global_(f"{name}_feature", nodes[:, 0], IntegerType(_int_width(nodes[:, 0])))
        left = g.global_(f"{name}_true", nodes[:, 1], IntegerType(child_w))
        right = g.global_(f"{name}_false", nodes[:, 2], IntegerType(child_w))
        thr = g.global_(f"{name}_threshold", a["thresholds"], x_st)
        root_buf = g.global_(f"{name}_root", roots, IntegerType(child_w))
        depth = op.depth()

        def step(_d: SSAValue, n: SSAValue) -> list[SSAValue]:
            def walk() -> list[SSAValue]:
                xv = flat.load(g, [Lin.of(_index(g, g.load(feat, Lin.of(n))))])
                go = g.cmp(xv, g.load(thr, Lin.of(n)), pred)
                return [g.select(go, _index(g, g.load(left, Lin.of(n))),
                                 _index(g, g.load(right, Lin.of(n))))]

            return g.if_(g.cmp(n, g.index(0), "sge"), [INDEX], walk, lambda: [n])

        def tree(t: SSAValue) -> None:
            n = _index(g, g.load(root_buf, Lin.of(t)))
            if depth:
                n = g.for_(0, depth, [n], step)[0]
            accumulate(leaf_row(n))

        g.for_(0, len(roots), [], tree)
    if np.any(a["base"] != 0):
        base = g.global_(f"{name}_base", a["base"], st)
        g.for_(0, t_count, [], lambda k: g.store(
            g.add(add(g.load(out, at(k)), g.load(base, at(k)))), out, at(k)))
    return whole


HANDLERS: dict[type[Operation], Callable[[Lowering, Any], Any]] = {
    minun.TreeEnsembleOp: lower_tree_ensemble,
}
