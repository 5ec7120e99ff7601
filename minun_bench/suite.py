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
    Options(repr="float32"),
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
    error = float(np.max(np.abs(f.reshape(len(x), -1) - q.reshape(len(x), -1))))
    # 8 digits: the float reference's last bits depend on the BLAS kernel and its threads,
    # and the report must be byte-identical from run to run
    return float(f"{error:.8g}")


def compile_entry(entry: Entry, options: Options) -> Compiled:
    return compile_model(entry.model, options, weights=entry.weights, train=entry.train,
                         test=entry.test, name=entry.name, dims=entry.dims,
                         regression=entry.regression)


def measure(entry: Entry, options: Options, run_targets: Callable[..., dict] | None,
            work: Path, compiled: Compiled | None = None) -> tuple[Measurement, float | None]:
    """The figures of one model x configuration; `compiled` is compile_entry's result when
    the caller already has it (the test sharing one compile between two checks)."""
    t0 = time.perf_counter()
    result = compiled if compiled is not None else compile_entry(entry, options)
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


def render(measurements: list[Measurement], float_acc: dict[str, float | None],
           kernels: list[dict] | None = None) -> str:
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
    out += render_targets(measurements, models, configs)
    out += render_opt(measurements, models)
    out += render_kernels(kernels or [])
    out += render_summary(measurements, float_acc, models, fixed)
    out += ["", "## Compile time (wall clock, 2-core machine; buckets keep this file "
            "deterministic, exact figures in benchmarks/timings.json)", "",
            "| model | " + " | ".join(configs) + " |", "|---|" + "---|" * len(configs)]
    for name in models:
        out.append(f"| {name} | " + " | ".join(
            time_bucket(by[(name, c)].compile_seconds) if (name, c) in by else "n/a"
            for c in configs) + " |")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------
# Targets: build the generated C and run it in the simulators
# --------------------------------------------------------------------------------------

TARGETS = ("avr", "cortex-m0plus", "cortex-m3", "cortex-m4")
N_INPUTS = 10  # test inputs simulated per model and configuration (latency: the median)


def ram_figures(l2) -> tuple[int, int]:
    """(planned scratch bytes, lower bound): the greedy plan's peak, and the largest sum of
    buffers live at one program point (no plan can do better)."""
    from minun_mlir.modules import main_function
    from minun_mlir.passes.memory_plan import buffers_of
    from minun_mlir.pipeline import lower_l2, run_pipeline

    l3 = lower_l2(l2, stop="lower-to-loops")
    fn = main_function(l3)
    buffers = [b for _, b in buffers_of(fn)]
    bound = max((sum(b.size for b in buffers if b.first <= p <= b.last)
                 for p in {b.first for b in buffers}), default=0)
    run_pipeline(l3, "memory-plan")
    return fn.attributes["minun.scratch_bytes"].value.data, bound


def run_targets(entry: Entry, options: Options, result: Compiled, work: Path) -> dict:
    from minun_mlir.codegen import emit_c, profile_for
    from minun_mlir.numerics.l2_eval import storage_inputs
    from minun_mlir.targets import TargetError, run_model

    n = min(N_INPUTS, len(result.test))
    inputs = storage_inputs(result.l2, result.test.features[:n])
    expected = result.predictions[:n]
    scratch, bound = ram_figures(result.l2)
    records: dict = {"scratch_bytes": scratch, "ram_lower_bound": bound}
    slug = "".join(c if c.isalnum() else "-" for c in f"{entry.name}-{options.label}")
    for target in TARGETS:
        c_dir = work / slug / profile_for(target)
        if not c_dir.exists():
            emit_c(result.l2, target, c_dir)
        try:
            run = run_model(c_dir, target, inputs, name=entry.name, config=options.label,
                            work_dir=work / slug / f"build-{target}")
        except TargetError as e:
            records[target] = {"error": " ".join(str(e).split())[:300]}
            continue
        agree = None if entry.regression else float(np.mean(run.labels == expected))
        records[target] = {
            "flash_bytes": run.flash_bytes, "ram_bytes": run.ram_bytes,
            "stack_bytes": run.stack_bytes, "latency_unit": run.latency_unit,
            "latency_median": run.latency_median, "agreement": agree, "inputs": n,
        }
    if options.label == OPT_CONFIG:
        for target in OPT_TARGETS:  # the same C compiled for speed (-O2)
            c_dir = work / slug / profile_for(target)
            try:
                run = run_model(c_dir, target, inputs, name=entry.name, config=options.label,
                                work_dir=work / slug / f"build-{target}-speed", opt="speed")
            except TargetError as e:
                records[f"{target} speed"] = {"error": " ".join(str(e).split())[:300]}
                continue
            records[f"{target} speed"] = {
                "flash_bytes": run.flash_bytes, "latency_median": run.latency_median,
                "agreement": None if entry.regression
                else float(np.mean(run.labels == expected))}
    return records


