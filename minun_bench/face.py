"""The face-detection benchmark: EdgeML's RNNPool face-4 program (MinUn's scale workload)
compiled end to end, and the native evaluator measured against the numpy one.

`make bench` runs it after the suite (`tools/bench.py --face`) and writes the section
"## Face detection" of BENCHMARKS.md and benchmarks/face.json. The program runs with its
trained weights (benchmarks/real/edgeml-rnnpool-face-4/trained/, `make train-face`) on
generated head scenes (tools/face/generate.py, seeded), as the "Face detection quality"
section measures them. Times are wall clock on the machine
that ran it (they are not part of the byte-for-byte comparison of BENCHMARKS.md).
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from minun_bench.suite import MODELS, REAL
from minun_mlir.driver import Options, compile_model, load_model

FACE = REAL / "edgeml-rnnpool-face-4" / "input.sd"
PIXELS = 76_800
OUTPUTS = 18_000
MINUN_FIXED16_KB = 309  # MinUn Table 3: the face models' RAM at FIXED16
SECTION = "## Face detection"


TRAINED = FACE.parent / "trained" / "weights"


def images(n: int, seed: int) -> np.ndarray:
    """n generated QVGA head scenes (tools/face/generate.py) in X's declared range, as a
    SeeDot dataset (label 0 first)."""
    from minun_bench.face_ap import scenes

    x = scenes(seed, n)[0].reshape(n, PIXELS).astype(np.float32)
    return np.concatenate([np.zeros((n, 1), np.float32), x], axis=1)


BOARD_RAM = 256 * 1024  # the cortex-m4 target's RAM (minun_mlir/targets/boards.py)
INPUT_BITS = 8  # the image held as camera pixels are


def face_detection(work: Path, run_target: str | None = "cortex-m4",
                   profile_images: int = 405) -> dict:
    """Compile face-4 (32 profiling images, fixed16 with the image at 8 bits and the
    scores planned in the scratch, cortex-m4), run its C on 2 images in QEMU on the 256 KB
    board, and time profiling `profile_images` images natively."""
    from minun_mlir import native
    from minun_mlir.pipeline import parse_pipeline, run_pipeline

    np.save(work / "train.npy", images(32, seed=0))
    np.save(work / "test.npy", images(2, seed=1))
    options = Options(bits=16, input_bits=INPUT_BITS, input_in_scratch=True,
                      output_in_scratch=True, target="cortex-m4", evaluator="native")
    t0 = time.perf_counter()
    result = compile_model(FACE, options, weights=TRAINED, train=work / "train.npy",
                           test=work / "test.npy", out_dir=work / "c", name="face-4")
    total = time.perf_counter() - t0
    record: dict = {
        "stages_s": {k: round(v, 2) for k, v in result.seconds.items()},
        "compile_32_images_s": round(total, 2),
        "scratch_bytes": result.memory["scratch_bytes"],
        "lower_bound_bytes": result.memory["lower_bound_bytes"],
        "input_bytes": PIXELS * INPUT_BITS // 8,
        "output_bytes": OUTPUTS * 2,
        "sqnr_db": result.error["sqnr_db"],
        "max_abs_error": result.error["max_abs_error"],
        "planners": planners(result.l2, input_in_scratch=True, output_in_scratch=True),
    }
    # the scores a caller-owned array (as before --output-in-scratch)
    record["scratch_without_output_bytes"] = planners(
        result.l2, ("greedy",), input_in_scratch=True)["greedy"]["scratch_bytes"]
    outside = planners(result.l2, ("greedy",))["greedy"]  # the image a caller-owned array
    record["scratch_without_input_bytes"] = outside["scratch_bytes"]
    l1 = load_model(FACE, TRAINED)
    run_pipeline(l1, parse_pipeline("lower-composite-ops"))
    x = images(profile_images, seed=2)[:, 1:].reshape(profile_images, PIXELS, 1)
    t0 = time.perf_counter()
    native.native_profile(l1, x)
    record["profile_images"] = profile_images
    record["profile_s"] = round(time.perf_counter() - t0, 1)
    if run_target is not None:
        from minun_mlir.numerics.l2_eval import storage_inputs
        from minun_mlir.targets import run_model

        inputs = storage_inputs(result.l2, result.test.features)
        run = run_model(result.c_dir, run_target, inputs, name="face-4", config="fixed16")
        got = np.asarray(run.outputs).reshape(len(inputs), -1).astype(np.int64)
        want = np.asarray(result.stored_outputs).reshape(len(inputs), -1).astype(np.int64)
        record["target"] = run_target
        record["outputs_compared"] = int(want.size)
        record["outputs_equal"] = int(np.sum(got == want))
        record["instructions"] = int(np.median(run.latencies))
        record["target_ram_bytes"] = run.ram_bytes
        record["target_stack_bytes"] = run.stack_bytes
        record["streamed"] = streamed(work, run_target)
    return record


def streamed(work: Path, run_target: str) -> dict:
    """face-4 built as face_detection builds it, with `--stream-rows` (passes/stream_rows.py:
    RNNPool and every MBConv block and head run as loops over rows with line buffers,
    each block's output written over its input's consumed rows), run on the same images
    in QEMU: its plan, RAM, instructions, outputs against the evaluator, and what it
    computes again (the heads' normalisations, once per head)."""
    from minun_mlir.numerics.l2_eval import storage_inputs
    from minun_mlir.passes.stream_rows import conv_macs, recomputation, stream_rows
    from minun_mlir.targets import run_model

    options = Options(bits=16, input_bits=INPUT_BITS, input_in_scratch=True,
                      output_in_scratch=True, target=run_target, evaluator="native",
                      stream_rows=True)
    result = compile_model(FACE, options, weights=TRAINED, train=work / "train.npy",
                           test=work / "test.npy", out_dir=work / "c-streamed", name="face-4")
    report = stream_rows(result.l2.clone())
    macs, elements = recomputation(report)
    inputs = storage_inputs(result.l2, result.test.features)
    run = run_model(result.c_dir, run_target, inputs, name="face-4", config="fixed16")
    got = np.asarray(run.outputs).reshape(len(inputs), -1).astype(np.int64)
    want = np.asarray(result.stored_outputs).reshape(len(inputs), -1).astype(np.int64)
    return {"scratch_bytes": result.memory["scratch_bytes"],
            "streams": sum(r.startswith("streamed: ") for r in report),
            "refused": sum(r.startswith("refused: ") for r in report),
            "recomputed_macs": macs, "recomputed_elements": elements,
            "conv_macs": conv_macs(result.l2),
            "outputs_compared": int(want.size), "outputs_equal": int(np.sum(got == want)),
            "instructions": int(np.median(run.latencies)),
            "target_ram_bytes": run.ram_bytes, "target_stack_bytes": run.stack_bytes}


PLANNERS = ("naive", "greedy", "shiftry", "optimal")


def planners(l2, names: tuple[str, ...] = PLANNERS, input_in_scratch: bool = False,
             output_in_scratch: bool = False) -> dict:
    """Every memory planner on one L2 program: scratch bytes, the lower bound and seconds
    (memory-plan alone, on the same L3); with `input_in_scratch` / `output_in_scratch`,
    the input / output is one of the planned buffers."""
    from minun_mlir.memory_map import memory_map
    from minun_mlir.pipeline import lower_l2, parse_pipeline, run_pipeline

    l3 = lower_l2(l2, stop="lower-to-loops")
    rows = {}
    extra = (" input-in-scratch=true" if input_in_scratch else "") + \
        (" output-in-scratch=true" if output_in_scratch else "")
    for name in names:
        planned = l3.clone()
        t0 = time.perf_counter()
        run_pipeline(planned, parse_pipeline(f"memory-plan{{planner={name}{extra}}}"))
        seconds = time.perf_counter() - t0
        plan = memory_map(planned, name)
        rows[name] = {"scratch_bytes": plan.scratch, "lower_bound_bytes": plan.lower_bound,
                      "seconds": round(seconds, 2)}
    return rows


LIGHT = ("light_squeezenet", "light_resnet50")  # the onnx package's backend test models


def large_onnx(work: Path) -> dict:
    """The onnx package's light SqueezeNet and ResNet-50 (224x224x3): profile on 8 random
    images and compile at fixed16 for x86; the time, or the diagnostic that stopped it."""
    import onnx

    from minun_mlir.diagnostics import MinunError

    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    x = np.random.default_rng(3).uniform(0, 1, size=(8, 3 * 224 * 224)).astype(np.float32)
    np.save(work / "images224.npy", np.concatenate([np.zeros((8, 1), np.float32), x], 1))
    records = {}
    for name in LIGHT:
        t0 = time.perf_counter()
        try:
            result = compile_model(light / f"{name}.onnx", Options(bits=16, evaluator="native"),
                                   train=work / "images224.npy", out_dir=work / name)
            records[name] = {"seconds": round(time.perf_counter() - t0, 1), "ok": True,
                             "scratch_bytes": result.memory["scratch_bytes"]}
            from minun_mlir.pipeline import lower_to_l2

            records[name]["planners"] = {
                "fixed16": planners(result.l2),
                "float32": planners(lower_to_l2(result.l1, repr="float32"))}
        except MinunError as e:
            records[name] = {"seconds": round(time.perf_counter() - t0, 1), "ok": False,
                             "error": str(e).split("error: ", 1)[-1].splitlines()[0]}
    return records


def precision_search(inputs: int = 1000) -> dict:
    """Shiftry's search on fastgrnn-digits10 with `inputs` search inputs, under a RAM budget
    of 1.25x the uniform fixed8 plan (issue: automatic precision search): its wall time,
    candidate count and the chosen point against the uniform baselines."""
    from minun_mlir.bitwidth_search import search_model
    from minun_mlir.data import load_dataset
    from minun_mlir.frontends.seedot import load_program
    from minun_mlir.memory_map import memory_map
    from minun_mlir.pipeline import lower_l2, lower_to_l2

    folder = MODELS / "fastgrnn-digits10"
    l1 = load_program(folder / "model.sd", folder)
    data = load_dataset(folder / "train.npy", (64, 1))
    train = type(data)(data.features[:inputs], data.labels[:inputs], data.label_base,
                       data.name)
    l2_8 = lower_to_l2(l1, bits=8, data=str(folder / "train.npy"))
    budget = int(1.25 * memory_map(lower_l2(l2_8, stop="memory-plan")).scratch)
    t0 = time.perf_counter()
    search = search_model(l1, train, ram_budget=budget, jobs=2, progress=False)
    seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    on_ray = search_model(l1, train, ram_budget=budget, ray="local", progress=False)
    ray_seconds = time.perf_counter() - t0
    chosen = search.chosen_result
    return {"inputs": inputs, "budget_bytes": budget, "seconds": round(seconds, 1),
            "ray_seconds": round(ray_seconds, 1),
            "ray_same_assignment": on_ray.assignment == search.assignment,
            "candidates": len(search.points), "demoted": len(search.changed),
            "chosen_ram": chosen.ram, "chosen_loss": round(chosen.loss, 2),
            "baselines": {k: {"ram": r.ram, "loss": round(r.loss, 2)}
                          for k, r in {"fixed16": search.base, **search.baselines}.items()}}


def suite_search(work: Path) -> dict:
    """Shiftry's search (fixed point) and Haunter on posits (posit8 promoted to posit16)
    on every classifier of the benchmark suite under 1.25x its uniform fixed8 plan (issue:
    automatic precision search): accuracy on the test set against float, fixed16 and
    fixed8, the planner's scratch, and the Uno's own figure for the model's static RAM
    (.data + .bss of model.c built by avr-gcc; for posits the search counts the scratch
    and the runtime's quires, and falls back to programs without a quire)."""
    import warnings

    from minun_bench.suite import suite
    from minun_mlir.bitwidth_search import haunter_model, search_model
    from minun_mlir.data import load_dataset
    from minun_mlir.driver import _input_shape, num_classes
    from minun_mlir.search_report import write_report
    from minun_mlir.targets.boards import get_board
    from minun_mlir.targets.build import compile_sources, read_sizes

    uno = get_board("avr")
    rows = []
    for e in suite():
        if e.regression:
            continue
        kw = dict(weights=e.weights, train=e.train, test=e.test, dims=e.dims)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # overflow warnings of the uniform baselines
            runs = {bits: compile_model(e.model, Options(bits=bits, target="avr"),
                                        out_dir=work / f"{e.name}-{bits}", **kw)
                    for bits in (16, 8)}
            budget = int(1.25 * runs[8].memory["scratch_bytes"])
            l1 = load_model(e.model, e.weights, e.dims)
            train = load_dataset(e.train, _input_shape(l1), num_classes(l1))
            search = search_model(l1, train, ram_budget=budget, jobs=2, progress=False)
            paths = write_report(search, work / f"{e.name}-search", name=e.name)
            chosen = compile_model(e.model, Options(bits=search.assignment.bits,
                                                    assign=str(paths["assignment"]),
                                                    target="avr"),
                                   out_dir=work / f"{e.name}-chosen", **kw)
            t1 = time.perf_counter()
            haunter = haunter_model(l1, train, budget, representation="posit", jobs=2,
                                    progress=False)
            hpaths = write_report(haunter, work / f"{e.name}-haunter", name=e.name)
            posit = compile_model(e.model, Options(repr="posit", bits=8,
                                                   assign=str(hpaths["assignment"]),
                                                   target="avr"),
                                  out_dir=work / f"{e.name}-posit", **kw)

        def uno_ram(run) -> int:  # .data + .bss of model.c alone (the runtime's are apart)
            obj = compile_sources(uno, [run.c_dir / "model.c"], run.c_dir,
                                  include_dirs=[run.c_dir])[0]
            return read_sizes(uno, obj).ram
        rows.append({"model": e.name, "float": runs[8].float_accuracy,
                     "fixed16": runs[16].accuracy, "fixed8": runs[8].accuracy,
                     "chosen": chosen.accuracy, "budget_bytes": budget,
                     "scratch_bytes": chosen.memory["scratch_bytes"],
                     "fixed8_bytes": runs[8].memory["scratch_bytes"],
                     "fixed16_bytes": runs[16].memory["scratch_bytes"],
                     "uno_static_ram_bytes": uno_ram(chosen),
                     "demoted": len(search.assignment.tensors), "bits": search.assignment.bits,
                     "candidates": len(search.points),
                     "seconds": round(t1 - t0, 1),
                     "posit": posit.accuracy, "posit_scratch_bytes": posit.memory[
                         "scratch_bytes"], "posit_uno_static_ram_bytes": uno_ram(posit),
                     "posit_quire_bytes": posit.memory.get("runtime_bytes", 0),
                     "posit_ram_bytes": haunter.chosen_result.ram,
                     "posit_quire": haunter.assignment.quire,
                     "posit_es": {str(b): e for b, e in sorted(haunter.assignment.es.items())},
                     "promoted": len(haunter.assignment.tensors),
                     "posit_candidates": len(haunter.points),
                     "posit_seconds": round(time.perf_counter() - t1, 1)})

    def drop(key: str) -> float:
        return round(sum(100 * (r["float"] - r[key]) for r in rows) / len(rows), 2)

    return {"rows": rows, "mean_drop": {k: drop(k) for k in ("fixed16", "fixed8", "chosen",
                                                             "posit")},
            "all_fit": all(r["scratch_bytes"] <= r["budget_bytes"] and
                           r["uno_static_ram_bytes"] <= r["budget_bytes"] for r in rows),
            "posit_all_fit": all(r["posit_ram_bytes"] <= r["budget_bytes"] and
                                 r["posit_uno_static_ram_bytes"] <= r["budget_bytes"]
                                 for r in rows)}


def evaluator_speed(n: int = 10_000, rounds: int = 5, native_repeats: int = 5) -> dict:
    """FastGRNN (digits10) on n random inputs: numpy evaluators vs native, side by side.
    After one warm-up run of each (for native: the cached build, loading one library copy
    per thread and filling its tables), `rounds` rounds each time one numpy run and the
    best of `native_repeats` native runs (a few milliseconds, which vary with thread
    wake-ups); the speedup is the median over the rounds of numpy / native, so that a
    slow phase of a shared machine weighs on both sides of one ratio. The outputs are
    compared."""
    from minun_mlir import native
    from minun_mlir.data import input_shape
    from minun_mlir.frontends.seedot import load_program
    from minun_mlir.numerics.float_eval import evaluate
    from minun_mlir.numerics.l2_eval import evaluate_l2
    from minun_mlir.pipeline import lower_to_l2

    folder = MODELS / "fastgrnn-digits10"
    module = load_program(folder / "model.sd", folder)
    x = np.random.default_rng(0).uniform(0, 1, size=(n, *input_shape(module)))
    l2 = lower_to_l2(module, bits=16, data=str(folder / "train.npy"), evaluator="numpy")
    f32 = lower_to_l2(module, repr="float32")
    # built as the tools build them for a batch of n (native.opt_level)
    fixed = native.NativeProgram(l2, examples=n)
    floats = native.NativeProgram(f32, examples=n)
    pairs = {"float": (lambda: evaluate(module, x).outputs[0], lambda: floats.outputs(x)[0]),
             "fixed16": (lambda: evaluate_l2(l2, x).outputs[0], lambda: fixed.outputs(x)[0])}

    def seconds(run, repeats: int = 1) -> float:
        best = math.inf
        for _ in range(repeats):
            t0 = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - t0)
        return best

    times, speedups, results = {}, {}, {}
    for kind, (slow, fast) in pairs.items():
        results[kind] = (slow(), fast())
        measured = [(seconds(slow), seconds(fast, native_repeats)) for _ in range(rounds)]
        times[f"{kind} numpy"] = float(np.median([a for a, _ in measured]))
        times[f"{kind} native"] = float(np.median([b for _, b in measured]))
        speedups[kind] = float(np.median([a / b for a, b in measured]))
    return {"inputs": n, "rounds": rounds, "native_repeats": native_repeats,
            "seconds": {k: round(v, 4) for k, v in times.items()},
            "fixed16_speedup": round(speedups["fixed16"], 1),
            "float_speedup": round(speedups["float"], 1),
            "fixed16_equal": bool(np.array_equal(*results["fixed16"]))}


