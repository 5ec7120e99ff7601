"""Every program in examples/ and benchmarks/models/ parses, type-checks and lowers, and its
float evaluation matches the independent numpy implementation (test/python/
reference_models.py) to 1e-5 on random inputs and exactly on the stored test sets."""

from __future__ import annotations

import time

import numpy as np
import pytest
import reference_models as ref
from sd_helpers import BENCHMARKS, EXAMPLES, USPS, random_inputs, scores_module

from minun_mlir.data import accuracy, input_shape, load_dataset, predictions
from minun_mlir.frontends.seedot import load_program
from minun_mlir.numerics.float_eval import evaluate

# example program -> the reference that computes the same function (params, X [N, F]).
EXAMPLE_REFERENCES = {
    "protonn": ref.protonn,
    "bonsai": ref.bonsai,
    "fastgrnn": lambda p, x: ref.fastgrnn(p, x, steps=8),
    "fastgrnn_lr_usps": ref.fastgrnn_lr_usps,
    "lenet": ref.lenet,
    "rnnpool": ref.rnnpool_block,
}

EXAMPLE_PROGRAMS = sorted(p.stem for p in EXAMPLES.glob("*.sd"))
BENCHMARK_MODELS = sorted(p.parent.name for p in BENCHMARKS.glob("*/model.sd"))


def check_against_reference(module, text, params, reference, batch=64):
    """Scores (the operand of a final argmax/sgn) on random inputs in X's range."""
    x = random_inputs(text, batch)
    ours = evaluate(scores_module(module), {"X": x}).outputs[0]
    theirs = reference(params, x.reshape(batch, -1))
    np.testing.assert_allclose(ours.reshape(theirs.shape), theirs, rtol=0, atol=1e-5)


def test_every_example_has_a_reference():
    assert EXAMPLE_PROGRAMS, "examples/ has no programs"
    assert set(EXAMPLE_PROGRAMS) <= set(EXAMPLE_REFERENCES)


@pytest.mark.parametrize("name", EXAMPLE_PROGRAMS)
def test_example_matches_reference(name):
    path = EXAMPLES / f"{name}.sd"
    module = load_program(path)  # weights from examples/<name>/
    params = ref.load_params(EXAMPLES / name)
    check_against_reference(module, path.read_text(), params, EXAMPLE_REFERENCES[name])
    test = EXAMPLES / name / "test.npy"
    if test.exists() and name != "rnnpool":  # rnnpool's weights are random: no real labels
        data = load_dataset(test, input_shape(module))
        ours = predictions(evaluate(module, {"X": data.features}).outputs[0])
        theirs = ref.predict(EXAMPLE_REFERENCES[name](params, data.features.reshape(len(data), -1)))
        assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("name", BENCHMARK_MODELS)
def test_benchmark_model_matches_reference(name):
    folder = BENCHMARKS / name
    info = ref.load_info(folder)
    module = load_program(folder / "model.sd")
    params = ref.load_params(folder)

    def reference(p, x):
        return ref.forward(info["family"], p, x, info.get("architecture"))

    check_against_reference(module, (folder / "model.sd").read_text(), params, reference)
    data = load_dataset(folder / "test.npy", input_shape(module), info.get("classes"))
    got = predictions(evaluate(module, {"X": data.features}).outputs[0])
    assert accuracy(got, data.labels) == pytest.approx(info["float_test_accuracy"])


def test_fastgrnn_lr_usps_predicts_all_ten_labels():
    module = load_program(EXAMPLES / "fastgrnn_lr_usps.sd")
    data = load_dataset(USPS / "examples_label_first_raw.npy", input_shape(module), 10)
    assert data.label_base == 0
    labels = evaluate(module, {"X": data.features}).outputs[0].reshape(-1)
    assert labels.tolist() == [9, 6, 3, 6, 6, 0, 0, 0, 6, 9]
    assert labels.tolist() == data.labels.tolist()


def test_fastgrnn_on_ten_thousand_inputs_is_fast():
    """The issue asks for FastGRNN on 10,000 inputs in under a few seconds."""
    module = load_program(EXAMPLES / "fastgrnn.sd")
    x = np.random.default_rng(0).uniform(0.0, 1.0, size=(10_000, 64, 1))
    start = time.perf_counter()
    out = evaluate(module, {"X": x}).outputs[0]
    seconds = time.perf_counter() - start
    print(f"FastGRNN float evaluation of 10,000 inputs: {seconds:.2f} s")
    assert out.shape[0] == 10_000
    assert seconds < 5.0


def test_compiling_the_largest_example_is_quick():
    start = time.perf_counter()
    load_program(EXAMPLES / "rnnpool.sd")
    assert time.perf_counter() - start < 2.0