OPT_CONFIG = "fixed16"
OPT_TARGETS = ("avr", "cortex-m4")


def render_opt(measurements: list[Measurement], models) -> list[str]:
    """fixed16 compiled for size (-Os, every other table) and for speed (-O2)."""
    by = {(m.model, m.config): m for m in measurements}
    rows = [(name, by[(name, OPT_CONFIG)].targets) for name in models
            if (name, OPT_CONFIG) in by and by[(name, OPT_CONFIG)].targets]
    if not rows:
        return []
    out = ["", f"## Size or speed ({OPT_CONFIG}: `--opt size`, -Os, as in the tables above, "
           "or `--opt speed`, -O2)", "",
           "Flash bytes / latency (AVR cycles, M4 instructions); speed / size = latency at "
           "-O2 over latency at -Os.", "",
           "| model | AVR -Os | AVR -O2 | speed / size | M4 -Os | M4 -O2 | speed / size |",
           "|---|---|---|---|---|---|---|"]
    ratios: dict[str, list[float]] = {t: [] for t in OPT_TARGETS}
    for name, rec in rows:
        cells = []
        for t in OPT_TARGETS:
            size, speed = rec.get(t, {}), rec.get(f"{t} speed", {})
            for r in (size, speed):
                cells.append(_cell_error(r) if "error" in r else
                             f"{_num(r.get('flash_bytes'))} / {_num(r.get('latency_median'))}")
            a, b = size.get("latency_median"), speed.get("latency_median")
            if a and b:
                ratios[t].append(b / a)
            cells.append(_num(b / a if a and b else None, "{:.2f}"))
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    out += ["", "Geometric mean of speed / size: " + ", ".join(
        f"{t} {_num(geomean(ratios[t]), '{:.2f}')}" for t in OPT_TARGETS) + "."]
    return out


# --------------------------------------------------------------------------------------
# Kernels: generated C against hand-written loops (benchmarks/kernels/)
# --------------------------------------------------------------------------------------

KERNELS_DIR = ROOT / "benchmarks" / "kernels"
KERNEL_TARGETS = ("avr", "cortex-m4")
HAND_ASM = {"avr": "avr_dot16.S", "cortex-m4": "m4_dot16.S"}


@dataclass(frozen=True)
class Kernel:
    name: str
    program: str  # a .sd file in benchmarks/kernels/
    number: int  # KERNEL of hand_kernels.c
    macs: int


KERNELS = (
    Kernel("dense 32x64 matrix x vector", "dense.sd", 1, 32 * 64),
    # taps per output row/column: 2 on the border, 3 inside -> 16 x 16 windows of 4 channels
    Kernel("conv 3x3, 6x6x4 -> 6x6x8, padding 1", "conv3x3.sd", 2, 16 * 16 * 4 * 8),
)


def _kernel_data(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"W": rng.integers(-32768, 32768, (32, 64)), "XD": rng.integers(-32768, 32768, 64),
            "F": rng.integers(-32768, 32768, (3, 3, 4, 8)),
            "XC": rng.integers(-32768, 32768, (6, 6, 4))}


def _hand_expected(kernel: Kernel, d: dict[str, np.ndarray]) -> list[int]:
    """What hand_kernels.c prints: (int16_t)(sum >> 15) of every output, sums exact in
    int64 then wrapped as the C's int32_t."""
    def out(acc: int) -> int:
        acc = (acc + (1 << 31)) % (1 << 32) - (1 << 31)
        return ((acc >> 15) + (1 << 15)) % (1 << 16) - (1 << 15)

    if kernel.number == 1:
        return [out(int(v)) for v in d["W"].astype(np.int64) @ d["XD"].astype(np.int64)]
    xp = np.zeros((8, 8, 4), np.int64)
    xp[1:7, 1:7] = d["XC"]
    f = d["F"].astype(np.int64)
    return [out(int(np.sum(xp[y:y + 3, x:x + 3, :] * f[:, :, :, co])))
            for y in range(6) for x in range(6) for co in range(8)]


