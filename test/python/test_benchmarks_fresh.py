"""The committed BENCHMARKS.md is what a fresh `make bench` writes (issue: the report is
regenerable and deterministic). Compile times are wall clock and depend on the machine, so
their table is left out of the comparison; everything else (accuracy, sizes, exact cycles
and instruction counts) must match to the byte."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def without_timing(text: str) -> str:
    return text.split("## Compile time")[0]


@pytest.mark.slow  # the whole benchmark (~90 s); `make test` and CI run it, `make test-fast` not
def test_committed_benchmarks_match_a_fresh_run(tmp_path):
    out = tmp_path / "BENCHMARKS.md"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "bench.py"), "--out", str(out),
                           "--results", str(tmp_path / "results.json"),
                           "--timings", str(tmp_path / "timings.json")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    fresh = without_timing(out.read_text())
    committed = without_timing((ROOT / "BENCHMARKS.md").read_text())
    assert fresh == committed, "BENCHMARKS.md is stale: run `make bench` and commit it"
    assert (tmp_path / "results.json").read_text() == (
        ROOT / "benchmarks" / "results.json").read_text()
