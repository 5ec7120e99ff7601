"""stream-rows (passes/stream_rows.py): a chain of convolutions run as loops over rows
with line buffers computes the same integers as the chain held whole (evaluator against
evaluator), its C computes the evaluator's integers on x86 and on the Cortex-M4 in QEMU,
and the planned scratch shrinks; on RNNPool face detection (test size) streaming changes
no integer, and at 320x240 it removes the RNNPool output from the plan."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from codegen_support import build_host, expected, run_host

from minun_mlir.codegen import emit_c
from minun_mlir.dialects import minun
from minun_mlir.driver import load_model
from minun_mlir.memory_map import memory_map
from minun_mlir.modules import main_function
from minun_mlir.numerics.l2_eval import evaluate_l2
from minun_mlir.passes.stream_rows import stream_rows
from minun_mlir.pipeline import lower_l2, lower_to_l2
from minun_mlir.targets import run_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "native"))
from face_program import (  # noqa: E402
    expected_once,
    full_face_l2_synthetic,
    full_face_on_the_m4,
    small_face_l2_8bit_image,
)

H, W = 12, 6
CHAIN = f"""let X = ({H * W}, 1) in [-1.0, 1.0] in
let Xt = reshape(X, (1, {H}, {W}, 1), (1, 2)) in
let F1 = (1, 3, 3, 1, 4) in [-1.0, 1.0] in
let B1 = (4) in [-0.5, 0.5] in
let F2 = (1, 3, 3, 4, 4) in [-1.0, 1.0] in
let F3 = (1, 5, 5, 4, 4) in [-1.0, 1.0] in
let F4 = (1, 1, 1, 4, 2) in [-1.0, 1.0] in
let a = relu(conv2d(Xt, F1, {{s 1 1}}, {{p 1 1 1 1}}, {{d 1 1}}, {{g 1}}) <+> B1) in
let b = relu6(conv2d(a, F2, {{s 1 1}}, {{p 1 1 0 0}}, {{d 1 1}}, {{g 1}})) in
let c = conv2d(b, F3, {{s 1 2}}, {{p 2 2 2 2}}, {{d 1 1}}, {{g 1}}) in
let d = conv2d(c, F4, {{s 1 1}}, {{p 0 0 0 0}}, {{d 1 1}}, {{g 1}}) in
reshape(d, (1, {H * 2 * 2}), (1, 2, 3, 4))
"""


def images(n: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).uniform(-1, 1, size=(n, H * W)).astype(np.float32)
    return np.concatenate([np.zeros((n, 1), np.float32), x], axis=1)


def test_a_streamed_chain_is_the_chain(tmp_path):
    program = tmp_path / "chain.sd"
    program.write_text(CHAIN)
    np.save(tmp_path / "train.npy", images(16, seed=0))
    l2 = lower_to_l2(load_model(program, synthetic=0), bits=16, data=str(tmp_path / "train.npy"))
    streamed = l2.clone()
    report = stream_rows(streamed)
    assert len(report) == 1 and report[0].startswith("streamed: ops "), report
    assert "recomputation 0" in report[0]
    streamed.verify()
    features = images(6, seed=1)[:, 1:].reshape(6, H * W, 1)
    whole = evaluate_l2(l2, features).outputs
    rows = evaluate_l2(streamed, features).outputs
    for a, b in zip(whole, rows):
        np.testing.assert_array_equal(a, b)
    # the feature maps a and b (12x4x4 and 12x4x4 at 16 bits) are rings of 3 and 5 rows
    before = memory_map(lower_l2(l2, stop="memory-plan")).scratch
    after = memory_map(lower_l2(streamed, stop="memory-plan")).scratch
    assert after < before, (before, after)

    exp = expected(streamed, features)
    np.testing.assert_array_equal(exp.scores, expected(l2, features).scores)
    emit_c(streamed, "x86", tmp_path / "x86")
    exe = build_host(tmp_path / "x86", tmp_path / "host")
    _, scores = run_host(exe, exp.inputs, exp.scores.dtype, exp.scores.shape[1])
    np.testing.assert_array_equal(scores.reshape(exp.scores.shape), exp.scores)
    emit_c(streamed, "cortex-m4", tmp_path / "m4")
    r = run_model(tmp_path / "m4", "cortex-m4", exp.inputs[:2], name="stream", config="fixed16")
    np.testing.assert_array_equal(np.asarray(r.outputs).reshape(exp.scores[:2].shape),
                                  exp.scores[:2])


def test_face_program_streamed_keeps_its_integers(tmp_path):
    """RNNPool face detection at test size with every chain streamed (`every`: at 4x5
    patches no ring is smaller than what it replaces), RNNPool's patch-row loop with its
    row and column fix-ups included: the evaluator's integers are unchanged, and the C
    computes them on x86 and on the Cortex-M4 in QEMU."""
    l2, features = small_face_l2_8bit_image()
    streamed = l2.clone()
    report = stream_rows(streamed, every=True)
    streams = [r for r in report if r.startswith("streamed: ")]
    assert all(r.startswith(("streamed: ", "duplicated: ")) for r in report), report
    assert len(streams) > 2 and any(r.startswith("duplicated: ") for r in report), report
    streamed.verify()
    loops = [op for op in main_function(streamed).body.block.ops
             if isinstance(op, minun.LoopOp) and "stream_rows" in op.attributes]
    assert len(loops) == len(streams)
    # the evaluator's integers, streamed and whole (the program returns its scores: the
    # evaluation `expected` makes is the program's outputs, each evaluated once per process)
    exp = expected_once(streamed, features)
    np.testing.assert_array_equal(exp.scores, expected_once(l2, features).scores)
    for target in ("x86", "cortex-m4"):
        emit_c(streamed, target, tmp_path / target, input_in_scratch=True,
               output_in_scratch=True)
        r = run_model(tmp_path / target, target, exp.inputs, name="stream", config="face")
        np.testing.assert_array_equal(np.asarray(r.outputs).reshape(exp.scores.shape),
                                      exp.scores, err_msg=target)


def test_rnnpool_output_written_over_the_image_it_consumes(tmp_path):
    """RNNPool's patch-row loop at test size streamed into MBConv0 alone (its image read
    through the strided convolution, not streamed): MBConv0's output is planned over the
    image's rows the sweep has consumed (the pair shares bytes while both live, and the
    plan is smaller than with the two apart), and the C with the image in the scratch
    computes the evaluator's integers on x86."""
    from minun_mlir.passes.stream_rows import chains, stream_chain

    l2, features = small_face_l2_8bit_image()
    streamed = l2.clone()
    block = main_function(streamed).body.block
    stages = next(st for st, _ in chains(block) if st[0].kind == "producer")
    loop = stream_chain(stages)
    assert " over the input at " in loop.attributes["stream_rows"].data
    streamed.verify()
    kept = streamed.clone()
    next(op for op in main_function(kept).body.walk() if isinstance(op, minun.InitOp)
         and "stream_rows_over" in op.attributes).attributes.pop("stream_rows_over")
    plans = [memory_map(lower_l2(m, stop="memory-plan", input_in_scratch=True))
             for m in (streamed, kept)]
    assert plans[0].scratch < plans[1].scratch
    image = next(p for p in plans[0].pieces if p.name == "input")
    assert any(p.offset < image.offset + image.size and image.offset < p.offset + p.size
               and p.first <= image.last and image.first <= p.last
               for p in plans[0].pieces if p is not image)
    exp = expected_once(streamed, features)
    np.testing.assert_array_equal(exp.scores, expected_once(l2, features).scores)
    emit_c(streamed, "x86", tmp_path / "x86", input_in_scratch=True)
    r = run_model(tmp_path / "x86", "x86", exp.inputs, name="stream", config="face")
    np.testing.assert_array_equal(np.asarray(r.outputs).reshape(exp.scores.shape),
                                  exp.scores)


