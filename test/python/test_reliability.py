"""Regression tests for the reliability defects found by fuzzing (issue: no traceback, no
hang, no silent wrong answer): each input here once crashed or hung a tool."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_tools import tool as cli_tool

from minun_mlir.diagnostics import MinunError, stage
from minun_mlir.tools.errors import run_tool

BIN = Path(sys.executable).parent
COMPILE = 'lower-composite-ops,quantize{scales="maxscale" maxscale=4},lower-to-loops,' \
          'memory-plan,lower-to-emitc'


def opt(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([cli_tool("minun-opt"), *args], capture_output=True, text=True,
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


# -- validation before work: data and weights ------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
PROTONN = ROOT / "examples" / "protonn.sd"
TRAIN = ROOT / "benchmarks" / "models" / "protonn-digits10" / "train.npy"


def compile_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([cli_tool("minun-compile"), *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def train_copy(tmp_path: Path, edit) -> Path:
    data = np.load(TRAIN)
    data = edit(data.copy())
    path = tmp_path / "train.npy"
    np.save(path, data)
    return path


def test_nan_in_training_data_names_row_and_feature(tmp_path):
    def edit(d):
        d[7, 1 + 12] = np.nan
        return d
    r = compile_cli(str(PROTONN), "--train", str(train_copy(tmp_path, edit)))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "train.npy: error: row 7, feature 12 is nan; the data must be finite" in r.stderr


def test_inf_in_training_data_is_an_error(tmp_path):
    def edit(d):
        d[:3, 5] = np.inf
        return d
    r = compile_cli(str(PROTONN), "--train", str(train_copy(tmp_path, edit)))
    assert r.returncode == 1 and "row 0, feature 4 is inf" in r.stderr
    assert "(3 values are not)" in r.stderr


def test_empty_training_data_is_an_error(tmp_path):
    r = compile_cli(str(PROTONN), "--train", str(train_copy(tmp_path, lambda d: d[:0])))
    assert r.returncode == 1 and "holds no examples (0 rows)" in r.stderr


@pytest.mark.parametrize("edit, message", [
    (lambda d: d[:1], "only 1 example"),
    (lambda d: np.concatenate([d[:, :1], np.zeros_like(d[:, 1:])], axis=1),
     "examples are identical"),
])
def test_degenerate_training_data_is_a_warning(tmp_path, edit, message):
    r = compile_cli(str(PROTONN), "--train", str(train_copy(tmp_path, edit)))
    assert r.returncode == 0, r.stderr
    assert "train.npy: warning: " in r.stderr and message in r.stderr


def _protonn_with(tmp_path: Path, name: str, edit) -> Path:
    folder = tmp_path / "protonn"
    folder.mkdir()
    for f in (ROOT / "examples" / "protonn").glob("*.npy"):
        values = np.load(f)
        np.save(folder / f.name, edit(values.copy()) if f.stem == name else values)
    program = tmp_path / "protonn.sd"
    program.write_text(PROTONN.read_text())
    return program


def test_nan_weight_in_a_seedot_model_is_located(tmp_path):
    def edit(w):
        w[3, 9] = np.nan
        return w
    program = _protonn_with(tmp_path, "W", edit)
    r = compile_cli(str(program), "--train", str(TRAIN))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"{program}:6:5: error: ")
    assert "W.npy contains NaN or infinite values" in r.stderr


def test_nan_weight_in_ir_names_the_tensor_and_index(tmp_path):
    """NaN weights once became -128 and saturated the rest (ONNX and textual IR)."""
    src = tmp_path / "nan.mlir"
    # float32 little-endian: 1.0, NaN, 0.5, 0.25
    src.write_text("""func.func @main() -> tensor<2x1xf32> {
  %x = minun.input "X" [-1.0, 1.0] : tensor<2x1xf32>
  %w = minun.param "W" [-1.0, 1.0] dense<"0x0000803F0000C07F0000003F0000803E"> : tensor<2x2xf32>
  %y = minun.matmul %w, %x : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  func.return %y : tensor<2x1xf32>
}
""")
    r = opt(str(src), "-p", 'quantize{scales="maxscale" maxscale=4}')
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip() == (f"{src}:3:3: error: minun.param W: element [0, 1] is nan; "
                                "weights must be finite (1 are not)")


def test_weights_outside_the_declared_range_warn_with_the_numbers(tmp_path):
    def edit(w):
        w[0, 0] = 5.0
        return w
    program = _protonn_with(tmp_path, "W", edit)
    r = compile_cli(str(program), "--train", str(TRAIN))
    assert r.returncode == 0, r.stderr
    assert "warning: W: weights span [" in r.stderr
    assert "5], outside the declared range [-1.39577, 1.95864]" in r.stderr


def test_division_by_a_zero_constant_is_an_error(tmp_path):
    src = tmp_path / "div.mlir"
    src.write_text("""func.func @main() -> tensor<2xf32> {
  %x = minun.input "X" [-1.0, 1.0] : tensor<2xf32>
  %c = minun.constant dense<[2.0, 0.0]> : tensor<2xf32>
  %d = minun.div %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %d : tensor<2xf32>
}
""")
    r = opt(str(src), "-p", "lower-composite-ops")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"{src}:4:3: error: minun.div: division by a constant that is "
                               "zero")


# -- output files ----------------------------------------------------------------------

def test_a_symlink_in_the_output_folder_is_neither_followed_nor_replaced(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "model.c").symlink_to(victim)
    r = compile_cli(str(PROTONN), "--train", str(TRAIN), "--out", str(out))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"{out / 'model.c'}: error: this file was not written by minun-mlir" in r.stderr
    assert victim.read_text() == "keep me" and (out / "model.c").is_symlink()
    assert sorted(p.name for p in out.iterdir()) == ["model.c"]


@pytest.mark.parametrize("json_name", ["model.c", "model.h"])
def test_json_report_never_overwrites_a_generated_source(tmp_path, json_name):
    out = tmp_path / "out"
    r = compile_cli(str(PROTONN), "--train", str(TRAIN), "--out", str(out), "--json",
                    str(out / json_name))
    assert r.returncode == 1 and "would overwrite a model, data or generated source" in r.stderr
    assert not (out / json_name).exists() and list(out.iterdir()) == []


def test_out_naming_a_file_or_an_impossible_path_is_an_error(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    r = compile_cli(str(PROTONN), "--train", str(TRAIN), "--out", str(f))
    assert r.returncode == 1 and r.stderr.strip() == f"{f}: error: --out names a file, not a directory"
    r = compile_cli(str(PROTONN), "--train", str(TRAIN), "--out", str(f / "sub"))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"{f / 'sub'}: error: cannot create the output directory (--out)" in r.stderr


def test_two_compiles_into_one_folder_do_not_mix(tmp_path):
    from minun_mlir.outputs import output_lock

    out = tmp_path / "out"
    with output_lock(out):  # a compile in progress holds the folder
        r = compile_cli(str(PROTONN), "--train", str(TRAIN), "--out", str(out))
    assert r.returncode == 1 and f"{out}: error: another minun-compile is writing to this " \
        "folder" in r.stderr
    assert list(out.iterdir()) == []


def test_failed_recompile_leaves_no_stale_outputs(tmp_path):
    out = tmp_path / "out"
    assert compile_cli(str(PROTONN), "--train", str(TRAIN), "--out", str(out)).returncode == 0
    bad = train_copy(tmp_path, lambda d: d[:0])
    r = compile_cli(str(PROTONN), "--train", str(bad), "--out", str(out))
    assert r.returncode == 1
    assert ("note: removed the earlier compile's model.h, model.c, minun_runtime.h, "
            "memory_map.png") in r.stderr
    assert list(out.iterdir()) == []  # the manifest too: nothing of minun's is left


def test_run_counts_inputs_where_c_and_evaluator_differ():
    from types import SimpleNamespace

    from minun_mlir.driver import Options, compile_model
    from minun_mlir.native import scores_module
    from minun_mlir.numerics.l2_eval import evaluate_l2
    from minun_mlir.tools.minun_compile import disagreements

    result = compile_model(PROTONN, Options(bits=16), train=TRAIN,
                           test=ROOT / "benchmarks/models/protonn-digits10/test.npy")
    n = 5
    # the C's output buffer: the scores the argmax reads (computed by the evaluator here)
    outputs = np.asarray(evaluate_l2(scores_module(result.l2),
                                     result.test.features[:n]).outputs[0])
    assert outputs.reshape(n, -1).shape == (n, 10)
    same = SimpleNamespace(labels=result.predictions[:n], outputs=outputs.copy())
    assert disagreements(result, same, n) == []
    off = outputs.copy().reshape(n, -1)
    off[3, 0] += 1  # one value one unit off: the label may agree, the bits do not
    assert disagreements(result, SimpleNamespace(labels=result.predictions[:n], outputs=off),
                         n) == [3]


# -- unsafe C: sizes checked against the target before any build ----------------------

def _dense_model(tmp_path: Path, n: int) -> Path:
    np.save(tmp_path / "W.npy", np.random.default_rng(0).uniform(-1, 1, (2, n))
            .astype(np.float32))
    program = tmp_path / "dense.sd"
    program.write_text(f"let X = ({n}, 1) in [0.0, 1.0] in\n"
                       f"let W = (2, {n}) in [-1.0, 1.0] in\nW * X\n")
    return program


def test_arrays_beyond_avr_int_range_are_refused(tmp_path):
    program = _dense_model(tmp_path, 40_000)  # X: 40,000 elements; AVR's int ends at 32,767
    r = compile_cli(str(program), "--scales", "maxscale", "--maxscale", "4", "--target", "avr",
                    "--out", str(tmp_path / "c"))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "tensor 'X' has 40,000 elements, more than avr's int can index (32,767)" in r.stderr
    ok = compile_cli(str(program), "--scales", "maxscale", "--maxscale", "4", "--target",
                     "cortex-m3", "--out", str(tmp_path / "m3"))
    assert ok.returncode == 0, ok.stderr


def test_flash_estimate_is_checked_before_the_build(tmp_path):
    program = _dense_model(tmp_path, 10_000)  # 20,000 weights x 2 B = 40,000 B > 32 KB
    args = [str(program), "--scales", "maxscale", "--maxscale", "4", "--target", "avr",
            "--out", str(tmp_path / "c")]
    r = compile_cli(*args)
    assert r.returncode == 0 and "warning: the model's arrays need 40,000 bytes of flash, " \
                                 "more than avr has (32,768 bytes)" in r.stderr
    test = tmp_path / "test.npy"
    np.save(test, np.concatenate([np.zeros((2, 1)), np.full((2, 10_000), 0.5)], axis=1))
    r = compile_cli(*args, "--test", str(test), "--run")
    assert r.returncode == 1 and "error: the model's arrays need 40,000 bytes" in r.stderr
    assert "on avr:" not in r.stdout  # refused before building or simulating


@pytest.mark.parametrize("level, stage, holds", [
    ("l1", "lower-to-loops", "minun.input"), ("l1", "lower-to-emitc", "minun.input"),
    ("l2", "quantize", "num.input"), ("l2", "lower-to-emitc", "num.input"),
    ("l3", "quantize", "memref.global"), ("l3", "lower-to-loops", "memref.global"),
])
def test_a_stage_given_the_wrong_level_names_it(tmp_path, level, stage, holds):
    """An L1 file fed to lower-to-emitc was an internal error (ValueError)."""
    prefix = {"l1": "lower-composite-ops", "l2": 'lower-composite-ops,quantize{scales="maxscale"'
              ' maxscale=4}', "l3": 'lower-composite-ops,quantize{scales="maxscale" maxscale=4},'
              'lower-to-loops'}[level]
    made = opt(str(PROTONN), "-p", prefix)
    assert made.returncode == 0, made.stderr
    src = tmp_path / f"{level}.mlir"
    src.write_text(made.stdout)
    r = opt(str(src), "-p", stage)
    assert r.returncode == 1 and "internal error" not in r.stderr
    assert r.stderr.startswith(f"{src}:") and f": error: {stage} takes L" in r.stderr
    assert f"but the module holds '{holds}'" in r.stderr


# -- overflow accounting ----------------------------------------------------------------

def test_evaluator_counts_wrapped_values_per_tensor():
    from minun_mlir.formats.fixed import arith as fx
    from minun_mlir.ir_text import parse_ir
    from minun_mlir.numerics.l2_eval import evaluate_l2, overflow_report

    l2 = parse_ir("""func.func @main() -> tensor<4x!num.fixed<8, 6>> attributes {num.rounding = "trunc", num.overflow = "wrap"} {
  %x = num.input "X" : tensor<4x!num.fixed<16, 12>>
  %y = num.rescale %x {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<4x!num.fixed<16, 12>> -> tensor<4x!num.fixed<8, 6>>
  func.return %y : tensor<4x!num.fixed<8, 6>>
}
""", "wrap.mlir")
    x = np.random.default_rng(1).uniform(-4, 4, size=(50, 4))
    with fx.counting_overflow() as counter:
        out = evaluate_l2(l2, x).outputs[0]
    # independent count: at scale 6, 8 bits hold [-2, 2 - 1/64]; trunc of x * 64
    expected = int(np.count_nonzero((np.trunc(x * 64) < -128) | (np.trunc(x * 64) > 127)))
    report = overflow_report(counter)
    assert report == {"y (num.rescale at wrap.mlir:3:3)": {"overflowed": expected,
                                                          "values": 200}}
    assert expected > 0 and out.min() >= -128 and out.max() <= 127


def test_inputs_beyond_the_profiled_range_are_counted_and_warned(tmp_path):
    test = tmp_path / "test.npy"
    data = np.load(ROOT / "benchmarks/models/protonn-digits10/test.npy")
    data[:, 1:] *= 4  # the training data is in [0, 1]: X's scale holds about [-2, 2)
    np.save(test, data)
    report = tmp_path / "r.json"
    r = compile_cli(str(PROTONN), "--train", str(TRAIN), "--test", str(test), "--json",
                    str(report))
    assert r.returncode == 0, r.stderr
    import json
    overflow = json.loads(report.read_text())["overflow"]
    key = next(k for k in overflow if k.startswith("X (num.input"))
    values = data[:, 1:]
    assert overflow[key]["values"] == values.size
    assert overflow[key]["overflowed"] == int(np.count_nonzero(values >= 2.0))
    assert f"warning: {key}: " in r.stderr and "values overflowed on the test data" in r.stderr
    assert "overflow on the test data: " in r.stdout


@pytest.mark.parametrize("program, target, message", [
    # beyond every board's RAM: refused by the frontend (minun_mlir/limits.py)
    ("let X = (1099511627776, 1) in [0.0, 1.0] in\nrelu(X)\n", "x86",
     "1:9: error: the input 'X' of shape 1099511627776x1 has 1,099,511,627,776 values, "
     "more than fit any supported board"),
    ("let X = (100000, 1) in [0.0, 1.0] in\nlet Y = X * X^T in\nY\n", "cortex-m4",
     "2:9: error: this value of shape 100000x100000 has 10,000,000,000 values, more than "
     "fit any supported board"),
    ("let X = (40000, 1) in [0.0, 1.0] in\nrelu(X)\n", "avr",
     "1:5: error: tensor 'X' has 40,000 elements, more than avr's int can index (32,767)"),
])
def test_tensors_beyond_the_targets_int_are_refused(tmp_path, program, target, message):
    """A 2^40-element input and a 100000x100000 product compiled with int loop counters
    that overflow (exit 0 before)."""
    src = tmp_path / "big.sd"
    src.write_text(program)
    r = compile_cli(str(src), "--scales", "maxscale", "--maxscale", "4", "--target", target,
                    "--out", str(tmp_path / "c"))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"{src}:{message}"), r.stderr
    assert not (tmp_path / "c" / "model.c").exists()


# --- options: refused with one line before any work, or honoured ---------------------------

USPS = ROOT / "examples" / "fastgrnn_lr_usps.sd"
USPS_DATA = ROOT / "examples" / "fastgrnn_lr_usps" / "test.npy"
LENET_ONNX = ROOT / "benchmarks" / "models" / "lenet-digits10" / "model.onnx"


def compile_main(capsys, *argv: str) -> tuple[int, str, str]:
    from minun_mlir.tools.minun_compile import main

    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("argv, message", [
    (["--repr", "bfloat16", "--bits", "8"], "--bits is not an option of --repr bfloat16"),
    (["--repr", "float32", "--bits", "16"], "--bits is not an option of --repr float32"),
    (["--es", "1"], "--es is for --repr posit (posit<bits, es>), not --repr fixed"),
    (["--repr", "bfloat16", "--es", "0"], "--es is for --repr posit"),
    (["--dim", "N=1"], "--dim is for ONNX models"),
    (["--ram-budget", "-1"], "--ram-budget must be a number of bytes (0: no limit), got -1"),
    (["--maxscale", "5"], "--maxscale is for --scales maxscale"),
    (["--scales", "maxscale", "--maxscale", "16"], "--maxscale must be in 0..15 at 16 bits"),
    (["--soft-limit", "2"], "--soft-limit is for --search haunter"),
    (["--explore-input-scale"], "--explore-input-scale is for --search shiftry"),
    (["--search-report", "r"], "--search-report is for --search"),
    (["--max-drop", "1"], "--max-drop is for --search"),
    (["--input-scale", "99"], "--input-scale must be in -16..16 for a 16-bit input"),
    (["--bits", "8", "--input-scale", "9"], "--input-scale must be in -8..8"),
    (["--demote", "W1", "--bits", "8"], "--demote keeps tensors at half of --bits 8"),
    (["--json", ""], "--json needs a file name"),
    (["--max-inputs", "5"], "--max-inputs is for --run"),
    (["--timeout", "5"], "--timeout is for --run"),
    (["--run"], "--run needs --test FILE"),
    (["--run", "--test", USPS_DATA, "--max-inputs", "0"], "--max-inputs must be at least 1"),
    (["--run", "--test", USPS_DATA, "--max-inputs", "-3"], "--max-inputs must be at least 1"),
    (["--repr", "posit", "--input-bits", "8"], "--input-bits is for --repr fixed"),
    (["--repr", "float32", "--demote", "W1"], "--demote is for --repr fixed"),
    (["--demote", "W1,,U1"], "--demote expects comma-separated tensor names"),
    (["--repr", "zero-skew", "--param-bits", "8"], "--param-bits is for --repr fixed or posit"),
    (["--param-bits", "8", "--scales", "maxscale", "--maxscale", "5"],
     "--param-bits needs --scales data-driven"),
    (["--param-bits", "8", "--search", "shiftry", "--train", USPS_DATA, "--ram-budget", "100"],
     "--param-bits chooses bitwidths by hand, --search chooses them"),
    (["--demote", "W1", "--search", "shiftry", "--train", USPS_DATA, "--ram-budget", "100"],
     "--demote chooses bitwidths by hand, --search chooses them"),
    (["--no-quire"], "--no-quire is for --repr posit"),
    (["--repr", "float32", "--rounding", "nearest"], "--rounding nearest is for --repr fixed"),
    (["--repr", "posit", "--overflow", "saturate"], "--overflow saturate is for --repr fixed"),
    (["--search", "haunter", "--train", USPS_DATA, "--ram-budget", "900", "--soft-limit",
      "0.5"], "--soft-limit is a factor of --ram-budget, at least 1"),
    (["--search", "shiftry", "--train", USPS_DATA, "--max-drop", "1", "--soft-limit", "2"],
     "--soft-limit is for --search haunter"),
])
def test_an_option_without_effect_or_out_of_range_is_refused_first(capsys, argv, message):
    """Each of these was accepted (exit 0, no effect, or nonsense), or refused only after
    the whole compile: now one line naming the option, before any work."""
    rc, out, err = compile_main(capsys, USPS, *argv)
    assert rc == 1 and err.startswith("minun-compile: error: --"), err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert "time:" not in out  # nothing was compiled


@pytest.mark.parametrize("argv, message", [
    (["--dim", "N=0"], "--dim N=0: a dimension must be at least 1"),
    (["--dim", "N=1", "--dim", "N=2"], "--dim N=2: N is given twice (N=1 and N=2)"),
    (["--search", "shiftry", "--train", USPS_DATA, "--max-drop", "1", "--dim", "N=abc"],
     "--dim N=abc: N must be an integer"),
    (["--synthetic-weights", "0"], "--synthetic-weights is for SeeDot programs"),
])
def test_onnx_options_are_checked_first(capsys, argv, message):
    rc, out, err = compile_main(capsys, LENET_ONNX, *argv)
    assert rc == 1 and err.strip() == err.strip().splitlines()[0], err
    assert err.startswith("minun-compile: error: ") and message in err, err


def test_run_without_test_is_refused_before_the_compile(capsys):
    """face-2 spent 30-60 s compiling before `--run needs --test`."""
    import time

    start = time.perf_counter()
    rc, out, err = compile_main(capsys, USPS, "--train", USPS_DATA, "--run")
    assert rc == 1 and "--run needs --test FILE" in err
    assert out == "" and time.perf_counter() - start < 5


def test_planner_help_names_every_planner(capsys):
    from minun_mlir.passes.memory_plan import PLANNERS
    from minun_mlir.tools.minun_compile import build_parser

    help_text = next(a.help for a in build_parser()._actions if "--planner" in a.option_strings)
    for planner in PLANNERS:
        assert f"{planner} (" in help_text, planner


def test_an_accepted_option_is_honoured(capsys, tmp_path):
    """--repr bfloat16 compiles bfloat16 (the label and the C say so), a demoted tensor
    is in the C at 8 bits."""
    rc, out, _ = compile_main(capsys, USPS, "--repr", "bfloat16", "--out", tmp_path / "b")
    assert rc == 0 and "[bfloat16]" in out
    assert "minun_bf16" in (tmp_path / "b" / "model.c").read_text()
    rc, out, _ = compile_main(capsys, USPS, "--train", USPS_DATA, "--demote", "W1",
                              "--out", tmp_path / "d")
    assert rc == 0 and "[fixed16+demote]" in out
    c = (tmp_path / "d" / "model.c").read_text()
    assert "static const int8_t p_W1[80]" in c and "int8_t p_U1" not in c
    # --param-bits 8 (documented in docs/precision-search.md, missing from the CLI until
    # the options test compared them): every parameter at 8 bits, the rest at 16
    rc, out, _ = compile_main(capsys, USPS, "--train", USPS_DATA, "--param-bits", "8",
                              "--out", tmp_path / "p")
    assert rc == 0 and "[fixed16-params8]" in out
    c = (tmp_path / "p" / "model.c").read_text()
    assert "static const int8_t p_W1[80]" in c and "static const int8_t p_U1" in c
    assert "int16_t" in c


def test_demote_names_must_be_tensors_of_the_model(capsys):
    """`--demote nosuchname` compiled a fixed16 program labelled '+demote'."""
    rc, out, err = compile_main(capsys, USPS, "--train", USPS_DATA, "--demote", "W1x")
    assert rc == 1 and "+demote" not in out
    assert err.strip().startswith(f"{USPS}: error: quantize: demote: no tensor named 'W1x' "
                                  "in the model (did you mean 'W1'?); its tensors: X, W1,")


def _assignment(tmp_path: Path, capsys) -> dict:
    import json

    folder = tmp_path / "search"
    rc, _, err = compile_main(capsys, USPS, "--train", USPS_DATA, "--search", "shiftry",
                              "--max-drop", "5", "--jobs", "1", "--search-report", folder)
    assert rc == 0, err
    return json.loads((folder / "assignment.json").read_text())


def test_a_damaged_assignment_is_located_in_its_file(capsys, tmp_path):
    import json

    good = _assignment(tmp_path, capsys)
    cases = {
        "utf8": (b'{"format": "\xff"}', "not UTF-8 text"),
        "bits": (json.dumps(good | {"bits": "abc"}).encode(), "bits must be 8, 16 or 32, got "
                 "'abc'"),
        "list": (json.dumps(good | {"tensors": [1, 2]}).encode(), "tensors must be an object"),
        "name": (json.dumps(good | {"tensors": {**good["tensors"], "Wrong": {
            "bits": 8, "scale": 3}}}).encode(), "no tensor named 'Wrong' in the model"),
        "scale": (json.dumps(good | {"tensors": {**good["tensors"], "W1": {
            "bits": 8, "scale": -1000}}}).encode(), "tensor 'W1': scale -1000 at 8 bits"),
        "bool": (json.dumps(good | {"tensors": {"W1": {"bits": 8, "scale": True}}}).encode(),
                 "tensor 'W1': scale must be an integer"),
    }
    for name, (data, message) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_bytes(data)
        rc, out, err = compile_main(capsys, USPS, "--train", USPS_DATA, "--assign", path)
        assert rc == 1 and "internal error" not in err, (name, err)
        assert err.startswith(f"{path}: error: ") and message in err, (name, err)
        # one line, and the note naming the earlier compile's files it removed from the
        # default folder (build/<model>) they were written to
        lines = [x for x in err.strip().splitlines()
                 if not x.startswith("build/fastgrnn_lr_usps: note: removed the earlier")]
        assert len(lines) == 1, (name, err)


@pytest.mark.parametrize("option, message", [
    ("quantize{synthetic=-1}", "quantize: synthetic must be a number of inputs (0: none)"),
    ("quantize{synthetic=true}", "quantize: synthetic must be an integer, got true"),
    ("quantize{maxscale=true}", "quantize: maxscale must be an integer, got true"),
    ("quantize{bits=abc}", "bad pass pipeline"),
    ('quantize{rounding="bogus"}', "quantize: rounding must be one of"),
    ("quantize{input_scale=99}", "quantize: input-scale must be in -16..16 for a 16-bit"),
    ('quantize{scales="maxscale" maxscale=4},lower-to-loops,memory-plan{budget=-1}',
     "memory-plan: budget must be 0 or more, got -1"),
    ('quantize{scales="maxscale" maxscale=4},lower-to-loops,memory-plan{time_limit=-5}',
     "memory-plan: time-limit must be 0 or more"),
])
def test_bad_pass_option_values_are_diagnostics(option, message):
    """synthetic=-1 and synthetic=true were internal errors; maxscale=true was maxscale 1."""
    r = opt(str(PROTONN), "-p", f"lower-composite-ops,{option}")
    assert r.returncode == 1 and "internal error" not in r.stderr, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr


def test_minun_opt_offers_only_the_targets_that_print_this_ir():
    """xDSL's other targets failed on our IR (AssertionError, missing llvmlite,
    NotImplementedError) or printed nothing with exit 0."""
    help_text = opt("--help").stdout
    assert "Available targets are: mlir,c" in " ".join(help_text.split())
    for target in ("llvm", "riscv-asm", "wat", "x86-asm"):
        r = opt(str(PROTONN), "-t", target)
        assert r.returncode != 0 and "invalid choice" in r.stderr and "Traceback" not in \
            r.stderr
    assert opt(str(PROTONN), "-t", "mlir").stdout.startswith("builtin.module")


def test_weights_at_the_declared_bound_in_float32_are_inside_it(tmp_path):
    """float32(0.3) > 0.3 in float64: 'FC: weights span [-0.3, 0.3], outside the declared
    range [-0.3, 0.3]'. Compared in the weights' own precision there is no warning; a
    weight one float32 step beyond the bound still gets one."""
    edge = np.array([0.3, -0.3], dtype=np.float32)
    beyond = np.array([np.nextafter(np.float32(0.3), np.float32(1)), -0.3], dtype=np.float32)
    for values, warned in ((edge, False), (beyond, True)):
        src = tmp_path / "w.mlir"
        src.write_text(f"""func.func @main() -> tensor<1x1xf32> {{
  %x = minun.input "X" [-1.0, 1.0] : tensor<2x1xf32>
  %w = minun.param "FC" [-0.3, 0.3] dense<"0x{values.tobytes().hex().upper()}"> : tensor<1x2xf32>
  %y = minun.matmul %w, %x : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  func.return %y : tensor<1x1xf32>
}}
""")
        r = opt(str(src), "-p", 'quantize{scales="maxscale" maxscale=4}')
        assert r.returncode == 0, r.stderr
        assert ("outside the declared range" in r.stderr) == warned, r.stderr


def test_ram_advice_names_fewer_bits_only_when_there_are_fewer(tmp_path):
    """At --bits 8 the RAM warning still said 'use fewer bits (--bits 8)'."""
    program = _dense_model(tmp_path, 3000)  # X: 3,000 elements, more than the Uno's 2 KB
    for bits, advice in (("16", "use fewer bits (--bits 8) or a larger board"),
                         ("8", "use a smaller model or a larger board")):
        r = compile_cli(str(program), "--scales", "maxscale", "--maxscale", "4", "--bits",
                        bits, "--target", "avr", "--out", str(tmp_path / bits))
        assert r.returncode == 0, r.stderr
        line = next(ln for ln in r.stderr.splitlines() if "bytes of RAM" in ln)
        assert line.endswith(advice), line


def test_a_simulation_that_prints_nothing_says_so():
    """A timed-out run said 'Last output:\\n  (none)'."""
    from minun_mlir.targets.boards import get_board
    from minun_mlir.targets.errors import SimulationTimeout
    from minun_mlir.targets.simulate import _run

    with pytest.raises(SimulationTimeout) as e:
        _run(["sleep", "5"], get_board("x86"), "model", 0.2)
    assert "(none)" not in str(e.value) and str(e.value).endswith("It printed nothing.")
    assert "raise it with --timeout" in str(e.value)


def test_run_passes_timeout_to_the_simulator_and_scales_the_default(capsys, monkeypatch):
    """The posit timeout message suggested --timeout, which minun-compile did not have."""
    import minun_mlir.targets as targets
    from minun_mlir.tools.minun_compile import TIMEOUT_BYTES, simulation_timeout

    seen = []

    def fake_run_model(*args, timeout, **kwargs):
        seen.append(timeout)
        raise MinunError("error: stop here")

    monkeypatch.setattr(targets, "run_model", fake_run_model)
    for extra, expected in ((["--timeout", "7.5"], 7.5), ([], 60.0)):
        rc, _, err = compile_main(capsys, USPS, "--train", USPS_DATA, "--test", USPS_DATA,
                                  "--run", *extra)
        assert rc == 1 and "stop here" in err
        assert seen[-1] == expected
    import minun_mlir.codegen as codegen  # a model whose arrays take 4 x TIMEOUT_BYTES

    monkeypatch.setattr(codegen, "memory_estimate", lambda l4: (3 * TIMEOUT_BYTES,
                                                                 TIMEOUT_BYTES))
    assert simulation_timeout(None) == 240.0


def test_minun_opt_refuses_a_repeated_dim_naming_itself():
    """`--dim N=1 --dim N=2`: the last won silently; minun-opt's option diagnostics named
    no file and not the tool."""
    for argv, message in ((["--dim", "N=1", "--dim", "N=2"],
                           "minun-opt: error: --dim N=2: N is given twice (N=1 and N=2)"),
                          (["--dim", "N=x"], "minun-opt: error: --dim N=x: N must be an "
                           "integer")):
        r = opt(str(LENET_ONNX), *argv)
        assert r.returncode == 1 and r.stderr.strip() == message, r.stderr
