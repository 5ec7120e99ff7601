"""minun-compile end to end: a model file to C, run on the host, labels equal to the
bit-exact evaluator's; and its errors are diagnostics."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_tools import tool as cli_tool

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
USPS = ROOT / "examples" / "fastgrnn_lr_usps"


def compile_(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([cli_tool("minun-compile"), *args], capture_output=True,
                          text=True)


def test_usps_on_the_host_matches_the_evaluator(tmp_path):
    report = tmp_path / "r.json"
    r = compile_(str(ROOT / "examples" / "fastgrnn_lr_usps.sd"), "--train",
                 str(USPS / "test.npy"), "--test", str(USPS / "test.npy"), "--out",
                 str(tmp_path / "c"), "--run", "--json", str(report))
    assert r.returncode == 0, r.stderr
    data = json.loads(report.read_text())
    assert data["accuracy"] == 1.0 and data["disagreement"] == 0.0
    assert data["run"]["labels"] == [9, 6, 3, 6, 6, 0, 0, 0, 6, 9]
    assert data["run"]["agreement"] == 1.0
    assert {p.name for p in (tmp_path / "c").iterdir()} >= {"model.h", "model.c"}


def test_data_driven_without_training_data_profiles_the_declared_range(tmp_path):
    """The command line profiles on inputs drawn in X's declared range, with one warning;
    the API asks for data (or synthetic=N) instead of guessing."""
    from minun_mlir.diagnostics import MinunError
    from minun_mlir.driver import compile_model

    r = compile_(str(ROOT / "examples" / "fastgrnn_lr_usps.sd"))
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert "warning: no training data: scales profiled on 64 inputs drawn uniformly in " \
        "the declared input range" in r.stderr
    with pytest.raises(MinunError, match="data-driven scales need training data"):
        compile_model(ROOT / "examples" / "fastgrnn_lr_usps.sd")


def test_unknown_model_format_is_a_diagnostic(tmp_path):
    bad = tmp_path / "model.txt"
    bad.write_text("hello")
    r = compile_(str(bad), "--scales", "maxscale", "--maxscale", "5")
    assert r.returncode == 1 and "unknown model format '.txt'" in r.stderr
    assert "Traceback" not in r.stderr


def test_run_of_a_sgn_model_compares_labels_not_labels_with_scores():
    """Bonsai returns sgn(score): the evaluator's output is the label, the C's output
    buffer the score; --run compared the two and called every input a mismatch."""
    r = compile_(str(ROOT / "examples" / "bonsai.sd"), "--train",
                 str(ROOT / "examples" / "bonsai" / "test.npy"), "--test",
                 str(ROOT / "examples" / "bonsai" / "test.npy"), "--run", "--max-inputs", "20")
    assert r.returncode == 0, r.stderr
    assert "labels equal to the evaluator's on 100.00%" in r.stdout


def test_posit_representation_on_the_host_matches_the_evaluator(tmp_path):
    """--repr posit --bits 8 --es 2: no training data needed (one type per program), the
    posit runtime is written beside the model's C and the run agrees with the evaluator."""
    report = tmp_path / "r.json"
    r = compile_(str(ROOT / "examples" / "fastgrnn_lr_usps.sd"), "--repr", "posit", "--bits",
                 "8", "--es", "2", "--test", str(USPS / "test.npy"), "--out",
                 str(tmp_path / "c"), "--run", "--json", str(report))
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr
    data = json.loads(report.read_text())
    assert data["run"]["agreement"] == 1.0
    assert "fastgrnn_lr_usps [posit8]" in r.stdout
    assert {p.name for p in (tmp_path / "c").iterdir()} >= {"model.c", "posit.c", "posit.h"}


def test_zero_skew_representation_on_the_host_matches_the_evaluator(tmp_path):
    """--repr zero-skew (bits 8 by default): profiled on --train, the x86 C's labels equal
    the evaluator's; other bitwidths are a one-line diagnostic naming the flag."""
    model = ROOT / "benchmarks" / "models" / "lenet-digits-binary"
    report = tmp_path / "r.json"
    r = compile_(str(model / "model.sd"), "--repr", "zero-skew", "--train",
                 str(model / "train.npy"), "--test", str(model / "test.npy"), "--out",
                 str(tmp_path / "c"), "--run", "--max-inputs", "50", "--json", str(report))
    assert r.returncode == 0, r.stderr
    assert "model [zero-skew8]" in r.stdout
    assert json.loads(report.read_text())["run"]["agreement"] == 1.0
    bad = compile_(str(model / "model.sd"), "--repr", "zero-skew", "--bits", "16", "--train",
                   str(model / "train.npy"))
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().splitlines() == [
        "minun-compile: error: --repr zero-skew takes --bits 8 (int8 values, int32 "
        "accumulators), got --bits 16"]


