"""What the numerics tests share: a one-layer ONNX model, and mnist-8's held-out measures
against onnxruntime's float model (as the benchmark takes them)."""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def dense_model(w: np.ndarray, b: np.ndarray, weight_first: bool = False):
    """`x @ W + b` (ONNX's order), or `W @ x + b` with `weight_first` (SeeDot's order;
    then b is (C, 1) and x a column)."""
    if weight_first:  # W (C, K) @ x (K, 1)
        inputs, shapes = ["W", "X"], ((w.shape[1], 1), (w.shape[0], 1))
    else:  # x (1, K) @ W (K, C)
        inputs, shapes = ["X", "W"], ((1, w.shape[0]), (1, w.shape[1]))
    graph = helper.make_graph(
        [helper.make_node("MatMul", inputs, ["XW"]),
         helper.make_node("Add", ["XW", "B"], ["Y"])], "dense",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, shapes[0])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, shapes[1])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


_MEASURED: dict[str, tuple[float, float]] = {}


def mnist8_measures(work: Path, **quantize) -> tuple[float, float]:
    """mnist-8 (the model zoo's) compiled by minun with `quantize` options, calibrated on
    256 training digits drawn as MNIST images: (median relative output error, top-1
    agreement) against onnxruntime's float model on the 360 test digits. Kept per
    process by the options' full value (QuantizeOptions, defaults filled in): the
    weight-rounding and bias-correction tests share their baseline (nearest rounding
    without correction is the same compile)."""
    from minun_mlir.quantize_options import QuantizeOptions

    key = repr(QuantizeOptions(**quantize))
    if key not in _MEASURED:
        _MEASURED[key] = _mnist8_measures(work, **quantize)
    return _MEASURED[key]


def _mnist8_measures(work: Path, **quantize) -> tuple[float, float]:
    from minun_bench import ort as bench_ort

    (m,) = [m for m in bench_ort.models(work) if m.name.startswith("onnx-mnist-8")]
    _, calibration, test, reference = bench_ort.prepare(m, work)
    y = bench_ort.minun_outputs(m, test, calibration, **quantize)
    return (statistics.median(bench_ort.relative_errors(y, reference)),
            bench_ort.top1_agreement(y, reference))
