"""The posit representation through the whole pipeline (quantize{repr=posit}, the L2
evaluator, the C with the third_party/softposit runtime): MinUn's working example
(Table 1, Procedure 1's t1 = W1 x X1 and t2 = t1 + B1) computed by the compiled program,
the float wrapper's conversions (also bfloat16's), and what is not supported."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_support import build_host, expected, run_host

from minun_mlir.codegen import emit_c
from minun_mlir.diagnostics import MinunError
from minun_mlir.dialects import num
from minun_mlir.formats.posit import arith as P
from minun_mlir.frontends.seedot import compile_with_weights
from minun_mlir.frontends.seedot.weights import Weights
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2
from minun_mlir.pipeline import lower_to_l2

# MinUn §3's working example: W1 (1x2) times the input X1 (2x1) plus B1, with the values
# of Table 1 (their reals, which the paper prints rounded to posits)
# (the program's input is the parameter named X: X1 here)
EXAMPLE = """
let X = (2, 1) in [-3.0, 3.0] in
let W1 = (1, 2) in [-3.0, 3.0] in
let B1 = (1, 1) in [-1.0, 1.0] in
let t1 = W1 * X in
t1 + B1
"""
W1, X1, B1 = [-2.139562, 1.885351], [1.185109, -2.206466], [0.146048]
# Table 1's t1 and t2 at posit16 and posit8 (es = 2)
TABLE_1 = {16: (-6.69531, -6.54883), 8: (-7.0, -7.0)}


def example_l2(bits: int):
    weights = Weights({"W1": np.array([W1], dtype=np.float32),
                       "B1": np.array([B1], dtype=np.float32)})
    l1 = compile_with_weights(EXAMPLE, "example.sd", weights)
    return lower_to_l2(l1, repr="posit", bits=bits, es=2)


@pytest.mark.parametrize("bits", [16, 8])
def test_minun_table_1_through_the_pipeline(bits, tmp_path):
    l2 = example_l2(bits)
    el = num.PositType(bits, 2)
    assert {op.result.type.element_type for op in l2.walk()
            if isinstance(op, (num.ParamOp, num.InputOp, num.MatMulOp, num.AddOp))} == {el}
    x = np.array([X1], dtype=np.float64).reshape(1, 2, 1)
    stored = evaluate_l2(l2, x).outputs[0]
    t1, t2 = TABLE_1[bits]
    assert float(f"{decode_outputs(l2, [stored])[0].item():.6g}") == t2
    # t1 alone: the dot product rounded once from the quire
    dot = P.dot(P.encode(np.array(W1), bits, 2), P.encode(np.array(X1), bits, 2), bits, 2)
    assert float(f"{P.decode(dot, bits, 2):.6g}") == t1
    # the C computes the same pattern
    exp = expected(l2, x.reshape(1, 2))
    emit_c(l2, "x86", tmp_path)
    assert {"posit.h", "posit.c"} <= {p.name for p in tmp_path.iterdir()}
    exe = build_host(tmp_path, tmp_path / "host")
    _, scores = run_host(exe, exp.inputs, exp.scores.dtype, 1)
    assert int(scores[0, 0]) == int(P.signed(P.encode(t2, bits, 2), bits))
    # and the float wrapper converts both ways as the evaluator does
    _, real = run_host(exe, x.reshape(1, 2).astype(np.float32), np.dtype("<f4"), 1,
                       as_float=True)
    assert float(f"{real[0, 0]:.6g}") == t2


@pytest.mark.parametrize("n", [16, 12])
def test_float_wrapper_encodes_and_decodes_like_the_evaluator(n, tmp_path):
    """minun_predict_float on inputs at every magnitude, ties and special values: the
    C's float -> posit<n, 2> equals formats/posit/arith.py's encode, the scores its decode
    (posit<12, 2>: patterns sign-extended in int16_t)."""
    l1 = compile_with_weights("let X = (8, 1) in [-1.0, 1.0] in\nX", "id.sd", Weights({}))
    l2 = lower_to_l2(l1, repr="posit", bits=n, es=2)
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((64, 8)) * np.exp2(rng.integers(-70, 70, (64, 8))))
    x[0] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3e38, -1.5]
    x[1] = P.decode(np.arange(8) + 0x4000, 16, 2) + 2.0 ** -14  # ties between patterns
    x = x.astype(np.float32)
    emit_c(l2, "x86", tmp_path)
    exe = build_host(tmp_path, tmp_path / "host")
    _, got = run_host(exe, x, np.dtype("<f4"), 8, as_float=True)
    want = P.decode(P.encode(x.astype(np.float64), n, 2), n, 2).astype(np.float32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("options,message", [
    (dict(bits=17), "bits must be 8..16 or 32, got 17"),
    (dict(bits=16, es=3), "posits need bits 8..16 or 32 and es 0..2"),
    (dict(bits=16, param_bits=24), "param-bits must be 8..16 or 32, got 24"),
    # refused before any work by the one rule for options a format does not honour
    (dict(bits=16, scales="maxscale", maxscale=4), "maxscale=4 is for repr=fixed, not posit"),
])
def test_bad_posit_options(options, message):
    weights = Weights({"W1": np.array([W1], dtype=np.float32),
                       "B1": np.array([B1], dtype=np.float32)})
    l1 = compile_with_weights(EXAMPLE, "example.sd", weights)
    with pytest.raises(MinunError, match=message):
        lower_to_l2(l1, repr="posit", **options)


def test_bfloat16_float_wrapper_rounds_like_ml_dtypes(tmp_path):
    """minun_predict_float of a bfloat16 model: float32 inputs rounded to nearest even
    (ml_dtypes' conversion), scores back to float32 exactly."""
    import ml_dtypes

    l1 = compile_with_weights("let X = (8, 1) in [-1.0, 1.0] in\nX", "id.sd", Weights({}))
    l2 = lower_to_l2(l1, repr="bfloat16")
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((64, 8)) * np.exp2(rng.integers(-120, 120, (64, 8))))
    x[0] = [0.0, -0.0, np.inf, -np.inf, 1e-45, 3e38, -1.5, 1.00390625]
    x = x.astype(np.float32)
    emit_c(l2, "x86", tmp_path)
    exe = build_host(tmp_path, tmp_path / "host")
    _, got = run_host(exe, x, np.dtype("<f4"), 8, as_float=True)
    np.testing.assert_array_equal(got, x.astype(ml_dtypes.bfloat16).astype(np.float32))


