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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # minun_bench: not installed
from minun_bench import cmsis as bench_cmsis  # noqa: E402
from minun_bench import face as bench_face  # noqa: E402
from minun_bench import face_ap as bench_face_ap  # noqa: E402
from minun_bench import face_search as bench_face_search  # noqa: E402
from minun_bench import int4 as bench_int4  # noqa: E402
from minun_bench import ort as bench_ort  # noqa: E402
from minun_bench import posit as bench_posit  # noqa: E402
from minun_bench import profile as bench_profile  # noqa: E402
from minun_bench import suite as bench  # noqa: E402
from minun_bench import tflm_speech as bench_tflm  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="*", help="only these suite entries (names)")
    p.add_argument("--no-targets", action="store_true", help="accuracy only, no C runs")
    p.add_argument("--out", default=str(bench.ROOT / "BENCHMARKS.md"))
    p.add_argument("--results", default=str(bench.ROOT / "benchmarks" / "results.json"))
    p.add_argument("--timings", default=str(bench.ROOT / "benchmarks" / "timings.json"))
    p.add_argument("--face", action="store_true",
                   help="only the face-detection section (RNNPool face-4, native vs numpy "
                   "evaluator): rewrites that section of --out and benchmarks/face.json")
    p.add_argument("--face-search", action="store_true",
                   help="only the face-detection search section (MinUn's Haunter on face-4 "
                   "under a 180,000 B budget, posits and fixed point, the chosen programs "
                   "run in QEMU): rewrites that section of --out and "
                   "benchmarks/face_search.json")
    p.add_argument("--face-ap", action="store_true",
                   help="only the face-detection quality section (the trained face-4's AP "
                   "and mAP on generated head scenes: float, fixed16, fixed8, posit16 and "
                   "Haunter's programs under 180,000 and 96,000 B): rewrites that section "
                   "of --out and benchmarks/face_ap.json")
    p.add_argument("--posit", action="store_true",
                   help="only the posit section (accuracy at posit16/posit8 beside fixed "
                   "point, a few models on the Uno and M4, the runtime's cost per call): "
                   "rewrites that section of --out and benchmarks/posit.json")
    p.add_argument("--reuse", default="", metavar="PARTS",
                   help="with --face: take these parts (comma-separated: face-4, evaluators, "
                   "onnx, search, suite_search) from benchmarks/face.json instead of "
                   "measuring them again (to re-run one part; `make bench` measures all); "
                   "with --face-ap: programs (float ... posit16) or searched")
    p.add_argument("--ort", action="store_true",
                   help="only the onnxruntime int8 section (ORT's static int8 quantization "
                   "beside fixed8, fixed8 per-channel and fixed16 on the ONNX models; the "
                   "cost of per-channel scales on the Uno and M4): rewrites that section of "
                   "--out and benchmarks/ort.json")
    p.add_argument("--profile", action="store_true",
                   help="only the per-layer profile section (a ProtoNN, a LeNet and mnist-8 "
                   "at fixed16 on the Uno and the M4): rewrites that section of --out, "
                   "benchmarks/profile/*.png and benchmarks/profile.json")
    p.add_argument("--cmsis", action="store_true",
                   help="only the CMSIS-NN section (Arm's CMSIS-NN s8/s16 kernels beside minun's "
                   "fixed16, fixed8 and zero-skew8 on mnist-8, the zoo's dscnn and the kernel "
                   "shapes, M4 "
                   "instructions at -Os and -O2, model flash): rewrites that section of "
                   "--out, benchmarks/cmsis.png and benchmarks/cmsis.json")
    p.add_argument("--int4", action="store_true",
                   help="only the 4-bit weights section (LeNet, FastGRNN, ProtoNN with 8-bit "
                   "and packed 4-bit weights: flash, Uno cycles, M4 instructions, accuracy): "
                   "rewrites that section of --out and benchmarks/int4.json")
    p.add_argument("--tflm", action="store_true",
                   help="only the TFLM micro_speech section (TFLM's keyword model on its four "
                   "clips' features: minun's RAM, flash and M4 instructions beside TFLM's "
                   "arena, the outputs checked against TFLM's interpreter): rewrites that "
                   "section of --out and benchmarks/tflm.json")
    args = p.parse_args(argv)
    for flag, module in (("int4", bench_int4), ("cmsis", bench_cmsis),
                         ("profile", bench_profile), ("tflm", bench_tflm)):
        if getattr(args, flag):
            return measured_section(args, module, flag)
    if args.ort:
        return ort(args)
    if args.face:
        return face(args)
    if args.face_search:
        return face_search(args)
    if args.face_ap:
        return face_ap(args)
    if args.posit:
        return posit(args)
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
    out = Path(args.out)
    old = out.read_text() if out.exists() else None
    out.write_text(bench_face.keep_section(old, bench.render(measurements, float_acc, kernels)))
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


