"""TFLite's integer LSTM (int8 UNIDIRECTIONAL_SEQUENCE_LSTM, int16 cell state: TFLM's
8x8->16 kernel) on zero-skew: `minun.tflite_lstm` (formats/zero_skew/tflite_lstm.py)
against TFLM's interpreter integer for integer, on TensorFlow's two-LSTM model
(test/zoo/tflite/lstm/lstm2_int8.tflite) and on one-LSTM models written by the builder
(batch- and time-major, a cell clip that bites, gates that saturate); the C equals the
evaluator on x86, the Cortex-M4 and the Uno; what TFLM's integer kernel does not run is a
one-line refusal naming the operator."""

from __future__ import annotations

import importlib.util
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import tflite
from cli_tools import tool as cli_tool
from tflite_builder import ModelBuilder, lstm_int8_model
from tflm_oracle import tflm_outputs

from minun_mlir.codegen import emit_c
from minun_mlir.diagnostics import MinunError
from minun_mlir.formats.zero_skew import tflite_lstm as tl
from minun_mlir.formats.zero_skew.tflite_sigmoid_table import SIGMOID_TABLE
from minun_mlir.frontends.tflite import import_model
from minun_mlir.numerics.l2_eval import evaluate_l2, storage_inputs
from minun_mlir.pipeline import lower_to_l2
from minun_mlir.targets import run_model

ROOT = Path(__file__).resolve().parents[3]
ZOO = ROOT / "test" / "zoo" / "tflite" / "lstm"
LSTM2 = ZOO / "lstm2_int8.tflite"


def input_quantization(path: Path) -> tuple[float, int]:
    t = tflite.Model.GetRootAsModel(path.read_bytes(), 0).Subgraphs(0).Tensors(0)
    q = t.Quantization()
    return float(q.ScaleAsNumpy()[0]), int(q.ZeroPointAsNumpy()[0])


def int8_inputs(shape, n: int, seed: int) -> np.ndarray:
    """n int8 inputs: all -128, all 127, alternating extremes, then uniform random."""
    xs = np.random.default_rng(seed).integers(-128, 128, (n, *shape)).astype(np.int8)
    xs[0], xs[1] = -128, 127
    xs[2] = np.where(np.arange(xs[2].size).reshape(shape) % 2, 127, -128)
    return xs


def ours(path: Path, xs: np.ndarray):
    """The zero-skew L2 module and its output integers on int8 xs (given as their reals)."""
    s, zp = input_quantization(path)
    l2 = lower_to_l2(import_model(path), repr="zero-skew", bits=8)
    reals = (xs.astype(np.float64) - zp) * s
    result = evaluate_l2(l2, reals)
    return l2, reals, np.asarray(result.outputs[0]).astype(np.int64).reshape(len(xs), -1)


def test_lstm2_int8_equals_tflm():
    """TensorFlow's converter's two stacked int8 LSTMs, the dense and the softmax: the
    stored test inputs (quantized as TFLite's QUANTIZE) and int8 ones, extremes included."""
    s, zp = input_quantization(LSTM2)
    stored = np.load(ZOO / "lstm.npz")["x"][:, 0]  # 8 x (8, 3) reals
    q = np.clip(np.round(stored / np.float32(s)) + zp, -128, 127).astype(np.int8)
    xs = np.concatenate([q, int8_inputs(q.shape[1:], 40, 3)])
    _, _, got = ours(LSTM2, xs)
    theirs = tflm_outputs(LSTM2, xs[:, None], reset=True).astype(np.int64)
    np.testing.assert_array_equal(got, theirs)
    assert len(np.unique(theirs, axis=0)) > 20  # the inputs move the output


