"""`memory-plan{planner=naive|greedy budget=0}`: place L3's buffers in one scratch array.

lower-to-loops allocates one `memref.alloc` per buffer at the top of the function. This
pass computes when each buffer is live and, with `greedy`, rewrites every alloc into a
`memref.view` at a byte offset of one scratch global (`@minun_scratch`), so that buffers
that are never live at the same time share memory. `naive` keeps one buffer each.

Liveness is over the op order (a pre-order walk numbers every op). A buffer lives from its
first to its last use, and across every whole `scf.for` that holds some of its uses but
not all, or whose first use inside the loop is a read (the value crosses iterations).
This relies on what lower-to-loops guarantees: inside the smallest loop holding all its
uses, a buffer is completely written before it is read.

The planner itself is a function of (sizes, live ranges, alignments) -> offsets
(`first_fit`), so that other planners (Shiftry's, an optimal one) can replace it.

With `input-in-scratch=true` the input is planned too: the function's `%x` argument is
replaced by a buffer (`memref.alloc {minun.input}`, named `input`) that the caller fills
before the call, so it is live from the first op to its last read and its bytes are
reused once it is dead. The function gets `minun.input_in_scratch`, and lower-to-emitc
prints the in-place entry point (`minun_input_buffer`, `minun_predict_in_place`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    Float32Type,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i8,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.str_enum import StrEnum

from minun_mlir.diagnostics import error
from minun_mlir.passes.planners import optimal
from minun_mlir.passes.planners.shiftry import place_in_blocks, plan_with_moves
from minun_mlir.passes.planners.verify import verify_plan

SCRATCH = "minun_scratch"
INPUT = "minun.input"  # on the alloc (then the first view) holding the input in scratch
IN_SCRATCH = "minun.input_in_scratch"  # on the function whose input is planned


class Planner(StrEnum):
    """The planners (the pass option stays a string, as xDSL pass options are)."""

    NAIVE = "naive"  # one buffer each, no sharing
    GREEDY = "greedy"  # first fit by live ranges into one scratch array
    SHIFTRY = "shiftry"  # Shiftry's blocks; under a budget, moves (passes/planners/shiftry.py)
    OPTIMAL = "optimal"  # minimum scratch size (passes/planners/optimal.py)


PLANNERS = tuple(p.value for p in Planner)


def planner_named(name: str) -> Planner:
    """The planner called `name`, or a diagnostic listing the choices."""
    try:
        return Planner(name)
    except ValueError:
        raise error(f"memory-plan: planner must be one of {', '.join(PLANNERS)}, "
                         f"got '{name}'") from None


@dataclass(frozen=True)
class Buffer:
    """One planned buffer: `first`/`last` are op positions (inclusive)."""

    name: str
    size: int  # bytes
    align: int
    first: int
    last: int

    def overlaps_in_time(self, other: Buffer) -> bool:
        return not (self.last < other.first or other.last < self.first)


def element_bytes(ty: MemRefType) -> int:
    el = ty.element_type
    return 4 if isinstance(el, Float32Type) else max(el.width.data // 8, 1)


def positions(fn: func.FuncOp) -> tuple[dict[Operation, int], dict[Operation, tuple[int, int]]]:
    """Pre-order numbering of ops, and the [start, end] span of every scf.for."""
    pos: dict[Operation, int] = {}
    spans: dict[Operation, tuple[int, int]] = {}
    for op in fn.body.walk():
        pos[op] = len(pos)
    for op in pos:
        if isinstance(op, scf.ForOp):
            last = max((pos[o] for o in op.body.walk()), default=pos[op])
            spans[op] = (pos[op], last)
    return pos, spans


def _loops_of(op: Operation) -> list[Operation]:
    loops = []
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if isinstance(parent, scf.ForOp):
            loops.append(parent)
        parent = parent.parent_op()
    return loops


def live_range(value: SSAValue, pos, spans) -> tuple[int, int]:
    """[first, last] op positions during which the buffer `value` holds live data."""
    users = [u.operation for u in value.uses]
    # the input in scratch is written by the caller: live from the function's first op
    start = 0 if INPUT in getattr(value.owner, "attributes", {}) else None
    if not users:
        p = pos[value.owner]
        return (p, p) if start is None else (start, p)
    first = min(pos[u] for u in users)
    if start is not None:
        first = start
    last = max(pos[u] for u in users)
    loops = {loop for u in users for loop in _loops_of(u)}
    for loop in loops:
        lo, hi = spans[loop]
        inside = [u for u in users if lo <= pos[u] <= hi]
        earliest = min(inside, key=lambda u: pos[u])
        if len(inside) < len(users) or isinstance(earliest, memref.LoadOp):
            first, last = min(first, lo), max(last, hi)
    return first, last


def buffers_of(fn: func.FuncOp) -> list[tuple[memref.AllocOp, Buffer]]:
    pos, spans = positions(fn)
    out = []
    for i, op in enumerate(o for o in fn.body.walk() if isinstance(o, memref.AllocOp)):
        ty = op.memref.type
        if not isinstance(ty, MemRefType) or not ty.has_static_shape():
            raise error("memory-plan: only statically shaped buffers can be planned")
        size = ty.element_count() * element_bytes(ty)
        first, last = live_range(op.memref, pos, spans)
        name = op.memref.name_hint or f"buffer{i}"
        out.append((op, Buffer(name, size, element_bytes(ty), first, last)))
    return out


def input_into_scratch(fn: func.FuncOp) -> None:
    """The input argument `%x` replaced by a planned buffer the caller writes (the module
    docstring); the signature keeps `%x`, unused, for its type."""
    if IN_SCRATCH in fn.attributes:
        return
    block = fn.body.block
    x = block.args[0]
    ty = x.type
    assert isinstance(ty, MemRefType)
    alloc = memref.AllocOp.get(ty.element_type, shape=list(ty.get_shape()))
    alloc.attributes[INPUT] = UnitAttr()
    alloc.memref.name_hint = "input"
    block.insert_op_before(alloc, block.first_op)
    x.replace_all_uses_with(alloc.memref)
    fn.attributes[IN_SCRATCH] = UnitAttr()


def first_fit(sizes: Sequence[int], ranges: Sequence[tuple[int, int]],
              aligns: Sequence[int]) -> list[int]:
    """Offsets for buffers with the given byte sizes and live ranges: largest first, each
    at the lowest aligned offset not overlapping any placed buffer live at the same time."""
    order = sorted(range(len(sizes)), key=lambda i: (-sizes[i], ranges[i][0], i))
    offsets = [0] * len(sizes)
    placed: list[int] = []
    for i in order:
        busy = sorted((offsets[j], offsets[j] + sizes[j]) for j in placed
                      if not (ranges[i][1] < ranges[j][0] or ranges[j][1] < ranges[i][0]))
        at = 0
        for lo, hi in busy:
            if at + sizes[i] <= lo:
                break
            at = max(at, -(-hi // aligns[i]) * aligns[i])
        offsets[i] = at
        placed.append(i)
    return offsets


# planner -> placement function (sizes, live ranges, alignments) -> offsets; the planners
# other than first fit live in passes/planners/, one module each.
PLACERS: dict[Planner, Callable[[Sequence[int], Sequence[tuple[int, int]], Sequence[int]],
                                list[int]]] = {
    Planner.GREEDY: first_fit,
    Planner.SHIFTRY: place_in_blocks,
    Planner.OPTIMAL: optimal.optimal,
}


def peak(sizes: Sequence[int], offsets: Sequence[int]) -> int:
    return max((o + s for o, s in zip(offsets, sizes)), default=0)


def check_budget(buffers: list[Buffer], budget: int) -> None:
    """A budget error that says where RAM peaks and what is live there (property 7)."""
    if budget <= 0:
        return
    points = sorted({b.first for b in buffers})
    worst, at = 0, 0
    for p in points:
        live = sum(b.size for b in buffers if b.first <= p <= b.last)
        if live > worst:
            worst, at = live, p
    if worst > budget:
        live = sorted((b for b in buffers if b.first <= at <= b.last), key=lambda b: -b.size)
        shown = ", ".join(f"{b.name} {b.size:,} B" for b in live)
        raise error(f"model needs {worst:,} bytes of RAM at instruction {at} "
                         f"(live: {shown}); budget {budget:,}")


def check_plan_fits(planner: Planner, total: int, buffers: list[Buffer], budget: int) -> None:
    """The placed buffers, not only the bytes live at once (check_budget), within the
    budget: a planner that fragments must not exceed it silently."""
    if budget > 0 and total > budget:
        live = max((sum(b.size for b in buffers if b.first <= p <= b.last)
                    for p in {b.first for b in buffers}), default=0)
        raise error(f"memory-plan: planner {planner.value} places the buffers in {total:,} "
                    f"bytes, more than the budget {budget:,}, although at most {live:,} are "
                    "live at once: use planner=shiftry (it moves buffers to fit)")


def plan_function(module: ModuleOp, fn: func.FuncOp, planner: Planner, budget: int,
                  input_in_scratch: bool = False) -> int:
    """Rewrite fn's allocs per the planner; returns the bytes of buffer memory used."""
    if input_in_scratch:
        input_into_scratch(fn)
    planned = buffers_of(fn)
    buffers = [b for _, b in planned]
    check_budget(buffers, budget)
    if planner == Planner.SHIFTRY:
        return plan_with_moves(module, fn, planned, budget)
    if planner == Planner.NAIVE or not planned:
        total = sum(b.size for b in buffers)
        check_plan_fits(planner, total, buffers, budget)
        return total
    align = max(b.align for b in buffers)
    offsets = PLACERS[planner]([b.size for b in buffers], [(b.first, b.last) for b in buffers],
                               [b.align for b in buffers])
    total = -(-peak([b.size for b in buffers], offsets) // align) * align
    check_plan_fits(planner, total, buffers, budget)
    verify_plan([b.size for b in buffers], [(b.first, b.last) for b in buffers],
                [b.align for b in buffers], offsets, total, planner=planner,
                names=[b.name for b in buffers])
    scratch_ty = MemRefType(i8, [total])
    module.body.block.insert_op_before(
        memref.GlobalOp.get(StringAttr(SCRATCH), scratch_ty, UnitAttr(),
                            alignment=align), fn)
    entry = fn.body.block
    get = memref.GetGlobalOp(SCRATCH, scratch_ty)
    get.memref.name_hint = SCRATCH
    entry.insert_op_before(get, entry.first_op)
    for (alloc, _), offset in zip(planned, offsets):
        shift = arith.ConstantOp(IntegerAttr(offset, IndexType()), IndexType())
        view = memref.ViewOp(get.memref, shift.result, [], alloc.memref.type)
        view.result.name_hint = alloc.memref.name_hint
        if INPUT in alloc.attributes:
            view.attributes[INPUT] = UnitAttr()
        block = alloc.parent_block()
        block.insert_op_before(shift, alloc)
        block.insert_op_before(view, alloc)
        alloc.memref.replace_all_uses_with(view.result)
        alloc.detach()
        alloc.erase()
    fn.attributes["minun.scratch_bytes"] = IntegerAttr(total, 64)
    return total


def memory_plan(module: ModuleOp, planner: str = Planner.GREEDY, budget: int = 0,
                input_in_scratch: bool = False) -> int:
    planner = planner_named(planner)
    total = 0
    for fn in [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]:
        total += plan_function(module, fn, planner, budget, input_in_scratch)
    return total


@dataclass(frozen=True)
class MemoryPlan(ModulePass):
    """Place L3 buffers in one scratch array by live ranges (greedy) or keep them (naive)."""

    name = "memory-plan"

    planner: str = Planner.GREEDY.value
    budget: int = 0
    time_limit: int = optimal.DEFAULT_TIME_LIMIT  # seconds, planner=optimal only
    input_in_scratch: bool = False  # the input a planned buffer, reused once dead

    def __post_init__(self) -> None:
        planner_named(self.planner)  # a bad option fails when the pipeline is built
        for option in ("budget", "time_limit"):
            if getattr(self, option) < 0:
                raise error(f"memory-plan: {option.replace('_', '-')} must be 0 or more, got "
                            f"{getattr(self, option)}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        with optimal.time_limit(self.time_limit):
            memory_plan(op, self.planner, self.budget, self.input_in_scratch)


