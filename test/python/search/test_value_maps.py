"""MinUn's value maps from the native evaluator (minun_mlir/native.py `value_maps`) against
the numpy L2 evaluator's (the reference), and Haunter on the RNNPool face program at test
size with the image planned in the scratch."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from minun_mlir import native
from minun_mlir.bitwidth_search import (
    Evaluator,
    _prepare,
    candidate,
    haunter_model,
)
from minun_mlir.data import Dataset, load_dataset
from minun_mlir.driver import _input_shape, load_model, num_classes
from minun_mlir.numerics.repr import QuantizeConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "native"))
from face_program import images, small_face_program  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
MODELS = ROOT / "benchmarks" / "models"


def _dataset(features: np.ndarray, labels: np.ndarray) -> Dataset:
    return Dataset(features, labels, 0)


def _suite(name: str, n: int):
    l1 = load_model(MODELS / name / "model.sd")
    train = load_dataset(MODELS / name / "train.npy", _input_shape(l1), num_classes(l1))
    return l1, _dataset(train.features[:n], train.labels[:n])


def _both_maps(l1, data, representation: str):
    """(numpy, native) value maps of the all-8-bit and all-16-bit programs."""
    prepared, profile, reference, metric = _prepare(l1, data, "numpy", None, "disagreement")
    out = []
    with Evaluator(prepared, profile, data.features, data.labels, reference,
                   QuantizeConfig(bits=8, es=2), metric, "greedy", "numpy", 1, False, None,
                   representation) as run:
        for c in (candidate({}, 8), candidate({}, 16)):
            assert run.worker.problem.evaluator == "numpy"
            out.append((run.worker.value_map(c),
                        native.value_maps(run.worker.quantized(c), data.features)))
    return out


@pytest.mark.parametrize("representation", ["fixed", "posit"])
def test_one_example_in_the_same_order(representation):
    """One input: every named tensor's values, in the order computed, are the numpy
    evaluator's (the same integers, decoded the same way)."""
    l1, data = _suite("protonn-wine", 1)
    for numpy_map, native_map in _both_maps(l1, data, representation):
        assert set(numpy_map) == set(native_map) and "W" in numpy_map
        for name, values in numpy_map.items():
            np.testing.assert_array_equal(native_map[name], values, err_msg=name)


@pytest.mark.parametrize("representation", ["fixed", "posit"])
def test_an_rnn_over_several_examples(representation):
    """FastGRNN: the loop-carried state's values of every iteration and example (the
    evaluator runs the batch per iteration, the C example by example, so compare the
    multisets), a constant inside the loop once."""
    l1, data = _suite("fastgrnn-digits10", 3)
    for numpy_map, native_map in _both_maps(l1, data, representation):
        assert set(numpy_map) == set(native_map)
        assert native_map["H"].size == 3 * 8 * 32 + 32  # 8 steps of 32, and the init
        for name, values in numpy_map.items():
            np.testing.assert_array_equal(np.sort(native_map[name]), np.sort(values),
                                          err_msg=name)


@pytest.fixture(scope="module")
def face(tmp_path_factory):
    """The RNNPool face program at 40x32, weights drawn in their declared ranges."""
    path = tmp_path_factory.mktemp("face") / "face.sd"
    path.write_text(small_face_program())
    l1 = load_model(path, synthetic=0)
    x = images(3, seed=4)[:, 1:].reshape(3, 1280, 1)
    return path, l1, _dataset(x, np.zeros(3, np.int64))


def test_face_value_maps_match_numpy(face):
    """Fixed-point value maps of the face program (loops, sparse matmuls, normaliseL2;
    posits take the numpy evaluator minutes here, the suite models check them)."""
    _, l1, data = face
    one = _dataset(data.features[:1], data.labels[:1])
    for numpy_map, native_map in _both_maps(l1, one, "fixed"):
        assert set(numpy_map) == set(native_map) and "rnnOutput" in numpy_map
        for name, values in numpy_map.items():
            np.testing.assert_array_equal(native_map[name], values, err_msg=name)


def test_haunter_search_reports_ram_with_the_input_and_sqnr(tmp_path):
    """Haunter on posits for a regression model (the ONNX sine model: real outputs, so
    the metric is the mean abs error and SQNR is reported) under a budget between the
    all-8-bit and all-16-bit plans with the input planned in the scratch: the chosen
    program's RAM is within the budget and is what minun-compile plans when it replays the
    assignment, and its SQNR is the replayed program's output against the numpy float
    evaluator's. (The face program's search runs in the benchmark: its explorations plan
    thousands of configurations.)"""
    from minun_mlir.driver import Options, compile_model
    from minun_mlir.numerics.float_eval import evaluate
    from minun_mlir.numerics.l2_eval import decode_outputs

    model = ROOT / "benchmarks" / "real" / "onnx-sine" / "model.onnx"
    l1 = load_model(model, dims={"N": 1})
    x = np.linspace(0.0, 2 * np.pi, 64).reshape(64, 1, 1)
    data = _dataset(x, np.zeros(64, np.int64))
    path = tmp_path / "x.npy"
    np.save(path, np.concatenate([np.zeros((64, 1)), x.reshape(64, -1)], axis=1))
    kw = dict(representation="posit", progress=False, input_in_scratch=True, quire=True,
              metric="mae")
    everything = haunter_model(l1, data, 10**6, **kw)
    low, high = everything.base, everything.baselines["posit16"]
    budget = (low.ram + high.ram) // 2
    search = haunter_model(l1, data, budget, **kw)
    r = search.chosen_result
    assert low.ram < r.ram <= budget < high.ram
    assert r.sqnr_db is not None and high.sqnr_db > low.sqnr_db
    assign = tmp_path / "assignment.json"
    assign.write_text(search.assignment.to_json())
    result = compile_model(model, Options(repr="posit", bits=8, assign=str(assign),
                                          input_in_scratch=True, evaluator="numpy"),
                           train=path, test=path, out_dir=tmp_path / "c", dims={"N": 1})
    assert result.memory["scratch_bytes"] + result.memory.get("runtime_bytes", 0) == r.ram
    got = np.asarray(decode_outputs(result.l2, native.evaluate_outputs(
        result.l2, data.features, "numpy"))[0], np.float64)
    want = np.asarray(evaluate(l1, data.features).outputs[0], np.float64)
    sqnr = 10 * np.log10(np.sum(want ** 2) / np.sum((want - got) ** 2))
    assert r.sqnr_db == pytest.approx(sqnr, abs=1e-3)