def test_nested_dot_products_use_one_quire_per_depth(tmp_path):
    """W2 * (W1 * X) with one row in W2 reads each inner dot product once, inside the
    outer one's loop: the inner one accumulates in the depth-2 quire while the outer one's
    depth-1 quire holds its partial sum; the C equals the evaluator."""
    src = """
let X = (3, 1) in [-2.0, 2.0] in
let W1 = (4, 3) in [-2.0, 2.0] in
let W2 = (1, 4) in [-2.0, 2.0] in
W2 * (W1 * X)
"""
    rng = np.random.default_rng(7)
    weights = Weights({"W1": rng.uniform(-2, 2, (4, 3)).astype(np.float32),
                       "W2": rng.uniform(-2, 2, (1, 4)).astype(np.float32)})
    l2 = lower_to_l2(compile_with_weights(src, "nested.sd", weights), repr="posit", bits=8)
    x = rng.uniform(-2, 2, (40, 3))
    exp = expected(l2, x)
    files = emit_c(l2, "x86", tmp_path)
    assert "minun_p8e2_qclear_2" in files["model.c"] and "minun_quire_3" not in files[
        "minun_runtime.h"]
    exe = build_host(tmp_path, tmp_path / "host")
    _, scores = run_host(exe, exp.inputs, exp.scores.dtype, 1)
    np.testing.assert_array_equal(scores, exp.scores)


def test_each_quire_is_sized_for_the_widest_format_at_its_depth():
    """posit<16, 2>'s quire is 4 * 56 + 16 = 240 bits (8 words), posit<8, 2>'s 104 (4),
    posit<8, 0>'s 32 (1): depth 1, used by both es = 2 formats, gets 8 words and the NaR
    byte; depth 2 one word; no pointer to a current quire."""
    from minun_mlir.formats.posit.runtime import quire_bytes
    from minun_mlir.lowering.c_runtime import PROFILES, runtime_header

    names = ["minun_p8e2_fma_1", "minun_p16e2_qpop_1", "minun_p8e0_qclear_2"]
    h = runtime_header(PROFILES["avr"], names)
    assert "uint32_t w[8];\n    uint8_t nar;\n} minun_quire_1;" in h
    assert "uint32_t w[1];\n    uint8_t nar;\n} minun_quire_2;" in h
    assert "minun_quire_3" not in h and "*minun_quire" not in h
    assert quire_bytes(names) == (4 * 8 + 1) + (4 * 1 + 1)
    assert quire_bytes(["minun_fx_add"]) == 0
