"""The zero-skew int8 representation (formats/zero_skew/arith.py, formats/zero_skew/representation.py)
against independent references:

- gemmlowp's primitives against Python integers (unbounded, so the int32/int64 steps of
  the numpy code cannot hide an overflow) and QuantizeMultiplier against the real it
  encodes;
- whole L2 kernels, run by the bit-exact evaluator, against onnxruntime's int8 kernels on
  small graphs: QLinearMatMul, QLinearConv (with an int32 bias; also with per-channel
  weight scales, one-group and depthwise, against a 1-D w_scale), com.microsoft's
  QLinearAdd, QLinearMul and QLinearSigmoid. onnxruntime requantizes with a float32
  multiplier and rounds half to even, TFLite (and this representation) with a 31-bit
  fixed-point multiplier, gemmlowp's two roundings (half up, then half away from zero). So the test
  first checks both against the exact rational result, then requires them equal
  wherever the exact value is farther from a rounding tie than either side's error
  (computed per case), and within 1 everywhere; `deviations` reports how many elements
  fall in that band;
- calibration against the profile: the nudged range holds 0 exactly and covers the data;
- accuracy on the suite models against numpy's float program (driver's float evaluator).
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from gemmlowp_reference import mbqm as ref_mbqm
from gemmlowp_reference import rdbpot as ref_rdbpot
from gemmlowp_reference import srdhm as ref_srdhm
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from minun_mlir.dialects.num import AffineType, _float_text
from minun_mlir.formats.zero_skew import arith as af
from minun_mlir.ir_text import parse_ir
from minun_mlir.numerics.l2_eval import evaluate_l2

ROOT = Path(__file__).resolve().parents[3]
RNG = np.random.default_rng(13)
I32_MIN = -(1 << 31)


# -- gemmlowp's primitives against Python integers ----------------------------------------


def test_srdhm_and_rdbpot_match_python_integers():
    edges = [I32_MIN, I32_MIN + 1, -1, 0, 1, (1 << 30), (1 << 31) - 1, -(1 << 30)]
    xs = np.concatenate([edges, RNG.integers(I32_MIN, 1 << 31, 4000)])
    for b in [I32_MIN, (1 << 31) - 1, 1 << 30, 1518500250, 1, -7, *RNG.integers(
            1 << 30, 1 << 31, 5)]:
        got = af.srdhm(xs, int(b))
        assert got.tolist() == [ref_srdhm(int(x), int(b)) for x in xs]
    for e in (1, 2, 7, 20, 31):
        assert af.rdbpot(xs, e).tolist() == [ref_rdbpot(int(x), e) for x in xs]


@pytest.mark.parametrize("profile", ["x86", "avr"])
def test_c_mbqm_equals_python_integers(profile, tmp_path):
    """minun_zs_mbqm as each profile emits it (a 64-bit product on x86 and Cortex-M; on
    AVR, whose 64-bit arithmetic is library code, the product in 16 mul and one shift,
    here with minun_umul32's portable C), built by gcc in strict C99 with the undefined
    behaviour sanitizer, on int32 edges and every magnitude, multipliers at both ends of
    [2^30, 2^31) and beyond (0, 1, negative, INT32_MIN) and every shift."""
    import subprocess

    from minun_mlir.lowering.c_runtime import HELPERS, PROFILES, closure

    mags = np.floor(np.exp2(RNG.uniform(0, 31, 120))).astype(np.int64)
    xs = [I32_MIN, I32_MIN + 1, -1, 0, 1, 1 << 30, (1 << 31) - 1, -(1 << 30), 46341,
          *(mags * RNG.choice([-1, 1], 120)), *RNG.integers(I32_MIN, 1 << 31, 40)]
    ms = [1 << 30, (1 << 31) - 1, 1518500250, 0, 1, -7, I32_MIN, -(1 << 30),
          *RNG.integers(1 << 30, 1 << 31, 6)]
    shifts = [*range(-31, 31, 3), 0, 1, -1, 30, -31, -30, -2]
    cases = [(int(x), int(m), s) for m in ms for s in shifts for x in xs]
    lit = lambda v: "INT32_MIN" if v == I32_MIN else f"{v}L"  # noqa: E731
    src = tmp_path / "mbqm.c"
    src.write_text(
        "#include <stdint.h>\n#include <stdio.h>\n"
        + "".join(HELPERS[n][1](PROFILES[profile]) for n in closure(["minun_zs_mbqm"]))
        + "static const int32_t c[][3] = {" + ", ".join(
            f"{{{lit(x)}, {lit(m)}, {s}}}" for x, m, s in cases) + "};\n"
        "int main(void)\n{\n    unsigned i;\n"
        "    for (i = 0; i < sizeof c / sizeof c[0]; i++)\n"
        "        printf(\"%ld\\n\", (long)minun_zs_mbqm(c[i][0], c[i][1], c[i][2]));\n"
        "    return 0;\n}\n")
    exe = tmp_path / "mbqm"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2",
                    "-fsanitize=undefined", "-fno-sanitize-recover", str(src), "-o",
                    str(exe)], check=True)
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    want = [ref_mbqm(x, m, s) for x, m, s in cases]
    assert [int(v) for v in got.split()] == want


def test_srdhm_rounds_ties_toward_plus_infinity():
    """srdhm(a, 2^30) = a / 2 (2 a 2^30 / 2^32): by hand, 0.5 -> 1, -0.5 -> 0, 1.5 -> 2,
    -1.5 -> -1 (gemmlowp's nudge is 2^30 for a positive product, 1 - 2^30 for a negative
    one, then the division truncates)."""
    assert af.srdhm(np.array([1, -1, 3, -3, 4, -4]), 1 << 30).tolist() == [1, 0, 2, -1, 2, -2]


def test_rdbpot_is_round_half_away_from_zero():
    x = np.arange(-64, 65)
    exact = [Fraction(int(v), 8) for v in x]
    want = [math.floor(abs(f) + Fraction(1, 2)) * (1 if f >= 0 else -1) for f in exact]
    assert af.rdbpot(x, 3).tolist() == want


@pytest.mark.parametrize("real", [1e-9, 2.0**-31, 0.000123, 0.25, 0.5, 0.999999999, 1.0,
                                  1.5, 3.7e3])
def test_quantize_multiplier_encodes_the_real(real):
    m, shift = af.quantize_multiplier(real)
    assert (1 << 30) <= m < (1 << 31)
    assert abs(m * 2.0**(shift - 31) - real) <= real * 2.0**-31
    # multiplying by it is the real product rounded to nearest, except within 2^-(right+1)
    # of a tie: gemmlowp rounds twice (the high-word product to an integer, then the
    # division by 2^right), so 76422.25 = 305689 / 4 becomes 152845 / 2 -> 76423
    lim = min(1 << 20, int(2**30 / max(real, 1.0)))  # the product fits int32
    x = RNG.integers(-lim, lim, 2000)
    got = af.mbqm(x, m, shift)
    exact = x * real
    band = 2.0**-(max(-shift, 0) + 1) + 2.0**-20
    far = np.abs(np.abs(exact - np.trunc(exact)) - 0.5) > band
    assert np.all(np.abs(got - exact) <= 0.5 + band)
    assert np.array_equal(got[far], af.round_away(exact[far]).astype(np.int64))


@pytest.mark.parametrize("lo,hi", [(-3.583, 2.391), (0.0, 1.0), (0.2, 5.0), (-7.0, -0.5),
                                   (-1e-3, 4e3), (0.0, 0.0)])
def test_calibration_holds_zero_exactly_and_covers_the_range(lo, hi):
    scale, zp = af.choose_params(lo, hi)
    assert -128 <= zp <= 127 and scale > 0
    assert af.dequantize(zp, scale, zp) == 0.0
    rlo, rhi = af.dequantize(-128, scale, zp), af.dequantize(127, scale, zp)
    assert rlo <= min(lo, 0.0) + scale and rhi >= max(hi, 0.0) - scale
    if hi > lo:  # the whole int8 range used: 255 steps across the nudged range
        assert math.isclose(scale, (max(hi, 0.0) - min(lo, 0.0)) / 255)


def test_outward_rounding_keeps_12_bits_and_covers():
    for v in (3.583, -3.583, 2.0**-30 * 1.3, 1e6 / 7, -0.6293):
        r = af.outward(v)
        assert abs(r) >= abs(v) and abs(r - v) <= abs(v) * 2.0**-11
        m, _ = math.frexp(abs(r))
        assert math.ldexp(m, 12) == int(math.ldexp(m, 12))  # 12 significant bits
    assert af.outward(0.0) == 0.0 and af.outward(1.0) == 1.0


@pytest.mark.parametrize("model", ["fastgrnn-digits10", "protonn-digits10"])
def test_native_and_numpy_profiles_give_the_same_program(model):
    """The float C and numpy profile the same values up to a float's last bits; the
    outward rounding of the ends makes the zero-skew program the same."""
    from minun_mlir.driver import Options, compile_model

    d = ROOT / "benchmarks" / "models" / model
    l2s = [str(compile_model(d / "model.sd", Options(repr="zero-skew", bits=8,
                                                     evaluator=e), weights=d,
                             train=d / "train.npy").l2) for e in ("native", "numpy")]
    assert l2s[0] == l2s[1]


# -- kernels against onnxruntime ------------------------------------------------------------


def f32(x: float) -> float:
    """A float32 scale (what an ONNX graph stores), as a double."""
    return float(np.float32(x))


def affine_text(bits: int, scale: float, zp: int) -> str:
    return str(AffineType(bits, scale, zp)).removeprefix("!")


def tensor(shape, bits, scale, zp) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x!{affine_text(bits, scale, zp)}>"


def dense(q: np.ndarray, ty: str) -> str:
    return f"dense<{np.asarray(q).tolist()}> : {ty}"


def requantize_text(src: str, dst: str, src_ty: AffineType, dst_ty: AffineType, shape,
                    left: int = 0) -> str:
    m, s = af.quantize_multiplier(src_ty.real_scale / (dst_ty.real_scale * 2.0**left))
    return (f"  %{dst} = num.requantize %{src} {{multiplier = {m} : i64, shift = {s} : i64, "
            f"left_shift = {left} : i64}} : "
            f"{tensor(shape, src_ty.width, src_ty.real_scale, src_ty.zp)} -> "
            f"{tensor(shape, dst_ty.width, dst_ty.real_scale, dst_ty.zp)}\n")


def run_l2(text: str, inputs: dict[str, tuple[np.ndarray, float, int]]) -> np.ndarray:
    """Evaluate L2 text; inputs given as stored int8 values (fed as their exact reals)."""
    module = parse_ir(text)
    reals = {k: af.dequantize(q, s, z)[None] for k, (q, s, z) in inputs.items()}
    return evaluate_l2(module, reals).outputs[0][0]


def run_ort(nodes, inputs: dict[str, np.ndarray], inits: dict[str, np.ndarray],
            out_shape) -> np.ndarray:
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(k, TensorProto.INT8, v.shape) for k, v in
         inputs.items()],
        [helper.make_tensor_value_info("Y", TensorProto.INT8, out_shape)],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    return sess.run(["Y"], {k: v.astype(np.int8) for k, v in inputs.items()})[0]


def scalars(**kw) -> dict[str, np.ndarray]:
    return {k: (np.array(v, dtype=np.float32) if isinstance(v, float)
                else np.array(v, dtype=np.int8)) for k, v in kw.items()}


def compare(ours: np.ndarray, theirs: np.ndarray, exact: np.ndarray, band: float) -> int:
    """ours, onnxruntime's and the exact real result before rounding (in output units,
    zero point included, unclamped): both must round the exact value correctly outside
    `band` of a tie (each side's own error), agree there, and differ by at most 1 inside.
    Returns how many elements differ."""
    ours, theirs = ours.astype(np.int64).ravel(), theirs.astype(np.int64).ravel()
    exact = exact.ravel()
    far = np.abs(np.abs(exact - np.floor(exact)) - 0.5) > band
    want = np.clip(np.floor(exact + 0.5), -128, 127).astype(np.int64)
    assert np.array_equal(ours[far], want[far])
    assert np.array_equal(theirs[far], want[far])
    assert np.all(np.abs(ours - theirs) <= 1)
    return int(np.sum(ours != theirs))


def band_for(real_multiplier: float) -> float:
    """How far from a tie our rounding may err: gemmlowp's first rounding (in the
    SaturatingRoundingDoublingHighMul, 1/2 unit of 2^-right output units) and the 31-bit
    multiplier; plus onnxruntime's float32 product (|y| < 2^8, 2^-24 relative)."""
    _, shift = af.quantize_multiplier(real_multiplier)
    return 2.0**-(max(-shift, 0) + 1) + 2.0**-14