def face(args) -> int:
    """The face-detection section: compile + QEMU run + 405-image profile, and the
    evaluators side by side (a few minutes)."""
    stored_path = Path(args.results).with_name("face.json")
    reuse = {k for k in args.reuse.split(",") if k}
    stored = json.loads(stored_path.read_text()) if reuse else {}
    unknown = reuse - {"face-4", "evaluators", "onnx", "search", "suite_search"}
    if unknown or not reuse <= set(stored):
        print(f"bench: --reuse: no such part in {stored_path}: "
              f"{', '.join(sorted(unknown or reuse - set(stored)))}", file=sys.stderr)
        return 2

    def part(name, measure):
        if name in reuse:
            print(f"{name}: reused from {stored_path.name}", flush=True)
            return stored[name]
        value = measure()
        print(json.dumps(value, indent=1), flush=True)
        return value

    # the evaluators side by side first: a microbenchmark of a few milliseconds on two
    # threads, measured before the long runs below leave the process and the cores busy
    speed = part("evaluators", bench_face.evaluator_speed)
    with tempfile.TemporaryDirectory(prefix="minun-face-") as tmp:
        print("face-4: profile 32 images, quantize, plan, C for cortex-m4, QEMU on 2 images,"
              " then profile 405 images ...", flush=True)
        record = part("face-4", lambda: bench_face.face_detection(Path(tmp)))
        print("light ONNX models: profile 8 images, compile at fixed16 ...", flush=True)
        onnx_models = part("onnx", lambda: bench_face.large_onnx(Path(tmp)))
    search = part("search", bench_face.precision_search)
    print("precision search on every suite classifier (1.25x fixed8 RAM) ...", flush=True)
    with tempfile.TemporaryDirectory(prefix="minun-suite-search-") as tmp:
        suite_search = part("suite_search", lambda: bench_face.suite_search(Path(tmp)))
    out = Path(args.out)
    out.write_text(bench_face.replace_section(
        out.read_text(), bench_face.render(record, speed, onnx_models, search, suite_search)))
    Path(args.results).with_name("face.json").write_text(json.dumps(
        {"face-4": record, "evaluators": speed, "onnx": onnx_models, "search": search,
         "suite_search": suite_search},
        indent=1,
        sort_keys=True) + "\n")
    return 0


def face_search(args) -> int:
    with tempfile.TemporaryDirectory(prefix="minun-face-search-") as tmp:
        record = bench_face_search.face_search(Path(tmp))
    out = Path(args.out)
    out.write_text(bench_face.replace_section(out.read_text(),
                                              bench_face_search.render(record),
                                              bench_face_search.SECTION))
    Path(args.results).with_name("face_search.json").write_text(
        json.dumps(record, indent=1, sort_keys=True) + "\n")
    return 0


