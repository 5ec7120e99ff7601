"""`minun-compile`: a model file to C for one target, with an accuracy report.

    minun-compile examples/fastgrnn.sd --train train.npy --test test.npy \\
        --bits 16 --target avr --out build/fastgrnn [--run]

With `--run` the generated C is built with the target's real toolchain and run in its
simulator (simavr for the Uno, QEMU for Cortex-M) on the test inputs: the report adds the
labels' agreement with the bit-exact evaluator, flash, static RAM, stack and latency.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from minun_mlir.codegen import check_fits_board
from minun_mlir.data import first
from minun_mlir.deploy import FORMATS
from minun_mlir.diagnostics import MinunError, error, warn
from minun_mlir.driver import Options, compile_model
from minun_mlir.numerics import formats
from minun_mlir.outputs import output_lock, remove_written, write_file
from minun_mlir.passes.memory_plan import PLANNERS
from minun_mlir.quantize_options import add_flags, from_args
from minun_mlir.tools.compile_options import (
    GENERATED,
    SOURCE_SUFFIXES,
    input_range,
    search_folder,
    validate,
)
from minun_mlir.tools.errors import run_tool

# Without --train: profile on this many inputs drawn in the declared input range.
SYNTHETIC_INPUTS = 64
TARGETS = ("x86", "avr", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m4f",
           "cortex-m4-mps2")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minun-compile", description=__doc__.splitlines()[0])
    p.add_argument("model", help="a SeeDot program (.sd), an ONNX model (.onnx) or a TFLite "
                   "model (.tflite)")
    p.add_argument("--weights", help="SeeDot: model directory or .npz (default: beside it)")
    p.add_argument("--synthetic-weights", type=int, default=None, metavar="SEED",
                   help="SeeDot: draw every parameter uniformly inside its declared range "
                   "(seeded), to size a model before it is trained")
    p.add_argument("--input-range", metavar="[NAME=]LO,HI", default=None,
                   help="ONNX: the input's value range (default [-1, 1]; as minun-opt "
                   "--input-range); without --train the scales are profiled on inputs "
                   "drawn in it")
    p.add_argument("--regression", action="store_true",
                   help="the model is a regressor (its one output a predicted value, not a "
                   "score): no label (minun_predict returns 0), no accuracy, and --run "
                   "compares the output values; ai.onnx.ml regressors are known as such")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=N",
                   help="ONNX: fix a symbolic input dimension, e.g. --dim N=1")
    p.add_argument("--train", help="training data (SeeDot format: label first) for profiling")
    p.add_argument("--test", help="test data for the accuracy report (and --run)")
    add_flags(p)  # the quantize options (minun_mlir/quantize_options.py)
    p.add_argument("--search", choices=("shiftry", "haunter"), default=None,
                   help="search per-tensor bitwidths on --train first, then compile the "
                        "chosen assignment: shiftry (demotion from --bits: the fewest 8-bit "
                        "tensors that fit --ram-budget, or the most within --max-drop) or "
                        "haunter (MinUn: promotion from 8 bits within --ram-budget)")
    p.add_argument("--explore-input-scale", action="store_true",
                   help="with --search shiftry: first choose the input's scale by accuracy "
                        "among 0..bits (Shiftry's stage II)")
    p.add_argument("--soft-limit", type=float, default=None, metavar="F",
                   help="with --search haunter: explore up to F x --ram-budget (MinUn's "
                        "soft limit factor; default 1)")
    p.add_argument("--max-drop", type=float, default=None, metavar="POINTS",
                   help="with --search: the accuracy (percentage points, vs float, on "
                        "--train) the demotions may lose")
    p.add_argument("--jobs", type=int, default=0, metavar="N",
                   help="with --search: candidate programs evaluated in N processes "
                        "(default: one per core; 1: in this process)")
    p.add_argument("--ray", metavar="ADDRESS", default=None,
                   help="with --search: evaluate the candidates as Ray tasks: 'auto' (the "
                        "running Ray cluster), a cluster address, or 'local' (start Ray "
                        "here); needs the ray extra")
    p.add_argument("--search-report", metavar="DIR",
                   help="with --search: write the report (search.md, search.json, "
                        "search.png, assignment.json) here (default: OUT/search, or "
                        "build/MODEL-search)")
    p.add_argument("--target", default="x86", choices=TARGETS)
    p.add_argument("--planner", default="greedy", choices=PLANNERS,
                   help="memory planner: naive (one array per buffer), greedy (first fit, "
                        "default), shiftry (Shiftry's blocks, moves under --ram-budget), "
                        "optimal (the fewest bytes: an exact search)")
    p.add_argument("--input-in-scratch", action="store_true",
                   help="plan the input as a buffer of the scratch memory, reused once it "
                        "is dead: model.h gets minun_input_buffer() and "
                        "minun_predict_in_place(out), and the RAM figures count the input")
    p.add_argument("--stream-rows", action="store_true",
                   help="run chains of row-local ops (convolutions, element-wise ops, "
                        "normaliseL2, a loop producing a feature map row by row) as loops "
                        "over rows with line buffers (the stream-rows pass): the same "
                        "integers in less RAM")
    p.add_argument("--output-in-scratch", action="store_true",
                   help="plan the output as a buffer of the scratch memory, shared with "
                        "buffers dead before it is written: model.h gets "
                        "minun_output_buffer(), read after minun_predict_in_place, and the "
                        "RAM figures count the output")
    p.add_argument("--ram-budget", type=int, default=0, metavar="BYTES",
                   help="fail (naming the instruction and the live buffers) when the "
                        "buffers need more RAM than this; shiftry moves buffers to fit")
    p.add_argument("--out", help="write model.h / model.c / minun_runtime.h (and the "
                                 "memory map, memory_map.png) here")
    p.add_argument("--format", default="c", choices=FORMATS,
                   help="what --out holds: the plain C folder (c, default), an Arduino "
                   "library with an example sketch and its .zip (arduino; avr and the "
                   "Arduino Cortex-M targets), or the C with a CMakeLists.txt exporting "
                   "the minun_model library (cmake); docs/deploy.md")
    p.add_argument("--run", action="store_true",
                   help="build and simulate the C on --target with the --test inputs")
    p.add_argument("--opt", default=None, choices=("size", "speed"),
                   help="with --run: compile for size (the board's -Os, default) or speed "
                        "(-O2)")
    p.add_argument("--max-inputs", type=int, default=None,
                   help="with --run: simulate at most this many test inputs (default 100)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="with --run: seconds allowed per simulator run (default: 60, more "
                        "for a larger program)")
    p.add_argument("--profile", action="store_true",
                   help="with --run (avr, cortex-m): the cycles or instructions of each layer "
                   "(SeeDot line, ONNX node) and the bytes live during it, as a table in the "
                   "report and OUT/profile.png; the program run is the same C (docs/profile.md)")
    p.add_argument("--json", help="write the report as JSON here")
    p.add_argument("--debug", action="store_true",
                   help="show the Python traceback of an internal error")
    p.add_argument("--print-pipeline", action="store_true",
                   help="print the pass pipeline this compile runs (for minun-opt "
                        "--pass-pipeline) and stop")
    return p


def describe_latency(run_result) -> str:
    median = run_result.latency_median
    unit = run_result.latency_unit
    if unit == "cycles":  # the Uno runs at 16 MHz
        return f"{median:,.0f} cycles = {median / 16e3:.2f} ms at 16 MHz"
    if unit == "ns":
        return f"{median / 1e3:.2f} us wall time on this host"
    return f"{median:,.0f} {unit}"


def compile_into(args: argparse.Namespace, options: Options, dims: dict[str, int]):
    """The compile with --out: on failure the earlier compile's C files are removed, so
    that nothing in the folder looks like the output of this model."""
    try:
        return compile_model(args.model, options, weights=args.weights, train=args.train,
                             test=args.test, out_dir=args.out, dims=dims or None,
                             synthetic_weights=args.synthetic_weights,
                             input_range=input_range(args), regression=args.regression)
    except MinunError as e:
        stale = remove_written(args.out, GENERATED)
        if args.format != "c":  # the package's own files describe the earlier model too
            from minun_mlir.deploy import remove_package

            stale += remove_package(args.format, args.model, args.package)
        note = (f"\n{args.out}: note: removed the earlier compile's {', '.join(stale)}"
                if stale else "")
        raise MinunError(f"{e}{note}") from None


def implied_repr(args: argparse.Namespace) -> str | None:
    """With no --repr (nor --assign): the representation the model's own operators need,
    said in a note (an int8 TFLite LSTM: zero-skew, its file's integers); None: the
    default. Only TFLite files carry such kernels, so no other model is read twice."""
    if args.repr is not None or args.assign or Path(args.model).suffix != ".tflite":
        return args.repr
    from minun_mlir.driver import implied_representation, load_model

    try:
        implied = implied_representation(load_model(args.model))
    except MinunError:
        return None  # the compile itself reports what is wrong with the file
    if implied is None:
        return None
    rep, op = implied
    print(f"{args.model}: note: {op} compiles onto --repr {rep} only: compiling with "
          f"--repr {rep}", file=sys.stderr)
    return rep


def run(args: argparse.Namespace) -> dict:
    args.repr = implied_repr(args)
    dims = validate(args)  # every option checked before any work
    options = Options(
        **from_args(args), target=args.target, planner=args.planner,
        input_in_scratch=args.input_in_scratch, output_in_scratch=args.output_in_scratch,
        budget=args.ram_budget, stream_rows=args.stream_rows,
        synthetic=0 if args.train else SYNTHETIC_INPUTS)
    if args.search is not None:
        options = run_search(args, options, dims)
    if args.print_pipeline:
        print(options.pipeline(args.train))
        return {"pipeline": options.pipeline(args.train)}
    if args.format != "c":  # the C goes into the package's folder for it (deploy.py)
        from minun_mlir.deploy import c_folder

        args.package, args.out = args.out, str(c_folder(args.format, args.out))
    if args.run and args.out is None:  # build in a folder that goes away afterwards
        with tempfile.TemporaryDirectory(prefix="minun-run-") as tmp:
            args.out = tmp
            print("(building in a temporary folder, removed afterwards; --out DIR keeps the "
                  "C and the memory map)")
            report = run_with(args, options, dims, temporary=True)
            args.out = None
            return report
    return run_with(args, options, dims)


def run_with(args: argparse.Namespace, options: Options, dims: dict[str, int],
             temporary: bool = False) -> dict:
    """The compile, the report and (with --run) the simulated run. With `temporary` the
    output folder is removed afterwards: the report names no file in it."""
    if args.out is None:
        try:
            result = compile_model(args.model, options, weights=args.weights,
                                   train=args.train, test=args.test, dims=dims or None,
                                   synthetic_weights=args.synthetic_weights,
                                   input_range=input_range(args),
                                   regression=args.regression)
        except MinunError as e:
            raise located(args.model, e) from None
    else:
        with output_lock(args.out, GENERATED):
            try:
                result = compile_into(args, options, dims)
            except MinunError as e:
                raise located(args.model, e) from None
    if temporary:
        result.memory.pop("map", None)
    print(result.summary(show_c_dir=not temporary))
    if getattr(args, "out_is_default", False):
        from minun_mlir.codegen import memory_estimate

        flash, ram = memory_estimate(result.l4)
        print(f"  wrote {args.package if args.format != 'c' else args.out} (no --out given: "
              f"the default folder, named after the model); the model's arrays take "
              f"{flash:,} B of flash and {ram:,} B of RAM (code and stack come on top)")
    if result.l4 is not None:
        try:
            rep = formats.get(options.representation)  # is there a narrower width to give?
            check_fits_board(result.l4, args.target, options.bits if "bits" in rep.options
                             and min(rep.bitwidths) < options.bits else 8)
        except MinunError as e:
            if args.run:
                raise
            warn(str(e).removeprefix("error: "))
    report: dict = {
        "model": str(args.model), "config": options.label, "target": args.target,
        "float_accuracy": result.float_accuracy, "accuracy": result.accuracy,
        "disagreement": result.disagreement, "seconds": result.seconds,
        "pipeline": result.pipeline, "overflow": result.overflow, "output_error": result.error,
        "target_error": result.target_error,
    }
    if result.memory:
        report["memory"] = result.memory
    if result.class_labels:
        report["class_labels"] = result.class_labels
    if args.format != "c":
        from minun_mlir.deploy import write_package

        report["package"] = write_package(args.format, args.package, args.model, result)
        print(f"  {args.format} package: {args.package}")
    if args.run:
        from minun_mlir.numerics.l2_eval import storage_inputs
        from minun_mlir.targets import run_model

        n = min(args.max_inputs or 100, len(result.test))
        inputs = storage_inputs(result.l2, first(result.test.features, n))
        lines = None
        if args.profile:
            from minun_mlir.profile import model_lines

            lines = model_lines(result.l4, args.target,
                                (Path(result.c_dir) / "model.c").read_text())
        run_result = run_model(result.c_dir, args.target, inputs, name=result.name,
                               config=options.label, opt=args.opt or "size",
                               timeout=args.timeout or simulation_timeout(result.l4),
                               layers=lines)
        agree = float(np.mean(np.asarray(run_result.labels) == result.predictions[:n]))
        acc = float(np.mean(np.asarray(run_result.labels) == result.test.labels[:n]))
        mismatches = disagreements(result, run_result, n)
        if result.labels_meaningful:
            what = f"accuracy {acc:.2%}, " if result.test.labelled else ""
            print(f"  on {args.target}: {n} test inputs, {what}labels equal to the "
                  f"evaluator's on {agree:.2%}")
            if result.class_labels:
                shown = result.label_names(np.asarray(run_result.labels)[:8])
                print(f"  labels on {args.target}: {', '.join(shown)}"
                      f"{', ...' if n > 8 else ''}")
        else:
            values = np.asarray(run_result.outputs)
            if values.dtype.kind in "iu":
                print(f"  on {args.target}: {n} test inputs, all {values.size:,} output values "
                      f"equal to the evaluator's on {n - len(mismatches)} of {n} inputs")
            else:
                print(f"  on {args.target}: {n} test inputs ({values.dtype} outputs, not "
                      "compared with the evaluator's)")
        stack = "n/a" if run_result.stack_bytes is None else f"{run_result.stack_bytes:,} B"
        print(f"  flash {run_result.flash_bytes:,} B, static RAM {run_result.ram_bytes:,} B, "
              f"stack {stack}, latency {describe_latency(run_result)} (median)")
        report["run"] = run_result.to_record() | {
            "agreement": agree, "target_accuracy": acc if result.test.labelled else None}
        report["run"]["inputs_differing_from_evaluator"] = mismatches
        report["run"]["inputs_compared"] = n
        if lines is not None:
            report["profile"] = profile_report(result, run_result, lines, args, temporary)
    if not args.profile and args.out is not None and not temporary:
        # no chart of an earlier compile stays beside this one's C
        from minun_mlir.outputs import remove_written
        from minun_mlir.profile import PNG_FILE

        remove_written(args.out, [PNG_FILE])
    if args.json:
        write_file(args.json, json.dumps(report, indent=2, sort_keys=True) + "\n", "--json",
                   (args.model, args.weights, args.train, args.test, args.assign),
                   SOURCE_SUFFIXES)
    if args.run and report["run"]["inputs_differing_from_evaluator"]:
        bad = report["run"]["inputs_differing_from_evaluator"]
        raise error(f"the C on {args.target} disagrees with the bit-exact evaluator on "
                    f"{len(bad)} of {report['run']['inputs_compared']} inputs (first: input "
                    f"{bad[0]}); this is a compiler bug, please report it")
    return report


def profile_report(result, run_result, lines, args: argparse.Namespace,
                   temporary: bool) -> dict:
    """--profile: the per-layer table (printed), its chart beside the C, its record."""
    from minun_mlir.outputs import write_files
    from minun_mlir.profile import PNG_FILE, Profile, live_bytes, render_png

    profile = Profile.of_run(lines, run_result, live_bytes(result.l3, lines.names))
    print(profile.text())
    record = profile.record()
    if not temporary:
        write_files({PNG_FILE: render_png(profile, f"{result.name} [{result.options.label}] "
                                                   f"on {args.target}")}, result.c_dir)
        record["chart"] = str(Path(result.c_dir) / PNG_FILE)
        print(f"  per-layer chart: {record['chart']}")
    else:
        print("  per-layer chart: not written (--out DIR writes it beside the C)")
    return record


def simulation_timeout(l4) -> float:
    """The default limit of one simulator run: 60 s, scaled with the model's arrays (a
    proxy for its work per input: a large posit model emulated on the Uno takes minutes)."""
    from minun_mlir.codegen import memory_estimate

    return 60.0 * max(1.0, sum(memory_estimate(l4)) / TIMEOUT_BYTES)


# A model whose arrays (flash and RAM) take more than this gets more than 60 s per run.
TIMEOUT_BYTES = 16 * 1024


def run_search(args: argparse.Namespace, options: Options, dims: dict[str, int]
               ) -> Options:
    """--search: the precision search on --train, its report, and the options that replay
    its assignment."""
    import dataclasses

    from minun_mlir.bitwidth_search import ROUNDINGS, haunter_model, search_model
    from minun_mlir.data import load_dataset
    from minun_mlir.driver import _input_shape, load_model, num_classes
    from minun_mlir.modules import is_regression, mark_regression
    from minun_mlir.search_report import choice_text, write_report

    l1 = load_model(args.model, args.weights, dims or None, args.synthetic_weights)
    if args.regression:  # the search's metric is then the output error
        mark_regression(l1)
    shape = _input_shape(l1)
    if isinstance(shape, dict):
        raise error(f"--search takes a model with one input; this one has {len(shape)} "
                    f"({', '.join(shape)})")
    train = load_dataset(args.train, shape, num_classes(l1), targets=is_regression(l1))
    roundings = (args.rounding,) if args.rounding else ROUNDINGS
    if args.search == "haunter":
        search = haunter_model(l1, train, args.ram_budget,
                               soft_limit=1.0 if args.soft_limit is None else args.soft_limit,
                               low=8, high=16, planner=args.planner,
                               evaluator=args.evaluator, jobs=args.jobs, ray=args.ray,
                               representation=args.repr, es=args.es,
                               input_in_scratch=args.input_in_scratch, quire=args.quire,
                               roundings=roundings, output_in_scratch=args.output_in_scratch,
                               stream_rows=args.stream_rows)
    else:
        search = search_model(l1, train, bits=args.bits, ram_budget=args.ram_budget or None,
                              max_drop=args.max_drop, planner=args.planner,
                              evaluator=args.evaluator, jobs=args.jobs, ray=args.ray,
                              explore_input=args.explore_input_scale,
                              input_in_scratch=args.input_in_scratch, roundings=roundings,
                              output_in_scratch=args.output_in_scratch,
                              stream_rows=args.stream_rows)
    folder = search_folder(args)
    stem = Path(args.model).stem
    name = Path(args.model).parent.name if stem == "model" else stem
    paths = write_report(search, folder, name=name)
    r = search.chosen_result
    what = (f"accuracy {r.accuracy:.2%} on --train" if r.accuracy is not None
            else f"{search.metric} {r.loss:.4g}"
            + (f", SQNR {r.sqnr_db:.2f} dB" if r.sqnr_db is not None else ""))
    how = (f"haunter, soft limit {args.soft_limit or 1:g}" if args.search == "haunter"
           else f"shiftry, {search.strategy} strategy")
    print(f"precision search ({how}): {choice_text(search)}, RAM {r.ram:,} B, {what}; "
          f"{len(search.points)} programs evaluated; report: {paths['md']}")
    return dataclasses.replace(options, assign=str(paths["assignment"]),
                               bits=search.assignment.bits,
                               rounding=search.assignment.rounding or options.rounding)


def disagreements(result, run_result, n: int) -> list[int]:
    """Inputs on which the simulated C and the evaluator differ: in the label (where the
    output has one; not a regressor's), and for an integer model in any value of the
    output buffer (the scores: they must be bit-exact)."""
    from minun_mlir.native import evaluate_scores

    labels = np.asarray(run_result.labels).reshape(n)
    differ = labels != result.predictions[:n] if result.labels_meaningful else np.zeros(n, bool)
    outputs = np.asarray(run_result.outputs).reshape(n, -1)
    if outputs.dtype.kind in "iu":
        expected = evaluate_scores(result.l2, first(result.test.features, n),
                                   result.options.evaluator)
        if expected.shape == outputs.shape:
            differ |= np.any(expected.astype(np.int64) != outputs.astype(np.int64), axis=1)
        else:  # the C's output buffer is not the program's scores: a bug
            differ[:] = True
    return [int(i) for i in np.flatnonzero(differ)]


def located(where: str, e: MinunError) -> MinunError:
    """A diagnostic that names no place (`error: quantize: ...`, raised by a pass on the
    in-memory module) as `where: error: ...`, so that every rejection names its input."""
    text = str(e)
    return MinunError(f"{where}: {text}") if text.startswith("error: ") else e


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_tool("minun-compile", lambda: run(args) and 0, debug=args.debug)


if __name__ == "__main__":
    sys.exit(main())
