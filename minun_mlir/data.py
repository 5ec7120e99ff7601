"""Datasets in the SeeDot format, and the accuracy figures computed on them.

A SeeDot dataset file (`train.npy`, `test.npy`) is an array `[N, 1 + features]` with the
label in column 0. The original tools accepted labels numbered from 0 or from 1; we detect
which (and say so in `Dataset.label_note`), and always hand out 0-based labels, since that
is what `argmax`/`sgn` in a program produce. Features are reshaped to the program's input
declaration (`X = (features, 1)` gives `(N, features, 1)`), the batch layout the evaluators
take.

A model with several inputs (an ONNX graph with several graph inputs) takes, instead of
one shape, `{name: shape}` in the inputs' order, and its `Dataset.features` is a dict of
such arrays: a `.npy`/`.csv` row holds the label, then every input's values one input
after another; an `.npz` archive holds one array per input name (and optionally `y`);
an ONNX test data folder holds `input_0.pb`, `input_1.pb`, ... in graph-input order.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minun_mlir.diagnostics import error, warn
from minun_mlir.inputs import check_input, read_input

Shapes = Sequence[int] | Mapping[str, Sequence[int]]  # one input's shape, or {name: shape}


def examples(features: np.ndarray | Mapping[str, np.ndarray]) -> int:
    """The number of examples in a batch of one input's array or a dict of them."""
    if isinstance(features, Mapping):
        return len(next(iter(features.values()))) if features else 0
    return len(features)


def first(features: np.ndarray | Mapping[str, np.ndarray], n: int
          ) -> np.ndarray | dict[str, np.ndarray]:
    """The first n examples of a batch (one array, or a dict of arrays by input)."""
    if isinstance(features, Mapping):
        return {k: v[:n] for k, v in features.items()}
    return features[:n]


@dataclass(frozen=True)
class Dataset:
    features: np.ndarray | dict[str, np.ndarray]  # (N, *input_shape) float32, or by input
    labels: np.ndarray  # (N,), int64, 0-based
    label_base: int  # how the file numbers its labels: 0 or 1
    name: str = "<array>"
    labelled: bool = True  # False: an .npz without 'y' (labels are 0, no accuracy)
    targets: np.ndarray | None = None  # a regressor's data: the values to predict (float64)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def label_note(self) -> str:
        if len(self.labels) == 0:
            return f"{self.name}: no examples"
        if not self.labelled:
            return f"{self.name}: {len(self)} examples, no labels"
        lo, hi = int(self.labels.min()) + self.label_base, int(self.labels.max()) + self.label_base
        base = f"{self.label_base}-based"
        shifted = " (shifted to 0-based)" if self.label_base else ""
        return f"{self.name}: {len(self)} examples, labels {base}, {lo}..{hi}{shifted}"


def detect_label_base(labels: np.ndarray, num_classes: int | None = None,
                      name: str = "<array>") -> int:
    """0 or 1: the number of the first class in `labels` (integer-valued floats).

    A label 0 means 0-based. Otherwise, with `num_classes` known, a label equal to it means
    1-based; without it, labels that start at 1 are read as 1-based.
    """
    labels = np.asarray(labels)
    if labels.size == 0:
        return 0
    # a model with one output value reads its data as 2 classes (score > threshold); data
    # whose first column is not 0/1 is then likely a regressor's
    hint = ("; if the model predicts a value (a regressor), give --regression"
            if num_classes == 2 else "")
    if not np.all(np.isfinite(labels)) or not np.all(labels == np.round(labels)):
        row = int(np.flatnonzero(~np.isfinite(labels) | (labels != np.round(labels)))[0])
        raise error(f"the labels (column 0) must be whole numbers; row {row} has "
                    f"{float(labels[row])!r}{hint}", at=name)
    lo, hi = int(labels.min()), int(labels.max())
    if lo < 0:
        raise error(f"labels must be 0- or 1-based class numbers, found {lo}", at=name)
    if lo == 0:
        base = 0
    elif num_classes is not None:
        base = 1 if hi == num_classes else 0
    else:
        base = 1
    if num_classes is not None and hi - base >= num_classes:
        raise error(f"label {hi} is too large for {num_classes} classes ({base}-based){hint}",
                    at=name)
    return base


