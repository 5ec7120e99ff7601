"""`memory-plan{planner=optimal time-limit=10}`: buffers placed at the minimum scratch size.

The problem (MinUn §5.3): each buffer is a rectangle on a canvas of time (its live range,
fixed) by bytes (its offset, to choose, a multiple of its alignment); rectangles must not
overlap; minimise the canvas height (the scratch size). It is NP-hard. The search starts
from the lower bound, MinUn's "tightest stack per instruction": the largest sum of the
sizes of the buffers live at one program point (it suffices to look at the points where
some buffer starts).

Two exact solvers:

- `algorithm_x`: MinUn's reference encoding, Knuth's Algorithm X with dancing links,
  written here. Rows are placements (buffer, offset); columns are one primary column per
  buffer (each placed exactly once) and secondary columns (time, byte-cell) (each covered
  at most once: the empty canvas need not be covered). Heights are tried upward from the
  lower bound until an exact cover exists. The paper's optimisations, kept exact: offsets
  only at multiples of the granularity g = gcd of the sizes and of the alignments g does
  not divide (a placement pushed down as far as it goes has every offset a sum of sizes
  rounded up to alignments, so nothing is lost: MinUn's coarsening rounds sizes up instead
  and can lose the optimum), one cell per g bytes, time only at the points where a buffer
  starts (two live ranges meet iff one holds the other's start), and the next buffer
  chosen is the one with the fewest placements left, ties to the larger area (the paper
  orders by decreasing area; fewest-left also fails at once on a buffer with none).
- `cp_sat`: OR-Tools CP-SAT, `AddNoOverlap2D` of fixed time intervals and byte intervals
  whose starts are `g' * k` (g' = lcm(g, alignment), k an integer variable), minimising
  the peak with the peak's domain [lower bound, greedy's peak] and greedy's plan as a
  hint. One worker and a fixed seed; the time limit is CP-SAT's *deterministic* time
  (`max_deterministic_time`, calibrated to about a second each), so that a search cut
  short stops at the same point on every machine and plans stay deterministic.

Which is used when: the planner first runs greedy first fit; when greedy's peak already
equals the lower bound it is optimal and is returned as it is (no solver). Otherwise it
runs CP-SAT. Algorithm X is the reference the tests check CP-SAT against (instances of at
most 8 buffers): it is exponential and in Python, so it is fast only on tiny canvases.
Measured (one core; random instances, sizes up to 32 elements; docs/codegen.md has the
table): at 8 buffers Algorithm X takes 0.26 s on average (2.5 s at worst) and CP-SAT 3 ms;
at 12, Algorithm X from 0.03 s to 12 s, CP-SAT under 40 ms; at 16 Algorithm X did not
finish 10 instances in 4 minutes, while CP-SAT proves 30 buffers in ~15 ms, 60 in ~0.2 s
and 100 in ~5 s (20 s at worst). On every example and suite model greedy already meets
the lower bound (`tools/planner_report.py`).

If CP-SAT does not prove optimality within the time limit, the best plan found is used
(never worse than greedy's, which is its hint) and a warning says "best found, not proven
optimal in T s (gap: N bytes above the lower bound)".
"""

from __future__ import annotations

import contextvars
import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from minun_mlir.diagnostics import error, warn
from minun_mlir.passes.planners.greedy import first_fit

DEFAULT_TIME_LIMIT = 10  # seconds (CP-SAT deterministic time)
SEED = 1

_TIME_LIMIT: contextvars.ContextVar[float] = contextvars.ContextVar(
    "memory_plan_time_limit", default=DEFAULT_TIME_LIMIT)


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """The optimal planner's time limit for the placements made inside (the pass's
    `time-limit` option)."""
    token = _TIME_LIMIT.set(seconds)
    try:
        yield
    finally:
        _TIME_LIMIT.reset(token)


@dataclass(frozen=True)
class OptimalPlan:
    offsets: list[int]
    peak: int  # max(offset + size)
    lower_bound: int  # the tightest stack over program points
    proven: bool  # peak is the minimum
    bound: int  # the best proven lower bound on the peak (= peak when proven)
    seconds: float  # wall clock
    method: str  # "greedy" (it met the lower bound), "cp-sat", "algorithm-x"


def peak_of(sizes: Sequence[int], offsets: Sequence[int]) -> int:
    return max((o + s for o, s in zip(offsets, sizes)), default=0)


def starts(ranges: Sequence[tuple[int, int]]) -> list[int]:
    """The program points where some buffer starts: every set of buffers live together is
    live at one of them."""
    return sorted({a for a, _ in ranges})


