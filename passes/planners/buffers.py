"""What the planners read off an L3 function: op positions, the live range of every
buffer, and the names memory-plan gives the scratch global and the input and output it
places (the output, read by the caller after the call, lives to the function's last op).
Its own module so that the planners (greedy, Shiftry's, optimal) and memory-plan, which
chooses among them, all import it and none imports another's pass module.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import Float32Type, MemRefType
from xdsl.ir import Operation, SSAValue

from minun_mlir.diagnostics import error

SCRATCH = "minun_scratch"
INPUT = "minun.input"  # on the alloc (then the first view) holding the input in scratch
IN_SCRATCH = "minun.input_in_scratch"  # on the function whose input is planned
OUTPUT = "minun.output"  # on the alloc (then the last view) holding the output in scratch
OUT_SCRATCH = "minun.output_in_scratch"  # on the function whose output is planned
# on the alloc of a stream-rows output: its number, and what it may overwrite as its
# sweep goes, "input SHIFT" (the input in scratch) or "NUMBER SHIFT" (an earlier
# output), which then starts SHIFT bytes above it (passes/stream_rows.py overlay)
STREAM_ID_ALLOC, OVER_ALLOC = "minun.stream_id", "minun.over"


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
    spans: dict[Operation, tuple[int, int]] = {}  # a loop's last op: the last in its subtree

    def number(block) -> None:  # one walk (not one more per loop), in walk()'s order
        op = block.first_op
        while op is not None:
            at = pos[op] = len(pos)
            if op.regions:
                for region in op.regions:
                    for b in region.blocks:
                        number(b)
                if isinstance(op, scf.ForOp):
                    spans[op] = (at, len(pos) - 1)
            op = op.next_op

    for block in fn.body.blocks:
        number(block)
    return pos, spans


def _loops_of(op: Operation) -> list[Operation]:
    loops = []
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if isinstance(parent, scf.ForOp):
            loops.append(parent)
        parent = parent.parent_op()
    return loops


def _loops_around(users: list[Operation]) -> set[Operation]:
    """The scf.for ops holding any of `users` (users of one block share theirs, so each
    block's loops are found once: a buffer's users are mostly in a few loop bodies)."""
    loops: set[Operation] = set()
    seen: set = set()
    for u in users:
        block = u.parent_block()
        if block not in seen:
            seen.add(block)
            loops.update(_loops_of(u))
    return loops


def live_range(value: SSAValue, pos, spans) -> tuple[int, int]:
    """[first, last] op positions during which the buffer `value` holds live data."""
    first, last = _live_range(value, pos, spans)
    if OUTPUT in getattr(value.owner, "attributes", {}):  # the caller reads it after the call
        last = max(pos.values())
    return first, last


def _live_range(value: SSAValue, pos, spans) -> tuple[int, int]:
    users = [u.operation for u in value.uses]
    # the input in scratch is written by the caller: live from the function's first op
    start = 0 if INPUT in getattr(value.owner, "attributes", {}) else None
    if not users:
        p = pos[value.owner]
        return (p, p) if start is None else (start, p)
    at = [pos[u] for u in users]
    first = min(at) if start is None else start
    last = max(at)
    for loop in _loops_around(users):
        lo, hi = spans[loop]
        inside = [(p, u) for p, u in zip(at, users) if lo <= p <= hi]
        earliest = min(inside, key=lambda pu: pu[0])[1]
        if len(inside) < len(users) or isinstance(earliest, memref.LoadOp):
            first, last = min(first, lo), max(last, hi)
    return first, last


def buffers_of(fn: func.FuncOp) -> list[tuple[memref.AllocOp, Buffer]]:
    pos, spans = positions(fn)
    out = []
    # pos holds fn's ops in walk order (fn itself, not an alloc, aside): no second walk
    for i, op in enumerate(o for o in pos if type(o) is memref.AllocOp):
        ty = op.memref.type
        if not isinstance(ty, MemRefType) or not ty.has_static_shape():
            raise error("memory-plan: only statically shaped buffers can be planned")
        size = ty.element_count() * element_bytes(ty)
        first, last = live_range(op.memref, pos, spans)
        name = op.memref.name_hint or f"buffer{i}"
        out.append((op, Buffer(name, size, element_bytes(ty), first, last)))
    return out
