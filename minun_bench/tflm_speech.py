"""The "TFLM micro_speech" section of BENCHMARKS.md (`tools/bench.py --tflm`, issue 32):
TFLM's micro_speech keyword model (test/zoo/tflite/micro_speech) compiled by minun onto
zero-skew int8 with the file's own scales, run on its four test clips' features (TFLM's
audio preprocessor's, features.npz) on the Cortex-M4 in QEMU, beside what TFLM itself
needs: the tensor arena of its micro_speech_test.cc and the arena its Python interpreter
(the `tflite-micro` package) reports.

Every clip's output integers are checked against TFLM's interpreter (a difference is a
RuntimeError, one line in tools/bench.py); the labels are micro_speech_test.cc's.
Deterministic: stored features, exact instruction counts, sizes from `size`.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import numpy as np

from minun_bench.suite import ROOT

SECTION = "## TFLM micro_speech"
ZOO = ROOT / "test" / "zoo" / "tflite" / "micro_speech"
MODEL = ZOO / "micro_speech_quantized.tflite"
PREPROCESSOR = ZOO / "audio_preprocessor_int8.tflite"
LABELS = ("silence", "unknown", "yes", "no")  # micro_model_settings.h
EXPECTED = {"yes": "yes", "no": "no", "silence": "silence", "noise": "silence"}
TFLM_TEST_ARENA = 28584  # micro_speech_test.cc's kArenaSize ("xtensa p6")
UNO_RAM = 2048


def clip_features() -> np.ndarray:
    """(4, 1, 1960) int8: the clips' stored features, in EXPECTED's order."""
    with np.load(ZOO / "features.npz") as f:
        return np.stack([f[c].reshape(1, -1) for c in EXPECTED])


def tflm_run(path: Path, inputs: list[np.ndarray]) -> tuple[np.ndarray, int]:
    """TFLM's interpreter on `inputs` in turn (one interpreter): its outputs and the arena
    bytes its RecordingMicroAllocator prints (captured from the C++ stderr)."""
    from tflite_micro.python.tflite_micro import runtime

    interp = runtime.Interpreter.from_file(str(path))
    out = []
    for x in inputs:
        interp.set_input(x, 0)
        interp.invoke()
        out.append(np.asarray(interp.get_output(0)).reshape(-1).copy())
    with tempfile.TemporaryFile() as log:
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)
        try:
            interp.print_allocations()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        log.seek(0)
        text = log.read().decode()
    found = re.search(r"Arena allocation total (\d+) bytes", text)
    if not found:
        raise RuntimeError(f"tflite-micro printed no arena total for {path.name}")
    return np.array(out), int(found.group(1))


def object_sizes(model_dir: Path, target: str, work: Path) -> dict:
    """model.c alone, compiled with the board's flags: flash (.text + .rodata + .data) and
    static RAM (.data + .bss), without the harness's buffers."""
    from minun_mlir.targets import get_board
    from minun_mlir.targets.build import compile_sources, read_sizes

    board = get_board(target)
    work.mkdir(parents=True, exist_ok=True)
    [obj] = compile_sources(board, [model_dir / "model.c"], work, include_dirs=[model_dir])
    s = read_sizes(board, obj)
    return {"flash": s.text + s.data, "static_ram": s.data + s.bss}


