"""The memory map minun-compile writes beside the C (minun_mlir/memory_map.py): a PNG that
decodes, has the documented size and the same bytes on every run; its numbers are the
plan's (scratch size, lower bound, moves), also in the report and its JSON; and
--planner/--ram-budget reach memory-plan, a budget error naming the peak's instruction
and the live buffers for every planner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_tools import tool as cli_tool
from matplotlib.image import imread

from minun_mlir.frontends.seedot import load_program
from minun_mlir.memory_map import DPI, HEIGHT, WIDTH, memory_map, render_png
from minun_mlir.pipeline import lower_l2, lower_to_l2

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
USPS = ROOT / "examples" / "fastgrnn_lr_usps"


def compile_(*args: str, seed: str | None = None) -> subprocess.CompletedProcess:
    """minun-compile on USPS; with a `seed`, the installed script in a fresh interpreter
    with that PYTHONHASHSEED (a warm fork keeps its server's), else the warm one."""
    script = cli_tool("minun-compile") if seed is None else str(BIN / "minun-compile")
    env = {**os.environ, **({"PYTHONHASHSEED": seed} if seed is not None else {})}
    return subprocess.run([script, str(USPS.with_suffix(".sd")),
                           "--train", str(USPS / "test.npy"), *args], capture_output=True,
                          text=True, env=env)


def test_minun_compile_writes_a_deterministic_png_and_reports_the_plan(tmp_path):
    runs = []
    for seed in ("1", "2"):
        out = tmp_path / f"c{seed}"
        r = compile_("--out", str(out), "--planner", "shiftry", "--ram-budget", "200",
                     "--json", str(tmp_path / f"r{seed}.json"), seed=seed)
        assert r.returncode == 0, r.stderr
        assert (f"RAM for buffers (shiftry): 192 B, lower bound 192 B, 2 defragmentation "
                f"moves; memory map: {out / 'memory_map.png'}") in r.stdout
        runs.append((out / "memory_map.png").read_bytes())
        report = json.loads((tmp_path / f"r{seed}.json").read_text())
        assert report["memory"] == {"planner": "shiftry", "scratch_bytes": 192,
                                    "lower_bound_bytes": 192, "defrag_moves": 2,
                                    "input_in_scratch": False, "output_in_scratch": False,
                                    "map": str(out / "memory_map.png")}
    assert runs[0] == runs[1]
    assert runs[0].startswith(b"\x89PNG") and b"Date" not in runs[0]
    assert b"Software" not in runs[0]
    image = imread(tmp_path / "c1" / "memory_map.png")
    assert image.shape == (int(HEIGHT * DPI), int(WIDTH * DPI), 4)
    assert image[..., :3].std() > 0.1  # not a blank canvas


@pytest.mark.parametrize("planner", ["naive", "greedy", "shiftry"])
def test_budget_errors_name_the_peak_for_every_planner(planner, tmp_path):
    r = compile_("--out", str(tmp_path / "c"), "--planner", planner, "--ram-budget", "100")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert ("error: model needs 192 bytes of RAM at instruction 144 (live: res 64 B, pre "
            "64 B, z 64 B); budget 100") in r.stderr
    assert not (tmp_path / "c" / "memory_map.png").exists()


def test_the_maps_numbers_are_the_plans():
    l2 = lower_to_l2(load_program(USPS.with_suffix(".sd")), data=str(USPS / "test.npy"))
    naive = memory_map(lower_l2(l2, stop="memory-plan", planner="naive"), "naive")
    greedy = memory_map(lower_l2(l2, stop="memory-plan", planner="greedy"), "greedy")
    blocks = memory_map(lower_l2(l2, stop="memory-plan", planner="shiftry"), "shiftry")
    moved = memory_map(lower_l2(l2, stop="memory-plan", planner="shiftry", budget=200))
    assert (naive.scratch, greedy.scratch, blocks.scratch, moved.scratch) == (244, 192, 256,
                                                                              192)
    assert {m.lower_bound for m in (naive, greedy, blocks, moved)} == {192}
    assert not blocks.moves and len(moved.moves) == 2
    for at, src, dst in moved.moves:  # a move joins two places of one buffer, downwards
        assert src.buffer == dst.buffer and src.name == dst.name and dst.offset < src.offset
        assert src.last == at == dst.first
    assert render_png(moved, "x") == render_png(moved, "x")


@pytest.mark.parametrize("repr_", ["fixed", "posit"])
def test_static_ram_without_the_map_is_the_maps(repr_):
    """The searches' shortcut (the scratch memory-plan recorded, plus the runtime's quires)
    gives what the drawn map gives, for every planner, the image in or out of the scratch."""
    from minun_mlir.memory_map import static_ram
    from passes.memory_plan import PLANNERS

    l2 = lower_to_l2(load_program(USPS.with_suffix(".sd")), repr=repr_,
                     data=str(USPS / "test.npy"), **({"quire": True} if repr_ == "posit" else {}))
    seen = set()
    for planner in PLANNERS:
        for in_scratch in (False, True):
            l3 = lower_l2(l2, stop="memory-plan", planner=planner, input_in_scratch=in_scratch)
            ram = memory_map(l3, planner).static_ram
            assert static_ram(l3, planner) == ram
            seen.add(ram)
    assert len(seen) > 1  # the planners and the image's place change the RAM
