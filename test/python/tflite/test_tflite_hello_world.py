"""The TFLite frontend on TFLM's hello_world models (test/zoo/tflite/hello_world), against
the TFLite Micro interpreter (the `tflite-micro` package: TFLM's reference kernels, the
integers a microcontroller running TFLM computes):

- int8: the bit-exact evaluator's output integers equal TFLM's on every one of the 256
  int8 inputs, and the C (x86, the Cortex-M4 in QEMU, the Uno in simavr) equals the
  evaluator;
- float: the float32 program equals TFLM's float output within float32 tolerance, and
  fixed16 stays close to it;
- an operator the frontend does not know is a one-line error naming it.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from tflm_oracle import tflm_outputs

from minun_mlir.codegen import emit_c
from minun_mlir.diagnostics import MinunError
from minun_mlir.frontends.tflite import import_model
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2, storage_inputs
from minun_mlir.pipeline import lower_to_l2
from minun_mlir.targets import run_model

ZOO = Path(__file__).resolve().parents[2] / "zoo" / "tflite" / "hello_world"
INT8, FLOAT = ZOO / "hello_world_int8.tflite", ZOO / "hello_world_float.tflite"
QS = np.arange(-128, 128)  # every int8 input
S_IN, Z_IN = np.float32(0.024480115622282028), -128  # the int8 model's input quantization


def tflm(path: Path, xs: np.ndarray) -> np.ndarray:
    """TFLM's output for each scalar input."""
    return tflm_outputs(path, np.reshape(xs, (-1, 1, 1)))[:, 0]


@functools.cache
def int8_l2():
    return lower_to_l2(import_model(INT8), repr="zero-skew", bits=8)


def int8_reals() -> np.ndarray:
    """The reals of every int8 input (they quantize back exactly)."""
    return (S_IN * (QS.astype(np.float32) - Z_IN)).astype(np.float64)[:, None, None]


def test_the_input_quantization_is_the_file_s():
    l2 = int8_l2()
    text = str(l2)
    assert f"!num.affine<8, {float(S_IN)!r}, {Z_IN}>" in text, text


def test_an_int8_model_compiles_onto_fixed_point_with_its_input_range():
    """Without data, the int8 input's declared range is the one its integers stand for
    (the profile draws there); fixed16 then stays within 0.06 of TFLM's output reals (the
    int8 model's own quantization error is several of its output steps of 0.0083)."""
    l1 = import_model(INT8)
    first = next(iter(next(iter(l1.ops)).body.block.ops))
    lo, hi = (float(S_IN) * (q - Z_IN) for q in (-128, 127))
    assert f"[{lo!r}, {hi!r}]" in str(first), str(first)
    l2 = lower_to_l2(l1, repr="fixed", bits=16)
    ours = np.asarray(decode_outputs(l2, evaluate_l2(l2, int8_reals()).outputs)[0]).reshape(-1)
    theirs = np.float32(0.008290956728160381) * (tflm(INT8, QS.astype(np.int8)) - 5.0)
    assert np.max(np.abs(ours - theirs)) < 0.06


def test_int8_evaluator_equals_tflm_on_every_input():
    theirs = tflm(INT8, QS.astype(np.int8)).astype(np.int64)
    ours = np.asarray(evaluate_l2(int8_l2(), int8_reals()).outputs[0]).reshape(-1)
    np.testing.assert_array_equal(ours, theirs)
    assert len(np.unique(theirs)) > 50  # a sweep that exercises the model, not a constant


@pytest.mark.parametrize("target", ["x86", pytest.param("cortex-m4", marks=pytest.mark.slow),
                                    pytest.param("avr", marks=pytest.mark.slow)])
def test_int8_c_equals_the_evaluator(target, tmp_path):
    l2 = int8_l2()
    x = int8_reals() if target == "x86" else int8_reals()[::32]
    stored = np.asarray(evaluate_l2(l2, x).outputs[0]).reshape(-1)
    emit_c(l2, target, tmp_path)
    r = run_model(tmp_path, target, storage_inputs(l2, x), name="hello_world_int8",
                  config="zero-skew8")
    np.testing.assert_array_equal(np.asarray(r.outputs).reshape(-1), stored)


