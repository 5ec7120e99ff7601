"""Op by op: small hand-written L2 programs with the ops and corner cases the example
models do not reach (concat, general reshapes and transposes of computed values, reverse,
neg, max/min, clip and relu6, normaliseL2, grouped convolution, strided and padded pooling,
exp at both bitwidths, saturation), compiled for x86 and run on random inputs: the C
computes the evaluator's integers. The convolution and matmul skeleton in every format
(zero-skew, posit with and without a quire, bfloat16): padded, strided, grouped and
depthwise convolutions whose window is clipped to the input over the transposed filter,
and a matmul whose constant operand is stored transposed."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_support import build_host, expected, run_host

from minun_mlir.codegen import emit_c
from minun_mlir.formats.fixed.arith import SeeDotExp
from minun_mlir.ir_text import parse_ir


def fx(bits: int, scale: int) -> str:
    return f"!num.fixed<{bits}, {scale}>"


def dense(shape: tuple[int, ...], seed: int, bits: int = 16) -> str:
    rng = np.random.default_rng(seed)
    hi = 1 << (bits - 1)
    return str(rng.integers(-hi, hi, size=shape).tolist())


F16 = fx(16, 12)
W32 = fx(32, 12)
PROGRAMS = {
    "concat-reverse-neg": f"""
func.func @main() -> tensor<2x6x{F16}> attributes {{num.rounding = "trunc"}} {{
  %x = num.input "X" : tensor<2x3x{F16}>
  %n = num.neg %x : tensor<2x3x{F16}>
  %r = minun.reverse %n {{axis = 1 : i64}} : (tensor<2x3x{F16}>) -> tensor<2x3x{F16}>
  %c = minun.concat %x, %r {{axis = 1 : i64}} : (tensor<2x3x{F16}>, tensor<2x3x{F16}>) -> tensor<2x6x{F16}>
  func.return %c : tensor<2x6x{F16}>
}}""",
    "transpose-reshape-of-computed": f"""
