"""The torch oracle for the shipped face-4 weights: the answer of tools/face/model.py (an
implementation independent of the compiler) on generated scene (seed 1, index 0), written
to benchmarks/real/edgeml-rnnpool-face-4/trained/torch_answer.npy for the tests to compare
our float evaluator with. Run by `make train-face` after training."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402
from model import DECLS, Face4  # noqa: E402
from train import OUT  # noqa: E402

SCENE = (1, 0)  # (seed, index) of the generated scene


def main() -> int:
    torch.set_num_threads(1)
    model = Face4()
    with torch.no_grad():
        for name in DECLS:
            model.p[name].copy_(torch.tensor(np.load(OUT / "weights" / f"{name}.npy")))
        pixels, _ = generate.scene(*SCENE)
        x = torch.tensor(generate.program_inputs(pixels[None]), dtype=torch.float64)
        answer = model.double()(x.reshape(1, 240, 320)).numpy()[0]
    np.save(OUT / "torch_answer.npy", answer.astype(np.float32))
    print(f"wrote {OUT / 'torch_answer.npy'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