def float_inputs() -> np.ndarray:
    return np.linspace(0.0, 2 * np.pi, 200, dtype=np.float32)


def test_float32_equals_tflm_within_float_tolerance():
    x = float_inputs()
    theirs = tflm(FLOAT, x).astype(np.float64)
    l2 = lower_to_l2(import_model(FLOAT, input_range=(0.0, 2 * np.pi)), repr="float32")
    ours = np.asarray(decode_outputs(l2, evaluate_l2(l2, x[:, None, None].astype(
        np.float64)).outputs)[0]).reshape(-1)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert np.max(np.abs(theirs - np.sin(x))) < 0.2  # the model computes sin(x)


def test_fixed16_is_close_to_tflm(tmp_path):
    x = float_inputs()
    train = tmp_path / "train.npy"
    np.save(train, np.stack([np.zeros_like(x), x], axis=1))
    theirs = tflm(FLOAT, x).astype(np.float64)
    l2 = lower_to_l2(import_model(FLOAT), repr="fixed", bits=16, data=str(train))
    ours = np.asarray(decode_outputs(l2, evaluate_l2(l2, x[:, None, None].astype(
        np.float64)).outputs)[0]).reshape(-1)
    assert np.max(np.abs(ours - theirs)) < 0.01


def with_operator(code: int, tmp_path: Path) -> Path:
    """The int8 model with its operator code 0 (FULLY_CONNECTED) changed to `code`."""
    import tflite

    data = bytearray(INT8.read_bytes())
    oc = tflite.Model.GetRootAsModel(bytes(data), 0).OperatorCodes(0)
    tab = oc._tab
    for field, size in ((4, 1), (10, 4)):  # deprecated_builtin_code (int8), builtin_code
        off = tab.Offset(field)
        if off:
            data[tab.Pos + off:tab.Pos + off + size] = min(code, 127).to_bytes(size, "little")
    path = tmp_path / "model.tflite"
    path.write_bytes(bytes(data))
    return path


def test_an_unknown_operator_is_a_located_error(tmp_path):
    path = with_operator(99, tmp_path)  # SQUARED_DIFFERENCE
    with pytest.raises(MinunError) as info:
        import_model(path)
    message = str(info.value)
    assert message.startswith(f"{path}: error: operator 0 (SQUARED_DIFFERENCE): not "
                              "supported"), message
    assert "\n" not in message


def test_minun_compile_on_an_unknown_operator_exits_1(tmp_path, capsys):
    from minun_mlir.tools import minun_compile

    rc = minun_compile.main([str(with_operator(99, tmp_path)), "--repr", "zero-skew",
                             "--out", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert rc == 1
    assert "operator 0 (SQUARED_DIFFERENCE): not supported" in err
    assert "Traceback" not in err


def test_not_a_tflite_file_is_a_located_error(tmp_path):
    path = tmp_path / "bad.tflite"
    path.write_bytes(b"\0" * 64)
    with pytest.raises(MinunError, match="not a TFLite model file"):
        import_model(path)


def test_minun_compile_int8_model(tmp_path, capsys):
    from minun_mlir.tools import minun_compile

    rc = minun_compile.main([str(INT8), "--repr", "zero-skew", "--out", str(tmp_path / "c")])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert (tmp_path / "c" / "model.c").stat().st_size > 0


@pytest.mark.parametrize("seed", range(4))
def test_a_damaged_file_is_a_located_error(seed, tmp_path):
    """Truncated or with bytes overwritten: a one-line error, never a traceback."""
    data = bytearray(INT8.read_bytes())
    rng = np.random.default_rng(seed)
    if seed == 0:
        data = data[:len(data) // 2]
    else:
        for at in rng.integers(8, len(data), 40):
            data[at] = rng.integers(0, 256)
    path = tmp_path / "damaged.tflite"
    path.write_bytes(bytes(data))
    try:
        import_model(path)  # bytes of weights overwritten can still be a model
    except MinunError as e:
        assert str(e).startswith(f"{path}: error: "), str(e)
        assert "\n" not in str(e)
    else:
        assert seed != 0, "a truncated file imported"