deviations: dict[str, int] = {}


@pytest.mark.parametrize("seed", range(4))
def test_matmul_equals_onnxruntime_qlinearmatmul(seed):
    rng = np.random.default_rng(seed)
    m, k, n = 6, int(rng.integers(3, 40)), 3
    sa, sb, sy = f32(rng.uniform(0.003, 0.02)), f32(rng.uniform(0.005, 0.05)), \
        f32(rng.uniform(0.05, 0.3))
    za, zb, zy = 0, int(rng.integers(-30, 30)), int(rng.integers(-20, 20))
    if seed % 2:  # an activation times an activation: both zero points nonzero
        za = int(rng.integers(-40, 40))
    a = rng.integers(-128, 128, (m, k))
    b = rng.integers(-128, 128, (k, n))
    acc_ty, out_ty = AffineType(32, sa * sb, 0), AffineType(8, sy, zy)
    text = (f"func.func @main() -> {tensor((m, n), 8, sy, zy)} {{\n"
            f"  %a = num.input \"A\" : {tensor((m, k), 8, sa, za)}\n"
            f"  %b = num.input \"B\" : {tensor((k, n), 8, sb, zb)}\n"
            f"  %acc = num.matmul %a, %b {{rounding = #num<rounding nearest>, halvings = 0 : "
            f"i64}} : ({tensor((m, k), 8, sa, za)}, {tensor((k, n), 8, sb, zb)}) -> "
            f"{tensor((m, n), 32, sa * sb, 0)}\n"
            + requantize_text("acc", "y", acc_ty, out_ty, (m, n))
            + "  func.return %y : " + tensor((m, n), 8, sy, zy) + "\n}\n")
    ours = run_l2(text, {"A": (a, sa, za), "B": (b, sb, zb)})
    node = helper.make_node("QLinearMatMul", ["A", "sa", "za", "B", "sb", "zb", "sy", "zy"],
                            ["Y"])
    theirs = run_ort([node], {"A": a, "B": b},
                     scalars(sa=sa, za=za, sb=sb, zb=zb, sy=sy, zy=zy), (m, n))
    acc = (a - za) @ (b - zb)  # exact integers
    exact = acc * (sa * sb / sy) + zy
    deviations[f"matmul{seed}"] = compare(ours, theirs, exact, band_for(sa * sb / sy))


