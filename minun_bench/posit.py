"""The posit section of BENCHMARKS.md (`tools/bench.py --posit`; MinUn's number
representations, issue 13): every suite model's accuracy at posit<16, 2>, posit<8, 2>,
bfloat16 and zero-skew int8 beside float32, fixed16 and fixed8 (the bit-exact evaluator on
the whole test split, as the suite's tables); flash, RAM and latency of the generated C on
the Uno (simavr, exact cycles) and the Cortex-M4 (QEMU, exact instructions) for a few
models at fixed16, posit16, posit8, bfloat16 and zero-skew8; and what one call of the posit
runtime costs on each board.

A separate run and section (like the face section) because posit arithmetic is software:
simulating every model at two more configurations would multiply `make bench`'s time. The
section is deterministic; `make bench` carries it over (bench_face.keep_section).
"""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np

from minun_bench.suite import Entry, _num, measure, pct, points, suite
from minun_mlir.driver import Options

SECTION = "## Posits"
CONFIGS: tuple[Options, ...] = (
    Options(repr="float32"),
    Options(bits=16),
    Options(bits=8),
    Options(repr="posit", bits=16, es=2),
    Options(repr="posit", bits=8, es=2),
    Options(repr="posit", bits=8, es=1),  # accuracy only: why posit8 has es 2
    Options(repr="posit", bits=8, es=0),
    Options(repr="bfloat16"),
    Options(repr="zero-skew", bits=8),
)
# models run on the boards: one per family, small enough for the Uno's 2 KB and for a
# simulation of software posits in seconds
TARGET_MODELS = ("protonn-breast-cancer", "bonsai-wine", "fastgrnn-lr-digits-binary",
                 "lenet-digits-binary")
TARGET_CONFIGS = ("fixed16", "posit16", "posit8", "bfloat16", "zero-skew8")
TARGETS = ("avr", "cortex-m4")
N_INPUTS = 4
OPS = ("add", "mul", "exp", "sigmoid", "tanh", "quire fma")
KERNEL = Path(__file__).resolve().parent.parent / "benchmarks" / "kernels" / "posit_ops.c"
RUNTIME = Path(__file__).resolve().parent.parent / "third_party" / "softposit"


def entries(names: list[str] | None = None) -> list[Entry]:
    """The suite's SeeDot models (the posit representation has no normalise_l2, which
    only the face model uses; the ONNX exports compute the same programs)."""
    return [e for e in suite() if e.frontend == "seedot" and not e.regression
            and "(real)" not in e.name and (not names or e.name in names)]


def accuracy(work: Path, names: list[str] | None = None, log=print) -> list[dict]:
    rows = []
    for entry in entries(names):
        row: dict = {"model": entry.name}
        for options in CONFIGS:
            runner = _targets if entry.name in TARGET_MODELS and \
                options.label in TARGET_CONFIGS else None
            m, fa = measure(entry, options, runner, work)
            row["float32"] = fa
            row[m.config] = m.accuracy
            if m.targets:
                row.setdefault("targets", {})[m.config] = m.targets
            log(f"{entry.name:28} {m.config:10} acc {pct(m.accuracy):>6}")
        rows.append(row)
    return rows


def _targets(entry: Entry, options: Options, result, work: Path) -> dict:
    from minun_mlir.codegen import emit_c
    from minun_mlir.numerics.l2_eval import storage_inputs
    from minun_mlir.targets import TargetError, run_model

    n = min(N_INPUTS, len(result.test))
    inputs = storage_inputs(result.l2, result.test.features[:n])
    records = {}
    for target in TARGETS:
        c_dir = work / f"{entry.name}-{options.label}-{target}"
        emit_c(result.l2, target, c_dir)
        try:
            run = run_model(c_dir, target, inputs, name=entry.name, config=options.label,
                            work_dir=c_dir / "build")
        except TargetError as e:
            records[target] = {"error": " ".join(str(e).split())[:200]}
            continue
        records[target] = {
            "flash_bytes": run.flash_bytes, "ram_bytes": run.ram_bytes,
            "latency_median": run.latency_median, "latency_unit": run.latency_unit,
            "agreement": float(np.mean(run.labels == result.predictions[:n]))}
    return records


def op_costs(work: Path) -> dict:
    """{format: {target: {op: median latency}}} of benchmarks/kernels/posit_ops.c."""
    from minun_mlir.targets import build_and_run

    out: dict = {}
    for n, es in ((16, 2), (8, 2)):
        fmt = f"posit<{n}, {es}>"
        for target in TARGETS:
            r = build_and_run([RUNTIME / "posit.c", KERNEL], target, include_dirs=[RUNTIME],
                              defines={"POSIT_N": str(n), "POSIT_ES": str(es)},
                              work_dir=work / f"ops-{n}-{es}-{target}", name="posit_ops")
            per_op = [r.latencies[i::len(OPS)] for i in range(len(OPS))]
            out.setdefault(fmt, {})[target] = {
                "unit": r.latency_unit, "flash_bytes": r.flash_bytes,
                **{op: statistics.median(v) for op, v in zip(OPS, per_op)}}
    return out


FLASH_TARGETS = ("avr", "cortex-m0plus")


