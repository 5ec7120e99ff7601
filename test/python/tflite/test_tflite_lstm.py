"""TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM (frontends/tflite/lstm.py: one ONNX LSTM node
through the ONNX frontend's recurrent lowering). Keras LSTMs converted by TensorFlow
(test/zoo/tflite/lstm/, tools/zoo/export_tflite_lstm.py) against TensorFlow Lite's
interpreter's stored outputs and TFLM's interpreter; one-operator models built here for
what Keras does not write (time-major input, peepholes, a cell clip that bites, ReLU),
against TFLM; Keras 3's recurrent layers, WHILE loops, unrolled; the fixed16 C equals the
evaluator. The int8 LSTM: test_tflite_lstm_int8.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tflite
from tflite_builder import lstm_model
from tflm_oracle import tflm_outputs

from minun_mlir.codegen import emit_c
from minun_mlir.diagnostics import MinunError
from minun_mlir.frontends.tflite import import_model
from minun_mlir.numerics.float_eval import evaluate
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2, storage_inputs
from minun_mlir.pipeline import lower_to_l2
from minun_mlir.targets import run_model

ZOO = Path(__file__).resolve().parents[2] / "zoo" / "tflite" / "lstm"
STORED = np.load(ZOO / "lstm.npz")


def ours(path: Path, xs: np.ndarray) -> np.ndarray:
    y = evaluate(import_model(path), xs.reshape(len(xs), *xs.shape[2:]).astype(np.float64))
    return np.asarray(y.outputs[0])


@pytest.mark.parametrize("name", ["lstm_float", "lstm2_float", "keras3_lstm_float",
                                  "keras3_gru_float", "keras3_rnn_float", "keras3_seq_float",
                                  "keras3_stack_float"])
def test_keras_lstm_equals_the_interpreters(name):
    """tf_keras' fused LSTMs, and Keras 3's LSTM, GRU and SimpleRNN as WHILE loops
    (unrolled at import, frontends/tflite/control.py), equal TensorFlow Lite's stored
    outputs, and TFLM's except on the return_sequences loops (where TFLM's WHILE leaves
    rows of zeros)."""
    path, x = ZOO / f"{name}.tflite", STORED["x"]
    theirs = STORED[name]
    got = ours(path, x).reshape(theirs.shape)
    np.testing.assert_allclose(got, theirs, rtol=1e-5, atol=1e-6)
    micro = tflm_outputs(path, x, reset=True).reshape(theirs.shape)
    if name in ("keras3_seq_float", "keras3_stack_float"):
        assert np.max(np.abs(micro - theirs)) > 1e-2
    else:
        np.testing.assert_allclose(got, micro, rtol=1e-5, atol=1e-6)
    assert np.ptp(theirs[..., 0]) > 1e-3  # the inputs move the output


@pytest.mark.parametrize("name,target", [
    ("lstm2_float", "x86"), ("keras3_stack_float", "x86"),
    pytest.param("keras3_stack_float", "cortex-m4", marks=pytest.mark.slow)])
def test_fixed16_c_equals_the_evaluator_and_stays_close(name, target, tmp_path):
    path, x = ZOO / f"{name}.tflite", STORED["x"]
    x3 = x.reshape(len(x), *x.shape[2:]).astype(np.float64)
    l2 = lower_to_l2(import_model(path, input_range=(-4.0, 4.0)), repr="fixed", bits=16)
    result = evaluate_l2(l2, x3)
    reals = np.asarray(decode_outputs(l2, result.outputs)[0]).reshape(len(x), -1)
    assert np.max(np.abs(reals - STORED[name].reshape(len(x), -1))) < 0.01
    emit_c(l2, target, tmp_path)
    run = run_model(tmp_path, target, storage_inputs(l2, x3[:3]), name=name)
    np.testing.assert_array_equal(np.asarray(run.outputs).reshape(3, -1),
                                  np.asarray(result.outputs[0]).reshape(len(x), -1)[:3])


@pytest.mark.parametrize("time_major,clip", [(True, 0.0), (False, 0.3)])
def test_lstm_forms_equal_tflm(time_major, clip, tmp_path):
    act = tflite.ActivationFunctionType.TANH
    path = tmp_path / "lstm.tflite"
    path.write_bytes(lstm_model(time_major, False, clip, act))
    shape = [5, 2, 3] if time_major else [2, 5, 3]
    x = np.random.default_rng(1).uniform(-3, 3, (6, 1, *shape)).astype(np.float32)
    theirs = tflm_outputs(path, x[:, 0], reset=True)
    np.testing.assert_allclose(ours(path, x).reshape(theirs.shape), theirs, rtol=1e-5,
                               atol=1e-6)
    if clip:  # the clip bites: without it the outputs differ
        path.write_bytes(lstm_model(time_major, False, 0.0, act))
        assert np.max(np.abs(tflm_outputs(path, x[:, 0], reset=True) - theirs)) > 1e-2


@pytest.mark.parametrize("name,peephole,act", [
    ("peephole_float", True, tflite.ActivationFunctionType.TANH),
    ("relu_float", False, tflite.ActivationFunctionType.RELU)])
def test_peepholes_and_relu_equal_tflite_s_interpreter(name, peephole, act):
    """TFLM refuses peepholes and computes something else with ReLU: the oracle is
    TensorFlow Lite's interpreter's stored output on the builder's model
    (tools/zoo/export_tflite_lstm.py)."""
    path, x, theirs = ZOO / f"{name}.tflite", STORED["builder_x"], STORED[name]
    assert path.read_bytes() == lstm_model(False, peephole, 0.0, act)
    got = np.asarray(evaluate(import_model(path), x.astype(np.float64)).outputs[0])
    np.testing.assert_allclose(got.reshape(theirs.shape), theirs, rtol=1e-5, atol=1e-6)


def test_a_loop_condition_on_run_time_values_is_a_located_error(tmp_path):
    """Keras 3's LSTM with its condition's LESS reading the float state instead of the
    counter (input 0 -> 2 in the bytes): the trip count is not known at import."""
    data = bytearray((ZOO / "keras3_lstm_float.tflite").read_bytes())
    model = tflite.Model.GetRootAsModel(bytes(data), 0)
    less = model.Subgraphs(1).Operators(0)
    start = less._tab.Vector(less._tab.Offset(6))  # Operator.inputs, its first element
    assert int.from_bytes(data[start:start + 4], "little") == 0
    data[start:start + 4] = (2).to_bytes(4, "little")
    path = tmp_path / "model.tflite"
    path.write_bytes(bytes(data))
    with pytest.raises(MinunError) as e:
        import_model(path)
    assert "operator 1 (WHILE), condition: operator 0 (LESS): not supported" in \
        str(e.value) and "\n" not in str(e.value)
