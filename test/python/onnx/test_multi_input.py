"""ONNX models with several graph inputs: they import (one minun.input each), the float
evaluator matches onnxruntime, every representation quantizes and its C (the inputs one
after another in minun_predict's x, docs/codegen.md) computes the evaluator's integers on
the host, the Uno and the M4; datasets carry several inputs (.npy rows, .npz arrays by
name, ONNX test_data_set folders); minun-compile takes them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from cli_tools import tool as cli_tool
from onnx import TensorProto, helper, numpy_helper

from minun_mlir import native
from minun_mlir.codegen import emit_c
from minun_mlir.data import load_dataset
from minun_mlir.diagnostics import MinunError
from minun_mlir.driver import load_model
from minun_mlir.numerics.float_eval import evaluate, input_shapes
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2, storage_inputs
from minun_mlir.pipeline import lower_to_l2

BIN = Path(__file__).resolve().parents[3] / ".venv" / "bin"


def two_input_model(path: Path, seed: int = 0) -> Path:
    """y = relu(a W1 + b W2) * s (a: 1x4, b: 1x5), a torch-free graph."""
    rng = np.random.default_rng(seed)
    w1 = rng.normal(size=(4, 3)).astype(np.float32)
    w2 = rng.normal(size=(5, 3)).astype(np.float32)
    s = np.array([0.5, 2.0, 1.0], dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "W1"], ["p"]),
         helper.make_node("MatMul", ["b", "W2"], ["q"]),
         helper.make_node("Add", ["p", "q"], ["h"]),
         helper.make_node("Relu", ["h"], ["r"]),
         helper.make_node("Mul", ["r", "S"], ["y"])], "two",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(w2, "W2"),
         numpy_helper.from_array(s, "S")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def batch(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"a": rng.uniform(-1, 1, (n, 1, 4)).astype(np.float32),
            "b": rng.uniform(-3, 3, (n, 1, 5)).astype(np.float32)}


def onnxruntime_outputs(model: Path, x: dict[str, np.ndarray]) -> np.ndarray:
    sess = ort.InferenceSession(str(model))
    n = len(x["a"])
    return np.stack([sess.run(None, {k: v[i] for k, v in x.items()})[0] for i in range(n)])


@pytest.fixture
def model(tmp_path) -> Path:
    return two_input_model(tmp_path / "two.onnx")


def train_file(tmp_path: Path, x: dict[str, np.ndarray]) -> Path:
    """The SeeDot layout: label, then every input's values in input order."""
    n = len(x["a"])
    rows = np.concatenate([np.zeros((n, 1)), x["a"].reshape(n, -1), x["b"].reshape(n, -1)],
                          axis=1)
    np.save(tmp_path / "train.npy", rows)
    return tmp_path / "train.npy"


def test_imports_one_input_per_graph_input_and_matches_onnxruntime(model):
    l1 = load_model(model)
    assert input_shapes(l1) == {"a": (1, 4), "b": (1, 5)}
    x = batch(50, seed=1)
    got = evaluate(l1, x).outputs[0]
    want = onnxruntime_outputs(model, x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# representation -> (quantize options, tolerance against onnxruntime relative to max |y|)
CONFIGS = {"fixed16": (dict(bits=16), 5e-3), "fixed8": (dict(bits=8), 0.2),
           "posit16": (dict(repr="posit", bits=16, es=1), 5e-3),
           "bfloat16": (dict(repr="bfloat16"), 3e-2), "float32": (dict(repr="float32"), 1e-6)}


@pytest.mark.parametrize("config", CONFIGS)
def test_every_representation_quantizes_and_its_c_equals_the_evaluator(model, tmp_path,
                                                                        config):
    options, tolerance = CONFIGS[config]
    l1 = load_model(model)
    l2 = lower_to_l2(l1, data=str(train_file(tmp_path, batch(64, seed=2))),
                     evaluator="numpy", **options)
    x = batch(40, seed=3)
    stored = np.asarray(evaluate_l2(l2, x).outputs[0])
    want = onnxruntime_outputs(model, x)
    got = decode_outputs(l2, [stored])[0]
    assert np.max(np.abs(got - want)) <= tolerance * np.max(np.abs(want))
    c = native.NativeProgram(l2).outputs(x)[0]
    if config == "float32":
        np.testing.assert_allclose(c, stored, rtol=1e-6, atol=1e-6)
    else:
        assert np.array_equal(c, stored)


@pytest.mark.parametrize(("target", "config", "in_scratch"),
                         [("avr", "fixed16", False), ("avr", "fixed16", True),
                          ("avr", "posit16", False), ("cortex-m4", "fixed8", False),
                          ("cortex-m4", "bfloat16", False)])
def test_c_on_the_board_equals_the_evaluator(model, tmp_path, target, config, in_scratch):
    """Also with the inputs in scratch memory (minun_predict copies x into the planned
    buffer that holds both)."""
    from minun_mlir.targets import run_model

    l2 = lower_to_l2(load_model(model), data=str(train_file(tmp_path, batch(64, seed=2))),
                     evaluator="numpy", **CONFIGS[config][0])
    x = batch(3, seed=4)
    emit_c(l2, target, tmp_path / "c", input_in_scratch=in_scratch)
    header = (tmp_path / "c" / "model.h").read_text()
    assert "#define MINUN_INPUTS 2" in header and "#define MINUN_INPUT_1_OFFSET 4" in header
    r = run_model(tmp_path / "c", target, storage_inputs(l2, x), name="two")
    expected = np.asarray(evaluate_l2(l2, x).outputs[0]).reshape(3, -1)
    np.testing.assert_array_equal(np.asarray(r.outputs).reshape(3, -1).astype(
        expected.dtype), expected)


def test_float_wrapper_quantizes_each_input_at_its_scale(model, tmp_path):
    """minun_predict_float of a fixed-point model with inputs at different scales: the
    host C's scores equal the evaluator's, decoded."""
    import ctypes

    l2 = lower_to_l2(load_model(model), data=str(train_file(tmp_path, batch(64, seed=2))),
                     evaluator="numpy", bits=16)
    scales = [op.results[0].type.element_type.frac for op in l2.walk()
              if op.name == "num.input"]
    assert scales[0] != scales[1]  # a in [-1, 1], b in [-3, 3]
    emit_c(l2, "x86", tmp_path / "c")
    lib = tmp_path / "model.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(lib),
                    *map(str, sorted((tmp_path / "c").glob("*.c"))), "-lm"], check=True)
    so = ctypes.CDLL(str(lib))
    x = batch(5, seed=6)
    want = decode_outputs(l2, evaluate_l2(l2, x).outputs)[0].reshape(5, -1)
    for i in range(5):
        flat = np.concatenate([x["a"][i].ravel(), x["b"][i].ravel()]).astype(np.float32)
        scores = np.zeros(3, dtype=np.float32)
        so.minun_predict_float(flat.ctypes.data_as(ctypes.c_void_p),
                               scores.ctypes.data_as(ctypes.c_void_p))
        np.testing.assert_array_equal(scores, want[i].astype(np.float32))