def face_ap(args) -> int:
    stored_path = Path(args.results).with_name("face_ap.json")
    reuse = {p for p in args.reuse.split(",") if p}
    if unknown := reuse - {"programs", "searched"}:
        print(f"tools/bench.py: error: --face-ap --reuse takes programs, searched; got "
              f"{', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    stored = json.loads(stored_path.read_text()) if reuse else {}
    with tempfile.TemporaryDirectory(prefix="minun-face-ap-") as tmp:
        if "programs" in reuse:
            record = {k: v for k, v in stored.items() if k != "searched"}
        else:
            record = bench_face_ap.face_ap(Path(tmp))
        # with --reuse searched, the stored rows are kept and only missing ones measured
        kept = ({bench_face_ap.search_key(r): r for r in stored["searched"]}
                if "searched" in reuse else {})
        record["searched"] = []
        for budget, rep, streamed in bench_face_ap.SEARCHES:
            row = kept.get((budget, rep, streamed))
            if row is None:
                row = bench_face_ap.searched(Path(tmp), budget, rep, stream_rows=streamed)
                print(f"  {bench_face_ap.searched_name(row)}: {row}", flush=True)
            record["searched"].append(row)
    info_path = bench_face_ap.WEIGHTS.parent / "info.json"
    info = json.loads(info_path.read_text()) if info_path.exists() else None
    out = Path(args.out)
    out.write_text(bench_face.replace_section(out.read_text(),
                                              bench_face_ap.render(record, info),
                                              bench_face_ap.SECTION))
    stored_path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return 0


def posit(args) -> int:
    with tempfile.TemporaryDirectory(prefix="minun-posit-") as tmp:
        rows = bench_posit.accuracy(Path(tmp), args.models)
        costs = bench_posit.op_costs(Path(tmp))
        flash = bench_posit.op_flash(Path(tmp))
    print(json.dumps(costs, indent=1), json.dumps(flash, indent=1), flush=True)
    out = Path(args.out)
    section = bench_posit.render(rows, costs, flash)
    if args.models:  # a partial run: print, leave the report alone
        print(section)
        return 0
    out.write_text(bench_face.replace_section(out.read_text(), section, bench_posit.SECTION))
    Path(args.results).with_name("posit.json").write_text(json.dumps(
        {"models": rows, "op_costs": costs, "op_flash": flash}, indent=1,
        sort_keys=True) + "\n")
    return 0


def ort(args) -> int:
    with tempfile.TemporaryDirectory(prefix="minun-ort-") as tmp:
        names = args.models or None
        rows = bench_ort.run(Path(tmp), names)
        cost_rows = [] if args.no_targets else bench_ort.costs(Path(tmp))
        accuracy_rows = [] if names else bench_ort.suite_accuracy(Path(tmp))
        recurrent_rows = bench_ort.recurrent(rows, Path(tmp))
    section = bench_ort.render(rows, cost_rows, accuracy_rows, recurrent_rows)
    if names:  # a partial run: print, leave the report alone
        print(section)
        return 0
    out = Path(args.out)
    out.write_text(bench_face.replace_section(out.read_text(), section, bench_ort.SECTION))
    (out.parent / bench_ort.PLOT).write_bytes(bench_ort.plot(rows))
    Path(args.results).with_name("ort.json").write_text(json.dumps(
        {"models": rows, "costs": cost_rows, "suite_accuracy": accuracy_rows,
         "recurrent": recurrent_rows}, indent=1,
        sort_keys=True) + "\n")
    return 0


def measured_section(args, bench_module, name: str) -> int:
    """Measure one trailing section (`bench_module.measure` in a temporary folder) and
    write it into --out (the other sections stay), its chart if it has one (PLOT), and
    its record as benchmarks/<name>.json. A measurement that finds a wrong result (a C
    that does not compute what its reference does) is one line and exit 1."""
    with tempfile.TemporaryDirectory(prefix=f"minun-{name}-") as tmp:
        try:
            record = bench_module.measure(Path(tmp))
        except RuntimeError as e:
            print(f"bench: error: {e}", file=sys.stderr)
            return 1
    out = Path(args.out)
    out.write_text(bench_face.replace_section(out.read_text(), bench_module.render(record),
                                              bench_module.SECTION))
    if hasattr(bench_module, "PLOT"):
        (out.parent / bench_module.PLOT).write_bytes(bench_module.plot(record))
    Path(args.results).with_name(f"{name}.json").write_text(
        json.dumps(record, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
