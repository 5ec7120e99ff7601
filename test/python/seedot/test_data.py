"""SeeDot datasets: label column, 0/1-based labels, features shaped for the program's input,
and the accuracy / disagreement figures."""

from __future__ import annotations

import numpy as np
import pytest

from minun_mlir.data import (
    accuracy,
    dataset_from_array,
    detect_label_base,
    disagreement,
    disagreement_count,
    input_shape,
    load_dataset,
    predictions,
)
from minun_mlir.diagnostics import MinunError
from minun_mlir.frontends.seedot import compile_source


def table(labels, features=4):
    labels = np.asarray(labels, dtype=float)
    x = np.arange(len(labels) * features, dtype=float).reshape(len(labels), features)
    return np.column_stack([labels, x])


def test_features_follow_the_input_declaration(tmp_path):
    np.save(tmp_path / "test.npy", table([0, 2, 1]))
    data = load_dataset(tmp_path / "test.npy", (4, 1))
    assert data.features.shape == (3, 4, 1) and data.features.dtype == np.float32
    assert data.features[1, :, 0].tolist() == [4, 5, 6, 7]
    assert data.labels.tolist() == [0, 2, 1] and data.label_base == 0
    assert data.label_note.endswith("3 examples, labels 0-based, 0..2")


@pytest.mark.parametrize("labels,classes,base", [
    ([0, 1, 1], None, 0),
    ([1, 2, 3], None, 1),
    ([1, 2, 10], 10, 1),       # 10 is not a 0-based label of 10 classes
    ([1, 2, 3], 10, 0),        # ambiguous with 10 classes: 0-based (label 0 just absent)
    ([0, 9], 10, 0),
])
def test_label_base(labels, classes, base):
    assert detect_label_base(np.array(labels, dtype=float), classes) == base


def test_one_based_labels_are_shifted():
    data = dataset_from_array(table([1, 2, 2, 3]), name="d.npy")
    assert data.labels.tolist() == [0, 1, 1, 2]
    assert data.label_note == "d.npy: 4 examples, labels 1-based, 1..3 (shifted to 0-based)"


@pytest.mark.parametrize("data,shape,message", [
    (table([0.5, 1]), None, "the labels (column 0) must be whole numbers; row 0 has"),
    (table([-1, 1]), None, "labels must be 0- or 1-based class numbers, found -1"),
    (table([0, 11]), None, None),
    (np.zeros(5), None, "a SeeDot dataset is a 2-D array [N, 1 + features], got shape (5,)"),
    (table([0, 1]), (5, 1), "4 features per example, but the program's input is 5x1 (5 values)"),
])
def test_bad_datasets(data, shape, message):
    if message is None:
        assert dataset_from_array(data).labels.tolist() == [0, 11]
        with pytest.raises(MinunError, match="label 11 is too large for 10 classes"):
            dataset_from_array(data, num_classes=10)
        return
    with pytest.raises(MinunError) as info:
        dataset_from_array(data, shape)
    assert message in str(info.value)


def test_unreadable_dataset(tmp_path):
    (tmp_path / "bad.npy").write_text("nope")
    with pytest.raises(MinunError, match="cannot read the dataset"):
        load_dataset(tmp_path / "bad.npy")


def test_input_shape_of_a_program():
    module = compile_source("let X = (16, 1) in [0.0, 1.0] in X", "t.sd", {})
    assert input_shape(module) == (16, 1)
    with pytest.raises(MinunError, match="no input named 'Y'"):
        input_shape(module, "Y")


def test_predictions_accuracy_disagreement():
    assert predictions(np.array([3, 1, 2])).tolist() == [3, 1, 2]
    scores = np.array([[[0.1], [0.9]], [[0.5], [0.5]], [[2.0], [-1.0]]])
    assert predictions(scores).tolist() == [1, 0, 0]  # first maximum on ties
    assert predictions(np.array([[[0.3]], [[-0.2]], [[0.0]]])).tolist() == [1, 0, 0]
    assert accuracy([1, 0, 0], [1, 1, 0]) == pytest.approx(2 / 3)
    assert disagreement_count([1, 0, 0], [1, 1, 1]) == 2
    assert disagreement([1, 0, 0, 4], [1, 1, 0, 4]) == 0.25
    with pytest.raises(ValueError):
        accuracy([1, 2], [1])