def test_face_4_streamed_from_rnnpool_through_mbconv0():
    """The planner alone: at 320x240 the pass streams RNNPool's loop (30 patch rows of
    40x64) with its fix-ups into MBConv0 (rings of a few rows replace the 153,600-byte
    RNNPool output) with MBConv0's output written over the image rows already consumed;
    the normalised maps the detection heads read are computed once per head (the
    recomputation reported) so that each head streams with its own ring; the residual
    block MBConv1 streams with its output written over its input. With the 8-bit image
    and the scores in the scratch, the plan shrinks by more than a 76,800-byte map."""
    l2 = full_face_l2_synthetic()  # load_model(FACE, synthetic=0), lower_to_l2(...): shared
    streamed = l2.clone()
    report = stream_rows(streamed)
    streams = [r for r in report if r.startswith("streamed: ")]
    assert "feature maps replaced 153600 B" in streams[0], report
    assert "over the input at" in streams[0], report
    assert any(" over map " in r for r in streams[1:]), report
    duplicated = [r for r in report if r.startswith("duplicated: ")]
    assert duplicated and all("recomputation " in r for r in duplicated), report
    plan = {}
    for name, m in (("whole", l2), ("streamed", streamed)):
        plan[name] = memory_map(lower_l2(m, stop="memory-plan", input_in_scratch=True,
                                         output_in_scratch=True))
    assert 153_600 in {p.size for p in plan["whole"].pieces}
    assert 153_600 not in {p.size for p in plan["streamed"].pieces}
    assert plan["streamed"].scratch < plan["whole"].scratch - 76_800
    # overlaid bytes counted once: no plan beats the lower bound, this one neither
    assert plan["streamed"].lower_bound <= plan["streamed"].scratch


@pytest.mark.slow  # profiling 8 QVGA images, then 1.4e9 instructions in QEMU: about a minute
def test_face_4_streamed_runs_in_half_of_the_256_kb_board(tmp_path):
    """The trained face-4 at fixed16 streamed (its 8-bit image and 18,000 scores in the
    scratch), built for the real 256 KB cortex-m4 and run in QEMU on two images: every
    score equals the evaluator's, static RAM plus the stack's high-water mark fit in half
    of the board (issue 33), and the heads' recomputation is a small share of the
    convolutions' work."""
    from minun_bench.face import BOARD_RAM, TRAINED
    from minun_mlir.passes.stream_rows import conv_macs, recomputation

    result, run = full_face_on_the_m4(tmp_path, 2, weights=TRAINED, stream_rows=True)
    assert run.ram_bytes + run.stack_bytes <= BOARD_RAM // 2
    macs, _ = recomputation(stream_rows(result.l2.clone()))
    assert 0 < macs < conv_macs(result.l2) // 100
