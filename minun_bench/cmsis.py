"""The "Beside CMSIS-NN" section of BENCHMARKS.md (`tools/bench.py --cmsis`, issue 31):
Arm's CMSIS-NN s8 kernels (third_party/cmsis-nn, benchmarking only, never linked into
generated code) and minun's configurations on the same networks (mnist-8 with its real
weights, the dense and conv shapes of the "Kernels" section), on the same QEMU Cortex-M4
with the same instruction counter (targets.build_and_run / run_model), at -Os and -O2.

CMSIS-NN's networks are quantized by TFLite's int8 rules (tflite_int8.py) and every output
of every run is checked against that numpy model of TFLite's integer arithmetic on random
int8 inputs. Deterministic: seeded data, exact instruction counts, an Agg chart.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

from minun_bench import tflite_int8 as tfl
from minun_bench.suite import KERNELS, KERNELS_DIR, REAL, ROOT, _kernel_data

SECTION = "## Beside CMSIS-NN"
CMSIS = ROOT / "third_party" / "cmsis-nn"
PLOT = "benchmarks/cmsis.png"
TARGET = "cortex-m4"
OPTS = (("size", "-Os"), ("speed", "-O2"))
INPUTS = 2  # random int8 inputs per network and build
MNIST = REAL / "onnx-mnist-8"
MNIST_MACS = 28 * 28 * 8 * 25 + 14 * 14 * 16 * 200 + 256 * 10
_CONV = ["ConvolutionFunctions/" + f for f in (
    "arm_convolve_wrapper_s8.c", "arm_convolve_s8.c", "arm_convolve_1x1_s8_fast.c",
    "arm_convolve_1x1_s8.c", "arm_convolve_1_x_n_s8.c", "arm_convolve_get_buffer_sizes_s8.c",
    "arm_nn_mat_mult_kernel_s8_s16.c", "arm_nn_mat_mult_kernel_row_offset_s8_s16.c")] + [
    "NNSupportFunctions/" + f for f in (
        "arm_nn_mat_mult_nt_t_s8.c", "arm_nn_mat_mul_core_1x_s8.c",
        "arm_nn_mat_mul_core_4x_s8.c", "arm_q7_to_q15_with_offset.c",
        "arm_s8_to_s16_unordered_with_offset.c")]
SOURCES = {8: {"conv": _CONV, "pool": ["PoolingFunctions/arm_max_pool_s8.c"],
               "avgpool": ["PoolingFunctions/arm_avgpool_s8.c",
                           "PoolingFunctions/arm_avgpool_get_buffer_sizes_s8.c"],
               "dw": ["ConvolutionFunctions/" + f for f in (
                   "arm_depthwise_conv_wrapper_s8.c", "arm_depthwise_conv_s8.c",
                   "arm_depthwise_conv_s8_opt.c", "arm_depthwise_conv_3x3_s8.c",
                   "arm_nn_depthwise_conv_s8_core.c",
                   "arm_depthwise_conv_get_buffer_sizes_s8.c")]
               + ["NNSupportFunctions/arm_q7_to_q15_with_offset.c"],
               "fc": ["FullyConnectedFunctions/arm_fully_connected_s8.c",
                      "NNSupportFunctions/arm_nn_vec_mat_mult_t_s8.c"]},
           16: {"conv": ["ConvolutionFunctions/" + f for f in (
               "arm_convolve_wrapper_s16.c", "arm_convolve_s16.c",
               "arm_convolve_get_buffer_sizes_s16.c", "arm_nn_mat_mult_kernel_s16.c")],
                "pool": ["PoolingFunctions/arm_max_pool_s16.c"],
                "avgpool": ["PoolingFunctions/arm_avgpool_s16.c",
                            "PoolingFunctions/arm_avgpool_get_buffer_sizes_s16.c"],
                "dw": ["ConvolutionFunctions/" + f for f in (
                    "arm_depthwise_conv_wrapper_s16.c", "arm_depthwise_conv_s16.c",
                    "arm_depthwise_conv_fast_s16.c",
                    "arm_depthwise_conv_get_buffer_sizes_s16.c")],
                "fc": ["FullyConnectedFunctions/arm_fully_connected_s16.c",
                       "NNSupportFunctions/arm_nn_vec_mat_mult_t_s16.c"]}}
MINUN_CONFIGS = (("fixed16", dict(bits=16)), ("fixed8", dict(bits=8)),
                 ("zero-skew8", dict(repr="zero-skew", bits=8)),
                 ("zero-skew8 per-channel", dict(repr="zero-skew", bits=8, per_channel=True)))


# ---- networks: float weights -> TFLite int8 layers --------------------------------------

def _act(lo: float, hi: float, bits: int = 8) -> tuple[float, int]:
    """TFLite's activation parameters: asymmetric int8, symmetric int16 (zero point 0)."""
    if bits == 8:
        return tfl.affine.choose_params(lo, hi)
    return max(abs(lo), abs(hi)) / 32767.0, 0


