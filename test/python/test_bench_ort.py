"""The onnxruntime int8 comparison (minun_mlir/bench_ort.py, `tools/bench.py --ort`): its
measures against numpy written here, the digits drawn as MNIST images against the 8x8
originals, and one model end to end (TFLite Micro's sine regressor: seconds), whose
errors are checked against onnxruntime's float run and the true sine."""

from __future__ import annotations

import numpy as np
import pytest

from minun_mlir import bench_ort


def test_measures_against_numpy():
    ref = np.array([[3.0, 4.0], [1.0, 0.0], [0.0, 2.0]])
    y = np.array([[3.0, 4.5], [0.0, 1.0], [0.0, 2.0]])
    np.testing.assert_allclose(bench_ort.relative_errors(y, ref),
                               [0.5 / 5.0, np.sqrt(2.0) / 1.0, 0.0])
    # argmax: 1, 0, 1 against 1, 1, 1
    assert bench_ort.top1_agreement(y, ref) == pytest.approx(2 / 3)


def test_digits_drawn_as_mnist_images():
    rows = np.zeros((2, 65), dtype=np.float32)
    rows[:, 0] = [3, 7]
    rows[0, 1 + 8 * 2 + 5] = 1.0  # pixel (2, 5) of the first digit
    rows[1, 1:] = 0.5
    img = bench_ort.digits_as_mnist(rows)
    assert img.shape == (2, 785) and img[:, 0].tolist() == [3, 7]
    a = img[0, 1:].reshape(28, 28)
    # pixel (2, 5) -> the 3x3 block at rows 2 + 6 .. 2 + 8, columns 2 + 15 .. 2 + 17
    assert a.sum() == 9 * 255 and np.all(a[8:11, 17:20] == 255)
    b = img[1, 1:].reshape(28, 28)
    assert np.all(b[2:26, 2:26] == 128) and b.sum() == 24 * 24 * 128  # round(127.5)


def test_sine_end_to_end(tmp_path):
    """ORT's int8 and minun's fixed point on the sine model, against the float model run
    in onnxruntime: every error is small, fixed16 is closer than fixed8, and the float
    model is the sine it claims to be."""
    model = next(m for m in bench_ort.models(tmp_path) if "sine" in m.name)
    row = bench_ort.compare(model, tmp_path, log=lambda *_: None)
    x = np.load(model.test)[:, 1:]
    ref = bench_ort.ort_run(model.onnx, x, model.dims).reshape(-1)
    assert np.abs(ref - np.sin(x[:, 0])).max() < 0.2
    errors = {label: row[label]["median_rel_error"] for label in bench_ort.LABELS}
    assert all(0 < e < 0.2 for e in errors.values()), errors
    assert errors["fixed16"] < errors["fixed8"] / 10
    assert errors["fixed8 per-channel nearest"] < errors["fixed8"]
    text = bench_ort.render([row])
    assert text.startswith(bench_ort.SECTION) and "| onnx-sine (real) | 60 |" in text
    png = bench_ort.plot([row])
    assert png.startswith(b"\x89PNG") and png == bench_ort.plot([row])  # deterministic