@pytest.mark.parametrize("seed", range(3))
def test_conv2d_with_bias_equals_onnxruntime_qlinearconv(seed):
    rng = np.random.default_rng(100 + seed)
    h = w = 6
    c, cout, kh = 3, 4, 3
    pad = seed % 2
    sx, sw, sy = f32(0.02), f32(rng.uniform(0.002, 0.01)), f32(rng.uniform(0.02, 0.1))
    zx, zy = int(rng.integers(-50, 50)), int(rng.integers(-20, 20))
    x = rng.integers(-128, 128, (1, h, w, c))
    f = rng.integers(-127, 128, (1, kh, kh, c, cout))
    bias = rng.integers(-3000, 3000, (cout,))
    ho = h + 2 * pad - kh + 1
    acc_ty, out_ty = AffineType(32, sx * sw, 0), AffineType(8, sy, zy)
    res = (1, ho, ho, cout)
    acc_t = tensor(res, 32, sx * sw, 0)
    text = (f"func.func @main() -> {tensor(res, 8, sy, zy)} {{\n"
            f"  %x = num.input \"X\" : {tensor(x.shape, 8, sx, zx)}\n"
            f"  %f = num.param \"F\" {dense(f, 'tensor<1x3x3x3x4xi8>')} -> "
            f"{tensor(f.shape, 8, sw, 0)}\n"
            f"  %b = num.param \"B\" {dense(bias, 'tensor<4xi32>')} -> "
            f"{tensor((cout,), 32, sx * sw, 0)}\n"
            f"  %acc = num.conv2d %x, %f {{strides = array<i64: 1, 1>, pads = array<i64: "
            f"{pad}, {pad}, {pad}, {pad}>, dilations = array<i64: 1, 1>, groups = 1 : i64, "
            f"rounding = #num<rounding nearest>, halvings = 0 : i64}} : "
            f"({tensor(x.shape, 8, sx, zx)}, {tensor(f.shape, 8, sw, 0)}) -> {acc_t}\n"
            f"  %s = num.add %acc, %b : ({acc_t}, {tensor((cout,), 32, sx * sw, 0)}) -> "
            f"{acc_t}\n"
            + requantize_text("s", "y", acc_ty, out_ty, res)
            + "  func.return %y : " + tensor(res, 8, sy, zy) + "\n}\n")
    ours = run_l2(text, {"X": (x, sx, zx)})
    node = helper.make_node("QLinearConv", ["X", "sx", "zx", "W", "sw", "zw", "sy", "zy", "B"],
                            ["Y"], pads=[pad] * 4)
    inits = scalars(sx=sx, zx=zx, sw=sw, zw=0, sy=sy, zy=zy)
    inits["W"] = f[0].transpose(3, 2, 0, 1).astype(np.int8)  # (cout, c, kh, kw)
    inits["B"] = bias.astype(np.int32)
    theirs = run_ort([node], {"X": x.transpose(0, 3, 1, 2)}, inits, (1, cout, ho, ho))
    theirs = theirs.transpose(0, 2, 3, 1)  # NCHW -> NHWC
    xp = np.pad(x[0] - zx, ((pad, pad), (pad, pad), (0, 0)))
    acc = np.zeros(res[1:], dtype=np.int64)
    for i in range(ho):
        for j in range(ho):
            acc[i, j] = np.einsum("abc,abco->o", xp[i:i + kh, j:j + kh], f[0])
    exact = (acc + bias) * (sx * sw / sy) + zy
    deviations[f"conv{seed}"] = compare(ours, theirs[0], exact, band_for(sx * sw / sy))


