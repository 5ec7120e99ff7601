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
(`first_fit` in planners/greedy.py), so that other planners (Shiftry's, an optimal one)
can replace it.

With `input-in-scratch=true` the input is planned too: the function's `%x` argument is
replaced by a buffer (`memref.alloc {minun.input}`, named `input`) that the caller fills
before the call, so it is live from the first op to its last read and its bytes are
reused once it is dead. The function gets `minun.input_in_scratch`, and lower-to-emitc
prints the in-place entry point (`minun_input_buffer`, `minun_predict_in_place`).

With `output-in-scratch=true` the output is planned the same way: `%out` is replaced by a
buffer (`memref.alloc {minun.output}`, named `output`) that the caller reads after the
call, so it lives from its first write to the function's last op, and buffers dead before
that write may share its bytes. The function gets `minun.output_in_scratch`; the C gives
the caller `minun_output_buffer()` (docs/memory-planning.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from xdsl.context import Context
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
from xdsl.passes import ModulePass
from xdsl.utils.str_enum import StrEnum

from minun_mlir.diagnostics import error
from minun_mlir.passes.planners import optimal
from minun_mlir.passes.planners.buffers import (  # noqa: F401  (the names passes use)
    IN_SCRATCH,
    INPUT,
    OUT_SCRATCH,
    OUTPUT,
    OVER_ALLOC,
    SCRATCH,
    STREAM_ID_ALLOC,
    Buffer,
    buffers_of,
    element_bytes,
    live_range,
    positions,
)
from minun_mlir.passes.planners.greedy import first_fit
from minun_mlir.passes.planners.shiftry import place_in_blocks, plan_with_moves
from minun_mlir.passes.planners.verify import verify_plan


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


def input_into_scratch(fn: func.FuncOp) -> None:
    """The input argument `%x` replaced by a planned buffer the caller writes (the module
    docstring); the signature keeps `%x`, unused, for its type."""
    _argument_into_scratch(fn, 0, INPUT, IN_SCRATCH, "input")


def output_into_scratch(fn: func.FuncOp) -> None:
    """The output argument `%out` replaced by a planned buffer the caller reads after the
    call (the module docstring); the signature keeps `%out`, unused, for its type."""
    _argument_into_scratch(fn, 1, OUTPUT, OUT_SCRATCH, "output")


def _argument_into_scratch(fn: func.FuncOp, index: int, mark: str, done: str,
                           hint: str) -> None:
    """Argument `index` replaced by an allocation marked `mark` (once: `done` on fn)."""
    if done in fn.attributes:
        return
    block = fn.body.block
    arg = block.args[index]
    ty = arg.type
    assert isinstance(ty, MemRefType)
    alloc = memref.AllocOp.get(ty.element_type, shape=list(ty.get_shape()))
    alloc.attributes[mark] = UnitAttr()
    alloc.memref.name_hint = hint
    block.insert_op_before(alloc, block.first_op)
    arg.replace_all_uses_with(alloc.memref)
    fn.attributes[done] = UnitAttr()


# planner -> placement function (sizes, live ranges, alignments) -> offsets; the planners
# live in passes/planners/, one module each.
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


def overlay_edges(planned: list[tuple[memref.AllocOp, Buffer]]
                  ) -> tuple[dict[int, tuple[int, int]], set[int]]:
    """stream-rows' overlays among the planned buffers: output -> (the buffer it may
    overwrite, shift), and the buffers overwritten (each by one output at most)."""
    named = {a.attributes[STREAM_ID_ALLOC].value.data: k for k, (a, _) in enumerate(planned)
             if STREAM_ID_ALLOC in a.attributes}
    named.update(("input", k) for k, (a, _) in enumerate(planned) if INPUT in a.attributes)
    edge: dict[int, tuple[int, int]] = {}
    taken: set[int] = set()
    for k, (a, _) in enumerate(planned):
        if OVER_ALLOC not in a.attributes:
            continue
        what, shift = a.attributes[OVER_ALLOC].data.split()
        target = named.get(what if what == "input" else int(what))
        if target is not None and target not in taken:
            edge[k] = (target, int(shift))
            taken.add(target)
    return edge, taken


def _members(edge: dict[int, tuple[int, int]], taken: set[int]) -> dict[int, tuple[int, int]]:
    """buffer -> (its group's first output, its offset in the group)."""
    rel: dict[int, tuple[int, int]] = {}
    for root in (k for k in edge if k not in taken):
        k, at = root, 0
        while True:
            rel[k] = (root, at)
            if k not in edge:
                break
            k, at = edge[k][0], at + edge[k][1]
    return rel


def overlay_groups(planned: list[tuple[memref.AllocOp, Buffer]]
                   ) -> tuple[list[Buffer], Callable[[list[int]], list[int]]]:
    """The buffers to place, each stream-rows output marked `minun.over` joined with the
    buffer it may overwrite (the input in scratch, or an earlier output: stream-rows
    proved that each output row overwrites only rows no later step reads) into one
    buffer, that one `shift` bytes above it; and the function giving every planned
    buffer its offset from the placed ones'. A buffer two outputs would overwrite, or
    one missing (the input not in scratch), keeps its own place."""
    buffers = [b for _, b in planned]
    edge, taken = overlay_edges(planned)
    rel = _members(edge, taken)
    roots = sorted({r for r, _ in rel.values()})
    rest = [k for k in range(len(buffers)) if k not in rel]
    placed = [buffers[k] for k in rest]
    for r in roots:
        members = [k for k in rel if rel[k][0] == r]
        placed.append(Buffer("+".join(buffers[k].name for k in members),
                             max(rel[k][1] + buffers[k].size for k in members),
                             max(buffers[k].align for k in members),
                             min(buffers[k].first for k in members),
                             max(buffers[k].last for k in members)))

    def expand(offsets: list[int]) -> list[int]:
        out = [0] * len(buffers)
        for k, off in zip(rest, offsets):
            out[k] = off
        at = dict(zip(roots, offsets[len(rest):]))
        for k, (r, shift) in rel.items():
            out[k] = at[r] + shift
        return out

    return placed, expand


def _columns(buffers: list[Buffer]) -> tuple[list[int], list[tuple[int, int]], list[int]]:
    return ([b.size for b in buffers], [(b.first, b.last) for b in buffers],
            [b.align for b in buffers])


def plan_function(module: ModuleOp, fn: func.FuncOp, planner: Planner, budget: int,
                  input_in_scratch: bool = False, output_in_scratch: bool = False) -> int:
    """Rewrite fn's allocs per the planner; returns the bytes of buffer memory used."""
    if output_in_scratch:
        output_into_scratch(fn)
    if input_in_scratch:
        input_into_scratch(fn)
    planned = buffers_of(fn)
    buffers = [b for _, b in planned]
    if planner in (Planner.SHIFTRY, Planner.NAIVE) or not planned:
        check_budget(buffers, budget)
    if planner == Planner.SHIFTRY:
        return plan_with_moves(module, fn, planned, budget)
    if planner == Planner.NAIVE or not planned:
        total = sum(b.size for b in buffers)
        check_plan_fits(planner, total, buffers, budget)
        return total
    merged, expand = overlay_groups(planned)
    check_budget(merged, budget)
    edge, taken = overlay_edges(planned)
    if planner == Planner.GREEDY and edge:
        # each overlay group placed as its members, so its dead members' bytes are reused
        rel = _members(edge, taken)
        groups = [[(k, at) for k, (r, at) in sorted(rel.items()) if r == root]
                  for root in sorted({r for r, _ in rel.values()})]
        offsets = first_fit(*_columns(buffers), groups=groups)
        exempt = {frozenset((k, t)) for k, (t, _) in edge.items()}
        placed = buffers
    else:
        offsets = PLACERS[planner](*_columns(merged))
        exempt, placed = set(), merged
    align = max(b.align for b in buffers)
    total = -(-peak([b.size for b in placed], offsets) // align) * align
    check_plan_fits(planner, total, merged, budget)
    verify_plan(*_columns(placed), offsets, total, planner=planner,
                names=[b.name for b in placed], exempt=exempt)
    if placed is merged:
        offsets = expand(offsets)
    scratch_ty = MemRefType(i8, [total])
    module.body.block.insert_op_before(
        memref.GlobalOp.get(StringAttr(SCRATCH), scratch_ty, UnitAttr(),
                            alignment=align), fn)
    entry = fn.body.block
    get = memref.GetGlobalOp(SCRATCH, scratch_ty)
    get.memref.name_hint = SCRATCH
    entry.insert_op_before(get, entry.first_op)
    scratch, index = get.memref, IndexType()
    for (alloc, _), offset in zip(planned, offsets):
        # arith.ConstantOp(IntegerAttr(offset, index), index) and memref.ViewOp(scratch,
        # shift, [], type) as their builders make them, without the builders' argument
        # matching (one pair per buffer, and the searches plan hundreds of candidates)
        ref = alloc.memref
        shift = arith.ConstantOp.create(result_types=(index,),
                                        properties={"value": _index_attr(offset)})
        view = memref.ViewOp.create(operands=(scratch, shift.result), result_types=(ref.type,))
        view.result.name_hint = ref.name_hint
        for mark in (INPUT, OUTPUT):
            if mark in alloc.attributes:
                view.attributes[mark] = UnitAttr()
        block = alloc.parent_block()
        block.insert_op_before(shift, alloc)
        block.insert_op_before(view, alloc)
        ref.replace_all_uses_with(view.result)
        alloc.detach()
        alloc.erase()
    fn.attributes["minun.scratch_bytes"] = IntegerAttr(total, 64)
    return total


@lru_cache(maxsize=4096)
def _index_attr(offset: int) -> IntegerAttr:
    """An `index` offset (attributes are immutable: one per offset, shared)."""
    return IntegerAttr(offset, IndexType())


def memory_plan(module: ModuleOp, planner: str = Planner.GREEDY, budget: int = 0,
                input_in_scratch: bool = False, output_in_scratch: bool = False) -> int:
    planner = planner_named(planner)
    total = 0
    for fn in [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]:
        total += plan_function(module, fn, planner, budget, input_in_scratch,
                               output_in_scratch)
    return total


@dataclass(frozen=True)
class MemoryPlan(ModulePass):
    """Place L3 buffers in one scratch array by live ranges (greedy) or keep them (naive)."""

    name = "memory-plan"

    planner: str = Planner.GREEDY.value
    budget: int = 0
    time_limit: int = optimal.DEFAULT_TIME_LIMIT  # seconds, planner=optimal only
    input_in_scratch: bool = False  # the input a planned buffer, reused once dead
    output_in_scratch: bool = False  # the output a planned buffer, read after the call

    def __post_init__(self) -> None:
        planner_named(self.planner)  # a bad option fails when the pipeline is built
        for option in ("budget", "time_limit"):
            if getattr(self, option) < 0:
                raise error(f"memory-plan: {option.replace('_', '-')} must be 0 or more, got "
                            f"{getattr(self, option)}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        with optimal.time_limit(self.time_limit):
            memory_plan(op, self.planner, self.budget, self.input_in_scratch,
                        self.output_in_scratch)