func.func @main() -> tensor<6x2x{F16}> attributes {{num.rounding = "nearest"}} {{
  %x = num.input "X" : tensor<2x3x2x{F16}>
  %s = num.add %x, %x : (tensor<2x3x2x{F16}>, tensor<2x3x2x{F16}>) -> tensor<2x3x2x{W32}>
  %q = num.rescale %s {{rounding = #num<rounding nearest>, overflow = #num<overflow saturate>}} : tensor<2x3x2x{W32}> -> tensor<2x3x2x{F16}>
  %t = minun.transpose %q {{perm = array<i64: 2, 0, 1>}} : (tensor<2x3x2x{F16}>) -> tensor<2x2x3x{F16}>
  %r = minun.reshape %t {{order = array<i64: 1, 0, 2>}} : tensor<2x2x3x{F16}> -> tensor<6x2x{F16}>
  func.return %r : tensor<6x2x{F16}>
}}""",
    "max-min-clip-relu6": f"""
func.func @main() -> tensor<8x{F16}> attributes {{num.rounding = "floor"}} {{
  %x = num.input "X" : tensor<8x{F16}>
  %w = num.param "W" dense<[100, -4000, 30000, -32768, 5, 0, -1, 7000]> : tensor<8xi16> -> tensor<8x{F16}>
  %m = num.max %x, %w : (tensor<8x{F16}>, tensor<8x{F16}>) -> tensor<8x{F16}>
  %n = num.min %m, %x : (tensor<8x{F16}>, tensor<8x{F16}>) -> tensor<8x{F16}>
  %c = num.clip %n {{lo = -1.5 : f64, hi = 2.25 : f64}} : tensor<8x{F16}>
  %r = num.relu6 %c : tensor<8x{F16}>
  %s = num.add %c, %r : (tensor<8x{F16}>, tensor<8x{F16}>) -> tensor<8x{F16}>
  func.return %s : tensor<8x{F16}>
}}""",
    "normalise-l2-grouped-conv-pool": f"""
func.func @main() -> i32 attributes {{num.rounding = "trunc"}} {{
  %x = num.input "X" : tensor<1x5x5x4x{fx(16, 13)}>
  %n = num.normalise_l2 %x : tensor<1x5x5x4x{fx(16, 13)}> -> tensor<1x5x5x4x{fx(16, 14)}>
  %f = num.param "F" dense<{dense((2, 2, 2, 2, 2), 1)}> : tensor<2x2x2x2x2xi16> -> tensor<2x2x2x2x2x{fx(16, 14)}>
  %c = num.conv2d %n, %f {{strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 0, 1>, dilations = array<i64: 1, 2>, groups = 2 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64}} : (tensor<1x5x5x4x{fx(16, 14)}>, tensor<2x2x2x2x2x{fx(16, 14)}>) -> tensor<1x3x4x4x{fx(32, 28)}>
  %r = num.rescale %c {{rounding = #num<rounding trunc>, overflow = #num<overflow wrap>}} : tensor<1x3x4x4x{fx(32, 28)}> -> tensor<1x3x4x4x{fx(16, 13)}>
  %p = num.maxpool %r {{kernel = array<i64: 2, 3>, strides = array<i64: 1, 2>, pads = array<i64: 1, 1, 1, 1>}} : (tensor<1x3x4x4x{fx(16, 13)}>) -> tensor<1x4x2x4x{fx(16, 13)}>
  %a = num.argmax %p : tensor<1x4x2x4x{fx(16, 13)}>
  func.return %a : i32
}}""",
    "exp-sigmoid-tanh-8bit": f"""
func.func @main() -> tensor<6x{fx(8, 6)}> attributes {{num.rounding = "trunc"}} {{
  %x = num.input "X" : tensor<6x{fx(8, 4)}>
  %e = num.exp %x {{method = #num<exp_method shiftry>}} : tensor<6x{fx(8, 4)}> -> tensor<6x{fx(8, 6)}>
  %s = num.sigmoid %x : tensor<6x{fx(8, 4)}> -> tensor<6x{fx(8, 6)}>
  %t = num.tanh %x : tensor<6x{fx(8, 4)}> -> tensor<6x{fx(8, 6)}>
  %a = num.sub %e, %s : (tensor<6x{fx(8, 6)}>, tensor<6x{fx(8, 6)}>) -> tensor<6x{fx(8, 6)}>
  %b = num.add %a, %t : (tensor<6x{fx(8, 6)}>, tensor<6x{fx(8, 6)}>) -> tensor<6x{fx(8, 6)}>
  func.return %b : tensor<6x{fx(8, 6)}>
}}""",
    "exp-16bit-nearest-sgn": f"""
func.func @main() -> i32 attributes {{num.rounding = "nearest"}} {{
  %x = num.input "X" : tensor<4x{fx(16, 11)}>
  %e = num.exp %x {{method = #num<exp_method shiftry>}} : tensor<4x{fx(16, 11)}> -> tensor<4x{fx(16, 14)}>
  %t = num.tanh %x : tensor<4x{fx(16, 11)}> -> tensor<4x{fx(16, 14)}>
  %m = num.mul %e, %t : (tensor<4x{fx(16, 14)}>, tensor<4x{fx(16, 14)}>) -> tensor<4x{fx(16, 28)}>
  %i = arith.constant 2 : i32
  %one = minun.index %m[%i] : tensor<4x{fx(16, 28)}> -> tensor<{fx(16, 28)}>
  %s = num.sgn %one : tensor<{fx(16, 28)}>
  func.return %s : i32
}}""",
    "wrapping-8bit-products": f"""
func.func @main() -> tensor<2x2x{fx(8, 3)}> attributes {{num.rounding = "floor"}} {{
  %x = num.input "X" : tensor<2x3x{fx(8, 2)}>
  %w = num.param "W" dense<[[127, -128], [-100, 99], [64, 3]]> : tensor<3x2xi8> -> tensor<3x2x{fx(8, 1)}>
  %y = num.matmul %x, %w {{rounding = #num<rounding floor>, halvings = 3 : i64}} : (tensor<2x3x{fx(8, 2)}>, tensor<3x2x{fx(8, 1)}>) -> tensor<2x2x{fx(8, 0)}>
  %z = num.rescale %y {{rounding = #num<rounding floor>, overflow = #num<overflow saturate>}} : tensor<2x2x{fx(8, 0)}> -> tensor<2x2x{fx(8, 3)}>
  func.return %z : tensor<2x2x{fx(8, 3)}>
}}""",
    "treesum-grouped-conv": f"""
func.func @main() -> tensor<1x2x2x4x{fx(16, 20)}> attributes {{num.rounding = "nearest"}} {{
  %x = num.input "X" : tensor<1x3x3x4x{fx(16, 12)}>
  %f = num.param "F" dense<{dense((2, 2, 3, 2, 2), 2)}> : tensor<2x2x3x2x2xi16> -> tensor<2x2x3x2x2x{fx(16, 10)}>
  %c = num.conv2d %x, %f {{strides = array<i64: 2, 1>, pads = array<i64: 1, 1, 1, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64, rounding = #num<rounding nearest>, halvings = 2 : i64}} : (tensor<1x3x3x4x{fx(16, 12)}>, tensor<2x2x3x2x2x{fx(16, 10)}>) -> tensor<1x2x2x4x{fx(16, 20)}>
  func.return %c : tensor<1x2x2x4x{fx(16, 20)}>
}}""",
    "sparse-two-columns-shift": f"""
func.func @main() -> tensor<4x2x{fx(16, 20)}> attributes {{num.rounding = "trunc"}} {{
  %x = num.input "X" : tensor<6x2x{fx(16, 12)}>
  %a = num.param "A" sparse dense<[[0, 3000, 0, 0, -20000, 7], [0, 0, 0, 0, 0, 0], [-32768, 0, 5, 0, 0, 1], [0, 32767, 0, 0, 0, -9]]> : tensor<4x6xi16> -> tensor<4x6x{fx(16, 10)}>
  %y = num.sparse_matmul %a, %x {{rounding = #num<rounding trunc>, shift = 2 : i64}} : (tensor<4x6x{fx(16, 10)}>, tensor<6x2x{fx(16, 12)}>) -> tensor<4x2x{fx(16, 20)}>
  func.return %y : tensor<4x2x{fx(16, 20)}>
}}""",
    "seedot-exp-narrow-range": (lambda se: f"""
func.func @main() -> tensor<5x{fx(16, se.out_scale()[0])}> attributes {{num.rounding = "trunc"}} {{
  %x = num.input "X" : tensor<5x{fx(16, 10)}>
  %e = num.exp %x {{method = #num<exp_method seedot>, lo = -3000 : i64, hi = -20 : i64, maxscale = 4 : i64}} : tensor<5x{fx(16, 10)}> -> tensor<5x{fx(16, se.out_scale()[0])}>
  func.return %e : tensor<5x{fx(16, se.out_scale()[0])}>
}}""")(SeeDotExp(16, 10, -3000, -20, 4)),
    "seedot-exp-tiny-range": (lambda se: f"""
func.func @main() -> tensor<5x{fx(8, se.out_scale()[0])}> attributes {{num.rounding = "nearest"}} {{
  %x = num.input "X" : tensor<5x{fx(8, 4)}>
  %e = num.exp %x {{method = #num<exp_method seedot>, lo = -40 : i64, hi = 0 : i64, maxscale = 2 : i64}} : tensor<5x{fx(8, 4)}> -> tensor<5x{fx(8, se.out_scale()[0])}>
  func.return %e : tensor<5x{fx(8, se.out_scale()[0])}>
}}""")(SeeDotExp(8, 4, -40, 0, 2)),
}


def _float_text(x: float) -> str:
    return repr(float(x))


def skeleton_program(el_x: str, el_w: str, el_acc: str, attrs: str = "", store: str = "i8",
                     hi: int = 100) -> str:
    """A grouped conv (2 groups, 3x3, stride 2x1, asymmetric padding), a depthwise conv
    (3x2, padding on every side), the same dilated (2x1: the unclipped path, a test per
    tap) of its input and a matmul x W with a constant 4x3 W, every result returned (the
    scores): for one format's element types, the weights
random stored integers (`store`) in [-hi, hi)."""
    def w(shape: tuple[int, ...], seed: int) -> str:
        rng = np.random.default_rng(seed)
        return str(rng.integers(-hi, hi, size=shape).tolist())

    conv = "strides = array<i64: 2, 1>, pads = array<i64: 1, 2, 0, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64, rounding = #num<rounding nearest>, halvings = 0 : i64"
    dw = "strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 4 : i64, rounding = #num<rounding nearest>, halvings = 0 : i64"
    dil = dw.replace("dilations = array<i64: 1, 1>", "dilations = array<i64: 2, 1>")
    mm = "rounding = #num<rounding nearest>, halvings = 0 : i64"
    return f"""
func.func @main() -> tensor<315x{el_acc}> attributes {{num.rounding = "nearest"{attrs}}} {{
  %x = num.input "X" : tensor<1x5x5x4x{el_x}>
  %f = num.param "F" dense<{w((2, 3, 3, 2, 2), 3)}> : tensor<2x3x3x2x2x{store}> -> tensor<2x3x3x2x2x{el_w}>
  %c = num.conv2d %x, %f {{{conv}}} : (tensor<1x5x5x4x{el_x}>, tensor<2x3x3x2x2x{el_w}>) -> tensor<1x3x4x4x{el_acc}>
  %g = num.param "G" dense<{w((4, 3, 2, 1, 1), 4)}> : tensor<4x3x2x1x1x{store}> -> tensor<4x3x2x1x1x{el_w}>
  %d = num.conv2d %x, %g {{{dw}}} : (tensor<1x5x5x4x{el_x}>, tensor<4x3x2x1x1x{el_w}>) -> tensor<1x5x6x4x{el_acc}>
  %e = num.conv2d %x, %g {{{dil}}} : (tensor<1x5x5x4x{el_x}>, tensor<4x3x2x1x1x{el_w}>) -> tensor<1x3x6x4x{el_acc}>
  %e1 = minun.reshape %e {{order = array<i64: 0, 1, 2, 3>}} : tensor<1x3x6x4x{el_acc}> -> tensor<72x{el_acc}>
  %r = minun.reshape %x {{order = array<i64: 0, 1, 2, 3>}} : tensor<1x5x5x4x{el_x}> -> tensor<25x4x{el_x}>
  %m = num.param "M" dense<{w((4, 3), 5)}> : tensor<4x3x{store}> -> tensor<4x3x{el_w}>
  %y = num.matmul %r, %m {{{mm}}} : (tensor<25x4x{el_x}>, tensor<4x3x{el_w}>) -> tensor<25x3x{el_acc}>
  %c1 = minun.reshape %c {{order = array<i64: 0, 1, 2, 3>}} : tensor<1x3x4x4x{el_acc}> -> tensor<48x{el_acc}>
  %d1 = minun.reshape %d {{order = array<i64: 0, 1, 2, 3>}} : tensor<1x5x6x4x{el_acc}> -> tensor<120x{el_acc}>
  %y1 = minun.reshape %y {{order = array<i64: 0, 1>}} : tensor<25x3x{el_acc}> -> tensor<75x{el_acc}>
  %a = minun.concat %c1, %d1 {{axis = 0 : i64}} : (tensor<48x{el_acc}>, tensor<120x{el_acc}>) -> tensor<168x{el_acc}>
  %b = minun.concat %a, %y1 {{axis = 0 : i64}} : (tensor<168x{el_acc}>, tensor<75x{el_acc}>) -> tensor<243x{el_acc}>
  %o = minun.concat %b, %e1 {{axis = 0 : i64}} : (tensor<243x{el_acc}>, tensor<72x{el_acc}>) -> tensor<315x{el_acc}>
  func.return %o : tensor<315x{el_acc}>
}}"""


ZS_X, ZS_W = "!num.affine<8, 0.05, -3>", "!num.affine<8, 0.01, 0>"
P8 = "!num.posit<8, 2>"
PROGRAMS.update({
    "skeleton-zero-skew": skeleton_program(
        ZS_X, ZS_W, f"!num.affine<32, {_float_text(0.05 * 0.01)}, 0>"),
    "skeleton-posit-quire": skeleton_program(P8, P8, P8),
    "skeleton-posit-rounded": skeleton_program(P8, P8, P8, ", num.quire = false"),
    # keys around +-1.0 (0x3f80 = 16256) and below: normal values of both signs
    "skeleton-bfloat16": skeleton_program("bf16", "bf16", "bf16", store="i16", hi=16400),
})


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_op_equals_evaluator(name, tmp_path):
    l2 = parse_ir(PROGRAMS[name], name)
    l2.verify()
    inp = next(op for op in l2.walk() if op.name == "num.input")
    shape = tuple(inp.result.type.get_shape())
    rng = np.random.default_rng(7)
    x = rng.uniform(-9.0, 9.0, size=(64, *shape))
    x[:4] = [np.full(shape, v) for v in (0.0, 100.0, -100.0, 0.5)]  # saturating corners
    exp = expected(l2, x)
    emit_c(l2, "x86", tmp_path)
    exe = build_host(tmp_path, tmp_path / "host", cflags=("-O1", "-fsanitize=undefined",
                                                          "-fno-sanitize-recover=all"))
    labels, scores = run_host(exe, exp.inputs, exp.scores.dtype, exp.scores.shape[1])
    np.testing.assert_array_equal(scores, exp.scores)
    np.testing.assert_array_equal(labels, exp.labels)