def reals_text(values) -> str:
    return "[" + ", ".join(f"{_float_text(v)} : f64" for v in values) + "]"


def channel_requantize_text(src: str, dst: str, scales, dst_ty: AffineType, shape,
                            axis: int) -> str:
    pairs = [af.quantize_multiplier(v / dst_ty.real_scale) for v in scales]
    return (f"  %{dst} = num.requantize %{src} {{left_shift = 0 : i64, channel_axis = {axis} "
            f": i64, channel_real_scales = {reals_text(scales)}, channel_multipliers = "
            f"array<i64: {', '.join(str(m) for m, _ in pairs)}>, channel_shifts = "
            f"array<i64: {', '.join(str(k) for _, k in pairs)}>}} : "
            f"{tensor(shape, 32, max(scales), 0)} -> "
            f"{tensor(shape, dst_ty.width, dst_ty.real_scale, dst_ty.zp)}\n")


@pytest.mark.parametrize("seed,depthwise", [(0, False), (1, False), (2, True), (3, True)])
def test_per_channel_conv2d_equals_onnxruntime_qlinearconv(seed, depthwise):
    """Per-channel weights (TFLite's / onnxruntime's per-channel int8): a weight scale, an
    int32 bias scale and a requantization multiplier per output channel; QLinearConv
    with a 1-D w_scale."""
    rng = np.random.default_rng(200 + seed)
    h = w = 6
    c, kh = 4, 3
    groups, cg, cout = (c, 1, 1) if depthwise else (1, c, 5)
    channels = groups * cout
    pad = seed % 2
    sx, sy = f32(0.02), f32(rng.uniform(0.02, 0.1))
    sw = [f32(v) for v in rng.uniform(0.0005, 0.01, channels)]
    zx, zy = int(rng.integers(-50, 50)), int(rng.integers(-20, 20))
    x = rng.integers(-128, 128, (1, h, w, c))
    f = rng.integers(-127, 128, (groups, kh, kh, cg, cout))
    bias = rng.integers(-3000, 3000, (channels,))
    ho = h + 2 * pad - kh + 1
    res = (1, ho, ho, channels)
    acc_scales = [sx * v for v in sw]
    acc_t = tensor(res, 32, max(acc_scales), 0)
    f_t = tensor(f.shape, 8, max(sw), 0)
    bias_t = tensor((channels,), 32, max(acc_scales), 0)
    axis = 0 if depthwise else 4
    text = (f"func.func @main() -> {tensor(res, 8, sy, zy)} {{\n"
            f"  %x = num.input \"X\" : {tensor(x.shape, 8, sx, zx)}\n"
            f"  %f = num.param \"F\" {{channel_axis = {axis} : i64, channel_real_scales = "
            f"{reals_text(sw)}}} {dense(f, 'tensor<' + 'x'.join(map(str, f.shape)) + 'xi8>')}"
            f" -> {f_t}\n"
            f"  %b = num.param \"B\" {{channel_axis = 0 : i64, channel_real_scales = "
            f"{reals_text(acc_scales)}}} {dense(bias, f'tensor<{channels}xi32>')} -> "
            f"{bias_t}\n"
            f"  %acc = num.conv2d %x, %f {{strides = array<i64: 1, 1>, pads = array<i64: "
            f"{pad}, {pad}, {pad}, {pad}>, dilations = array<i64: 1, 1>, groups = {groups} : "
            f"i64, rounding = #num<rounding nearest>, halvings = 0 : i64}} : "
            f"({tensor(x.shape, 8, sx, zx)}, {f_t}) -> {acc_t}\n"
            f"  %s = num.add %acc, %b : ({acc_t}, {bias_t}) -> {acc_t}\n"
            + channel_requantize_text("s", "y", acc_scales, AffineType(8, sy, zy), res, 3)
            + "  func.return %y : " + tensor(res, 8, sy, zy) + "\n}\n")
    ours = run_l2(text, {"X": (x, sx, zx)})
    node = helper.make_node("QLinearConv", ["X", "sx", "zx", "W", "sw", "zw", "sy", "zy", "B"],
                            ["Y"], pads=[pad] * 4, group=groups)
    inits = scalars(sx=sx, zx=zx, sy=sy, zy=zy)
    inits["sw"] = np.array(sw, dtype=np.float32)
    inits["zw"] = np.zeros(channels, dtype=np.int8)
    # (groups, kh, kw, cg, cout) -> ONNX's (groups * cout, cg, kh, kw)
    inits["W"] = f.transpose(0, 4, 3, 1, 2).reshape(channels, cg, kh, kh).astype(np.int8)
    inits["B"] = bias.astype(np.int32)
    theirs = run_ort([node], {"X": x.transpose(0, 3, 1, 2)}, inits, (1, channels, ho, ho))
    theirs = theirs.transpose(0, 2, 3, 1)  # NCHW -> NHWC
    xp = np.pad(x[0] - zx, ((pad, pad), (pad, pad), (0, 0)))
    acc = np.zeros(res[1:], dtype=np.int64)
    for i in range(ho):
        for j in range(ho):
            for g in range(groups):
                acc[i, j, g * cout:(g + 1) * cout] = np.einsum(
                    "abc,abco->o", xp[i:i + kh, j:j + kh, g * cg:(g + 1) * cg], f[g])
    real = np.array([a / sy for a in acc_scales])
    exact = (acc + bias) * real + zy
    band = max(band_for(v) for v in real)
    deviations[f"conv-per-channel{seed}"] = compare(ours, theirs[0], exact, band)


