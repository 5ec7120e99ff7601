"""onnxruntime's requantization emulated with integers (formats/zero_skew/arith.py: ort_multiplier,
ort_mul; C minun_zs_ortq), against numpy's float32 arithmetic as the independent
reference: `np.rint(np.float32(x) * np.float32(scale))` is what MLAS's
MlasRequantizeOutput computes (cvtepi32_ps, mulps, cvtps_epi32 under round-to-nearest-even),
with scale = float32(float32(s_x * s_w) / s_y) as QLinearConv / QLinearMatMul / QGemm
compute it. The values are random int32s of every magnitude and adversarial ones: exact
ties (a power-of-two scale times odd integers), near-ties (x s within a few ulps of k +
1/2), accumulators past 2^24 (where float32(x) itself rounds), and tiny, subnormal and huge
scales."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from minun_mlir.formats.zero_skew import arith as af
from minun_mlir.lowering.c_runtime import HELPERS, closure

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1


def reference(x: np.ndarray, scale: np.float32) -> np.ndarray:
    """numpy float32: RNE(float32(x) * scale), saturated to +-2^30 (past any int8)."""
    with np.errstate(over="ignore"):
        y = np.rint(np.asarray(x, dtype=np.int64).astype(np.float32) * np.float32(scale))
    return np.clip(y.astype(np.float64), -(1 << 30), 1 << 30).astype(np.int64)


def adversarial(rng: np.random.Generator, scale: float) -> np.ndarray:
    """int32s: every magnitude, the float32 rounding boundaries of x, and x s near k + 1/2."""
    mags = np.exp2(rng.uniform(0, 31, 400))
    x = [np.sign(rng.uniform(-1, 1, 400)) * np.floor(mags)]
    x.append([0, 1, -1, I32_MAX, I32_MIN, I32_MIN + 1])
    for e in range(24, 31):  # float32(x) rounds: halfway cases and their neighbours
        base = 1 << e
        ulp = 1 << (e - 23)
        x.append([base + d for d in (ulp // 2, ulp // 2 + 1, ulp // 2 - 1, 3 * ulp // 2, ulp)])
        x.append([-(base + 3 * ulp // 2), -(base + ulp // 2)])
    k = rng.integers(-300, 300, 300) + 0.5
    near = np.clip(np.rint(k / scale), I32_MIN, I32_MAX)
    x.extend([near, near + 1, near - 1, near + 2, near - 2])
    return np.clip(np.concatenate([np.asarray(v, dtype=np.float64) for v in x]),
                   I32_MIN, I32_MAX).astype(np.int64)


def scales(rng: np.random.Generator) -> list[np.float32]:
    """float32 scales: typical requantization ones, powers of two (exact ties), tiny,
    subnormal and huge."""
    out = [np.float32(v) for v in np.exp(rng.uniform(np.log(1e-6), np.log(4.0), 60))]
    out += [np.float32(2.0**-k) for k in (1, 2, 7, 20)]
    out += [np.float32(1e-30), np.float32(1.5e-39), np.float32(2.0**-149), np.float32(3.0e9),
            np.float32(2.0**40), np.float32(1.0)]
    return out


def test_ort_multiplier_is_onnxruntimes_float32_scale():
    """m 2^e equals float32(float32(s_x s_w) / s_y) computed in numpy's float32, for
    float32 scales of a model (s_in = s_x s_w exact in double)."""
    rng = np.random.default_rng(1)
    for _ in range(2000):
        sx, sw, sy = (np.float32(v) for v in np.exp(rng.uniform(-14, 2, 3)))
        m, e = af.ort_multiplier(float(sx) * float(sw), float(sy))
        want = np.float32(np.float32(sx * sw) / sy)
        assert m < 1 << 24 and (m >= 1 << 23 or m == 0)
        assert m * 2.0**e == float(want)


@pytest.mark.parametrize("seed", range(3))
def test_ort_mul_equals_numpy_float32(seed):
    """Bit for bit on every value, and TFLite's MBQM (the other mode) is not: it differs
    on some near-ties, so the comparison can fail."""
    rng = np.random.default_rng(100 + seed)
    differs_tflite = 0
    for s in scales(rng):
        m, e = af.ort_multiplier(float(s), 1.0)
        x = adversarial(rng, float(s))
        want = reference(x, s)
        np.testing.assert_array_equal(af.ort_mul(x, m, e), want, err_msg=f"scale {s!r}")
        if 0 < s < 1:
            tm, tk = af.quantize_multiplier(float(s))
            differs_tflite += int(np.sum(af.mbqm(x, tm, tk) != want))
    assert differs_tflite > 0


def test_exact_ties_round_to_even():
    """x * 2^-1 for odd x is a tie: 1.5 -> 2, 2.5 -> 2, -2.5 -> -2 (numpy's rint agrees)."""
    m, e = af.ort_multiplier(0.5, 1.0)
    x = np.array([1, 3, 5, -5, -3, 7])
    assert list(af.ort_mul(x, m, e)) == [0, 2, 2, -2, -2, 4]
    np.testing.assert_array_equal(af.ort_mul(x, m, e), reference(x, np.float32(0.5)))


def helpers(name: str) -> str:
    """The C of a runtime helper and those it calls, in order."""
    return "".join(HELPERS[n][1](None) for n in closure([name]))


def c_program(x: np.ndarray, pairs: list[tuple[int, int]]) -> str:
    values = ", ".join(f"{int(v)}" if v != I32_MIN else "INT32_MIN" for v in x)
    ms = ", ".join(str(m) for m, _ in pairs)
    es = ", ".join(str(e) for _, e in pairs)
    return ("#include <stdint.h>\n#include <stdio.h>\n" + helpers("minun_zs_ortq")
            + f"static const int32_t xs[] = {{{values}}};\n"
            f"static const int32_t ms[] = {{{ms}}};\nstatic const int32_t es[] = {{{es}}};\n"
            "int main(void)\n{\n    unsigned i, j;\n"
            f"    for (j = 0; j < {len(pairs)}; j++)\n"
            f"        for (i = 0; i < {len(x)}; i++)\n"
            "            printf(\"%ld\\n\", (long)minun_zs_ortq(xs[i], ms[j], es[j]));\n"
            "    return 0;\n}\n")


def test_c_helper_equals_the_evaluator(tmp_path):
    """minun_zs_ortq (gcc, strict C99) on the adversarial values of 20 scales: the
    evaluator's integers."""
    rng = np.random.default_rng(7)
    ss = scales(rng)[::4] + [np.float32(0.5), np.float32(1.5e-39), np.float32(2.0**40)]
    x = adversarial(rng, 0.013)
    pairs = [af.ort_multiplier(float(s), 1.0) for s in ss]
    src = tmp_path / "ortq.c"
    src.write_text(c_program(x, pairs))
    exe = tmp_path / "ortq"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2",
                    str(src), "-o", str(exe)], check=True)
    got = np.array([int(v) for v in subprocess.run(
        [str(exe)], capture_output=True, text=True, check=True).stdout.split()])
    want = np.concatenate([af.ort_mul(x, m, e) for m, e in pairs])
    np.testing.assert_array_equal(got, want)


