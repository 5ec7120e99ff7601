"""A search under --stream-rows (and the input and output in the scratch) measures each
candidate's RAM on the plan the compile replaying its assignment makes: the streamed
plan, which on a chain of convolutions is what makes the budget reachable."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
from cli_tools import tool as cli_tool

from minun_mlir.bitwidth_search import haunter_model
from minun_mlir.data import load_dataset
from minun_mlir.driver import Options, compile_model, load_model, num_classes
from minun_mlir.memory_map import memory_map
from minun_mlir.pipeline import lower_l2, lower_to_l2

H, W = 12, 6
# three convolutions over 12x6 maps: held whole, their 4-channel maps are planned whole;
# streamed, they are rings of 3 rows
CHAIN = f"""let X = ({H * W}, 1) in [-1.0, 1.0] in
let Xt = reshape(X, (1, {H}, {W}, 1), (1, 2)) in
let F1 = (1, 3, 3, 1, 4) in [-1.0, 1.0] in
let B1 = (4) in [-0.5, 0.5] in
let F2 = (1, 3, 3, 4, 4) in [-1.0, 1.0] in
let F3 = (1, 3, 3, 4, 2) in [-1.0, 1.0] in
let a = relu(conv2d(Xt, F1, {{s 1 1}}, {{p 1 1 1 1}}, {{d 1 1}}, {{g 1}}) <+> B1) in
let b = relu6(conv2d(a, F2, {{s 1 1}}, {{p 1 1 1 1}}, {{d 1 1}}, {{g 1}})) in
let c = conv2d(b, F3, {{s 1 1}}, {{p 1 1 1 1}}, {{d 1 1}}, {{g 1}}) in
reshape(c, (1, {H * W * 2}), (1, 2, 3, 4))
"""
SHAPES = {"F1": (1, 3, 3, 1, 4), "B1": (4,), "F2": (1, 3, 3, 4, 4), "F3": (1, 3, 3, 4, 2)}
PLAN = dict(input_in_scratch=True, output_in_scratch=True)


def _case(tmp_path: Path) -> tuple[Path, Path]:
    program = tmp_path / "chain.sd"
    program.write_text(CHAIN)
    rng = np.random.default_rng(0)
    for name, shape in SHAPES.items():  # weights beside the program, in their ranges
        scale = 0.5 if name.startswith("B") else 1.0
        np.save(tmp_path / f"{name}.npy", rng.uniform(-scale, scale, shape).astype(np.float32))
    x = rng.uniform(-1, 1, (16, H * W)).astype(np.float32)
    np.save(tmp_path / "train.npy", np.concatenate([np.zeros((16, 1), np.float32), x], 1))
    return program, tmp_path / "train.npy"


def _ram(l2, stream_rows: bool) -> int:
    return memory_map(lower_l2(l2, stop="memory-plan", stream_rows=stream_rows,
                               **PLAN)).scratch


def test_haunter_under_stream_rows_fits_what_the_whole_plan_cannot(tmp_path):
    program, train_path = _case(tmp_path)
    l1 = load_model(program)
    l2 = lower_to_l2(l1, bits=8, data=str(train_path), evaluator="numpy")
    streamed, whole = _ram(l2, True), _ram(l2, False)
    assert streamed < whole
    budget = (streamed + whole) // 2  # all 8-bit fits only when streamed
    train = load_dataset(train_path, (H * W, 1), num_classes(l1))
    search = haunter_model(l1, train, budget, evaluator="numpy", stream_rows=True, **PLAN)
    r = search.chosen_result
    assert search.base.ram == streamed and r.ram <= budget
    # the compile replaying the assignment plans the bytes the search measured
    (assign := tmp_path / "a.json").write_text(search.assignment.to_json())
    options = Options(bits=search.assignment.bits, assign=str(assign), stream_rows=True,
                      evaluator="numpy", rounding=search.assignment.rounding, **PLAN)
    result = compile_model(program, options, train=train_path, out_dir=tmp_path / "c",
                           name="chain")
    assert result.memory["scratch_bytes"] == r.ram


def test_minun_compile_search_with_stream_rows_reports_the_streamed_ram(tmp_path):
    """--search with --stream-rows and --output-in-scratch is accepted; the RAM the
    search prints is the RAM the compile then plans and reports."""
    program, train_path = _case(tmp_path)
    l2 = lower_to_l2(load_model(program), bits=8, data=str(train_path),
                     evaluator="numpy")
    budget = (_ram(l2, True) + _ram(l2, False)) // 2
    report = tmp_path / "r.json"
    r = subprocess.run([cli_tool("minun-compile"), str(program), "--train", str(train_path),
                        "--evaluator", "numpy", "--search", "haunter", "--ram-budget",
                        str(budget), "--stream-rows", "--input-in-scratch",
                        "--output-in-scratch", "--jobs", "1", "--out", str(tmp_path / "o"),
                        "--json", str(report)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    searched = int(re.search(r"precision search .*, RAM ([\d,]+) B", r.stdout)[1]
                   .replace(",", ""))
    assert searched <= budget
    assert json.loads(report.read_text())["memory"]["scratch_bytes"] == searched
