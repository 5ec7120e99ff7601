"""Softmax and L2 normalisation in the posit and bfloat16 representations.

The evaluator against numpy's float64 softmax / normalisation of the same (exactly
representable) inputs, within a first-order error bound built from each rounding step's
own rounding error at the value it rounds (measured from the format's neighbouring patterns,
not from the kernels); the generated C against the evaluator's patterns on the host (on
the boards: test/python/codegen/test_posit_targets.py); and the ONNX / SeeDot programs
that use them now quantize."""

from __future__ import annotations

import numpy as np
import pytest

from minun_mlir import native
from minun_mlir.formats.bfloat16 import representation as bfloat16_repr
from minun_mlir.formats.posit import arith as P
from minun_mlir.ir_text import parse_ir
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2

FORMATS = {"posit16e1": "!num.posit<16, 1>", "posit16e2": "!num.posit<16, 2>",
           "posit8e2": "!num.posit<8, 2>", "posit8e0": "!num.posit<8, 0>",
           "posit32e2": "!num.posit<32, 2>", "bfloat16": "bf16"}


def program(op: str, shape: tuple[int, ...], el: str) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}x{el}>"
    return (f'func.func @main() -> {t} attributes {{num.rounding = "nearest"}} {{\n'
            f'  %x = num.input "X" : {t}\n'
            f'  %y = {op} %x : {t} -> {t}\n'
            f'  func.return %y : {t}\n}}\n')


def fmt(name: str) -> tuple[int, int] | None:
    return None if name == "bfloat16" else (int(name[5:name.index("e")]), int(name[-1]))


def representable(name: str, x: np.ndarray) -> np.ndarray:
    """x rounded to the format (so the evaluator's input encoding is exact)."""
    f = fmt(name)
    if f is None:
        return bfloat16_repr.decode(bfloat16_repr.encode(x))
    return P.decode(P.encode(x, *f), *f)


def rounding_factor(name: str, v: np.ndarray) -> np.ndarray:
    """F >= 1 such that rounding a real near |v| to the format gives r with
    1/F <= r/|v| <= F: half the larger gap between |v|'s pattern and its neighbours over
    |v| either way, and upward the distance to minpos below it (posits do not round to
    0). 1 where v = 0; bfloat16 (normal range): 1 / (1 - 2^-8)."""
    v = np.abs(np.asarray(v, dtype=np.float64))
    f = fmt(name)
    if f is None:
        return np.where(v > 0, 1 / (1 - 2.0 ** -8), 1.0)
    n, es = f
    p = P.encode(v, n, es)
    lo = P.decode(np.maximum(p - 1, 1), n, es)
    hi = P.decode(np.minimum(p + 1, (1 << (n - 1)) - 1), n, es)
    mid = P.decode(p, n, es)
    half = np.maximum(hi - mid, mid - lo) / 2
    safe = np.where(v > 0, v, 1)
    up = 1 + np.maximum(half, P.decode(1, n, es) - v) / safe
    down = 1 / (1 - half / safe)
    return np.where(v > 0, np.maximum(up, down), 1.0)


def run(op: str, name: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, object]:
    l2 = parse_ir(program(op, x.shape[1:], FORMATS[name]))
    stored = np.asarray(evaluate_l2(l2, x).outputs[0])
    return stored, decode_outputs(l2, [stored])[0], l2


def inputs(shape, seed, spread=3.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) * spread * 2.0 ** rng.integers(-2, 2, shape)


def within(got: np.ndarray, ref: np.ndarray, factor: np.ndarray) -> float:
    """Assert ref / factor <= got <= ref * factor (up to 1e-9 relative slack for the float64
    reference itself); return the largest |log(got / ref)| / log(factor) seen."""
    nz = ref != 0
    assert np.all(got[~nz] == 0)
    ratio = np.abs(np.log(got[nz] / ref[nz]))
    slack = np.log(factor[nz]) + 1e-9
    assert np.all(ratio <= slack), np.max(ratio / slack)
    return float(np.max(ratio / slack))


@pytest.mark.parametrize("name", FORMATS)
def test_softmax_within_its_rounding_bound_of_numpy(name):
    """y = round(e_i / round(s)), s = the (exact or float32) sum of the rounded
    e = round(exp(round(x - m))). With F(v) the rounding factor near v, each e_i is
    within A_i = e^(|d_i| (F(d_i) - 1)) F(e_i) of e^(d_i), the rounded sum within
    B = max_j A_j F(s) (bfloat16's float32 sum: also / (1 - n 2^-24)), and y within
    A_i B F(y) of the float64 softmax."""
    x = representable(name, inputs((30, 4, 9), seed=len(name)))
    x[0, 0] = x[0, 0, 0]  # a row of equal values: exactly 1/9 before rounding
    _, got, _ = run("num.softmax", name, x)
    d = x - x.max(axis=-1, keepdims=True)
    e = np.exp(d)
    ref = e / e.sum(axis=-1, keepdims=True)  # float64, independent
    a = np.exp(np.abs(d) * (rounding_factor(name, d) - 1)) * rounding_factor(name, e)
    b = a.max(axis=-1, keepdims=True) * rounding_factor(name, e.sum(axis=-1, keepdims=True))
    if name == "bfloat16":
        b = b / (1 - x.shape[-1] * 2.0 ** -24)
    seen = within(got, ref, a * b * rounding_factor(name, ref))
    assert np.allclose(got[0, 0], got[0, 0, 0])
    err = np.abs(got - ref)
    print(f"\n  {name} softmax: max abs error {err.max():.2e}, max relative "
          f"{(err / ref).max():.2e} ({seen:.2f} of the bound)")


