"""The greedy planner (memory-plan's default): first fit, largest buffer first.

A planner is a function of (sizes, live ranges, alignments) -> byte offsets, so that the
others (planners/shiftry.py, planners/optimal.py) can replace it; optimal also starts
from this placement.
"""

from __future__ import annotations

from collections.abc import Sequence


def first_fit(sizes: Sequence[int], ranges: Sequence[tuple[int, int]],
              aligns: Sequence[int], groups: Sequence[Sequence[tuple[int, int]]] = ()
              ) -> list[int]:
    """Offsets for buffers with the given byte sizes and live ranges: largest first, each
    at the lowest aligned offset not overlapping any placed buffer live at the same time.
    `groups`: buffers placed together at fixed offsets from one another, (index, offset)
    each (stream-rows' overlays: an output over the map it overwrites), first; each
    member then keeps other buffers out only while it is live."""
    offsets = [0] * len(sizes)
    placed: list[int] = []
    for group in sorted(groups, key=lambda g: (-max(sizes[k] for k, _ in g), g[0][0])):
        _place_group(group, sizes, ranges, aligns, offsets, placed)
    grouped = {k for g in groups for k, _ in g}
    order = sorted((i for i in range(len(sizes)) if i not in grouped),
                   key=lambda i: (-sizes[i], ranges[i][0], i))
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


def _place_group(group: Sequence[tuple[int, int]], sizes, ranges, aligns,
                 offsets: list[int], placed: list[int]) -> None:
    """The group at the lowest aligned base where no member overlaps a placed buffer
    live at the same time (members at base + their offsets)."""
    align = max(aligns[k] for k, _ in group)
    busy = []  # bases that would make a member overlap a placed buffer: [lo, hi)
    for k, at in group:
        for j in placed:
            if not (ranges[k][1] < ranges[j][0] or ranges[j][1] < ranges[k][0]):
                busy.append((offsets[j] - at - sizes[k] + 1, offsets[j] + sizes[j] - at))
    base = 0
    for lo, hi in sorted(busy):
        if base < hi and lo <= base:
            base = -(-hi // align) * align
    while any(lo <= base < hi for lo, hi in busy):  # a later interval reached back
        base = -(-max(hi for lo, hi in busy if lo <= base < hi) // align) * align
    for k, at in group:
        offsets[k] = base + at
        placed.append(k)
