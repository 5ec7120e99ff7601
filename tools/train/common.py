"""Shared pieces of the training scripts: tasks, splits, normalisation, seeding, and writing a
suite model directory (program, weights, datasets, info.json).

Everything here is deterministic for a fixed seed. Only the training scripts import torch;
this module needs numpy and scikit-learn (for the bundled datasets and the stratified split).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "benchmarks" / "models"
EXAMPLES = REPO / "examples"
SEED = 0

sys.path.insert(0, str(REPO / "test" / "python"))
import reference_models as ref  # noqa: E402

# --------------------------------------------------------------------------------------------
# Tasks
# --------------------------------------------------------------------------------------------


@dataclass
class Task:
    name: str
    classes: int
    source: str
    normalisation: str
    label_map: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    input_range: tuple[float, float]
    split: str = "stratified 60/20/20 train/val/test, sklearn train_test_split, random_state=0"
    extra: dict = field(default_factory=dict)

    @property
    def features(self) -> int:
        return self.x_train.shape[1]


def _split(y_strat: np.ndarray, seed: int = SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of a stratified 60/20/20 split (test first, then val out of the rest)."""
    from sklearn.model_selection import train_test_split

    idx = np.arange(len(y_strat))
    rest, test = train_test_split(idx, test_size=0.2, stratify=y_strat, random_state=seed)
    train, val = train_test_split(rest, test_size=0.25, stratify=y_strat[rest], random_state=seed)
    return np.sort(train), np.sort(val), np.sort(test)


def _outward(lo: float, hi: float, step: float) -> tuple[float, float]:
    return math.floor(lo / step) * step, math.ceil(hi / step) * step


def load_task(name: str) -> Task:
    """One of digits10, digits-binary, wine, breast-cancer, with the fixed split and scaling."""
    from sklearn import datasets

    if name in ("digits10", "digits-binary"):
        d = datasets.load_digits()
        X = (d.data / 16.0).astype(np.float32)  # pixel values 0..16 -> 0..1, exact in float32
        digit = d.target.astype(np.int64)
        tr, va, te = _split(digit)  # the same split for both digits tasks
        if name == "digits10":
            y, classes, label_map = digit, 10, "label = digit 0..9"
        else:
            y, classes = (digit >= 5).astype(np.int64), 2
            label_map = "label 0 = digit 0..4, label 1 = digit 5..9 (901 vs 896 images)"
        return Task(
            name=name,
            classes=classes,
            source="scikit-learn load_digits (bundled 8x8 optdigits images, 1797 examples)",
            normalisation="x = pixel / 16 (pixels are 0..16), so every feature is in [0, 1]; "
            "features are the 8x8 image row by row (row r = features 8r..8r+7)",
            label_map=label_map,
            x_train=X[tr],
            y_train=y[tr],
            x_val=X[va],
            y_val=y[va],
            x_test=X[te],
            y_test=y[te],
            input_range=(0.0, 1.0),
        )
    if name in ("wine", "breast-cancer"):
        loader = datasets.load_wine if name == "wine" else datasets.load_breast_cancer
        d = loader()
        X = d.data.astype(np.float64)
        y = d.target.astype(np.int64)
        tr, va, te = _split(y)
        mu = X[tr].mean(axis=0)
        sd = X[tr].std(axis=0)
        Xn = ((X - mu) / sd).astype(np.float32)
        lo, hi = _outward(float(Xn.min()), float(Xn.max()), 0.5)
        if name == "wine":
            source = "scikit-learn load_wine (bundled UCI wine, 178 examples, 13 features)"
            label_map = "label = cultivar 0..2"
        else:
            source = (
                "scikit-learn load_breast_cancer (bundled UCI Wisconsin diagnostic, 569 examples,"
                " 30 features)"
            )
            label_map = "label 0 = malignant, 1 = benign (scikit-learn's coding)"
        return Task(
            name=name,
            classes=int(y.max()) + 1,
            source=source,
            normalisation="z-score per feature with the training split's mean and standard "
            "deviation (population std); train_mean/train_std in info.json",
            label_map=label_map,
            x_train=Xn[tr],
            y_train=y[tr],
            x_val=Xn[va],
            y_val=y[va],
            x_test=Xn[te],
            y_test=y[te],
            input_range=(lo, hi),
            extra={"train_mean": mu.tolist(), "train_std": sd.tolist()},
        )
    raise ValueError(f"unknown task {name}")


# --------------------------------------------------------------------------------------------
# Determinism
# --------------------------------------------------------------------------------------------


def seed_everything(seed: int = SEED) -> None:
    """Seeds Python, numpy and (when imported) torch; single thread, deterministic kernels."""
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    random.seed(seed)
    np.random.seed(seed)
    if "torch" in sys.modules:
        import torch

        torch.manual_seed(seed)
        torch.set_num_threads(1)
        torch.use_deterministic_algorithms(True)


