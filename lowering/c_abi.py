"""The model's C interface (docs/targets.md): what model.h declares and the functions
beside minun_predict, made from the attributes lower-to-emitc puts on the function.

- `model_info`: the function's ABI attributes (input and output types, scales, posit /
  bfloat16 / zero-skew encodings, several inputs, class labels) as a `Model`;
- `header`: model.h;
- `abi_functions`: `minun_input_buffer` / `minun_output_buffer` and a copying
  `minun_predict` (input or output in scratch),
  and `minun_predict_float`, which quantizes reals with the program's rounding and
  saturation exactly as the evaluator's input encoding does and dequantizes the scores.
  lower-to-emitc appends them to L4 as `cemit.func`s (their statements `cemit.verbatim`
  lines, what they call in `needs`), so the printer only spells them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr, UnitAttr
from xdsl.ir import Block, Region

from minun_mlir.diagnostics import error
from minun_mlir.dialects import cemit
from minun_mlir.dialects.num import (
    AffineType,
    BFloat16Type,
    FixedType,
    PositType,
    integer_stored,
    storage_type,
)
from minun_mlir.formats.fixed.arith import rounding_in
from minun_mlir.formats.posit.runtime import posit_result
from minun_mlir.lowering.c_syntax import c_string, ctype, float_literal, int_literal


@dataclass
class Model:
    """What model.h needs to know, from the attributes lower-to-emitc put on the function."""

    input_size: int
    output_size: int
    input_type: str
    output_type: str
    input_scale: int | None
    output_scale: int | None
    rounding: str
    input_buffer: str | None = None  # C address of the input in scratch (in-place API)
    input_posit: tuple[int, int] | None = None  # (n, es) of a posit input / output
    output_posit: tuple[int, int] | None = None
    bf16: bool = False  # bfloat16 input and output (keys, formats/bfloat16/representation.py)
    input_affine: tuple[float, int] | None = None  # zero-skew (scale, zero point) of the
    output_affine: tuple[float, int] | None = None  # input / output (formats/zero_skew/arith.py)
    # several inputs, one after another in x: (name, shape text, offset, size, scale)
    inputs: tuple[tuple[str, str, int, int, int | None], ...] = ()
    # the labels of classes 0..n-1 (minun.class_labels): strings, or int32 labels
    class_labels: tuple[str, ...] | tuple[int, ...] = ()
    # "onnxruntime" for a pre-quantized model (minun.requantize): its zero-skew input is
    # quantized as onnxruntime's QuantizeLinear (float32, half to even)
    requantize: str | None = None
    # per-feature input scales (numerics/input_scales.py): each input element's centre
    # and half-width, taken off before the input's fixed-point scale
    feature_scales: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    output_buffer: str | None = None  # C address of the output in scratch (in-place API)
    # the model's input / output is uint8 (the frontends' minun.input_uint8 /
    # minun.output_uint8), stored as the int8 u - 128: minun_predict_uint8 takes the bytes
    uint8_input: bool = False
    uint8_output: bool = False



def model_info(fn: cemit.FuncOp) -> Model:
    a = fn.attributes
    encodings = {side: a.get(f"minun.{side}_encoding") for side in ("input", "output")}
    for side, el in encodings.items():  # the contract: an encoding is stored as this type
        stored = a.get(f"minun.{side}_type")
        if el is not None and stored is not None and \
                (storage_type(el) if integer_stored(el) else el) != stored:
            raise error(f"minun_predict: the {side} encoding {el} is not stored as {stored} "
                        f"(minun.{side}_type)")

    def scale(side: str) -> int | None:
        el = encodings[side]
        return el.frac if isinstance(el, FixedType) else None

    def posit(side: str) -> tuple[int, int] | None:
        el = encodings[side]
        return (el.width, el.exponent_bits) if isinstance(el, PositType) else None

    def affine(side: str) -> tuple[float, int] | None:
        el = encodings[side]
        return (el.real_scale, el.zp) if isinstance(el, AffineType) else None

    inputs: list[tuple[str, str, int, int, int | None]] = []
    if "minun.input_names" in a:
        names = a["minun.input_names"].data.split(",")
        shapes = a["minun.input_shapes"].data.split(",")
        scales = a["minun.input_scales"].data.split(",") if "minun.input_scales" in a \
            else [None] * len(names)
        offset = 0
        for name_, shape, sc in zip(names, shapes, scales, strict=True):
            size = math.prod(int(d) for d in shape.split("x"))
            inputs.append((name_, shape, offset, size, None if sc is None else int(sc)))
            offset += size
    return Model(a["minun.input_size"].data, a["minun.output_size"].data,
                 ctype(a["minun.input_type"]), ctype(a["minun.output_type"]),
                 scale("input"), scale("output"),
                 rounding_in(fn),
                 a["minun.input_buffer"].data if "minun.input_buffer" in a else None,
                 posit("input"), posit("output"),
                 isinstance(encodings["input"], BFloat16Type), affine("input"),
                 affine("output"), tuple(inputs),
                 tuple(x.value.data if isinstance(x, IntegerAttr) else x.data
                       for x in a["minun.class_labels"].data)
                 if "minun.class_labels" in a else (),
                 a["minun.requantize"].data if "minun.requantize" in a else None,
                 feature_scales=_feature_scales(a),
                 output_buffer=a["minun.output_buffer"].data
                 if "minun.output_buffer" in a else None,
                 uint8_input="minun.input_uint8" in a and ctype(a["minun.input_type"]) ==
                 "int8_t",
                 uint8_output="minun.output_uint8" in a and ctype(a["minun.output_type"]) ==
                 "int8_t")


def _feature_scales(a) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    from minun_mlir.numerics.input_scales import ATTR

    if ATTR not in a:
        return None
    values = [float(v) for v in a[ATTR].get_values()[1:]]
    n = len(values) // 2
    return tuple(values[:n]), tuple(values[n:])

# -- model.h and the float wrapper ---------------------------------------------------

def header(m: Model, name: str, profile: str) -> str:
    scales = ""
    if m.input_scale is not None and m.feature_scales is not None:
        centre, half = m.feature_scales
        scales += (f"#define MINUN_INPUT_SCALE {m.input_scale}   /* input element i = round((x[i] "
                   "- centre[i]) / half_width[i] * 2^scale),\n * saturated, in float32 "
                   "(per-feature input scales; minun_predict_float does it) */\n"
                   "#define MINUN_INPUT_CENTRES {"
                   + ", ".join(float_literal(v) for v in centre) + "}\n"
                   "#define MINUN_INPUT_HALF_WIDTHS {"
                   + ", ".join(float_literal(v) for v in half) + "}\n")
    elif m.input_scale is not None:
        scales += (f"#define MINUN_INPUT_SCALE {m.input_scale}   "
                   "/* input element = round(x * 2^scale), saturated */\n")
    if m.output_scale is not None:
        scales += (f"#define MINUN_OUTPUT_SCALE {m.output_scale}  "
                   "/* score = out element / 2^scale */\n")
    if m.inputs:
        scales += (f"/* {len(m.inputs)} inputs, stored one after another in x (and in "
                   "minun_predict_float's x),\n * in the model's input order: */\n"
                   f"#define MINUN_INPUTS {len(m.inputs)}\n")
        for k, (name_, shape, offset, size, sc) in enumerate(m.inputs):
            scales += (f"#define MINUN_INPUT_{k}_OFFSET {offset}   /* {name_}: {shape} */\n"
                       f"#define MINUN_INPUT_{k}_SIZE {size}\n")
            if sc is not None:
                scales += f"#define MINUN_INPUT_{k}_SCALE {sc}\n"
    if m.class_labels:
        ints = isinstance(m.class_labels[0], int)
        scales += ("/* The model's class labels: minun_predict returns an index into "
                   "minun_class_labels. */\n"
                   f"#define MINUN_CLASS_COUNT {len(m.class_labels)}\n"
                   "#define MINUN_CLASS_LABELS {"
                   + ", ".join(str(x) if ints else c_string(x) for x in m.class_labels)
                   + "}\n"
                   + ("static const int32_t" if ints else "static const char *const")
                   + " minun_class_labels[MINUN_CLASS_COUNT] = MINUN_CLASS_LABELS;\n")
    in_place = "" if m.input_buffer is None else """