def lower_bound(sizes: Sequence[int], ranges: Sequence[tuple[int, int]]) -> int:
    """MinUn's minimum budget: the largest sum of the sizes live at one program point."""
    return max((sum(s for s, (a, b) in zip(sizes, ranges) if a <= t <= b)
                for t in starts(ranges)), default=0)


def granularity(sizes: Sequence[int], aligns: Sequence[int]) -> int:
    """g such that some optimal plan has every offset a multiple of g."""
    g = 0
    for s in sizes:
        g = math.gcd(g, s)
    for a in aligns:
        if g and g % a:
            g = math.gcd(g, a)
    return g or 1


def _step(g: int, align: int) -> int:
    return g * align // math.gcd(g, align)


# -- Algorithm X with dancing links ---------------------------------------------------


class _Dlx:
    """Knuth's dancing links over flat arrays; node 0 is the root, nodes 1..ncols the
    column headers (the first `nprimary` in the root's list, the others secondary)."""

    def __init__(self, ncols: int, nprimary: int, priority: Sequence[float]) -> None:
        n = ncols + 1
        self.L = list(range(n))
        self.R = list(range(n))
        self.U = list(range(n))
        self.D = list(range(n))
        self.C = list(range(n))
        self.row = [-1] * n
        self.S = [0] * n
        self.priority = [0.0, *priority]  # tie-break of the column choice (higher first)
        prev = 0
        for c in range(1, nprimary + 1):
            self.L[c], self.R[c] = prev, 0
            self.R[prev], self.L[0] = c, c
            prev = c

    def add_row(self, row: int, cols: Sequence[int]) -> None:
        first = -1
        for c in cols:
            c += 1
            x = len(self.C)
            self.C.append(c)
            self.row.append(row)
            self.U.append(self.U[c])
            self.D.append(c)
            self.D[self.U[c]] = x
            self.U[c] = x
            self.S[c] += 1
            if first < 0:
                first = x
                self.L.append(x)
                self.R.append(x)
            else:
                self.L.append(self.L[first])
                self.R.append(first)
                self.R[self.L[first]] = x
                self.L[first] = x

    def _cover(self, c: int) -> None:
        L, R, U, D, C, S = self.L, self.R, self.U, self.D, self.C, self.S
        R[L[c]], L[R[c]] = R[c], L[c]
        i = D[c]
        while i != c:
            j = R[i]
            while j != i:
                U[D[j]], D[U[j]] = U[j], D[j]
                S[C[j]] -= 1
                j = R[j]
            i = D[i]

    def _uncover(self, c: int) -> None:
        L, R, U, D, C, S = self.L, self.R, self.U, self.D, self.C, self.S
        i = U[c]
        while i != c:
            j = L[i]
            while j != i:
                S[C[j]] += 1
                U[D[j]] = j
                D[U[j]] = j
                j = L[j]
            i = U[i]
        R[L[c]] = c
        L[R[c]] = c

    def solve(self) -> list[int] | None:
        """The rows of the first exact cover of the primary columns found, or None."""
        chosen: list[int] = []
        R, D, S = self.R, self.D, self.S

        def search() -> bool:
            if R[0] == 0:
                return True
            best, c = None, R[0]
            while c != 0:
                key = (S[c], -self.priority[c])
                if best is None or key < best[0]:
                    best = (key, c)
                c = R[c]
            c = best[1]
            if S[c] == 0:
                return False
            self._cover(c)
            r = D[c]
            while r != c:
                chosen.append(self.row[r])
                j = self.R[r]
                while j != r:
                    self._cover(self.C[j])
                    j = self.R[j]
                if search():
                    return True
                j = self.L[r]
                while j != r:
                    self._uncover(self.C[j])
                    j = self.L[j]
                chosen.pop()
                r = D[r]
            self._uncover(c)
            return False

        return chosen if search() else None


def exact_cover(sizes: Sequence[int], ranges: Sequence[tuple[int, int]],
                aligns: Sequence[int], capacity: int) -> list[int] | None:
    """Offsets placing every buffer within `capacity` bytes (MinUn's exact cover of the
    canvas), or None when there are none."""
    n = len(sizes)
    g = granularity(sizes, aligns)
    cells = capacity // g
    points = starts(ranges)
    ncols = n + len(points) * cells
    area = [sizes[i] * (ranges[i][1] - ranges[i][0] + 1) for i in range(n)]
    dlx = _Dlx(ncols, n, [*area, *([0] * (ncols - n))])
    rows: list[tuple[int, int]] = []
    for i in range(n):
        live = [p for p, t in enumerate(points) if ranges[i][0] <= t <= ranges[i][1]]
        height = sizes[i] // g
        step = _step(g, aligns[i]) // g
        for k in range(0, cells - height + 1, step):
            cols = [i] + [n + p * cells + c for p in live for c in range(k, k + height)]
            dlx.add_row(len(rows), cols)
            rows.append((i, k * g))
    found = dlx.solve()
    if found is None:
        return None
    offsets = [0] * n
    for r in found:
        i, off = rows[r]
        offsets[i] = off
    return offsets


