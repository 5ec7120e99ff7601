"""Data fuzzer: the `--train` / `--test` data sets of `minun-compile` (and the `data=`
option of `quantize`) with NaN and infinities, wrong shapes and element types, 0 and 1
rows, labels out of range or fractional, object arrays, .npz (and its labels not one per
example), .csv and garbage bytes, truncated .npy files; a data file that is a FIFO, a link
to /dev/zero or a folder; ONNX test data folders (test_data_set_k/input_0.pb) damaged.
The model is a small random SeeDot program (compiles in a blink)."""

from __future__ import annotations

import io
import math
import random

import numpy as np

from minun_mlir.fuzz.cases import SPECIAL_FILES, Case, choose_weighted, damage_bytes, special_file
from minun_mlir.fuzz.seedot import npy, random_program


def damaged_dataset(rng: random.Random, n_features: int, lo: float, hi: float,
                    classes: int) -> tuple[bytes, str, str]:
    """(file bytes, file name, description)."""
    gen = np.random.default_rng(rng.randrange(2**32))
    rows = rng.choice([2, 5, 20])
    x = gen.uniform(lo, hi, size=(rows, n_features))
    y = gen.integers(0, max(1, classes), size=(rows, 1)).astype(float)
    data = np.concatenate([y, x], axis=1).astype(np.float32)
    kind = choose_weighted(rng, [(2, "fine"), (1, "nan"), (1, "inf"), (1, "shape"),
                                 (1, "dtype"), (1, "rows0"), (1, "rows1"), (1, "labels"),
                                 (1, "object"), (1, "npz"), (1, "csv"), (1, "garbage"),
                                 (1, "bytes"), (1, "1d"), (1, "3d"), (1, "scalar"),
                                 (1, "huge"), (1, "identical"), (1, "fortran"),
                                 (1, "structured"), (1, "npz-labels")])
    name = "train.npy"
    if kind == "nan" or kind == "inf":
        data[rng.randrange(rows), rng.randrange(n_features + 1)] = (
            np.nan if kind == "nan" else rng.choice([np.inf, -np.inf]))
    elif kind == "shape":
        data = data[:, : rng.choice([1, n_features, n_features + 2])] if rng.random() < 0.5 \
            else np.concatenate([data, data[:, :3]], axis=1)
    elif kind == "dtype":
        data = data.astype(rng.choice(["float16", "float64", "int8", "int64", "uint8",
                                       "complex64", "bool", "<U8", "S4"]))
    elif kind == "rows0":
        data = data[:0]
    elif kind == "rows1":
        data = data[:1]
    elif kind == "labels":
        data[:, 0] = rng.choice([-1, classes, classes + 5, 0.5, 1e10, 2**31])
    elif kind == "object":
        return npy(np.array([[1, "a"], [None, 2.0]], dtype=object)), name, kind
    elif kind == "npz":
        buf = io.BytesIO()
        np.savez(buf, data=data)
        name = rng.choice(["train.npz", "train.npy"])
        return buf.getvalue(), name, kind
    elif kind == "csv":
        text = "\n".join(",".join(f"{v:g}" for v in row) for row in data)
        return text.encode(), rng.choice(["train.csv", "train.npy"]), kind
    elif kind == "garbage":
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 200))), name, kind
    elif kind == "bytes":
        blob, how = damage_bytes(rng, npy(data))
        return blob, name, how
    elif kind == "1d":
        data = data.reshape(-1)
    elif kind == "3d":
        data = data.reshape(rows, 1, -1)
    elif kind == "scalar":
        data = np.float32(3.0).reshape(())
    elif kind == "huge":
        with np.errstate(over="ignore"):
            data[:, 1:] *= rng.choice([1e6, 1e30, -1e38])
    elif kind == "identical":
        data[:] = data[0]
    elif kind == "fortran":
        data = np.asfortranarray(data)
    elif kind == "npz-labels":  # labels that are not one number per example
        buf = io.BytesIO()
        y = rng.choice([np.eye(rows)[:, :2], np.float64(1.0), np.array(["a"] * rows),
                        np.zeros((rows, 1, 2))])
        np.savez(buf, x=data[:, 1:], y=y)
        return buf.getvalue(), "train.npz", f"{kind} {np.shape(y)}"
    elif kind == "structured":
        data = np.zeros(rows, dtype=[("label", "<i4"), ("x", "<f4", (n_features,))])
    return npy(np.asarray(data)), name, kind