/* The input lives in the model's scratch memory (memory-plan's input-in-scratch), which
 * it shares with buffers used after its last read. Write the MINUN_INPUT_SIZE values to
 * minun_input_buffer(), then call minun_predict_in_place; the buffer's contents are
 * overwritten by the run. minun_predict(x, out) copies x there first. */
#define MINUN_INPUT_IN_SCRATCH 1
minun_input_t *minun_input_buffer(void);
"""
    if m.output_buffer is not None:
        in_place += """
/* The output lives in the model's scratch memory (memory-plan's output-in-scratch), which
 * it shares with buffers dead before its first write. After minun_predict_in_place,
 * minun_output_buffer() holds the MINUN_OUTPUT_SIZE scores until the next run.
 * minun_predict(x, out) copies them to out. */
#define MINUN_OUTPUT_IN_SCRATCH 1
minun_output_t *minun_output_buffer(void);
"""
    if in_place:
        in_place += f"int minun_predict_in_place({in_place_params(m)});\n"
    if m.uint8_input or m.uint8_output:
        in_place += f"""
/* The model's uint8 {' and '.join(s for s, u in (("input", m.uint8_input),
                                              ("output", m.uint8_output)) if u)} as they are
 * (minun_predict takes and gives a uint8 value u as the int8 u - 128): the same run. */
