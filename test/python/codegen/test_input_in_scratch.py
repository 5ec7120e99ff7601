"""The input planned in the scratch memory (memory-plan{input-in-scratch}) and held at 8
bits (quantize{input-bits=8}): the C computes the evaluator's integers through both entry
points (minun_predict copying x into the input buffer, on x86 with the strict flags; the
harness writing minun_input_buffer() and calling minun_predict_in_place, on x86, on the
Cortex-M4 in QEMU and, for the examples, on the Uno in simavr), on examples and on RNNPool face detection at test size; the input's
bytes are reused once it is dead; and face-4 (320x240) fits 256 KB with its image."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from codegen_support import EXAMPLES, build_host, run_host

from minun_mlir.codegen import emit_c
from minun_mlir.data import load_dataset
from minun_mlir.driver import load_model
from minun_mlir.memory_map import memory_map
from minun_mlir.numerics.float_eval import model_inputs
from minun_mlir.pipeline import lower_l2, lower_to_l2
from minun_mlir.targets import run_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "native"))
from face_program import (  # noqa: E402
    expected_once,
    full_face_l2_synthetic,
    small_face_l2_8bit_image,
)

N = 8  # test inputs per model
BOARD_RAM = 256 * 1024  # the cortex-m4 target's RAM (STM32F4 class)


def input_piece(plan):
    (piece,) = [p for p in plan.pieces if p.name == "input"]
    return piece


def assert_input_reused(plan) -> None:
    """The input is live from the start, and a buffer written after its last read takes
    some of its bytes."""
    x = input_piece(plan)
    assert x.first == 0
    later = [p for p in plan.pieces if p.first > x.last and
             p.offset < x.offset + x.size and x.offset < p.offset + p.size]
    assert later, "no buffer reuses the input's bytes"


def check_c(l2, features, tmp_path, boards=("cortex-m4",)) -> None:
    """x86 (minun_predict, minun_predict_float, and the in-place harness) and the boards
    (in place) against the evaluator."""
    exp = expected_once(l2, features)
    assert exp.inputs.dtype == np.int8
    x86 = tmp_path / "x86"
    emit_c(l2, "x86", x86, input_in_scratch=True)
    header = (x86 / "model.h").read_text()
    assert "typedef int8_t minun_input_t;" in header
    assert "#define MINUN_INPUT_IN_SCRATCH 1" in header
    exe = build_host(x86, tmp_path / "host")
    labels, scores = run_host(exe, exp.inputs, exp.scores.dtype, exp.scores.shape[1])
    np.testing.assert_array_equal(scores.reshape(exp.scores.shape), exp.scores)
    np.testing.assert_array_equal(labels, exp.labels)
    float_labels, _ = run_host(exe, features.reshape(len(features), -1).astype(np.float32),
                               np.dtype("<f4"), exp.scores.shape[1], as_float=True)
    np.testing.assert_array_equal(float_labels, exp.labels)
    for target, folder in (("x86", x86), *((b, tmp_path / b) for b in boards)):
        if target != "x86":
            emit_c(l2, target, folder, input_in_scratch=True)
        r = run_model(folder, target, exp.inputs, name="in-scratch", config="fixed16-input8")
        np.testing.assert_array_equal(np.asarray(r.outputs).reshape(exp.scores.shape),
                                      exp.scores, err_msg=target)


@pytest.mark.parametrize("model", ["lenet", "rnnpool"])
def test_input_in_scratch_at_8_bits_equals_the_evaluator(model, tmp_path):
    m = EXAMPLES[model]
    l1 = load_model(m.program, m.weights)
    l2 = lower_to_l2(l1, bits=16, data=str(m.train), input_bits=8)
    shape = tuple(model_inputs(l1)[0].results[0].type.get_shape())
    features = load_dataset(m.test, shape).features[:N]
    check_c(l2, features, tmp_path, boards=("avr", "cortex-m4"))
    on = memory_map(lower_l2(l2, stop="memory-plan", input_in_scratch=True))
    off = memory_map(lower_l2(l2, stop="memory-plan"))
    x = input_piece(on)
    assert x.size == np.prod(shape)  # one byte per element
    assert on.scratch < off.scratch + x.size  # sharing, not one more array
    assert on.lower_bound == on.scratch
    assert_input_reused(on)


def test_face_detection_at_test_size_with_the_image_in_scratch(tmp_path):
    l2, features = small_face_l2_8bit_image()  # shared in the process
    check_c(l2, features, tmp_path)
    plan = memory_map(lower_l2(l2, stop="memory-plan", input_in_scratch=True))
    assert input_piece(plan).size == 1280
    assert_input_reused(plan)


def test_face_4_fits_256_kb_with_its_8_bit_image():
    """The planner alone (no C run): face-4 at fixed16 with its 320x240 image at 8 bits in
    the scratch peaks below 256 KB; the image outside the scratch would not fit."""
    l2 = full_face_l2_synthetic()  # load_model(FACE, synthetic=0), lower_to_l2(...): shared
    # the board's RAM as memory-plan's budget: no error
    on = memory_map(lower_l2(l2, stop="memory-plan", input_in_scratch=True, budget=BOARD_RAM))
    x = input_piece(on)
    assert x.size == 320 * 240
    assert on.scratch == on.lower_bound < BOARD_RAM
    assert_input_reused(on)
    off = memory_map(lower_l2(l2, stop="memory-plan"))
    assert off.scratch + x.size > BOARD_RAM