# --------------------------------------------------------------------------------------------
# Writing programs and model directories
# --------------------------------------------------------------------------------------------


def lit(v: float) -> str:
    """A SeeDot float literal that denotes exactly the float32 value v (in float64 too)."""
    s = repr(float(np.float32(v)))
    if "e" in s or "E" in s:
        s = np.format_float_positional(np.float64(np.float32(v)), unique=True, trim="0")
    if "." not in s:
        s += ".0"
    return s


def rng_text(a: np.ndarray, step: float = 1e-6) -> str:
    """The declared range `[lo, hi]` of a parameter: its min/max rounded outward."""
    a = np.asarray(a, dtype=np.float64)
    lo, hi = _outward(float(a.min()), float(a.max()), step)
    if hi <= lo:
        hi = lo + step
    return f"[{lo:.6f}, {hi:.6f}]"


def shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(int(d)) for d in shape) + ")"


def decl(name: str, a: np.ndarray, shape: tuple[int, ...] | None = None, pad: int = 0) -> str:
    """`let NAME = (shape) in [lo, hi] in` for a parameter."""
    shape = tuple(a.shape) if shape is None else shape
    return f"let {name.ljust(pad)} = {shape_text(shape)} in {rng_text(a)} in"


def input_decl(task: Task) -> str:
    lo, hi = task.input_range
    return f"let X = ({task.features}, 1) in [{lo:.1f}, {hi:.1f}] in"


def dataset_array(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.concatenate([y.reshape(-1, 1).astype(np.float32), x.astype(np.float32)], axis=1)


def write_model_dir(
    name: str,
    family: str,
    task: Task,
    program: str,
    params: dict[str, np.ndarray],
    architecture: dict,
    training: dict,
    root: Path = MODELS,
    extra_info: dict | None = None,
) -> dict:
    """Write benchmarks/models/<name>/ and return its info dict.

    params must already have the shapes the program declares; they are stored as float32.
    The float test accuracy is the numpy reference's (test/python/reference_models.py).
    """
    lo, hi = task.input_range
    for x in (task.x_train, task.x_val, task.x_test):
        assert lo <= float(x.min()) and float(x.max()) <= hi, "declared input range violated"
    out = root / name
    out.mkdir(parents=True, exist_ok=True)
    for p in out.glob("*.npy"):
        p.unlink()
    params32 = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in params.items()}
    for k, v in params32.items():
        np.save(out / f"{k}.npy", v)
    np.save(out / "train.npy", dataset_array(task.x_train, task.y_train))
    np.save(out / "val.npy", dataset_array(task.x_val, task.y_val))
    np.save(out / "test.npy", dataset_array(task.x_test, task.y_test))
    (out / "model.sd").write_text(program)

    accs = {}
    for split in ("train", "val", "test"):
        correct, count = ref.evaluate_arrays(
            family, params32, np.load(out / f"{split}.npy"), architecture
        )
        accs[split] = (correct, count)
    scalar_names = [k for k, v in params32.items() if v.size == 1]
    n_params = int(sum(v.size for k, v in params32.items() if k not in scalar_names))
    nnz = int(sum(np.count_nonzero(v) for k, v in params32.items() if k not in scalar_names))
    info = {
        "name": name,
        "family": family,
        "task": task.name,
        "classes": task.classes,
        "output": "sgn" if "sgn(" in program else "argmax",
        "float_test_accuracy": accs["test"][0] / accs["test"][1],
        "test_correct": accs["test"][0],
        "test_count": accs["test"][1],
        "float_val_accuracy": accs["val"][0] / accs["val"][1],
        "float_train_accuracy": accs["train"][0] / accs["train"][1],
        "accuracy_note": "float64 numpy reference (test/python/reference_models.py) on the "
        "float32 weights and data stored here",
        "parameter_count": n_params,
        "nonzero_parameter_count": nnz,
        "weights_bytes_at_16_bit": 2 * n_params,
        "scalar_constants": {k: float(params32[k].reshape(())) for k in sorted(scalar_names)},
        "parameters": {k: list(v.shape) for k, v in params32.items()},
        "architecture": architecture,
        "input": {
            "features": task.features,
            "declared_range": list(task.input_range),
            "normalisation": task.normalisation,
            **task.extra,
        },
        "data": {
            "source": task.source,
            "labels": task.label_map + " (0-based, column 0 of train/val/test.npy)",
            "split": task.split,
            "sizes": {"train": len(task.y_train), "val": len(task.y_val), "test": len(task.y_test)},
        },
        "training": training,
    }
    if extra_info:
        info.update(extra_info)
    (out / "info.json").write_text(dumps(info))
    return info


def dumps(obj: object) -> str:
    """JSON with 2-space indent, lists of numbers kept on one line."""
    text = json.dumps(obj, indent=2)
    return (
        re.sub(
            r"\[\s*([-0-9.e, \n]*?)\s*\]",
            lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]",
            text,
        )
        + "\n"
    )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
