"""Softmax in the fixed-point and float32 representations: close to numpy's float softmax
at 8 and 16 bits, rows that sum to 1 up to the floor of each quotient, the generated C
(host and Uno) equal to the evaluator's integers, and ONNX classifiers that end in Softmax
compile (they used to stop at quantize)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from minun_mlir import native
from minun_mlir.diagnostics import MinunError
from minun_mlir.driver import load_model
from minun_mlir.numerics.float_eval import evaluate
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2, storage_inputs
from minun_mlir.pipeline import lower_to_l2


def classifier(tmp_path, n_in=6, n_out=5, axis=-1, scale=2.0, seed=0):
    """ONNX MatMul -> Softmax (opset 13), weights drawn with the seed."""
    w = np.random.default_rng(seed).normal(size=(n_in, n_out)).astype(np.float32) * scale
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["h"]),
         helper.make_node("Softmax", ["h"], ["y"], axis=axis)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n_in])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n_out])],
        [helper.make_tensor("W", TensorProto.FLOAT, w.shape, w.ravel())])
    path = tmp_path / "clf.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def data(tmp_path, n=64, n_in=6, seed=1):
    x = np.random.default_rng(seed).uniform(-1, 1, size=(n, 1, n_in)).astype(np.float32)
    np.save(tmp_path / "train.npy", np.concatenate([np.zeros((n, 1)), x.reshape(n, -1)], 1))
    return x


def numpy_softmax(h: np.ndarray) -> np.ndarray:
    e = np.exp(h - h.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_program(rows: int, n: int, bits: int, scale: int, rounding: str) -> str:
    t = f"tensor<{rows}x{n}x!num.fixed<{bits}, {scale}>>"
    r = f"tensor<{rows}x{n}x!num.fixed<{bits}, {bits - 2}>>"
    return (f'func.func @main() -> {r} attributes {{num.rounding = "{rounding}", '
            f'num.overflow = "wrap"}} {{\n'
            f'  %x = num.input "X" : {t}\n'
            f'  %y = num.softmax %x : {t} -> {r}\n'
            f'  func.return %y : {r}\n}}\n')


# (bits, input scale, tolerance): the 16-bit exp table is good to ~1e-4 and each quotient
# is floored at 2^-14; the 8-bit one has 6 fractional bits.
@pytest.mark.parametrize(("bits", "scale", "tolerance"),
                         [(16, 8, 1e-3), (16, 12, 1e-3), (16, 2, 1e-3), (16, -3, 1e-3),
                          (8, 4, 0.05), (8, 1, 0.05), (8, 6, 0.05)])
@pytest.mark.parametrize("rounding", ["trunc", "floor", "nearest"])
def test_fixed_softmax_is_close_to_numpy_on_its_exact_inputs(bits, scale, tolerance, rounding):
    from minun_mlir.ir_text import parse_ir

    rows, n = 40, 9
    l2 = parse_ir(softmax_program(rows, n, bits, scale, rounding))
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    ints = np.random.default_rng(bits * 100 + scale).integers(lo, hi + 1, size=(3, rows, n))
    ints[0, 0] = hi  # a row of equal maxima: a uniform distribution
    x = ints * 2.0 ** -scale  # exactly representable: the evaluator encodes them as they are
    stored = np.asarray(evaluate_l2(l2, x).outputs[0])
    got = decode_outputs(l2, [stored])[0]
    reference = numpy_softmax(x)  # float64 softmax of the same values: independent
    assert np.max(np.abs(got - reference)) <= tolerance
    assert np.allclose(got[0, 0], 1 / n, atol=tolerance)
    # each quotient is floored: a row sums to 2^(b-2), less at most one unit per element
    sums = stored.sum(axis=-1)
    assert np.all(sums <= 1 << (bits - 2)) and np.all(sums >= (1 << (bits - 2)) - n)
    assert np.array_equal(native.NativeProgram(l2).outputs(x)[0], stored)


def test_onnx_classifier_ending_in_softmax_quantizes_close_to_float(tmp_path):
    model = classifier(tmp_path, scale=2.0)
    x = data(tmp_path)
    l1 = load_model(model)
    w = [op for op in l1.walk() if op.name == "minun.param"][0].array().reshape(6, 5)
    reference = numpy_softmax(x.reshape(-1, 6).astype(np.float64) @ w)  # independent
    l2 = lower_to_l2(l1, bits=16, data=str(tmp_path / "train.npy"), evaluator="numpy")
    got = decode_outputs(l2, evaluate_l2(l2, x).outputs)[0].reshape(-1, 5)
    assert np.max(np.abs(got - reference)) <= 2e-3
    assert np.array_equal(np.argmax(got, axis=1), np.argmax(reference, axis=1))


@pytest.mark.parametrize("bits", [8, 16, 32])
def test_softmax_c_equals_the_evaluator_on_the_host(tmp_path, bits):
    model = classifier(tmp_path, n_out=7, scale=5.0)
    x = data(tmp_path)
    l2 = lower_to_l2(load_model(model), bits=bits, data=str(tmp_path / "train.npy"),
                     evaluator="numpy")
    assert np.array_equal(native.NativeProgram(l2).outputs(x)[0], evaluate_l2(l2, x).outputs[0])


def test_float32_softmax_c_is_close_to_numpy(tmp_path):
    model = classifier(tmp_path)
    x = data(tmp_path)
    l1 = load_model(model)
    l2 = lower_to_l2(l1, repr="float32")
    got = native.NativeProgram(l2).outputs(x)[0]
    assert np.max(np.abs(got - evaluate(l1, x).outputs[0])) < 1e-6


def test_softmax_c_equals_the_evaluator_on_the_uno(tmp_path):
    from minun_mlir.codegen import emit_c
    from minun_mlir.targets import run_model

    model = classifier(tmp_path, n_out=4, scale=3.0)
    x = data(tmp_path, n=6)
    l2 = lower_to_l2(load_model(model), bits=16, data=str(tmp_path / "train.npy"),
                     evaluator="numpy")
    c = emit_c(l2, "avr", tmp_path / "c")
    run = run_model(c, "avr", storage_inputs(l2, x.reshape(6, 1, 6)), name="softmax")
    expected = evaluate_l2(l2, x).outputs[0].reshape(6, -1)
    assert np.array_equal(np.asarray(run.outputs).reshape(6, -1).astype(np.int64), expected)


def test_softmax_over_another_axis_is_refused_with_its_location(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Softmax", ["x"], ["y"], axis=1)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 2])])
    path = tmp_path / "axis.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    with pytest.raises(MinunError, match="softmax over axis 1 of a 3-D tensor: only the last"):
        lower_to_l2(load_model(path), bits=16, scales="maxscale", maxscale=10)