@pytest.mark.parametrize("target", ["x86", "cortex-m4", "avr"])
def test_lstm2_int8_c_equals_the_evaluator(target, tmp_path):
    xs = int8_inputs((8, 3), 6, 4)
    l2, reals, want = ours(LSTM2, xs)
    emit_c(l2, target, tmp_path)
    run = run_model(tmp_path, target, storage_inputs(l2, reals), name="lstm2_int8")
    np.testing.assert_array_equal(np.asarray(run.outputs).reshape(len(xs), -1), want)


def count_saturation(monkeypatch) -> Counter:
    """How many values the kernel's int16 and int8 clamps change (by width)."""
    hits: Counter = Counter()
    clamp = tl._clamp

    def counting(v, bits):
        out = clamp(v, bits)
        hits[bits] += int(np.sum(out != v))
        return out

    monkeypatch.setattr(tl, "_clamp", counting)
    return hits


@pytest.mark.parametrize("time_major,clip,big", [
    (False, 0.0, False), (True, 0.4, False), (False, 0.0, True)])
def test_builder_lstm_equals_tflm(time_major, clip, big, tmp_path, monkeypatch):
    """One int8 LSTM (6 steps, batch 3, 4 features, 5 units); `big`: biases and zero
    points that saturate the gates' int16 sums and the hidden state's int8."""
    path = tmp_path / "lstm.tflite"
    kw = dict(zp=(-100, 120), bias=2_000_000, hidden=8) if big else {}
    path.write_bytes(lstm_int8_model(time_major, clip, seed=2, **kw))
    xs = int8_inputs((6, 3, 4) if time_major else (3, 6, 4), 30, 5)
    hits = count_saturation(monkeypatch)
    _, _, got = ours(path, xs)
    np.testing.assert_array_equal(got, tflm_outputs(path, xs, reset=True).astype(np.int64))
    if big:
        assert hits[16] > 100 and hits[8] > 100
    if clip:  # the clip bites: without it TFLM's outputs differ
        path.write_bytes(lstm_int8_model(time_major, 0.0, seed=2))
        assert np.any(tflm_outputs(path, xs, reset=True).astype(np.int64) != got)


def test_builder_lstm_c_equals_the_evaluator(tmp_path):
    path = tmp_path / "lstm.tflite"
    path.write_bytes(lstm_int8_model(True, 0.4, seed=2))
    xs = int8_inputs((6, 3, 4), 4, 6)
    l2, reals, want = ours(path, xs)
    out = tmp_path / "c"
    emit_c(l2, "x86", out)
    run = run_model(out, "x86", storage_inputs(l2, reals), name="lstm")
    np.testing.assert_array_equal(np.asarray(run.outputs).reshape(len(xs), -1), want)


def test_the_sigmoid_table_is_tflm_s():
    """tools/tflite_sigmoid_table.py measures it again from TFLM's int16 TANH."""
    spec = importlib.util.spec_from_file_location(
        "tflite_sigmoid_table_tool", ROOT / "tools" / "tflite_sigmoid_table.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.measure() == list(SIGMOID_TABLE)


def _variant(tmp_path: Path, change) -> Path:
    """lstm_int8_model's operator with its inputs changed by `change(m, ins)`."""
    m = ModelBuilder()
    data = lstm_int8_model(False)
    model = tflite.Model.GetRootAsModel(data, 0)
    g = model.Subgraphs(0)
    ids = []
    for i in range(g.TensorsLength()):
        t = g.Tensors(i)
        q = t.Quantization()
        buf = model.Buffers(t.Buffer()).DataAsNumpy() if t.Buffer() else None
        dtype = {tflite.TensorType.INT8: "int8", tflite.TensorType.INT16: "int16",
                 tflite.TensorType.INT32: "int32"}[t.Type()]
        arr = None if buf is None or np.ndim(buf) == 0 else \
            np.frombuffer(buf.tobytes(), dtype).reshape(t.ShapeAsNumpy())
        ids.append(m.tensor(list(t.ShapeAsNumpy()), dtype, data=arr,
                            scale=list(q.ScaleAsNumpy()), zp=list(q.ZeroPointAsNumpy()),
                            variable=t.IsVariable()))
    op = g.Operators(0)
    ins = [int(k) for k in op.InputsAsNumpy()]
    fields = change(m, ins) or {}
    m.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [int(op.OutputsAsNumpy()[0])],
         "UnidirectionalSequenceLSTMOptions", **{
             "FusedActivationFunction": tflite.ActivationFunctionType.TANH,
             "CellClip": 0.0, "ProjClip": 0.0, "TimeMajor": False, **fields})
    path = tmp_path / "variant.tflite"
    path.write_bytes(m.build([ids[0]], [int(op.OutputsAsNumpy()[0])]))
    return path


