"""A demoted table-function result (sigmoid/tanh/exp computed by the 16-bit table, kept at
8 bits) takes the data-driven scale of 8 bits. It kept the table's scale 14, so every
value of FastGRNN's gate z in [0, 1] wrapped: demoting z alone cost 64 points of accuracy
(found by the precision search)."""

from __future__ import annotations

from minun_bench.suite import MODELS
from minun_mlir.data import accuracy, load_dataset, predictions
from minun_mlir.frontends.seedot import load_program
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2
from minun_mlir.pipeline import lower_to_l2

FOLDER = MODELS / "fastgrnn-digits10"


def test_demoted_sigmoid_output_gets_the_8_bit_scale_and_keeps_accuracy():
    l1 = load_program(FOLDER / "model.sd", FOLDER)
    test = load_dataset(FOLDER / "test.npy", (64, 1))

    def acc(demote):
        l2 = lower_to_l2(l1, bits=16, data=str(FOLDER / "train.npy"), demote=demote,
                         evaluator="numpy")
        out = decode_outputs(l2, evaluate_l2(l2, test.features).outputs)[0]
        return l2, accuracy(predictions(out), test.labels)

    _, full = acc(())
    l2, demoted = acc(("z",))
    z = next(op for op in l2.walk() if op.results and op.results[0].name_hint == "z")
    el = z.results[0].type.element_type
    # z in (0, 1): an 8-bit scale of at most 7 holds it (the table's 14 wrapped)
    assert el.width == 8 and el.frac <= 7
    assert demoted >= full - 0.01
