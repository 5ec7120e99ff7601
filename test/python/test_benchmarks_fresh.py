"""The committed BENCHMARKS.md and benchmarks/results.json are what `make bench` writes.

`make bench` builds and simulates every model x configuration on four targets (about ten
minutes of one core). This test proves the same claims in a fraction of that, without
leaving any figure unchecked by kind:
1. the evaluator figures (accuracy, disagreement, max error) of every model, each at one
   configuration taken in turn (so every configuration on several models of different
   families), and every model's float accuracy, are computed afresh and equal the
   committed records;
2. the target records (flash, RAM, stack, exact cycles and instructions, agreement with
   the evaluator, the -O2 runs) of a deterministic sample - the first model of every
   family, the families taking the configurations in turn, so that every family, every
   configuration and both frontends are built and simulated - equal the committed ones;
3. the report rendered from these records, with the kernel benchmark measured afresh,
   equals the committed BENCHMARKS.md up to its compile-time table (wall clock).
A change that moves any figure fails (1) or, for target figures, `make bench`'s own diff;
the full re-run stays `make bench`.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from minun_bench import suite as bench

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results.json"
ENTRIES = {e.name: e for e in bench.suite()}
CONFIGS = {o.label: o for o in bench.CONFIGS}


def committed() -> dict[tuple[str, str], dict]:
    return {(r["model"], r["config"]): r for r in json.loads(RESULTS.read_text())}


def sample() -> list[tuple[str, str]]:
    """(model, config): each family's first model, family k taking configuration k mod 5."""
    families: dict[str, str] = {}
    for e in bench.suite():
        families.setdefault(e.family, e.name)
    labels = list(CONFIGS)
    return [(name, labels[k % len(labels)]) for k, name in enumerate(families.values())]


def evaluator_sample() -> list[tuple[str, str]]:
    """(model, config): every model, model k taking configuration k mod 5."""
    labels = list(CONFIGS)
    return [(name, labels[k % len(labels)]) for k, name in enumerate(ENTRIES)]


# (model, config) in both samples: compiled once per process, read by both tests
SHARED = set(sample()) & set(evaluator_sample())


def compiled(model: str, config: str):
    """The compile result of a shared pair (None for the others: measure compiles them)."""
    return _compile(model, config) if (model, config) in SHARED else None


@functools.cache
def _compile(model: str, config: str):
    return bench.compile_entry(ENTRIES[model], CONFIGS[config])


def without_timing(text: str) -> str:
    return text.split("## Compile time")[0]


def test_the_sample_covers_every_family_configuration_and_frontend():
    chosen = sample()
    assert {ENTRIES[m].family for m, _ in chosen} == {e.family for e in ENTRIES.values()}
    assert {c for _, c in chosen} == set(CONFIGS)
    assert {ENTRIES[m].frontend for m, _ in chosen} == {"seedot", "onnx"}
    assert bench.OPT_CONFIG in {c for _, c in chosen}  # the -O2 rows are sampled too
    assert set(committed()) == {(e, c) for e in ENTRIES for c in CONFIGS}


@pytest.mark.parametrize("model, config", sample())
def test_target_records_match_a_fresh_build_and_run(model, config, tmp_path):
    m, _ = bench.measure(ENTRIES[model], CONFIGS[config], bench.run_targets, tmp_path,
                         compiled(model, config))
    assert json.loads(json.dumps(m.targets)) == committed()[(model, config)]["targets"], (
        f"{model} {config}: the targets' figures moved: run `make bench` and commit it")


def test_the_evaluator_sample_covers_every_model_and_configuration():
    chosen = evaluator_sample()
    assert {m for m, _ in chosen} == set(ENTRIES)
    for config in CONFIGS:  # each configuration on models of at least two families
        assert len({ENTRIES[m].family for m, c in chosen if c == config}) >= 2, config


@pytest.mark.parametrize("model, config", evaluator_sample())
def test_evaluator_figures_match_a_fresh_run(model, config, tmp_path):
    records = committed()
    m, float_accuracy = bench.measure(ENTRIES[model], CONFIGS[config], None, tmp_path,
                                      compiled(model, config))
    record = records[(model, config)]
    fresh = {k: getattr(m, k) for k in ("accuracy", "disagreement", "max_error")}
    assert fresh == {k: record[k] for k in fresh}, (
        f"{model} {config}: stale: run `make bench` and commit it")
    # the report's float column is the float32 program's accuracy (rendered below)
    assert float_accuracy == records[(model, "float32")]["accuracy"]


def test_the_report_is_what_the_records_render(tmp_path):
    """With every record checked above, the report must be their rendering (the kernel
    benchmark measured afresh)."""
    measurements = [bench.Measurement(r["model"], r["config"], r["accuracy"],
                                      r["disagreement"], r["max_error"], 0.0, r["targets"])
                    for r in json.loads(RESULTS.read_text())]
    float_acc = {m.model: m.accuracy for m in measurements if m.config == "float32"}
    kernels = bench.kernel_benchmark(tmp_path / "kernels")
    fresh = without_timing(bench.render(measurements, float_acc, kernels))
    report = without_timing((ROOT / "BENCHMARKS.md").read_text())
    assert fresh == report, "BENCHMARKS.md is stale: run `make bench` and commit it"