def quantize_network(layers: list[dict], calibration: np.ndarray, s_in: float, zp_in: int,
                     bits: int = 8) -> list[dict]:
    """Float layers (conv/pool/fc, NHWC) -> int8 (or 16x8) layers by TFLite's rules,
    activation ranges from the float network on `calibration` (N, H, W, C). Conv/fc "relu"
    clamps at the output's zero point (TFLite's fused ReLU)."""
    xs = list(calibration)
    out, s, zp = [], s_in, zp_in
    lo, hi = tfl.affine.int_range(bits)
    for layer in layers:
        q = dict(layer, zp_in=zp, s_in=s, bits=bits)
        if layer["op"] in ("pool", "avgpool"):
            pool = tfl.max_pool if layer["op"] == "pool" else tfl.avg_pool_float
            xs = [pool(x, layer["k"]) for x in xs]
            q.update(zp_out=zp, s_out=s, lo=lo, hi=hi)
        else:
            if layer["op"] == "conv":
                xs = [tfl.conv_float(x, layer["w"], layer["b"], layer["pad"]) for x in xs]
            elif layer["op"] == "dw":
                xs = [tfl.depthwise_float(x, layer["w"], layer["b"], layer["pad"]) for x in xs]
            else:
                xs = [layer["w"] @ x.reshape(-1) + layer["b"] for x in xs]
            if layer.get("relu"):
                xs = [np.maximum(x, 0.0) for x in xs]
            s_out, zp_out = _act(min(float(x.min()) for x in xs),
                                 max(float(x.max()) for x in xs), bits)
            q.update(zp_out=zp_out, s_out=s_out, lo=zp_out if layer.get("relu") else lo,
                     hi=hi, p=tfl.layer_params(layer["w"], layer["b"], s, s_out,
                                                layer["op"] != "fc"))
            s, zp = s_out, zp_out
        out.append(q)
    return out


def reference(net: list[dict], x: np.ndarray) -> np.ndarray:
    """TFLite's integer inference of the int8 (16x8) layers on one input (H, W, C)."""
    for q in net:
        if q["op"] == "conv":
            x = tfl.conv_int8(x, q["p"], q["pad"], q["zp_in"], q["zp_out"], q["lo"], q["hi"],
                              q["bits"])
        elif q["op"] == "dw":
            x = tfl.depthwise_int8(x, q["p"], q["pad"], q["zp_in"], q["zp_out"], q["lo"],
                                   q["hi"], q["bits"])
        elif q["op"] == "pool":
            x = np.clip(tfl.max_pool(x, q["k"]), q["lo"], q["hi"])
        elif q["op"] == "avgpool":
            x = tfl.avg_pool_int(x, q["k"], q["lo"], q["hi"])
        else:
            x = tfl.fc_int8(x, q["p"], q["zp_in"], q["zp_out"], q["lo"], q["hi"], q["bits"])
    return np.asarray(x).reshape(-1)


def mnist8_layers() -> tuple[list[dict], np.ndarray]:
    """mnist-8's float layers in NHWC/OHWI (its 16x4x4 -> 10 matrix reordered from NCHW's
    flattening to NHWC's) and its 3 test digits (28, 28, 1) as calibration."""
    import onnx
    from onnx import numpy_helper

    g = onnx.load(str(MNIST / "model.onnx")).graph
    t = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in g.initializer}
    fc = t["Parameter193"].reshape(16, 4, 4, 10).transpose(3, 1, 2, 0).reshape(10, 256)
    layers = [
        {"op": "conv", "w": t["Parameter5"].transpose(0, 2, 3, 1),
         "b": t["Parameter6"].reshape(-1), "pad": 2, "relu": True},
        {"op": "pool", "k": 2},
        {"op": "conv", "w": t["Parameter87"].transpose(0, 2, 3, 1),
         "b": t["Parameter88"].reshape(-1), "pad": 2, "relu": True},
        {"op": "pool", "k": 3},
        {"op": "fc", "w": fc, "b": t["Parameter194"].reshape(-1)},
    ]
    digits = np.load(MNIST / "test.npy")[:, 1:].reshape(-1, 28, 28, 1).astype(np.float64)
    return layers, digits


