"""The per-layer profile (`minun-compile --run --profile`, minun_mlir/profile.py): each
input's layers add up to the latency of the same program run without profiling, the
profiled program's code is the deployed one's, the rows are named after the program's
source lines and ONNX nodes, and the options that cannot profile are refused."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest

from minun_mlir.data import first
from minun_mlir.driver import Options, compile_model
from minun_mlir.numerics.l2_eval import storage_inputs
from minun_mlir.profile import (
    HARNESS_NAME,
    OUTSIDE_NAME,
    Profile,
    live_bytes,
    model_lines,
    render_png,
)
from minun_mlir.targets import run_model
from minun_mlir.targets.boards import get_board
from minun_mlir.targets.build import compile_sources
from minun_mlir.tools import minun_compile

ROOT = Path(__file__).resolve().parents[3]
MODELS = ROOT / "benchmarks" / "models"


def compiled(model: Path, target: str, out: Path):
    d = model.parent
    return compile_model(model, Options(target=target), train=d / "train.npy",
                         test=d / "test.npy", out_dir=out)


def profile_and_plain(result, target: str, n: int):
    """The profiled run and, independently, the same C run without profiling."""
    lines = model_lines(result.l4, target, (Path(result.c_dir) / "model.c").read_text())
    x = storage_inputs(result.l2, first(result.test.features, n))
    profiled = run_model(result.c_dir, target, x, layers=lines)
    plain = run_model(result.c_dir, target, x)
    return lines, profiled, plain


def test_avr_layers_add_up_to_the_cycles_of_the_unprofiled_run(tmp_path):
    sd = MODELS / "protonn-digits10" / "model.sd"
    result = compiled(sd, "avr", tmp_path / "c")
    lines, profiled, plain = profile_and_plain(result, "avr", 2)
    assert [sum(c) for c in profiled.layers] == plain.latencies
    assert profiled.latencies == plain.latencies
    assert np.array_equal(profiled.outputs, plain.outputs)
    # the rows are the program's lines, in order, each named with its own text
    source = sd.read_text().splitlines()
    numbers = []
    for name in lines.names[2:]:
        m = re.fullmatch(r"model\.sd:(\d+)(?:-\d+)? (.*)", name)
        assert m, name
        text = m.group(2).removesuffix("...")
        assert source[int(m.group(1)) - 1].strip().startswith(text), name
        numbers.append(int(m.group(1)))
    assert numbers == sorted(numbers) and len(numbers) >= 3
    # every layer ran: each counts cycles, and the model's work is in the layers
    counts = profiled.layers[0]
    assert all(c > 0 for c in counts[2:])
    assert sum(counts[2:]) > 0.95 * sum(counts)


def test_m4_onnx_layers_add_up_and_are_named_after_the_nodes(tmp_path):
    path = MODELS / "lenet-digits10" / "model.onnx"
    result = compiled(path, "cortex-m4", tmp_path / "c")
    lines, profiled, plain = profile_and_plain(result, "cortex-m4", 1)
    assert [sum(c) for c in profiled.layers] == plain.latencies
    nodes = [n.name for n in onnx.load(path).graph.node]
    order = []
    for name in lines.names[2:]:
        if name == "label (argmax)":
            continue
        parts = re.split(r" \+ | \.\. ", re.sub(r" \(\d+ nodes\)$", "", name))
        assert set(parts) <= set(nodes), name
        order += [nodes.index(p) for p in parts]
    assert order == sorted(order)  # program order
    live = live_bytes(result.l3, lines.names)
    plan = result.memory["scratch_bytes"]
    assert live and all(0 <= b <= plan for b in live.values())
    assert max(live.values()) == result.memory["lower_bound_bytes"]


def test_debug_lines_change_no_instruction(tmp_path):
    """-gdwarf-4 (the profiled build) against the deployed build: the same code."""
    result = compiled(MODELS / "protonn-digits10" / "model.sd", "avr", tmp_path / "c")
    board = get_board("avr")
    dumps = []
    for flags, d in (([], "plain"), (["-gdwarf-4"], "debug")):
        (tmp_path / d).mkdir()
        (obj,) = compile_sources(board, [Path(result.c_dir) / "model.c"], tmp_path / d,
                                 [Path(result.c_dir)], None, flags)
        text = subprocess.run(["avr-objdump", "-d", "-j", ".text.minun_predict", str(obj)],
                              capture_output=True, text=True, check=True).stdout
        dumps.append(text.split("Disassembly of section", 1)[1])
    assert dumps[0] == dumps[1] and "minun_predict" in dumps[0]


def test_cli_report_table_json_and_chart(tmp_path, capsys):
    d = MODELS / "protonn-digits10"
    out, report = tmp_path / "c", tmp_path / "r.json"
    assert minun_compile.main([str(d / "model.sd"), "--train", str(d / "train.npy"),
                               "--test", str(d / "test.npy"), "--target", "avr", "--run",
                               "--profile", "--max-inputs", "3", "--out", str(out),
                               "--json", str(report)]) == 0
    text = capsys.readouterr().out
    r = json.loads(report.read_text())
    p = r["profile"]
    assert p["unit"] == "cycles"
    assert p["total"] == r["run"]["latency"]["per_input"][p["input"]]
    assert p["total"] == int(r["run"]["latency"]["median"])  # 3 inputs: the median one
    assert sum(row["count"] for row in p["layers"]) == p["total"]
    assert "per-layer profile (cycles" in text
    for row in p["layers"]:
        assert row["name"] in text
    assert (out / "profile.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert p["chart"] == str(out / "profile.png")
    # the chart is deterministic: the same profile gives the same bytes
    names = tuple(row["name"] for row in p["layers"])
    again = Profile(names, tuple(row["count"] for row in p["layers"]), {}, p["total"],
                    "cycles", p["input"], 3)
    assert render_png(again) == render_png(again)
    harness = next(row for row in p["layers"] if row["name"] == HARNESS_NAME)
    assert 0 < harness["count"] < 0.01 * p["total"]  # the call and return around the model
    assert all(row["live_bytes"] is None for row in p["layers"]
               if row["name"] in (HARNESS_NAME, OUTSIDE_NAME))
    # a later compile into the folder without --profile leaves no chart of this one
    assert minun_compile.main([str(d / "model.sd"), "--train", str(d / "train.npy"),
                               "--out", str(out)]) == 0
    assert not (out / "profile.png").exists() and (out / "model.c").exists()


@pytest.mark.parametrize("extra, message", [
    ([], "--profile is for --run, which is not given"),
    (["--run"], "--profile splits simulated cycles (avr) or instructions (cortex-m) by "
                "layer; x86 runs natively"),
])
def test_refusals(tmp_path, capsys, extra, message):
    d = MODELS / "protonn-digits10"
    code = minun_compile.main([str(d / "model.sd"), "--train", str(d / "train.npy"),
                               "--test", str(d / "test.npy"), "--profile", *extra])
    err = capsys.readouterr().err
    assert code == 1
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("target, representation, bits", [
    ("avr", "zero-skew", 8),        # requantize ops the quantizer added: their input's line
    ("cortex-m4", "float32", 32),   # soft float: libgcc's routines count in their caller
    ("cortex-m4", "posit", 16),     # the posit runtime (posit.c, helpers out of line)
])
def test_every_line_of_lenet_is_a_layer_in_every_representation(tmp_path, target,
                                                                 representation, bits):
    sd = MODELS / "lenet-digits10" / "model.sd"
    d = sd.parent
    result = compile_model(sd, Options(target=target, repr=representation,
                                       bits=bits), train=d / "train.npy",
                           test=d / "test.npy", out_dir=tmp_path / "c")
    lines, profiled, plain = profile_and_plain(result, target, 1)
    assert [sum(c) for c in profiled.layers] == plain.latencies
    counts = profiled.layers[0]
    assert counts[0] + counts[1] < 0.01 * sum(counts)  # the model's work is in its layers
    covered = set()
    for name in lines.names[2:]:
        m = re.match(r"model\.sd:(\d+)(?:-(\d+))? ", name)
        covered |= set(range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1))
    # the program's lines from its first op (reshape, line 15) to argmax (line 23)
    source = sd.read_text().splitlines()
    assert source[14].startswith("let A0 = reshape") and source[22] == "argmax(score)"
    assert covered == set(range(15, 24))