def _peephole(m, ins):
    ins[9] = m.tensor([5], "int16", data=np.ones(5, np.int16), scale=0.01, zp=0)


def _per_channel(m, ins):
    ins[2] = m.tensor([5, 4], "int8", data=np.ones((5, 4), np.int8), scale=[0.01] * 5,
                      zp=[0] * 5)


def _layer_norm(m, ins):
    ins[21] = m.tensor([5], "int16", data=np.ones(5, np.int16), scale=0.01, zp=0)


@pytest.mark.parametrize("change,message", [
    (_peephole, "the int8 LSTM with peepholes (inputs 9-11) is not supported"),
    (_layer_norm, "the int8 LSTM with layer normalisation (inputs 20-23) is not supported"),
    (_per_channel, "the int8 LSTM's weight 't16' has per-channel scales (TFLM's integer "
     "LSTM takes one scale per tensor)"),
    (lambda m, ins: {"FusedActivationFunction": tflite.ActivationFunctionType.RELU},
     "the int8 LSTM with fused activation RELU is not supported"),
])
def test_what_tflm_s_integer_kernel_does_not_run_is_refused(change, message, tmp_path):
    path = _variant(tmp_path, change)
    with pytest.raises(MinunError) as e:
        import_model(path)
    text = str(e.value)
    assert "operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM): " + message in text, text
    assert "\n" not in text


def test_other_representations_refuse_the_integer_lstm():
    with pytest.raises(MinunError) as e:
        lower_to_l2(import_model(LSTM2), repr="fixed", bits=16)
    assert "TFLite's integer LSTM compiles onto the zero-skew representation only" in \
        str(e.value) and "\n" not in str(e.value)


def _compile(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([cli_tool("minun-compile"), *map(str, args)], cwd=cwd,
                          capture_output=True, text=True)


def test_with_no_option_the_integer_lstm_compiles_onto_zero_skew(tmp_path):
    """A first try (`minun-compile model.tflite`, no flags) does what the file's integer
    kernel needs, says so, and gives the C that `--repr zero-skew` gives."""
    first = _compile(LSTM2, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert (f"{LSTM2}: note: minun.tflite_lstm compiles onto --repr zero-skew only"
            in first.stderr), first.stderr
    assert "Traceback" not in first.stderr and "[zero-skew8]" in first.stdout
    explicit = _compile(LSTM2, "--repr", "zero-skew", "--out", tmp_path / "z", cwd=tmp_path)
    assert explicit.returncode == 0 and "note:" not in explicit.stderr, explicit.stderr
    default = tmp_path / "build" / "lstm2_int8"
    for name in ("model.c", "model.h"):
        assert (default / name).read_bytes() == (tmp_path / "z" / name).read_bytes()


def test_the_native_evaluator_says_why_it_cannot_profile_the_integer_lstm(tmp_path):
    r = _compile(LSTM2, "--repr", "zero-skew", "--evaluator", "native", "--out",
                 tmp_path / "c", cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    lines = [x for x in r.stderr.splitlines() if "error:" in x]
    assert len(lines) == 1 and "--evaluator numpy profiles this model" in lines[0], r.stderr
    assert not (tmp_path / "c" / "model.c").exists()
