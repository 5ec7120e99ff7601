"""memory-plan: first-fit placement never overlaps buffers that are live together,
checked on random problems and, on every example's planned L3, against live ranges
recomputed independently from an execution trace of the IR; budgets fail with the
diagnostic of architecture property 7."""

from __future__ import annotations

import pytest
from codegen_support import EXAMPLES, quantized
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith, func, memref, scf

from minun_mlir.diagnostics import MinunError
from minun_mlir.lowering.lower_to_loops import lower_to_loops
from minun_mlir.passes.memory_plan import first_fit, memory_plan, peak
from minun_mlir.passes.planners.verify import PlanError, verify_plan
from minun_mlir.pipeline import lower_l2

problem = st.lists(st.tuples(st.integers(1, 64), st.integers(0, 30), st.integers(0, 10),
                             st.sampled_from([1, 2, 4])), min_size=1, max_size=12)


@given(problem)
@settings(max_examples=300, deadline=None)
def test_first_fit_never_overlaps_live_buffers(bufs):
    sizes = [s for s, _, _, _ in bufs]
    ranges = [(a, a + d) for _, a, d, _ in bufs]
    aligns = [al for _, _, _, al in bufs]
    offsets = first_fit(sizes, ranges, aligns)
    for i in range(len(bufs)):
        assert offsets[i] % aligns[i] == 0
        for j in range(i):
            live = not (ranges[i][1] < ranges[j][0] or ranges[j][1] < ranges[i][0])
            apart = offsets[i] + sizes[i] <= offsets[j] or offsets[j] + sizes[j] <= offsets[i]
            assert apart or not live
    assert peak(sizes, offsets) <= sum(s + a for s, a in zip(sizes, aligns))


def test_first_fit_places_an_overlay_group_member_by_member():
    """stream-rows' overlay: buffer 0 (an output) and buffer 1 (the map it overwrites,
    20 bytes above it) live at once and keep their offsets from one another; buffer 2,
    live only once buffer 1 is dead, takes bytes the group's extent covers."""
    sizes, ranges, aligns = [100, 100, 20], [(0, 9), (0, 4), (6, 9)], [2, 2, 2]
    offsets = first_fit(sizes, ranges, aligns, groups=[[(0, 0), (1, 20)]])
    assert offsets[1] - offsets[0] == 20
    assert max(o + s for o, s in zip(offsets, sizes)) == 120
    assert offsets[2] >= offsets[0] + 100  # clear of the live output
    with pytest.raises(PlanError, match="overlaps"):
        verify_plan(sizes, ranges, aligns, offsets, 120)
    verify_plan(sizes, ranges, aligns, offsets, 120, exempt={frozenset((0, 1))})


def test_first_fit_reuses_memory_of_dead_buffers():
    assert first_fit([100, 100, 100], [(0, 1), (2, 3), (4, 5)], [2, 2, 2]) == [0, 0, 0]
    assert first_fit([100, 50], [(0, 5), (3, 8)], [4, 4]) == [0, 100]


# -- an independent check on the IR ----------------------------------------------------


def trace(fn: func.FuncOp) -> list[tuple[int, object, str]]:
    """(time, buffer, 'R'|'W') for every access of a scratch view, walking the IR as it
    runs: each loop body twice (so that values crossing iterations show), both branches
    of each if."""
    views = {op.result for op in fn.walk() if isinstance(op, memref.ViewOp)}
    events: list[tuple[int, object, str]] = []

    def walk(block) -> None:
        for op in block.ops:
            if isinstance(op, scf.ForOp):
                for _ in range(2):
                    walk(op.body.block)
            elif isinstance(op, scf.IfOp):
                walk(op.true_region.block)
                walk(op.false_region.block)
            elif isinstance(op, (memref.LoadOp, memref.StoreOp)) and op.memref in views:
                kind = "R" if isinstance(op, memref.LoadOp) else "W"
                events.append((len(events), op.memref, kind))

    walk(fn.body.block)
    return events


def live_intervals(events, buf) -> list[tuple[int, int]]:
    """A buffer's value lives from a write to the last read before the next write that
    follows a read."""
    out, start, last, seen_read = [], None, None, False
    for t, b, kind in events:
        if b is not buf:
            continue
        if kind == "W" and (start is None or seen_read):
            if start is not None:
                out.append((start, last))
            start, last, seen_read = t, t, False
        elif kind == "R":
            assert start is not None, "a buffer is read before it is written"
            last, seen_read = t, True
    if start is not None:
        out.append((start, last))
    return out


@pytest.mark.parametrize("config", ["fixed16", "maxscale16", "float32"])
@pytest.mark.parametrize("model", sorted(EXAMPLES))
def test_planned_buffers_live_together_never_overlap(model, config):
    l2, _ = quantized(model, config)
    l3 = lower_l2(l2, stop="memory-plan", planner="greedy")
    fn = l3.ops.last
    views = [op for op in fn.walk() if isinstance(op, memref.ViewOp)]
    assert views and not any(isinstance(op, memref.AllocOp) for op in fn.walk())
    events = trace(fn)
    spans = {}
    for v in views:
        shift = v.byte_shift.owner
        assert isinstance(shift, arith.ConstantOp)
        ty = v.result.type
        nbytes = ty.get_shape()[0] * (4 if str(ty.element_type) == "f32"
                                      else ty.element_type.width.data // 8)
        lo = shift.value.value.data
        assert lo % (nbytes // ty.get_shape()[0]) == 0, "misaligned view"
        spans[v.result] = (lo, lo + nbytes, live_intervals(events, v.result))
    items = list(spans.items())
    for i, (a, (alo, ahi, alive)) in enumerate(items):
        for b, (blo, bhi, blive) in items[:i]:
            if ahi <= blo or bhi <= alo:
                continue  # disjoint memory
            for s1, e1 in alive:
                for s2, e2 in blive:
                    assert e1 < s2 or e2 < s1, (
                        f"{a.name_hint} [{alo}, {ahi}) and {b.name_hint} [{blo}, {bhi}) "
                        f"share memory while both live ({s1}-{e1}, {s2}-{e2})")
    scratch = fn.attributes["minun.scratch_bytes"].value.data
    assert max(hi for hi, _ in ((h, 0) for _, h, _ in spans.values())) <= scratch


def test_greedy_uses_less_than_one_buffer_each():
    for model in EXAMPLES:
        l2, _ = quantized(model, "fixed16")
        naive = memory_plan(lower_to_loops(l2), "naive")
        greedy = memory_plan(lower_to_loops(l2), "greedy")
        assert greedy <= naive
    l2, _ = quantized("rnnpool", "fixed16")
    assert memory_plan(lower_to_loops(l2), "greedy") < memory_plan(lower_to_loops(l2), "naive")


def test_budget_error_names_the_peak_and_what_is_live():
    l2, _ = quantized("lenet", "fixed16")
    with pytest.raises(MinunError, match=r"error: model needs [\d,]+ bytes of RAM at "
                                         r"instruction \d+ \(live: .* B.*\); budget 64"):
        memory_plan(lower_to_loops(l2), "greedy", budget=64)


def test_unknown_planner_is_a_diagnostic():
    l2, _ = quantized("protonn", "fixed16")
    with pytest.raises(MinunError, match="planner must be one of naive, greedy, .*'bogus'"):
        memory_plan(lower_to_loops(l2), "bogus")
