"""LogSoftmax in every representation: y = (x - m) - ln(sum e^(x - m)) over the last axis.

Fixed point's integer log (fixed.ln_sum, C minun_lnsum) against math.log; each
representation's evaluator against numpy's float64 log-softmax of the same exactly
representable inputs, within an error bound stated per representation; the ONNX backend
node tests for LogSoftmax (their stored outputs) through quantize in every
representation; the generated C equal to the evaluator on the host, the Uno and the M4."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from test_posit_rowops import FORMATS, inputs, representable, rounding_factor

from minun_mlir import native
from minun_mlir.formats.fixed import arith as fx
from minun_mlir.ir_text import parse_ir
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2, storage_inputs

sys.path.insert(0, str(Path(__file__).parents[1] / "onnx"))
from onnx_node_suite import load_case  # noqa: E402


def program(shape, el: str, out: str, rounding: str = "nearest") -> str:
    t = f"tensor<{'x'.join(map(str, shape))}x{el}>"
    r = f"tensor<{'x'.join(map(str, shape))}x{out}>"
    return (f'func.func @main() -> {r} attributes {{num.rounding = "{rounding}", '
            f'num.overflow = "wrap"}} {{\n'
            f'  %x = num.input "X" : {t}\n'
            f'  %y = num.log_softmax %x : {t} -> {r}\n'
            f'  func.return %y : {r}\n}}\n')


def numpy_log_softmax(x: np.ndarray) -> np.ndarray:
    d = x - x.max(axis=-1, keepdims=True)
    return d - np.log(np.exp(d).sum(axis=-1, keepdims=True))


def test_integer_log_is_within_2_to_the_minus_15():
    """Every sum up to 2^21 (both tables' scales) and sampled sums up to 2^61."""
    rng = np.random.default_rng(0)
    for s_e in (14, 6):
        s = np.concatenate([np.arange(1 << s_e, 1 << 21),
                            rng.integers(1 << 21, 1 << 61, 10**5, dtype=np.int64)])
        got = fx.ln_sum(s, s_e) / 2.0**fx.LOG_SCALE
        want = np.log(s.astype(np.float64)) - s_e * math.log(2)  # float64: ~1e-15
        assert np.max(np.abs(got - want)) < 2.0**-15
        assert np.all(fx.ln_sum(np.array([1 << s_e]), s_e) == 0)


# (bits, input scale): the table's own error bound (in ln units) below
FIXED = [(16, 11), (16, 8), (16, 13), (8, 4), (8, 2), (32, 20), (32, 14)]


def fixed_bound(bits: int, s_in: int, s_out: int, n: int) -> float:
    """|y - ref| for fixed point: one output unit 2^-s_out (any rounding mode), the log's
    2^-15 and the rounding of the log to the subtraction's scale, and the sum's error in
    ln units (|dS| / S with S >= 1): the exp table's input is d rounded to the table's
    scale when the input's is finer (relative error of e up to 2^-s_table; exact
    otherwise) and each of the n entries is off by at most 3 units of the table's output
    (16-bit: two floored tables and a rounded product; 8-bit: one floored table)."""
    s_table, s_e = (11, 14) if bits > 8 else (4, 6)
    quant = 2.0 ** -s_table if s_in > s_table else 0.0
    return 2.0 ** -s_out + 2.0 ** -15 + 2.0 ** -16 + quant + n * 3 * 2.0 ** -s_e


@pytest.mark.parametrize(("bits", "s_in"), FIXED)
@pytest.mark.parametrize("rounding", ["trunc", "floor", "nearest"])
def test_fixed_log_softmax_within_its_bound_and_c_equal(bits, s_in, rounding):
    n = 9
    s_out = min(s_in, fx.get_scale(2.0 ** (bits - s_in) + math.log(n), bits))
    l2 = parse_ir(program((4, n), f"!num.fixed<{bits}, {s_in}>",
                          f"!num.fixed<{bits}, {s_out}>", rounding))
    lo, hi = fx.int_range(bits)
    rng = np.random.default_rng(bits + s_in)
    ints = rng.integers(lo // 2, hi // 2, size=(30, 4, n))
    ints[0, 0] = hi // 2  # equal values: -ln 9 each
    x = ints * 2.0 ** -s_in  # exact at the input scale
    stored = np.asarray(evaluate_l2(l2, x).outputs[0])
    got = decode_outputs(l2, [stored])[0]
    ref = numpy_log_softmax(x)  # float64, independent
    assert np.max(np.abs(got - ref)) <= fixed_bound(bits, s_in, s_out, n)
    assert np.allclose(got[0, 0], -math.log(n), atol=fixed_bound(bits, s_in, s_out, n))
    assert np.array_equal(native.NativeProgram(l2).outputs(x)[0], stored)


def float_format_bound(name: str, x: np.ndarray) -> np.ndarray:
    """posit / bfloat16, y = round(round(d) - round(log(S'))): |y - ref| <=
    |d| (F(d) - 1) + ln(max_j A_j F(S)) + |L| (F(L) - 1) + |y| (F(y) - 1), with F the
    rounding factor near each value and A_j = e^(|d_j| (F(d_j) - 1)) F(e_j) as for
    softmax (bfloat16's float32 sum: also / (1 - n 2^-24))."""
    d = x - x.max(axis=-1, keepdims=True)
    e = np.exp(d)
    s = e.sum(axis=-1, keepdims=True)
    log = np.log(s)
    a = np.exp(np.abs(d) * (rounding_factor(name, d) - 1)) * rounding_factor(name, e)
    b = a.max(axis=-1, keepdims=True) * rounding_factor(name, s)
    if name == "bfloat16":
        b = b / (1 - x.shape[-1] * 2.0 ** -24)
    y = d - log
    return (np.abs(d) * (rounding_factor(name, d) - 1) + np.log(b)
            + np.abs(log) * (rounding_factor(name, log) - 1)
            + np.abs(y) * (rounding_factor(name, y) - 1))


@pytest.mark.parametrize("name", FORMATS)
def test_posit_and_bfloat16_within_their_bound_and_c_equal(name):
    el = FORMATS[name]
    x = representable(name, inputs((30, 4, 9), seed=len(name)))
    x[0, 0] = x[0, 0, 0]
    l2 = parse_ir(program((4, 9), el, el))
    stored = np.asarray(evaluate_l2(l2, x).outputs[0])
    got = decode_outputs(l2, [stored])[0]
    ref = numpy_log_softmax(x)
    bound = float_format_bound(name, x)
    err = np.abs(got - ref)
    assert np.all(err <= bound * 1.0001 + 1e-12), np.max(err / bound)
    assert np.array_equal(native.NativeProgram(l2).outputs(x)[0], stored)
    print(f"\n  {name} log_softmax: max abs error {err.max():.2e} "
          f"({np.max(err / bound):.2f} of the bound)")


def test_float32_log_softmax_is_close_to_numpy():
    x = inputs((30, 4, 9), seed=1).astype(np.float32).astype(np.float64)
    l2 = parse_ir(program((4, 9), "f32", "f32"))
    ref = numpy_log_softmax(x)
    got = np.asarray(evaluate_l2(l2, x).outputs[0])
    c = native.NativeProgram(l2).outputs(x)[0]
    assert np.max(np.abs(got - ref)) < 1e-5 * (1 + np.abs(ref)).max()
    assert np.max(np.abs(c - ref)) < 1e-5 * (1 + np.abs(ref)).max()


@pytest.mark.parametrize(("s_in", "zp_in", "n"), [(0.05, -10, 9), (0.15, 3, 10),
                                                  (0.5, 127, 4), (0.01, -128, 40)])
def test_zero_skew_log_softmax_within_half_a_step_and_c_equal(s_in, zp_in, n):
    """Zero-skew (formats/zero_skew/arith.py, log_softmax) against numpy's float64 log-softmax of
    the int8 inputs' reals: the output's half step and MBQM's double rounding
    (2^-(right + 1) steps, right its final shift), the log's 2^-15, the product's 2^-17
    and the exp table's entries rounded at 2^-K (n of them, the sum >= 1); the output's
    scale covers [-(255 s_in + ln n), 0], so nothing saturates. The C equals it."""
    from minun_mlir.formats.zero_skew import arith as af

    s_out = (255 * s_in + math.log(n)) / 255
    el, out = f"!num.affine<8, {s_in}, {zp_in}>", f"!num.affine<8, {s_out}, 127>"
    l2 = parse_ir(program((4, n), el, out))
    rng = np.random.default_rng(n)
    q = rng.integers(-128, 128, size=(60, 4, n))
    q[0, 0] = 100  # equal values: -ln n each
    q[0, 1] = -128
    q[0, 1, 0] = 127  # the widest row: max - q = 255
    x = s_in * (q - zp_in)
    stored = np.asarray(evaluate_l2(l2, x).outputs[0])
    got = decode_outputs(l2, [stored])[0]
    ref = numpy_log_softmax(x)
    _, _, k = af.log_softmax_constants(s_in, s_out)
    bound = (s_out * (0.5 + 2.0 ** (k - 1)) + 2.0 ** -15 + 2.0 ** -17
             + n * 2.0 ** -(af.softmax_bits(n) + 1)) * 1.0001
    err = np.abs(got - ref)
    assert np.max(err) <= bound, (np.max(err), bound)
    assert np.allclose(got[0, 0], -math.log(n), atol=bound)
    assert np.array_equal(native.NativeProgram(l2).outputs(x)[0], stored)


# --- the ONNX backend node tests ---------------------------------------------------------

NODE_TESTS = ["test_logsoftmax_axis_2", "test_logsoftmax_default_axis",
              "test_logsoftmax_example_1", "test_logsoftmax_large_number",
              "test_logsoftmax_negative_axis"]
CONFIGS = {"float32": dict(repr="float32"), "fixed16": dict(bits=16),
           "fixed32": dict(bits=32), "posit16e1": dict(repr="posit", bits=16, es=1),
           "posit32e2": dict(repr="posit", bits=32, es=2),
           "bfloat16": dict(repr="bfloat16"), "zero-skew8": dict(repr="zero-skew", bits=8)}


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("test", NODE_TESTS)
def test_onnx_node_tests_through_quantize(test, config, tmp_path):
    """The stored outputs of ONNX's LogSoftmax node tests (last axis), the model
    quantized in each representation (fixed point profiled on the test's own input;
    the bounds of the tests above, for the input rounded to the representation),
    within the representation's bound; the C equal to the evaluator."""
    from minun_mlir.frontends.onnx import import_model
    from minun_mlir.pipeline import lower_to_l2

    model, feeds, (want,) = load_case(test)
    (x,) = feeds.values()
    l1 = import_model(model)
    row = np.concatenate([[0.0], x.ravel()])
    np.save(tmp_path / "train.npy", np.stack([row, row / 2]))  # (one example warns)
    l2 = lower_to_l2(l1, data=str(tmp_path / "train.npy"), evaluator="numpy",
                     **CONFIGS[config])
    stored = np.asarray(evaluate_l2(l2, x[None]).outputs[0])
    got = decode_outputs(l2, [stored])[0][0]
    x64 = x.astype(np.float64)
    if config == "float32":
        bound = 1e-5 * (1 + np.abs(want))  # float32 steps
    elif config.startswith("fixed"):
        bits = CONFIGS[config]["bits"]
        (inp,) = [op for op in l2.walk() if op.name == "num.input"]
        (ls,) = [op for op in l2.walk() if op.name == "num.log_softmax"]
        s_in = inp.results[0].type.element_type.frac
        s_out = ls.results[0].type.element_type.frac
        # the input's own rounding to its scale moves d by up to 2 units
        bound = fixed_bound(bits, s_in, s_out, x.shape[-1]) + 2 * 2.0 ** -s_in
    elif config == "zero-skew8":
        # the inputs rounded to int8 (half a step each: d moves by up to one step, the
        # log as much), one output step (half and MBQM's double rounding)
        (inp,) = [op for op in l2.walk() if op.name == "num.input"]
        (ls,) = [op for op in l2.walk() if op.name == "num.log_softmax"]
        s_in = inp.results[0].type.element_type.real_scale
        s_out = ls.results[0].type.element_type.real_scale
        bound = 2 * s_in + s_out + 2.0 ** -14
    else:
        exact = representable(config, x64)
        bound = float_format_bound(config, exact) + np.abs(
            numpy_log_softmax(exact) - numpy_log_softmax(x64))
    # the stored outputs are float32 results: a few float32 ulps of their own
    bound = bound + 1e-6 * (1 + np.abs(want))
    assert np.all(np.abs(got - want) <= bound), np.max(np.abs(got - want))
    if config != "float32":
        assert np.array_equal(native.NativeProgram(l2).outputs(x[None])[0], stored)


def test_log_softmax_over_another_axis_is_refused():
    from minun_mlir.diagnostics import MinunError
    from minun_mlir.frontends.onnx import import_model
    from minun_mlir.pipeline import lower_to_l2

    model, _, _ = load_case("test_logsoftmax_axis_0")
    with pytest.raises(MinunError, match="log_softmax over axis 0 of a 3-D tensor: only the "
                                         "last axis is supported"):
        lower_to_l2(import_model(model), repr="posit", bits=16)


# --- the boards ----------------------------------------------------------------------------

BOARD = [("avr", "!num.fixed<16, 11>", "!num.fixed<16, 10>"),
         ("avr", "!num.fixed<8, 4>", "!num.fixed<8, 3>"),
         ("avr", "!num.posit<16, 1>", "!num.posit<16, 1>"),
         ("avr", "bf16", "bf16"),
         ("cortex-m4", "!num.fixed<32, 20>", "!num.fixed<32, 18>"),
         ("cortex-m4", "!num.posit<8, 2>", "!num.posit<8, 2>"),
         ("cortex-m4", "bf16", "bf16"),
         ("avr", "!num.affine<8, 0.05, -10>", "!num.affine<8, 0.06, 127>"),
         ("cortex-m4", "!num.affine<8, 0.05, -10>", "!num.affine<8, 0.06, 127>")]


@pytest.mark.parametrize(("target", "el", "out"), BOARD)
def test_log_softmax_c_on_the_board_equals_the_evaluator(target, el, out, tmp_path):
    from minun_mlir.codegen import emit_c
    from minun_mlir.targets import run_model

    l2 = parse_ir(program((2, 5), el, out, "trunc"))
    x = np.random.default_rng(2).standard_normal((3, 2, 5)) * 3
    emit_c(l2, target, tmp_path)
    r = run_model(tmp_path, target, storage_inputs(l2, x), name="logsoftmax")
    expected = np.asarray(evaluate_l2(l2, x).outputs[0]).reshape(3, -1)
    np.testing.assert_array_equal(np.asarray(r.outputs).reshape(3, -1).astype(np.int64),
                                  expected)


@pytest.mark.parametrize(("el", "out"), [("!num.fixed<16, 11>", "!num.fixed<16, 10>"),
                                         ("!num.fixed<8, 4>", "!num.fixed<8, 3>"),
                                         ("!num.posit<16, 1>", "!num.posit<16, 1>"),
                                         ("bf16", "bf16"), ("f32", "f32"),
                                         ("!num.affine<8, 0.1, 3>", "!num.affine<8, 0.2, 127>")])
def test_rows_of_one_element_give_zero(el, out):
    """log(softmax) of a single value is log(1) = 0 exactly (e(0) is the table's 1.0 and
    ln_sum(2^s_e) = 0; zero-skew: T[0] = 2^K, ln_sum(2^K) = 0; posit and float: d = 0, exp(0) = 1, log(1) = 0)."""
    l2 = parse_ir(program((3, 1), el, out))
    x = np.random.default_rng(0).normal(size=(5, 3, 1))
    stored = np.asarray(evaluate_l2(l2, x).outputs[0])
    assert np.all(decode_outputs(l2, [stored])[0] == 0)
    c = native.NativeProgram(l2).outputs(x)[0]
    assert np.array_equal(c, stored)