def _c_array(ctype: str, name: str, values: np.ndarray, flash: bool) -> str:
    body = ",\n    ".join(", ".join(str(int(v)) for v in values.reshape(-1)[i:i + 16])
                          for i in range(0, values.size, 16))
    const = "const " if flash else ""
    where = " MINUN_FLASH" if flash else ""
    return f"static {const}{ctype} {name}[{values.size}]{where} = {{\n    {body}\n}};\n"


def kernel_benchmark(work: Path) -> list[dict]:
    """Each kernel's cycles (AVR) and instructions (M4): the generated C of its .sd program
    (one minun_predict call, which also rescales the outputs and takes their argmax) and
    the hand-written loop (hand_kernels.c + the target's hand_dot16) on the same shapes,
    whose outputs are checked against numpy."""
    from minun_mlir.codegen import emit_c
    from minun_mlir.frontends.seedot import load_program
    from minun_mlir.pipeline import lower_to_l2
    from minun_mlir.targets import build_and_run, run_model

    d = _kernel_data(np.random.default_rng(2026))
    work.mkdir(parents=True, exist_ok=True)
    (work / "data.h").write_text(
        "/* Kernel benchmark data (minun_bench/suite.py), seeded. */\n"
        + _c_array("int16_t", "W", d["W"], True) + _c_array("int16_t", "XD", d["XD"], False)
        + _c_array("int16_t", "FT", d["F"].transpose(3, 0, 1, 2), True)
        + _c_array("int16_t", "XC", d["XC"], False))
    np.savez(work / "dense.npz", W=d["W"] / 32768.0)
    np.savez(work / "conv3x3.npz", F=d["F"] / 32768.0)
    rows = []
    for k in KERNELS:
        stem = k.program.removesuffix(".sd")
        l2 = lower_to_l2(load_program(KERNELS_DIR / k.program, work / f"{stem}.npz"), bits=16)
        x = (d["XD"] if k.number == 1 else d["XC"]).reshape(1, -1).astype(np.int16)
        row: dict = {"kernel": k.name, "macs": k.macs}
        for target in KERNEL_TARGETS:
            c_dir = work / f"{stem}-{target}"
            emit_c(l2, target, c_dir)
            gen = run_model(c_dir, target, x, name=stem, work_dir=work / f"{stem}-{target}-b")
            hand = build_and_run([KERNELS_DIR / "hand_kernels.c", KERNELS_DIR / HAND_ASM[target]],
                                 target, include_dirs=[work], defines={"KERNEL": str(k.number)},
                                 name=f"hand-{stem}")
            got = [int(v) for v in hand.output.split()]
            if got != _hand_expected(k, d):
                raise RuntimeError(f"hand-written {k.name} on {target}: wrong outputs")
            row[target] = {"generated": gen.latency_median, "hand": hand.latencies[0],
                           "unit": gen.latency_unit}
        rows.append(row)
    return rows