STAGES = ("frontend", "float", "quantize", "evaluate", "codegen")  # the driver's order


def _in_order(d: dict, order) -> list:
    """d's items in `order`, then the rest by name: the same lines whether d was just
    measured or read back from face.json (whose keys are sorted)."""
    return ([(k, d[k]) for k in order if k in d]
            + sorted((k, v) for k, v in d.items() if k not in order))


def render(face: dict, speed: dict, onnx_models: dict | None = None,
           search: dict | None = None, suite: dict | None = None) -> str:
    kb = 1024
    s = face["scratch_bytes"]
    image = face["input_bytes"]
    outside = face["scratch_without_input_bytes"] + image
    lines = [
        SECTION, "",
        "EdgeML's RNNPool face-4 SeeDot program (320x240 input, 18,000 outputs) with its "
        "trained weights (`benchmarks/real/edgeml-rnnpool-face-4/trained/`) on generated "
        "head scenes (`tools/face/generate.py`); fixed16, data-driven scales, the image "
        "held at 8 bits and planned in the scratch (`--input-bits 8 --input-in-scratch`: "
        "its bytes are reused once the RNNPool stage has read it), the 18,000 scores "
        "planned there too (`--output-in-scratch`: they take bytes the buffers leave "
        "free once the last block runs, and the caller reads them at "
        "`minun_output_buffer()`), greedy planner, C for cortex-m4. Wall-clock times on "
        "the machine that ran `make bench`, with the native evaluator.", "",
        "| measure | value | target |",
        "|---|---|---|",
        f"| profile 32 images + quantize + plan + C | {face['compile_32_images_s']:.1f} s "
        f"({', '.join(f'{k} {v:.1f} s' for k, v in _in_order(face['stages_s'], STAGES))})"
        " | < 60 s |",
        f"| profile {face['profile_images']} images (native) | {face['profile_s']:.0f} s | "
        "< 300 s |",
        f"| planned RAM: peak including the 8-bit input image and the scores (buffers, "
        f"image and scores in one scratch) | {s:,} B ({s / kb:.1f} KB) | < {BOARD_RAM:,} B "
        f"(256 KB, cortex-m4); <= "
        f"{MINUN_FIXED16_KB} KB (MinUn FIXED16) |",
        f"| lower bound of the plan (tightest instruction, image and scores counted while "
        f"live) | "
        f"{face['lower_bound_bytes']:,} B | |",
        f"| the same with the image outside the scratch (a caller-owned {image:,}-byte "
        f"array): scratch {face['scratch_without_input_bytes']:,} B + image | {outside:,} B "
        f"({outside / kb:.0f} KB) | |",
    ]
    if "scratch_without_output_bytes" in face:
        before = face["scratch_without_output_bytes"] + face["output_bytes"]
        lines.append(
            f"| the same with the scores outside the scratch (a caller-owned "
            f"{face['output_bytes']:,}-byte array): scratch "
            f"{face['scratch_without_output_bytes']:,} B + scores | {before:,} B "
            f"({before / kb:.0f} KB) | |")
    lines += [
        f"| fixed16 (8-bit image) vs float output (2 images) | SQNR {face['sqnr_db']:.1f} dB, "
        f"max abs error {face['max_abs_error']:.3g} | |",
    ]
    if "target" in face:
        lines.append(
            f"| C on {face['target']} (QEMU) == evaluator | {face['outputs_equal']:,} of "
            f"{face['outputs_compared']:,} output values; {face['instructions']:,} "
            "instructions per image | all equal |")
        if face.get("target_stack_bytes") is not None:
            ram, stack = face["target_ram_bytes"], face["target_stack_bytes"]
            lines.append(
                f"| RAM of that build on the 256 KB board: static (.data + .bss: the scratch "
                f"with image and scores, the runtime's and the harness's variables) + stack "
                f"high-water mark | {ram:,} B + {stack:,} B = {ram + stack:,} B "
                f"({(ram + stack) / kb:.1f} KB) | <= {BOARD_RAM:,} B |")
        elif face.get("target_ram_bytes") is not None:
            lines.append(
                f"| static RAM of that build (the harness's {OUTPUTS * 2:,}-byte score array "
                f"included, hence the 4 MB QEMU board) | {face['target_ram_bytes']:,} B | |")
        if "streamed" in face:
            st = face["streamed"]
            ram, stack = st["target_ram_bytes"], st["target_stack_bytes"]
            lines.append(
                f"| the same streamed (`--stream-rows`: RNNPool, the MBConv blocks and the "
                f"heads as loops over rows with line buffers, each block's output over its "
                f"input's consumed rows; {st['streams']} streams): RAM static + stack on the "
                f"256 KB board | {ram:,} B + {stack:,} B = {ram + stack:,} B "
                f"({(ram + stack) / kb:.1f} KB; scratch {st['scratch_bytes']:,} B) | "
                f"<= {BOARD_RAM // 2:,} B (half the board) |")
            lines.append(
                f"| its C on {face['target']} (QEMU) == evaluator; recomputation (the heads' "
                f"normalisations computed once per head) | {st['outputs_equal']:,} of "
                f"{st['outputs_compared']:,} output values; {st['instructions']:,} "
                f"instructions per image; {st['recomputed_macs']:,} MACs "
                f"({100 * st['recomputed_macs'] / st['conv_macs']:.2f} % of the "
                f"convolutions' {st['conv_macs']:,}) and {st['recomputed_elements']:,} "
                f"element operations computed again | all equal |")
    for name, rec in _in_order(onnx_models or {}, LIGHT):
        what = (f"compiled, scratch {rec['scratch_bytes']:,} B" if rec["ok"]
                else f"stopped: {rec['error']}")
        lines.append(f"| onnx `{name}` (224x224x3): profile 8 images + fixed16 C for x86 | "
                     f"{rec['seconds']:.0f} s, {what} | < 120 s |")
    lines += ["", "Memory planners (scratch bytes; memory-plan's seconds on this machine; the "
              "lower bound is the most bytes live at one instruction):", "",
              "| model | " + " | ".join(PLANNERS) + " | lower bound |",
              "|---|" + "---:|" * (len(PLANNERS) + 1)]
    what = "8-bit image and scores" if "output_bytes" in face else "8-bit image"
    tables = [(f"face-4 fixed16, {what} in scratch", face["planners"])]
    for name, rec in _in_order(onnx_models or {}, LIGHT):
        for config, rows in rec.get("planners", {}).items():
            tables.append((f"{name} {config}", rows))
    for label, rows in tables:
        cells = [f"{rows[p]['scratch_bytes']:,} ({rows[p]['seconds']:.2f} s)" for p in PLANNERS]
        lines.append(f"| {label} | " + " | ".join(cells) +
                     f" | {rows[PLANNERS[0]]['lower_bound_bytes']:,} |")
    if search is not None:
        base = search["baselines"]
        lines += [
            "", f"Precision search (Shiftry's demotion, `minun-compile --search shiftry`) on "
            f"fastgrnn-digits10 with {search['inputs']:,} search inputs, RAM budget "
            f"{search['budget_bytes']:,} B (1.25x the uniform fixed8 plan), 2 processes:", "",
            "| search time | candidates | demoted tensors | chosen: scratch / accuracy loss "
            "| fixed16: scratch / loss | fixed8: scratch / loss |",
            "|---|---|---|---|---|---|",
            f"| {search['seconds']:.1f} s | {search['candidates']} | {search['demoted']} | "
            f"{search['chosen_ram']:,} B / {search['chosen_loss']:.2f} pt | "
            f"{base['fixed16']['ram']:,} B / {base['fixed16']['loss']:.2f} pt | "
            f"{base['fixed8']['ram']:,} B / {base['fixed8']['loss']:.2f} pt |"]
        if search["demoted"] == 0 and search["chosen_ram"] == base["fixed8"]["ram"]:
            lines += ["", "No tensor demoted: every mixed prefix that fits loses more than "
                      "uniform fixed8 at the same RAM, so the search returns fixed8."]
        if "ray_seconds" in search:
            lines += ["", f"The same search as Ray tasks on a local Ray instance "
                      f"(`--ray local`): {search['ray_seconds']:.1f} s including Ray's "
                      f"start-up, {'the same' if search['ray_same_assignment'] else 'A DIFFERENT'}"
                      " assignment."]
    if suite is not None:
        lines += [
            "", "Precision search on every classifier of the suite, RAM budget 1.25x its "
            "uniform fixed8 plan (search on the training set; accuracy on the test set; "
            "Uno RAM = .data + .bss of the chosen program's model.c as avr-gcc builds it). "
            "Shiftry's search demotes fixed16 tensors to 8 bits; Haunter on posits promotes "
            "posit<8, es8> tensors to posit<16, es16>, es per bitwidth chosen by its stage I "
            "(MinUn's Algorithm 4: es8 0 or 2, es16 1 or 2, by the uniform programs' loss on "
            "the search data):",
            "", "| model | float | fixed16 | fixed8 | Shiftry fixed | Haunter posit | budget | "
            "scratch (fixed16 / fixed8 / Shiftry / Haunter) | Uno RAM (Shiftry / Haunter) | "
            "8-bit / promoted | posit es8 / es16 | candidates | time |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in suite["rows"]:
            demoted = "all (uniform)" if r["bits"] == 8 else str(r["demoted"])
            quire = r.get("posit_quire_bytes", 0)
            haunter = f"{r['posit_scratch_bytes']}" + (f" + {quire} quire" if quire else "")
            promoted = f"{r['promoted']}" + ("" if r.get("posit_quire", True) else
                                             " (no quire)")
            lines.append(
                f"| {r['model']} | {100 * r['float']:.2f} | {100 * r['fixed16']:.2f} | "
                f"{100 * r['fixed8']:.2f} | {100 * r['chosen']:.2f} | "
                f"{100 * r['posit']:.2f} | {r['budget_bytes']} | "
                f"{r['fixed16_bytes']} / {r['fixed8_bytes']} / {r['scratch_bytes']} / "
                f"{haunter} | {r['uno_static_ram_bytes']} / "
                f"{r['posit_uno_static_ram_bytes']} | {demoted} / {promoted} | "
                f"{r['posit_es']['8']} / {r['posit_es']['16']} | "
                f"{r['candidates']} / {r['posit_candidates']} | {r['seconds']:.0f} s / "
                f"{r['posit_seconds']:.0f} s |")
        m = suite["mean_drop"]
        rows = suite["rows"]

        def fits(key: str) -> bool:
            return all(r[key] <= r["budget_bytes"] for r in rows)

        shiftry_fit = fits("scratch_bytes") and fits("uno_static_ram_bytes")
        quireless = [r["model"] for r in rows if not r.get("posit_quire", True)]
        same = all(r.get("posit_ram_bytes") == r["posit_uno_static_ram_bytes"] for r in rows)
        lines += [
            "", f"Mean accuracy drop vs float: fixed16 {m['fixed16']:.2f}, fixed8 "
            f"{m['fixed8']:.2f}, Shiftry fixed {m['chosen']:.2f}, Haunter posit "
            f"{m['posit']:.2f} points (target <= 0.3: Haunter posit "
            f"{'meets' if m['posit'] <= 0.3 else 'does NOT meet'} it). Shiftry's programs "
            f"{'all fit' if shiftry_fit else 'do NOT all fit'} their budgets, by the "
            "planner and by avr-gcc. Haunter's posit programs count the runtime's quire "
            "(4 bytes per 32-bit word of the widest format's quire and a NaR byte: 5 B for "
            "posit<8, 0>, 17 B for posit<8, 2> and posit<16, 1>, 33 B for posit<16, 2>) "
            "beside the scratch, and are searched with "
            "a quire and without one (every product and partial sum rounded), keeping the "
            "program that loses less on the search data (Haunter's candidate counts leave "
            "out stage I's four uniform programs per search); the one without a quire won on "
            f"{len(quireless)} of {len(rows)} models"
            f"{' (' + ', '.join(quireless) + ')' if 0 < len(quireless) < len(rows) else ''}. "
            "They "
            f"{'all fit' if fits('posit_ram_bytes') else 'do NOT all fit'} by the search's "
            f"figure (scratch + quire) and "
            f"{'all fit' if fits('posit_uno_static_ram_bytes') else 'do NOT all fit'} by "
            "avr-gcc's (.data + .bss of model.c), which "
            f"{'equals' if same else 'does NOT always equal'} the search's."]
    sec = speed["seconds"]
    lines += [
        "",
        f"Native vs numpy evaluator, FastGRNN (digits10), {speed['inputs']:,} inputs in one "
        f"batch, after a warm-up run of each (native: the build is cached; loading a "
        f"library copy per thread is in the warm-up); {speed.get('rounds', 1)} rounds of one "
        f"numpy run and the best of {speed.get('native_repeats', 1)} native runs; medians, "
        "and the speedup is the median of the rounds' ratios:", "",
        "| evaluator | float | fixed16 |",
        "|---|---|---|",
        f"| numpy | {sec['float numpy']:.3f} s | {sec['fixed16 numpy']:.3f} s |",
        f"| native | {sec['float native']:.3f} s | {sec['fixed16 native']:.3f} s |",
        f"| speedup | {speed['float_speedup']:.0f}x | {speed['fixed16_speedup']:.0f}x "
        f"(outputs {'identical' if speed['fixed16_equal'] else 'DIFFER'}) |",
        "",
    ]
    return "\n".join(lines)


# The sections at the end of BENCHMARKS.md that their own runs write (`tools/bench.py
# --face`, `--face-ap`, `--face-search`, `--posit`, `--ort`, `--profile`, `--cmsis`,
# `--int4`, `--tflm`), in this order; `make bench` rewrites what comes before them.
TRAILING = (SECTION, "## Face detection quality", "## RNNPool face-4 under a RAM budget",
            "## Posits", "## Fixed point beside onnxruntime int8", "## Per-layer profile",
            "## Beside CMSIS-NN", "## 4-bit weights", "## TFLM micro_speech")


def split_sections(markdown: str) -> tuple[str, dict[str, str]]:
    """(the suite's report, {title: text} of the trailing sections present)."""
    found = sorted((markdown.index(t), t) for t in TRAILING if t in markdown)
    if not found:
        return markdown, {}
    parts = {}
    for i, (at, title) in enumerate(found):
        end = found[i + 1][0] if i + 1 < len(found) else len(markdown)
        parts[title] = markdown[at:end].rstrip("\n") + "\n"
    return markdown[:found[0][0]], parts


def join_sections(head: str, parts: dict[str, str]) -> str:
    texts = [parts[t].rstrip("\n") for t in TRAILING if parts.get(t)]
    head = head.rstrip("\n")
    return head + "".join("\n\n" + t for t in texts) + "\n"


def replace_section(markdown: str, section: str, title: str = SECTION) -> str:
    """`markdown` with its trailing section `title` (the face section by default)
    replaced by `section` (removed when empty); the other trailing sections stay."""
    head, parts = split_sections(markdown)
    parts[title] = section
    return join_sections(head, parts)


def keep_section(old: str | None, new: str) -> str:
    """The suite's new report `new` with the trailing sections carried over from `old`."""
    if old is None:
        return new
    _, parts = split_sections(old)
    if not parts:
        return new
    head, _ = split_sections(new)
    return join_sections(head, parts)

