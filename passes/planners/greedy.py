"""The greedy planner (memory-plan's default): first fit, largest buffer first.

A planner is a function of (sizes, live ranges, alignments) -> byte offsets, so that the
others (planners/shiftry.py, planners/optimal.py) can replace it; optimal also starts
from this placement.
"""

from __future__ import annotations

from collections.abc import Sequence


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
