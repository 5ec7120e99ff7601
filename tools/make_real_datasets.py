#!/usr/bin/env python3
"""Write SeeDot-format datasets ([N, 1 + features], label first) for the vendored real
models, so the benchmark and the driver read every model's data the same way:

- onnx-mnist-8/test.npy: the model zoo's 3 test inputs (784 pixels each); the label is the
  argmax of the stored expected output (2, 0, 9).
- onnx-sine/test.npy: x = 0.0, 0.1, ..., 5.9 (the values the issue names); the label column
  is 0 (a regression model: the benchmark reports errors, not accuracy).
(fastgrnn-lr-usps's SeeDot program and data are in examples/fastgrnn_lr_usps/.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

REAL = Path(__file__).resolve().parent.parent / "benchmarks" / "real"


def tensor(path: Path) -> np.ndarray:
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(t)


def main() -> None:
    rows = []
    for d in sorted((REAL / "onnx-mnist-8").glob("test_data_set_*")):
        x = tensor(d / "input_0.pb").reshape(-1)
        label = int(np.argmax(tensor(d / "output_0.pb")))
        rows.append(np.concatenate([[label], x]))
    np.save(REAL / "onnx-mnist-8" / "test.npy", np.array(rows, dtype=np.float32))
    x = np.round(np.arange(60) * 0.1, 1)
    np.save(REAL / "onnx-sine" / "test.npy",
            np.stack([np.zeros(60), x], axis=1).astype(np.float32))


if __name__ == "__main__":
    main()