#define MINUN_UINT8_IO 1
typedef {'uint8_t' if m.uint8_input else 'minun_input_t'} minun_uint8_input_t;
typedef {'uint8_t' if m.uint8_output else 'minun_output_t'} minun_uint8_output_t;
int minun_predict_uint8({uint8_params(m)});
"""
    return f"""/* {name}: generated by minun-mlir ({profile} profile). Do not edit.
 * Contract: docs/targets.md (model directory) and docs/codegen.md. */
#ifndef MINUN_MODEL_H
#define MINUN_MODEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {{
#endif

#define MINUN_INPUT_SIZE {m.input_size}
#define MINUN_OUTPUT_SIZE {m.output_size}
{scales}typedef {m.input_type} minun_input_t;
typedef {m.output_type} minun_output_t;

/* Runs the model on x (MINUN_INPUT_SIZE quantized values), writes the
 * MINUN_OUTPUT_SIZE scores to out and returns the predicted label. */
int minun_predict(const minun_input_t *x, minun_output_t *out);
{in_place}
/* The same on reals: quantizes x, dequantizes the scores. */
int minun_predict_float(const float *x, float *scores);

#ifdef __cplusplus
}}
#endif

#endif /* MINUN_MODEL_H */
"""

def wrapper(m: Model) -> str:
    """The C of the functions beside minun_predict: the in-place API, then
    minun_predict_float (with its quantize / dequantize helpers)."""
    return in_place_api(m) + float_wrapper(m)

def uint8_params(m: Model) -> str:
    return "const minun_uint8_input_t *x, minun_uint8_output_t *out"


def uint8_api(m: Model) -> str:
    """minun_predict_uint8: the uint8 bytes to and from minun_predict's int8 u - 128."""
    if not (m.uint8_input or m.uint8_output):
        return ""
    q = "q" if m.uint8_input else "x"
    s = "s" if m.uint8_output else "out"
    return (f"int minun_predict_uint8({uint8_params(m)})\n{{\n"
            + ("    minun_input_t q[MINUN_INPUT_SIZE];\n" if m.uint8_input else "")
            + ("    minun_output_t s[MINUN_OUTPUT_SIZE];\n" if m.uint8_output else "")
            + "    long i;\n    int label;\n"
            + ("    for (i = 0; i < MINUN_INPUT_SIZE; i++)\n"
               "        q[i] = (minun_input_t)((int)x[i] - 128);\n" if m.uint8_input else "")
            + f"    label = minun_predict({q}, {s});\n"
            + ("    for (i = 0; i < MINUN_OUTPUT_SIZE; i++)\n"
               "        out[i] = (uint8_t)((int)s[i] + 128);\n" if m.uint8_output else "")
            + "    return label;\n}\n\n")