def _preprocessor_windows() -> list[np.ndarray]:
    """The yes clip's 49 windows of 480 samples, as micro_speech_test.cc feeds them to the
    preprocessor (tools/micro_speech_features.py reads the clip)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "micro_speech_features", ROOT / "tools" / "micro_speech_features.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    audio = tool.samples(ZOO / "yes_1000ms.wav")
    return [audio[i * tool.STRIDE:i * tool.STRIDE + tool.WINDOW].reshape(1, -1)
            for i in range(tool.COUNT)]


def measure(work: Path) -> dict:
    from minun_mlir.codegen import emit_c
    from minun_mlir.frontends.tflite import import_model
    from minun_mlir.numerics.l2_eval import storage_inputs
    from minun_mlir.pipeline import lower_to_l2
    from minun_mlir.targets import run_model

    q = clip_features()
    theirs, arena_model = tflm_run(MODEL, list(q))
    _, arena_pre = tflm_run(PREPROCESSOR, _preprocessor_windows())
    from tflite_micro.python.tflite_micro import runtime

    d = runtime.Interpreter.from_file(str(MODEL)).get_input_details(0)["quantization_parameters"]
    x = (np.float32(d["scales"][0]) * (q.astype(np.float32) - int(d["zero_points"][0])))
    l2 = lower_to_l2(import_model(MODEL), repr="zero-skew", bits=8)
    record: dict = {"clips": list(EXPECTED), "input_bytes": int(q[0].size),
                    "tflm_outputs": theirs.astype(int).tolist(),
                    "labels": [LABELS[i] for i in theirs.argmax(-1)],
                    "tflm": {"test_arena": TFLM_TEST_ARENA, "model_arena": arena_model,
                             "preprocessor_arena": arena_pre,
                             "model_file": MODEL.stat().st_size}}
    if record["labels"] != list(EXPECTED.values()):
        raise RuntimeError(f"TFLM labels the clips {record['labels']}, not "
                           f"micro_speech_test.cc's {list(EXPECTED.values())}")
    for target in ("cortex-m4", "avr"):
        out = work / target
        emit_c(l2, target, out)
        record[target] = object_sizes(out, target, work / f"{target}-obj")
    run = run_model(work / "cortex-m4", "cortex-m4", storage_inputs(l2, x.astype(np.float64)),
                    name="micro_speech", config="zero-skew8")
    ours = np.asarray(run.outputs).reshape(theirs.shape)
    if not np.array_equal(ours, theirs):
        raise RuntimeError("micro_speech on the Cortex-M4: the C's outputs differ from "
                           "TFLM's interpreter's")
    record["cortex-m4"].update(image_flash=run.flash_bytes, image_ram=run.ram_bytes,
                               stack=run.stack_bytes, instructions=list(run.latencies))
    print("micro_speech: done", flush=True)
    return record


def render(r: dict) -> str:
    m4, uno, tflm = r["cortex-m4"], r["avr"], r["tflm"]
    instr = m4["instructions"]
    stack = m4["stack"]
    uno_fits = ("does not fit" if uno["static_ram"] > UNO_RAM
                else "leaves room for a stack on")
    rows = "\n".join(
        f"| {clip} | {' '.join(f'{v:d}' for v in out)} | {label} | {n:,} |"
        for clip, out, label, n in zip(r["clips"], r["tflm_outputs"], r["labels"], instr))
    lines = [
        SECTION, "",
        "`tools/bench.py --tflm`. TensorFlow Lite for Microcontrollers' micro_speech keyword "
        "model (test/zoo/tflite/micro_speech: RESHAPE, DEPTHWISE_CONV_2D 8 x 10 x 8 stride 2 "
        "with per-channel scales, FULLY_CONNECTED 4000 x 4, SOFTMAX) compiled by minun onto "
        "zero-skew int8 with the file's own scales, on the 49 x 40 int8 features of TFLM's "
        "four test clips (computed by TFLM's own audio preprocessor model in the `tflite-micro` "
        "interpreter: tools/micro_speech_features.py). The Cortex-M4 C (-Os, QEMU) outputs "
        "TFLM's interpreter's integers on every clip, with micro_speech_test.cc's labels:", "",
        "| clip | output integers (silence unknown yes no) | label | M4 instructions |",
        "|---|---|---|---:|",
        rows, "",
        "| | minun (zero-skew8, Cortex-M4) | TFLM |",
        "|---|---:|---:|",
        f"| RAM | {m4['static_ram']:,} B static (model.c's .data + .bss) + {stack:,} B stack "
        f"= {m4['static_ram'] + stack:,} B, the {r['input_bytes']:,} B input being the "
        "caller's | "
        f"arena {tflm['model_arena']:,} B for the model (the `tflite-micro` interpreter's "
        f"RecordingMicroAllocator, x86-64 host: input, activations and its own structures), "
        f"{tflm['preprocessor_arena']:,} B for the preprocessor; micro_speech_test.cc "
        f"allocates {tflm['test_arena']:,} B for both |",
        f"| flash | {m4['flash']:,} B (model.c's .text + .rodata + .data); linked test image "
        f"{m4['image_flash']:,} B | the model file {tflm['model_file']:,} B, plus TFLM's "
        "interpreter and kernels (not built here) |",
        f"| M4 instructions per inference | {int(np.median(instr)):,} (median of 4) | not "
        "measured (no TFLM build for the M4 here) |", "",
        f"The Uno: model.c built for the ATmega328P needs {uno['static_ram']:,} B of static "
        f"RAM against its {UNO_RAM:,} B, so micro_speech {uno_fits} the Uno (TFLM does not "
        "run on an Uno at all).", "",
        "CMSIS-NN: not run on micro_speech. `tools/bench.py --cmsis` (minun_bench/cmsis.py) "
        "quantizes float networks by its own rules and drives stride-1, symmetrically padded "
        "depthwise convolutions of multiplier 1 with no softmax; micro_speech needs the "
        "file's own int8 parameters, a stride-2 SAME depthwise convolution of multiplier 8 "
        "and arm_softmax_s8, which that harness does not write yet.", ""]
    return "\n".join(lines)
