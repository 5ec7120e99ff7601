"""The x86 build of the generated C computes exactly the integers of the L2 evaluator
(architecture property 2): labels and scores, for every input of every example's test
set, at 16 and 8 bits, with every parameter at 8 bits (mixed), under SeeDot's maxscale
rules (wrapping B-bit products, TreeSum halvings, two-table exp) and with the other
rounding and overflow modes; plus the benchmark suite at 16 bits and the vendored ONNX
models (mnist-8, the TFLite-Micro sine) at 16 and 8 bits; and in the posit representation
(posit<16, 2> and posit<8, 2>) and in bfloat16, every suite model, fastgrnn_lr_usps,
rnnpool (normalise_l2) and the ONNX models, and with per-tensor posit formats (num.convert
between them) on every suite model."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_support import (
    EXAMPLES,
    ONNX,
    SUITE,
    build_host,
    expected_for,
    quantized,
    run_host,
)

from minun_mlir.codegen import emit_c
from minun_mlir.numerics.l2_eval import evaluate_l2

EXAMPLE_COPIES = {"protonn-digits10", "bonsai-digits-binary", "fastgrnn-digits10",
                  "lenet-digits10"}
CASES = (
    [(m, c) for m in EXAMPLES for c in ("fixed16", "fixed8", "mixed16-8", "maxscale16")]
    + [(m, c) for m in ("protonn", "bonsai", "fastgrnn", "lenet", "rnnpool")
       for c in ("maxscale8-nearest", "fixed16-nearest-sat", "fixed8-floor-sat")]
    + [(f"suite/{s}", "fixed16") for s in SUITE if s not in EXAMPLE_COPIES]
    + [(f"real/{m}", c) for m in ONNX for c in ("fixed16", "fixed8")]
    + [pytest.param(m, c, marks=[pytest.mark.slow] if any(
        k in m for k in ("lenet", "fastgrnn-digits", "mnist", "rnnpool")) else [])
       for m in [f"suite/{s}" for s in SUITE] + ["fastgrnn_lr_usps", "rnnpool"]
       + [f"real/{m}" for m in ONNX] for c in ("posit16", "posit8", "bfloat16")]
    + [pytest.param(f"suite/{s}", c, marks=[pytest.mark.slow] if any(
        k in s for k in ("lenet", "fastgrnn-digits")) else [])
       for s in SUITE for c in ("posit16-params8", "posit8-params16", "posit12",
                                "posit8-noquire", "posit16-noquire")]
)
# (posit and bfloat16 arithmetic is software: the convolutional and recurrent models'
# evaluator and C runs take several seconds each, so they are marked slow: `make test`
# runs them, `make test-fast` does not)


def assert_same(got_labels, got_scores, exp) -> None:
    bad = np.flatnonzero((got_labels != exp.labels)
                         | np.any(got_scores != exp.scores, axis=1))
    if bad.size:
        i = int(bad[0])
        pytest.fail(f"{bad.size} of {len(exp.labels)} inputs differ; first: input {i}: C "
                    f"label {got_labels[i]} scores {got_scores[i].tolist()}, evaluator "
                    f"label {exp.labels[i]} scores {exp.scores[i].tolist()}")


def check_x86(model: str, config: str, tmp_path) -> None:
    """The model's C at `config`, built for this machine, gives the evaluator's labels and
    scores on every test input (the other codegen tests call this for their configs)."""
    l2, _ = quantized(model, config)
    exp = expected_for(model, config)
    emit_c(l2, "x86", tmp_path)
    exe = build_host(tmp_path, tmp_path / "host")
    labels, scores = run_host(exe, exp.inputs, exp.scores.dtype, exp.scores.shape[1])
    assert_same(labels, scores, exp)


@pytest.mark.parametrize("model,config", CASES)
def test_x86_build_equals_evaluator(model, config, tmp_path):
    check_x86(model, config, tmp_path)


@pytest.mark.parametrize("model", ["lenet", "rnnpool", "bonsai"])
def test_naive_planner_equals_evaluator(model, tmp_path):
    l2, _ = quantized(model, "fixed16")
    exp = expected_for(model, "fixed16")
    emit_c(l2, "x86", tmp_path, planner="naive")
    exe = build_host(tmp_path, tmp_path / "host")
    assert_same(*run_host(exe, exp.inputs, exp.scores.dtype, exp.scores.shape[1]), exp)


@pytest.mark.parametrize("model,config", [("lenet", "fixed16"), ("fastgrnn", "fixed8"),
                                          ("protonn", "fixed16-nearest-sat"),
                                          ("bonsai", "maxscale16")])
def test_float_wrapper_quantizes_like_the_evaluator(model, config, tmp_path):
    """minun_predict_float(x) = the evaluator on reals: same input encoding (rounding
    mode, saturation), scores dequantized exactly."""
    l2, test = quantized(model, config)
    exp = expected_for(model, config)
    files = emit_c(l2, "x86", tmp_path)
    scale = int(files["model.h"].split("#define MINUN_OUTPUT_SCALE ")[1].split()[0])
    exe = build_host(tmp_path, tmp_path / "host")
    feats = np.ascontiguousarray(test.features.reshape(len(test.features), -1),
                                 dtype=np.float32)
    # also probe the saturation and rounding edges of the encoding
    labels, scores = run_host(exe, feats, np.dtype("<f4"), exp.scores.shape[1], as_float=True)
    np.testing.assert_array_equal(labels, exp.labels)
    np.testing.assert_array_equal(scores, exp.scores.astype(np.float64) * 2.0 ** -scale)


def test_float_wrapper_rounding_edges(tmp_path):
    """Inputs at half units, beyond the range and negative, for every rounding mode."""
    for config in ("fixed16", "fixed16-nearest-sat", "fixed8-floor-sat"):
        l2, _ = quantized("protonn", config)
        files = emit_c(l2, "x86", tmp_path / config)
        s = int(files["model.h"].split("#define MINUN_INPUT_SCALE ")[1].split()[0])
        unit = 2.0 ** -s
        edges = np.array([0.5, -0.5, 1.5, -1.5, 2.49, -2.51, 0.25, -0.75]) * unit
        rows = np.tile(np.concatenate([edges, [1e9, -1e9, 3.0, -3.0]]), 6)[:64]
        x = np.stack([rows, -rows, rows * 3]).astype(np.float32)
        exp = evaluate_l2(l2, x.astype(np.float64)).outputs[0].reshape(-1)
        exe = build_host(tmp_path / config, tmp_path / config / "host")
        labels, _ = run_host(exe, x, np.dtype("<f4"), 10, as_float=True)
        np.testing.assert_array_equal(labels, exp)


@pytest.mark.parametrize("model", sorted(EXAMPLES))
def test_float32_representation_tracks_its_evaluator(model, tmp_path):
    """The float baseline: not promised bit-exact (libm), but the same model."""
    l2, _ = quantized(model, "float32")
    exp = expected_for(model, "float32")
    emit_c(l2, "x86", tmp_path)
    exe = build_host(tmp_path, tmp_path / "host")
    labels, scores = run_host(exe, exp.inputs, exp.scores.dtype, exp.scores.shape[1])
    assert np.mean(labels == exp.labels) >= 0.99
    tol = 1e-4 * max(1.0, float(np.abs(exp.scores).max()))
    np.testing.assert_allclose(scores, exp.scores, rtol=1e-4, atol=tol)