@pytest.mark.parametrize("seed", range(2))
def test_per_channel_matmul_equals_onnxruntime_qlinearmatmul(seed):
    """x W with a scale per column of W (ONNX's per-column b_scale)."""
    rng = np.random.default_rng(300 + seed)
    m, k, n = 5, int(rng.integers(3, 40)), 4
    sa, sy = f32(rng.uniform(0.003, 0.02)), f32(rng.uniform(0.05, 0.3))
    sb = [f32(v) for v in rng.uniform(0.002, 0.05, n)]
    za, zy = int(rng.integers(-40, 40)), int(rng.integers(-20, 20))
    a = rng.integers(-128, 128, (m, k))
    b = rng.integers(-127, 128, (k, n))
    acc_scales = [sa * v for v in sb]
    b_t = tensor((k, n), 8, max(sb), 0)
    acc_t = tensor((m, n), 32, max(acc_scales), 0)
    text = (f"func.func @main() -> {tensor((m, n), 8, sy, zy)} {{\n"
            f"  %a = num.input \"A\" : {tensor((m, k), 8, sa, za)}\n"
            f"  %b = num.param \"B\" {{channel_axis = 1 : i64, channel_real_scales = "
            f"{reals_text(sb)}}} {dense(b, f'tensor<{k}x{n}xi8>')} -> {b_t}\n"
            f"  %acc = num.matmul %a, %b {{rounding = #num<rounding nearest>, halvings = 0 : "
            f"i64}} : ({tensor((m, k), 8, sa, za)}, {b_t}) -> {acc_t}\n"
            + channel_requantize_text("acc", "y", acc_scales, AffineType(8, sy, zy), (m, n),
                                      1)
            + "  func.return %y : " + tensor((m, n), 8, sy, zy) + "\n}\n")
    ours = run_l2(text, {"A": (a, sa, za)})
    node = helper.make_node("QLinearMatMul", ["A", "sa", "za", "B", "sb", "zb", "sy", "zy"],
                            ["Y"])
    inits = scalars(sa=sa, za=za, sy=sy, zy=zy)
    inits["B"] = b.astype(np.int8)
    inits["sb"] = np.array(sb, dtype=np.float32)
    inits["zb"] = np.zeros(n, dtype=np.int8)
    theirs = run_ort([node], {"A": a}, inits, (m, n))
    real = np.array([v / sy for v in acc_scales])
    exact = ((a - za) @ b) * real + zy
    band = max(band_for(v) for v in real)
    deviations[f"matmul-per-channel{seed}"] = compare(ours, theirs, exact, band)


