"""The model zoo (test/zoo/: scikit-learn, PyTorch's two exporters, onnx2c's examples,
tf2onnx-style hand-built models; listed in test/zoo/manifest.py), stage by stage:

- import: the model imports and the float evaluator equals onnxruntime on its 40 stored
  inputs (rtol 1e-4, atol 1e-4 of the output's largest magnitude);
- fixed16, fixed8: quantized with its training data, the C built for the Cortex-M4 and
  run in QEMU on 3 stored inputs gives exactly the bit-exact evaluator's outputs;
- cli: `minun-compile model.onnx --out DIR` exits 0 and writes model.c, its report on
  stdout (the one-line warnings it prints are shown);
- zero-skew, for pre-quantized models (test/zoo/ortquant: onnxruntime's quantizer):
  compiled with the file's own scales and zero points, the evaluator's output integers
  equal onnxruntime's on the 40 stored inputs (or stay within the manifest's ort_bound),
  and the C on the Cortex-M4 equals the evaluator. Their import stage compares labels
  (the float model does not round its activations).

A stage listed in a model's `known` fails, and the test checks it fails with that message
(so a fix shows up as a failing test, and the manifest and docs table get updated).
`test_the_docs_table_is_current` checks docs/onnx-frontend.md holds what
tools/zoo/zoo_table.py writes.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from zoo_scripts import run_script

from minun_mlir.codegen import emit_c
from minun_mlir.frontends.onnx import import_model
from minun_mlir.modules import is_regression
from minun_mlir.numerics.float_eval import evaluate
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2, storage_inputs
from minun_mlir.pipeline import lower_to_l2
from minun_mlir.targets import run_model

ROOT = Path(__file__).resolve().parents[3]


def _load_manifest():
    spec = importlib.util.spec_from_file_location("zoo_manifest", ROOT / "test/zoo/manifest.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["zoo_manifest"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


MANIFEST = _load_manifest()
MODELS = {m.name: m for m in MANIFEST.models()}
N_RUN = 3  # inputs run on the Cortex-M4 per model and width


def _output_name(model: onnx.ModelProto, m) -> str:
    """The compiled output: the manifest's, else the last graph output, or the tensor a
    final ZipMap reads (its probabilities)."""
    if m.output:
        return m.output
    last = model.graph.output[-1].name
    producer = next((n for n in model.graph.node if last in n.output), None)
    return producer.input[0] if producer is not None and producer.op_type == "ZipMap" else last


@functools.cache
def _model(name: str) -> onnx.ModelProto:
    """The zoo file with its compiled output as the only graph output."""
    m = MODELS[name]
    model = onnx.load(str(m.path))
    out = _output_name(model, m)
    kept = next((o for o in model.graph.output if o.name == out), None)
    kept = kept or helper.make_tensor_value_info(out, TensorProto.FLOAT, None)
    del model.graph.output[:]
    model.graph.output.append(kept)
    return model


@functools.cache
def _inputs(name: str) -> np.ndarray:
    return np.load(MODELS[name].path.parent.parent / MODELS[name].inputs)["x"]


@functools.cache
def _ort_raw(name: str) -> np.ndarray:
    """onnxruntime's output on every stored input, one at a time (batch 1)."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(_model(name).SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    feed = session.get_inputs()[0]
    rows = feed.shape[0] if isinstance(feed.shape[0], int) else 1  # a fixed batch: row 0
    x = _inputs(name)
    return np.stack([np.asarray(session.run(None, {feed.name: np.repeat(
        x[i:i + 1], rows, 0)})[0])[:1].reshape(-1) for i in range(len(x))])


def _quantization(op) -> tuple[float, int]:
    s, zp = op.attributes["quantization"].get_values()
    return float(s), int(zp)


def _output_quantization(name: str) -> tuple[float, int]:
    """The (scale, zero point) the model gives its output (a pre-quantized model's)."""
    ret = next(op for op in _l1(name).walk() if op.name == "func.return")
    return _quantization(ret.operands[0].owner)