def in_place_params(m: Model) -> str:
    """The parameters of minun_predict_in_place: x and out unless planned in scratch."""
    params = ([] if m.input_buffer else ["const minun_input_t *x"]) + \
        ([] if m.output_buffer else ["minun_output_t *out"])
    return ", ".join(params) or "void"


def in_place_call(m: Model, q: str, s: str) -> str:
    """A call of minun_predict_in_place on the input q and output s (C expressions)."""
    args = ([] if m.input_buffer else [q]) + ([] if m.output_buffer else [s])
    return f"minun_predict_in_place({', '.join(args)})"


def in_place_api(m: Model) -> str:
    """With the input or output in scratch: their addresses, and minun_predict copying x
    there (and the scores out)."""
    if m.input_buffer is None and m.output_buffer is None:
        return ""
    if m.output_buffer is None:
        return f"""minun_input_t *minun_input_buffer(void)
{{
    return (minun_input_t *){m.input_buffer};
}}

int minun_predict(const minun_input_t *x, minun_output_t *out)
{{
    minun_input_t *in = minun_input_buffer();
    long i;
    if (x != in)
        for (i = 0; i < MINUN_INPUT_SIZE; i++)
            in[i] = x[i];
    return minun_predict_in_place(out);
}}

"""
    text = "" if m.input_buffer is None else f"""minun_input_t *minun_input_buffer(void)
{{
    return (minun_input_t *){m.input_buffer};
}}

"""
    copy_in = "" if m.input_buffer is None else """    minun_input_t *in = minun_input_buffer();
    if (x != in)
        for (i = 0; i < MINUN_INPUT_SIZE; i++)
            in[i] = x[i];
"""
    return text + f"""minun_output_t *minun_output_buffer(void)
{{
    return (minun_output_t *){m.output_buffer};
}}

int minun_predict(const minun_input_t *x, minun_output_t *out)
{{
    const minun_output_t *y = minun_output_buffer();
    long i;
    int label;
{copy_in}    label = {in_place_call(m, "x", "out")};
    if (out != y)
        for (i = 0; i < MINUN_OUTPUT_SIZE; i++)
            out[i] = y[i];
    return label;
}}

"""


def entry(m: Model) -> tuple[str, str, str]:
    """minun_predict_float's declarations of q (the stored input) and s (the scores) and
    its call: in the model's buffers when they are in scratch, else on the stack."""
    s_decl = "minun_output_t s[MINUN_OUTPUT_SIZE];"
    if m.input_buffer is None and m.output_buffer is None:
        return "minun_input_t q[MINUN_INPUT_SIZE];", s_decl, "minun_predict(q, s)"
    q_decl = "minun_input_t q[MINUN_INPUT_SIZE];" if m.input_buffer is None else \
        "minun_input_t *q = minun_input_buffer();"
    if m.output_buffer is not None:  # read where the run leaves them
        s_decl = "const minun_output_t *s = minun_output_buffer();"
    return q_decl, s_decl, in_place_call(m, "q", "s")


