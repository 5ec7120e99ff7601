"""How lower-to-loops saves memory on MBConv-style programs, on small SeeDot programs
compiled for x86 (the C computes the evaluator's integers) with the scratch they need:

- row windows (lowering/loops/values.py `Rows`): a depthwise convolution over an
  expensive lazy producer (MBConv's expand 1x1 convolution, scale, bias, relu6) keeps only
  the rows its window needs, and the project 1x1 convolution reads the depthwise output
  one pixel at a time (strides 1 and 2, pads 0 and 1, dilation, residual adds, consumers
  that are not row by row);
- in place: an element-wise op (a rescale, a per-channel 1x1 convolution) whose input
  buffer is dead afterwards writes into that buffer, and a splice_assign whose value reads
  its own destination updates the destination instead of copying it."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from codegen_support import build_host, expected, run_host

from minun_mlir.codegen import emit_c
from minun_mlir.frontends.seedot import compile_with_weights
from minun_mlir.frontends.seedot.weights import Weights
from minun_mlir.memory_map import memory_map
from minun_mlir.pipeline import lower_l2, lower_to_l2

DECL = re.compile(r"let (\w+) = \(([\d, ]+)\) in \[")


def mbconv(h: int, w: int, c: int, t: int, co: int, s: int, p: int, residual: bool) -> str:
    return f"""