def algorithm_x(sizes: Sequence[int], ranges: Sequence[tuple[int, int]],
                aligns: Sequence[int]) -> OptimalPlan:
    """The minimum-peak plan by Algorithm X, heights tried upward from the lower bound."""
    t0 = time.perf_counter()
    lb = lower_bound(sizes, ranges)
    g = granularity(sizes, aligns)
    height = -(-lb // g) * g
    while (offsets := exact_cover(sizes, ranges, aligns, height)) is None:
        height += g  # terminates: stacking every buffer is a cover
    peak = peak_of(sizes, offsets)
    return OptimalPlan(offsets, peak, lb, True, peak, time.perf_counter() - t0,
                       "algorithm-x")


# -- CP-SAT ---------------------------------------------------------------------------


def cp_sat(sizes: Sequence[int], ranges: Sequence[tuple[int, int]], aligns: Sequence[int],
           time_limit: float = DEFAULT_TIME_LIMIT,
           hint: Sequence[int] | None = None) -> OptimalPlan:
    """The minimum-peak plan by CP-SAT's 2-D no-overlap (best found if the limit hits)."""
    from ortools.sat.python import cp_model


    t0 = time.perf_counter()
    n = len(sizes)
    lb = lower_bound(sizes, ranges)
    g = granularity(sizes, aligns)
    greedy = list(hint) if hint is not None else first_fit(sizes, ranges, aligns)
    upper = peak_of(sizes, greedy)
    model = cp_model.CpModel()
    peak = model.new_int_var(-(-lb // g) * g, upper, "peak")
    ks, xs, ys = [], [], []
    for i in range(n):
        step = _step(g, aligns[i])
        k = model.new_int_var(0, (upper - sizes[i]) // step, f"k{i}")
        model.add_hint(k, greedy[i] // step)
        ks.append((k, step))
        first, last = ranges[i]
        xs.append(model.new_fixed_size_interval_var(first, last - first + 1, f"t{i}"))
        ys.append(model.new_fixed_size_interval_var(k * step, sizes[i], f"b{i}"))
        model.add(k * step + sizes[i] <= peak)
    model.add_no_overlap_2d(xs, ys)
    model.minimize(peak)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = SEED
    solver.parameters.max_deterministic_time = float(time_limit)
    status = solver.solve(model)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        offsets = [int(solver.value(k)) * step for k, step in ks]
        best = peak_of(sizes, offsets)
        bound = max(-(-lb // g) * g, math.ceil(solver.best_objective_bound))
    else:  # no solution in time: greedy's (the hint) is the best known
        offsets, best, bound = greedy, upper, -(-lb // g) * g
    proven = status == cp_model.OPTIMAL or best <= bound
    return OptimalPlan(offsets, best, lb, proven, best if proven else bound,
                       time.perf_counter() - t0, "cp-sat")


# -- the planner ----------------------------------------------------------------------


def plan(sizes: Sequence[int], ranges: Sequence[tuple[int, int]], aligns: Sequence[int],
         time_limit: float = DEFAULT_TIME_LIMIT) -> OptimalPlan:
    """Greedy when it meets the lower bound, else CP-SAT within `time_limit`."""

    t0 = time.perf_counter()
    greedy = first_fit(sizes, ranges, aligns)
    lb = lower_bound(sizes, ranges)
    g = granularity(sizes, aligns)
    if peak_of(sizes, greedy) <= -(-lb // g) * g:
        peak = peak_of(sizes, greedy)
        return OptimalPlan(greedy, peak, lb, True, peak, time.perf_counter() - t0, "greedy")
    return cp_sat(sizes, ranges, aligns, time_limit, hint=greedy)


def optimal(sizes: Sequence[int], ranges: Sequence[tuple[int, int]],
            aligns: Sequence[int]) -> list[int]:
    """The `optimal` planner's placement function (time limit from the pass option)."""
    limit = _TIME_LIMIT.get()
    if limit <= 0:
        raise error(f"memory-plan: time-limit must be a positive number of seconds, "
                    f"got {limit:g}")
    result = plan(sizes, ranges, aligns, limit)
    if not result.proven:
        warn(f"memory-plan: optimal planner: best found, not proven optimal in {limit:g} s "
             f"(gap: {result.peak - result.bound} bytes above the lower bound)")
    return result.offsets