def dataset_from_array(data: np.ndarray, input_shape: Shapes | None = None,
                       num_classes: int | None = None, name: str = "<array>",
                       label_base: int | None = None, targets: bool = False) -> Dataset:
    """Split `[N, 1 + features]` into features shaped `(N, *input_shape)` (or, for several
    inputs `{name: shape}`, a dict of them, cut from the row in that order) and 0-based
    labels, or with `targets` the regression targets (column 0, any finite reals)."""
    data = np.asarray(data)
    if data.ndim != 2 or data.shape[1] < 2:
        raise error(f"a SeeDot dataset is a 2-D array [N, 1 + features], got shape "
                    f"{data.shape}", at=name)
    if data.dtype.kind not in "biuf":
        raise error(f"holds {data.dtype} values, not numbers", at=name)
    if len(data) == 0:
        raise error("holds no examples (0 rows)", at=name)
    bad = ~np.isfinite(data[:, 1:].astype(np.float64))
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise error(f"row {row}, feature {col} is {data[row, col + 1]}; the data must be "
                    f"finite ({int(bad.sum())} values are not)", at=name)
    features = data[:, 1:].astype(np.float32)
    n, count = features.shape
    if n < 2:
        warn(f"only {n} example: scales profiled on it may not fit other inputs", at=name)
    elif np.all(features == features[:1]):
        warn(f"all {n} examples are identical: scales profiled on them may not fit other "
             "inputs", at=name)
    if isinstance(input_shape, Mapping) and len(input_shape) == 1:
        input_shape = next(iter(input_shape.values()))
    if isinstance(input_shape, Mapping):
        shapes = {k: tuple(int(d) for d in s) for k, s in input_shape.items()}
        sizes = [math.prod(s) for s in shapes.values()]
        if sum(sizes) != count:
            shown = ", ".join(f"{k} {'x'.join(map(str, s))}" for k, s in shapes.items())
            raise error(f"{count} features per example, but the program's inputs are "
                        f"{shown} ({sum(sizes)} values)", at=name)
        cuts = np.cumsum([0, *sizes])
        features = {k: features[:, a:b].reshape((n, *s))
                    for (k, s), a, b in zip(shapes.items(), cuts[:-1], cuts[1:])}
    elif input_shape is not None:
        shape = tuple(int(d) for d in input_shape)
        if math.prod(shape) != count:
            shown = "x".join(map(str, shape))
            raise error(f"{count} features per example, but the program's input is {shown} "
                        f"({math.prod(shape)} values)", at=name)
        features = features.reshape((n, *shape))
    if targets:
        values = data[:, 0].astype(np.float64)
        if not np.all(np.isfinite(values)):
            row = int(np.flatnonzero(~np.isfinite(values))[0])
            raise error(f"the regression target of row {row} is {values[row]}; targets must "
                        "be finite", at=name)
        return Dataset(features, np.zeros(n, np.int64), 0, name, labelled=False,
                       targets=values)
    base = detect_label_base(data[:, 0], num_classes, name) if label_base is None else label_base
    labels = data[:, 0].astype(np.int64) - base
    return Dataset(features, labels, base, name)


def load_dataset(path: str | os.PathLike, input_shape: Shapes | None = None,
                 num_classes: int | None = None, threshold: float | None = 0.0,
                 targets: bool = False) -> Dataset:
    """Read a dataset: a SeeDot `.npy` array (label first, see `dataset_from_array`), an
    `.npz` archive with arrays `x` and (optionally) `y`, a `.csv` file (label first, a
    header line allowed), or a folder of ONNX test data (`input_0.pb`, with `output_0.pb`
    giving the label as its argmax, or for one value as `predictions` labels it, by
    `threshold`), or a folder of such `test_data_set_*` folders.
    For several inputs (`input_shape` a dict): the rows hold the inputs one after another,
    an `.npz` one array per input name, an ONNX folder `input_<k>.pb` per input.
    With `targets` (a regressor's data) the first column or 'y' holds the values to
    predict, any real numbers: `Dataset.targets`, no labels."""
    p = check_input(path, "the dataset", directory=True)
    names = list(input_shape) if isinstance(input_shape, Mapping) and len(input_shape) > 1 \
        else None
    if p.is_dir():
        return dataset_from_array(_onnx_test_data(p, len(names or [0]), threshold),
                                  input_shape, num_classes, str(path),
                                  label_base=0)  # labels of the expected outputs
    if p.suffix == ".npz":
        data, labelled = _npz(p, names)
        dataset = dataset_from_array(data, input_shape, num_classes, str(path),
                                     targets=targets)
        return dataclasses.replace(dataset, labelled=labelled and not targets,
                                   targets=dataset.targets if labelled else None)
    if p.suffix == ".csv":
        return dataset_from_array(_csv(p), input_shape, num_classes, str(path),
                                  targets=targets)
    try:
        data = np.load(path, allow_pickle=False)
    except Exception as e:  # a damaged header raises anything from ValueError to TokenError
        detail = f"{e}" if isinstance(e, (OSError, ValueError, EOFError)) else (
            f"not a readable .npy file ({type(e).__name__}: {e})")
        raise error(f"cannot read the dataset: {detail}", at=path) from None
    if isinstance(data, np.lib.npyio.NpzFile):
        data.close()
        raise error("an .npz archive; a dataset is one .npy array [N, 1 + features]",
                    at=path)
    return dataset_from_array(data, input_shape, num_classes, name=str(path), targets=targets)