let F1 = (1, 1, 1, {c}, {t}) in [-1.0, 1.0] in
let F2 = ({t}, 3, 3, 1, 1) in [-1.0, 1.0] in
let F3 = (1, 1, 1, {t}, {co}) in [-1.0, 1.0] in
let W1 = ({t}) in [-1.0, 1.0] in
let B1 = ({t}) in [-1.0, 1.0] in
let W2 = ({t}) in [-1.0, 1.0] in
let B2 = ({t}) in [-1.0, 1.0] in
let W3 = ({co}) in [-1.0, 1.0] in
let B3 = ({co}) in [-1.0, 1.0] in
let X = (1, {h}, {w}, {c}) in [-2.0, 2.0] in
let M = mbconv(X, [F1, W1, B1], [F2, W2, B2], [F3, W3, B3], {{s {s} {s}}}, {{p {p} {p} {p} {p}}}) in
{"X + M" if residual else "M"}
"""


# A depthwise convolution (dilated: a window of 5 rows) over relu6 of a 1x1 convolution,
# read by a max pool (not row by row: the depthwise output is stored row by row).
DEPTHWISE_POOL = """
let F1 = (1, 1, 1, 3, 6) in [-1.0, 1.0] in
let F2 = (6, 3, 3, 1, 1) in [-1.0, 1.0] in
let X = (1, 9, 7, 3) in [-2.0, 2.0] in
let Y = relu6(conv2d(X, F1, {s 1 1}, {p 0 0 0 0}, {d 1 1}, {g 1})) in
let Z = conv2d(Y, F2, {s 1 1}, {p 2 1 1 1}, {d 2 1}, {g 6}) in
maxpool(Z, {k 2 2}, {p 0 0 0 0}, {s 2 2})
"""

# Two MBConv blocks in a row, the first one's output used twice (residual and next block).
TWO_BLOCKS = mbconv(6, 6, 4, 8, 4, 1, 1, False).replace("\nM\n", "") + """
let G1 = (1, 1, 1, 4, 12) in [-1.0, 1.0] in
let G2 = (12, 3, 3, 1, 1) in [-1.0, 1.0] in
let G3 = (1, 1, 1, 12, 4) in [-1.0, 1.0] in
let V1 = (12) in [-1.0, 1.0] in
let C1 = (12) in [-1.0, 1.0] in
let V2 = (12) in [-1.0, 1.0] in
let C2 = (12) in [-1.0, 1.0] in
let V3 = (4) in [-1.0, 1.0] in
let C3 = (4) in [-1.0, 1.0] in
M + mbconv(M, [G1, V1, C1], [G2, V2, C2], [G3, V3, C3], {s 1 1}, {p 1 1 1 1})
"""


def compile_l2(src: str, tmp_path, config: dict):
    rng = np.random.default_rng(3)
    arrays = {m.group(1): rng.uniform(-1, 1, size=tuple(int(x) for x in m.group(2).split(",")))
              .astype(np.float32) for m in DECL.finditer(src) if m.group(1) != "X"}
    l1 = compile_with_weights(src, "t.sd", Weights(arrays))
    shape = next(tuple(int(x) for x in m.group(2).split(",")) for m in DECL.finditer(src)
                 if m.group(1) == "X")
    n = int(np.prod(shape))
    train = tmp_path / "train.npy"
    np.save(train, np.concatenate([np.zeros((16, 1)), rng.uniform(-2, 2, (16, n))], 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lower_to_l2(l1, data=str(train), **config), n


def assert_c_equals_evaluator(l2, n: int, tmp_path) -> None:
    x = np.random.default_rng(11).uniform(-2.5, 2.5, size=(24, n))
    exp = expected(l2, x)
    emit_c(l2, "x86", tmp_path)
    exe = build_host(tmp_path, tmp_path / "host", cflags=(
        "-O1", "-fsanitize=undefined,address", "-fno-sanitize-recover=all"))
    labels, scores = run_host(exe, exp.inputs, exp.scores.dtype, exp.scores.shape[1])
    np.testing.assert_array_equal(scores, exp.scores)
    np.testing.assert_array_equal(labels, exp.labels)


CONFIGS = {
    "fixed16": dict(bits=16),
    "fixed8": dict(bits=8),
    "maxscale16": dict(bits=16, scales="maxscale", maxscale=5),  # TreeSum in the window
}
# (h, w, c, expand t, out channels, stride, pad, residual)
BLOCKS = [(6, 8, 4, 8, 4, 1, 1, False), (6, 8, 4, 8, 4, 1, 1, True),
          (6, 8, 4, 8, 6, 2, 1, False), (7, 8, 4, 8, 4, 2, 0, False),
          (6, 8, 4, 8, 4, 1, 0, False), (7, 5, 3, 6, 2, 2, 1, False)]


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: "x".join(map(str, b)))
def test_mbconv_rows_equal_evaluator(block, config, tmp_path):
    h, w, c, t, co, s, p, residual = block
    l2, n = compile_l2(mbconv(*block), tmp_path, CONFIGS[config])
    assert_c_equals_evaluator(l2, n, tmp_path)
    # the scratch: 3 rows of the expanded tensor and one pixel of the depthwise output
    # (the result is written to `out`), instead of two whole H x W x t tensors; SeeDot's
    # TreeSum adds the terms of one sum (at most max(c, 9, t) of them)
    el = CONFIGS[config]["bits"] // 8
    scratch = memory_map(lower_l2(l2, stop="memory-plan")).scratch
    rows = el * (3 * w * t + t)
    if config.startswith("maxscale"):
        assert rows <= scratch <= rows + el * max(c, 9, t)
    else:
        assert scratch == rows


# Two MBConv blocks chained without a residual: the first block's output is read one pixel
# at a time by the second's expand convolution, so it is never stored either.
CHAINED = TWO_BLOCKS.replace("M + mbconv(M,", "mbconv(M,")


@pytest.mark.parametrize("src", ["depthwise-pool", "two-blocks", "chained"])
def test_row_windows_equal_evaluator(src, tmp_path):
    program = {"depthwise-pool": DEPTHWISE_POOL, "two-blocks": TWO_BLOCKS,
               "chained": CHAINED}[src]
    l2, n = compile_l2(program, tmp_path, CONFIGS["fixed16"])
    assert_c_equals_evaluator(l2, n, tmp_path)
    scratch = memory_map(lower_l2(l2, stop="memory-plan")).scratch
    if src == "depthwise-pool":
        # a window of 5 rows of Y (9 x 7 x 6) and the whole Z (8 x 7 x 6), not Y
        assert scratch == 2 * (5 * 7 * 6 + 8 * 7 * 6)
    elif src == "chained":
        # both blocks' rows at once: 3 of 6 x 8 (first block) and 3 of 6 x 12 (second);
        # the first block's depthwise pixel (8) and M's pixel (4) are used while a row of
        # the second block's window is computed, its own pixel (12) after: they share
        assert scratch == 2 * (3 * 6 * 8 + 3 * 6 * 12 + max(8 + 4, 12))
    else:
        # M (6 x 6 x 4) lives through the second block with its 3 rows of 6 x 12
        # elements and one pixel of 12; the first block's rows and pixel are dead by then
        assert scratch == 2 * (6 * 6 * 4 + 3 * 6 * 12 + 12)


# normaliseL2 then a per-channel scale (a 1x1 convolution with one channel per group, as
# face-4's M0a): written over the normalised tensor; two 3x3 convolutions read it, spliced
# into A (lazily), whose last row is then overwritten with its row 2 (as face-4's
# rnnOutput), in place.
IN_PLACE = """
let X = (1, 4, 5, 6) in [-2.0, 2.0] in
let S = (6, 1, 1, 1, 1) in [-1.0, 1.0] in
let F = (1, 3, 3, 6, 2) in [-1.0, 1.0] in
let N = conv2d(normaliseL2(X), S, {s 1 1}, {p 0 0 0 0}, {d 1 1}, {g 6}) in
let C = conv2d(N, F, {s 1 1}, {p 1 1 1 1}, {d 1 1}, {g 1}) in
let D = conv2d(N, F, {s 1 1}, {p 1 1 1 1}, {d 1 1}, {g 1}) in
let A = init([1, 4, 5, 4], 0.0) in
let A[0:+1][0:+4][0:+5][0:+2] = C in
let A[0:+1][0:+4][0:+5][2:+2] = D in
let A[0:+1][3:+1][0:+5][0:+4] = A[0:+1][2:+1][0:+5][0:+4] in
A
"""


@pytest.mark.parametrize("config", ["fixed16", "fixed8"])
def test_in_place_equals_evaluator(config, tmp_path):
    l2, n = compile_l2(IN_PLACE, tmp_path, CONFIGS[config])
    assert_c_equals_evaluator(l2, n, tmp_path)
    # the normalised X (4 x 5 x 6, also N) and A (4 x 5 x 4); the last splice's value
    # (a row of A, 5 x 4) goes through a temporary once N is dead
    el = CONFIGS[config]["bits"] // 8
    assert memory_map(lower_l2(l2, stop="memory-plan")).scratch == el * (120 + 80)


def patches(step: int, n: int) -> str:
    """The first layer A (10 x 10 x 2) read in n x n overlapping 6x6 patches of channel 0
    at a step of `step` (as face-4's RNNPool patches of its first convolution)."""
    return f"""
let X = (1, 10, 10, 1) in [-2.0, 2.0] in
let F = (1, 3, 3, 1, 2) in [-1.0, 1.0] in
let W = (2, 36) in [-1.0, 1.0] in
let A = relu6(conv2d(X, F, {{s 1 1}}, {{p 1 1 1 1}}, {{d 1 1}}, {{g 1}})) in
let R = init([{n}, {n}, 2], 0.0) in
let acc = init([1, 1], 0.0) in
let d = loop(i = [0:{n}], acc) (
  let e = loop(j = [0:{n}], acc) (
    let P = reshape(A[0:+1][{step}*i:+6][{step}*j:+6][0:+1], (36, 1), (1, 2, 3, 4)) in
    let v = W |*| P in
    let R[i:+1][j:+1][0:+2] = reshape(v, (1, 1, 2), (1, 2)) in
    acc
  ) in
  acc
) in
R
"""


@pytest.mark.parametrize("step, n", [(2, 3), (1, 5)])
def test_first_layer_fused_into_patch_loop(step, n, tmp_path):
    l2, inputs = compile_l2(patches(step, n), tmp_path, CONFIGS["fixed16"])
    assert_c_equals_evaluator(l2, inputs, tmp_path)
    sizes = [p.size for p in memory_map(lower_l2(l2, stop="memory-plan")).pieces]
    # step 2: 9 patches of 36 elements read 324 <= 4 x 200 elements of A, so each patch
    # (72 bytes) is computed from X in the loop and A is never stored; step 1: 25 x 36 =
    # 900 > 800 reads, A (400 bytes) is stored once
    if step == 2:
        assert max(sizes) == 72
    else:
        assert max(sizes) == 400


# H (6 x 6, from A) is reshaped into R only at the end; B and C are computed in between.
HEAD_AT_THE_END = """
let X = (1, 6, 6, 4) in [-2.0, 2.0] in
let F = (1, 1, 1, 4, 8) in [-1.0, 1.0] in
let G = (1, 3, 3, 8, 1) in [-1.0, 1.0] in
let K = (1, 3, 3, 8, 2) in [-1.0, 1.0] in
let M = (1, 1, 1, 2, 32) in [-1.0, 1.0] in
let L = (1, 3, 3, 32, 4) in [-1.0, 1.0] in
let A = relu(conv2d(X, F, {s 1 1}, {p 0 0 0 0}, {d 1 1}, {g 1})) in
let H = conv2d(A, G, {s 1 1}, {p 1 1 1 1}, {d 1 1}, {g 1}) in
let B = relu(conv2d(A, K, {s 2 2}, {p 1 1 1 1}, {d 1 1}, {g 1})) in
let C = relu(conv2d(B, M, {s 1 1}, {p 0 0 0 0}, {d 1 1}, {g 1})) in
let D = conv2d(C, L, {s 1 1}, {p 1 1 1 1}, {d 1 1}, {g 1}) in
let R = init([1, 72], 0.0) in
let R[0:+1][0:+36] = reshape(H, (1, 36), (1, 2, 3, 4)) in
let R[0:+1][36:+36] = reshape(D, (1, 36), (1, 2, 3, 4)) in
R
"""


def test_head_stored_where_defined(tmp_path):
    l2, n = compile_l2(HEAD_AT_THE_END, tmp_path, CONFIGS["fixed16"])
    assert_c_equals_evaluator(l2, n, tmp_path)
    # H is stored when defined, so A (6x6x8) dies once B is computed; the most live is
    # then H (36 elements), C (3x3x32) and D (36, stored when defined too). Stored at the
    # reshape, H would keep A alive with C: at least 2 x (288 + 288) bytes.
    assert memory_map(lower_l2(l2, stop="memory-plan")).scratch == 2 * (36 + 288 + 36)
