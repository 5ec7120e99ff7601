"""minun-opt as a user runs it: help, both pipeline spellings, clean errors, and no output
file on failure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cli_tools import tool as cli_tool

BIN = Path(sys.executable).parent
GOOD = """func.func @main() -> tensor<2xf32> {
  %x = minun.input "X" [-1.0, 1.0] : tensor<2xf32>
  %n = minun.neg %x : (tensor<2xf32>) -> tensor<2xf32>
  %m = minun.neg %n : (tensor<2xf32>) -> tensor<2xf32>
  func.return %m : tensor<2xf32>
}
"""


def opt(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([cli_tool("minun-opt"), *args], capture_output=True, text=True,
                          cwd=cwd)


def test_help_lists_our_passes_with_options():
    out = opt("--help").stdout
    assert 'quantize{repr="fixed" bits=16' in out
    assert "lower-composite-ops:" in out
    assert "select-target-kernels{target=\"x86\"}:" in out
    # every line of the list is a pass spec that minun-opt itself accepts
    specs = [line.split(": ")[0].strip() for line in
             out.split("with their options and defaults:")[1].split("\n\n")[0].splitlines()
             if line.strip()]
    assert sorted(s.split("{")[0] for s in specs) == sorted((  # the passes we ship
        "lower-composite-ops", "bitwidth-assign", "quantize", "stream-rows", "lower-to-loops",
        "memory-plan", "lower-to-emitc", "select-target-kernels"))
    from minun_mlir.pipeline import parse_pipeline
    assert [p.name for p in parse_pipeline(",".join(specs))] == [s.split("{")[0] for s in specs]


def test_both_pipeline_spellings_agree(tmp_path):
    src = tmp_path / "f.mlir"
    src.write_text(GOOD)
    a = opt(str(src), "-p", "canonicalize")
    b = opt(str(src), "--pass-pipeline=builtin.module(canonicalize)")
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout
    assert "minun.neg" not in a.stdout  # -(-x) folded


def test_unquoted_path_in_a_pass_option_is_a_clean_error(tmp_path):
    src = tmp_path / "f.mlir"
    src.write_text(GOOD)
    r = opt(str(src), "--pass-pipeline=builtin.module(quantize{data=a/train.npy})")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "string option values are written in double quotes" in r.stderr


def test_unknown_pass_is_a_clean_error(tmp_path):
    src = tmp_path / "f.mlir"
    src.write_text(GOOD)
    r = opt(str(src), "-p", "no-such-pass")
    assert r.returncode == 1
    assert "error" in r.stderr and "no-such-pass" in r.stderr
    assert "Traceback" not in r.stderr


def test_parse_error_is_located(tmp_path):
    src = tmp_path / "bad.mlir"
    src.write_text(GOOD.replace("tensor<2xf32>) -> tensor<2xf32>\n  %m",
                                "tensor<2xf32>) -> tensor<3xf32>\n  %m"))
    r = opt(str(src))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"{src}:4:18: error: operand is used with type tensor<2xf32>")


def test_failure_writes_no_output_file(tmp_path):
    src = tmp_path / "bad.mlir"
    src.write_text(GOOD.replace("%n = minun.neg %x : (tensor<2xf32>) -> tensor<2xf32>",
                                "%n = minun.neg %x : (tensor<2xf32>) -> tensor<3xf32>")
                   .replace("%m = minun.neg %n : (tensor<2xf32>)",
                            "%m = minun.neg %n : (tensor<3xf32>)"))
    out = tmp_path / "out.mlir"
    r = opt(str(src), "-o", str(out))
    assert r.returncode == 1
    assert r.stderr.startswith(f"{src}:3:3: error: minun.neg")
    assert "Traceback" not in r.stderr
    assert not out.exists()
    ok = tmp_path / "ok.mlir"
    ok.write_text(GOOD)
    assert opt(str(ok), "-o", str(out)).returncode == 0
    assert "minun.input" in out.read_text()


def test_missing_input_file_is_a_clean_error(tmp_path):
    r = opt(str(tmp_path / "nope.mlir"))
    assert r.returncode == 1 and "Traceback" not in r.stderr and "nope.mlir" in r.stderr


def test_truncated_string_literal_fails_fast(tmp_path):
    """A file cut inside a hex weight blob: xDSL's string regex backtracked exponentially
    (a hang); ours fails in linear time with the location of the opening quote."""
    src = tmp_path / "cut.mlir"
    blob = "0x" + "0123456789ABCDEF" * 40
    src.write_text('func.func @main() -> tensor<2xf32> {\n'
                   f'  %w = minun.param "W" [-1.0, 1.0] dense<"{blob}')
    r = subprocess.run([cli_tool("minun-opt"), str(src)], capture_output=True, text=True,
                       timeout=20)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"{src}:2:42: error: End of file reached before closing string")


def test_string_escapes_still_parse(tmp_path):
    src = tmp_path / "s.mlir"
    src.write_text('"test.op"() {a = "q\\"uote \\\\ tab\\t nl\\n hex\\41"} : () -> ()\n')
    r = opt(str(src), "--allow-unregistered-dialect")
    assert r.returncode == 0, r.stderr
    # xDSL prints the same string with hex escapes
    assert '"q\\22uote \\\\ tab\\09 nl\\0A hexA"' in r.stdout
