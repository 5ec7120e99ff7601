"""The native evaluator (minun_mlir/native.py) against the numpy reference evaluators.

The generated C built for the host must give the L2 evaluator's integers on every output
value, and the instrumented float C must profile every L1 value as the float evaluator
does (to float32 rounding) so that quantize derives the same program from either profile.
Checked on every example, every benchmark-suite model and RNNPool face detection (at test
size: tests/python/native/face_program.py)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from minun_bench import suite as bench
from minun_mlir import native
from minun_mlir.data import load_dataset
from minun_mlir.diagnostics import MinunError
from minun_mlir.driver import load_model, output_error
from minun_mlir.numerics.float_eval import evaluate, model_inputs
from minun_mlir.numerics.l2_eval import evaluate_l2
from minun_mlir.numerics.repr import QuantizeConfig
from minun_mlir.pipeline import lower_to_l2, parse_pipeline, run_pipeline

sys.path.insert(0, str(Path(__file__).parent))
from face_program import (  # noqa: E402
    OUTPUTS,
    TRAINED,
    content,
    images,
    shared,
    small_face_program,
)

EXAMPLES = bench.EXAMPLES
CASES = {e.name: (e.model, e.weights, e.train, e.dims) for e in bench.suite()}
CASES.update({f"example-{p.stem}": (p, None, p.parent / p.stem / "test.npy", None)
              for p in sorted(EXAMPLES.glob("*.sd"))})


def primitive_l1(model, weights=None, dims=None, synthetic=None):
    l1 = load_model(model, weights, dims, synthetic)
    run_pipeline(l1, parse_pipeline("lower-composite-ops"))
    return l1


def features_of(l1, data) -> np.ndarray:
    shape = tuple(model_inputs(l1)[0].results[0].type.get_shape())
    return load_dataset(data, shape).features


def same_profiles(l1, x) -> None:
    """Native and numpy profiles agree on every tensor value the float program computes,
    and quantize derives the same L2 program from each."""
    reference = evaluate(l1, x, profile=True).profile
    got = native.native_profile(l1, x)
    compared = 0
    for value, ref in reference.items():
        if not hasattr(value.type, "get_shape"):
            continue  # loop indices and labels: integers, never scaled
        assert value in got, f"{value.owner.name} {value.name_hint} was not profiled"
        mine = got[value]
        assert (mine.count == 0) == (ref.count == 0), value.owner.name
        if ref.count:
            tol = 1e-5 * max(ref.absmax, 1e-3)
            assert abs(mine.min - ref.min) <= tol and abs(mine.max - ref.max) <= tol, (
                value.owner.name, value.name_hint, (ref.min, ref.max), (mine.min, mine.max))
            compared += 1
    assert compared > 0
    from minun_mlir.numerics import formats

    config = QuantizeConfig(bits=16)
    a = formats.get("fixed").quantize(l1.clone(), config, _mapped(l1, reference))
    b = formats.get("fixed").quantize(l1.clone(), config, _mapped(l1, got))
    assert str(a) == str(b)


def _mapped(l1, profile):
    """A profile keyed by the values of a clone of l1 (quantize gets a clone)."""
    clone = l1.clone()
    old_values = [r for op in l1.walk() for r in op.results]
    new_values = [r for op in clone.walk() for r in op.results]
    return {n: profile[o] for o, n in zip(old_values, new_values, strict=True) if o in profile}


def same_outputs(l2, x) -> None:
    """The host build of the L2 program gives the evaluator's integers on every output."""
    reference = evaluate_l2(l2, x).outputs[0]
    prog = native.NativeProgram(l2)  # one build (and one C emission) for both runs
    got = prog.outputs(x)[0]
    assert got.shape == np.asarray(reference).shape
    assert np.array_equal(got, reference)
    scores, _ = prog.run(np.zeros((1, *x.shape[1:])))
    assert scores.dtype.kind in "iu"  # stored integers, not reals


@pytest.mark.parametrize("name", sorted(CASES))
def test_native_matches_numpy(name):
    model, weights, data, dims = CASES[name]
    l1 = primitive_l1(model, weights, dims)
    x = features_of(l1, data)[:200]
    same_profiles(l1, x)
    l2 = lower_to_l2(l1, bits=16, data=str(data), evaluator="numpy")
    same_outputs(l2, x)
    l2_8 = lower_to_l2(l1, bits=8, data=str(data), evaluator="numpy")
    same_outputs(l2_8, x)


def trained_face_l1(folder: Path):
    """primitive_l1 of the test-size face program (written to folder/face.sd) with
    face-4's trained weights: loaded once per process, each call gets a clone."""
    program = folder / "face.sd"
    program.write_text(small_face_program())
    return shared(("small-face-l1-trained",), lambda: primitive_l1(program, TRAINED)).clone()


