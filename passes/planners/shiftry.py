"""Shiftry's planner (Kumar, Seshadri, Sharma, "Shiftry: RNN inference in 2KB of RAM",
OOPSLA 2020, section 7, Algorithms 15-17): blocks, and defragmentation under a budget.

- Blocks (Algorithm 16). Every buffer's size is rounded up to a multiple of the most
  frequent buffer size (its *block*; also a multiple of its alignment), and buffers are
  taken in order of their first position; each goes into the first free slot at a
  multiple of its own block size, after the buffers dead by then are freed. Small buffers
  thus sit close together and leave large holes when they die.
- Defragmentation (Algorithm 17). With a budget, a buffer whose block would end above it
  triggers a compaction at its first position: the live buffers are pushed down towards
  address 0 in address order (each to the lowest free offset, aligned), then the new one
  takes the lowest free offset. Every live buffer that changes place is a *move*: the IR
  gets a copy from its old place to its new one right before that position
  (`plan_with_moves`), and later uses read the new place. A buffer is moved only where the
  copy runs exactly once per life of the buffer: its whole live range lies in the region
  (loop body, branch) that holds the copy; others stay put. A compaction only moves
  buffers down (a buffer's old offset is always free in the compacted layout), so copying
  in address order, each element upwards, never overwrites data still to be copied.
  If the budget cannot be met even so, the error names the position and what is live.

Without a budget there are no moves: `place_in_blocks` is the placement function of
`memory-plan`'s PLACERS table.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i8,
)
from xdsl.ir import Operation, Region

from minun_mlir.diagnostics import error
from minun_mlir.passes.planners.buffers import INPUT, OUTPUT, SCRATCH, positions


@dataclass(frozen=True)
class Move:
    """Buffer `buffer` goes from byte `src` to `dst` right before position `at`."""

    at: int
    buffer: int
    src: int
    dst: int


@dataclass
class Plan:
    offsets: list[int]  # each buffer's offset from its first position
    moves: list[Move] = field(default_factory=list)  # in the order the copies run

    def places(self, i: int) -> list[tuple[int, int]]:
        """Buffer i's (from position, offset) pairs, in time order."""
        out = [(-1, self.offsets[i])]
        out += [(m.at, m.dst) for m in self.moves if m.buffer == i]
        return out

    def peak(self, sizes: Sequence[int]) -> int:
        ends = [o + s for o, s in zip(self.offsets, sizes)]
        ends += [m.dst + sizes[m.buffer] for m in self.moves]
        return max(ends, default=0)


class BudgetUnreachable(Exception):
    """Even after defragmentation the buffers live at `at` need `need` bytes."""

    def __init__(self, at: int, need: int, live: list[int]):
        super().__init__(at, need, live)
        self.at, self.need, self.live = at, need, live