def add_text(sa, za, sb, zb, sy, zy, shape, sub: bool = False) -> str:
    twice = 2 * max(sa, sb)
    mid = AffineType(32, twice / 2**20, 0)
    ta, tb, ty = AffineType(8, sa, za), AffineType(8, sb, zb), AffineType(8, sy, zy)
    mt = tensor(shape, 32, mid.real_scale, 0)
    return (f"func.func @main() -> {tensor(shape, 8, sy, zy)} {{\n"
            f"  %a = num.input \"A\" : {tensor(shape, 8, sa, za)}\n"
            f"  %b = num.input \"B\" : {tensor(shape, 8, sb, zb)}\n"
            + requantize_text("a", "a32", ta, mid, shape, 20)
            + requantize_text("b", "b32", tb, mid, shape, 20)
            + f"  %s = num.{'sub' if sub else 'add'} %a32, %b32 : ({mt}, {mt}) -> {mt}\n"
            + requantize_text("s", "y", mid, ty, shape)
            + "  func.return %y : " + tensor(shape, 8, sy, zy) + "\n}\n")


@pytest.mark.parametrize("seed", range(4))
def test_add_equals_onnxruntime_qlinearadd(seed):
    """TFLite's ADD (left shift 20, three requantizations) against com.microsoft.QLinearAdd
    (float arithmetic, half to even)."""
    rng = np.random.default_rng(200 + seed)
    shape = (16, 16)
    sa, sb, sy = (f32(v) for v in rng.uniform(0.005, 0.1, 3))
    za, zb, zy = (int(v) for v in rng.integers(-60, 60, 3))
    a, b = rng.integers(-128, 128, shape), rng.integers(-128, 128, shape)
    ours = run_l2(add_text(sa, za, sb, zb, sy, zy, shape), {"A": (a, sa, za),
                                                          "B": (b, sb, zb)})
    node = helper.make_node("QLinearAdd", ["A", "sa", "za", "B", "sb", "zb", "sy", "zy"],
                            ["Y"], domain="com.microsoft")
    theirs = run_ort([node], {"A": a, "B": b},
                     scalars(sa=sa, za=za, sb=sb, zb=zb, sy=sy, zy=zy), shape)
    exact = ((a - za) * sa + (b - zb) * sb) / sy + zy
    # our error: the two inputs' roundings at 2^-20 (relative to 2 max(s)) and the
    # output's first rounding
    band = band_for(2 * max(sa, sb) / 2**20 / sy) + 2 * max(sa, sb) / sy * 2.0**-19
    deviations[f"add{seed}"] = compare(ours, theirs, exact, band)


def test_sub_is_add_of_the_negation():
    """SUB: the same stages with the difference (no onnxruntime op: exact reals)."""
    rng = np.random.default_rng(7)
    shape = (8, 8)
    sa, sb, sy, za, zb, zy = 0.02, 0.03, 0.05, 10, -20, 3
    a, b = rng.integers(-128, 128, shape), rng.integers(-128, 128, shape)
    ours = run_l2(add_text(sa, za, sb, zb, sy, zy, shape, sub=True),
                  {"A": (a, sa, za), "B": (b, sb, zb)})
    exact = ((a - za) * sa - (b - zb) * sb) / sy + zy
    far = np.abs(np.abs(exact - np.floor(exact)) - 0.5) > 1e-3
    want = np.clip(np.floor(exact + 0.5), -128, 127)
    assert np.array_equal(ours[far], want[far]) and np.all(np.abs(ours - want) <= 1)


@pytest.mark.parametrize("seed", range(3))
def test_mul_equals_onnxruntime_qlinearmul(seed):
    rng = np.random.default_rng(300 + seed)
    shape = (16, 16)
    sa, sb, sy = f32(rng.uniform(0.01, 0.05)), f32(rng.uniform(0.01, 0.05)), \
        f32(rng.uniform(0.02, 0.2))
    za, zb, zy = (int(v) for v in rng.integers(-60, 60, 3))
    a, b = rng.integers(-128, 128, shape), rng.integers(-128, 128, shape)
    acc_ty, out_ty = AffineType(32, sa * sb, 0), AffineType(8, sy, zy)
    ta, tb = tensor(shape, 8, sa, za), tensor(shape, 8, sb, zb)
    text = (f"func.func @main() -> {tensor(shape, 8, sy, zy)} {{\n"
            f"  %a = num.input \"A\" : {ta}\n  %b = num.input \"B\" : {tb}\n"
            f"  %p = num.mul %a, %b : ({ta}, {tb}) -> {tensor(shape, 32, sa * sb, 0)}\n"
            + requantize_text("p", "y", acc_ty, out_ty, shape)
            + "  func.return %y : " + tensor(shape, 8, sy, zy) + "\n}\n")
    ours = run_l2(text, {"A": (a, sa, za), "B": (b, sb, zb)})
    node = helper.make_node("QLinearMul", ["A", "sa", "za", "B", "sb", "zb", "sy", "zy"],
                            ["Y"], domain="com.microsoft")
    theirs = run_ort([node], {"A": a, "B": b},
                     scalars(sa=sa, za=za, sb=sb, zb=zb, sy=sy, zy=zy), shape)
    exact = (a - za) * (b - zb) * (sa * sb / sy) + zy
    deviations[f"mul{seed}"] = compare(ours, theirs, exact, band_for(sa * sb / sy))


