#!/usr/bin/env python3
"""The optimal planner on every example and suite model (16-bit fixed point): buffers,
the lower bound (tightest stack), greedy's and the optimal planner's scratch bytes,
whether optimality is proven, and the optimal planner's seconds (wall clock, this
machine), as the markdown table of docs/codegen.md "memory-plan"; with --compare, also
Algorithm X against CP-SAT on random instances of a few sizes."""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from xdsl.dialects import func

from minun_mlir.driver import load_model
from minun_mlir.lowering.lower_to_loops import lower_to_loops
from minun_mlir.passes.memory_plan import buffers_of, first_fit
from minun_mlir.passes.planners import optimal
from minun_mlir.passes.planners.verify import verify_plan
from minun_mlir.pipeline import lower_to_l2

ROOT = Path(__file__).resolve().parents[1]
SCALE = 8  # random instances: sizes up to SCALE elements of 1, 2 or 4 bytes


def models() -> list[tuple[str, Path, Path, Path, dict[str, int]]]:
    """(name, program, weights, profiling data, ONNX dimensions) of every example, suite
    model and vendored ONNX model."""
    out = []
    for sd in sorted((ROOT / "examples").glob("*.sd")):
        out.append((sd.stem, sd, sd.with_suffix(""), sd.with_suffix("") / "test.npy", {}))
    for d in sorted((ROOT / "benchmarks" / "models").iterdir()):
        if (d / "model.sd").is_file():
            out.append((f"suite/{d.name}", d / "model.sd", d, d / "train.npy", {}))
    for name, dims in (("onnx-sine", {"N": 1}), ("onnx-mnist-8", {})):
        d = ROOT / "benchmarks" / "real" / name
        out.append((f"real/{name}", d / "model.onnx", d, d / "test.npy", dims))
    return out


def problem(program: Path, weights: Path, data: Path, dims: dict[str, int]):
    l2 = lower_to_l2(load_model(program, weights, dims or None), data=str(data), bits=16)
    l3 = lower_to_loops(l2)
    fn = next(op for op in l3.ops if isinstance(op, func.FuncOp) and not op.is_declaration)
    bufs = [b for _, b in buffers_of(fn)]
    return [b.size for b in bufs], [(b.first, b.last) for b in bufs], [b.align for b in bufs]


def table(time_limit: float) -> list[str]:
    rows = ["| model | buffers | lower bound | greedy | optimal | proven | seconds "
            "| CP-SAT alone, seconds |", "|---|---:|---:|---:|---:|---|---:|---:|"]
    for name, program, weights, data, dims in models():
        sizes, ranges, aligns = problem(program, weights, data, dims)
        greedy = optimal.peak_of(sizes, first_fit(sizes, ranges, aligns))
        plan = optimal.plan(sizes, ranges, aligns, time_limit)
        verify_plan(sizes, ranges, aligns, plan.offsets, plan.peak, planner="optimal")
        alone = optimal.cp_sat(sizes, ranges, aligns, time_limit)  # even where greedy is
        assert alone.peak == plan.peak and alone.proven == plan.proven
        rows.append(f"| {name} | {len(sizes)} | {plan.lower_bound} | {greedy} | {plan.peak} "
                    f"| {'yes' if plan.proven else 'no'} ({plan.method}) "
                    f"| {plan.seconds:.3f} | {alone.seconds:.3f} |")
        print(rows[-1], file=sys.stderr, flush=True)
    return rows


def random_instance(rng: random.Random, n: int):
    aligns = [rng.choice([1, 2, 4]) for _ in range(n)]
    sizes = [a * rng.randint(1, SCALE) for a in aligns]
    ranges = []
    for _ in range(n):
        start = rng.randint(0, 2 * n)
        ranges.append((start, start + rng.randint(0, n)))
    return sizes, ranges, aligns


def compare(sizes_n: list[int], trials: int) -> list[str]:
    rows = ["| buffers | instances | Algorithm X mean / max s | CP-SAT mean / max s |",
            "|---:|---:|---:|---:|"]
    rng = random.Random(0)
    for n in sizes_n:
        tx, tc = [], []
        for _ in range(trials):
            sizes, ranges, aligns = random_instance(rng, n)
            t = time.perf_counter()
            x = optimal.algorithm_x(sizes, ranges, aligns)
            tx.append(time.perf_counter() - t)
            t = time.perf_counter()
            c = optimal.cp_sat(sizes, ranges, aligns)
            tc.append(time.perf_counter() - t)
            assert x.peak == c.peak and c.proven, (sizes, ranges, aligns)
        rows.append(f"| {n} | {trials} | {sum(tx) / trials:.4f} / {max(tx):.3f} "
                    f"| {sum(tc) / trials:.4f} / {max(tc):.3f} |")
        print(rows[-1], file=sys.stderr, flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--time-limit", type=float, default=optimal.DEFAULT_TIME_LIMIT)
    p.add_argument("--compare", type=int, nargs="*", metavar="N",
                   help="also time Algorithm X and CP-SAT on random instances of N buffers")
    p.add_argument("--trials", type=int, default=20)
    args = p.parse_args(argv)
    print("\n".join(table(args.time_limit)))
    if args.compare:
        print()
        print("\n".join(compare(args.compare, args.trials)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