def test_data_folder(rng: random.Random, n_features: int, lo: float, hi: float,
                     name: str) -> tuple[dict[str, bytes], dict[str, str], str]:
    """An ONNX model-zoo test data folder (`name/test_data_set_k/input_0.pb`,
    `output_0.pb`), fine or damaged: (files, special files, description)."""
    from onnx import TensorProto, helper, numpy_helper

    gen = np.random.default_rng(rng.randrange(2**32))
    files: dict[str, bytes] = {}
    for k in range(rng.randint(1, 3)):
        files[f"{name}/test_data_set_{k}/input_0.pb"] = numpy_helper.from_array(
            gen.uniform(lo, hi, (1, n_features)).astype(np.float32)).SerializeToString()
        files[f"{name}/test_data_set_{k}/output_0.pb"] = numpy_helper.from_array(
            gen.uniform(0, 1, (1, 3)).astype(np.float32)).SerializeToString()
    victim = rng.choice(sorted(files))
    kind = rng.choice(["fine", "bytes", "garbage", "string", "size", "missing-input",
                       "special", "empty"])
    special: dict[str, str] = {}
    if kind == "bytes":
        files[victim], how = damage_bytes(rng, files[victim])
        kind += f" ({how})"
    elif kind == "garbage":
        files[victim] = bytes(rng.randrange(256) for _ in range(rng.randint(0, 60)))
    elif kind == "string":
        files[victim] = helper.make_tensor("s", TensorProto.STRING, [1],
                                           [b"x"]).SerializeToString()
    elif kind == "size":
        files[victim] = numpy_helper.from_array(np.zeros((1, n_features + rng.randint(1, 3)),
                                                         np.float32)).SerializeToString()
    elif kind == "missing-input":
        victim = victim.replace("output_0", "input_0")
        del files[victim]
        if not any(k.endswith("input_0.pb") for k in files):
            files[victim.replace("input_0", "input_1")] = b""
    elif kind == "special":
        del files[victim]
        special[victim] = rng.choice(SPECIAL_FILES)
        kind += f" {special[victim]}"
    elif kind == "empty":
        files[victim] = b""
    return files, special, f"test data folder {name}: {kind} {victim.split('/', 1)[-1]}"


def make_case(rng: random.Random, index: int) -> Case:
    text, weights, shape, lo, hi, argmax = random_program(rng, max_dim=6, max_ops=3)
    n_features = math.prod(shape)
    classes = 3 if argmax else 1
    files = {"model.sd": text.encode()}
    files.update({f"{k}.npy": npy(w) for k, w in weights.items()})
    blob, name, kind = damaged_dataset(rng, n_features, lo, hi, classes)
    files[name] = blob
    what = f"train {name}: {kind}"
    form = rng.random()
    if form < 0.1:  # the data set is a FIFO, a link to /dev/zero or a folder
        case = Case("data", index, "minun-compile", ["{dir}/model.sd", "--train",
                                                     f"{{dir}}/{name}"], files)
        case.what = f"train {name}: " + special_file(rng, case, name)
        return case
    if form < 0.25:  # --test an ONNX test data folder
        folder, special, how = test_data_folder(rng, n_features, lo, hi, "test_data")
        argv = ["{dir}/model.sd", "--train", f"{{dir}}/{name}", "--test", "{dir}/test_data"]
        return Case("data", index, "minun-compile", argv, {**files, **folder},
                    f"{what}; {how}", special=special)
    use = rng.random()
    if use < 0.25:
        bits = rng.choice([8, 16])
        argv = ["{dir}/model.sd", "--pass-pipeline=builtin.module(lower-composite-ops,"
                f'quantize{{bits={bits} data="{{dir}}/{name}"}})']
        return Case("data", index, "minun-opt", argv, files, what + "; quantize data=")
    argv = ["{dir}/model.sd", "--train", f"{{dir}}/{name}", "--bits", str(rng.choice([8, 16]))]
    if use < 0.6:
        test_blob, test_name, test_kind = damaged_dataset(rng, n_features, lo, hi, classes)
        test_name = "test" + test_name.removeprefix("train")
        files[test_name] = test_blob
        argv += ["--test", f"{{dir}}/{test_name}"]
        what += f"; test {test_name}: {test_kind}"
    if rng.random() < 0.3:
        argv += ["--scales", "maxscale"]
    return Case("data", index, "minun-compile", argv, files, what)