@pytest.mark.parametrize("s_in,zp_in", [(0.05, 0), (0.1, -20), (0.03125, 37)])
def test_sigmoid_table_equals_onnxruntime_qlinearsigmoid(s_in, zp_in):
    """All 256 inputs; TFLite's output quantization (1/256, -128)."""
    s_in = f32(s_in)
    x = np.arange(-128, 128).reshape(16, 16)
    t_in, t_out = tensor(x.shape, 8, s_in, zp_in), tensor(x.shape, 8, 1 / 256, -128)
    text = (f"func.func @main() -> {t_out} {{\n  %x = num.input \"X\" : {t_in}\n"
            f"  %y = num.sigmoid %x : {t_in} -> {t_out}\n  func.return %y : {t_out}\n}}\n")
    ours = run_l2(text, {"X": (x, s_in, zp_in)})
    node = helper.make_node("QLinearSigmoid", ["X", "sx", "zx", "sy", "zy"], ["Y"],
                            domain="com.microsoft")
    theirs = run_ort([node], {"X": x}, scalars(sx=s_in, zx=zp_in, sy=1 / 256, zy=-128),
                     x.shape)
    exact = 256.0 / (1.0 + np.exp(-s_in * (x - zp_in))) - 128
    # a table of float math on each side: only float rounding near a tie can differ
    deviations[f"sigmoid{s_in}"] = compare(ours, theirs, exact, 1e-4)


@pytest.mark.parametrize("levels", [255, 256])
@pytest.mark.parametrize("n,s_in,zp_in", [(10, 0.1, 3), (4, 0.02, -100), (33, 0.25, 0)])
def test_softmax_is_the_rounded_probability_and_c_equals_the_evaluator(n, s_in, zp_in,
                                                                        levels):
    """Zero-skew softmax at output quantization (1/D, -128), D = 255 (ours: 1.0 is code
    127) or TFLite's 256: each output is the real softmax of the dequantized row times D,
    rounded, minus 128, wherever that is not within 1e-3 of a tie (the exp table's 2^-K
    rounding), within 1 everywhere; the generated C (built for the host) computes the
    evaluator's integers; onnxruntime's com.microsoft QLinearSoftmax agrees within 1."""
    from minun_mlir.native import NativeProgram

    rng = np.random.default_rng(n)
    rows = 16
    q = rng.integers(-128, 128, (rows, n))
    q[0] = 127  # a flat row
    in_t, out_t = tensor((rows, n), 8, s_in, zp_in), tensor((rows, n), 8, 1 / levels, -128)
    text = (f"func.func @main() -> {out_t} {{\n  %x = num.input \"X\" : {in_t}\n"
            f"  %y = num.softmax %x : {in_t} -> {out_t}\n  func.return %y : {out_t}\n}}\n")
    ours = run_l2(text, {"X": (q, s_in, zp_in)})
    real = s_in * (q - zp_in)
    p = np.exp(real - real.max(axis=1, keepdims=True))
    exact = levels * p / p.sum(axis=1, keepdims=True) - 128
    far = np.abs(np.abs(exact - np.floor(exact)) - 0.5) > 1e-3
    want = np.clip(np.floor(exact + 0.5), -128, 127)
    assert np.array_equal(ours[far], want[far])
    assert np.all(np.abs(ours - np.clip(exact, -128, 127)) <= 1)
    module = parse_ir(text)
    x = af.dequantize(q, s_in, zp_in)[None]
    assert np.array_equal(NativeProgram(module).outputs(x)[0][0], ours)
    node = helper.make_node("QLinearSoftmax", ["X", "sx", "zx", "sy", "zy"], ["Y"],
                            domain="com.microsoft", axis=-1, opset=13)
    theirs = run_ort([node], {"X": q}, scalars(sx=f32(s_in), zx=zp_in, sy=1 / levels, zy=-128),
                     (rows, n))
    assert np.all(np.abs(ours - theirs.astype(np.int64)) <= 1)


@pytest.mark.parametrize("function", ["tanh", "exp"])
def test_tables_are_the_rounded_real_function(function):
    s_in, zp_in, s_out, zp_out = 0.04, 12, 0.01, -100
    x = np.arange(-128, 128).reshape(16, 16)
    t_in, t_out = tensor(x.shape, 8, s_in, zp_in), tensor(x.shape, 8, s_out, zp_out)
    attrs = " {method = #num<exp_method table>}" if function == "exp" else ""
    text = (f"func.func @main() -> {t_out} {{\n  %x = num.input \"X\" : {t_in}\n"
            f"  %y = num.{function} %x{attrs} : {t_in} -> {t_out}\n"
            f"  func.return %y : {t_out}\n}}\n")
    ours = run_l2(text, {"X": (x, s_in, zp_in)})
    real = {"tanh": np.tanh, "exp": np.exp}[function](s_in * (x - zp_in))
    want = np.clip(np.floor(real / s_out + 0.5) + zp_out, -128, 127)  # no ties here
    assert np.array_equal(ours, want)