# --- datasets ------------------------------------------------------------------------------


def test_datasets_with_several_inputs_in_every_format(model, tmp_path):
    """The same examples from a .npy (label, a's values, b's values), an .npz (one array
    per input name and y) and ONNX test_data_set folders (input_0.pb, input_1.pb)."""
    x = batch(4, seed=7)
    labels = np.array([0, 2, 1, 2])
    shapes = input_shapes(load_model(model))
    rows = np.concatenate([labels[:, None], x["a"].reshape(4, -1), x["b"].reshape(4, -1)], 1)
    np.save(tmp_path / "d.npy", rows)
    np.savez(tmp_path / "d.npz", b=x["b"], a=x["a"], y=labels)
    for i in range(4):
        d = tmp_path / "onnx" / f"test_data_set_{i}"
        d.mkdir(parents=True)
        for k, name in enumerate(("a", "b")):
            (d / f"input_{k}.pb").write_bytes(
                numpy_helper.from_array(x[name][i]).SerializeToString())
        out = np.zeros((1, 3), dtype=np.float32)
        out[0, labels[i]] = 1.0
        (d / "output_0.pb").write_bytes(numpy_helper.from_array(out).SerializeToString())
    for path in ("d.npy", "d.npz", "onnx"):
        data = load_dataset(tmp_path / path, shapes)
        assert set(data.features) == {"a", "b"}, path
        for name in ("a", "b"):
            np.testing.assert_array_equal(data.features[name], x[name], err_msg=path)
        np.testing.assert_array_equal(data.labels, labels, err_msg=path)


def test_dataset_errors_name_what_is_missing(model, tmp_path):
    shapes = input_shapes(load_model(model))
    np.savez(tmp_path / "one.npz", a=np.zeros((3, 1, 4)))
    with pytest.raises(MinunError, match="one array per input name .* missing b"):
        load_dataset(tmp_path / "one.npz", shapes)
    np.save(tmp_path / "short.npy", np.random.default_rng(0).random((3, 6)))
    with pytest.raises(MinunError, match="5 features per example, but the program's inputs "
                                         "are a 1x4, b 1x5 \\(9 values\\)"):
        load_dataset(tmp_path / "short.npy", shapes)
    d = tmp_path / "set"
    d.mkdir()
    (d / "input_0.pb").write_bytes(numpy_helper.from_array(
        np.zeros((1, 4), np.float32)).SerializeToString())
    with pytest.raises(MinunError, match="has no input_1.pb"):
        load_dataset(d, shapes)


def test_minun_compile_takes_several_inputs(model, tmp_path):
    """--train as .npy rows, --test as an .npz by input name: the report's accuracy is the
    agreement with onnxruntime's argmax, the C is written and run on the Uno (--run checks
    it against the evaluator); a bad .npz is one line."""
    train = train_file(tmp_path, batch(64, seed=2))
    x = batch(20, seed=8)
    labels = np.argmax(onnxruntime_outputs(model, x).reshape(20, -1), axis=1)
    np.savez(tmp_path / "test.npz", a=x["a"], b=x["b"], y=labels)
    proc = subprocess.run([cli_tool("minun-compile"), str(model), "--train", str(train),
                           "--test", str(tmp_path / "test.npz"), "--out", str(tmp_path / "c"),
                           "--target", "avr", "--run"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "float accuracy: 100.00%" in proc.stdout
    assert "on avr: 20 test inputs" in proc.stdout
    assert "labels equal to the evaluator's on 100.00%" in proc.stdout
    assert (tmp_path / "c" / "model.c").is_file()
    proc = subprocess.run([cli_tool("minun-compile"), str(model)], capture_output=True,
                          text=True)  # no data: profiled in the declared ranges
    assert proc.returncode == 0, proc.stderr
    assert "declared input ranges (a [-1, 1], b [-1, 1])" in proc.stderr
    np.savez(tmp_path / "bad.npz", a=x["a"])
    proc = subprocess.run([cli_tool("minun-compile"), str(model), "--train",
                           str(tmp_path / "bad.npz")], capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    # one error line (and a note naming the files of the compile before, which wrote
    # into the same default folder, build/two, and are removed)
    error_line, *notes = proc.stderr.strip().splitlines()
    assert "error:" in error_line and "missing b" in error_line
    assert [n.startswith("build/two: note: removed the earlier compile's") for n in notes] == [True]