def tie_inputs(rng: np.random.Generator, scale: np.float32, zp: int) -> np.ndarray:
    """float32 reals at, and one float32 step around, (k + 1/2) * scale (and past the
    int8 range)."""
    k = np.arange(-140 - zp, 140 - zp) + 0.5
    x = (k * np.float64(scale)).astype(np.float32)
    return np.concatenate([x, np.nextafter(x, np.float32(np.inf)),
                           np.nextafter(x, np.float32(-np.inf)),
                           rng.normal(0, 100 * float(scale), 300).astype(np.float32)])


@pytest.mark.parametrize("scale,zp", [(0.027502498, -9), (0.05, 3), (0.25, 0), (1e-3, 100)])
def test_input_quantization_equals_onnxruntime_quantizelinear(scale, zp, tmp_path):
    """ort_quantize (the evaluator's input encoding for a pre-quantized model) and its C
    (c_ort_quantize, the float wrapper's) equal onnxruntime's QuantizeLinear on reals at
    and around rounding ties; TFLite's rounding (half away from zero, in double) differs
    on some of them."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)
    s = np.float32(scale)
    x = tie_inputs(rng, s, zp)
    graph = helper.make_graph(
        [helper.make_node("QuantizeLinear", ["X", "s", "z"], ["Y"])], "q",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [len(x)])],
        [helper.make_tensor_value_info("Y", TensorProto.INT8, [len(x)])],
        initializer=[numpy_helper.from_array(np.array(s), "s"),
                     numpy_helper.from_array(np.array(zp, dtype=np.int8), "z")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    theirs = sess.run(None, {"X": x})[0].astype(np.int64)
    np.testing.assert_array_equal(af.ort_quantize(x, float(s), zp, 8), theirs)
    assert np.any(af.quantize(x.astype(np.float64), float(s), zp, 8) != theirs)
    values = ", ".join(f"{float(v).hex()}f" for v in x)
    body = af.c_ort_quantize("v", float(s), zp, 8).replace("\n", "\n    ")
    src = tmp_path / "q.c"
    src.write_text("#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n"
                   "static int32_t quantize(float v)\n{\n    " + body + "\n    return q;\n}\n"
                   f"static const float xs[] = {{{values}}};\n"
                   "int main(void)\n{\n    unsigned i;\n"
                   f"    for (i = 0; i < {len(x)}; i++)\n"
                   "        printf(\"%ld\\n\", (long)quantize(xs[i]));\n    return 0;\n}\n")
    exe = tmp_path / "q"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2",
                    str(src), "-o", str(exe), "-lm"], check=True)
    got = [int(v) for v in subprocess.run([str(exe)], capture_output=True, text=True,
                                          check=True).stdout.split()]
    np.testing.assert_array_equal(got, theirs)


def add_reference(a, b, sa, sb, sy, zy, op="add") -> np.ndarray:
    """numpy float32, as onnxruntime's DequantizeLinear, Add (Sub, Mul), QuantizeLinear."""
    with np.errstate(over="ignore", invalid="ignore"):
        fa = np.asarray(a).astype(np.float32) * np.float32(sa)
        fb = np.asarray(b).astype(np.float32) * np.float32(sb)
        f = {"add": fa + fb, "sub": fa - fb, "mul": fa * fb}[op]
        y = np.rint(f / np.float32(sy))
    return np.clip(y.astype(np.float64) + zy, -128, 127).astype(np.int64)


