"""minun-run: run a model directory on simulated targets and report size and latency.

    minun-run --target avr MODEL_DIR --inputs inputs.npy [--labels labels.npy]
              [--json out.json] [--flash-budget 32K] [--ram-budget 2K]

--target takes one name, a comma-separated list or "all". Prints one table row per target
and writes a JSON list with one record per model x target x configuration. Errors are one
paragraph on stderr with exit status 1 (2 for bad command lines), never a traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

from minun_mlir.outputs import write_file
from minun_mlir.tools.errors import run_tool

from .boards import BOARDS, OPT_LEVELS, TARGET_NAMES
from .errors import TargetError
from .run import RunResult, run_model


def parse_bytes(text: str) -> int:
    """'2048', '2K', '2KB', '1M' -> bytes (K = 1024)."""
    m = re.fullmatch(r"\s*(\d+)\s*([kKmM]?)(i?[bB])?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a byte count: '{text}' (e.g. 2048, 32K, 1M)")
    return int(m.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]


def parse_targets(text: str) -> list[str]:
    names = list(TARGET_NAMES) if text == "all" else [t.strip() for t in text.split(",")]
    for name in names:
        if name not in BOARDS:
            raise argparse.ArgumentTypeError(
                f"unknown target '{name}' (choose from {', '.join(TARGET_NAMES)} or all)")
    return names


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="minun-run",
        description="Build a generated model (model.h/model.c) for a microcontroller, run it "
                    "in a simulator and report flash, RAM, stack, predictions and latency.")
    p.add_argument("model_dir", type=Path, help="directory with model.h, model.c, ...")
    p.add_argument("--target", required=True, type=parse_targets,
                   help=f"{', '.join(TARGET_NAMES)}; a comma-separated list; or all")
    p.add_argument("--inputs", required=True, type=Path,
                   help=".npy array (N, MINUN_INPUT_SIZE) of raw minun_input_t values")
    p.add_argument("--labels", type=Path, help=".npy array (N,) of expected labels")
    p.add_argument("--json", type=Path, help="write the result records to this JSON file")
    p.add_argument("--flash-budget", type=parse_bytes,
                   help="flash budget in bytes (default: the board's flash)")
    p.add_argument("--ram-budget", type=parse_bytes,
                   help="static RAM budget in bytes (default: the board's RAM)")
    p.add_argument("--min-accuracy", type=float,
                   help="fail (exit 1) if the fraction of labels matching --labels is lower; "
                        "1.0 demands identical predictions")
    p.add_argument("--opt", default="size", choices=OPT_LEVELS,
                   help="size: the board's flags (-Os on the microcontrollers, default); "
                        "speed: -O2")
    p.add_argument("--config", default="default", help="configuration name for the records")
    p.add_argument("--name", help="model name for the records (default: directory name)")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds allowed per simulator run (default 60)")
    p.add_argument("--work-dir", type=Path, help="keep build files here (default: temporary)")
    p.add_argument("--debug", action="store_true",
                   help="show the Python traceback of an internal error")
    return p


def _load(path: Path, what: str) -> np.ndarray:
    from minun_mlir.inputs import problem

    # a FIFO or /dev/zero: refused unread (a missing file: np.load's message below)
    why = problem(path, f"the {what} file") if Path(path).exists() else None
    if why is not None:
        raise TargetError(f"{path}: error: {why}")
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise TargetError(f"error: cannot read {what} file {path}: {exc}") from None


def _latency(r: RunResult) -> str:
    median = r.latency_median
    text = f"{median:,.0f} {r.latency_unit}"
    clock = BOARDS[r.target].clock_hz
    if r.latency_unit == "cycles" and clock:
        text += f" ({median / clock * 1e3:.3f} ms)"
    return text


def format_table(results: list[RunResult]) -> str:
    header = ("model", "target", "flash B", "RAM B", "stack B", "latency (median)", "labels")
    rows = [header]
    for r in results:
        labels = "-"
        if r.expected_labels is not None:
            match = int(np.sum(r.labels == r.expected_labels))
            labels = f"{match}/{len(r.labels)} match"
        rows.append((r.model, r.target, f"{r.flash_bytes:,}", f"{r.ram_bytes:,}",
                     "-" if r.stack_bytes is None else f"{r.stack_bytes:,}", _latency(r),
                     labels))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    right = {2, 3, 4}
    return "\n".join("  ".join(c.rjust(w) if i in right else c.ljust(w)
                               for i, (c, w) in enumerate(zip(row, widths))).rstrip()
                     for row in rows)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.min_accuracy is not None and args.labels is None:
        parser.error("--min-accuracy needs --labels")
    return run_tool("minun-run", lambda: _run(args), debug=args.debug)


def _run(args) -> int:
    try:
        inputs = _load(args.inputs, "inputs")
        labels = _load(args.labels, "labels") if args.labels else None
        results = []
        for target in args.target:
            results.append(run_model(
                args.model_dir, target, inputs, labels=labels, name=args.name,
                config=args.config, flash_budget=args.flash_budget,
                ram_budget=args.ram_budget, timeout=args.timeout, opt=args.opt,
                work_dir=args.work_dir / target if args.work_dir else None))
    except TargetError as err:
        print(str(err), file=sys.stderr)
        return 1
    print(format_table(results))
    if args.json:
        # One record per line: still one JSON list, but readable and diff-friendly.
        lines = ",\n".join(json.dumps(r.to_record()) for r in results)
        write_file(args.json, f"[\n{lines}\n]\n", "--json", [args.inputs, args.labels],
                   (".c", ".h", ".npy", ".npz"))
    if args.min_accuracy is not None:
        low = [r for r in results if r.accuracy < args.min_accuracy]
        for r in low:
            print(f"error: {r.model} on {r.target}: accuracy {r.accuracy:.4f} is below "
                  f"--min-accuracy {args.min_accuracy}", file=sys.stderr)
        if low:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
