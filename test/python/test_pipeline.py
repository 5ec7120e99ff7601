"""The one declared pipeline (minun_mlir/pipeline.py): minun-compile prints the text it
runs, minun-opt runs that same text to the same C, every stage runs alone on textual IR,
and no pass runs another behind the user's back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_tools import tool as cli_tool

from minun_mlir.diagnostics import MinunError
from minun_mlir.ir_text import parse_ir
from minun_mlir.pipeline import STAGES, parse_pipeline, pipeline_text, run_pipeline
from minun_mlir.registry import PASSES

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
AVGPOOL = """func.func @main() -> tensor<1x1x1x2xf32> {
  %x = minun.input "X" [-1.0, 1.0] : tensor<1x4x4x2xf32>
  %p = minun.global_avgpool %x : (tensor<1x4x4x2xf32>) -> tensor<1x1x1x2xf32>
  func.return %p : tensor<1x1x1x2xf32>
}
"""
TRAIN = ROOT / "benchmarks/models/lenet-digits10/train.npy"


def run(tool: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([cli_tool(tool), *args], capture_output=True, text=True, cwd=cwd)


def test_stages_are_registered_passes_in_level_order():
    assert set(STAGES) <= set(PASSES)
    text = pipeline_text()
    assert text == "builtin.module(" + ",".join(STAGES) + ")"
    assert [p.name for p in parse_pipeline(text)] == list(STAGES)


def test_options_are_printed_in_pipeline_syntax_and_parse_back():
    text = pipeline_text({"quantize": {"bits": 8, "demote": ("W", "B"), "data": "a b/t.npy",
                                       "rounding": "nearest"},
                          "memory-plan": {"planner": "naive"}})
    passes = {p.name: p for p in parse_pipeline(text)}
    assert passes["quantize"].bits == 8 and passes["quantize"].demote == ("W", "B")
    assert passes["quantize"].data == "a b/t.npy" and passes["quantize"].rounding == "nearest"
    assert passes["memory-plan"].planner == "naive"


def test_unknown_stage_option_is_a_diagnostic():
    with pytest.raises(MinunError, match="quantize: unknown option bitz"):
        pipeline_text({"quantize": {"bitz": 8}})


def test_quantize_does_not_lower_composite_ops_itself():
    # average pooling is composite: quantize alone names the missing stage
    l1 = parse_ir(AVGPOOL, "pool.mlir")
    with pytest.raises(MinunError, match="run lower-composite-ops before quantize"):
        run_pipeline(l1.clone(), 'quantize{scales="maxscale" maxscale=4}')
    with pytest.raises(MinunError, match="^pool.mlir:3:3: error: minun.global_avgpool is a"):
        run_pipeline(l1.clone(), 'quantize{scales="maxscale" maxscale=4}')
    kept = run_pipeline(l1, 'lower-composite-ops,quantize{scales="maxscale" maxscale=4}',
                        keep=("lower-composite-ops",))
    assert not any(op.name == "minun.avgpool" for op in kept["lower-composite-ops"].walk())
    assert any(op.name.startswith("num.") for op in l1.walk())


def test_minun_compile_runs_the_pipeline_it_prints(tmp_path):
    """minun-opt given minun-compile's --print-pipeline text writes byte-identical C."""
    model, train = "examples/lenet.sd", str(TRAIN)
    args = [model, "--train", train, "--bits", "8", "--target", "avr"]
    printed = run("minun-compile", *args, "--print-pipeline")
    assert printed.returncode == 0, printed.stderr
    text = printed.stdout.strip()
    assert text.startswith("builtin.module(lower-composite-ops,quantize{bits=8 ")
    compiled = run("minun-compile", *args, "--out", str(tmp_path / "c"))
    assert compiled.returncode == 0, compiled.stderr
    opt = run("minun-opt", model, f"--pass-pipeline={text}", "-t", "c{profile=avr file=source}")
    assert opt.returncode == 0, opt.stderr
    assert opt.stdout == (tmp_path / "c" / "model.c").read_text()


@pytest.mark.parametrize("stop", STAGES)
def test_every_prefix_runs_from_textual_ir(tmp_path, stop):
    """Each stage alone on the text the previous prefix printed gives the text of the longer
    prefix: every stage is runnable alone from textual IR."""
    model = "examples/protonn.sd"
    i = STAGES.index(stop)
    options = {"quantize": {"bits": 16, "data": "benchmarks/models/protonn-digits10/train.npy"}}
    full = run("minun-opt", model, "--pass-pipeline=" + pipeline_text(options, stop=stop))
    assert full.returncode == 0, full.stderr
    if i == 0:
        return
    before = run("minun-opt", model,
                 "--pass-pipeline=" + pipeline_text(options, stop=STAGES[i - 1]))
    (tmp_path / "prev.mlir").write_text(before.stdout)
    alone = run("minun-opt", str(tmp_path / "prev.mlir"),
                "--pass-pipeline=" + pipeline_text(options, start=stop, stop=stop))
    assert alone.returncode == 0, alone.stderr
    assert alone.stdout == full.stdout
