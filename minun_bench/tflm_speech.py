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
    record["fc"] = run_cmsis(work / "cmsis", q, x.astype(np.float64))
    print("micro_speech: done", flush=True)
    return record


# ---- CMSIS-NN on micro_speech up to its FULLY_CONNECTED -----------------------------------

def fc_output_model() -> bytes:
    """micro_speech with its graph output moved from the SOFTMAX to the FULLY_CONNECTED
    (operator 2) before it: what CMSIS-NN's dw + fc calls compute (the third_party copy
    holds no softmax)."""
    import tflite

    data = bytearray(MODEL.read_bytes())
    g = tflite.Model.GetRootAsModel(bytes(data), 0).Subgraphs(0)
    at = g._tab.Vector(g._tab.Offset(8))  # SubGraph.outputs[0]
    data[at:at + 4] = int(g.Operators(2).Outputs(0)).to_bytes(4, "little")
    return bytes(data)


def _tensor(m, g, i: int) -> dict:
    t = g.Tensors(i)
    q = t.Quantization()
    data = m.Buffers(t.Buffer()).DataAsNumpy()
    dtype = {9: np.int8, 2: np.int32}[t.Type()]
    return {"shape": [int(v) for v in t.ShapeAsNumpy()],
            "scale": [float(v) for v in q.ScaleAsNumpy()],
            "zp": [int(v) for v in q.ZeroPointAsNumpy()],
            "data": None if isinstance(data, int) else
            np.frombuffer(data.tobytes(), dtype=dtype).reshape(t.ShapeAsNumpy())}


