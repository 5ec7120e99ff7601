"""Ops with regions: `minun.loop` -> `scf.for` (a carried tensor gets its own buffer,
updated in place when that is safe) and `minun.if_nonneg` -> `scf.if` (only the taken
branch runs; a tensor result is written to a buffer by both branches). They lower their
bodies through the driver, which owns the value bookkeeping."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, Region, SSAValue

from minun_mlir.dialects import minun
from minun_mlir.lowering.loops.builder import INDEX, Lin
from minun_mlir.lowering.loops.values import Buf, Val, element_of, shape_of, storage
from minun_mlir.passes.planners.buffers import OVER_ALLOC, STREAM_ID_ALLOC

if TYPE_CHECKING:
    from minun_mlir.lowering.lower_to_loops import Lowering


# stream-rows' marks on the init of a streamed chain's output (passes/stream_rows.py)
UNSET, STREAM_ID, OVER = "stream_rows_unset", "stream_rows_id", "stream_rows_over"


def _unfilled(lw: Lowering, init: SSAValue, hint: str | None) -> Buf:
    """A buffer for a carried init whose every element the loops write before reading
    it (stream-rows' output): no fill; its number and overlay passed on to memory-plan."""
    val = lw.vals[init]
    buf = lw.g.alloc(max(math.prod(val.shape), 1), val.elem, hint)
    for mark, to in ((STREAM_ID, STREAM_ID_ALLOC), (OVER, OVER_ALLOC)):
        if mark in init.owner.attributes:
            buf.ref.owner.attributes[to] = init.owner.attributes[mark]
    return Buf(buf, val.shape, val.el)


def lower_loop(lw: Lowering, op: minun.LoopOp) -> list:
    g = lw.g
    body = op.body.block
    carried: list[Buf | None] = []
    inits: list[SSAValue] = []
    for init, res in zip(op.inits, op.results):
        if not isinstance(init.type, TensorType):
            carried.append(None)
            inits.append(lw.ints[init])
            continue
        buf = lw.owned(init)
        if buf is None and UNSET in getattr(init.owner, "attributes", {}):
            buf = _unfilled(lw, init, res.name_hint or init.name_hint)
        elif buf is None:
            buf = lw.materialize(lw.vals[init], hint=res.name_hint or init.name_hint)
        carried.append(buf)

    def run(iv: SSAValue, *scalars: SSAValue) -> list[SSAValue]:
        it = iter(scalars)
        lw.ints[body.args[0]] = iv
        for arg, buf in zip(body.args[1:], carried):
            if buf is None:
                lw.ints[arg] = next(it)
            else:
                buf.buffer.owner = arg
                lw.vals[arg] = buf
        yields = lw.lower_block(body)
        out = []
        for val, buf in zip(yields, carried):
            if buf is None:
                out.append(val)
            else:
                lw.store_into(buf, val)
        return out

    results = iter(g.for_(op.lower.value.data, op.upper.value.data, inits, run))
    values = []
    for res, buf in zip(op.results, carried):
        if buf is None:
            values.append(next(results))
        else:
            buf.buffer.owner = res
            values.append(buf)
    return values


def lower_if_nonneg(lw: Lowering, op: minun.IfNonNegOp) -> Val | SSAValue:
    g = lw.g
    if isinstance(op.cond.type, TensorType):
        c = lw.vals[op.cond]
        v = c.load(g, [Lin(0)] * len(c.shape))
        cond = g.cmp(v, g.const(0, v.type), "sge")
    else:
        cond = g.cmp(lw.ints[op.cond], g.index(0), "sge")
    if not isinstance(op.result.type, TensorType):
        return g.if_(cond, [INDEX], lambda: lw.lower_block(op.then_region.block),
                     lambda: lw.lower_block(op.else_region.block))[0]
    el = element_of(op.result)
    out = g.alloc(math.prod(shape_of(op.result)), storage(el), op.result.name_hint)
    out.owner = op.result
    target = Buf(out, shape_of(op.result), el)

    def branch(region: Region) -> Callable[[], None]:
        def run() -> None:
            (val,) = lw.lower_block(region.block)
            lw.store_into(target, val)

        return run

    g.if_(cond, [], branch(op.then_region), branch(op.else_region))
    return target


HANDLERS: dict[type[Operation], Callable[[Lowering, Any], Any]] = {
    minun.LoopOp: lower_loop,
    minun.IfNonNegOp: lower_if_nonneg,
}