def float_wrapper(m: Model) -> str:
    if m.input_type == "float":  # float32 model: the entry point already takes floats
        return """int minun_predict_float(const float *x, float *scores)
{
    return minun_predict(x, scores);
}
"""
    if m.input_posit is not None or m.output_posit is not None:
        return posit_wrapper(m)
    if m.input_affine is not None:
        return affine_wrapper(m)
    if m.bf16:
        return """int minun_predict_float(const float *x, float *scores)
{
    minun_input_t q[MINUN_INPUT_SIZE];
    minun_output_t s[MINUN_OUTPUT_SIZE];
    int i, label;
    for (i = 0; i < MINUN_INPUT_SIZE; i++)
        q[i] = minun_f32_bf16(x[i]);
    label = minun_predict(q, s);
    for (i = 0; i < MINUN_OUTPUT_SIZE; i++)
        scores[i] = minun_bf16_f32(s[i]);
    return label;
}
"""
    bits = int(m.input_type[3:-2])
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    modes = {
        "trunc": "r < 0.0f ? -floorf(-r) : floorf(r)",
        "floor": "floorf(r)",
        # floor(r + 0.5) without the float addition's rounding: r - floor(r) is exact
        "nearest": "floorf(r) + (r - floorf(r) >= 0.5f ? 1.0f : 0.0f)",
    }
    if m.rounding not in modes:
        raise error(f"the model's num.rounding is '{m.rounding}'; it must be one of "
                    f"{', '.join(modes)}")
    rounded = modes[m.rounding]
    # quantized straight into the input buffer when it is in scratch: no copy on the stack
    q_decl, s_decl, call = entry(m)
    if m.inputs:  # several inputs: each quantized at its own scale
        what = f"round(v * 2^scale) ({m.rounding}) at each input's\n * scale, saturated, "
        params, factor = "float v, float factor", "factor"
        loops = "".join(
            f"    for (i = {offset}; i < {offset + size}; i++) /* {name_} */\n"
            f"        q[i] = minun_quantize_input(x[i], {float_literal(2.0 ** (sc or 0))});\n"
            for name_, _, offset, size, sc in m.inputs)
        exact = "scaling by 2^scale is exact"
    else:
        in_scale = m.input_scale or 0
        what = f"round(v * 2^{in_scale}) ({m.rounding}), saturated,\n * "
        params, factor = "float v", float_literal(2.0 ** in_scale)
        loops = ("    for (i = 0; i < MINUN_INPUT_SIZE; i++)\n"
                 "        q[i] = minun_quantize_input(x[i]);\n")
        exact = "the scaling by a power of two is exact"
        if m.feature_scales is not None:  # each feature centred and scaled first (float32)
            loops = ("    static const float centre[MINUN_INPUT_SIZE] = MINUN_INPUT_CENTRES;\n"
                     "    static const float half_width[MINUN_INPUT_SIZE] = "
                     "MINUN_INPUT_HALF_WIDTHS;\n"
                     "    for (i = 0; i < MINUN_INPUT_SIZE; i++)\n"
                     "        q[i] = minun_quantize_input((x[i] - centre[i]) / "
                     "half_width[i]);\n")
    return f"""/* Reals -> stored input: {what}as the evaluator encodes inputs ({exact}). */
static minun_input_t minun_quantize_input({params})
{{
    float r = v * {factor};
    if (r >= {float(hi)!r}f)
        return {int_literal(hi)};
    if (r <= {float(lo)!r}f)
        return {int_literal(lo)};
    return (minun_input_t)({rounded});
}}

int minun_predict_float(const float *x, float *scores)
{{
    {q_decl}
    {s_decl}
    int i, label;
{loops}    label = {call};
    for (i = 0; i < MINUN_OUTPUT_SIZE; i++)
        scores[i] = (float)s[i] * {float_literal(2.0 ** -(m.output_scale or 0))};
    return label;
}}
"""

