"""Keras models converted by TensorFlow's own TFLite converter (test/zoo/tflite/keras/,
tools/zoo/export_tflite_keras.py), against TFLM's interpreter: the int8 files compute
TFLM's integers bit for bit (int8 or float input and output), the float files TFLM's
float outputs within float32 rounding, and the int8 C on x86 equals the evaluator. They
carry what a converter writes around the layers: Keras' Flatten as SHAPE, STRIDED_SLICE,
PACK and RESHAPE (folded at import), QUANTIZE/DEQUANTIZE at float boundaries, batch norm
folded into convolutions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tflite_micro.python.tflite_micro import runtime
from tflm_oracle import tflm_outputs

from minun_mlir.codegen import emit_c
from minun_mlir.frontends.tflite import import_model
from minun_mlir.numerics.float_eval import evaluate
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2, storage_inputs
from minun_mlir.pipeline import lower_to_l2
from minun_mlir.targets import run_model

ZOO = Path(__file__).resolve().parents[2] / "zoo" / "tflite" / "keras"
MODELS = ("resnet_tiny", "dscnn_tiny", "autoenc", "wand")


def _int8_inputs(path: Path, x: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """(what TFLM is given, the reals minun's program is given): an int8 input's
    integers and the reals they stand for, or the float input itself."""
    q = runtime.Interpreter.from_file(str(path)).get_input_details(0)
    if q["dtype"] != np.int8:
        return list(x), x.astype(np.float64)
    (s,), (z,) = q["quantization_parameters"]["scales"], q["quantization_parameters"][
        "zero_points"]
    ints = np.clip(np.round(x / s) + z, -128, 127).astype(np.int8)
    return list(ints), (np.float32(s) * (ints.astype(np.float32) - z)).astype(np.float64)


@pytest.mark.parametrize("name", MODELS)
def test_int8_equals_tflm_s_integers(name, tmp_path):
    path = ZOO / f"{name}_int8.tflite"
    x = np.load(ZOO / f"{name}_x.npy")
    given, reals = _int8_inputs(path, x)
    theirs = tflm_outputs(path, [x[None] for x in given])
    l2 = lower_to_l2(import_model(path), repr="zero-skew", bits=8)
    stored = evaluate_l2(l2, reals).outputs
    if theirs.dtype == np.int8:  # the output integers themselves
        np.testing.assert_array_equal(np.asarray(stored[0]).reshape(theirs.shape), theirs)
    else:  # TFLM's DEQUANTIZE of its int8 output: the same reals in float32
        ours = np.asarray(decode_outputs(l2, stored)[0], np.float32).reshape(theirs.shape)
        np.testing.assert_array_equal(ours, theirs)
    emit_c(l2, "x86", tmp_path)
    run = run_model(tmp_path, "x86", storage_inputs(l2, reals[:3]))
    np.testing.assert_array_equal(np.asarray(run.outputs).reshape(3, -1),
                                  np.asarray(stored[0]).reshape(len(x), -1)[:3])


@pytest.mark.parametrize("name", MODELS)
def test_float_equals_tflm_within_float32(name):
    path = ZOO / f"{name}_float.tflite"
    x = np.load(ZOO / f"{name}_x.npy")
    theirs = tflm_outputs(path, [r[None] for r in x])
    ours = np.asarray(evaluate(import_model(path), x.astype(np.float64)).outputs[0])
    np.testing.assert_allclose(ours.reshape(theirs.shape), theirs, rtol=1e-5,
                               atol=1e-5 * np.abs(theirs).max())
