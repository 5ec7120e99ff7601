"""The CMSIS-NN comparison (`tools/bench.py --cmsis`) can't silently go wrong: CMSIS-NN's s8
kernels, built and run in QEMU, give exactly what the numpy model of TFLite's integer
arithmetic gives, that model agrees with gemmlowp's primitives written independently and
classifies mnist-8's test digits as labelled, a wrong reference is caught, and the section
is the rendering of the committed record."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from gemmlowp_reference import mbqm

from minun_bench import cmsis
from minun_bench import face as bench_face

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "benchmarks" / "cmsis.json"


def dense_net(bits: int = 8) -> dict:
    return next(n for n in cmsis.networks(bits) if n["name"].startswith("dense"))


@pytest.fixture(scope="module")
def dense():
    return dense_net()


@pytest.mark.parametrize("bits", [8, 16])
def test_dense_kernel_on_the_m4_equals_tflite_and_the_committed_count(bits, tmp_path):
    """run_cmsis raises unless every output equals reference(); its -Os count is the
    committed one (a change to the kernels, flags or data shows here)."""
    net = dense_net(bits)
    got = cmsis.run_cmsis(net, tmp_path, opts=cmsis.OPTS[:1])
    committed = next(r for r in json.loads(RECORD.read_text())[f"cmsis_s{bits}"]
                     if r["network"] == net["name"])
    assert got["size"] == committed["size"]


def test_a_wrong_reference_is_caught(dense, tmp_path, monkeypatch):
    """The reference off by one on the first input's outputs only."""
    right = cmsis.reference
    x0 = np.random.default_rng(31).integers(-128, 128, (cmsis.INPUTS, *dense["shape"]))
    monkeypatch.setattr(cmsis, "reference", lambda net, x: right(net, x) + 1
                        if np.array_equal(x, x0[0]) else right(net, x))
    with pytest.raises(RuntimeError, match="differ from TFLite"):
        cmsis.run_cmsis(dense, tmp_path, opts=cmsis.OPTS[:1])


def test_requantization_agrees_with_gemmlowp(dense):
    """The dense layer's outputs, requantized one by one with gemmlowp_reference.mbqm on
    Python integers."""
    q = dense["layers"][0]
    p = q["p"]
    x = np.random.default_rng(5).integers(-128, 128, 64)
    acc = p["w"].astype(np.int64) @ (x - q["zp_in"]) + p["bias"]
    want = [min(max(mbqm(int(a), int(p["mult"][0]), int(p["shift"][0])) + q["zp_out"],
                    q["lo"]), q["hi"]) for a in acc]
    assert list(cmsis.reference(dense["layers"], x.reshape(1, 1, 64))) == want
    assert len(set(want)) > 10  # not a saturated output


@pytest.mark.parametrize("bits", [8, 16])
def test_the_integer_mnist8_classifies_its_test_digits(bits):
    net = cmsis.networks(bits)[0]
    q = net["layers"][0]
    for row in np.load(cmsis.MNIST / "test.npy"):
        x = np.clip(np.round(row[1:] / q["s_in"]) + q["zp_in"], -(1 << (bits - 1)),
                    (1 << (bits - 1)) - 1).reshape(28, 28, 1).astype(np.int64)
        assert np.argmax(cmsis.reference(net["layers"], x)) == row[0]


def test_the_section_is_the_rendering_of_the_record():
    record = json.loads(RECORD.read_text())
    _, parts = bench_face.split_sections((ROOT / "BENCHMARKS.md").read_text())
    assert parts[cmsis.SECTION] == cmsis.render(record)
    assert (ROOT / cmsis.PLOT).read_bytes() == cmsis.plot(record)
    for bits in (8, 16):
        assert [r["network"] for r in record[f"cmsis_s{bits}"]] == [
            n["name"] for n in cmsis.networks(bits)]


@pytest.mark.parametrize("bits", [8, 16])
def test_the_integer_dscnn_classifies_the_zoo_test_digits(bits):
    """The depthwise and average-pool layers of the numpy model: the zoo dscnn's first 8
    stored test digits get their labels."""
    net = next(n for n in cmsis.networks(bits) if n["name"] == "zoo dscnn")
    q = net["layers"][0]
    data = np.load(cmsis.ZOO_DSCNN.with_name("dscnn.npz"))
    for x, label in zip(data["x"][:8], data["y"][:8]):
        xq = np.clip(np.round(x.reshape(8, 8, 1) / q["s_in"]) + q["zp_in"],
                     -(1 << (bits - 1)), (1 << (bits - 1)) - 1).astype(np.int64)
        assert np.argmax(cmsis.reference(net["layers"], xq)) == label