def add_cases(rng: np.random.Generator) -> list[tuple[np.float32, np.float32, np.float32]]:
    """Scale triples: random, equal, powers of two (exact ties), far apart."""
    out = [tuple(np.float32(v) for v in np.exp(rng.uniform(-9, 1, 3))) for _ in range(40)]
    out += [(np.float32(0.03), np.float32(0.03), np.float32(0.05)),
            (np.float32(0.25), np.float32(0.125), np.float32(0.5)),
            (np.float32(2.0**-7), np.float32(2.0**-3), np.float32(2.0**-4)),
            (np.float32(0.02), np.float32(2e-9), np.float32(0.04)),
            (np.float32(3e-9), np.float32(0.7), np.float32(0.01))]
    return out


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_ort_add_and_product_equal_numpy_float32(op):
    """Every pair of int8 differences (q - zp in -255..255 against 64 random ones) for 45
    scale triples: bit for bit."""
    rng = np.random.default_rng(len(op) + ord(op[0]))
    a = np.arange(-255, 256)[:, None]
    for sa, sb, sy in add_cases(rng):
        b = rng.integers(-255, 256, (1, 64))
        zy = int(rng.integers(-128, 128))
        got = (af.ort_product(a, b, float(sa), float(sb), float(sy), zy) if op == "mul" else
               af.ort_add(a, b, float(sa), float(sb), float(sy), zy, subtract=op == "sub"))
        np.testing.assert_array_equal(got, add_reference(a, b, sa, sb, sy, zy, op),
                                      err_msg=f"{sa}, {sb}, {sy}")


@pytest.mark.parametrize("helper", ["minun_zs_ortadd", "minun_zs_ortmul"])
def test_c_add_and_mul_helpers_equal_the_evaluator(helper, tmp_path):
    """minun_zs_ortadd / minun_zs_ortmul (gcc, strict C99) on every a in -255..255
    against 16 b, for 12 scale triples: the evaluator's integers (before the zero
    point)."""
    rng = np.random.default_rng(5)
    cases = add_cases(rng)[::4] + add_cases(rng)[-4:]
    a = np.repeat(np.arange(-255, 256), 16)
    b = np.tile(rng.integers(-255, 256, 16), 511)
    consts = [(*af.f32_parts(sa), *af.f32_parts(sb), *af.f32_parts(sy)) for sa, sb, sy in cases]
    src = tmp_path / "add.c"
    src.write_text(
        "#include <stdint.h>\n#include <stdio.h>\n" + helpers(helper)
        + f"static const int32_t as[] = {{{', '.join(map(str, a))}}};\n"
        f"static const int32_t bs[] = {{{', '.join(map(str, b))}}};\n"
        f"static const int32_t cs[][6] = {{{', '.join('{' + ', '.join(map(str, c)) + '}' for c in consts)}}};\n"
        "int main(void)\n{\n    unsigned i, j;\n"
        f"    for (j = 0; j < {len(consts)}; j++)\n"
        f"        for (i = 0; i < {len(a)}; i++)\n"
        f"            printf(\"%ld\\n\", (long){helper}(as[i], bs[i], cs[j][0], cs[j][1], "
        "cs[j][2], cs[j][3], cs[j][4], cs[j][5]));\n"
        "    return 0;\n}\n")
    exe = tmp_path / "add"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2",
                    str(src), "-o", str(exe)], check=True)
    got = np.array([int(v) for v in subprocess.run(
        [str(exe)], capture_output=True, text=True, check=True).stdout.split()])
    kernel = af.ort_product if helper == "minun_zs_ortmul" else af.ort_add
    want = np.concatenate([kernel(a, b, float(sa), float(sb), float(sy), 0, bits=32)
                           for sa, sb, sy in cases])
    np.testing.assert_array_equal(got, want)
