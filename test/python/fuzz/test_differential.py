"""Differential property test: random small SeeDot programs, quantized at 8/16 bits with
random rounding/overflow/scale options, compiled to C, built and run on the target: the
C's labels and output integers equal the bit-exact evaluator's (evaluate_l2) on a batch of
inputs (the range's edges included). ~30 programs on x86 here; `-m nightly` runs 1,000 on
x86 and on the AVR (simavr)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minun_mlir.fuzz.differential import check_program


def assert_same(seed: int, target: str, tmp_path_factory) -> None:
    work = tmp_path_factory.mktemp("diff")
    v = check_program(random.Random(seed), target, work)
    assert v.outcome in ("same", "rejected"), (
        f"seed {seed} on {target}: {v.outcome}: {v.detail}\nconfig {v.config}\n{v.program}")


def settings_for(n: int):
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


@settings_for(30)
@given(st.integers(0, 2**32 - 1))
def test_x86_c_equals_evaluator(tmp_path_factory, seed):
    assert_same(seed, "x86", tmp_path_factory)


@pytest.mark.nightly
@settings_for(1000)
@given(st.integers(0, 2**32 - 1))
def test_x86_c_equals_evaluator_nightly(tmp_path_factory, seed):
    assert_same(seed, "x86", tmp_path_factory)


@pytest.mark.nightly
@settings_for(1000)
@given(st.integers(0, 2**32 - 1))
def test_avr_c_equals_evaluator_nightly(tmp_path_factory, seed):
    assert_same(seed, "avr", tmp_path_factory)


def test_rejected_programs_are_few():
    """Most random programs compile: the test is not vacuous."""
    import tempfile

    outcomes = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(10):
            outcomes.append(check_program(random.Random(i), "x86", f"{tmp}/{i}").outcome)
    assert outcomes.count("same") >= 7, outcomes
