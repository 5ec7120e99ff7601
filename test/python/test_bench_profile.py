"""The per-layer profile section of BENCHMARKS.md (`tools/bench.py --profile`) is the
rendering of the committed benchmarks/profile.json, whose layers add up to each run's
total, with a chart per run that fits its board."""

from __future__ import annotations

import json
from pathlib import Path

from minun_bench import face as bench_face
from minun_bench import profile as bench_profile

ROOT = Path(__file__).resolve().parents[2]


def test_the_section_is_the_rendering_of_the_records():
    records = json.loads((ROOT / "benchmarks" / "profile.json").read_text())
    _, parts = bench_face.split_sections((ROOT / "BENCHMARKS.md").read_text())
    assert parts[bench_profile.SECTION] == bench_profile.render(records)
    assert {(r["model"], r["target"]) for r in records} == {
        (name, target) for name, *_ in bench_profile.PROFILED
        for target, _ in bench_profile.TARGETS}
    for r in records:
        if r["fits"]:
            assert sum(row["count"] for row in r["layers"]) == r["total"]
            assert (ROOT / r["chart"]).read_bytes()[:4] == b"\x89PNG"
        else:  # the one that does not fit: its buffers alone exceed the board's RAM
            assert r["scratch_bytes"] > r["board_ram"]
