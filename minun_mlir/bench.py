"""The benchmark suite and its report (`make bench` -> BENCHMARKS.md, benchmarks/results.json).

Every suite model is compiled in every configuration available (float32 baseline, 16- and
8-bit data-driven fixed point, SeeDot's tuned maxscale, 16-bit with 8-bit parameters);
accuracy comes from the bit-exact evaluator on the whole test split, sizes and latency
from the generated C built with the real toolchains and run in the simulators (exact AVR
cycles, exact Cortex-M instruction counts). Everything in the report is deterministic;
wall-clock compile times go to benchmarks/timings.json (not committed) and appear in the
report only as a coarse bucket.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from minun_mlir.driver import Compiled, Options, compile_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "benchmarks" / "models"
REAL = ROOT / "benchmarks" / "real"
EXAMPLES = ROOT / "examples"


@dataclass(frozen=True)
class Entry:
    name: str
    model: Path
    train: Path
    test: Path
    family: str
    task: str
    weights: Path | None = None
    dims: dict[str, int] | None = None
    regression: bool = False
    frontend: str = "seedot"

    def info(self) -> dict:
        path = self.model.parent / "info.json"
        return json.loads(path.read_text()) if path.exists() else {}


def suite() -> list[Entry]:
    """Our 14 trained models, the ONNX exports of two of them, and the 3 real models."""
    entries = []
    for d in sorted(p for p in MODELS.iterdir() if (p / "model.sd").exists()):
        info = json.loads((d / "info.json").read_text())
        common = dict(train=d / "train.npy", test=d / "test.npy", family=info["family"],
                      task=info["task"])
        entries.append(Entry(d.name, d / "model.sd", **common))
        if (d / "model.onnx").exists():
            entries.append(Entry(d.name + "-onnx", d / "model.onnx", frontend="onnx",
                                 **common))
    usps = EXAMPLES / "fastgrnn_lr_usps"
    entries += [
        Entry("fastgrnn-lr-usps (real)", EXAMPLES / "fastgrnn_lr_usps.sd", usps / "test.npy",
              usps / "test.npy", "fastgrnn-lr", "usps (10 examples)", weights=usps),
        Entry("onnx-mnist-8 (real)", REAL / "onnx-mnist-8" / "model.onnx",
              REAL / "onnx-mnist-8" / "test.npy", REAL / "onnx-mnist-8" / "test.npy",
              "cnn", "mnist (3 examples)", frontend="onnx"),
        Entry("onnx-sine (real)", REAL / "onnx-sine" / "model.onnx",
              REAL / "onnx-sine" / "test.npy", REAL / "onnx-sine" / "test.npy",
              "mlp", "sine regression", dims={"N": 1}, regression=True, frontend="onnx"),
    ]
    return entries


CONFIGS: tuple[Options, ...] = (
    Options(representation="float32"),
    Options(bits=16),
    Options(bits=8),
    Options(bits=16, scales="maxscale"),
    Options(bits=16, param_bits=8),
)


@dataclass
class Measurement:
    """One model x configuration: accuracy from the evaluator, resources from the targets."""

    model: str
    config: str
    accuracy: float | None
    disagreement: float | None
    max_error: float | None  # regression models: max |fixed - float| on the test inputs
    compile_seconds: float
    targets: dict[str, dict] = field(default_factory=dict)  # target -> record


def _max_error(result: Compiled) -> float:
    from minun_mlir.numerics.float_eval import evaluate
    from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2

    x = result.test.features
    f = evaluate(result.l1, x).outputs[0]
    q = decode_outputs(result.l2, evaluate_l2(result.l2, x).outputs)[0]
    return float(np.max(np.abs(f.reshape(len(x), -1) - q.reshape(len(x), -1))))


def measure(entry: Entry, options: Options, run_targets: Callable[..., dict] | None,
            work: Path) -> tuple[Measurement, float | None]:
    t0 = time.perf_counter()
    result = compile_model(entry.model, options, weights=entry.weights, train=entry.train,
                           test=entry.test, name=entry.name, dims=entry.dims)
    seconds = time.perf_counter() - t0
    m = Measurement(entry.name, options.label,
                    None if entry.regression else result.accuracy,
                    None if entry.regression else result.disagreement,
                    _max_error(result) if entry.regression else None, seconds)
    if run_targets is not None:
        m.targets = run_targets(entry, options, result, work)
    return m, None if entry.regression else result.float_accuracy


# --------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------

ANCHORS = """\
| source | figure | paper | here |
|---|---|---|---|
| SeeDot (Uno, 16-bit) | speedup over float, Bonsai / ProtoNN | 3.1x / 2.9x | {seedot_speedup} |
| SeeDot (Uno, 16-bit) | accuracy loss, Bonsai / ProtoNN | 0.35 / 1.86 points | {seedot_loss} |
| Shiftry (Uno, 8/16 mixed) | speedup over float, ProtoNN / Bonsai | 3.5x / 3.4x | {mixed_speedup} |
| Shiftry | mean accuracy drop, ProtoNN / Bonsai | 0.7 / 0.8 points | {mixed_loss} |
| Shiftry | FastGRNN on the Uno | first time | {fastgrnn_uno} |
| MinUn | RAM below float32 at <0.2% drop | 2.9x - 5.1x | {ram_ratio} |
"""


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def points(drop: float | None) -> str:
    return "n/a" if drop is None else f"{100 * drop:+.2f}"


def geomean(values: Iterable[float]) -> float | None:
    vals = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def time_bucket(seconds: float) -> str:
    for limit in (1, 10, 60):
        if seconds < limit:
            return f"< {limit} s"
    return ">= 60 s"


def render(measurements: list[Measurement], float_acc: dict[str, float | None]) -> str:
    by = {(m.model, m.config): m for m in measurements}
    models = list(dict.fromkeys(m.model for m in measurements))
    configs = list(dict.fromkeys(m.config for m in measurements))
    fixed = [c for c in configs if c != "float32"]
    out = ["# Benchmarks", "",
           "Generated by `make bench` (`tools/bench.py`); do not edit. Accuracy on each model's "
           "test split with the bit-exact evaluator (which the C matches exactly, see "
           "test/python/codegen); drop = float32 minus fixed, in points; disagreement = "
           "share of test inputs labelled differently from float32.", ""]
    out += ["## Accuracy", "",
            "| model | float32 | " + " | ".join(f"{c} (drop)" for c in fixed) + " |",
            "|---|---|" + "---|" * len(fixed)]
    for name in models:
        fa = float_acc.get(name)
        cells = []
        for c in fixed:
            m = by.get((name, c))
            if m is None:
                cells.append("n/a")
            elif m.max_error is not None:
                cells.append(f"max err {m.max_error:.4f}")
            else:
                drop = None if fa is None or m.accuracy is None else fa - m.accuracy
                cells.append(f"{pct(m.accuracy)} ({points(drop)})")
        out.append(f"| {name} | {pct(fa)} | " + " | ".join(cells) + " |")
    out += ["", "## Disagreement with float32 (% of test inputs)", "",
            "| model | " + " | ".join(fixed) + " |", "|---|" + "---|" * len(fixed)]
    for name in models:
        out.append(f"| {name} | " + " | ".join(
            pct(by[(name, c)].disagreement) if (name, c) in by else "n/a" for c in fixed) + " |")
    out += ["", "## Compile time (wall clock, 2-core machine; buckets keep this file "
            "deterministic, exact figures in benchmarks/timings.json)", "",
            "| model | " + " | ".join(configs) + " |", "|---|" + "---|" * len(configs)]
    for name in models:
        out.append(f"| {name} | " + " | ".join(
            time_bucket(by[(name, c)].compile_seconds) if (name, c) in by else "n/a"
            for c in configs) + " |")
    return "\n".join(out) + "\n"