@pytest.mark.slow  # the numpy evaluators take ~20 s on it
def test_native_matches_numpy_on_face_detection(tmp_path):
    np.save(tmp_path / "train.npy", images(8, seed=0))
    l1 = trained_face_l1(tmp_path)
    x = features_of(l1, tmp_path / "train.npy")
    same_profiles(l1, x)
    l2 = lower_to_l2(l1, bits=16, data=str(tmp_path / "train.npy"), evaluator="numpy")
    test = images(2, seed=1)[:, 1:].reshape(2, 1280, 1)
    reference = evaluate_l2(l2, test).outputs[0]
    got = native.NativeProgram(l2).outputs(test)[0]
    assert got.shape == (2, 1, OUTPUTS)
    assert np.array_equal(got, reference)


def test_quantize_gives_the_same_program_with_either_evaluator():
    data = EXAMPLES / "rnnpool" / "test.npy"
    l1 = primitive_l1(EXAMPLES / "rnnpool.sd")
    programs = {e: str(lower_to_l2(l1, bits=16, data=str(data), evaluator=e))
                for e in ("numpy", "native")}
    assert programs["numpy"] == programs["native"]
    data = EXAMPLES / "protonn" / "test.npy"  # maxscale tuning builds 16 programs
    l1 = primitive_l1(EXAMPLES / "protonn.sd")
    tuned = {e: str(lower_to_l2(l1, bits=16, scales="maxscale", data=str(data), evaluator=e))
             for e in ("numpy", "native")}
    assert tuned["numpy"] == tuned["native"]


def test_native_runs_the_batch_on_several_threads_with_the_same_result(monkeypatch):
    data = EXAMPLES / "fastgrnn" / "test.npy"
    l1 = primitive_l1(EXAMPLES / "fastgrnn.sd")
    l2 = lower_to_l2(l1, bits=16, data=str(data), evaluator="numpy")
    x = features_of(l1, data)
    monkeypatch.setattr(native.os, "cpu_count", lambda: 2)  # two threads on any machine
    prog = native.NativeProgram(l2)
    whole = prog.outputs(x)[0]
    one_by_one = np.concatenate([prog.outputs(x[i:i + 1])[0] for i in range(0, 40)])
    assert len(prog.handles) == native.workers(len(x))  # one library copy per thread
    assert np.array_equal(whole[:40], one_by_one)


def test_auto_picks_numpy_for_small_and_native_for_large_models(tmp_path):
    small = primitive_l1(EXAMPLES / "protonn.sd")
    assert not native.use_native("auto", small, 100)
    program = tmp_path / "face.sd"
    program.write_text(small_face_program())
    face = primitive_l1(program, synthetic=0)
    per_example = native.values_per_example(face)
    # the patch loops alone compute 12 patches x 160 recurrent steps x 16-value states
    assert per_example > 12 * 160 * 16
    examples = native.AUTO_THRESHOLD // per_example + 1
    assert native.use_native("auto", face, examples)
    assert not native.use_native("numpy", face, examples)


def test_evaluator_option_is_checked(monkeypatch):
    l1 = primitive_l1(EXAMPLES / "protonn.sd")
    with pytest.raises(MinunError, match="evaluator must be one of auto, native, numpy"):
        lower_to_l2(l1, bits=16, data=str(EXAMPLES / "protonn" / "test.npy"), evaluator="fast")
    monkeypatch.setattr(native, "HOST_CC", "no-such-cc")
    with pytest.raises(MinunError, match="needs a host C compiler.*--evaluator numpy"):
        native.use_native("native", l1)
    assert not native.use_native("auto", l1, 10**9)  # auto falls back to numpy


def test_output_error_is_sqnr_and_max_abs_error():
    ref = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]])
    approx = ref + np.array([[0.01, 0.0, -0.02], [0.0, 0.03, 0.0]])
    err = output_error(ref, approx)
    signal, noise = 1 + 4 + 9 + 0.25 + 1, 0.01**2 + 0.02**2 + 0.03**2
    assert err["sqnr_db"] == pytest.approx(10 * math.log10(signal / noise))
    assert err["max_abs_error"] == pytest.approx(0.03)
    assert output_error(np.array([1, 2]), np.array([1, 2])) is None  # labels


def test_synthetic_weights_are_seeded_and_inside_the_declared_ranges():
    from minun_mlir.frontends.seedot.weights import Weights

    a, b, c = Weights(synthetic=0), Weights(synthetic=0), Weights(synthetic=1)
    w = a.load("W1", (16, 4), (-1.373197, 1.674546))
    assert w.shape == (16, 4) and w.dtype == np.float32
    assert w.min() >= -1.373197 and w.max() <= 1.674546
    assert np.array_equal(w, b.load("W1", (16, 4), (-1.373197, 1.674546)))
    assert not np.array_equal(w, c.load("W1", (16, 4), (-1.373197, 1.674546)))
    assert not np.array_equal(w, a.load("U1", (16, 4), (-1.373197, 1.674546)))


