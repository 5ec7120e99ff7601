"""The 4-bit weights section of BENCHMARKS.md (`tools/bench.py --int4`) is the rendering of
its record, and the record's evaluator figures are what the compiler gives now."""

from __future__ import annotations

import json
from pathlib import Path

from minun_bench import face as bench_face
from minun_bench import int4
from minun_mlir.driver import Options, compile_model

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "benchmarks" / "int4.json"


def test_the_section_is_the_rendering_of_the_record():
    rows = json.loads(RECORD.read_text())
    _, parts = bench_face.split_sections((ROOT / "BENCHMARKS.md").read_text())
    assert parts[int4.SECTION] == int4.render(rows)
    assert [(r["model"], r["config"]) for r in rows] == [
        (m, c) for m in int4.MODELS_W4 for c, _ in int4.CONFIGS]


def test_a_row_is_what_the_compiler_gives_now():
    """LeNet with packed weights at fixed8: the accuracy and the packed bytes afresh."""
    rows = json.loads(RECORD.read_text())
    row = next(r for r in rows if r["model"] == "lenet-digits10" and r["config"] == "fixed8 w4")
    folder = int4.MODELS / "lenet-digits10"
    result = compile_model(folder / "model.sd", Options(bits=8, weight_bits=4),
                           train=folder / "train.npy", test=folder / "test.npy")
    assert round(100 * result.accuracy, 2) == row["accuracy"]
    assert int4.packed_bytes(result.l2) == row["packed_bytes"] > 0
    # half of the 8-bit weights' bytes: the 8-bit row packs nothing
    eight = next(r for r in rows if r["model"] == "lenet-digits10" and r["config"] == "fixed8")
    assert eight["packed_bytes"] == 0
    assert row["cortex-m4"]["flash"] < eight["cortex-m4"]["flash"]
