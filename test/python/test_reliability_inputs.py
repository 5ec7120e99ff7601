"""Regression tests for damaged or impossible inputs (the reliability issue's input,
resource and frontend items): each input here once gave an internal error, blocked a
tool forever, read a device without end or ran out of memory. Now each is refused with
one located diagnostic, before any large allocation or long computation."""

from __future__ import annotations

import contextlib
import io
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from minun_mlir.tools import minun_compile, minun_opt

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[2]


def run(main, argv) -> tuple[int, str]:
    """A tool's main in this process: (exit status, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, err.getvalue()


def refused(main, argv, message: str) -> str:
    """The tool exits 1 with one diagnostic that holds `message`; no internal error."""
    rc, err = run(main, argv)
    assert rc == 1, err
    assert message in err, err
    assert "internal error" not in err and "Traceback" not in err, err
    return err


def _limited() -> None:  # a child that misbehaves must not take the machine with it
    resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))


def tool(name: str, *args, timeout: float = 30) -> subprocess.CompletedProcess:
    """A tool in a child process with 2 GB of address space and a time limit: the old
    code blocked on a FIFO or read /dev/zero without end."""
    return subprocess.run([str(BIN / name), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, preexec_fn=_limited)


def mlp(hidden: int = 3, n_in: int = 4, opset: int = 13) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n_in])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, hidden])
    w = numpy_helper.from_array(np.linspace(-1, 1, n_in * hidden, dtype=np.float32)
                                .reshape(n_in, hidden), "W")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")],
                              "g", [x], [y], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.fixture
def onnx_case(tmp_path):
    """A small ONNX model, training data for it, and its test data folder."""
    model = tmp_path / "model.onnx"
    onnx.save(mlp(), model)
    rng = np.random.default_rng(0)
    train = tmp_path / "train.npy"
    np.save(train, np.concatenate([rng.integers(0, 3, (20, 1)), rng.uniform(-1, 1, (20, 4))],
                                  axis=1))
    folder = tmp_path / "test_data" / "test_data_set_0"
    folder.mkdir(parents=True)
    (folder / "input_0.pb").write_bytes(numpy_helper.from_array(
        rng.uniform(-1, 1, (1, 4)).astype(np.float32)).SerializeToString())
    (folder / "output_0.pb").write_bytes(numpy_helper.from_array(
        np.array([[0.1, 0.5, 0.2]], np.float32)).SerializeToString())
    return model, train, tmp_path / "test_data"


# -- 11: damaged inputs -------------------------------------------------------------------

def test_damaged_onnx_is_one_diagnostic_in_minun_compile_as_in_minun_opt(onnx_case):
    """minun-compile read the model with onnx.load: a DecodeError (internal error)."""
    model, train, _ = onnx_case
    data = model.read_bytes()
    model.write_bytes(data[: len(data) // 2] + b"\xff\xff\xff")
    for main in (minun_compile.main, minun_opt.main):
        args = [model, "--train", train] if main is minun_compile.main else [model]
        err = refused(main, args, f"{model}: error: not a valid ONNX model file")
        assert len(err.strip().splitlines()) == 1


def test_npz_labels_that_are_not_one_per_example(onnx_case, tmp_path):
    """A 2-D 'y' (one-hot rows): ValueError in np.concatenate (internal error)."""
    model, _, _ = onnx_case
    train = tmp_path / "onehot.npz"
    np.savez(train, x=np.zeros((10, 4)), y=np.eye(10)[:, :3])
    refused(minun_compile.main, [model, "--train", train],
            f"{train}: error: 'y' holds the labels, one number per example (shape (10,)); "
            "it has shape (10, 3)")
    np.savez(train, x=np.float64(1.0))  # a 0-d 'x': len() of it raised TypeError
    refused(minun_compile.main, [model, "--train", train], f"{train}: error: 'x' is a single")


@pytest.mark.parametrize("damage, message", [
    (lambda d: (d / "input_0.pb").write_bytes(b"garbage\xff"),
     "input_0.pb: error: not a serialized ONNX TensorProto"),
    (lambda d: (d / "output_0.pb").write_bytes(b"\x08"),
     "output_0.pb: error: not a serialized ONNX TensorProto"),
    (lambda d: (d / "input_0.pb").write_bytes(helper.make_tensor(
        "s", TensorProto.STRING, [1], [b"a"]).SerializeToString()),
     "input_0.pb: error: holds 1 object values; test data are numbers"),
    (lambda d: (d.parent / "test_data_set_1").mkdir() or (
        d.parent / "test_data_set_1" / "input_0.pb").write_bytes(
        numpy_helper.from_array(np.zeros((1, 5), np.float32)).SerializeToString()),
     "error: the test data sets hold inputs of different sizes"),
])
def test_damaged_onnx_test_data_folder(onnx_case, damage, message):
    """A damaged input_0.pb / output_0.pb: DecodeError from protobuf (internal error)."""
    model, train, test = onnx_case
    damage(test / "test_data_set_0")
    refused(minun_compile.main, [model, "--train", train, "--test", test], message)