def _labelled(x: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
    y = np.zeros(len(x)) if y is None else np.asarray(y, dtype=np.float64).reshape(-1)
    return np.concatenate([y[:, None], x], axis=1)


LABEL_KEYS = ("y", "Y", "labels")


def _npz(path: Path, names: list[str] | None = None) -> tuple[np.ndarray, bool]:
    """The examples as `[N, 1 + features]` and whether the archive holds labels."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except Exception as e:
        raise error(f"cannot read the dataset: {e}", at=path) from None
    if names is not None:  # several inputs: one array per input name
        missing = [k for k in names if k not in arrays]
        if missing:
            raise error(f"an .npz dataset of a model with inputs {', '.join(names)} holds one "
                        f"array per input name (and labels as 'y'); missing "
                        f"{', '.join(missing)} (it has {', '.join(sorted(arrays)) or 'none'})",
                        at=path)
        for k in names:
            _examples_of(arrays[k], f"'{k}'", path)
        counts = {k: len(arrays[k]) for k in names}
        if len(set(counts.values())) != 1:
            raise error("the inputs' arrays have different numbers of examples: " + ", ".join(
                f"{k} {c}" for k, c in counts.items()), at=path)
        x = np.concatenate([np.asarray(arrays[k], dtype=np.float64).reshape(
            counts[k], -1) for k in names], axis=1)
        return (_labelled(x, _labels_of(arrays, len(x), "the inputs have", path)),
                any(k in arrays for k in LABEL_KEYS))
    x = next((arrays[k] for k in ("x", "X", "inputs", "features") if k in arrays), None)
    if x is None:
        raise error(f"an .npz dataset holds the inputs as 'x' (and labels as 'y'); this one "
                    f"has {', '.join(sorted(arrays)) or 'no arrays'}", at=path)
    _examples_of(x, "'x'", path)
    return (_labelled(x, _labels_of(arrays, len(x), "'x' has", path)),
            any(k in arrays for k in LABEL_KEYS))


def _examples_of(x: np.ndarray, what: str, path: Path) -> None:
    """An .npz array of inputs: numbers, one row per example."""
    if x.ndim == 0:
        raise error(f"{what} is a single value (shape ()); it holds one row per example",
                    at=path)
    if x.dtype.kind not in "biuf":
        raise error(f"{what} holds {x.dtype} values, not numbers", at=path)


def _labels_of(arrays: dict[str, np.ndarray], n: int, inputs: str,
               path: Path) -> np.ndarray | None:
    """An .npz archive's labels ('y'), if any: one number per example (shape (N,) or
    (N, 1); one-hot or score rows are not labels)."""
    key = next((k for k in LABEL_KEYS if k in arrays), None)
    if key is None:
        return None
    y = arrays[key]
    if y.ndim == 0 or y.size != len(y) or y.dtype.kind not in "biuf":
        raise error(f"'{key}' holds the labels, one number per example (shape ({n},)); it "
                    f"has shape {y.shape} and dtype {y.dtype}", at=path)
    if len(y) != n:
        raise error(f"{inputs} {n} examples but '{key}' has {len(y)} labels", at=path)
    return y


def _csv(path: Path) -> np.ndarray:
    try:
        text = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"cannot read the dataset: {e}", at=path) from None
    rows = [line for line in text if line.strip()]
    if rows and not _numeric(rows[0].split(",")[0]):
        rows = rows[1:]  # a header line
    try:
        data = np.array([[float(v) for v in row.split(",")] for row in rows])
    except ValueError as e:
        raise error(f"a CSV dataset holds numbers, label first: {e}", at=path) from None
    if data.ndim != 2:
        raise error("the CSV rows have different numbers of columns", at=path)
    return data


def _numeric(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _onnx_test_data(folder: Path, inputs: int = 1, threshold: float | None = 0.0
                    ) -> np.ndarray:
    import onnx
    from onnx import numpy_helper

    sets = [folder] if (folder / "input_0.pb").exists() else sorted(
        d for d in folder.glob("test_data_set_*") if (d / "input_0.pb").exists())
    if not sets:
        raise error("a dataset folder holds ONNX test data: input_0.pb (and output_0.pb), or "
                    "test_data_set_* folders of them", at=folder)
    xs, ys = [], []
    for d in sets:
        def tensor(name: str, d=d) -> np.ndarray:
            """One serialized TensorProto of numbers; anything else names the file."""
            where = d / name
            data = read_input(where, "the test data")
            try:
                t = onnx.TensorProto()
                t.ParseFromString(data)
                array = numpy_helper.to_array(t)
            except Exception as e:  # DecodeError, a bad data type or size, ...
                raise error(f"not a serialized ONNX TensorProto ({type(e).__name__}: "
                            f"{' '.join(str(e).split())[:200]})", at=where) from None
            if array.dtype.kind not in "biuf" or array.size == 0:
                raise error(f"holds {array.size} {array.dtype} values; test data are "
                            "numbers", at=where)
            return array

        missing = [f"input_{k}.pb" for k in range(inputs) if not (d / f"input_{k}.pb").exists()]
        if missing:
            raise error(f"the model has {inputs} inputs, but {d} has no "
                        f"{', '.join(missing)}", at=folder)
        xs.append(np.concatenate([tensor(f"input_{k}.pb").reshape(1, -1)
                                  for k in range(inputs)], axis=1))
        out = tensor("output_0.pb") if (d / "output_0.pb").exists() else None
        if out is not None and out.size == 1 and out.dtype.kind in "iu":
            ys.append(int(out.reshape(-1)[0]))  # a label
        else:  # scores: their argmax, or one score against the threshold
            ys.append(0 if out is None else int(predictions(
                out.reshape(1, -1).astype(np.float64), threshold)[0]))
    sizes = {x.shape[1] for x in xs}
    if len(sizes) > 1:
        raise error(f"the test data sets hold inputs of different sizes: {xs[0].shape[1]} "
                    f"values in {sets[0].name}, "
                    f"{next(x.shape[1] for x in xs if x.shape[1] != xs[0].shape[1])} in "
                    f"another", at=folder)
    return _labelled(np.concatenate(xs), np.array(ys))


def input_shape(module, name: str = "X") -> tuple[int, ...]:
    """The declared shape of a compiled program's input `name` (a `minun.input` op)."""
    from minun_mlir.dialects.minun import InputOp

    for op in module.walk():
        if isinstance(op, InputOp) and op.sym_name.data == name:
            return tuple(op.result.type.get_shape())
    raise error(f"the program has no input named '{name}'")


