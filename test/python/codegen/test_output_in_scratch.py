"""The output planned in the scratch memory (memory-plan{output-in-scratch}), alone and
with the input there too: the C computes the evaluator's integers through both entry points
(minun_predict copying the scores out, on x86 with the strict flags; the harness reading
minun_output_buffer() after minun_predict_in_place, on x86, on the Uno in simavr and on the
Cortex-M4 in QEMU), on an example and on RNNPool face detection at test size; the output
never shares bytes with a buffer live at the same time, and buffers dead before its first
write share its bytes."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from codegen_support import EXAMPLES, build_host, expected, quantized, run_host

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
    full_face_on_the_m4,
    small_face_l2_8bit_image,
)

N = 8  # test inputs per model
PLANNERS = ("greedy", "shiftry", "optimal")


def piece(plan, name):
    (p,) = [p for p in plan.pieces if p.name == name]
    return p


def assert_output_planned(plan) -> None:
    """The output lives to the end, overlaps in bytes no buffer live with it, and some
    buffer dead before its first write shares its bytes."""
    y = piece(plan, "output")
    end = max(p.last for p in plan.pieces)
    assert y.last == end
    for p in plan.pieces:
        if p is y:
            continue
        in_bytes = p.offset < y.offset + y.size and y.offset < p.offset + p.size
        in_time = not (p.last < y.first or y.last < p.first)
        assert not (in_bytes and in_time), f"{p.name} overlaps the output"
    assert any(p.last < y.first and p.offset < y.offset + y.size and
               y.offset < p.offset + p.size for p in plan.pieces), "nothing reuses its bytes"


def check_c(l2, features, tmp_path, boards, input_in_scratch) -> None:
    """x86 (minun_predict, minun_predict_float, and the in-place harness) and the boards
    (in place) against the evaluator."""
    exp = expected_once(l2, features)
    sides = dict(input_in_scratch=input_in_scratch, output_in_scratch=True)
    x86 = tmp_path / "x86"
    emit_c(l2, "x86", x86, **sides)
    header = (x86 / "model.h").read_text()
    assert "#define MINUN_OUTPUT_IN_SCRATCH 1" in header
    assert "minun_output_t *minun_output_buffer(void);" in header
    assert ("#define MINUN_INPUT_IN_SCRATCH 1" in header) == input_in_scratch
    exe = build_host(x86, tmp_path / "host")
    labels, scores = run_host(exe, exp.inputs, exp.scores.dtype, exp.scores.shape[1])
    np.testing.assert_array_equal(scores.reshape(exp.scores.shape), exp.scores)
    np.testing.assert_array_equal(labels, exp.labels)
    float_labels, _ = run_host(exe, features.reshape(len(features), -1).astype(np.float32),
                               np.dtype("<f4"), exp.scores.shape[1], as_float=True)
    np.testing.assert_array_equal(float_labels, exp.labels)
    for target, folder in (("x86", x86), *((b, tmp_path / b) for b in boards)):
        if target != "x86":
            emit_c(l2, target, folder, **sides)
        r = run_model(folder, target, exp.inputs, name="out-scratch", config="fixed16")
        np.testing.assert_array_equal(np.asarray(r.outputs).reshape(exp.scores.shape),
                                      exp.scores, err_msg=target)
        np.testing.assert_array_equal(np.asarray(r.labels), exp.labels, err_msg=target)


@pytest.mark.parametrize("input_in_scratch", [False, True])
def test_output_in_scratch_equals_the_evaluator(input_in_scratch, tmp_path):
    m = EXAMPLES["lenet"]
    l1 = load_model(m.program, m.weights)
    l2 = lower_to_l2(l1, bits=16, data=str(m.train), input_bits=8)
    shape = tuple(model_inputs(l1)[0].results[0].type.get_shape())
    features = load_dataset(m.test, shape).features[:N]
    check_c(l2, features, tmp_path, ("avr", "cortex-m4"), input_in_scratch)


@pytest.mark.parametrize("config", ["float32", "posit8", "zero-skew8", "bfloat16"])
def test_other_representations_read_their_scores_in_scratch(config, tmp_path):
    """Every form of minun_predict_float (float32, posit, zero-skew, bfloat16) and the
    copying minun_predict with both sides in scratch, on x86 with the strict flags (float32
    is not promised bit-exact, libm: within test_crosscheck's tolerance)."""
    l2, test = quantized("lenet", config)
    features = test.features[:4]
    exp = expected(l2, features)
    emit_c(l2, "x86", tmp_path / "c", input_in_scratch=True, output_in_scratch=True)
    exe = build_host(tmp_path / "c", tmp_path / "host")
    tol = 1e-4 * max(1.0, float(np.abs(exp.scores).max())) if config == "float32" else 0

    def same(got) -> None:
        got = np.asarray(got).reshape(exp.scores.shape)
        np.testing.assert_allclose(got, exp.scores, rtol=1e-4 if tol else 0, atol=tol)

    labels, scores = run_host(exe, exp.inputs, exp.scores.dtype, exp.scores.shape[1])
    same(scores)
    np.testing.assert_array_equal(labels, exp.labels)
    float_labels, _ = run_host(exe, features.reshape(len(features), -1).astype(np.float32),
                               np.dtype("<f4"), exp.scores.shape[1], as_float=True)
    np.testing.assert_array_equal(float_labels, exp.labels)
    same(run_model(tmp_path / "c", "x86", exp.inputs, name="out-scratch",
                   config=config).outputs)


@pytest.mark.parametrize("planner", PLANNERS)
def test_planners_never_overlap_the_output_with_a_live_buffer(planner):
    m = EXAMPLES["lenet"]
    l2 = lower_to_l2(load_model(m.program, m.weights), bits=16, data=str(m.train))
    on = memory_map(lower_l2(l2, stop="memory-plan", planner=planner,
                             input_in_scratch=True, output_in_scratch=True))
    off = memory_map(lower_l2(l2, stop="memory-plan", planner=planner, input_in_scratch=True))
    y = piece(on, "output")
    assert y.size == 2 * 10  # lenet's 10 scores at 16 bits
    assert on.scratch < off.scratch + y.size  # sharing, not one more array
    assert_output_planned(on)


def test_face_detection_at_test_size_with_image_and_scores_in_scratch(tmp_path):
    l2, features = small_face_l2_8bit_image()  # shared in the process
    check_c(l2, features, tmp_path, ("cortex-m4",), True)
    plan = memory_map(lower_l2(l2, stop="memory-plan", input_in_scratch=True,
                               output_in_scratch=True))
    assert_output_planned(plan)


@pytest.mark.slow  # profiling 8 QVGA images, then 1.5e9 instructions in QEMU: about a minute
def test_face_4_runs_on_the_256_kb_board_with_image_and_scores_in_scratch(tmp_path):
    """face-4 at fixed16, its 8-bit image and 18,000 scores planned in the scratch, built
    for the real 256 KB cortex-m4 (the build fails when static RAM exceeds the board) and
    run in QEMU: every score equals the evaluator's, and static RAM plus the stack's
    high-water mark fit the board."""
    from minun_bench.face import BOARD_RAM

    _, run = full_face_on_the_m4(tmp_path, 1, synthetic_weights=0)
    assert run.ram_bytes + run.stack_bytes <= BOARD_RAM
