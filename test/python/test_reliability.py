"""Regression tests for the reliability defects found by fuzzing (issue: no traceback, no
hang, no silent wrong answer): each input here once crashed or hung a tool."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from minun_mlir.diagnostics import MinunError, stage
from minun_mlir.tools.errors import run_tool

BIN = Path(sys.executable).parent
COMPILE = 'lower-composite-ops,quantize{scales="maxscale" maxscale=4},lower-to-loops,' \
          'memory-plan,lower-to-emitc'


def opt(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "minun-opt"), *args], capture_output=True, text=True,
                          timeout=timeout)


def test_internal_error_is_one_line_naming_the_stage(capsys):
    def body():
        with stage("lower-to-loops"):
            raise KeyError("boom")

    assert run_tool("minun-opt", body) == 1
    err = capsys.readouterr().err
    assert err.startswith("minun-opt: internal error in lower-to-loops: KeyError: 'boom' (a bug")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    with pytest.raises(KeyError):
        run_tool("minun-opt", body, debug=True)


def test_user_error_is_printed_as_it_is(capsys):
    def body():
        raise MinunError("f.sd:1:2: error: bad")

    assert run_tool("minun-compile", body) == 1
    assert capsys.readouterr().err == "f.sd:1:2: error: bad\n"


def test_binary_input_is_a_diagnostic(tmp_path):
    src = tmp_path / "model.mlir"
    src.write_bytes(b"func.func \x00\xff\xfe")
    r = opt(str(src))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip() == f"{src}: error: not textual IR (not UTF-8 at byte 11)"


def test_a_chain_of_3000_ops_compiles(tmp_path):
    """RecursionError in lower-to-loops once: the fused expression is 3,000 levels deep."""
    n = 3000
    lines = ["func.func @main() -> tensor<2xf32> {",
             '  %x0 = minun.input "X" [-1.0, 1.0] : tensor<2xf32>']
    lines += [f"  %x{i} = minun.neg %x{i - 1} : (tensor<2xf32>) -> tensor<2xf32>"
              for i in range(1, n + 1)]
    lines += [f"  func.return %x{n} : tensor<2xf32>", "}"]
    src = tmp_path / "chain.mlir"
    src.write_text("\n".join(lines) + "\n")
    r = opt(str(src), "-p", COMPILE, "-t", "c{file=source}")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "minun_predict" in r.stdout


def test_3000_nested_modules_parse_and_print(tmp_path):
    src = tmp_path / "nested.mlir"
    src.write_text("builtin.module {\n" * 3000 + "}\n" * 3000)
    r = opt(str(src))
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.count("builtin.module") == 3000