ZOO_DSCNN = ROOT / "test" / "zoo" / "torch" / "dscnn_ts.onnx"
ZOO_DIGITS = ROOT / "test" / "zoo" / "torch" / "data" / "digits01-train.npz"


def dscnn_layers() -> tuple[list[dict], np.ndarray]:
    """The zoo's depthwise-separable CNN (8x8 digits: conv 3x3, depthwise 3x3, pointwise,
    average pool 2, depthwise 3x3, pointwise, global average pool as a 4x4 average pool,
    dense) and its first 64 training digits (8, 8, 1) as calibration."""
    import onnx
    from onnx import numpy_helper

    g = onnx.load(str(ZOO_DSCNN)).graph
    t = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in g.initializer}
    convs = [n for n in g.node if n.op_type == "Conv"]
    layers = []
    for n in convs:
        w, b = t[n.input[1]], t[n.input[2]]
        pad = (w.shape[2] - 1) // 2
        group = next((a.i for a in n.attribute if a.name == "group"), 1)
        if group > 1:  # depthwise (group = channels, multiplier 1)
            layers.append({"op": "dw", "w": w[:, 0], "b": b, "pad": pad, "relu": True})
        else:
            layers.append({"op": "conv", "w": w.transpose(0, 2, 3, 1), "b": b, "pad": pad,
                           "relu": True})
        if len(layers) == 3:
            layers.append({"op": "avgpool", "k": 2})
    layers += [{"op": "avgpool", "k": 4},
               {"op": "fc", "w": t["18.weight"], "b": t["18.bias"]}]
    digits = np.load(ZOO_DIGITS)["x"][:64].reshape(-1, 8, 8, 1).astype(np.float64)
    return layers, digits


def macs(layers: list[dict], shape: tuple[int, int, int]) -> int:
    """Multiply-accumulates of the quantized conv, depthwise and fc layers, every tap
    (padding included, as MNIST_MACS counts)."""
    return sum(oh * ow * int(np.prod(q["p"]["w"].shape))
               for q, (_, (oh, ow, _)) in zip(layers, _shapes(layers, shape)) if "p" in q)


def networks(bits: int = 8) -> list[dict]:
    """Each network: name, MACs, input shape and its int8 (bits 8) or 16x8 (bits 16)
    layers. mnist-8's input is its 0..255 pixels (int8: scale 1, zero point -128); the
    kernels' data are suite.py's seeded kernel data (the same values minun's fixed16
    kernels run), as reals in [-1, 1)."""
    layers, digits = mnist8_layers()
    d = _kernel_data(np.random.default_rng(2026))
    kd = {k: v / 32768.0 for k, v in d.items()}
    s_k, zp_k = _act(-1.0, 1.0, bits)
    s_m, zp_m = _act(0.0, 255.0, bits)
    dense = [{"op": "fc", "w": kd["W"], "b": np.zeros(32)}]
    conv = [{"op": "conv", "w": kd["F"].transpose(3, 0, 1, 2), "b": np.zeros(8), "pad": 1}]
    ds_layers, ds_digits = dscnn_layers()
    s_d, zp_d = _act(float(ds_digits.min()), float(ds_digits.max()), bits)
    dscnn = quantize_network(ds_layers, ds_digits, s_d, zp_d, bits)
    return [
        {"name": "mnist-8", "macs": MNIST_MACS, "shape": (28, 28, 1),
         "layers": quantize_network(layers, digits, s_m, zp_m, bits)},
        {"name": KERNELS[0].name, "macs": KERNELS[0].macs, "shape": (1, 1, 64),
         "layers": quantize_network(dense, kd["XD"].reshape(1, 1, 1, 64), s_k, zp_k, bits)},
        {"name": KERNELS[1].name, "macs": KERNELS[1].macs, "shape": (6, 6, 4),
         "layers": quantize_network(conv, kd["XC"].reshape(1, 6, 6, 4), s_k, zp_k, bits)},
        {"name": "zoo dscnn", "macs": macs(dscnn, (8, 8, 1)), "shape": (8, 8, 1),
         "layers": dscnn},
    ]


