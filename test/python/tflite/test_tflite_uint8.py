"""uint8 input and output tensors (issue 32): TFLite's converter writes them with
`inference_input_type = tf.uint8`, a QUANTIZE from uint8 to int8 after the input and one
back before the output. A uint8 tensor is computed as the int8 u - 128 with its zero
point - 128 (the same reals), so the program's integers are TFLM's uint8 ones minus 128,
checked here, with the input's requantization (same scale: exact; another scale:
TFLite's MultiplyByQuantizedMultiplier) and the x86 C equal to the evaluator; the C's
minun_predict_uint8 takes TFLM's uint8 inputs as they are and gives its uint8 outputs."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from tflite_builder import ModelBuilder
from tflite_micro.python.tflite_micro import runtime
from tflm_oracle import tflm_outputs

from minun_mlir.codegen import emit_c
from minun_mlir.frontends.tflite import import_model
from minun_mlir.numerics.l2_eval import evaluate_l2, storage_inputs
from minun_mlir.pipeline import lower_to_l2
from minun_mlir.targets import run_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))
from codegen_support import build_host, run_host  # noqa: E402

SU, ZU = 0.06, 131  # the uint8 input's quantization


def assert_uint8_c_equals(c_dir: Path, u: np.ndarray, theirs: np.ndarray, tmp_path) -> None:
    """The x86 C's minun_predict_uint8, given the uint8 inputs as they are, writes the
    oracle's uint8 outputs."""
    assert "int minun_predict_uint8(const minun_uint8_input_t *x, minun_uint8_output_t " \
        "*out);" in (c_dir / "model.h").read_text()
    exe = build_host(c_dir, tmp_path / "host")
    _, got = run_host(exe, u.reshape(len(u), -1), np.dtype(np.uint8), theirs.shape[1],
                      uint8=True)
    np.testing.assert_array_equal(got, theirs)


def uint8_model(s_int8: float, z_int8: int) -> bytes:
    """uint8 x -> QUANTIZE (int8 at s_int8, z_int8) -> FULLY_CONNECTED (ReLU) -> int8 ->
    QUANTIZE -> uint8 y."""
    rng = np.random.default_rng(5)
    m = ModelBuilder()
    x = m.tensor([1, 6], "uint8", scale=SU, zp=ZU)
    xq = m.tensor([1, 6], "int8", scale=s_int8, zp=z_int8)
    w = m.tensor([4, 6], "int8", data=rng.integers(-127, 128, (4, 6)), scale=0.01, zp=0)
    b = m.tensor([4], "int32", data=rng.integers(-500, 500, 4),
                 scale=np.float32(s_int8) * np.float32(0.01), zp=0)
    y = m.tensor([1, 4], "int8", scale=0.05, zp=-20)
    yu = m.tensor([1, 4], "uint8", scale=0.05, zp=108)
    m.op("QUANTIZE", [x], [xq])
    m.op("FULLY_CONNECTED", [xq, w, b], [y], "FullyConnectedOptions",
         FusedActivationFunction=1)
    m.op("QUANTIZE", [y], [yu])
    return m.build([x], [yu])


@pytest.mark.parametrize("s_int8,z_int8", [(SU, ZU - 128), (0.045, -9)])
def test_uint8_input_and_output_equal_tflm(s_int8, z_int8, tmp_path):
    path = tmp_path / "model.tflite"
    path.write_bytes(uint8_model(s_int8, z_int8))
    u = np.random.default_rng(0).integers(0, 256, (40, 1, 6)).astype(np.uint8)
    theirs = tflm_outputs(path, u)
    assert theirs.dtype == np.uint8 and len(np.unique(theirs)) > 20
    x = (np.float32(SU) * (u.astype(np.float32) - ZU)).astype(np.float64)
    l2 = lower_to_l2(import_model(path), repr="zero-skew", bits=8)
    stored = storage_inputs(l2, x)
    np.testing.assert_array_equal(stored.reshape(u.shape), u.astype(np.int64) - 128)
    ours = np.asarray(evaluate_l2(l2, x).outputs[0]).reshape(theirs.shape)
    np.testing.assert_array_equal(ours.astype(np.int64) + 128, theirs)
    emit_c(l2, "x86", tmp_path / "c")
    run = run_model(tmp_path / "c", "x86", stored[:5], name="uint8")
    np.testing.assert_array_equal(np.asarray(run.outputs).reshape(5, -1), ours[:5])
    assert_uint8_c_equals(tmp_path / "c", u, theirs, tmp_path)


def test_tensorflow_s_uint8_model_equals_tflm(tmp_path):
    """TensorFlow's own uint8-in, uint8-out conversion (test/zoo/tflite/uint8/)."""
    path = Path(__file__).resolve().parents[2] / "zoo/tflite/uint8/mlp_uint8io.tflite"
    interp = runtime.Interpreter.from_file(str(path))
    q = interp.get_input_details(0)["quantization_parameters"]
    (s,), (z,) = q["scales"], q["zero_points"]
    u = np.random.default_rng(1).integers(0, 256, (60, 1, 10)).astype(np.uint8)
    theirs = tflm_outputs(path, u)
    assert theirs.dtype == np.uint8 and len(np.unique(theirs)) > 50
    x = (np.float32(s) * (u.astype(np.float32) - z)).astype(np.float64)
    l2 = lower_to_l2(import_model(path), repr="zero-skew", bits=8)
    ours = np.asarray(evaluate_l2(l2, x).outputs[0]).reshape(theirs.shape)
    np.testing.assert_array_equal(ours.astype(np.int64) + 128, theirs)
    emit_c(l2, "x86", tmp_path / "c")
    run = run_model(tmp_path / "c", "x86", storage_inputs(l2, x[:5]), name="mlp_uint8io")
    np.testing.assert_array_equal(np.asarray(run.outputs).reshape(5, -1), ours[:5])
    assert_uint8_c_equals(tmp_path / "c", u, theirs, tmp_path)