def test_synthetic_weights_compile_face_detection_from_the_command_line(tmp_path, capsys):
    from minun_mlir.tools.minun_compile import main

    program = tmp_path / "face.sd"
    program.write_text(small_face_program())
    np.save(tmp_path / "train.npy", images(8, seed=0))
    np.save(tmp_path / "test.npy", images(2, seed=1))
    assert main([str(program), "--synthetic-weights", "3", "--train",
                 str(tmp_path / "train.npy"), "--test", str(tmp_path / "test.npy"),
                 "--evaluator", "native", "--out", str(tmp_path / "c"), "--run"]) == 0
    out = capsys.readouterr().out
    assert "SQNR" in out and "max abs error" in out
    assert "overflow on the test data: not counted (native evaluator" in out
    assert "labels equal to the evaluator's on 100.00%" in out
    assert main([str(EXAMPLES / "../benchmarks/real/onnx-sine/model.onnx"),
                 "--synthetic-weights", "3", "--scales", "maxscale", "--maxscale", "3",
                 "--dim", "N=1"]) == 1
    assert "--synthetic-weights is for SeeDot programs" in capsys.readouterr().err


@pytest.mark.parametrize("bits", [8, 16, 32])
def test_the_c_driver_encodes_reals_as_the_evaluator_does(tmp_path, bits):
    """The batch driver quantizes reals in C (fixed.quantize in IEEE double): on values
    at and next to every rounding boundary, beyond the range and infinite, every rounding
    mode gives the evaluator's integers."""
    program = tmp_path / "identity.sd"
    program.write_text("let X = (24, 1) in [-2.0, 2.0] in\nX\n")
    l1 = load_model(program, None, None)
    scale = bits - 3
    k = np.arange(-40, 40, dtype=np.float64)
    edges = np.concatenate([k, k + 0.5, k - 0.5]) * 2.0 ** -scale
    near = np.concatenate([np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf)])
    special = np.array([0.0, -0.0, 3.9999, -3.9999, 4.0, -4.0, 1e300, -1e300, np.inf,
                        -np.inf, 2.0 ** -1074, 1.0 / 3.0, -2.0 / 3.0])
    values = np.concatenate([edges, near, special])
    values = np.resize(values, (math.ceil(len(values) / 24) * 24,)).reshape(-1, 24, 1)
    for rounding in ("trunc", "floor", "nearest"):
        l2 = lower_to_l2(l1, bits=bits, rounding=rounding, scales="maxscale",
                         maxscale=scale)
        prog = native.NativeProgram(l2)
        assert prog.encodes_reals
        got, _ = prog.run_features(values)
        reference = evaluate_l2(l2, values).outputs[0]
        assert np.array_equal(got, reference), rounding


def test_pure_runtime_functions_become_tables_in_the_host_build():
    """exp/sigmoid/tanh of one 16-bit argument are read from tables the driver fills by
    calling them on every argument; FastGRNN (both) still gives the evaluator's
    integers."""
    data = EXAMPLES / "fastgrnn" / "test.npy"
    l1 = primitive_l1(EXAMPLES / "fastgrnn.sd")
    l2 = lower_to_l2(l1, bits=16, data=str(data), evaluator="numpy")
    files = native._c_files(l2)
    tables = native.memo_tables(files["minun_runtime.h"], files["model.c"])
    assert "#define minun_sigmoid16_trunc(x)" in tables
    assert "#define minun_tanh16_trunc(x)" in tables
    assert "minun_dot16_sse2(" in files["model.c"]  # the x86 profile's PMADDWD loops
    x = features_of(l1, data)
    assert np.array_equal(native.NativeProgram(l2).outputs(x)[0],
                          evaluate_l2(l2, x).outputs[0])


@pytest.mark.slow  # four builds of the face program's C (about 40 s on 2 cores)
@pytest.mark.parametrize(("options", "tolerance"), [
    (dict(repr="posit", bits=16, es=1), 1e-2), (dict(repr="posit", bits=16, es=2), 1e-2),
    (dict(repr="posit", bits=32, es=2), 1e-6), (dict(repr="bfloat16"), 5e-2)])
def test_face_detection_compiles_in_posit_and_bfloat16(tmp_path, options, tolerance):
    """RNNPool face detection (normalise_l2 of its RNN features) at test size in the posit
    and bfloat16 representations: it quantizes (normalise_l2 used to be refused) and its C
    computes within a few of the format's units (relative to the largest output: posit16
    has 12 fraction bits near 1, bfloat16 8, posit32 27, over about 20 layers) of the float
    evaluator. With face-4's trained weights (synthetic ones, drawn anywhere in the declared
    ranges, blow the activations up once the RNNPool states reach the blocks). (At posit<16, 1> the C's patterns equal the numpy evaluator's on an image,
    but that evaluator takes about 27 minutes on it; rnnpool's crosscheck covers
    normalise_l2's C against the evaluator.)"""
    from minun_mlir.numerics.l2_eval import decode_outputs

    l1 = trained_face_l1(tmp_path)
    test = images(4, seed=1)[:, 1:].reshape(4, 1280, 1)
    # the float evaluator's outputs, the same for every representation: once per process
    reference = shared(("float", content(l1, test)), lambda: evaluate(l1, test).outputs[0])
    l2 = lower_to_l2(l1, **options)
    got = decode_outputs(l2, native.NativeProgram(l2).outputs(test))[0]
    assert got.shape == (4, 1, OUTPUTS)
    assert np.max(np.abs(got - reference)) <= tolerance * np.max(np.abs(reference))
