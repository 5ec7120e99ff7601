"""The benchmark suite's trained models, checked with the plain-numpy reference models.

- every suite model's reference accuracy on its test split is the one info.json records, and
  above a floor for its task; its directory is complete and consistent with its program;
- the real USPS FastGRNN-LR model predicts its 10 labelled examples right;
- the ONNX exports reproduce the numpy reference (onnx.reference.ReferenceEvaluator);
- the examples/ weights are the suite's (or, for rnnpool, regenerate from the seed);
- the reference's convolution and pooling agree with a direct loop implementation.

Needs numpy, onnx and pytest only (no torch, no scikit-learn: the data are committed).
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import onnx
import pytest
import reference_models as ref
from onnx.reference import ReferenceEvaluator

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "benchmarks" / "models"
EXAMPLES = REPO / "examples"
USPS = REPO / "benchmarks" / "real" / "fastgrnn-lr-usps"  # copy of ../shared/data
TRAIN_TOOLS = REPO / "tools" / "train"

MODEL_DIRS = sorted(p for p in MODELS.iterdir() if (p / "info.json").exists())
ONNX_DIRS = sorted(p for p in MODEL_DIRS if (p / "model.onnx").exists())
FAMILIES = {"protonn", "bonsai", "fastgrnn", "fastgrnn-lr", "lenet"}
# Lowest acceptable float test accuracy per task (the models reach well above these).
FLOOR = {"digits10": 0.90, "digits-binary": 0.90, "wine": 0.85, "breast-cancer": 0.90}
USPS_LABELS = [9, 6, 3, 6, 6, 0, 0, 0, 6, 9]

DECL = re.compile(
    r"let\s+(\w+)\s*=\s*\(([\d,\s]+)\)\s*in\s*\[\s*([-+\d.eE]+)\s*,\s*([-+\d.eE]+)\s*\]\s*in"
)
CONST = re.compile(r"let\s+(\w+)\s*=\s*([-+]?\d*\.\d*(?:[eE][-+]?\d+)?)\s*in")


def _ids(dirs: list[Path]) -> list[str]:
    return [d.name for d in dirs]


def declarations(program: str) -> dict[str, tuple[tuple[int, ...], float, float]]:
    out = {}
    for name, dims, lo, hi in DECL.findall(program):
        out[name] = (tuple(int(x) for x in dims.split(",")), float(lo), float(hi))
    return out


# --------------------------------------------------------------------------------------------
# The suite
# --------------------------------------------------------------------------------------------


def test_suite_covers_every_family_on_two_tasks() -> None:
    tasks = defaultdict(set)
    for d in MODEL_DIRS:
        info = ref.load_info(d)
        assert d.name == f"{info['family']}-{info['task']}"
        tasks[info["family"]].add(info["task"])
    assert set(tasks) == FAMILIES
    assert all(len(t) >= 2 for t in tasks.values()), dict(tasks)
    assert len(MODEL_DIRS) >= 10
    assert len(ONNX_DIRS) >= 2


@pytest.mark.parametrize("model_dir", MODEL_DIRS, ids=_ids(MODEL_DIRS))
def test_reference_accuracy_matches_info(model_dir: Path) -> None:
    info = ref.load_info(model_dir)
    correct, count = ref.evaluate(model_dir, "test")
    assert (correct, count) == (info["test_correct"], info["test_count"])
    assert correct / count == pytest.approx(info["float_test_accuracy"], abs=1e-12)
    assert correct / count >= FLOOR[info["task"]]
    correct, count = ref.evaluate(model_dir, "val")
    assert correct / count == pytest.approx(info["float_val_accuracy"], abs=1e-12)


@pytest.mark.parametrize("model_dir", MODEL_DIRS, ids=_ids(MODEL_DIRS))
def test_model_directory_is_consistent(model_dir: Path) -> None:
    info = ref.load_info(model_dir)
    program = (model_dir / "model.sd").read_text()
    decls = declarations(program)
    params = ref.load_params(model_dir)
    # The input: (features, 1), its range holds for every split; labels are 0-based.
    shape, lo, hi = decls.pop("X")
    assert shape == (info["input"]["features"], 1)
    assert [lo, hi] == info["input"]["declared_range"]
    sizes = {}
    for split in ("train", "val", "test"):
        data = np.load(model_dir / f"{split}.npy")
        assert data.dtype == np.float32 and data.ndim == 2
        assert data.shape[1] == 1 + shape[0]
        labels = data[:, 0]
        assert np.array_equal(labels, np.round(labels))
        assert labels.min() == 0 and labels.max() == info["classes"] - 1
        assert lo <= data[:, 1:].min() and data[:, 1:].max() <= hi
        sizes[split] = len(data)
    assert sizes == info["data"]["sizes"]
    # Every declared parameter has its .npy with the declared element count, inside its range.
    for name, (shape, lo, hi) in decls.items():
        a = params[name]
        assert a.dtype == np.float32
        assert a.size == int(np.prod(shape)), name
        assert lo <= a.min() and a.max() <= hi, name
    # Scalars are written in the program as literals equal to the stored float32 value.
    consts = dict(CONST.findall(program))
    for name, value in info["scalar_constants"].items():
        assert np.float32(float(consts[name])) == params[name].reshape(()), name
        assert float(consts[name]) == value
    assert set(params) == set(decls) | set(info["scalar_constants"])
    # KB-sized: fits an Arduino Uno's 32 KB flash at 16 bits with room for code.
    n = sum(a.size for k, a in params.items() if k not in info["scalar_constants"])
    assert n == info["parameter_count"] < 8000


def test_bonsai_projection_is_sparse() -> None:
    for d in MODEL_DIRS:
        info = ref.load_info(d)
        if info["family"] != "bonsai":
            continue
        Z = np.load(d / "Z.npy")
        assert np.count_nonzero(Z) <= 0.5 * Z.size, d.name
        program = (d / "model.sd").read_text()
        assert "Z |*| X" in program and ">= 0 ?" in program
        assert info["architecture"]["depth"] >= 2


# --------------------------------------------------------------------------------------------
# The real USPS model
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("inverse_std", [False, True])
def test_usps_fastgrnn_lr_predicts_all_ten(inverse_std: bool) -> None:
    params = ref.load_params(USPS)
    raw = np.load(USPS / "examples_label_first_raw.npy")
    params.pop("examples_label_first_raw")
    if inverse_std:  # what examples/fastgrnn_lr_usps.sd computes
        params["stdDevInv"] = np.load(EXAMPLES / "fastgrnn_lr_usps" / "stdDevInv.npy")
    scores = ref.fastgrnn_lr_usps(params, raw[:, 1:], inverse_std=inverse_std)
    assert ref.predict(scores).tolist() == USPS_LABELS
    assert raw[:, 0].astype(int).tolist() == USPS_LABELS


def test_usps_example_directory() -> None:
    d = EXAMPLES / "fastgrnn_lr_usps"
    params = ref.load_params(d)
    X, y = ref.load_dataset(d / "test.npy")
    assert y.tolist() == USPS_LABELS
    assert np.array_equal(
        params["stdDevInv"], (1.0 / params["stdDev"].astype(np.float64)).astype(np.float32)
    )
    for inverse_std in (False, True):
        assert ref.predict(ref.fastgrnn_lr_usps(params, X, inverse_std)).tolist() == USPS_LABELS
    if USPS.exists():
        for p in USPS.glob("*.npy"):
            if p.name != "examples_label_first_raw.npy":
                assert np.array_equal(np.load(p), params[p.stem]), p.name


# --------------------------------------------------------------------------------------------
# ONNX exports
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("model_dir", ONNX_DIRS, ids=_ids(ONNX_DIRS))
def test_onnx_export_matches_reference(model_dir: Path) -> None:
    model = onnx.load(model_dir / "model.onnx")
    onnx.checker.check_model(model, full_check=True)
    assert [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] == [13]
    assert {n.op_type for n in model.graph.node} <= {
        "Conv",
        "Add",
        "Relu",
        "MaxPool",
        "Reshape",
        "MatMul",
    }
    sess = ReferenceEvaluator(model)
    X, y = ref.load_dataset(model_dir / "test.npy")
    expect = ref.lenet(ref.load_params(model_dir), X)
    got = np.concatenate(
        [sess.run(None, {"input": x.reshape(1, 1, 8, 8)})[0] for x in X.astype(np.float32)]
    )
    np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-5)
    info = ref.load_info(model_dir)
    assert int((got.argmax(1) == y).sum()) == info["test_correct"]


@pytest.mark.parametrize("model_dir", ONNX_DIRS, ids=_ids(ONNX_DIRS))
def test_onnx_export_is_deterministic(model_dir: Path) -> None:
    sys.path.insert(0, str(TRAIN_TOOLS))
    try:
        import export_onnx
    finally:
        sys.path.remove(str(TRAIN_TOOLS))
    model = export_onnx.lenet_onnx(ref.load_params(model_dir), model_dir.name)
    assert model.SerializeToString() == (model_dir / "model.onnx").read_bytes()


# --------------------------------------------------------------------------------------------
# examples/
# --------------------------------------------------------------------------------------------

SUITE_EXAMPLES = {
    "protonn": "protonn-digits10",
    "bonsai": "bonsai-digits-binary",
    "fastgrnn": "fastgrnn-digits10",
    "lenet": "lenet-digits10",
}


@pytest.mark.parametrize("example,model", sorted(SUITE_EXAMPLES.items()))
def test_examples_are_copies_of_suite_models(example: str, model: str) -> None:
    text = (EXAMPLES / f"{example}.sd").read_text()
    suite = MODELS / model
    assert text.split("\n", 1)[1] == (suite / "model.sd").read_text()
    for p in (EXAMPLES / example).glob("*.npy"):
        assert np.array_equal(np.load(p), np.load(suite / p.name)), p.name
    assert set(ref.load_params(EXAMPLES / example)) == set(ref.load_params(suite))


def test_rnnpool_example_regenerates_from_its_seed() -> None:
    sys.path.insert(0, str(TRAIN_TOOLS))
    try:
        import make_examples
    finally:
        sys.path.remove(str(TRAIN_TOOLS))
    d = EXAMPLES / "rnnpool"
    params = ref.load_params(d)
    fresh = make_examples.rnnpool_params()
    assert set(fresh) == set(params)
    for k, v in fresh.items():
        assert np.array_equal(v, params[k]), k
    assert make_examples.rnnpool_program(fresh) == (EXAMPLES / "rnnpool.sd").read_text()
    X, y = ref.load_dataset(d / "test.npy")
    scores = ref.rnnpool_block(params, X)
    assert scores.shape == (len(X), 10) and np.all(np.isfinite(scores))
    assert ref.predict(scores).tolist() == y.tolist()


def test_every_example_has_its_weights() -> None:
    for sd in sorted(EXAMPLES.glob("*.sd")):
        params = ref.load_params(EXAMPLES / sd.stem)
        for name, (shape, lo, hi) in declarations(sd.read_text()).items():
            if name == "X":
                continue
            a = params[name]
            assert a.size == int(np.prod(shape)), (sd.name, name)
            assert lo <= a.min() and a.max() <= hi, (sd.name, name)


# --------------------------------------------------------------------------------------------
# The reference's building blocks against direct loops
# --------------------------------------------------------------------------------------------


def _conv_loops(A, F, stride, pad, dil, groups):
    G, HF, WF, Cg, Cout = F.shape
    N, H, W, C = A.shape
    t, b, l, r = pad
    Ap = np.zeros((N, H + t + b, W + l + r, C))
    Ap[:, t : t + H, l : l + W, :] = A
    Ho = (H + t + b - dil[0] * (HF - 1) - 1) // stride[0] + 1
    Wo = (W + l + r - dil[1] * (WF - 1) - 1) // stride[1] + 1
    out = np.zeros((N, Ho, Wo, G * Cout))
    for n in range(N):
        for y in range(Ho):
            for x in range(Wo):
                for g in range(G):
                    for co in range(Cout):
                        s = 0.0
                        for i in range(HF):
                            for j in range(WF):
                                for ci in range(Cg):
                                    s += (
                                        Ap[
                                            n,
                                            y * stride[0] + i * dil[0],
                                            x * stride[1] + j * dil[1],
                                            g * Cg + ci,
                                        ]
                                        * F[g, i, j, ci, co]
                                    )
                        out[n, y, x, g * Cout + co] = s
    return out


@pytest.mark.parametrize(
    "stride,pad,dil,groups",
    [
        ((1, 1), (1, 1, 1, 1), (1, 1), 1),
        ((2, 1), (0, 1, 2, 0), (1, 2), 2),
        ((1, 2), (1, 0, 0, 1), (2, 1), 4),
    ],
)
def test_reference_conv2d_matches_loops(stride, pad, dil, groups) -> None:
    rng = np.random.default_rng(7)
    A = rng.standard_normal((2, 6, 7, 4))
    F = rng.standard_normal((groups, 3, 2, 4 // groups, 3))
    np.testing.assert_allclose(
        ref.conv2d(A, F, stride, pad, dil, groups),
        _conv_loops(A, F, stride, pad, dil, groups),
        rtol=1e-12,
        atol=1e-12,
    )


def test_reference_maxpool_and_normalise() -> None:
    rng = np.random.default_rng(3)
    A = rng.standard_normal((2, 5, 6, 3))
    out = ref.maxpool(A, (2, 3), (2, 2))
    assert out.shape == (2, 2, 2, 3)
    for y in range(2):
        for x in range(2):
            np.testing.assert_array_equal(
                out[:, y, x, :], A[:, 2 * y : 2 * y + 2, 2 * x : 2 * x + 3, :].max(axis=(1, 2))
            )
    n = ref.normalise_l2(A)
    np.testing.assert_allclose(np.linalg.norm(n, axis=-1), 1.0, rtol=1e-12)


def test_info_json_is_well_formed() -> None:
    for d in MODEL_DIRS:
        info = json.loads((d / "info.json").read_text())
        for key in ("family", "task", "float_test_accuracy", "parameter_count", "input", "data"):
            assert key in info, (d.name, key)
        assert "normalisation" in info["input"] and "source" in info["data"]