def test_deviation_summary(capsys):
    """Runs last in this file: how many elements differ from onnxruntime (-s shows it);
    each is a value within the tie band of `compare`."""
    with capsys.disabled():
        print(f"\n  zero-skew vs onnxruntime, differing elements: {deviations}")
    assert all(v >= 0 for v in deviations.values())


# -- the IR: types, multipliers, errors -----------------------------------------------------


def test_affine_type_round_trips_and_verifies():
    from xdsl.utils.exceptions import VerifyException

    for scale in (0.1, 1e-5, 2.0**-40, 3.0, 1 / 3):
        ty = AffineType(8, scale, -7)
        text = f"func.func @main() -> {tensor((2,), 8, scale, -7)} {{\n" \
               f"  %x = num.input \"X\" : {tensor((2,), 8, scale, -7)}\n" \
               f"  func.return %x : {tensor((2,), 8, scale, -7)}\n}}\n"
        parsed = parse_ir(text)
        el = list(parsed.walk())[2].results[0].type.element_type
        assert el == ty and el.real_scale == scale
    for bits, scale, zp in ((4, 0.1, 0), (16, 0.1, 1), (8, -0.1, 0), (8, 0.0, 0),
                            (8, 0.1, 200), (32, 0.1, 3)):
        with pytest.raises(VerifyException, match="!num.affine"):
            AffineType(bits, scale, zp)


def test_requantize_verifier_checks_the_multiplier():
    from xdsl.utils.exceptions import VerifyException

    src, dst = tensor((2,), 32, 1e-4, 0), tensor((2,), 8, 0.02, 5)
    m, s = af.quantize_multiplier(1e-4 / 0.02)
    text = (f"func.func @main() -> {dst} {{\n  %x = num.input \"X\" : {src}\n"
            f"  %y = num.requantize %x {{multiplier = {m + 1} : i64, shift = {s} : i64, "
            f"left_shift = 0 : i64}} : {src} -> {dst}\n  func.return %y : {dst}\n}}\n")
    with pytest.raises(VerifyException, match=f"multiplier and shift must be {m} and {s}"):
        parse_ir(text)
    # a folded factor c (own.fold_scalar): QuantizeMultiplier(c s_in / s_out)
    mc, sc = af.quantize_multiplier(2.5 * 1e-4 / 0.02)
    folded = text.replace(f"multiplier = {m + 1} : i64, shift = {s} : i64",
                          f"multiplier = {mc} : i64, shift = {sc} : i64")
    parse_ir(folded.replace("left_shift = 0 : i64}", "left_shift = 0 : i64, factor = 2.5 : f64}"))
    with pytest.raises(VerifyException, match=f"multiplier and shift must be {m} and {s}"):
        parse_ir(folded)  # without the factor
    with pytest.raises(VerifyException, match="a factor is a positive finite real"):
        parse_ir(folded.replace("left_shift = 0 : i64}",
                                "left_shift = 0 : i64, factor = -2.5 : f64}"))


def test_per_channel_requantize_verifier_checks_each_channel():
    from xdsl.utils.exceptions import VerifyException

    scales = [1e-4, 3e-4]
    src, dst = tensor((1, 2), 32, 3e-4, 0), tensor((1, 2), 8, 0.02, 5)
    good = channel_requantize_text("x", "y", scales, AffineType(8, 0.02, 5), (1, 2), 1)
    text = (f"func.func @main() -> {dst} {{\n  %x = num.input \"X\" : {src}\n{good}"
            f"  func.return %y : {dst}\n}}\n")
    parse_ir(text)
    m0, _ = af.quantize_multiplier(1e-4 / 0.02)
    with pytest.raises(VerifyException, match="channel multipliers and shifts"):
        parse_ir(text.replace(f"array<i64: {m0},", f"array<i64: {m0 + 1},"))
    with pytest.raises(VerifyException, match="largest is the input's scale"):
        parse_ir(text.replace(tensor((1, 2), 32, 3e-4, 0), tensor((1, 2), 32, 2e-4, 0)))


# -- the suite: accuracy against the float program -------------------------------------------


SUITE = ROOT / "benchmarks" / "models"
# points int8 may lose against float32 on the test split; protonn-breast-cancer's exp of a
# squared distance keeps few levels at int8 (fixed8 loses 46 points there, fixed16 9.6)
MAX_DROP = {"protonn-breast-cancer": 20.0}


@pytest.mark.parametrize("model", sorted(d.name for d in SUITE.iterdir()
                                         if (d / "model.sd").is_file()))
def test_suite_accuracy_close_to_float(model):
    from minun_mlir.driver import Options, compile_model

    d = SUITE / model
    r = compile_model(d / "model.sd", Options(repr="zero-skew", bits=8), weights=d,
                      train=d / "train.npy", test=d / "test.npy")
    drop = 100 * (r.float_accuracy - r.accuracy)
    assert drop <= MAX_DROP.get(model, 1.5), (model, r.float_accuracy, r.accuracy)