@functools.cache
def _ort(name: str) -> np.ndarray:
    """onnxruntime's outputs as reals (an int8 output: the reals its integers stand for)."""
    y = _ort_raw(name)
    if y.dtype != np.int8:
        return y
    s, zp = _output_quantization(name)
    return (s * (y.astype(np.float64) - zp)).astype(np.float32)


@functools.cache
def _reals(name: str) -> np.ndarray:
    """The stored inputs as the reals the evaluator takes (an int8 input: the reals its
    integers stand for, with the model's quantization)."""
    x = _inputs(name)
    if x.dtype != np.int8:
        return x
    s, zp = _quantization(next(op for op in _l1(name).walk() if op.name == "minun.input"))
    return (s * (x.astype(np.float64) - zp)).astype(np.float32)


@functools.cache
def _l1(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a symbolic batch axis compiles as 1, with a note
        model = _model(name)  # only the nodes its one output needs
        return import_model(model, MODELS[name].dims or None,
                            outputs=[model.graph.output[0].name])


@functools.cache
def _l2(name: str, bits: int):
    m = MODELS[name]
    return lower_to_l2(_l1(name), bits=bits, data=str(m.path.parent.parent / m.train))


def _params():
    return [pytest.param(name, id=name) for name in MODELS]


def _known(name: str, stage: str) -> tuple[str, str] | None:
    return MODELS[name].known.get(stage)


def _expect_failure(name: str, stage: str, run) -> None:
    """The stage must fail with the message the manifest gives."""
    message = _known(name, stage)[0]
    with pytest.raises(Exception) as info:  # noqa: PT011  the message is checked below
        run()
    assert message in str(info.value), str(info.value)


@pytest.mark.parametrize("name", _params())
def test_import_and_float_equal_onnxruntime(name):
    assert "import" not in MODELS[name].known  # none is known to fail importing
    x = _reals(name)
    got = np.asarray(evaluate(_l1(name), x[:, None]).outputs[0]).reshape(len(x), -1)
    want = _ort(name)
    assert got.shape == want.shape
    if MODELS[name].prequantized:
        # the float model a quantized one stands for: its weights, no rounding of the
        # activations but their saturation (test_zero_skew_... checks the integers)
        assert np.mean(got.argmax(1) == want.argmax(1)) >= 0.95
    elif want.dtype.kind in "iu":  # a label
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4,
                                   atol=1e-4 * max(1.0, float(np.abs(want).max())))


# Models whose output is no class scores (regressions, feature maps): compared by their
# largest error as a fraction of the largest |output| instead of labels.
NOT_CLASSIFIERS = {"onnx2c/velardo_lesson9", "onnx2c/conv_2ch_3kernels_randombias",
                   "onnx2c/conv_3ch", "onnx2c/conv_k2_maxpool_k2", "onnx2c/lstm_k1_b1_r1"}


def _agreement(name: str, bits: int) -> float:
    """fixed-point vs onnxruntime on the 40 stored inputs: label agreement, or for
    NOT_CLASSIFIERS the largest error over the largest |output|."""
    l2 = _l2(name, bits)
    x = _reals(name)
    out = np.asarray(decode_outputs(l2, evaluate_l2(l2, x[:, None]).outputs)[0]).reshape(
        len(x), -1)
    ref = _ort(name)
    if name in NOT_CLASSIFIERS or is_regression(_l1(name)):
        return float(np.abs(out - ref).max() / np.abs(ref).max())
    return float(np.mean(out.argmax(1) == ref.argmax(1)))


@pytest.mark.parametrize("name", [n for n, m in MODELS.items() if not n.startswith(
    "sklearn/") and "fixed16" not in m.known])
def test_fixed16_agrees_with_onnxruntime(name, capsys):
    """At 16 bits every classifier gives onnxruntime's label on at least 38 of the 40
    inputs, and the others stay within 0.2% of their largest output (test_sklearn_zoo.py
    does this for the scikit-learn models). The 8-bit numbers are printed, not asserted:
    docs/onnx-frontend.md, "Model zoo", says what they measure."""
    a16, a8 = _agreement(name, 16), _agreement(name, 8)
    what = ("max error / max |output|" if name in NOT_CLASSIFIERS or is_regression(_l1(name))
            else "label agreement")
    with capsys.disabled():
        print(f"\n  {name}: {what} fixed16 {a16:.4f}, fixed8 {a8:.4f}")
    if name in NOT_CLASSIFIERS or is_regression(_l1(name)):
        assert a16 <= 0.002
    else:
        assert a16 >= 0.95


