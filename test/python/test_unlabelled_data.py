"""Test or training data without labels (an .npz with 'x' and no 'y') is read as such: the
report gives no accuracy (it was the accuracy against labels of 0 for every example), the
disagreement with float still, and a precision search on it matches the float outputs
instead of counting labels that are not there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from cli_tools import tool as cli_tool

from minun_mlir.data import load_dataset

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PROTONN = ROOT / "examples" / "protonn.sd"
DATA = ROOT / "benchmarks" / "models" / "protonn-digits10"


def unlabelled(tmp_path: Path, which: str) -> Path:
    data = np.load(DATA / f"{which}.npy")
    path = tmp_path / f"{which}-x.npz"
    np.savez(path, x=data[:, 1:])
    return path


def test_an_npz_without_labels_is_read_as_unlabelled(tmp_path):
    ds = load_dataset(unlabelled(tmp_path, "test"), (64, 1), 10)
    assert not ds.labelled and "no labels" in ds.label_note
    labelled = tmp_path / "l.npz"
    data = np.load(DATA / "test.npy")
    np.savez(labelled, x=data[:, 1:], y=data[:, 0])
    assert load_dataset(labelled, (64, 1), 10).labelled


def test_the_report_gives_no_accuracy_for_unlabelled_test_data(tmp_path):
    report = tmp_path / "r.json"
    r = subprocess.run([cli_tool("minun-compile"), str(PROTONN), "--train",
                        str(DATA / "train.npy"), "--test", str(unlabelled(tmp_path, "test")),
                        "--json", str(report)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "accuracy: not reported (the test data has no labels)" in r.stdout
    data = json.loads(report.read_text())
    assert data["accuracy"] is None and data["float_accuracy"] is None
    # the disagreement is between the float and the integer program: no labels needed
    labelled = subprocess.run([cli_tool("minun-compile"), str(PROTONN), "--train",
                               str(DATA / "train.npy"), "--test", str(DATA / "test.npy"),
                               "--json", str(tmp_path / "l.json")],
                              capture_output=True, text=True)
    assert labelled.returncode == 0, labelled.stderr
    assert data["disagreement"] == json.loads((tmp_path / "l.json").read_text())[
        "disagreement"]


def test_a_search_on_unlabelled_training_data_matches_the_float_outputs(tmp_path):
    from minun_mlir.bitwidth_search import _prepare
    from minun_mlir.driver import load_model

    l1 = load_model(PROTONN)
    train = load_dataset(unlabelled(tmp_path, "train"), (64, 1), 10)
    assert _prepare(l1, train, "numpy", None)[3] == "mae"
    labelled = load_dataset(DATA / "train.npy", (64, 1), 10)
    assert _prepare(l1, labelled, "numpy", None)[3] == "accuracy"
