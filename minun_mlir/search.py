"""Searches over quantization parameters, run on in-memory IR with the bit-exact evaluator
(no text round trips: architecture property 5).

`tune_maxscale` is SeeDot's auto-tuning (§5.3.2): try every maxscale P in 0 .. B-1 and keep
the one with the best accuracy on the training data.
"""

from __future__ import annotations

import dataclasses

from xdsl.dialects.builtin import ModuleOp

from minun_mlir.data import Dataset, accuracy, predictions
from minun_mlir.modules import decision_threshold
from minun_mlir.numerics import formats
from minun_mlir.numerics.float_eval import Profile
from minun_mlir.numerics.l2_eval import decode_outputs
from minun_mlir.numerics.repr import QuantizeConfig


def l2_accuracy(l2: ModuleOp, data: Dataset, evaluator: str = "auto") -> float:
    """Accuracy of an L2 program on `data` (native C or the numpy evaluator: the same
    integers)."""
    from minun_mlir.native import evaluate_outputs

    outputs = decode_outputs(l2, evaluate_outputs(l2, data.features, evaluator))
    return accuracy(predictions(outputs[0], decision_threshold(l2)), data.labels)


def tune_maxscale(module: ModuleOp, config: QuantizeConfig, data: Dataset,
                  profile: Profile | None, representation: str = "fixed",
                  evaluator: str = "auto") -> tuple[int, dict[int, float]]:
    """The best maxscale for `module` (L1, left unchanged) and the accuracy of every one
    tried; ties go to the lowest P."""
    rep = formats.get(representation)
    scores: dict[int, float] = {}
    for p in range(config.bits):
        trial = dataclasses.replace(config, maxscale=p)
        clone = module.clone()
        # the profile is keyed by the original's values: map them onto the clone's
        mapped = None
        if profile is not None:
            pairs = zip(_values(module), _values(clone), strict=True)
            mapped = {new: profile[old] for old, new in pairs if old in profile}
        scores[p] = l2_accuracy(rep.quantize(clone, trial, mapped), data, evaluator)
    best = max(scores, key=lambda p: (scores[p], -p))
    return best, scores


def _values(module: ModuleOp):
    for op in module.walk():
        yield from op.results
