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
