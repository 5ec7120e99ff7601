"""User errors of the ONNX frontend: one diagnostic naming the node, operator and fix,
exit code 1 from minun-opt, never a Python traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from cli_tools import tool as cli_tool
from onnx import TensorProto, helper, numpy_helper

from minun_mlir.diagnostics import MinunError
from minun_mlir.frontends.onnx import import_model

MINUN_OPT = Path(cli_tool("minun-opt"))


def make(nodes, inputs, outputs, inits=None, opset: int = 17, elem=TensorProto.FLOAT):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, elem, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def minun_opt(path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(MINUN_OPT), str(path), *args], capture_output=True, text=True,
                          timeout=120)


def assert_diagnostic(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


def test_cli_unsupported_operator(tmp_path: Path) -> None:
    path = tmp_path / "sqrt.onnx"
    onnx.save(make([helper.make_node("Sqrt", ["x"], ["y"], name="my_sqrt")], {"x": [2]},
                   ["y"]), str(path))
    assert_diagnostic(minun_opt(path), f"{path}: error: node 'my_sqrt' (Sqrt): unsupported "
                      "operator Sqrt in domain 'ai.onnx'", "supported (domain ai.onnx): Add, ",
                      "GRU", "MatMul", "folded at import")


def test_cli_other_domain_is_named(tmp_path: Path) -> None:
    path = tmp_path / "ms.onnx"
    node = helper.make_node("FusedGemm", ["x", "x"], ["y"], name="fg", domain="com.microsoft")
    model = make([node], {"x": [2, 2]}, ["y"])
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(path))
    assert_diagnostic(minun_opt(path), "node 'fg' (FusedGemm): unsupported operator FusedGemm "
                      "in domain 'com.microsoft'")


def test_cli_dynamic_batch_defaults_to_one_and_can_be_chosen(tmp_path: Path) -> None:
    path = tmp_path / "dyn.onnx"
    onnx.save(make([helper.make_node("Relu", ["x"], ["y"])], {"x": ["N", 3]}, ["y"]), str(path))
    default = minun_opt(path)
    assert default.returncode == 0 and "tensor<1x3xf32>" in default.stdout
    assert ("graph input 'x': dimension 0 is symbolic ('N'); compiled for a batch of 1 "
            "(choose with `--dim N=<size>`)") in default.stderr
    fixed = minun_opt(path, "--dim", "N=4")
    assert fixed.returncode == 0 and "tensor<4x3xf32>" in fixed.stdout
    assert "batch of 1" not in fixed.stderr
    assert_diagnostic(minun_opt(path, "--dim", "N=x"), "--dim N=x: N must be an integer")


def test_cli_dynamic_dimension_other_than_the_batch_defaults_to_one(tmp_path: Path) -> None:
    path = tmp_path / "dyn.onnx"
    onnx.save(make([helper.make_node("Relu", ["x"], ["y"])], {"x": [2, "M"]}, ["y"]), str(path))
    default = minun_opt(path)
    assert default.returncode == 0 and "tensor<2x1xf32>" in default.stdout
    warnings = [line for line in default.stderr.splitlines() if "warning:" in line]
    assert warnings == ["warning: graph input 'x': dimension 1 is symbolic ('M'); compiled as 1 "
                        "(choose with `--dim M=<size>`)"], default.stderr
    fixed = minun_opt(path, "--dim", "M=4")
    assert fixed.returncode == 0 and "tensor<2x4xf32>" in fixed.stdout
    assert "warning" not in fixed.stderr
    # --dim stays authoritative, and a wrong one is still an error
    assert_diagnostic(minun_opt(path, "--dim", "M=0"), "--dim M=0: a dimension must be a "
                      "positive integer")
    assert_diagnostic(minun_opt(path, "--dim", "K=3"), "--dim K=3: the model has no symbolic "
                      "input dimension 'K' (symbolic dimensions: M)")


def test_cli_one_name_on_several_inputs_is_warned_about_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.onnx"
    onnx.save(make([helper.make_node("Add", ["a", "b"], ["y"])],
                   {"a": [1, "T"], "b": [1, "T"]}, ["y"]), str(path))
    default = minun_opt(path)
    assert default.returncode == 0 and "tensor<1x1xf32>" in default.stdout
    assert default.stderr.count("warning:") == 1
    assert "graph input 'a': dimension 1 is symbolic ('T'); compiled as 1" in default.stderr


def test_cli_unnamed_dynamic_dimension(tmp_path: Path) -> None:
    path = tmp_path / "unknown.onnx"
    onnx.save(make([helper.make_node("Relu", ["x"], ["y"])], {"x": [3, None]}, ["y"]),
              str(path))
    default = minun_opt(path)
    assert default.returncode == 0 and "tensor<3x1xf32>" in default.stdout
    assert ("graph input 'x': dimension 1 is unknown; compiled as 1 (choose with "
            "`--dim x:1=<size>`)") in default.stderr
    fixed = minun_opt(path, "--dim", "x:1=2")
    assert fixed.returncode == 0 and "tensor<3x2xf32>" in fixed.stdout
    batch = tmp_path / "batch.onnx"
    onnx.save(make([helper.make_node("Relu", ["x"], ["y"])], {"x": [None, 3]}, ["y"]),
              str(batch))
    assert "dimension 0 is unknown; compiled for a batch of 1" in minun_opt(batch).stderr


def test_cli_non_positive_dimension_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "zero.onnx"
    model = make([helper.make_node("Relu", ["x"], ["y"])], {"x": [3, 4]}, ["y"])
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 0
    onnx.save(model, str(path))
    assert_diagnostic(minun_opt(path), "graph input 'x': dimension 1 has size 0; sizes must "
                      "be positive")


@pytest.mark.parametrize("content", [b"", b"garbage \x00\x01\x02 not a protobuf",
                                     b"\x08\x07\x12\xff\xff\xff"])
def test_cli_corrupt_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.onnx"
    path.write_bytes(content)
    assert_diagnostic(minun_opt(path), f"{path}: error: not a valid ONNX model file")


def test_truncated_model_file(tmp_path: Path) -> None:
    model = make([helper.make_node("MatMul", ["x", "w"], ["y"])], {"x": [1, 64]}, ["y"],
                 {"w": np.ones((64, 64), np.float32)})
    path = tmp_path / "cut.onnx"
    path.write_bytes(model.SerializeToString()[:-1000])
    assert_diagnostic(minun_opt(path), "error: not a valid ONNX model file")


def test_missing_file() -> None:
    with pytest.raises(MinunError, match="No such file"):
        import_model("/nonexistent/model.onnx")


def test_api_errors_name_the_node() -> None:
    shape_input = make([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
                       {"x": [2, 3]}, ["y"])
    shape_input.graph.input.append(helper.make_tensor_value_info("s", TensorProto.INT64, [2]))
    with pytest.raises(MinunError, match="graph input 's' has element type INT64"):
        import_model(shape_input)

    runtime_shape = make([helper.make_node("Relu", ["s"], ["s2"]),
                          helper.make_node("Reshape", ["x", "s2"], ["y"], name="rs")],
                         {"x": [2, 3], "s": [2]}, ["y"])
    with pytest.raises(MinunError, match=r"^node 'rs' \(Reshape\): the shape input must be a "
                                         r"constant"):
        import_model(runtime_shape)

    old = make([helper.make_node("Relu", ["x"], ["y"])], {"x": [2]}, ["y"], opset=5)
    with pytest.raises(MinunError, match="opset 5; opsets 7 and later"):
        import_model(old)

    lens = make([helper.make_node("GRU", ["x", "w", "r", "", "lens"], ["", "h"], name="g",
                                  hidden_size=1)], {"x": [3, 2, 1]}, ["h"],
                {"w": np.ones((1, 3, 1), np.float32), "r": np.ones((1, 3, 1), np.float32),
                 "lens": np.array([3, 2], np.int32)})
    with pytest.raises(MinunError, match=r"node 'g' \(GRU\): sequence_lens \[3, 2\] differ"):
        import_model(lens)

    argmax = make([helper.make_node("ArgMax", ["x"], ["y"], name="am", axis=1)],
                  {"x": [2, 3]}, ["y"])
    with pytest.raises(MinunError, match=r"node 'am' \(ArgMax\): ArgMax over axis 1 of 2x3"):
        import_model(argmax)


def test_argmax_of_one_row_is_an_i32_output() -> None:
    from minun_mlir.numerics.float_eval import evaluate

    model = make([helper.make_node("ArgMax", ["x"], ["y"], axis=1)], {"x": [1, 5]}, ["y"])
    module = import_model(model)
    x = np.array([[[0.1, 0.9, -1.0, 0.9, 0.2]], [[3.0, 0.0, 0.0, 0.0, 0.0]]])
    assert evaluate(module, x).outputs[0].tolist() == [1, 0]