def predictions(outputs: np.ndarray, threshold: float | None = 0.0) -> np.ndarray:
    """Labels from a batch of program outputs: integers (argmax/sgn) as they are; real
    scores `(N, ...)` by the argmax over each example's scores (first one on ties), or by
    `score > threshold` when an example has a single score (the program's
    `modules.decision_threshold`: 0.5 for a probability, 0 for a raw score, None for a
    regressor, whose label is 0; the C's minun_predict compares the same)."""
    outputs = np.asarray(outputs)
    if outputs.dtype.kind in "iub":
        return outputs.reshape(len(outputs)).astype(np.int64)
    flat = outputs.reshape(len(outputs), -1)
    if flat.shape[1] == 1 and threshold is not None:
        return (flat[:, 0] > threshold).astype(np.int64)
    return np.argmax(flat, axis=1).astype(np.int64)


def _pair(a: np.ndarray, b: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"{what}: {a.size} predictions against {b.size}")
    return a, b


def accuracy(predicted: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of examples whose predicted label is the true one."""
    p, y = _pair(predicted, labels, "accuracy")
    return float(np.mean(p == y)) if p.size else 0.0


def disagreement_count(a: np.ndarray, b: np.ndarray) -> int:
    """How many examples two models (say float and fixed-point) label differently."""
    x, y = _pair(a, b, "disagreement")
    return int(np.count_nonzero(x != y))


def disagreement(a: np.ndarray, b: np.ndarray) -> float:
    """Fraction of examples two models label differently (SeeDot's `disagree` metric)."""
    x, _ = _pair(a, b, "disagreement")
    return disagreement_count(a, b) / x.size if x.size else 0.0
