"""Convolutions over clipped windows and contiguous filter rows (issue 16: the window
clipped to the input instead of a test per product, the filter stored as [out channel]
[ky][kx][in channel], each window row one SMLAD dot product on the Cortex-M4, one asm
loop on the Uno, the portable loop on the M3): the C equals the evaluator on the Uno and
the M3/M4 at 16 and 8 bits, on shapes that exercise every path: odd channel counts (a
pair plus a last product), 1x1 kernels, stride 2, asymmetric padding, an input smaller
than the kernel (every window on the border), a depthwise convolution and a convolution
of a computed (materialized) input; and the M4's convolutions blocked over output
channels (minun_dot*_rows_mc_dsp: 4, 5, 8 and 10 channels, the last in groups of 8 and
2; int16 blocks of four and int8 blocks of two with the rest one by one; with and
without a fused max pool whose windows are clipped too)."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_support import expected

from minun_mlir.codegen import emit_c
from minun_mlir.frontends.seedot import load_program
from minun_mlir.ir_text import parse_ir
from minun_mlir.pipeline import lower_to_l2
from minun_mlir.targets import run_model

# name: (input h, w, c), filter (groups, kh, kw, cg, cout), strides, pads, relu first,
# max pool (kernel, stride, padding) after
CASES = {
    "odd-channels-3x3-pad1": ((5, 5, 3), (1, 3, 3, 3, 5), (1, 1), (1, 1, 1, 1), False),
    "1x1-stride2": ((7, 6, 3), (1, 1, 1, 3, 4), (2, 2), (0, 0, 0, 0), False),
    "stride2-asymmetric-pads": ((5, 7, 5), (1, 3, 3, 5, 3), (2, 2), (1, 0, 2, 1), False),
    "border-only": ((2, 2, 3), (1, 3, 3, 3, 2), (1, 1), (1, 1, 1, 1), False),
    "depthwise": ((5, 5, 4), (4, 3, 3, 1, 1), (1, 1), (1, 1, 1, 1), False),
    "computed-input-5x5": ((6, 6, 1), (1, 5, 5, 1, 3), (1, 1), (2, 2, 2, 2), True),
    "pooled-10-channels": ((6, 7, 2), (1, 3, 3, 2, 10), (1, 1), (1, 1, 1, 1), False, (2, 2, 0)),
    "pooled-padded-5x5": ((7, 7, 1), (1, 5, 5, 1, 8), (1, 1), (2, 2, 2, 2), False, (3, 2, 1)),
}


def program(case) -> str:
    (h, w, c), f, (sh, sw), (pt, pb, pl, pr), relu, *pool = CASES[case]
    a = "relu(A)" if relu else "A"
    conv = (f"conv2d({a}, F, {{s {sh} {sw}}}, {{p {pt} {pb} {pl} {pr}}}, {{d 1 1}}, "
            f"{{g {f[0]}}})")
    if pool:
        k, s, p = pool[0]
        conv = f"maxpool({conv}, {{k {k} {k}}}, {{p {p} {p} {p} {p}}}, {{s {s} {s}}})"
    return (f"let X = ({h * w * c}, 1) in [-1.0, 1.0] in\n"
            f"let F = {f} in [-1.0, 1.0] in\n"
            f"let A = reshape(X, (1, {h}, {w}, {c}), (1, 2)) in\n"
            f"{conv}\n")


@pytest.mark.parametrize("bits", [16, 8])
@pytest.mark.parametrize("case", sorted(CASES))
def test_clipped_convolution_equals_the_evaluator_on_the_boards(case, bits, tmp_path):
    (h, w, c), f, *_ = CASES[case]
    rng = np.random.default_rng(len(case) * bits)
    (tmp_path / "conv.sd").write_text(program(case))
    np.savez(tmp_path / "w.npz", F=rng.uniform(-1, 1, f))
    l2 = lower_to_l2(load_program(tmp_path / "conv.sd", tmp_path / "w.npz"), bits=bits)
    exp = expected(l2, rng.uniform(-1, 1, (4, h * w * c)))
    for target in ("avr", "cortex-m3", "cortex-m4"):
        out = tmp_path / target
        emit_c(l2, target, out)
        if target == "cortex-m4" and f[4] >= 4 and f[0] == 1:  # blocked over channels
            assert "_rows_mc_dsp(&" in (out / "model.c").read_text()
        r = run_model(out, target, exp.inputs, name=case)
        np.testing.assert_array_equal(r.outputs, exp.scores, err_msg=target)
        np.testing.assert_array_equal(r.labels, exp.labels, err_msg=target)


def halved_module(h: int, w: int, c: int, mid: int, cout: int, shifts=(1, 1, 1),
                  seed: int = 0) -> str:
    """An L2 program whose convolutions read inputs divided by 2^s toward zero inside
    their dot loops (a truncating rescale s bits down, left lazy): the model's input
    shifted by shifts[0] into a 1x1 convolution (c -> mid channels), whose output (read
    twice, so buffered) is shifted again by shifts[1] and shifts[2] into two 3x3
    convolutions with padding (mid -> cout), summed (face-4's first MBConv and its
    detection heads have this shape)."""
    s0, s1, s2 = shifts
    rng = np.random.default_rng(seed)
    g = rng.integers(-9000, 9000, (1, 1, 1, c, mid)).tolist()
    f1 = rng.integers(-9000, 9000, (1, 3, 3, mid, cout)).tolist()
    f2 = rng.integers(-9000, 9000, (1, 3, 3, mid, cout)).tolist()
    tr = "rounding = #num<rounding trunc>"
    rs = f"{{{tr}, overflow = #num<overflow wrap>}}"
    conv = "strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64"

    def t(shape, s, bits=16):
        return f"tensor<{'x'.join(map(str, shape))}x!num.fixed<{bits}, {s}>>"

    X, M, O = (1, h, w, c), (1, h, w, mid), (1, h, w, cout)
    lines = [
        'func.func @main() -> i32 attributes {num.rounding = "trunc", num.overflow = "wrap"} {',
        f'  %x = num.input "X" : {t(X, 14)}',
        f"  %h = num.rescale %x {rs} : {t(X, 14)} -> {t(X, 14 - s0)}",
        f'  %g = num.param "G" dense<{g}> : tensor<1x1x1x{c}x{mid}xi16> -> '
        f"tensor<1x1x1x{c}x{mid}x!num.fixed<16, 14>>",
        f"  %d = num.conv2d %h, %g {{{conv}, pads = array<i64: 0, 0, 0, 0>, {tr}, "
        f"halvings = 0 : i64}} : ({t(X, 14 - s0)}, tensor<1x1x1x{c}x{mid}x!num.fixed<16, 14>>) "
        f"-> {t(M, 28 - s0, 32)}",
        f"  %e = num.rescale %d {rs} : {t(M, 28 - s0, 32)} -> {t(M, 13)}",
    ]
    outs = []
    for k, (f, sk) in enumerate(((f1, s1), (f2, s2))):
        ft = f"tensor<1x3x3x{mid}x{cout}x!num.fixed<16, 14>>"
        lines += [
            f"  %k{k} = num.rescale %e {rs} : {t(M, 13)} -> {t(M, 13 - sk)}",
            f'  %f{k} = num.param "F{k}" dense<{f}> : tensor<1x3x3x{mid}x{cout}xi16> -> {ft}',
            f"  %c{k} = num.conv2d %k{k}, %f{k} {{{conv}, pads = array<i64: 1, 1, 1, 1>, "
            f"{tr}, halvings = 0 : i64}} : ({t(M, 13 - sk)}, {ft}) -> {t(O, 27 - sk, 32)}",
            f"  %r{k} = num.rescale %c{k} {rs} : {t(O, 27 - sk, 32)} -> {t(O, 9)}",
        ]
        outs.append(f"%r{k}")
    n = h * w * cout
    lines += [
        f"  %s = num.add %r0, %r1 : ({t(O, 9)}, {t(O, 9)}) -> {t(O, 9)}",
        f"  %v = minun.reshape %s {{order = array<i64: 0, 1, 2, 3>}} : {t(O, 9)} -> "
        f"tensor<1x{n}x!num.fixed<16, 9>>",
        f"  %a = num.argmax %v : tensor<1x{n}x!num.fixed<16, 9>>",
        "  func.return %a : i32",
        "}",
    ]
    return "\n".join(lines) + "\n"



# (h, w, c, mid, cout, shifts): the 1x1's rows of 7 (a step of four, a pair, a product)
# and 8, the 3x3's window rows of 3 channels (a pair and a product; 6 or 9 in the
# interior) and of 4 (steps of four only); inputs halved, and divided by 4 and 8
HALVED = {"odd": (3, 4, 7, 3, 4, (1, 1, 1)), "even": (4, 3, 8, 4, 5, (2, 3, 1)),
          "odd-shifts": (3, 3, 5, 3, 4, (3, 2, 3))}


@pytest.mark.parametrize("case", sorted(HALVED))
def test_halved_inputs_equal_the_evaluator_on_the_boards(case, tmp_path):
    """The M4 runs the shifted dot loops as minun_dot16_shr{s}_rows_dsp (SHADD16 halving
    two inputs at once, s times, then SMLAD); the M3 (no DSP: the #else) and the Uno run the loops. Inputs
    across the whole range, so that odd negative inputs (where halving toward zero and
    an arithmetic shift differ) are many."""
    h, w, c, mid, cout, shifts = HALVED[case]
    l2 = parse_ir(halved_module(h, w, c, mid, cout, shifts, seed=len(case)))
    rng = np.random.default_rng(len(case))
    exp = expected(l2, rng.uniform(-2, 2, (6, h * w * c)))
    for target in ("avr", "cortex-m3", "cortex-m4"):
        out = tmp_path / target
        emit_c(l2, target, out)
        text = (out / "model.c").read_text()
        # one C for the Cortex-M cores: the kernels under __ARM_FEATURE_DSP (the M4's)
        for s in sorted(set(shifts)):
            kernel = f"minun_dot16_shr{s}_rows_dsp("
            assert (kernel in text) == target.startswith("cortex"), (target, s)
        r = run_model(out, target, exp.inputs, name=case)
        np.testing.assert_array_equal(r.outputs, exp.scores, err_msg=target)
        np.testing.assert_array_equal(r.labels, exp.labels, err_msg=target)


def test_halved_matmul_equals_the_evaluator_on_the_boards(tmp_path):
    """A dense layer over the model's input halved toward zero (11 inputs: two steps of
    four, a pair and a product): minun_dot16_shr1_dsp a row on the M4."""
    rng = np.random.default_rng(3)
    w = rng.integers(-9000, 9000, (11, 3)).tolist()
    x, h = "tensor<1x11x!num.fixed<16, 14>>", "tensor<1x11x!num.fixed<16, 13>>"
    y, o = "tensor<1x3x!num.fixed<32, 27>>", "tensor<1x3x!num.fixed<16, 13>>"
    rs = "{rounding = #num<rounding trunc>, overflow = #num<overflow wrap>}"
    l2 = parse_ir(
        'func.func @main() -> i32 attributes {num.rounding = "trunc", num.overflow = "wrap"} {\n'
        f'  %x = num.input "X" : {x}\n'
        f"  %h = num.rescale %x {rs} : {x} -> {h}\n"
        f'  %w = num.param "W" dense<{w}> : tensor<11x3xi16> -> '
        "tensor<11x3x!num.fixed<16, 14>>\n"
        "  %y = num.matmul %h, %w {rounding = #num<rounding trunc>, halvings = 0 : i64} : "
        f"({h}, tensor<11x3x!num.fixed<16, 14>>) -> {y}\n"
        f"  %s = num.rescale %y {rs} : {y} -> {o}\n"
        f"  %a = num.argmax %s : {o}\n"
        "  func.return %a : i32\n}\n")
    exp = expected(l2, rng.uniform(-2, 2, (6, 11)))
    for target in ("avr", "cortex-m3", "cortex-m4"):
        out = tmp_path / target
        emit_c(l2, target, out)
        text = (out / "model.c").read_text()
        assert ("minun_dot16_shr1_dsp(" in text) == target.startswith("cortex"), target
        r = run_model(out, target, exp.inputs, name="halved-matmul")
        np.testing.assert_array_equal(r.outputs, exp.scores, err_msg=target)
        np.testing.assert_array_equal(r.labels, exp.labels, err_msg=target)