def block_sizes(sizes: Sequence[int], aligns: Sequence[int]) -> list[int]:
    """Each size rounded up to a multiple of the most frequent size (the smaller one on a
    tie) and of the buffer's alignment."""
    if not sizes:
        return []
    counts = Counter(sizes)
    unit = min(counts, key=lambda s: (-counts[s], s))
    out = []
    for s, a in zip(sizes, aligns):
        step = math.lcm(unit, a)
        out.append(-(-s // step) * step)
    return out


def _round_up(n: int, a: int) -> int:
    return -(-n // a) * a


def _lowest(start: int, step: int, extent: int, busy: list[tuple[int, int]]) -> int:
    """The lowest offset start + k*step whose [offset, offset+extent) meets no busy span."""
    at = start
    for lo, hi in sorted(busy):
        if at + extent <= lo:
            break
        if hi > at:
            at = _round_up(hi, step)
    return at


def shiftry_plan(sizes: Sequence[int], ranges: Sequence[tuple[int, int]],
                 aligns: Sequence[int], budget: int = 0,
                 movable: Callable[[int, int], bool] | None = None) -> Plan:
    """Algorithms 16 and 17. `budget` 0: no limit, no moves. `movable(i, at)`: whether
    buffer i may be copied right before position `at` (default: always). Raises
    BudgetUnreachable when a compaction still leaves the buffers above `budget`."""
    blocks = block_sizes(sizes, aligns)
    scratch_align = max(aligns, default=1)
    order = sorted(range(len(sizes)), key=lambda i: (ranges[i][0], ranges[i][1], i))
    plan = Plan([0] * len(sizes))
    where: dict[int, int] = {}  # live buffer -> current offset
    extent = list(blocks)  # bytes a buffer occupies: its block, its bytes once compacted
    for i in order:
        at = ranges[i][0]
        for j in [j for j in where if ranges[j][1] < at]:  # FreeDead
            del where[j]
        busy = [(o, o + extent[j]) for j, o in where.items()]
        where[i] = _lowest(0, blocks[i], blocks[i], busy)
        plan.offsets[i] = where[i]
        if budget and _round_up(where[i] + sizes[i], scratch_align) > budget:
            _defragment(plan, where, i, at, ranges, sizes, extent, aligns, movable)
            need = _round_up(max(o + sizes[j] for j, o in where.items()), scratch_align)
            if need > budget:
                raise BudgetUnreachable(at, need, sorted(where, key=lambda j: where[j]))
    return plan


def _defragment(plan: Plan, where: dict[int, int], new: int, at: int, ranges, sizes,
                extent, aligns, movable) -> None:
    """Algorithm 17 with pinned buffers: push the movable live buffers down in address
    order, then place `new` at the lowest free offset. Buffers are packed by their bytes
    (aligned), not their blocks: the blocks' slack is what the compaction is there to
    recover (a pinned buffer keeps its place but frees its slack too)."""
    del where[new]
    fresh = {j for j in where if ranges[j][0] >= at}  # no data yet: re-placed, no copy

    def may_move(j: int) -> bool:
        return j in fresh or movable is None or movable(j, at)

    pinned = {j: o for j, o in where.items() if not may_move(j)}
    for j in where:  # every live buffer gives up its block's slack, pinned ones in place
        extent[j] = _round_up(sizes[j], aligns[j])
    placed = [(o, o + extent[j]) for j, o in pinned.items()]
    for j in sorted((j for j in where if j not in pinned), key=lambda j: (where[j], j)):
        dst = _lowest(0, aligns[j], extent[j], placed)
        if dst != where[j]:
            if j in fresh:
                plan.offsets[j] = dst
            else:
                plan.moves.append(Move(at, j, where[j], dst))
            where[j] = dst
        placed.append((dst, dst + extent[j]))
    extent[new] = _round_up(sizes[new], aligns[new])
    where[new] = _lowest(0, aligns[new], extent[new], placed)
    plan.offsets[new] = where[new]


def place_in_blocks(sizes: Sequence[int], ranges: Sequence[tuple[int, int]],
                    aligns: Sequence[int]) -> list[int]:
    """The placement function of `memory-plan{planner=shiftry}` without a budget."""
    return shiftry_plan(sizes, ranges, aligns).offsets


def plan_with_moves(module: ModuleOp, fn: func.FuncOp, planned, budget: int) -> int:
    """`memory-plan{planner=shiftry}` on one function: like the other planners it rewrites
    each `memref.alloc` into a `memref.view` of the scratch global, one view per place the
    buffer has, each use reading the place of its position; each move is a `memref.copy`
    from the old view to the new one right before the position it happens at. Sets
    `minun.scratch_bytes` and `minun.defrag_moves`; returns the scratch bytes."""
    # memory_plan imports this module for its PLACERS table: import it when running

    buffers = [b for _, b in planned]
    fn.attributes["minun.defrag_moves"] = IntegerAttr(0, 64)
    if not planned:
        return 0
    pos, _ = positions(fn)
    op_at = {p: op for op, p in pos.items()}
    spans: dict[Region, tuple[int, int]] = {}

    def span(region: Region) -> tuple[int, int]:
        if region not in spans:
            inside = [pos[o] for o in region.walk()]
            spans[region] = (min(inside), max(inside))
        return spans[region]

    def movable(i: int, at: int) -> bool:
        """A copy before the op at `at` runs once per life of buffer i: every region
        holding that op (up to the function) holds i's whole live range."""
        b = buffers[i]
        if isinstance(op_at[at], memref.AllocOp):  # an unused buffer's "range": no copy here
            return False
        region = op_at[at].parent_region()
        while region is not None and region is not fn.body:
            lo, hi = span(region)
            if not (lo <= b.first and b.last <= hi):
                return False
            parent = region.parent_op()
            region = parent.parent_region() if parent is not None else None
        return True

    sizes = [b.size for b in buffers]
    try:
        plan = shiftry_plan(sizes, [(b.first, b.last) for b in buffers],
                            [b.align for b in buffers], budget, movable)
    except BudgetUnreachable as e:
        shown = ", ".join(f"{buffers[j].name} {buffers[j].size:,} B" for j in e.live)
        raise error(f"model needs {e.need:,} bytes of RAM at instruction {e.at} with "
                    f"planner shiftry, even after defragmentation (live: {shown}); budget "
                    f"{budget:,}") from None
    align = max(b.align for b in buffers)
    total = _round_up(plan.peak(sizes), align)
    scratch_ty = MemRefType(i8, [total])
    module.body.block.insert_op_before(
        memref.GlobalOp.get(StringAttr(SCRATCH), scratch_ty, UnitAttr(), alignment=align), fn)
    entry = fn.body.block
    get = memref.GetGlobalOp(SCRATCH, scratch_ty)
    get.memref.name_hint = SCRATCH
    entry.insert_op_before(get, entry.first_op)
    views: list[list[memref.ViewOp]] = []
    for i, (alloc, _) in enumerate(planned):
        places = plan.places(i)
        block = alloc.parent_block()
        mine = []
        for _, offset in places:
            shift = arith.ConstantOp(IntegerAttr(offset, IndexType()), IndexType())
            view = memref.ViewOp(get.memref, shift.result, [], alloc.memref.type)
            view.result.name_hint = alloc.memref.name_hint
            block.insert_op_before(shift, alloc)
            block.insert_op_before(view, alloc)
            if INPUT in alloc.attributes and not mine:  # where the caller writes it
                view.attributes[INPUT] = UnitAttr()
            mine.append(view)
        if OUTPUT in alloc.attributes:  # where the caller reads it: its last place
            mine[-1].attributes[OUTPUT] = UnitAttr()
        for use in list(alloc.memref.uses):
            at = pos[use.operation]
            k = sum(1 for start, _ in places[1:] if start <= at)
            use.operation.operands[use.index] = mine[k].result
        alloc.detach()
        alloc.erase()
        views.append(mine)
    done = [0] * len(planned)
    for m in plan.moves:
        k = done[m.buffer]
        copy: Operation = memref.CopyOp(views[m.buffer][k].result, views[m.buffer][k + 1].result)
        op_at[m.at].parent_block().insert_op_before(copy, op_at[m.at])
        done[m.buffer] += 1
    fn.attributes["minun.scratch_bytes"] = IntegerAttr(total, 64)
    fn.attributes["minun.defrag_moves"] = IntegerAttr(len(plan.moves), 64)
    return total