def test_per_channel_on_the_host_matches_the_evaluator(tmp_path):
    """--per-channel: the weights' channels get their own scales (the C carries a shift
    table per weight), the run agrees with the evaluator; with posits it is one line of
    diagnostic and exit 1."""
    lenet = ROOT / "benchmarks" / "models" / "lenet-digits10"
    report = tmp_path / "r.json"
    r = compile_(str(lenet / "model.onnx"), "--bits", "8", "--per-channel", "--train",
                 str(lenet / "train.npy"), "--test", str(lenet / "test.npy"), "--out",
                 str(tmp_path / "c"), "--run", "--max-inputs", "40", "--json", str(report))
    assert r.returncode == 0, r.stderr
    assert "model [fixed8-per-channel]" in r.stdout
    assert json.loads(report.read_text())["run"]["agreement"] == 1.0
    assert "_shift[" in (tmp_path / "c" / "model.c").read_text()
    r = compile_(str(lenet / "model.onnx"), "--repr", "posit", "--per-channel")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip() == (
        "minun-compile: error: --per-channel is for --repr zero-skew, or --repr fixed with "
        "data-driven scales")


LENET = ROOT / "benchmarks" / "models" / "lenet-digits10"
TRAIN = ["--train", str(LENET / "train.npy")]


@pytest.mark.parametrize("flags, label, mistakes", [
    (["--bias-correction"], "zero-skew8-per-channel-bias-corrected", [
        (["--repr", "zero-skew", "--bias-correction"],
         "minun-compile: error: --bias-correction needs --train: the inputs it measures the quantized "
         "program's errors on"),
        (["--repr", "fixed", "--bias-correction", *TRAIN],
         "minun-compile: error: --bias-correction is for --repr zero-skew, not --repr fixed")]),
    (["--weight-rounding", "gptq"], "zero-skew8-per-channel-gptq", [
        (["--repr", "zero-skew", "--weight-rounding", "gptq"],
         "minun-compile: error: --weight-rounding gptq needs --train: the inputs each layer's output is "
         "matched on"),
        (["--weight-rounding", "gptq", *TRAIN],
         "minun-compile: error: --weight-rounding gptq is for --repr zero-skew, not --repr fixed"),
        (["--repr", "zero-skew", "--weight-rounding", "gptq", "--bias-correction", *TRAIN],
         "minun-compile: error: --weight-rounding gptq already refits the biases --bias-correction "
         "moves: use one of them")]),
])
def test_calibrated_zero_skew_options_on_the_host_match_the_evaluator(flags, label,
                                                                       mistakes, tmp_path):
    """--bias-correction and --weight-rounding gptq (zero-skew, per-channel): the C carries
    other weights or biases than the plain compile's, its run agrees with the evaluator;
    without --train, outside zero-skew or (gptq) beside --bias-correction it is one line
    of diagnostic naming the flags."""
    common = [str(LENET / "model.onnx"), "--repr", "zero-skew", "--per-channel", *TRAIN,
              "--test", str(LENET / "test.npy")]
    report = tmp_path / "r.json"
    r = compile_(*common, *flags, "--out", str(tmp_path / "c"), "--run", "--max-inputs",
                 "40", "--json", str(report))
    assert r.returncode == 0, r.stderr
    assert f"model [{label}]" in r.stdout
    assert json.loads(report.read_text())["run"]["agreement"] == 1.0
    plain = compile_(*common, "--out", str(tmp_path / "p"))
    assert plain.returncode == 0, plain.stderr
    assert (tmp_path / "c" / "model.c").read_text() != (tmp_path / "p" / "model.c").read_text()
    for extra, message in mistakes:
        bad = compile_(str(LENET / "model.onnx"), *extra)
        assert bad.returncode == 1 and "Traceback" not in bad.stderr
        assert bad.stderr.strip().splitlines() == [message]


def test_output_in_scratch_runs_on_the_host_and_reports_the_output_in_its_ram(tmp_path):
    """--output-in-scratch through the CLI: the run matches the evaluator, the report and
    its line name the output among what the planned RAM holds (with --search the search
    counts it too: test/python/search/test_search_stream_rows.py)."""
    report = tmp_path / "r.json"
    args = (str(ROOT / "examples" / "fastgrnn_lr_usps.sd"), "--train", str(USPS / "test.npy"))
    r = compile_(*args, "--test", str(USPS / "test.npy"), "--out", str(tmp_path / "c"),
                 "--output-in-scratch", "--run", "--json", str(report))
    assert r.returncode == 0, r.stderr
    assert "RAM for buffers and the output (greedy)" in r.stdout
    data = json.loads(report.read_text())
    assert data["memory"]["output_in_scratch"] is True
    assert data["run"]["agreement"] == 1.0
    assert "#define MINUN_OUTPUT_IN_SCRATCH 1" in (tmp_path / "c" / "model.h").read_text()