def linked_flash(target: str, n: int, es: int, only_op: int | None, work: Path) -> int:
    """Flash of posit_ops.c linked with the runtime for `target` (ONLY_OP = `only_op`, or
    every operation for None), as the linker counts it. Built, not run: flash is a
    property of the linked image. The runtime (posit.c: one object whatever the format
    and the operation) is compiled once per target and work folder."""
    from minun_mlir.targets.boards import get_board
    from minun_mlir.targets.build import compile_sources, link_program

    board = get_board(target)
    runtime_dir = work / f"runtime-{target}"
    if not runtime_dir.is_dir():
        runtime_dir.mkdir(parents=True)
        compile_sources(board, [RUNTIME / "posit.c"], runtime_dir, [RUNTIME])
    defines = {"POSIT_N": str(n), "POSIT_ES": str(es)}
    if only_op is not None:
        defines["ONLY_OP"] = str(only_op)
    wd = work / f"flash-{n}-{es}-{target}-{'all' if only_op is None else only_op}"
    wd.mkdir(parents=True, exist_ok=True)
    objects = [*sorted(runtime_dir.glob("*.o")),
               *compile_sources(board, [KERNEL], wd, [RUNTIME], defines)]
    return link_program(board, objects, wd / "posit_ops.elf", "posit_ops").flash_bytes


def op_flash(work: Path) -> dict:
    """{format: {target: {op: bytes}}}: the flash one operation of the runtime brings into
    a program, as the linker counts it (posit_ops.c built with ONLY_OP = that operation,
    minus ONLY_OP = 0), on the Uno and the Cortex-M0+."""
    out: dict = {}
    for n, es in ((16, 2), (8, 2)):
        fmt = f"posit<{n}, {es}>"
        for target in FLASH_TARGETS:
            flash = {op: linked_flash(target, n, es, k, work)
                     for k, op in enumerate(("none", *OPS))}
            out.setdefault(fmt, {})[target] = {op: flash[op] - flash["none"] for op in OPS}
    return out


def render(rows: list[dict], costs: dict, flash: dict | None = None) -> str:
    labels = [o.label for o in CONFIGS if o.label != "float32"]
    out = [SECTION + ", bfloat16 and zero-skew int8", "",
           "Written by `tools/bench.py --posit` (minun_bench/posit.py); `make bench` keeps "
           "it. MinUn's posits as an L2 representation: one posit<n, es> type per program, "
           "every operation rounded once (dot products through the quire), exp, sigmoid and "
           "tanh correctly rounded; the C calls the integer-only runtime in "
           "third_party/softposit (docs/numerics.md). posit16 and posit8 have es = 2, "
           "posit8-es1 and -es0 show why (the mean drops below). bfloat16: float32 arithmetic "
           "rounded to bfloat16 after each operation. zero-skew8: TFLite's affine int8 (a "
           "scale and zero point per tensor from the profile, int8 weights with zero point "
           "0, int32 accumulators requantized by gemmlowp's fixed-point multipliers, "
           "256-entry tables for exp, sigmoid and tanh). Accuracy with the "
           "bit-exact evaluator on the whole test split; in parentheses the drop from float32 "
           "in points.", "",
           "| model | float32 | " + " | ".join(labels) + " |",
           "|---|---|" + "---|" * len(labels)]
    drops: dict[str, list[float]] = {c: [] for c in labels}
    for row in rows:
        fa = row["float32"]
        cells = []
        for c in labels:
            acc = row.get(c)
            drop = None if acc is None or fa is None else fa - acc
            if drop is not None:
                drops[c].append(drop)
            cells.append(f"{pct(acc)} ({points(drop)})")
        out.append(f"| {row['model']} | {pct(fa)} | " + " | ".join(cells) + " |")
    out += ["", "Mean drop from float32 (points): " + ", ".join(
        f"{c} {100 * statistics.mean(v):.2f}" for c, v in drops.items() if v) + "."]
    out += ["", f"On the boards ({N_INPUTS} test inputs each, labels equal to the evaluator's "
            "on every one unless noted): flash B / static RAM B / latency (Uno: cycles, "
            "M4: instructions; median).", "",
            "| model | config | Uno flash | Uno RAM | Uno cycles | M4 flash | M4 RAM | "
            "M4 instructions |", "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        for config, records in row.get("targets", {}).items():
            cells = []
            for t in TARGETS:
                r = records.get(t, {})
                if "error" in r:
                    cells += [r["error"][:60], "", ""]
                    continue
                note = "" if r.get("agreement") == 1.0 else f" (agree {pct(r['agreement'])})"
                cells += [_num(r.get("flash_bytes")), _num(r.get("ram_bytes")),
                          _num(r.get("latency_median")) + note]
            out.append(f"| {row['model']} | {config} | " + " | ".join(cells) + " |")
    out += ["", "One call of the runtime (benchmarks/kernels/posit_ops.c, median over 4 operand "
            "pairs; Uno: avr-gcc -Os cycles, M4: instructions; flash: the whole test "
            "program).", "",
            "| format | board | " + " | ".join(OPS) + " | flash B |",
            "|---|---|" + "---|" * (len(OPS) + 1)]
    for fmt, by_target in costs.items():
        for t, rec in by_target.items():
            out.append(f"| {fmt} | {t} | " + " | ".join(_num(rec[op]) for op in OPS)
                       + f" | {_num(rec['flash_bytes'])} |")
    if flash:
        out += ["", "Flash of one operation of the runtime: bytes a program calling only it "
                "takes beyond one calling none (posit_ops.c with ONLY_OP; the linker drops "
                "unused functions, so an operation counts the helpers it needs, which other "
                "operations share).", "",
                "| format | board | " + " | ".join(OPS) + " |",
                "|---|---|" + "---|" * len(OPS)]
        for fmt, by_target in flash.items():
            for t, rec in by_target.items():
                out.append(f"| {fmt} | {t} | " + " | ".join(_num(rec[op]) for op in OPS)
                           + " |")
    return "\n".join(out) + "\n"
