"""One rounding default, stated once (formats/fixed/arith.py: DEFAULT_ROUNDING, read through
`rounding_in`): the evaluator read a function without `num.rounding` as `nearest`, the
loop lowering and the C printer as `trunc`, so such a module's minun_predict_float
encoded its inputs differently from the evaluator."""

from __future__ import annotations

import numpy as np
from codegen_support import build_host, expected, quantized, run_host
from codegen_support import test_set as data_of

from minun_mlir.codegen import emit_c
from minun_mlir.driver import Options
from minun_mlir.formats.fixed.arith import DEFAULT_ROUNDING, Rounding, rounding_in
from minun_mlir.modules import main_function
from minun_mlir.numerics.repr import QuantizeConfig
from minun_mlir.passes.quantize import Quantize
from minun_mlir.tools.minun_compile import build_parser


def test_every_option_has_the_one_default():
    assert DEFAULT_ROUNDING in tuple(Rounding)
    assert (QuantizeConfig().rounding == Quantize().rounding == Options().rounding
            == DEFAULT_ROUNDING)
    # minun-compile leaves it unset (a search then compares roundings) and compiles with it
    assert build_parser().get_default("rounding") is None
    assert f"default {DEFAULT_ROUNDING}" in build_parser().format_help()


def test_a_function_without_rounding_is_rounded_alike_by_the_evaluator_and_the_c(tmp_path):
    l2, _ = quantized("protonn", "fixed16")
    l2 = l2.clone()
    fn = main_function(l2)
    assert fn.attributes["num.rounding"].data == "trunc"
    del fn.attributes["num.rounding"]
    assert rounding_in(fn) == DEFAULT_ROUNDING
    # inputs off the fixed-point grid, so that trunc and nearest encode them differently
    noise = np.random.default_rng(0).uniform(0, 0.01, data_of("protonn").features[:40].shape)
    x = (data_of("protonn").features[:40] + noise).astype(np.float32)
    x = x.reshape(len(x), -1)
    exp = expected(l2, x.astype(np.float64))
    files = emit_c(l2, "x86", tmp_path / "c")
    scale = int(files["model.h"].split("#define MINUN_OUTPUT_SCALE ")[1].split()[0])
    exe = build_host(tmp_path / "c", tmp_path / "model")
    labels, scores = run_host(exe, x, np.dtype("<f4"), exp.scores.shape[1], as_float=True)
    np.testing.assert_array_equal(labels, exp.labels)
    np.testing.assert_array_equal(scores, exp.scores.astype(np.float64) * 2.0 ** -scale)
