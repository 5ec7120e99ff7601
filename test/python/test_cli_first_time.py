"""`minun-compile` works the first time (issue: models users bring): no training data
(scales profiled on inputs drawn in the declared or given input range, with a one-line
warning), symbolic input dimensions (batch, sequence length) compiled as 1, datasets as
.npy, .npz, .csv or ONNX test data folders, and --run without --out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import onnx
import pytest

from minun_mlir.data import load_dataset
from minun_mlir.tools.minun_compile import main

ROOT = Path(__file__).resolve().parents[2]
MNIST = ROOT / "benchmarks" / "real" / "onnx-mnist-8"
PROTONN = ROOT / "examples" / "protonn"


def test_an_onnx_model_compiles_with_no_other_flag(tmp_path, capsys, monkeypatch):
    """`minun-compile model.onnx` alone writes the C into build/<the model's name> and says
    where, with the flash and RAM its arrays take (a second try replaces only its own
    files)."""
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        assert main([str(MNIST / "model.onnx")]) == 0
        out, err = capsys.readouterr()
        warnings = [line for line in err.splitlines() if "warning" in line]
        assert len(warnings) == 1 and "no training data: scales profiled on 64 inputs drawn " \
            "uniformly in the declared input range [-1, 1]; give --train FILE" in warnings[0]
        folder = Path("build") / "onnx-mnist-8"  # a model.onnx is named after its folder
        assert (tmp_path / folder / "model.c").exists()
        line = out.splitlines()[-1]
        assert line.startswith(f"  wrote {folder} (no --out given") and "B of flash" in line
        flash = int(re.search(r"take ([\d,]+) B of flash", line)[1].replace(",", ""))
        weights = sum(np.prod(t.dims) for t in onnx.load(MNIST / "model.onnx").graph.initializer
                      if len(t.dims) > 1)  # conv filters and the dense matrix, 2 B each
        assert 2 * weights <= flash < 2 * weights + 2048


def test_the_default_folder_refuses_to_overwrite_what_the_user_owns(tmp_path, capsys,
                                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "build" / "onnx-mnist-8" / "model.c"  # not written by a compile
    mine.parent.mkdir(parents=True)
    mine.write_text("mine")
    assert main([str(MNIST / "model.onnx")]) == 1
    err = capsys.readouterr().err
    assert "model.c" in err and err.count("error:") == 1 and "Traceback" not in err
    assert mine.read_text() == "mine" and sorted(mine.parent.iterdir()) == [mine]


def test_the_given_input_range_is_what_the_scales_are_profiled_on(tmp_path, capsys):
    """MNIST pixels are 0..255: profiled in [-1, 1] the input overflows on real digits,
    profiled in [0, 255] it does not."""
    reports = {}
    for name, extra in (("default", []), ("given", ["--input-range", "0,255"])):
        report = tmp_path / f"{name}.json"
        assert main([str(MNIST / "model.onnx"), "--test", str(MNIST), "--json", str(report),
                     "--evaluator", "numpy", *extra]) == 0
        reports[name] = json.loads(report.read_text())
    err = capsys.readouterr().err
    assert "declared input range [0, 255]" in err
    assert any(k.startswith("Input3") for k in reports["default"]["overflow"])
    assert not any(k.startswith("Input3") for k in reports["given"]["overflow"])
    assert reports["given"]["float_accuracy"] == 1.0  # the three digits, in float
    assert main([str(PROTONN.parent / "protonn.sd"), "--input-range", "0,1"]) == 1
    assert "--input-range is for ONNX models" in capsys.readouterr().err


def test_datasets_in_every_format_read_the_same(tmp_path):
    reference = load_dataset(MNIST / "test.npy", (1, 1, 28, 28))
    x = reference.features.reshape(len(reference), -1)
    y = reference.labels
    np.savez(tmp_path / "d.npz", x=x, y=y)
    rows = ["label," + ",".join(f"p{i}" for i in range(x.shape[1]))]
    rows += [",".join([str(int(label))] + [repr(float(v)) for v in row])
             for label, row in zip(y, x)]
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    for path in (tmp_path / "d.npz", tmp_path / "d.csv", MNIST):
        got = load_dataset(path, (1, 1, 28, 28))
        assert np.array_equal(got.features, reference.features), path
        assert np.array_equal(got.labels, reference.labels), path
    with pytest.raises(Exception, match="holds the inputs as 'x'"):
        np.savez(tmp_path / "bad.npz", inputs_typo=x)
        load_dataset(tmp_path / "bad.npz", (1, 1, 28, 28))


def test_run_without_out_builds_in_a_temporary_folder(capsys):
    assert main([str(PROTONN.parent / "protonn.sd"), "--train", str(PROTONN / "test.npy"),
                 "--test", str(PROTONN / "test.npy"), "--run", "--max-inputs", "5"]) == 0
    out = capsys.readouterr().out
    assert "removed afterwards" in out
    assert "labels equal to the evaluator's on 100.00%" in out
    # the report names no file in the folder it removes (the memory map, the C)
    assert "minun-run-" not in out and "memory map:" not in out and "C for x86" not in out


def test_maxscale_without_p_or_data_names_the_flags(capsys):
    assert main([str(MNIST / "model.onnx"), "--scales", "maxscale"]) == 1
    assert "--scales maxscale needs --maxscale P, or --train FILE to choose P" in \
        capsys.readouterr().err
