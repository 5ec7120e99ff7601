#!/usr/bin/env python3
"""`make bench`: compile every suite model in every configuration, run the generated C on
the simulated targets, and write BENCHMARKS.md + benchmarks/results.json (deterministic) and
benchmarks/timings.json (wall-clock, not committed)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from minun_mlir import bench


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="*", help="only these suite entries (names)")
    p.add_argument("--no-targets", action="store_true", help="accuracy only, no C runs")
    p.add_argument("--out", default=str(bench.ROOT / "BENCHMARKS.md"))
    p.add_argument("--results", default=str(bench.ROOT / "benchmarks" / "results.json"))
    p.add_argument("--timings", default=str(bench.ROOT / "benchmarks" / "timings.json"))
    args = p.parse_args(argv)
    entries = [e for e in bench.suite() if not args.models or e.name in args.models]
    runner = None if args.no_targets else getattr(bench, "run_targets", None)
    measurements, float_acc = [], {}
    with tempfile.TemporaryDirectory(prefix="minun-bench-") as tmp:
        for entry in entries:
            for options in bench.CONFIGS:
                m, fa = bench.measure(entry, options, runner, Path(tmp))
                measurements.append(m)
                float_acc[entry.name] = fa
                print(f"{entry.name:32} {m.config:24} acc {bench.pct(m.accuracy):>6} "
                      f"({m.compile_seconds:.1f} s)", flush=True)
        kernels = [] if args.no_targets else bench.kernel_benchmark(Path(tmp) / "kernels")
    Path(args.out).write_text(bench.render(measurements, float_acc, kernels))
    results = [{k: v for k, v in asdict(m).items() if k != "compile_seconds"}
               for m in measurements]
    Path(args.results).write_text(
        json.dumps(results, indent=1, sort_keys=True) + "\n")
    timings = {f"{m.model} | {m.config}": round(m.compile_seconds, 3) for m in measurements}
    speed = bench.evaluator_speed()
    timings.update(speed)
    for key, value in speed.items():
        print(f"{key}: {value:.3f} s")
    Path(args.timings).write_text(
        json.dumps(timings, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
