"""ONNX graph validation before import (fuzzing found these accepted or crashing): one
writer per tensor, unique initializers, a known opset, external data only inside the
model's folder and within its file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from cli_tools import tool as cli_tool
from onnx import TensorProto, helper, numpy_helper

MINUN_OPT = Path(cli_tool("minun-opt"))


def model(nodes, initializers=(), opset=13) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])],
        initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def import_error(m: onnx.ModelProto, tmp_path: Path, name: str = "m.onnx") -> str:
    path = tmp_path / name
    path.write_bytes(m.SerializeToString())
    r = subprocess.run([str(MINUN_OPT), str(path)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"{path}: error: "), r.stderr
    return r.stderr


def test_two_nodes_writing_one_tensor(tmp_path):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="first"),
               helper.make_node("Neg", ["x"], ["y"], name="second")])
    err = import_error(m, tmp_path)
    assert "node 'second' (Neg): output 'y' is already written by node 'first' (Relu)" in err


def test_duplicate_initializers(tmp_path):
    w = numpy_helper.from_array(np.ones((1, 2), np.float32), "w")
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [w, w])
    assert "initializer 'w' is defined twice" in import_error(m, tmp_path)


def test_node_overwriting_an_input(tmp_path):
    m = model([helper.make_node("Relu", ["x"], ["x"], name="r"),
               helper.make_node("Relu", ["x"], ["y"], name="s")])
    assert "output 'x' is already written by a graph input" in import_error(m, tmp_path)


def test_unknown_future_opset(tmp_path):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r")], opset=99)
    err = import_error(m, tmp_path)
    assert f"opset 99, newer than the newest this onnx package knows " \
           f"({onnx.defs.onnx_opset_version()})" in err


def external(location: str, offset: int = 0, length: int = 8) -> TensorProto:
    t = TensorProto()
    t.name, t.data_type = "w", TensorProto.FLOAT
    t.dims.extend([1, 2])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


@pytest.mark.parametrize("location, offset, message", [
    ("../secret.bin", 0, "external data location '../secret.bin' is not a file inside"),
    ("/etc/passwd", 0, "external data location '/etc/passwd' is not a file inside"),
    ("missing.bin", 0, "external data file 'missing.bin' is missing"),
    ("w.bin", 4, "external data bytes 4..12 are past the end of 'w.bin' (8 bytes)"),
])
def test_external_data_stays_inside_the_model_folder(tmp_path, location, offset, message):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "w.bin").write_bytes(np.ones(2, np.float32).tobytes())
    (tmp_path / "secret.bin").write_bytes(np.ones(2, np.float32).tobytes())
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
              [external(location, offset)])
    path = folder / "m.onnx"
    path.write_bytes(m.SerializeToString())
    r = subprocess.run([str(MINUN_OPT), str(path)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"{path}: error: initializer 'w': {message}"), r.stderr


def test_external_data_inside_the_folder_imports(tmp_path):
    (tmp_path / "w.bin").write_bytes(np.array([1.5, -2.0], np.float32).tobytes())
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [external("w.bin")])
    path = tmp_path / "m.onnx"
    path.write_bytes(m.SerializeToString())
    r = subprocess.run([str(MINUN_OPT), str(path)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert "minun.add" in r.stdout or "minun.bias_add" in r.stdout