# ---- the C program -----------------------------------------------------------------------

def _arr(ctype: str, name: str, values) -> str:
    vals = ",".join(str(int(v)) for v in np.asarray(values).reshape(-1))
    return f"const {ctype} {name}[] = {{{vals}}};\n"


def _shapes(net: list[dict], shape: tuple[int, int, int]) -> list[tuple]:
    """(input shape, output shape) of every layer, NHWC without N."""
    out = []
    for q in net:
        h, w, c = shape
        if q["op"] in ("conv", "dw"):
            o, kh, kw = q["p"]["w"].shape[:3]
            new = (h + 2 * q["pad"] - kh + 1, w + 2 * q["pad"] - kw + 1, o)
        elif q["op"] in ("pool", "avgpool"):
            new = (h // q["k"], w // q["k"], c)
        else:
            new = (1, 1, q["p"]["w"].shape[0])
        out.append((shape, new))
        shape = new
    return out


def write_program(net: dict, inputs: np.ndarray, work: Path) -> list[Path]:
    """weights.c (the quantized parameters), net.c (one CMSIS-NN call per layer, the
    activations in two ping-pong buffers) and main.c (the inputs, the markers around each
    inference, the outputs printed). Returns the sources, main.c first."""
    work.mkdir(parents=True, exist_ok=True)
    layers, shapes = net["layers"], _shapes(net["layers"], net["shape"])
    bits = layers[0]["bits"]
    t, sfx, bias_t = ("int8_t", "s8", "int32_t") if bits == 8 else ("int16_t", "s16", "int64_t")
    biggest = max(int(np.prod(s)) for pair in shapes for s in pair)
    weights = ["#include <stdint.h>\n"]
    body, sizes, statics = [], [], []
    src, dst = "in", "buf_a"
    for i, (q, ((h, w, c), (oh, ow, oc))) in enumerate(zip(layers, shapes)):
        act = f"{{{q['lo']}, {q['hi']}}}"
        statics.append(f"static const cmsis_nn_dims in{i} = {{1, {h}, {w}, {c}}};\n"
                       f"static const cmsis_nn_dims out{i} = {{1, {oh}, {ow}, {oc}}};\n")
        if q["op"] in ("pool", "avgpool"):
            k = q["k"]
            fn = "max_pool" if q["op"] == "pool" else "avgpool"
            statics.append(f"static const cmsis_nn_pool_params pp{i} = {{{{{k}, {k}}}, {{0, 0}},"
                           f" {act}}};\nstatic const cmsis_nn_dims f{i} = {{1, {k}, {k}, 1}};\n")
            body.append(f"    arm_{fn}_{sfx}(&ctx, &pp{i}, &in{i}, {src}, &f{i}, &out{i}, "
                        f"{dst});")
            if fn == "avgpool":
                sizes.append(f"arm_avgpool_{sfx}_get_buffer_size({ow}, {c})")
        else:
            p = q["p"]
            per = slice(None) if q["op"] != "fc" else slice(0, 1)  # fc: per tensor
            wq = p["w"].transpose(1, 2, 0) if q["op"] == "dw" else p["w"]  # dw: 1 x KH x KW x C
            weights += [_arr("int8_t", f"w{i}", wq), _arr(bias_t, f"b{i}", p["bias"]),
                        _arr("int32_t", f"m{i}", p["mult"][per]),
                        _arr("int32_t", f"s{i}", p["shift"][per])]
            ext = (f"extern const int8_t w{i}[];\nextern const {bias_t} b{i}[];\n"
                   f"extern const int32_t m{i}[], s{i}[];\n"
                   f"static const cmsis_nn_dims bd{i} = {{1, 1, 1, {oc}}};\n")
            if q["op"] == "dw":
                _, kh, kw = p["w"].shape
                pad = q["pad"]
                statics.append(
                    ext + f"static const cmsis_nn_dims f{i} = {{1, {kh}, {kw}, {oc}}};\n"
                    f"static const cmsis_nn_dw_conv_params dp{i} = {{{-q['zp_in']}, "
                    f"{q['zp_out']}, 1, {{1, 1}}, {{{pad}, {pad}}}, {{1, 1}}, {act}}};\n"
                    f"static const cmsis_nn_per_channel_quant_params qp{i} = "
                    f"{{(int32_t *)m{i}, (int32_t *)s{i}}};\n")
                body.append(f"    arm_depthwise_conv_wrapper_{sfx}(&ctx, &dp{i}, &qp{i}, &in{i}, "
                            f"{src}, &f{i}, w{i}, &bd{i}, b{i}, &out{i}, {dst});")
                sizes.append(f"arm_depthwise_conv_wrapper_{sfx}_get_buffer_size(&dp{i}, &in{i}, "
                             f"&f{i}, &out{i})")
            elif q["op"] == "conv":
                _, kh, kw, _ = p["w"].shape
                pad = q["pad"]
                bias = f"b{i}"
                if bits == 16:  # the s16 convolution takes its bias with its width
                    ext += f"static const cmsis_nn_bias_data bias{i} = {{b{i}, false}};\n"
                    bias = f"&bias{i}"
                statics.append(
                    ext + f"static const cmsis_nn_dims f{i} = {{{oc}, {kh}, {kw}, {c}}};\n"
                    f"static const cmsis_nn_conv_params cp{i} = {{{-q['zp_in']}, {q['zp_out']}, "
                    f"{{1, 1}}, {{{pad}, {pad}}}, {{1, 1}}, {act}}};\n"
                    f"static const cmsis_nn_per_channel_quant_params qp{i} = "
                    f"{{(int32_t *)m{i}, (int32_t *)s{i}}};\n")
                body.append(f"    arm_convolve_wrapper_{sfx}(&ctx, &cp{i}, &qp{i}, &in{i}, {src}, "
                            f"&f{i}, w{i}, &bd{i}, {bias}, &out{i}, {dst});")
                sizes.append(f"arm_convolve_wrapper_{sfx}_get_buffer_size(&cp{i}, &in{i}, &f{i}, "
                             f"&out{i})")
            else:
                n = h * w * c
                statics.append(
                    ext + f"static const cmsis_nn_dims f{i} = {{{n}, 1, 1, {oc}}};\n"
                    f"static const cmsis_nn_fc_params fp{i} = {{{-q['zp_in']}, 0, "
                    f"{q['zp_out']}, {act}}};\n")
                body.append(f"    {{ cmsis_nn_per_tensor_quant_params qp = {{m{i}[0], s{i}[0]}};\n"
                            f"      arm_fully_connected_{sfx}(&ctx, &fp{i}, &qp, &in{i}, {src}, "
                            f"&f{i}, w{i}, &bd{i}, b{i}, &out{i}, {dst}); }}")
        src, dst = dst, ("buf_b" if dst == "buf_a" else "buf_a")
    (work / "weights.c").write_text("".join(weights))
    need = " ".join(f"if ({s} > n) n = {s};" for s in sizes)
    (work / "net.c").write_text(
        f"/* CMSIS-NN {sfx} calls of one network (minun_bench/cmsis.py). */\n"
        '#include "arm_nnfunctions.h"\n\n' + "".join(statics)
        + f"static {t} buf_a[{biggest}], buf_b[{biggest}];\n"
        "static int32_t scratch[SCRATCH_BYTES / 4];\n\n"
        f"int32_t net_buffer_size(void)\n{{\n    int32_t n = 0;\n    {need}\n    return n;\n}}\n\n"
        f"const {t} *net(const {t} *in)\n{{\n"
        "    cmsis_nn_context ctx = {scratch, sizeof scratch};\n"
        + "\n".join(body) + f"\n    return {src};\n}}\n")
    n_out = int(np.prod(shapes[-1][1]))
    (work / "main.c").write_text(
        '#include "minun_target.h"\n\n'
        f"int32_t net_buffer_size(void);\nconst {t} *net(const {t} *in);\n"
        + _arr(t, "inputs", inputs).replace("const", "static const")
        + "\nint main(void)\n{\n"
        "    if (net_buffer_size() > SCRATCH_BYTES) minun_exit(3);\n"
        f"    for (int i = 0; i < {len(inputs)}; i++) {{\n"
        "        minun_marker_start();\n"
        f"        const {t} *y = net(&inputs[i * {inputs[0].size}]);\n"
        "        minun_marker_end();\n"
        f"        for (int j = 0; j < {n_out}; j++) {{ minun_print_i32(y[j]); minun_putc(' '); }}\n"
        "        minun_putc('\\n');\n    }\n    minun_exit(0);\n}\n")
    srcs = sorted({s for q in layers for s in SOURCES[bits][q["op"]]})
    return [work / "main.c", work / "net.c", work / "weights.c",
            *(CMSIS / "Source" / s for s in srcs)]


def model_flash(elf: Path, objects: list[Path]) -> int:
    """Flash of the symbols (code, constants, initialized data) that the given objects
    define and the linked program keeps: the model's code and weights, without the
    harness, the inputs or the C library."""
    from minun_mlir.targets.boards import get_board

    def nm(path: Path, *flags: str) -> list[list[str]]:
        out = subprocess.run([get_board(TARGET).nm_tool, *flags, str(path)], check=True,
                             capture_output=True, text=True).stdout
        return [line.split() for line in out.splitlines()]
    names = {p[-1] for o in objects for p in nm(o, "--defined-only") if p[-2] in "TtRrDd"}
    return sum(int(p[1], 16) for p in nm(elf, "-S", "--defined-only")
               if len(p) == 4 and p[2] in "TtRrDd" and p[3] in names)


def run_cmsis(net: dict, work: Path, seed: int = 31, opts=OPTS) -> dict:
    """Build and run one network at -Os and -O2 on INPUTS random int8 inputs; every output
    checked against reference(). Instructions are the median over the inputs."""
    from minun_mlir.targets import build_and_run

    rng = np.random.default_rng(seed)
    bits = net["layers"][0]["bits"]
    lo, hi = tfl.affine.int_range(bits)
    inputs = rng.integers(lo, hi + 1, (INPUTS, *net["shape"]), dtype=np.int64)
    want = [reference(net["layers"], x) for x in inputs]
    record = {"network": net["name"], "macs": net["macs"]}
    slug = f"{net['name'].split()[0]}-s{bits}"
    for opt, flag in opts:
        wd = work / f"cmsis-{slug}-{opt}"
        sources = write_program(net, inputs, wd / "src")
        r = build_and_run(sources, TARGET, include_dirs=[CMSIS / "Include"],
                          defines={"SCRATCH_BYTES": "4096"}, cflags=[flag],
                          name=f"cmsis-{slug}", work_dir=wd / "build")
        got = [np.array(line.split(), dtype=np.int64) for line in r.output.strip().splitlines()]
        if len(got) != INPUTS or any(not np.array_equal(g, w) for g, w in zip(got, want)):
            raise RuntimeError(f"CMSIS-NN s{bits} {net['name']} at {flag}: outputs differ from "
                               "TFLite's integer arithmetic")
        objs = sorted((wd / "build").glob("*.o"))
        record[opt] = {"instructions": float(np.median(r.latencies)),
                       "flash": model_flash(wd / "build" / f"cmsis-{slug}.elf",
                                            [o for o in objs if not o.name.endswith("_main.o")])}
    return record


# ---- minun on the same networks ----------------------------------------------------------

def _minun_run(l2, inputs: np.ndarray, name: str, work: Path, want: np.ndarray) -> dict:
    """minun's C of one L2 module on the M4 at -Os and -O2: median instructions over the
    inputs, model flash (the objects of model.c and its companions). `want`: the labels
    (1-D) or stored outputs (2-D) the evaluator gives; a run that differs raises."""
    from minun_mlir.codegen import emit_c
    from minun_mlir.targets import run_model

    c_dir = work / f"{name}-c"
    emit_c(l2, TARGET, c_dir)
    rec = {}
    for opt, _ in OPTS:
        wd = work / f"{name}-{opt}"
        r = run_model(c_dir, TARGET, inputs, name=name, work_dir=wd, opt=opt)
        got = r.labels if want.ndim == 1 else r.outputs.reshape(want.shape)
        if not np.array_equal(got, want):
            raise RuntimeError(f"minun {name} at {opt}: C differs from the evaluator")
        elf = max(wd.glob(f"{name}_*.elf"), key=lambda p: p.stat().st_mtime)
        rec[opt] = {"instructions": float(r.latency_median),
                    "flash": model_flash(elf, sorted(wd.glob("*.o")))}
    return rec


def run_minun(work: Path, log=print) -> list[dict]:
    """minun's configurations on mnist-8 (its first INPUTS test digits; labels checked
    against the evaluator), the zoo's dscnn (calibrated on the zoo's 200 training digits,
    run on the first INPUTS) and the two kernel programs (suite.py's kernel data)."""
    from minun_mlir.driver import Options, compile_model
    from minun_mlir.frontends.seedot import load_program
    from minun_mlir.numerics.l2_eval import evaluate_l2, storage_inputs
    from minun_mlir.pipeline import lower_to_l2

    d = _kernel_data(np.random.default_rng(2026))
    zoo = np.load(ZOO_DIGITS)  # the zoo's training digits, label first (ort.zoo_models)
    np.save(work / "dscnn-train.npy", np.concatenate(
        [zoo["y"][:, None].astype(np.float32), zoo["x"].reshape(len(zoo["x"]), -1)], axis=1))
    np.savez(work / "dense.npz", W=d["W"] / 32768.0)
    np.savez(work / "conv3x3.npz", F=d["F"] / 32768.0)
    rows = []
    for label, quantize in MINUN_CONFIGS:
        slug = label.replace(" ", "-")
        result = compile_model(MNIST / "model.onnx", Options(**quantize, target=TARGET),
                               train=MNIST / "test.npy", test=MNIST / "test.npy",
                               name="onnx-mnist-8")
        inputs = storage_inputs(result.l2, result.test.features[:INPUTS])
        row = {"config": label, "mnist-8": _minun_run(result.l2, inputs, f"mnist-{slug}", work,
                                                      result.predictions[:INPUTS])}
        result = compile_model(ZOO_DSCNN, Options(**quantize, target=TARGET),
                               train=work / "dscnn-train.npy", test=work / "dscnn-train.npy",
                               name="zoo-dscnn")
        inputs = storage_inputs(result.l2, result.test.features[:INPUTS])
        row["zoo dscnn"] = _minun_run(result.l2, inputs, f"dscnn-{slug}", work,
                                      result.predictions[:INPUTS])
        for k in KERNELS:
            stem = k.program.removesuffix(".sd")
            x = (d["XD"] if k.number == 1 else d["XC"]).reshape(1, -1) / 32768.0
            profile = {}
            if quantize.get("repr") == "zero-skew":  # its output range: profiled on x
                np.save(work / f"{stem}-train.npy", np.hstack([[[0.0]], x]))
                profile = {"data": str(work / f"{stem}-train.npy")}
            l2 = lower_to_l2(load_program(KERNELS_DIR / k.program, work / f"{stem}.npz"),
                             **quantize, **profile)
            want = np.asarray(evaluate_l2(l2, x).outputs[0]).reshape(1, -1)
            row[k.name] = _minun_run(l2, storage_inputs(l2, x), f"{stem}-{slug}", work, want)
        log(f"minun {label}: " + ", ".join(
            f"{n} {v['size']['instructions']:,.0f}/{v['speed']['instructions']:,.0f}"
            for n, v in row.items() if n != "config"))
        rows.append(row)
    return rows


# ---- the report --------------------------------------------------------------------------

def measure(work: Path, log=print) -> dict:
    """CMSIS-NN s8 and s16 on every network, then minun's configurations: the section's
    record."""
    record = {}
    for bits in (8, 16):
        runs = record[f"cmsis_s{bits}"] = []
        for net in networks(bits):
            runs.append(run_cmsis(net, work))
            log(f"CMSIS-NN s{bits} {net['name']}: " + " / ".join(
                f"{runs[-1][o]['instructions']:,.0f}" for o, _ in OPTS))
    return record | {"minun": run_minun(work, log)}


def _rows(record: dict) -> list[tuple[str, str, int, dict]]:
    """(network, configuration, MACs, {opt: {instructions, flash}}) in table order."""
    out = []
    for c, c16 in zip(record["cmsis_s8"], record["cmsis_s16"]):
        out.append((c["network"], "CMSIS-NN s8", c["macs"], c))
        out.append((c["network"], "CMSIS-NN s16", c["macs"], c16))
        out += [(c["network"], f"minun {m['config']}", c["macs"], m[c["network"]])
                for m in record["minun"]]
    return out


def render(record: dict) -> str:
    rows = _rows(record)
    base = {net: r for net, cfg, _, r in rows if cfg == "CMSIS-NN s8"}
    out = [SECTION, "",
           "Arm's CMSIS-NN (third_party/cmsis-nn, see its SOURCE.md; benchmarking only, never "
           "in generated code), s8 and s16 (TFLite's 16x8: int16 symmetric activations, int8 "
           "weights, int64 biases), built with arm-none-eabi-gcc 12 `-mcpu=cortex-m4 -mthumb` at "
           "-Os and -O2, beside minun's C of the same networks, all on the same QEMU "
           "mps2-an386 Cortex-M4 with the same instruction counter (exact instructions per "
           "inference, the median of 2 inputs). CMSIS-NN's networks are quantized by TFLite's "
           "int8 rules (per-channel symmetric conv weights, per-tensor fc weights, asymmetric "
           "activations, QuantizeMultiplier's multipliers and shifts) and run through "
           "`arm_convolve_wrapper_s8/s16` (fused ReLU), `arm_max_pool_s8/s16` and "
           "`arm_fully_connected_s8/s16` on random int8/int16 inputs; every output is "
           "checked against "
           "a numpy model of TFLite's integer arithmetic (minun_bench/tflite_int8.py). minun "
           "runs mnist-8 on its first test digits, the zoo's depthwise-separable dscnn on its "
           "first training digits and the kernels on the \"Kernels\" section's seeded data, "
           "its C checked against its evaluator (labels; the kernels' outputs). The zoo "
           "dscnn (8x8 digits: conv 3x3, depthwise 3x3, pointwise, average pool, depthwise, "
           "pointwise, global average pool, dense) runs in CMSIS-NN through "
           "`arm_depthwise_conv_wrapper_s8/s16` and `arm_avgpool_s8/s16` (its global pool as "
           "a 4x4 average pool). MACs count every tap, padding included (the kernels': real "
           "taps only). Model flash: the code, "
           "constants and initialized data the network's own objects (model.c; CMSIS-NN's "
           "sources, its weights and calls) keep in the linked program, without the harness, "
           "the inputs or the C library. Produced by `tools/bench.py --cmsis`.", "",
           f"![instructions per MAC]({PLOT})", "",
           "| network (MACs) | configuration | -Os instructions (per MAC) | "
           "-O2 instructions (per MAC) | / CMSIS-NN s8 (-Os, -O2) | model flash -Os | "
           "model flash -O2 |", "|---|---|---|---|---|---|---|"]
    for net, cfg, macs, r in rows:
        cells = [f"{r[o]['instructions']:,.0f} ({r[o]['instructions'] / macs:.2f})"
                 for o, _ in OPTS]
        ratio = ", ".join(f"{r[o]['instructions'] / base[net][o]['instructions']:.2f}x"
                          for o, _ in OPTS)
        out.append(f"| {net} ({macs:,}) | {cfg} | " + " | ".join(cells) + f" | {ratio} | "
                   + " | ".join(f"{r[o]['flash']:,} B" for o, _ in OPTS) + " |")
    return "\n".join(out) + "\n"


def plot(record: dict) -> bytes:
    """Instructions per MAC per network and configuration, -Os and -O2 side by side, as
    PNG bytes; deterministic (Agg, bundled fonts, no date or version in the metadata)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = _rows(record)
    nets = list(dict.fromkeys(r[0] for r in rows))
    cfgs = list(dict.fromkeys(r[1] for r in rows))
    per = {(n, c): (r, m) for n, c, m, r in rows}
    with matplotlib.rc_context({"font.size": 8, "font.family": "DejaVu Sans"}):
        fig = Figure(figsize=(10, 4.2))
        FigureCanvasAgg(fig)
        width = 0.8 / len(cfgs)
        for j, (opt, flag) in enumerate(OPTS):
            ax = fig.add_subplot(1, len(OPTS), j + 1)
            for k, cfg in enumerate(cfgs):
                xs = [i + (k - (len(cfgs) - 1) / 2) * width for i in range(len(nets))]
                ax.bar(xs, [per[n, cfg][0][opt]["instructions"] / per[n, cfg][1] for n in nets],
                       width, label=cfg)
            ax.set_xticks(range(len(nets)), [n.split(",")[0].removesuffix(" matrix x vector")
                                             .removeprefix("zoo ") for n in nets])
            ax.set_title(f"Cortex-M4 (QEMU), {flag}")
            ax.set_ylabel("instructions per MAC")
            ax.grid(axis="y", alpha=0.3)
        fig.axes[0].legend(fontsize=7, loc="upper left", frameon=False)
        fig.subplots_adjust(top=0.9, bottom=0.1, left=0.06, right=0.99, wspace=0.2)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    return buf.getvalue()
