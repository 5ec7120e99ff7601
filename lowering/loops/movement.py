"""Data movement (reshape, transpose, splice, index, reverse, concat, splice_assign).
The views are index maps composed onto the source value (no copy, no memory); only
concat and splice_assign write, concat into a fresh buffer and splice_assign in place
when the destination value may be updated."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from xdsl.ir import Operation, SSAValue

from minun_mlir.dialects import minun
from minun_mlir.lowering.loops.builder import Lin
from minun_mlir.lowering.loops.values import (
    Buf,
    Const,
    Val,
    element_of,
    shape_of,
    storage,
    view,
)

if TYPE_CHECKING:
    from minun_mlir.lowering.lower_to_loops import Lowering


def start(lw: Lowering, v: SSAValue) -> Lin:
    """A start position given by an L2 i32 scalar (an `index` in L3)."""
    return Lin.of(lw.ints[v])


def transposed(src: Val, perm: Sequence[int]) -> Val:
    shape = tuple(src.shape[p] for p in perm)
    dims = [(perm.index(e), 1, Lin(0)) for e in range(len(src.shape))]
    return view(src, shape, dims)


def lower_transpose(lw: Lowering, op: minun.TransposeOp) -> Val:
    perm = minun.ints(op.perm)
    return transposed(lw.vals[op.input], perm)


def lower_splice(lw: Lowering, op: minun.SpliceOp) -> Val:
    src = lw.vals[op.input]
    dims = [(e, 1, start(lw, s)) for e, s in enumerate(op.starts)]
    return view(src, minun.ints(op.sizes), dims)


def lower_index(lw: Lowering, op: minun.IndexOp) -> Val:
    src = lw.vals[op.input]
    dims = [(None, 1, start(lw, op.index))] + [(e - 1, 1, Lin(0))
                                               for e in range(1, len(src.shape))]
    return view(src, shape_of(op.result), dims)


def lower_reverse(lw: Lowering, op: minun.ReverseOp) -> Val:
    src = lw.vals[op.input]
    axis = op.axis.value.data
    dims = [(e, -1, Lin(n - 1)) if e == axis else (e, 1, Lin(0))
            for e, n in enumerate(src.shape)]
    return view(src, src.shape, dims)


def lower_reshape(lw: Lowering, op: minun.ReshapeOp) -> Val:
    src = lw.vals[op.input]
    order = minun.ints(op.order)
    if list(order) != list(range(len(order))):
        src = transposed(src, order)
    shape = shape_of(op.result)
    # only unit dimensions inserted or removed: an index map on any value
    if [n for n in src.shape if n != 1] == [n for n in shape if n != 1]:
        dims, ds = [], [d for d, n in enumerate(shape) if n != 1]
        k = 0
        for n in src.shape:
            if n == 1:
                dims.append((None, 1, Lin(0)))
            else:
                dims.append((ds[k], 1, Lin(0)))
                k += 1
        return view(src, shape, dims)
    if isinstance(src, Const):
        return Const(src.value, shape, src.el)
    if not (isinstance(src, Buf) and src.contiguous):
        src = lw.materialize(src)
    return Buf(src.buffer, shape, src.el, src.offset)


def lower_concat(lw: Lowering, op: minun.ConcatOp) -> Val:
    axis = op.axis.value.data
    out = lw.g.alloc(math.prod(shape_of(op.result)), storage(element_of(op.result)),
                     op.result.name_hint)
    out.owner = op.result
    whole = Buf(out, shape_of(op.result), element_of(op.result))
    pos = 0
    for v in op.inputs:
        val = lw.vals[v]
        dims = [(e, 1, Lin(pos if e == axis else 0)) for e in range(len(val.shape))]
        part = view(whole, val.shape, dims)
        lw.store_into(part, val)
        pos += val.shape[axis]
    return whole


def lower_splice_assign(lw: Lowering, op: minun.SpliceAssignOp) -> Val:
    dest = lw.owned(op.dest, op)
    if dest is None and lw.single_user(op.dest) is op:
        # the destination computed in place from a dead buffer (a rescale of it)
        dest = lw.in_place(op.dest, lw.vals[op.dest])
        if dest is not None:
            lw.store_into(dest, lw.vals[op.dest])
    if dest is None:
        dest = lw.materialize(lw.vals[op.dest], op.result,
                              hint=op.result.name_hint or op.dest.name_hint)
    dest.buffer.owner = op.result
    value = lw.vals[op.value]
    dims = [(e, 1, start(lw, s)) for e, s in enumerate(op.starts)]
    # stream-rows marks its rings' row moves (row r + 1 into row r of one buffer)
    lw.store_into(view(dest, value.shape, dims), value,
                  moves_down="stream_rows_move" in op.attributes)
    return dest


HANDLERS: dict[type[Operation], Callable[[Lowering, Any], Any]] = {
    minun.ReshapeOp: lower_reshape,
    minun.TransposeOp: lower_transpose,
    minun.SpliceOp: lower_splice,
    minun.IndexOp: lower_index,
    minun.ReverseOp: lower_reverse,
    minun.ConcatOp: lower_concat,
    minun.SpliceAssignOp: lower_splice_assign,
}