def _m4(name: str, bits: int, tmp_path: Path) -> None:
    _c_equals_the_evaluator(name, _l2(name, bits), f"fixed{bits}", tmp_path)


def _c_equals_the_evaluator(name: str, l2, config: str, tmp_path: Path) -> None:
    x = _reals(name)[:N_RUN][:, None]
    stored = np.asarray(evaluate_l2(l2, x).outputs[0]).reshape(N_RUN, -1)
    emit_c(l2, "cortex-m4", tmp_path)
    r = run_model(tmp_path, "cortex-m4", storage_inputs(l2, x), name=name.replace("/", "_"),
                  config=config)
    if MODELS[name].output in ("output_label", "label"):  # the program returns the label
        np.testing.assert_array_equal(r.labels, stored.reshape(-1))
    else:
        np.testing.assert_array_equal(np.asarray(r.outputs).reshape(stored.shape), stored)


@pytest.mark.slow
@pytest.mark.parametrize("bits", (16, 8))
@pytest.mark.parametrize("name", _params())
def test_fixed_point_c_on_cortex_m4_equals_the_evaluator(name, bits, tmp_path):
    stage = f"fixed{bits}"
    if _known(name, stage):
        _expect_failure(name, stage, lambda: _m4(name, bits, tmp_path))
    else:
        _m4(name, bits, tmp_path)


@functools.cache
def _zero_skew(name: str):
    """The model at zero-skew with the file's own scales and zero points only (no
    profile: every value it computes is one the file quantizes)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. a value with no range of its own
        return lower_to_l2(_l1(name), repr="zero-skew", bits=8)


@pytest.mark.parametrize("name", [n for n, m in MODELS.items() if m.prequantized])
def test_zero_skew_gives_onnxruntime_s_integers(name):
    """A pre-quantized model at zero-skew with its own quantization: its input is stored
    as the model's int8 (an int8 graph input: the stored integers themselves), and the
    evaluator's output integers equal onnxruntime's on the 40 stored inputs, or differ
    within the model's documented bound (manifest.py, ort_bound)."""
    l2 = _zero_skew(name)
    x = _reals(name)
    stored = storage_inputs(l2, x[:, None])
    if _inputs(name).dtype == np.int8:
        np.testing.assert_array_equal(stored.reshape(_inputs(name).shape), _inputs(name))
    ours = np.asarray(evaluate_l2(l2, x[:, None]).outputs[0]).reshape(len(x), -1)
    theirs = _ort_raw(name).astype(np.int64)
    if _ort_raw(name).dtype != np.int8:
        s, zp = _output_quantization(name)
        theirs = np.rint(_ort_raw(name).astype(np.float64) / s).astype(np.int64) + zp
    diff = np.abs(ours - theirs)
    most, equal = MODELS[name].ort_bound or (0, 1.0)
    assert diff.max() <= most and np.mean(diff == 0) >= equal, (diff.max(), np.mean(diff == 0))


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, m in MODELS.items() if m.prequantized])
def test_zero_skew_c_on_cortex_m4_equals_the_evaluator(name, tmp_path):
    _c_equals_the_evaluator(name, _zero_skew(name), "zero-skew8", tmp_path)


def _cli(name: str, out: Path | None) -> tuple[int, str, str]:
    """minun-compile on the zoo file, into `out` (None: no option at all)."""
    from minun_mlir.tools import minun_compile

    stdout, stderr = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(stdout), \
            contextlib.redirect_stderr(stderr):
        warnings.simplefilter("default")  # printed as the tool prints them
        rc = minun_compile.main([str(MODELS[name].path),
                                 *(["--out", str(out)] if out is not None else [])])
    return rc, stdout.getvalue(), stderr.getvalue()


