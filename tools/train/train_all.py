"""Re-train every suite model, then re-export ONNX and rewrite examples/, then print a table.

Usage (from the repository root, in the training venv; see tools/train/README.md):
    .venv-train/bin/python tools/train/train_all.py
"""

from __future__ import annotations

import json

import common
import export_onnx
import make_examples
import train_bonsai
import train_fastgrnn
import train_lenet
import train_protonn


def main() -> None:
    train_protonn.main(list(train_protonn.CONFIG))
    train_bonsai.main(list(train_bonsai.CONFIG))
    train_fastgrnn.main(list(train_fastgrnn.CONFIG))
    train_lenet.main(list(train_lenet.CONFIG))
    export_onnx.main()
    make_examples.main()
    print(f"\n{'model':28s} {'params':>6s} {'nonzero':>7s} {'test acc':>8s}")
    for d in sorted(common.MODELS.iterdir()):
        info = json.loads((d / "info.json").read_text())
        print(
            f"{d.name:28s} {info['parameter_count']:6d} {info['nonzero_parameter_count']:7d} "
            f"{info['float_test_accuracy']:8.4f}"
        )


if __name__ == "__main__":
    main()