def quantize_input(m: Model, lo: int, hi: int) -> str:
    """minun_quantize_input: a real to the stored zero-skew input, as the evaluator
        encodes it (formats/zero_skew/arith.py: quantize, or ort_quantize for a pre-quantized
        model)."""
    s_in, zp_in = m.input_affine
    if m.requantize == "onnxruntime":
        from minun_mlir.formats.zero_skew.arith import c_ort_quantize

        body = c_ort_quantize("v", s_in, zp_in, 32 if lo < -128 else 8)
        return ("/* Reals -> stored input as onnxruntime's QuantizeLinear: the float32 "
                f"quotient\n * v / {s_in!r} rounded to nearest even, + {zp_in}, "
                "saturated, as the evaluator encodes\n * inputs. */\n"
                "static minun_input_t minun_quantize_input(float v)\n{\n    "
                + body.replace("\n", "\n    ") + "\n    return (minun_input_t)q;\n}\n")
    if m.requantize == "tflite":  # TFLite's QUANTIZE: the quotient in float32
        head = (f"/* Reals -> stored input as TFLite's QUANTIZE: the float32 quotient "
                f"v / {s_in!r}\n * rounded (ties away from zero), + {zp_in}, saturated, "
                "as the evaluator encodes inputs. */")
        quotient = f"(double)(v / (float){s_in.hex()})"
    else:
        head = (f"/* Reals -> stored input: round(v / {s_in!r}) + {zp_in} (ties away "
                "from zero),\n * saturated, as the evaluator encodes inputs. */")
        quotient = f"(double)v / {s_in.hex()}"
    return head + f"""
static minun_input_t minun_quantize_input(float v)
{{
    double r = round({quotient});
    if (r < {float(lo - 1 - abs(zp_in))!r})
        r = {float(lo - 1 - abs(zp_in))!r};
    if (r > {float(hi + 1 + abs(zp_in))!r})
        r = {float(hi + 1 + abs(zp_in))!r};
    r += {zp_in};
    return (minun_input_t)(r < {lo} ? {lo} : r > {hi} ? {hi} : r);
}}
"""

def affine_wrapper(m: Model) -> str:
    """Reals <-> zero-skew int8: round(v / scale) + zp (ties away from zero, in double,
        as formats/zero_skew/arith.quantize), saturated; scores dequantized (an int32 accumulator
        has zero point 0)."""
    lo, hi = (-128, 127) if m.input_type == "int8_t" else (-(1 << 31), (1 << 31) - 1)
    if m.output_affine is not None:
        s_out, zp_out = m.output_affine
    else:  # an integer output (a label): no scores to scale
        s_out, zp_out = 1.0, 0
    q_decl, s_decl, call = entry(m)
    return quantize_input(m, lo, hi) + f"""
int minun_predict_float(const float *x, float *scores)
{{
    {q_decl}
    {s_decl}
    int i, label;
    for (i = 0; i < MINUN_INPUT_SIZE; i++)
        q[i] = minun_quantize_input(x[i]);
    label = {call};
    for (i = 0; i < MINUN_OUTPUT_SIZE; i++)
        scores[i] = (float)({s_out!r} * ((double)s[i] - {zp_out}));
    return label;
}}
"""

