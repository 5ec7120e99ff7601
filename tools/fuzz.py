"""Run the fuzzers of minun_mlir/fuzz/ and print what happened.

    python tools/fuzz.py --cases 1000 --seed 1 [--fuzzer seedot|onnx|ir|data] [--json out.json]

`--cases` is per fuzzer. The same seed gives the same cases (and, the compiler being
deterministic, the same table). Every defect (an internal error, a traceback, a hang, a
crash, a rejection that names no file) is listed under the table with its case number,
mutation and message; rerun one case with `--fuzzer F --start I --cases 1 --show`.
Exit status 1 when any defect was found.

    python tools/fuzz.py --differential 1000 --target x86 --seed 1

runs the differential test instead (minun_mlir/fuzz/differential.py): that many random
programs compiled to C for the target, run there, compared with the bit-exact evaluator.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from minun_mlir.fuzz import (  # noqa: E402
    FUZZERS,
    TIME_LIMIT,
    format_table,
    make_cases,
    one_line,
    run_cases,
    summarize,
)


def progress_bar(total: int, label: str):
    """A tqdm bar on a terminal; nothing otherwise (or without tqdm)."""
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=label, unit="case", leave=False)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=100, help="cases per fuzzer")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--start", type=int, default=0, help="index of the first case")
    p.add_argument("--fuzzer", action="append", choices=FUZZERS,
                   help="run only these (repeatable; default all)")
    p.add_argument("--time-limit", type=float, default=TIME_LIMIT, help="seconds per case")
    p.add_argument("--json", help="write the summary and the defects here")
    p.add_argument("--show", action="store_true", help="print every case's outcome")
    p.add_argument("--differential", type=int, metavar="N",
                   help="run N differential programs instead of the fuzzers")
    p.add_argument("--target", default="x86", help="with --differential: x86, avr, ...")
    p.add_argument("--repr", choices=("fixed", "bfloat16", "posit", "zero-skew"),
                   help="with --differential: only this representation (default: any)")
    args = p.parse_args(argv)
    if args.differential:
        return differential(args)
    results = []
    started = time.perf_counter()
    durations = {}
    for fuzzer in args.fuzzer or FUZZERS:
        t0 = time.perf_counter()
        bar = progress_bar(args.cases, fuzzer)

        def step(r, bar=bar):
            if bar is not None:
                bar.update(1)
            if args.show:
                print(f"{r.fuzzer}#{r.index} {r.outcome} ({r.seconds:.2f} s) {r.what}\n    "
                      f"{one_line(r.message)}")

        results += run_cases(make_cases(fuzzer, args.cases, args.seed, args.start),
                             args.time_limit, step)
        if bar is not None:
            bar.close()
        durations[fuzzer] = round(time.perf_counter() - t0, 1)
    summary = summarize(results)
    print(format_table(summary))
    print(f"seed {args.seed}, cases {args.start}..{args.start + args.cases - 1} per fuzzer, "
          f"{time.perf_counter() - started:.0f} s "
          f"({', '.join(f'{f} {s:.0f} s' for f, s in durations.items())})")
    known = Counter(r.known for r in results if r.outcome == "known")
    for script, n in known.items():
        print(f"known defect ({n} cases): test/python/fuzz/reproducers/{script}")
    defects = [r for r in results if r.defect]
    for r in defects:
        print(f"\n{r.fuzzer}#{r.index}: {r.outcome}: {r.what}\n  argv: {' '.join(r.argv)}\n"
              f"  {one_line(r.message)}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "seed": args.seed, "start": args.start, "cases_per_fuzzer": args.cases,
            "seconds": durations, "summary": summary, "known": known,
            "defects": [{"fuzzer": r.fuzzer, "index": r.index, "outcome": r.outcome,
                         "what": r.what, "argv": r.argv, "message": r.message}
                        for r in defects]}, indent=1))
    return 1 if defects else 0


def differential(args) -> int:
    from minun_mlir.fuzz.differential import run_many

    bar = progress_bar(args.differential, f"differential {args.target}")
    started = time.perf_counter()

    def step(i, v):
        if bar is not None:
            bar.update(1)
        if args.show or v.outcome in ("differs", "error"):
            print(f"program {i}: {v.outcome} {v.config} {one_line(v.detail)}")
            if v.outcome in ("differs", "error"):
                print(v.program)

    verdicts = run_many(args.differential, args.seed, args.target, args.start, step,
                        repr=args.repr)
    if bar is not None:
        bar.close()
    counts = Counter(v.outcome for v in verdicts)
    seconds = time.perf_counter() - started
    print(f"differential on {args.target} ({args.repr or 'any representation'}): "
          f"{len(verdicts)} programs (seed {args.seed}, from "
          f"{args.start}): " + ", ".join(f"{k} {counts[k]}" for k in
                                         ("same", "rejected", "differs", "error"))
          + f"; {seconds:.0f} s")
    rejected = Counter(v.detail.split(": error: ")[-1][:60] for v in verdicts
                       if v.outcome == "rejected")
    for reason, n in rejected.most_common(5):
        print(f"  rejected {n}: {reason}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "target": args.target, "seed": args.seed, "start": args.start,
            "programs": len(verdicts), "seconds": round(seconds, 1), "counts": counts,
            "defects": [{"outcome": v.outcome, "config": v.config, "detail": v.detail,
                         "program": v.program} for v in verdicts
                        if v.outcome in ("differs", "error")]}, indent=1))
    return 1 if counts["differs"] or counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