@pytest.mark.parametrize("name", FORMATS)
def test_normalise_l2_within_its_rounding_bound_of_numpy(name):
    """y = round(x / round(sqrt(round(ss)))), ss the exact (posit quire) or float32 sum of
    the exact squares: within a factor F(y) F(norm) F(ss)^(1/2) (bfloat16: the float32
    sum adds (1 - c 2^-24)^(-1/2)). A position of zeros gives
    zeros."""
    x = representable(name, inputs((12, 1, 2, 3, 6), seed=7 + len(name), spread=1.0))
    x[0, 0, 0, 0] = 0.0
    _, got, _ = run("num.normalise_l2", name, x)
    ss = (x * x).sum(axis=-1, keepdims=True)
    norm = np.sqrt(ss)
    ref = np.where(norm > 0, x / np.where(norm > 0, norm, 1), 0)  # float64, independent
    factor = (rounding_factor(name, ref) * rounding_factor(name, norm)
              * np.sqrt(rounding_factor(name, ss)))
    if name == "bfloat16":
        factor = factor / np.sqrt(1 - x.shape[-1] * 2.0 ** -24)
    factor = np.broadcast_to(factor, ref.shape)
    assert np.all(np.sign(got) == np.sign(ref))
    seen = within(np.abs(got), np.abs(ref), factor)
    assert np.all(got[0, 0, 0, 0] == 0)
    print(f"\n  {name} normalise_l2: max abs error {np.abs(got - ref).max():.2e} "
          f"({seen:.2f} of the bound)")


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize(("op", "shape"), [("num.softmax", (3, 7)),
                                           ("num.softmax", (1, 1)),
                                           ("num.normalise_l2", (1, 2, 3, 5))])
def test_c_equals_the_evaluator_on_the_host(name, op, shape):
    x = inputs((40, *shape), seed=3, spread=4.0)
    x[1] = 0.0
    stored, _, l2 = run(op, name, x)
    assert np.array_equal(native.NativeProgram(l2).outputs(x)[0], stored)


@pytest.mark.parametrize("name", ["posit16e1", "posit8e2"])
@pytest.mark.parametrize(("op", "shape"), [("num.softmax", (3, 7)),
                                           ("num.log_softmax", (3, 7)),
                                           ("num.normalise_l2", (1, 2, 3, 5))])
def test_without_a_quire_c_equals_the_evaluator_on_the_host(name, op, shape):
    """num.quire = false (quantize{quire=false}): the row sums add each (rounded) term to
    the rounded partial sum, in the C and in the evaluator; the C has no quire."""
    x = inputs((40, *shape), seed=5, spread=4.0)
    x[1] = 0.0
    text = program(op, shape, FORMATS[name]).replace(
        '{num.rounding = "nearest"}', '{num.rounding = "nearest", num.quire = false}')
    l2 = parse_ir(text)
    stored = np.asarray(evaluate_l2(l2, x).outputs[0])
    assert np.array_equal(native.NativeProgram(l2).outputs(x)[0], stored)
    n, es = fmt(name)
    if op == "num.normalise_l2":  # the sum of squares term by term, not in the quire
        q = P.encode(x.reshape(-1, shape[-1]), n, es)
        norm = P.sqrt(P.rounded_dot(q, q, n, es), n, es)[:, None]
        want = P.signed(np.where(norm == 0, 0, P.div(q, norm, n, es)), n)
        assert np.array_equal(stored.reshape(want.shape), want)
        assert not np.array_equal(norm, P.sqrt(P.dot(q, q, n, es), n, es)[:, None])


def test_quantize_gives_posit_and_bfloat16_programs_with_softmax(tmp_path):
    """An ONNX MatMul -> Softmax classifier: posit16 and bfloat16 quantize (they used to
    stop with 'not supported'), their C equals the evaluator, and the scores stay within
    the formats' precision of numpy's float softmax."""
    from test_softmax import classifier, data, numpy_softmax

    from minun_mlir.driver import load_model
    from minun_mlir.pipeline import lower_to_l2

    l1 = load_model(classifier(tmp_path, scale=2.0))
    x = data(tmp_path)
    w = [op for op in l1.walk() if op.name == "minun.param"][0].array().reshape(6, 5)
    reference = numpy_softmax(x.reshape(-1, 6).astype(np.float64) @ w)
    for kw, tol in (({"repr": "posit", "bits": 16, "es": 1}, 4e-3),
                    ({"repr": "posit", "bits": 8, "es": 2}, 0.08),
                    ({"repr": "bfloat16"}, 2e-2)):
        l2 = lower_to_l2(l1, **kw)
        stored = np.asarray(evaluate_l2(l2, x).outputs[0])
        got = decode_outputs(l2, [stored])[0].reshape(-1, 5)
        assert np.max(np.abs(got - reference)) <= tol, kw
        assert np.array_equal(native.NativeProgram(l2).outputs(x)[0], stored), kw


def test_num_quire_must_be_a_bool():
    from xdsl.utils.exceptions import VerifyException

    text = program("num.softmax", (2, 3), FORMATS["posit8e2"]).replace(
        '{num.rounding = "nearest"}', '{num.rounding = "nearest", num.quire = "no"}')
    with pytest.raises(VerifyException, match="num.quire must be true or false"):
        parse_ir(text)