def cmsis_program(work: Path, inputs: np.ndarray) -> list[Path]:
    """main.c: micro_speech's DEPTHWISE_CONV_2D (multiplier 8, stride 2, SAME: TFLM's
    padding offsets 4 and 3) and FULLY_CONNECTED as CMSIS-NN s8 calls with the file's own
    integers and TFLM's multipliers (QuantizeMultiplier of s_in s_w / s_out in double), the
    inputs' outputs printed."""
    import tflite

    from minun_bench.cmsis import CMSIS, SOURCES, _arr
    from minun_mlir.formats.zero_skew.arith import quantize_multiplier

    m = tflite.Model.GetRootAsModel(MODEL.read_bytes(), 0)
    g = m.Subgraphs(0)
    dw, fc = g.Operators(1), g.Operators(2)
    x, w1, b1, y1 = (_tensor(m, g, i) for i in (*dw.InputsAsNumpy(), dw.Outputs(0)))
    _, w2, b2, y2 = (_tensor(m, g, i) for i in (*fc.InputsAsNumpy(), fc.Outputs(0)))
    ms1 = [quantize_multiplier(x["scale"][0] * s / y1["scale"][0]) for s in w1["scale"]]
    mult2, shift2 = quantize_multiplier(y1["scale"][0] * w2["scale"][0] / y2["scale"][0])
    (_, h, wd, c), (_, kh, kw, oc), (_, oh, ow, _) = x["shape"], w1["shape"], y1["shape"]
    pad_h, pad_w = (((o - 1) * 2 + k - n) // 2 for o, k, n in ((oh, kh, h), (ow, kw, wd)))
    relu = y1["zp"][0]  # the fused RELU clamps at the output's zero point
    work.mkdir(parents=True, exist_ok=True)
    n_in, n_out = inputs[0].size, w2["shape"][0]
    (work / "weights.c").write_text(
        "#include <stdint.h>\n" + _arr("int8_t", "w1", w1["data"])
        + _arr("int32_t", "b1", b1["data"]) + _arr("int32_t", "m1", [a for a, _ in ms1])
        + _arr("int32_t", "s1", [b for _, b in ms1]) + _arr("int8_t", "w2", w2["data"])
        + _arr("int32_t", "b2", b2["data"]))
    (work / "main.c").write_text(
        "/* micro_speech's depthwise convolution and fully connected layer as CMSIS-NN s8 "
        "calls (minun_bench/tflm_speech.py). */\n"
        '#include "arm_nnfunctions.h"\n#include "minun_target.h"\n\n'
        "extern const int8_t w1[], w2[];\nextern const int32_t b1[], m1[], s1[], b2[];\n"
        + _arr("int8_t", "inputs", inputs).replace("const", "static const")
        + f"static int8_t act[{oh * ow * oc}], out[{n_out}];\n"
        "static int32_t scratch[SCRATCH_BYTES / 4];\n\n"
        f"static const cmsis_nn_dims in1 = {{1, {h}, {wd}, {c}}}, f1 = {{1, {kh}, {kw}, {oc}}},"
        f" bd1 = {{1, 1, 1, {oc}}}, out1 = {{1, {oh}, {ow}, {oc}}};\n"
        f"static const cmsis_nn_dw_conv_params dp = {{{-x['zp'][0]}, {y1['zp'][0]}, {oc // c}, "
        f"{{2, 2}}, {{{pad_w}, {pad_h}}}, {{1, 1}}, {{{relu}, 127}}}};\n"
        "static const cmsis_nn_per_channel_quant_params qp1 = {(int32_t *)m1, (int32_t *)s1};\n"
        f"static const cmsis_nn_dims in2 = {{1, {oh}, {ow}, {oc}}}, f2 = {{{oh * ow * oc}, 1, 1, "
        f"{n_out}}}, bd2 = {{1, 1, 1, {n_out}}}, out2 = {{1, 1, 1, {n_out}}};\n"
        f"static const cmsis_nn_fc_params fp = {{{-y1['zp'][0]}, 0, {y2['zp'][0]}, {{-128, 127}}}};"
        "\n\nint main(void)\n{\n"
        "    cmsis_nn_context ctx = {scratch, sizeof scratch};\n"
        "    if (arm_depthwise_conv_wrapper_s8_get_buffer_size(&dp, &in1, &f1, &out1) > "
        "SCRATCH_BYTES) minun_exit(3);\n"
        f"    for (int i = 0; i < {len(inputs)}; i++) {{\n"
        "        minun_marker_start();\n"
        f"        arm_depthwise_conv_wrapper_s8(&ctx, &dp, &qp1, &in1, &inputs[i * {n_in}], &f1, "
        "w1, &bd1, b1, &out1, act);\n"
        f"        {{ cmsis_nn_per_tensor_quant_params qp2 = {{{mult2}, {shift2}}};\n"
        "          arm_fully_connected_s8(&ctx, &fp, &qp2, &in2, act, &f2, w2, &bd2, b2, &out2, "
        "out); }\n"
        "        minun_marker_end();\n"
        f"        for (int j = 0; j < {n_out}; j++) {{ minun_print_i32(out[j]); minun_putc(' '); }}"
        "\n        minun_putc('\\n');\n    }\n    minun_exit(0);\n}\n")
    srcs = sorted(set(SOURCES[8]["dw"] + SOURCES[8]["fc"]))
    return [work / "main.c", work / "weights.c", *(CMSIS / "Source" / s for s in srcs)]


def run_cmsis(work: Path, q: np.ndarray, reals) -> dict:
    """CMSIS-NN's dw + fc on the clips' features (-Os, QEMU M4), and minun's C of the same
    graph (output at the FULLY_CONNECTED), each checked against TFLM's interpreter on it."""
    from minun_bench.cmsis import CMSIS, model_flash
    from minun_mlir.codegen import emit_c
    from minun_mlir.frontends.tflite import import_model
    from minun_mlir.numerics.l2_eval import storage_inputs
    from minun_mlir.pipeline import lower_to_l2
    from minun_mlir.targets import build_and_run, run_model

    work.mkdir(parents=True, exist_ok=True)
    path = work / "micro_speech_fc.tflite"
    path.write_bytes(fc_output_model())
    theirs, _ = tflm_run(path, list(q))
    sources = cmsis_program(work / "cmsis-src", q)
    r = build_and_run(sources, "cortex-m4", include_dirs=[CMSIS / "Include"],
                      defines={"SCRATCH_BYTES": "4096"}, name="cmsis-micro-speech",
                      work_dir=work / "cmsis-build")
    got = np.array([line.split() for line in r.output.strip().splitlines()], dtype=np.int64)
    if not np.array_equal(got, theirs):
        raise RuntimeError("CMSIS-NN micro_speech: outputs differ from TFLM's interpreter's")
    objs = [o for o in sorted((work / "cmsis-build").glob("*.o")) if "_main" not in o.name]
    cmsis = {"instructions": list(r.latencies),
             "flash": model_flash(work / "cmsis-build" / "cmsis-micro-speech.elf", objs)}
    l2 = lower_to_l2(import_model(path), repr="zero-skew", bits=8)
    emit_c(l2, "cortex-m4", work / "minun-fc")
    run = run_model(work / "minun-fc", "cortex-m4", storage_inputs(l2, reals),
                    name="micro_speech_fc", config="zero-skew8")
    if not np.array_equal(np.asarray(run.outputs).reshape(theirs.shape), theirs):
        raise RuntimeError("minun micro_speech (to the FULLY_CONNECTED) on the M4: outputs "
                           "differ from TFLM's interpreter's")
    minun = object_sizes(work / "minun-fc", "cortex-m4", work / "minun-fc-obj")
    return {"cmsis": cmsis, "minun": {"instructions": list(run.latencies), **minun},
            "tflm_fc_outputs": theirs.astype(int).tolist()}


def render(r: dict) -> str:
    m4, uno, tflm, fc = r["cortex-m4"], r["avr"], r["tflm"], r["fc"]
    instr = m4["instructions"]
    stack = m4["stack"]
    ratio = np.median(fc["minun"]["instructions"]) / np.median(fc["cmsis"]["instructions"])
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
        "Beside CMSIS-NN: micro_speech's DEPTHWISE_CONV_2D and FULLY_CONNECTED as Arm's "
        "CMSIS-NN s8 calls (third_party/cmsis-nn; arm_depthwise_conv_wrapper_s8 of "
        "multiplier 8, stride 2, and arm_fully_connected_s8, with the file's own integers and "
        "TFLM's multipliers), and minun's C of the same graph (the model's output moved to "
        "the FULLY_CONNECTED: the third_party copy has no softmax, the 4-value softmax is "
        "left out on both sides), on the same QEMU M4 at -Os; both output TFLM's "
        "interpreter's integers on every clip:", "",
        "| up to the FULLY_CONNECTED | M4 instructions (median of 4) | flash (code and "
        "weights) |",
        "|---|---:|---:|",
        f"| CMSIS-NN s8 | {int(np.median(fc['cmsis']['instructions'])):,} | "
        f"{fc['cmsis']['flash']:,} B (the kernels' symbols the image keeps) |",
        f"| minun zero-skew8 | {int(np.median(fc['minun']['instructions'])):,} | "
        f"{fc['minun']['flash']:,} B (model.c's .text + .rodata + .data) |", "",
        f"minun takes {ratio:.2f}x CMSIS-NN's instructions: its convolution's window rows "
        "are the zero-skew offset dot kernel (SXTAB16 + SMLAD), and it copies no im2col "
        "buffer.", ""]
    return "\n".join(lines)
