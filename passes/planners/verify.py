"""The plan verifier every `memory-plan` planner's offsets go through.

`verify_plan(sizes, ranges, aligns, offsets, total)` checks what any placement must hold:
every buffer lies inside the scratch array (`0 <= offset` and `offset + size <= total`),
every offset is a multiple of the buffer's alignment, and no two buffers live at the same
time (inclusive live ranges that intersect) share a byte. A violation is a bug in the
planner, not the user's: it raises `PlanError` (not a `MinunError`), which the tools report
as an internal error in the memory-plan stage, naming the buffers, their bytes and their
live ranges.
"""

from __future__ import annotations

from collections.abc import Sequence


class PlanError(RuntimeError):
    """A planner produced an invalid placement (an internal error)."""


def verify_plan(sizes: Sequence[int], ranges: Sequence[tuple[int, int]],
                aligns: Sequence[int], offsets: Sequence[int], total: int, *,
                planner: str = "", names: Sequence[str] | None = None,
                exempt: set[frozenset[int]] | None = None) -> None:
    """Raise PlanError unless `offsets` place every buffer inside `total` bytes, aligned,
    with no two buffers live at the same time overlapping in bytes (but the pairs in
    `exempt`: a stream-rows output and the buffer it overwrites as its rows die)."""
    n = len(sizes)
    who = f"the {planner} planner" if planner else "the planner"

    def name(i: int) -> str:
        label = names[i] if names is not None else f"buffer {i}"
        lo = offsets[i]
        return (f"{label} ({sizes[i]} B at [{lo}, {lo + sizes[i]}), live "
                f"{ranges[i][0]}-{ranges[i][1]})")

    if not (len(ranges) == len(aligns) == len(offsets) == n):
        raise PlanError(f"memory-plan: {who} returned {len(offsets)} offsets for {n} "
                        "buffers (a bug in the planner)")
    for i in range(n):
        if offsets[i] < 0 or offsets[i] + sizes[i] > total:
            raise PlanError(f"memory-plan: {who} placed {name(i)} outside the "
                            f"{total}-byte scratch (a bug in the planner)")
        if offsets[i] % aligns[i]:
            raise PlanError(f"memory-plan: {who} placed {name(i)} at an offset that is not "
                            f"a multiple of its alignment {aligns[i]} (a bug in the planner)")
    # sweep over start times: each buffer against those still live when it starts
    order = sorted(range(n), key=lambda i: (ranges[i][0], i))
    live: list[int] = []
    for i in order:
        start = ranges[i][0]
        live = [j for j in live if ranges[j][1] >= start]
        lo, hi = offsets[i], offsets[i] + sizes[i]
        for j in live:
            if (lo < offsets[j] + sizes[j] and offsets[j] < hi and sizes[i] and sizes[j]
                    and not (exempt and frozenset((i, j)) in exempt)):
                a, b = sorted((i, j))
                raise PlanError(f"memory-plan: {who} overlaps {name(a)} and {name(b)}, "
                                "which are live at the same time (a bug in the planner)")
        live.append(i)