def posit_wrapper(m: Model) -> str:
    """Floats <-> posit patterns: a float32 is the integer m * 2^(e - 150), which the
        runtime's posit_from_fixed rounds once (as the evaluator's encode of the same
        real); a pattern is decoded field by field (exact in a float for n <= 16)."""
    n_in, es_in = m.input_posit
    n_out, es_out = m.output_posit
    from_fixed = posit_result(f"posit_from_fixed(mant, 150 - e, {n_in}, {es_in})", n_in)
    nar = posit_result(f"posit_nar({n_in})", n_in)
    return f"""/* float -> posit<{n_in}, {es_in}>, rounded once (NaN, infinities: NaR). */
static minun_input_t minun_quantize_input(float v)
{{
    uint32_t u;
    int32_t mant;
    int e;
    __builtin_memcpy(&u, &v, sizeof u);
    e = (int)((u >> 23) & 0xff);
    mant = (int32_t)(u & 0x7fffff);
    if (e == 0xff)
        return {nar};
    if (e == 0)
        e = 1;
    else
        mant |= 0x800000;
    if (u >> 31)
        mant = -mant;
    return {from_fixed};
}}

/* posit<{n_out}, {es_out}> -> float: sign, regime, exponent and fraction fields. */
static float minun_dequantize_output(minun_output_t s)
{{
    uint32_t p = (uint32_t)s & {hex((1 << n_out) - 1)}u, one = 1;
    int i = {n_out - 2}, run = 0, k, e = 0, j, neg = (int)(p >> {n_out - 1});
    uint32_t r0;
    float f = 1.0f, w = 0.5f;
    if (p == 0)
        return 0.0f;
    if (p == (one << {n_out - 1}))
        return NAN;
    if (neg)
        p = (0u - p) & {hex((1 << n_out) - 1)}u;
    r0 = (p >> i) & 1;
    while (i >= 0 && ((p >> i) & 1) == r0) {{
        run++;
        i--;
    }}
    k = r0 ? run - 1 : -run;
    i--; /* the regime's terminating bit */
    for (j = 0; j < {es_out}; j++) {{
        e <<= 1;
        if (i >= 0)
            e |= (int)((p >> i--) & 1);
    }}
    for (; i >= 0; i--) {{
        if ((p >> i) & 1)
            f += w;
        w *= 0.5f;
    }}
    f = ldexpf(f, k * {1 << es_out} + e);
    return neg ? -f : f;
}}

int minun_predict_float(const float *x, float *scores)
{{
    minun_input_t q[MINUN_INPUT_SIZE];
    minun_output_t s[MINUN_OUTPUT_SIZE];
    int i, label;
    for (i = 0; i < MINUN_INPUT_SIZE; i++)
        q[i] = minun_quantize_input(x[i]);
    label = minun_predict(q, s);
    for (i = 0; i < MINUN_OUTPUT_SIZE; i++)
        scores[i] = minun_dequantize_output(s[i]);
    return label;
}}
"""


_SIGNATURE = re.compile(r"(static )?(.*?)(\w+)\((.*)\)")


def functions(text: str, needs: tuple[str, ...] = ()) -> list[cemit.FuncOp]:
    """C function definitions, each after its comment if any, separated by blank lines
    -> cemit.func ops (statements: cemit.verbatim lines), the first `needs` the runtime
    helpers (or math.h) the functions call."""
    out: list[cemit.FuncOp] = []
    for chunk in text.strip("\n").split("\n\n") if text else ():
        lines = chunk.split("\n")
        k = lines.index("{")
        m = _SIGNATURE.fullmatch(lines[k - 1])
        if m is None or lines[-1] != "}" or any(not x.startswith("    ") for x in lines[k + 1:-1]):
            raise error(f"C interface: not a function definition: {lines[k - 1]}")
        static, result, name, params = m.groups()
        body = Region(Block([cemit.VerbatimOp.create(
            attributes={"text": StringAttr(x[4:])}) for x in lines[k + 1:-1]]))
        attrs = {"sym_name": StringAttr(name), "result": cemit.OpaqueType(result.strip()),
                 "params": ArrayAttr([StringAttr(p) for p in params.split(", ")
                                      if p != "void"])}
        if static:
            attrs["static"] = UnitAttr()
        if k > 1:
            attrs["comment"] = StringAttr("\n".join(lines[:k - 1]))
        if needs and not out:
            attrs["needs"] = ArrayAttr([StringAttr(n) for n in needs])
        out.append(cemit.FuncOp.create(attributes=attrs, regions=[body]))
    return out


def abi_functions(fn: cemit.FuncOp) -> list[cemit.FuncOp]:
    """The functions beside the model's function `fn` (module docstring)."""
    m = model_info(fn)
    needs: list[str] = []
    if m.input_type != "float" and not m.bf16:
        needs.append("math.h")  # floorf, round, ldexpf, NAN
    if m.input_posit or m.output_posit:
        needs.append("minun_posit")
    if m.bf16:
        needs.append("minun_bf16")
    return functions(in_place_api(m) + uint8_api(m)) + \
        functions(float_wrapper(m), tuple(needs))
