"""The zero-skew int8 representation's C computes the evaluator's integers: on x86 for
every input of every suite model's test set, and on the simulated boards, the Uno
(simavr) and the Cortex-M4 (QEMU), for 2 inputs of every suite model (each fits the
Uno's 2 KB of RAM). Labels and the stored int8 / int32 scores are compared. Prints sizes
and latencies (-s)."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_support import (
    SUITE,
    build_host,
    expected,
    expected_for,
    quantized,
    run_host,
)
from test_crosscheck import assert_same

from minun_mlir.codegen import emit_c
from minun_mlir.targets import run_model

CONFIG = "zero-skew8"
PER_CHANNEL = "zero-skew8-pc"  # per-channel weights (quantize{per-channel=true})
N_BOARD = 2
AVR_RAM_BUDGET = 2048 - 256  # as test_targets.py: leave the stack 256 B
FAST = ("protonn-breast-cancer", "protonn-wine", "bonsai-wine", "bonsai-breast-cancer")


@pytest.mark.parametrize("config", [CONFIG, PER_CHANNEL])
@pytest.mark.parametrize("model", sorted(SUITE))
def test_x86_build_equals_evaluator(model, config, tmp_path):
    name = f"suite/{model}"
    l2, _ = quantized(name, config)
    exp = expected_for(name, config)
    emit_c(l2, "x86", tmp_path)
    exe = build_host(tmp_path, tmp_path / "host")
    labels, scores = run_host(exe, exp.inputs, exp.scores.dtype, exp.scores.shape[1])
    assert_same(labels, scores, exp)


@pytest.mark.parametrize("model,target", [
    pytest.param(m, t, marks=[] if m in FAST else [pytest.mark.slow])
    for t in ("cortex-m4", "avr") for m in sorted(SUITE)])
def test_board_equals_evaluator(model, target, tmp_path, capsys):
    name = f"suite/{model}"
    l2, _ = quantized(name, CONFIG)
    exp = expected_for(name, CONFIG, limit=N_BOARD)
    emit_c(l2, target, tmp_path)
    r = run_model(tmp_path, target, exp.inputs[:N_BOARD], name=model, config=CONFIG,
                  ram_budget=AVR_RAM_BUDGET if target == "avr" else None)
    np.testing.assert_array_equal(r.labels, exp.labels[:N_BOARD], err_msg=target)
    np.testing.assert_array_equal(r.outputs, exp.scores[:N_BOARD], err_msg=target)
    with capsys.disabled():
        print(f"\n  {model} {CONFIG} {target}: flash {r.flash_bytes} B, RAM {r.ram_bytes} B, "
              f"stack {r.stack_bytes} B, {r.latency_median:,.0f} {r.latency_unit}")


@pytest.mark.parametrize("model,target", [
    (m, t) for t in ("cortex-m4", "avr") for m in ("lenet-digits-binary", "protonn-wine")])
def test_board_per_channel_equals_evaluator(model, target, tmp_path):
    """Per-channel weights on the boards: the multiplier and shift tables in flash."""
    name = f"suite/{model}"
    l2, _ = quantized(name, PER_CHANNEL)
    exp = expected_for(name, PER_CHANNEL, limit=N_BOARD)
    emit_c(l2, target, tmp_path)
    assert "zs_requantize" in (tmp_path / "model.c").read_text()
    r = run_model(tmp_path, target, exp.inputs[:N_BOARD], name=model, config=PER_CHANNEL,
                  ram_budget=AVR_RAM_BUDGET if target == "avr" else None)
    np.testing.assert_array_equal(r.labels, exp.labels[:N_BOARD], err_msg=target)
    np.testing.assert_array_equal(r.outputs, exp.scores[:N_BOARD], err_msg=target)


@pytest.mark.parametrize("model", ["lenet-digits-binary", "bonsai-breast-cancer",
                                   "fastgrnn-digits-binary"])
def test_float_wrapper_quantizes_like_the_evaluator(model, tmp_path):
    """minun_predict_float(x) = the evaluator on reals: round(x / s) + zp (ties away from
    zero, saturated) in, scores dequantized as s (q - zp) out; also on inputs beyond the
    profiled range (saturation) and half way between two steps."""
    from minun_mlir.formats.zero_skew.representation import el_of

    l2, test = quantized(f"suite/{model}", CONFIG)
    emit_c(l2, "x86", tmp_path)
    exe = build_host(tmp_path, tmp_path / "host")
    feats = np.ascontiguousarray(test.features.reshape(len(test.features), -1),
                                 dtype=np.float32)[:100]
    x_el = el_of(next(op for op in l2.walk() if op.name == "num.input").result)
    ties = np.float32(x_el.real_scale) * (np.arange(feats.shape[1]) % 7 - 3 + 0.5)
    feats = np.concatenate([feats, 40 * feats[:5], ties[None].astype(np.float32)])
    exp = expected(l2, feats)
    labels, scores = run_host(exe, feats, np.dtype("<f4"), exp.scores.shape[1], as_float=True)
    np.testing.assert_array_equal(labels, exp.labels)
    s_out = el_of(next(op for op in l2.walk() if op.name == "num.argmax"
                       or op.name == "num.sgn").operands[0])
    want = (s_out.real_scale * (exp.scores.astype(np.float64) - s_out.zp)).astype(np.float32)
    np.testing.assert_array_equal(scores, want)


OTHER_OPS = """
func.func @main() -> tensor<20x1xf32> {
  %x = minun.input "X" [-2.0, 2.0] : tensor<10x1xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25, 0.125, 1.0, -1.0, 0.75, 0.1, -0.3, 0.2, 0.9], [-0.5, 0.6, 0.7, -0.8, 0.25, 0.0, -0.1, 0.4, -0.9, 0.3], [0.3, 0.3, -0.3, 0.3, -0.3, 0.3, 0.3, -0.3, 0.3, 0.3], [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], [-0.1, -0.2, -0.3, -0.4, -0.5, -0.6, -0.7, -0.8, -0.9, -1.0], [0.5, 0.5, 0.5, 0.5, 0.5, -0.5, -0.5, -0.5, -0.5, -0.5], [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0], [0.2, -0.4, 0.6, -0.8, 1.0, -0.8, 0.6, -0.4, 0.2, 0.0], [0.9, 0.1, -0.9, 0.1, 0.9, 0.1, -0.9, 0.1, 0.9, 0.1]]> : tensor<10x10xf32>
  %y = minun.matmul %W, %x : (tensor<10x10xf32>, tensor<10x1xf32>) -> tensor<10x1xf32>
  %c = minun.clip %y {lo = -1.0 : f64, hi = 1.5 : f64} : (tensor<10x1xf32>) -> tensor<10x1xf32>
  %l = minun.leaky_relu %y {alpha = 0.1 : f64} : (tensor<10x1xf32>) -> tensor<10x1xf32>
  %r6 = minun.relu6 %l : (tensor<10x1xf32>) -> tensor<10x1xf32>
  %n = minun.neg %r6 : (tensor<10x1xf32>) -> tensor<10x1xf32>
  %m = minun.min %n, %c : (tensor<10x1xf32>, tensor<10x1xf32>) -> tensor<10x1xf32>
  %e = minun.exp %m : (tensor<10x1xf32>) -> tensor<10x1xf32>
  %t = minun.tanh %y : (tensor<10x1xf32>) -> tensor<10x1xf32>
  %h = minun.hadamard %e, %t : (tensor<10x1xf32>, tensor<10x1xf32>) -> tensor<10x1xf32>
  %s = minun.sub %h, %c : (tensor<10x1xf32>, tensor<10x1xf32>) -> tensor<10x1xf32>
  %cc = minun.concat %s, %l {axis = 0 : i64} : (tensor<10x1xf32>, tensor<10x1xf32>) -> tensor<20x1xf32>
  func.return %cc : tensor<20x1xf32>
}
"""


def test_other_ops_follow_the_float_program_and_the_c_equals_the_evaluator(tmp_path):
    """clip, leaky relu (max with alpha x), relu6, neg, min, exp and tanh tables, product,
    sub, concat (operands of different types brought to one): the evaluator within a few
    steps of the float program on inputs in the profiled range, and the x86 C equal to it."""
    from minun_mlir.formats.zero_skew.representation import el_of
    from minun_mlir.ir_text import parse_ir
    from minun_mlir.numerics.float_eval import evaluate
    from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2
    from minun_mlir.pipeline import lower_to_l2

    l1 = parse_ir(OTHER_OPS)
    l2 = lower_to_l2(l1, repr="zero-skew", bits=8, synthetic=256)
    x = np.random.default_rng(3).uniform(-2, 2, (300, 10, 1))
    want = evaluate(l1, x).outputs[0]
    stored = evaluate_l2(l2, x).outputs
    got = decode_outputs(l2, stored)[0]
    out = el_of(next(op for op in l2.walk() if op.name == "func.return").operands[0])
    err = np.abs(got - want)
    assert np.percentile(err, 99) <= 3 * out.real_scale and err.max() <= 8 * out.real_scale
    exp = expected(l2, x.reshape(len(x), -1))
    emit_c(l2, "x86", tmp_path)
    exe = build_host(tmp_path, tmp_path / "host")
    labels, scores = run_host(exe, exp.inputs, exp.scores.dtype, exp.scores.shape[1])
    assert_same(labels, scores, exp)


@pytest.mark.parametrize("model", sorted(SUITE))
def test_compiles_without_warnings_and_deterministically(model, tmp_path):
    """-std=c99 -Wall -Wextra -Werror -pedantic with gcc, avr-gcc and arm-none-eabi-gcc
    for the M0+, M3 and M4 (the runtime header's int64 requantization included); the same
    C twice."""
    import subprocess

    from codegen_support import STRICT, have
    from test_compile import COMPILERS

    l2, _ = quantized(f"suite/{model}", CONFIG)
    for profile, compilers in COMPILERS.items():
        out = tmp_path / profile
        files = emit_c(l2, profile, out)
        assert emit_c(l2, profile) == files
        for cc in compilers:
            assert have(cc[0]), f"{cc[0]} is not installed: run `make toolchains`"
            proc = subprocess.run([*cc, *STRICT, "-c", str(out / "model.c"), "-o",
                                   str(out / "model.o")], capture_output=True, text=True)
            assert proc.returncode == 0 and proc.stderr == "", f"{' '.join(cc)}:\n{proc.stderr}"


@pytest.mark.parametrize("target", ["avr", "cortex-m4"])
def test_softmax_on_the_boards_equals_evaluator(target, tmp_path):
    """Zero-skew softmax (an int32 exp table, a 64-bit division per element) with
    per-channel weights on the boards: the zoo's MLP with a softmax output
    (test/zoo/torch/mlp_softmax_ts.onnx), 2 test digits, the stored int8 outputs."""
    from pathlib import Path

    from minun_mlir.frontends.onnx import import_model
    from minun_mlir.numerics.l2_eval import evaluate_l2, storage_inputs
    from minun_mlir.pipeline import lower_to_l2

    zoo = Path(__file__).resolve().parents[2] / "zoo"
    train = np.load(zoo / "torch" / "data" / "digits01-train.npz")
    np.save(tmp_path / "train.npy", np.concatenate(
        [train["y"][:, None].astype(np.float32), train["x"]], axis=1))
    l2 = lower_to_l2(import_model(zoo / "torch" / "mlp_softmax_ts.onnx"),
                     data=str(tmp_path / "train.npy"), repr="zero-skew", bits=8,
                     per_channel=True, evaluator="numpy")
    assert any(op.name == "num.softmax" for op in l2.walk())
    x = np.load(zoo / "torch" / "mlp_softmax.npz")["x"][:N_BOARD].astype(np.float64)
    want = np.asarray(evaluate_l2(l2, x[:, None]).outputs[0]).reshape(N_BOARD, -1)
    emit_c(l2, target, tmp_path / "c")
    r = run_model(tmp_path / "c", target, storage_inputs(l2, x.reshape(N_BOARD, -1)),
                  name="mlp_softmax", config="zero-skew8-pc")
    np.testing.assert_array_equal(np.asarray(r.outputs).reshape(N_BOARD, -1), want)



def cnn_logsoftmax(tmp_path, per_channel: bool):
    """The zoo's CNN with a log_softmax output (test/zoo/torch/cnn_logsoftmax_ts.onnx) at
    zero-skew8, calibrated on the zoo's 200 training digits, and its 40 test digits."""
    from pathlib import Path

    from minun_mlir.frontends.onnx import import_model
    from minun_mlir.pipeline import lower_to_l2

    zoo = Path(__file__).resolve().parents[2] / "zoo"
    train = np.load(zoo / "torch" / "data" / "digits01-train.npz")
    np.save(tmp_path / "train.npy", np.concatenate(
        [train["y"][:, None].astype(np.float32), train["x"].reshape(len(train["x"]), -1)],
        axis=1))
    l2 = lower_to_l2(import_model(zoo / "torch" / "cnn_logsoftmax_ts.onnx"),
                     data=str(tmp_path / "train.npy"), repr="zero-skew", bits=8,
                     per_channel=per_channel, evaluator="numpy")
    assert any(op.name == "num.log_softmax" for op in l2.walk())
    return l2, np.load(zoo / "torch" / "cnn_logsoftmax.npz")["x"].astype(np.float64)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("target", ["x86", "avr", "cortex-m4"])
def test_log_softmax_equals_evaluator(target, per_channel, tmp_path):
    """Zero-skew log_softmax (softmax's int32 exp table, minun_lnsum, an int64 product and
    minun_zs_mbqm per element) on the zoo's cnn_logsoftmax: the stored int8 outputs of
    its 40 test inputs on x86, 2 on the boards."""
    from minun_mlir.numerics.l2_eval import evaluate_l2, storage_inputs

    l2, x = cnn_logsoftmax(tmp_path, per_channel)
    x = x[:N_BOARD] if target != "x86" else x
    n = len(x)
    want = np.asarray(evaluate_l2(l2, x.reshape(n, 1, 1, 8, 8)).outputs[0]).reshape(n, -1)
    emit_c(l2, target, tmp_path / "c")
    r = run_model(tmp_path / "c", target, storage_inputs(l2, x.reshape(n, -1)),
                  name="cnn_logsoftmax", config="zero-skew8-pc" if per_channel else CONFIG,
                  ram_budget=AVR_RAM_BUDGET if target == "avr" else None)
    np.testing.assert_array_equal(np.asarray(r.outputs).reshape(n, -1), want)


def test_log_softmax_compiles_without_warnings(tmp_path):
    """The log_softmax's C (int64 product, minun_lnsum, minun_zs_mbqm) under the strict
    flags of every compiler, as the suite models above."""
    import subprocess

    from codegen_support import STRICT, have
    from test_compile import COMPILERS

    l2, _ = cnn_logsoftmax(tmp_path, False)
    for profile, compilers in COMPILERS.items():
        out = tmp_path / profile
        emit_c(l2, profile, out)
        for cc in compilers:
            assert have(cc[0]), f"{cc[0]} is not installed: run `make toolchains`"
            proc = subprocess.run([*cc, *STRICT, "-c", str(out / "model.c"), "-o",
                                   str(out / "model.o")], capture_output=True, text=True)
            assert proc.returncode == 0 and proc.stderr == "", f"{' '.join(cc)}:\n{proc.stderr}"


def qlinear_conv_model(per_channel: bool):
    """A pre-quantized ONNX model: QuantizeLinear, QLinearConv (int32 bias; w_scale per
    output channel or one), DequantizeLinear, whose requantization is onnxruntime's
    (num.requantize mode onnxruntime: the C's minun_zs_ortq)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(21)
    c, cout, h = 2, 4, 6
    sw = (rng.uniform(0.004, 0.02, cout) if per_channel else rng.uniform(0.004, 0.02, 1)
          ).astype(np.float32)
    inits = {"sx": np.array(0.03, np.float32), "zx": np.array(7, np.int8),
             "W": rng.integers(-127, 128, (cout, c, 3, 3)).astype(np.int8),
             "sw": sw if per_channel else sw.reshape(()),
             "zw": np.zeros(cout if per_channel else (), np.int8),
             "sy": np.array(0.05, np.float32), "zy": np.array(-12, np.int8),
             "B": rng.integers(-3000, 3000, cout).astype(np.int32)}
    nodes = [helper.make_node("QuantizeLinear", ["X", "sx", "zx"], ["Xq"]),
             helper.make_node("QLinearConv", ["Xq", "sx", "zx", "W", "sw", "zw", "sy", "zy",
                                              "B"], ["C"], pads=[1, 1, 1, 1]),
             helper.make_node("DequantizeLinear", ["C", "sy", "zy"], ["Y"])]
    graph = helper.make_graph(
        nodes, "q", [helper.make_tensor_value_info("X", TensorProto.FLOAT, (1, c, h, h))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, (1, cout, h, h))],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    x = (np.float32(0.03) * (rng.integers(-128, 128, (40, 1, c, h, h)) - 7)).astype(np.float32)
    return model, x


def qdq_add_model(op: str = "Add"):
    """A QDQ Add (Mul, Concat) of the quantized input and a quantized constant, which
    onnxruntime runs in float32 (num.add / num.mul mode onnxruntime, or num.requantize of
    an int8 value to the output's quantization: the C's minun_zs_ortadd, _ortmul)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(22)
    n = 48
    inits = {"sx": np.array(0.03, np.float32), "zx": np.array(7, np.int8),
             "C": rng.integers(-128, 128, (1, n)).astype(np.int8),
             "sc": np.array(0.021, np.float32), "zc": np.array(5, np.int8),
             "sy": np.array(0.05, np.float32), "zy": np.array(-12, np.int8)}
    nodes = [helper.make_node("QuantizeLinear", ["X", "sx", "zx"], ["Xq"]),
             helper.make_node("DequantizeLinear", ["Xq", "sx", "zx"], ["Xd"]),
             helper.make_node("DequantizeLinear", ["C", "sc", "zc"], ["Cd"]),
             helper.make_node(op, ["Xd", "Cd"], ["S"], **(
                 {"axis": 1} if op == "Concat" else {})),
             helper.make_node("QuantizeLinear", ["S", "sy", "zy"], ["Sq"]),
             helper.make_node("DequantizeLinear", ["Sq", "sy", "zy"], ["Y"])]
    graph = helper.make_graph(
        nodes, "q", [helper.make_tensor_value_info("X", TensorProto.FLOAT, (1, n))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, (
            1, 2 * n if op == "Concat" else n))],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    x = (np.float32(0.03) * (rng.integers(-128, 128, (40, 1, n)) - 7)).astype(np.float32)
    return model, x


@pytest.mark.parametrize("kind", ["conv", "conv-per-channel", "add", "mul", "concat"])
@pytest.mark.parametrize("target", ["x86", "avr", "cortex-m4"])
def test_onnxruntime_arithmetic_equals_evaluator(target, kind, tmp_path):
    """The C of onnxruntime's arithmetic (minun_zs_ortq, _ortadd, _ortmul: 64-bit products
    and divisions and __builtin_clzll, integers only) on a pre-quantized QLinearConv
    (per-tensor and per-channel w_scale), a QDQ Add, a QDQ Mul and a QDQ Concat
    requantized to its own quantization: the stored int8 outputs equal the
    evaluator's on x86 (40 inputs), the Uno and the Cortex-M4 (2), and the evaluator's
    equal onnxruntime's."""
    import onnxruntime as ort

    from minun_mlir.frontends.onnx import import_model
    from minun_mlir.numerics.l2_eval import evaluate_l2, storage_inputs
    from minun_mlir.pipeline import lower_to_l2

    model, x = qdq_add_model(kind.title()) if kind in ("add", "mul", "concat") else \
        qlinear_conv_model(kind != "conv")
    x = x[:N_BOARD] if target != "x86" else x
    n = len(x)
    l2 = lower_to_l2(import_model(model), repr="zero-skew", bits=8)
    want = np.asarray(evaluate_l2(l2, x.astype(np.float64)).outputs[0]).reshape(n, -1)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    theirs = np.stack([np.rint(sess.run(None, {"X": xi})[0].astype(np.float64) / 0.05) - 12
                       for xi in x]).reshape(n, -1)
    np.testing.assert_array_equal(want, theirs)
    emit_c(l2, target, tmp_path / "c")
    helper = {"add": "minun_zs_ortadd", "concat": "minun_zs_ortadd",
              "mul": "minun_zs_ortmul"}.get(kind, "minun_zs_ortq")
    assert helper in (tmp_path / "c" / "model.c").read_text()
    r = run_model(tmp_path / "c", target, storage_inputs(l2, x.reshape(n, -1)),
                  name=f"ort_{kind}", config="zero-skew8-ort",
                  ram_budget=AVR_RAM_BUDGET if target == "avr" else None)
    np.testing.assert_array_equal(np.asarray(r.outputs).reshape(n, -1), want)


def test_onnxruntime_arithmetic_compiles_without_warnings_and_deterministically(tmp_path):
    """The C of a pre-quantized model with the three helpers (minun_zs_ortq, _ortadd,
    _ortmul) and onnxruntime's input quantization in the float wrapper, under the strict flags of
    every compiler; emitting it twice gives the same bytes."""
    import subprocess

    from codegen_support import STRICT, have
    from onnx import helper
    from test_compile import COMPILERS

    from minun_mlir.frontends.onnx import import_model
    from minun_mlir.pipeline import lower_to_l2

    model, _ = qlinear_conv_model(True)
    # the convolution's output, flattened, plus itself: a QDQ Add after the QLinearConv
    graph = model.graph
    graph.node[-1].output[0] = "Yc"
    graph.node.extend([helper.make_node("Add", ["Yc", "Yc"], ["S"]),
                       helper.make_node("QuantizeLinear", ["S", "sy", "zy"], ["Sq"]),
                       helper.make_node("DequantizeLinear", ["Sq", "sy", "zy"], ["Sd"]),
                       helper.make_node("Mul", ["Sd", "Yc"], ["P"]),
                       helper.make_node("QuantizeLinear", ["P", "sy", "zy"], ["Pq"]),
                       helper.make_node("DequantizeLinear", ["Pq", "sy", "zy"], ["Y"])])
    l2 = lower_to_l2(import_model(model), repr="zero-skew", bits=8)
    for profile, compilers in COMPILERS.items():
        out = tmp_path / profile
        files = emit_c(l2, profile, out)
        assert emit_c(l2, profile, tmp_path / f"{profile}-again") == files
        text = (out / "model.c").read_text()
        assert all(f"minun_zs_{h}" in text for h in ("ortq", "ortadd", "ortmul"))
        for cc in compilers:
            assert have(cc[0]), f"{cc[0]} is not installed: run `make toolchains`"
            proc = subprocess.run([*cc, *STRICT, "-c", str(out / "model.c"), "-o",
                                   str(out / "model.o")], capture_output=True, text=True)
            assert proc.returncode == 0 and proc.stderr == "", f"{' '.join(cc)}:\n{proc.stderr}"
