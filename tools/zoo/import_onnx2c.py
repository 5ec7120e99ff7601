"""Copy the small example and test models of onnx2c (https://github.com/kraiskil/onnx2c)
into test/zoo/onnx2c/ and write test inputs for each (`<model>.npz`: `x`, float32: the inputs
stacked along the batch axis; `y` the digit labels for the MNIST models).

    git clone https://github.com/kraiskil/onnx2c /tmp/onnx2c
    .venv/bin/python tools/zoo/import_onnx2c.py /tmp/onnx2c      # rewrite the zoo's copies
    .venv/bin/python tools/zoo/import_onnx2c.py /tmp/onnx2c --check

The files are taken from the commit in COMMIT (`git show COMMIT:path`), byte for byte;
the inputs are deterministic (scikit-learn's digits, scaled up to the models' MNIST
sizes and binarized as onnx2c's atmega example trains on; fixed-seed uniform values
for the others). test/zoo/onnx2c/README.md gives the source paths and licences.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "test", "zoo", "onnx2c")
COMMIT = "ea045cc169e9338bc8fe5b54d5109d2f2828db44"
N_TEST = 40

# zoo name: path in onnx2c
MODELS = {
    "atmega_mnist": "examples/atmega_mnist/mnist.simplified.onnx",
    "pytorch_mnist": "test/mnist/pytorch.onnx",
    "velardo_lesson9": "test/velardo/lesson9.onnx",
    "treeensembleclassifier": "test/simple_networks/treeensembleclassifier.onnx",
    "conv_2ch_3kernels_randombias": "test/simple_networks/conv_2ch_3kernels_randombias.onnx",
    "conv_3ch": "test/simple_networks/conv_3ch.onnx",
    "conv_k2_maxpool_k2": "test/simple_networks/conv_k2_maxpool_k2.onnx",
    "lstm_k1_b1_r1": "test/simple_networks/lstm_k1_b1_r1.onnx",
}


def _digits(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The first N_TEST of scikit-learn's digits, scaled from 8x8 to size x size (nearest
    pixel) and binarized at 0.3 like onnx2c's atmega MNIST training data."""
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    img = (x[:N_TEST] / 16.0).reshape(-1, 8, 8)
    idx = (np.arange(size) * 8) // size
    img = img[:, idx][:, :, idx]
    return (img >= 0.3).astype(np.float32), y[:N_TEST].astype(np.int64)


def _inputs(name: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    if name == "atmega_mnist":
        x, y = _digits(14)
        return {"x": x.reshape(-1, 1, 14, 14), "y": y}
    if name == "pytorch_mnist":
        x, y = _digits(28)
        return {"x": x.reshape(-1, 784), "y": y}
    if name == "velardo_lesson9":  # learns a + b on [0, 0.5); onnx2c's own test inputs first
        x = rng.uniform(0.0, 0.5, (N_TEST, 2)).astype(np.float32)
        x[0], x[1] = (0.1, 0.2), (0.2, 0.2)
        return {"x": x}
    if name == "treeensembleclassifier":  # a forest on iris's 4 features, declared as 25
        x = rng.uniform(0.0, 8.0, (N_TEST, 25)).astype(np.float32)
        return {"x": x}
    if name.startswith("conv"):  # onnx2c's input.h: pixels 1..25; then random ones
        ch = {"conv_2ch_3kernels_randombias": 2, "conv_3ch": 3}.get(name, 1)
        x = rng.uniform(0.0, 25.0, (N_TEST, 5, 5, ch)).astype(np.float32)
        x[0] = np.repeat(np.arange(1, 26, dtype=np.float32).reshape(5, 5, 1), ch, axis=2)
        return {"x": x}
    if name == "lstm_k1_b1_r1":  # a sequence of 4 steps of 5 features (M1 = 4)
        x = rng.uniform(-1.0, 1.0, (N_TEST, 4, 5)).astype(np.float32)
        return {"x": x}
    raise KeyError(name)


def export_all(src: str) -> dict[str, bytes]:
    files = {}
    for name, path in MODELS.items():
        files[f"{name}.onnx"] = subprocess.run(
            ["git", "-C", src, "show", f"{COMMIT}:{path}"], check=True,
            capture_output=True).stdout
        buf = io.BytesIO()
        np.savez_compressed(buf, **_inputs(name))
        files[f"{name}.npz"] = buf.getvalue()
    return files


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", help="a clone of onnx2c holding commit " + COMMIT)
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed files instead of writing")
    args = parser.parse_args(argv)
    files = export_all(args.src)
    stale = []
    os.makedirs(OUT, exist_ok=True)
    for name, data in files.items():
        path = os.path.join(OUT, name)
        if args.check:
            with open(path, "rb") as f:
                if f.read() != data:
                    stale.append(name)
        else:
            with open(path, "wb") as f:
                f.write(data)
    if stale:
        print("differs:", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