@pytest.mark.parametrize("name", _params())
def test_minun_compile_with_no_option(name, capsys):
    """`minun-compile model.onnx` alone (in the test's own empty folder, conftest.py):
    writes the C into build/<the file's stem> and says where."""
    rc, out, err = _cli(name, None)
    with capsys.disabled():
        print(f"\n  {name}: {' | '.join(err.strip().splitlines()) or 'no warning'}")
    if _known(name, "cli"):
        assert rc == 1
        assert _known(name, "cli")[0] in err, err
        return
    assert rc == 0, err
    assert all("warning: " in line for line in err.strip().splitlines()), err  # one line each
    folder = Path("build") / MODELS[name].path.stem
    assert (folder / "model.c").stat().st_size > 0
    assert "[fixed16]" in out and "C for x86" in out, out
    assert f"  wrote {folder} (no --out given" in out, out


def test_a_symbolic_sequence_length_compiles_as_one_step_with_a_warning(tmp_path):
    """onnx2c's Keras LSTM declares its input [N, M1, 5]: with no option both symbolic
    dimensions compile as 1, each named in a one-line warning with its override; with
    `--dim M1=4` the program takes the 4 steps the other stages use."""
    name = "onnx2c/lstm_k1_b1_r1"
    rc, _, err = _cli(name, tmp_path / "c")
    assert rc == 0, err
    assert ("graph input 'input_1': dimension 1 is symbolic ('M1'); compiled as 1 (choose "
            "with `--dim M1=<size>`)") in err
    assert "#define MINUN_INPUT_SIZE 5\n" in (tmp_path / "c" / "model.h").read_text()
    from minun_mlir.tools import minun_compile

    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        assert minun_compile.main([str(MODELS[name].path), "--out", str(tmp_path / "d"),
                                   "--dim", "M1=4"]) == 0
    assert "#define MINUN_INPUT_SIZE 20\n" in (tmp_path / "d" / "model.h").read_text()


def test_velardo_lesson9_gives_onnx2c_s_own_expected_outputs():
    """onnx2c's test/velardo/main_lesson9.c expects 0.2859681248664856 for (0.1, 0.2) and
    0.38861969113349915 for (0.2, 0.2) (within 1e-5): the float evaluator too (the
    stored inputs start with those two)."""
    name = "onnx2c/velardo_lesson9"
    x = _inputs(name)[:2]
    np.testing.assert_array_equal(x, np.array([[0.1, 0.2], [0.2, 0.2]], np.float32))
    got = np.asarray(evaluate(_l1(name), x[:, None]).outputs[0]).reshape(-1)
    np.testing.assert_allclose(got, [0.2859681248664856, 0.38861969113349915], atol=1e-5)


def test_the_count_meets_the_issue():
    """Issue 17's done-when: at least 30 distinct third-party models, 90% of them passing
    import, fixed16, fixed8 (on the M4) and the command line. Distinct: one trained
    network exported twice counts once, and it passes only if both exports do."""
    families: dict[str, bool] = {}
    for m in MODELS.values():
        if m.third_party:
            families[m.family] = families.get(m.family, True) and not m.known
    assert len(families) >= 30
    assert sum(families.values()) >= 0.9 * len(families)


@pytest.mark.slow  # retrains two scikit-learn models: about 5 CPU s
def test_the_keras_style_models_are_what_the_script_builds():
    proc = run_script("make_keras_style.py", "--check")
    assert proc.returncode == 0, proc.stderr


def test_the_onnx2c_inputs_are_what_the_script_writes():
    """The models are onnx2c's bytes (the script copies them from a clone, README.md);
    their test inputs are recomputed here without one."""
    spec = importlib.util.spec_from_file_location("import_onnx2c",
                                                  ROOT / "tools/zoo/import_onnx2c.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for name in script.MODELS:
        stored = np.load(ROOT / "test/zoo/onnx2c" / f"{name}.npz")
        for key, value in script._inputs(name).items():
            np.testing.assert_array_equal(stored[key], value)


def test_the_docs_table_is_current():
    proc = run_script("zoo_table.py", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