def render_kernels(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    out = ["", "## Kernels: generated C against hand-written loops", "",
           "benchmarks/kernels/: the generated C of each .sd program (fixed16; one "
           "minun_predict call, which also rescales and takes the argmax of the outputs) "
           "against the hand-written loop of hand_kernels.c around hand_dot16 (avr_dot16.S: "
           "lpm/ld with post-increment and the AVR201 multiply-accumulate; m4_dot16.S: two "
           "SMLADs per step) on the same shapes, at -Os. Per MAC = the whole count divided "
           "by the multiply-accumulates.", "",
           "| kernel | MACs | AVR generated cycles (per MAC) | AVR hand (per MAC) | "
           "generated / hand | M4 generated instructions (per MAC) | M4 hand (per MAC) | "
           "generated / hand |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = []
        for t in KERNEL_TARGETS:
            g, h = r[t]["generated"], r[t]["hand"]
            cells += [f"{g:,.0f} ({g / r['macs']:.1f})", f"{h:,.0f} ({h / r['macs']:.1f})",
                      f"{g / h:.2f}x"]
        out.append(f"| {r['kernel']} | {r['macs']:,} | " + " | ".join(cells) + " |")
    return out


def _num(x: float | int | None, fmt: str = "{:,.0f}") -> str:
    return "n/a" if x is None else fmt.format(x)


def _latency(m: Measurement, target: str) -> float | None:
    rec = m.targets.get(target, {})
    return rec.get("latency_median")


def _speedup(by, name: str, config: str, target: str) -> float | None:
    base = by.get((name, "float32"))
    m = by.get((name, config))
    if base is None or m is None:
        return None
    f, q = _latency(base, target), _latency(m, target)
    return None if f is None or q is None or q == 0 else f / q


def _cell_error(rec: dict) -> str:
    """The harness's error as a table cell (the full text is in results.json)."""
    text = rec["error"]
    if "does not fit" in text:
        over = [w for w in ("flash", "RAM") if f"over the {w} budget" in text]
        return f"does not fit ({' and '.join(over) or 'board'})"
    return "build/run failed (see results.json)"


def render_targets(measurements: list[Measurement], models, configs) -> list[str]:
    by = {(m.model, m.config): m for m in measurements}
    if not any(m.targets for m in measurements):
        return ["", "## Targets", "", "not available (run without --no-targets)"]
    out = ["", "## Arduino Uno (ATmega328P, 16 MHz; simavr, exact cycles)", "",
           f"Median over the first {N_INPUTS} test inputs. Static RAM is the linker's "
           ".data + .bss (scratch buffer, harness buffers); scratch = the planned buffer "
           "memory, lower bound = the largest sum of buffers live at one point; speedup = "
           "float32 cycles / these cycles; agreement = labels equal to the evaluator's.", "",
           "| model | config | flash B | static RAM B | scratch B (lower bound) | cycles | ms "
           "| speedup | agreement |", "|---|---|---|---|---|---|---|---|---|"]
    for name in models:
        for c in configs:
            m = by.get((name, c))
            if m is None or not m.targets:
                continue
            rec = m.targets.get("avr", {})
            ram = f"{m.targets['scratch_bytes']:,} ({m.targets['ram_lower_bound']:,})"
            if "error" in rec:
                out.append(f"| {name} | {c} | {_cell_error(rec)} | | {ram} | | | | |")
                continue
            cyc = rec.get("latency_median")
            sp = _speedup(by, name, c, "avr")
            out.append(
                f"| {name} | {c} | {_num(rec.get('flash_bytes'))} | "
                f"{_num(rec.get('ram_bytes'))} | {ram} | {_num(cyc)} | "
                f"{_num(None if cyc is None else cyc / 16e3, '{:.2f}')} | "
                f"{_num(sp, '{:.2f}x')} | {pct(rec.get('agreement'))} |")
    out += ["", "## Cortex-M (QEMU with our TCG plugin: exact instruction counts)", "",
            "Instructions per inference (median); speedup = float32 / this configuration "
            "(soft float on all three: M4 without FPU).", "",
            "| model | config | M0+ | M3 | M4 | speedup M0+ / M3 / M4 |",
            "|---|---|---|---|---|---|"]
    for name in models:
        for c in configs:
            m = by.get((name, c))
            if m is None or not m.targets:
                continue
            cells = []
            for t in TARGETS[1:]:
                rec = m.targets.get(t, {})
                cells.append(_cell_error(rec) if "error" in rec
                             else _num(rec.get("latency_median")))
            sps = " / ".join(_num(_speedup(by, name, c, t), "{:.2f}x") for t in TARGETS[1:])
            out.append(f"| {name} | {c} | " + " | ".join(cells) + f" | {sps} |")
    return out


def render_summary(measurements, float_acc, models, fixed) -> list[str]:
    by = {(m.model, m.config): m for m in measurements}
    out = ["", "## Summary", "",
           "Accuracy drop: mean over the classification models, in points. Speedups and RAM "
           "ratio: geometric means over the models where both float32 and the configuration "
           "ran.", "",
           "| config | mean accuracy drop | speedup AVR | M0+ | M3 | M4 | static RAM float32 / "
           "config (AVR) |", "|---|---|---|---|---|---|---|"]
    for c in fixed:
        drops = [float_acc[n] - by[(n, c)].accuracy for n in models
                 if (n, c) in by and by[(n, c)].accuracy is not None
                 and float_acc.get(n) is not None]
        drop = None if not drops else 100 * sum(drops) / len(drops)
        sps = [geomean(_speedup(by, n, c, t) for n in models) for t in TARGETS]
        ratios = []
        for n in models:
            f, q = by.get((n, "float32")), by.get((n, c))
            if f and q and "ram_bytes" in f.targets.get("avr", {}) and "ram_bytes" in \
                    q.targets.get("avr", {}):
                ratios.append(f.targets["avr"]["ram_bytes"] / q.targets["avr"]["ram_bytes"])
        out.append(f"| {c} | {_num(drop, '{:.2f}')} | " + " | ".join(
            _num(s, "{:.2f}x") for s in sps) + f" | {_num(geomean(ratios), '{:.2f}x')} |")
    out += ["", "## The papers' figures beside ours", "", ANCHORS.format(**anchor_cells(
        by, float_acc, models)).rstrip()]
    return out


def anchor_cells(by, float_acc, models) -> dict[str, str]:
    def family_models(prefix):
        return [n for n in models if n.startswith(prefix) and not n.endswith("-onnx")
                and "(real)" not in n]

    def speed(prefix, config):
        return _num(geomean(_speedup(by, n, config, "avr") for n in family_models(prefix)),
                    "{:.1f}x")

    def loss(prefix, config):
        drops = [float_acc[n] - by[(n, config)].accuracy for n in family_models(prefix)
                 if (n, config) in by and by[(n, config)].accuracy is not None]
        return _num(100 * sum(drops) / len(drops) if drops else None, "{:.2f}")

    seedot = "fixed16-maxscaleauto"
    mixed = "fixed16-params8"
    usps = by.get(("fastgrnn-lr-usps (real)", "fixed16"))
    uno = "n/a"
    if usps is not None and "latency_median" in usps.targets.get("avr", {}):
        rec = usps.targets["avr"]
        uno = (f"USPS FastGRNN: {rec['ram_bytes']:,} B RAM, "
               f"{rec['latency_median'] / 16e3:.0f} ms, labels as evaluator "
               f"{pct(rec['agreement'])}%")
    ratios = []
    for n in models:
        f, q = by.get((n, "float32")), by.get((n, "fixed16"))
        if f and q and "ram_bytes" in f.targets.get("avr", {}) and "ram_bytes" in \
                q.targets.get("avr", {}):
            ratios.append(f.targets["avr"]["ram_bytes"] / q.targets["avr"]["ram_bytes"])
    return {
        "seedot_speedup": f"{speed('bonsai', seedot)} / {speed('protonn', seedot)} "
                          "(tuned maxscale)",
        "seedot_loss": f"{loss('bonsai', seedot)} / {loss('protonn', seedot)} points",
        "mixed_speedup": f"{speed('protonn', mixed)} / {speed('bonsai', mixed)} "
                         "(8-bit parameters)",
        "mixed_loss": f"{loss('protonn', mixed)} / {loss('bonsai', mixed)} points",
        "fastgrnn_uno": uno,
        "ram_ratio": f"{_num(geomean(ratios), '{:.1f}x')} (fixed16 vs float32, static RAM)",
    }


def evaluator_speed(n: int = 10_000) -> dict[str, float]:
    """Seconds to evaluate FastGRNN (digits10) on n random inputs: float and 16-bit."""
    from minun_mlir.data import input_shape
    from minun_mlir.frontends.seedot import load_program
    from minun_mlir.numerics.float_eval import evaluate
    from minun_mlir.numerics.l2_eval import evaluate_l2
    from minun_mlir.pipeline import lower_to_l2

    folder = MODELS / "fastgrnn-digits10"
    module = load_program(folder / "model.sd", folder)
    x = np.random.default_rng(0).uniform(0, 1, size=(n, *input_shape(module)))
    t0 = time.perf_counter()
    evaluate(module, x)
    t1 = time.perf_counter()
    l2 = lower_to_l2(module, bits=16, data=str(folder / "train.npy"))
    t2 = time.perf_counter()
    evaluate_l2(l2, x)
    t3 = time.perf_counter()
    return {f"fastgrnn-digits10 float evaluator, {n} inputs": t1 - t0,
            f"fastgrnn-digits10 fixed16 evaluator, {n} inputs": t3 - t2}
