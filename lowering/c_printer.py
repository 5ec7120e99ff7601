"""The C printer: L4 (`cemit`) -> model.h, model.c and minun_runtime.h.

A walk with one method per op, like xDSL's WGSL printer: statements print lines,
expressions print strings inside their user. It decides nothing about semantics (that
was lower-to-emitc's job); what it adds is the spelling that depends on the target
profile (program-memory arrays and reads on AVR), the harness contract of model.h
(docs/targets.md) and the float convenience wrapper `minun_predict_float`, which quantizes
the input with the program's rounding mode and saturation, exactly as the evaluator's
input encoding does, and dequantizes the scores.

`minun-opt -t 'c{profile=avr}'` prints the three files one after the other (the target
also accepts L2 or L3 modules and lowers them first); `emit_c` in minun_mlir/codegen.py
writes them to a directory.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.target import Target

from minun_mlir.diagnostics import error
from minun_mlir.dialects import cemit
from minun_mlir.lowering.c_runtime import (
    HELPERS,
    LIBM,
    PROFILES,
    Profile,
    kernel_signature,
    posit_result,
    runtime_header,
    uses_posits,
)
from minun_mlir.numerics.fixed import rounding_in

FILES = ("model.h", "model.c", "minun_runtime.h")
RUNTIME_SOURCES = ("posit.h", "posit.c")  # beside the C of a model that uses posits


def ctype(ty: Attribute) -> str:
    if isinstance(ty, cemit.OpaqueType):
        return ty.spelling.data
    if isinstance(ty, IndexType):
        return "int"
    if isinstance(ty, Float32Type):
        return "float"
    if isinstance(ty, IntegerType):
        w = ty.width.data
        if w == 1:
            return "int"
        if ty.signedness.data == Signedness.UNSIGNED:
            return f"uint{w}_t"
        return f"int{w}_t"
    raise error(f"C printer: no C type for {ty}")


def int_literal(v: int) -> str:
    """A literal whose C type holds the value on every target (int is 16-bit on AVR)."""
    for bits, suffix in ((16, ""), (32, "L"), (64, "LL")):
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        if lo < v <= hi:
            return f"{v}{suffix}"
        if v == lo:
            return f"({lo + 1}{suffix} - 1)"
    raise error(f"C printer: integer {v} does not fit 64 bits")


def float_literal(v: float) -> str:
    """The shortest decimal that reads back as the same float32 (numpy's repr), or
    INFINITY (math.h)."""
    if math.isinf(v):
        return "INFINITY" if v > 0 else "(-INFINITY)"
    if math.isnan(v):
        raise error("C printer: NaN constant")
    text = str(np.float32(v))
    if "." not in text and "e" not in text:
        text += ".0"
    return text + "f"


def dense_values(attr: DenseIntOrFPElementsAttr) -> list[str]:
    from minun_mlir.dialects.minun import dense_to_numpy

    arr = dense_to_numpy(attr).reshape(-1)
    if arr.dtype.kind == "f":
        return [float_literal(float(v)) for v in arr]
    return [int_literal(int(v)) for v in arr]


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
    bf16: bool = False  # bfloat16 input and output (keys, numerics/bfloat16_repr.py)
    input_affine: tuple[float, int] | None = None  # zero-skew (scale, zero point) of the
    output_affine: tuple[float, int] | None = None  # input / output (numerics/affine.py)
    # several inputs, one after another in x: (name, shape text, offset, size, scale)
    inputs: tuple[tuple[str, str, int, int, int | None], ...] = ()
    # the labels of classes 0..n-1 (minun.class_labels): strings, or int32 labels
    class_labels: tuple[str, ...] | tuple[int, ...] = ()
    # "onnxruntime" for a pre-quantized model (minun.requantize): its zero-skew input is
    # quantized as onnxruntime's QuantizeLinear (float32, half to even)
    requantize: str | None = None


def c_string(text: str) -> str:
    """`text` as a C string literal: UTF-8, printable ASCII as is, other bytes as octal
    escapes (three digits, so a following digit cannot extend them)."""
    out = []
    for b in text.encode("utf-8"):
        ch = chr(b)
        if ch in '"\\?':
            out.append("\\" + ch)
        elif 32 <= b < 127:
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


SOFTPOSIT_DIR = Path(__file__).resolve().parents[1] / "third_party" / "softposit"


def posit_runtime() -> dict[str, str]:
    """posit.h and posit.c (third_party/softposit), shipped beside a posit model's C."""
    if not SOFTPOSIT_DIR.is_dir():  # installed (not editable): the package data copy
        raise error(f"the posit runtime is missing: {SOFTPOSIT_DIR}")
    return {f: (SOFTPOSIT_DIR / f).read_text() for f in RUNTIME_SOURCES}


class CPrinter:
    def __init__(self, profile: Profile):
        self.profile = profile
        self.lines: list[str] = []
        self.depth = 0
        self.calls: set[str] = set()
        self.uses_math = False
        self.statements: dict[type, Callable[[Operation], None]] = {
            cemit.DeclOp: self.decl, cemit.AssignOp: self.assign, cemit.StoreOp: self.store,
            cemit.ForOp: self.for_, cemit.IfOp: self.if_, cemit.ReturnOp: self.return_,
            cemit.VerbatimOp: self.verbatim, cemit.CallStmtOp: self.call_stmt,
            cemit.BlockOp: self.block, cemit.TargetIfOp: self.target_if,
            cemit.LocalArrayOp: self.local_array, cemit.KernelStmtOp: self.kernel_stmt,
        }
        self.expressions: dict[type, Callable[[Operation], str]] = {
            cemit.LiteralOp: self.literal, cemit.RefOp: self.ref, cemit.LoadOp: self.load,
            cemit.BinaryOp: self.binary, cemit.UnaryOp: self.unary, cemit.CastOp: self.cast,
            cemit.CondOp: self.cond, cemit.CallOp: self.call, cemit.KernelOp: self.kernel,
            cemit.AddrOp: self.addr, cemit.BareOp: self.bare,
        }

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    # -- file scope --------------------------------------------------------------------

    def module(self, module: ModuleOp, name: str) -> dict[str, str]:
        fns = [op for op in module.ops if isinstance(op, cemit.FuncOp)]
        if len(fns) != 1:
            raise error("C printer: expected one cemit.func (lower to L4 first)")
        model = self.model_info(fns[0])
        body: list[str] = []
        for op in module.ops:
            self.lines = []
            if isinstance(op, cemit.IncludeOp):
                h = op.header.data
                self.line(f"#include <{h}>" if op.system is not None else f'#include "{h}"')
            elif isinstance(op, cemit.VerbatimOp):
                self.line(op.text.data)
            elif isinstance(op, cemit.GlobalOp):
                self.global_(op)
            elif isinstance(op, cemit.ScratchOp):
                self.scratch(op)
            elif isinstance(op, cemit.FuncOp):
                self.func(op)
            else:
                raise error(f"C printer: unexpected {op.name} at file scope")
            body.append("\n".join(self.lines))
        header = (f"/* {name}: generated by minun-mlir ({self.profile.name} profile). "
                  "Do not edit. */\n")
        model_c = header + "\n".join(body[:_first_non_include(module)]) + "\n\n" + \
            "\n\n".join(body[_first_non_include(module):]) + "\n\n" + self.wrapper(model)
        used = {c for c in self.calls if c in HELPERS or c in LIBM}
        unknown = self.calls - used
        if model.input_posit or model.output_posit:  # the float wrapper converts patterns
            used.add("minun_posit")
        if model.bf16:
            used.add("minun_bf16")
        if unknown:
            raise error(f"C printer: unknown functions {sorted(unknown)} called")
        runtime = runtime_header(self.profile, used)
        if self.uses_math and "#include <math.h>" not in runtime:
            runtime = runtime.replace("#include <stdint.h>\n",
                                      "#include <stdint.h>\n#include <math.h>\n", 1)
        files = {"model.h": self.header(model, name), "model.c": model_c,
                 "minun_runtime.h": runtime}
        if uses_posits(used):
            files.update(posit_runtime())
        return files

    def model_info(self, fn: cemit.FuncOp) -> Model:
        a = fn.attributes

        def scale(key: str) -> int | None:
            v = a.get(key)
            return v.value.data if isinstance(v, IntegerAttr) else None

        def posit(key: str) -> tuple[int, int] | None:
            v = a.get(key)
            return tuple(int(t) for t in v.data.split(",")) if v is not None else None

        def affine(key: str) -> tuple[float, int] | None:
            v = a.get(key)
            if v is None:
                return None
            scale, zp = v.data.split(",")
            return float(scale), int(zp)

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
                     scale("minun.input_scale"), scale("minun.output_scale"),
                     rounding_in(fn),
                     a["minun.input_buffer"].data if "minun.input_buffer" in a else None,
                     posit("minun.input_posit"), posit("minun.output_posit"),
                     "minun.input_bf16" in a, affine("minun.input_affine"),
                     affine("minun.output_affine"), tuple(inputs),
                     tuple(x.value.data if isinstance(x, IntegerAttr) else x.data
                           for x in a["minun.class_labels"].data)
                     if "minun.class_labels" in a else (),
                     a["minun.requantize"].data if "minun.requantize" in a else None)

    def global_(self, op: cemit.GlobalOp) -> None:
        t = ctype(op.elem)
        n = op.size.data
        if op.value is None:
            self.line(f"static {t} {op.sym_name.data}[{n}];")
            return
        flash = self.profile.flash_decl() if op.flash is not None else ""
        vals = dense_values(op.value)
        self.line(f"static const {t} {op.sym_name.data}[{n}]{flash} = {{")
        for i in range(0, len(vals), 12):
            self.line("    " + ", ".join(vals[i:i + 12]) + ",")
        self.line("};")

    def scratch(self, op: cemit.ScratchOp) -> None:
        size = op.size.data
        self.line("/* All intermediate tensors, placed by the memory planner. */")
        self.line("static union {")
        for m in op.members.data:
            bytes_ = 4 if isinstance(m, Float32Type) else m.width.data // 8
            name = "f32" if isinstance(m, Float32Type) else f"i{m.width.data}"
            self.line(f"    {ctype(m)} {name}[{size // bytes_}];")
        self.line(f"}} {op.sym_name.data};")

    def func(self, op: cemit.FuncOp) -> None:
        static = "static " if op.is_static is not None else ""
        params = ", ".join(p.data for p in op.params.data) or "void"
        self.line(f"{static}{ctype(op.result)} {op.sym_name.data}({params})")
        self.line("{")
        self.region(op.body)
        self.line("}")

    def region(self, region) -> None:
        self.depth += 1
        for op in cemit.statements(region):
            method = self.statements.get(type(op))
            if method is None:
                raise error(f"C printer: {op.name} is not a statement")
            method(op)
        self.depth -= 1

    # -- statements ----------------------------------------------------------------------

    def decl(self, op: cemit.DeclOp) -> None:
        const = "const " if op.is_const is not None else ""
        self.line(f"{const}{ctype(op.init.type)} {op.var.data} = {self.expr(op.init)};")

    def assign(self, op: cemit.AssignOp) -> None:
        self.line(f"{op.var.data} = {self.expr(op.value)};")

    def store(self, op: cemit.StoreOp) -> None:
        self.line(f"{op.array.data}[{self.expr(op.index)}] = {self.expr(op.value)};")

    def for_(self, op: cemit.ForOp) -> None:
        v = op.var.data
        self.line(f"for (int {v} = {self.expr(op.lower)}; {v} < {self.expr(op.upper)}; {v}++) {{")
        self.region(op.body)
        self.line("}")

    def block(self, op: cemit.BlockOp) -> None:
        self.line("{")
        self.region(op.body)
        self.line("}")

    def target_if(self, op: cemit.TargetIfOp) -> None:
        """`#if defined(F)` at the left margin; both branches at the op's own depth."""
        self.lines.append(f"#if defined({op.feature.data})")
        self.depth -= 1
        self.region(op.then)
        self.lines.append("#else")
        self.region(op.other)
        self.depth += 1
        self.lines.append("#endif")

    def local_array(self, op: cemit.LocalArrayOp) -> None:
        self.line(f"{ctype(op.elem)} {op.var.data}[{op.size.data}];")

    def kernel_stmt(self, op: cemit.KernelStmtOp) -> None:
        self.line(f"{self.kernel(op)};")

    def if_(self, op: cemit.IfOp) -> None:
        self.line(f"if ({_bare(self.expr(op.cond))}) {{")
        self.region(op.then)
        if cemit.statements(op.other):
            self.line("} else {")
            self.region(op.other)
        self.line("}")

    def return_(self, op: cemit.ReturnOp) -> None:
        self.line(f"return {_bare(self.expr(op.value))};" if op.value is not None else "return;")

    def verbatim(self, op: cemit.VerbatimOp) -> None:
        self.line(op.text.data)

    # -- expressions ---------------------------------------------------------------------

    def expr(self, value: SSAValue) -> str:
        op = value.owner
        method = self.expressions.get(type(op))
        if method is None:
            raise error(f"C printer: {value} is not a cemit expression")
        return method(op)

    def literal(self, op: cemit.LiteralOp) -> str:
        v = op.value
        if isinstance(v, FloatAttr):
            text = float_literal(v.value.data)
            if "INFINITY" in text:
                self.uses_math = True
            return text
        return int_literal(v.value.data)

    def ref(self, op: cemit.RefOp) -> str:
        return op.var.data

    def load(self, op: cemit.LoadOp) -> str:
        lvalue = f"{op.array.data}[{self.expr(op.index)}]"
        return self.profile.read(ctype(op.result.type), lvalue) if op.flash is not None \
            else lvalue

    def binary(self, op: cemit.BinaryOp) -> str:
        return f"({self.expr(op.lhs)} {op.op.data} {self.expr(op.rhs)})"

    def unary(self, op: cemit.UnaryOp) -> str:
        x = self.expr(op.input)
        return f"({op.op.data}({x}))" if x[:1] in "-+!~" else f"({op.op.data}{x})"

    def cast(self, op: cemit.CastOp) -> str:
        return f"({ctype(op.result.type)}){self.expr(op.input)}"

    def cond(self, op: cemit.CondOp) -> str:
        return f"({self.expr(op.cond)} ? {self.expr(op.lhs)} : {self.expr(op.rhs)})"

    def call_stmt(self, op: cemit.CallStmtOp) -> None:
        self.calls.add(op.callee.data)
        self.line(f"{op.callee.data}({', '.join(_bare(self.expr(a)) for a in op.args)});")

    def call(self, op: cemit.CallOp) -> str:
        name = op.callee.data
        self.calls.add(name)
        return f"{name}({', '.join(_bare(self.expr(a)) for a in op.args)})"

    def kernel(self, op: cemit.KernelOp | cemit.KernelStmtOp) -> str:
        kernel_signature(op.callee.data)  # registers an AVR dot product read from text
        return self.call(op)

    def addr(self, op: cemit.AddrOp) -> str:
        return f"&{op.array.data}[{_bare(self.expr(op.index))}]"

    def bare(self, op: cemit.BareOp) -> str:
        return _bare(self.expr(op.input))

    # -- model.h and the float wrapper ---------------------------------------------------

    def header(self, m: Model, name: str) -> str:
        scales = ""
        if m.input_scale is not None:
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
int minun_predict_in_place(minun_output_t *out);
"""
        return f"""/* {name}: generated by minun-mlir ({self.profile.name} profile). Do not edit.
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

    def wrapper(self, m: Model) -> str:
        return self.in_place_api(m) + self.float_wrapper(m)

    @staticmethod
    def in_place_api(m: Model) -> str:
        """With the input in scratch: its address, and minun_predict copying x there."""
        if m.input_buffer is None:
            return ""
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

    def float_wrapper(self, m: Model) -> str:
        if m.input_type == "float":  # float32 model: the entry point already takes floats
            return """int minun_predict_float(const float *x, float *scores)
{
    return minun_predict(x, scores);
}
"""
        if m.input_posit is not None or m.output_posit is not None:
            return self.posit_wrapper(m)
        if m.input_affine is not None:
            return self.affine_wrapper(m)
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
        self.uses_math = True
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
        if m.input_buffer is None:
            q_decl, call = "minun_input_t q[MINUN_INPUT_SIZE];", "minun_predict(q, s)"
        else:  # quantized straight into the input buffer: no copy of the input on the stack
            q_decl, call = "minun_input_t *q = minun_input_buffer();", \
                "minun_predict_in_place(s)"
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
    minun_output_t s[MINUN_OUTPUT_SIZE];
    int i, label;
{loops}    label = {call};
    for (i = 0; i < MINUN_OUTPUT_SIZE; i++)
        scores[i] = (float)s[i] * {float_literal(2.0 ** -(m.output_scale or 0))};
    return label;
}}
"""

    @staticmethod
    def quantize_input(m: Model, lo: int, hi: int) -> str:
        """minun_quantize_input: a real to the stored zero-skew input, as the evaluator
        encodes it (numerics/affine.py: quantize, or ort_quantize for a pre-quantized
        model)."""
        s_in, zp_in = m.input_affine
        if m.requantize == "onnxruntime":
            from minun_mlir.numerics.affine import c_ort_quantize

            body = c_ort_quantize("v", s_in, zp_in, 32 if lo < -128 else 8)
            return ("/* Reals -> stored input as onnxruntime's QuantizeLinear: the float32 "
                    f"quotient\n * v / {s_in!r} rounded to nearest even, + {zp_in}, "
                    "saturated, as the evaluator encodes\n * inputs. */\n"
                    "static minun_input_t minun_quantize_input(float v)\n{\n    "
                    + body.replace("\n", "\n    ") + "\n    return (minun_input_t)q;\n}\n")
        return f"""/* Reals -> stored input: round(v / {s_in!r}) + {zp_in} (ties away from zero),
 * saturated, as the evaluator encodes inputs. */
static minun_input_t minun_quantize_input(float v)
{{
    double r = round((double)v / {s_in.hex()});
    if (r < {float(lo - 1 - abs(zp_in))!r})
        r = {float(lo - 1 - abs(zp_in))!r};
    if (r > {float(hi + 1 + abs(zp_in))!r})
        r = {float(hi + 1 + abs(zp_in))!r};
    r += {zp_in};
    return (minun_input_t)(r < {lo} ? {lo} : r > {hi} ? {hi} : r);
}}
"""

    def affine_wrapper(self, m: Model) -> str:
        """Reals <-> zero-skew int8: round(v / scale) + zp (ties away from zero, in double,
        as numerics/affine.quantize), saturated; scores dequantized (an int32 accumulator
        has zero point 0)."""
        self.uses_math = True
        lo, hi = (-128, 127) if m.input_type == "int8_t" else (-(1 << 31), (1 << 31) - 1)
        if m.output_affine is not None:
            s_out, zp_out = m.output_affine
        else:  # an integer output (a label): no scores to scale
            s_out, zp_out = 1.0, 0
        if m.input_buffer is None:
            q_decl, call = "minun_input_t q[MINUN_INPUT_SIZE];", "minun_predict(q, s)"
        else:
            q_decl, call = "minun_input_t *q = minun_input_buffer();", \
                "minun_predict_in_place(s)"
        return self.quantize_input(m, lo, hi) + f"""
int minun_predict_float(const float *x, float *scores)
{{
    {q_decl}
    minun_output_t s[MINUN_OUTPUT_SIZE];
    int i, label;
    for (i = 0; i < MINUN_INPUT_SIZE; i++)
        q[i] = minun_quantize_input(x[i]);
    label = {call};
    for (i = 0; i < MINUN_OUTPUT_SIZE; i++)
        scores[i] = (float)({s_out!r} * ((double)s[i] - {zp_out}));
    return label;
}}
"""

    def posit_wrapper(self, m: Model) -> str:
        """Floats <-> posit patterns: a float32 is the integer m * 2^(e - 150), which the
        runtime's posit_from_fixed rounds once (as the evaluator's encode of the same
        real); a pattern is decoded field by field (exact in a float for n <= 16)."""
        self.uses_math = True
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


def _bare(text: str) -> str:
    """Drop one pair of outer parentheses when they enclose the whole expression."""
    if text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(text) - 1:
                return text
        return text[1:-1]
    return text


def _first_non_include(module: ModuleOp) -> int:
    for i, op in enumerate(module.ops):
        if not isinstance(op, cemit.IncludeOp):
            return i
    return len(list(module.ops))


def print_c(module: ModuleOp, profile: str = "x86", name: str = "model") -> dict[str, str]:
    """L4 module -> {"model.h": ..., "model.c": ..., "minun_runtime.h": ...}. A module
    whose kernels were not selected yet gets select-target-kernels for `profile` first
    (on a copy), so every path to C runs the same pass."""
    if profile not in PROFILES:
        raise error(f"unknown C profile '{profile}' (known: "
                         f"{', '.join(PROFILES)})")
    from minun_mlir.passes.select_target_kernels import MARK, select_target_kernels

    if MARK not in module.attributes:
        module = select_target_kernels(module.clone(), profile)
    elif module.attributes[MARK].data != profile:
        raise error(f"C printer: the module's kernels were selected for "
                    f"{module.attributes[MARK].data}, not {profile}")
    return CPrinter(PROFILES[profile]).module(module, name)


def spell(profile: str) -> Callable[[SSAValue], str]:
    """An expression's C text (for passes that compare expressions as C does)."""
    return CPrinter(PROFILES[profile]).expr


FILE_OPTION = {"header": "model.h", "source": "model.c", "runtime": "minun_runtime.h"}


@dataclass(frozen=True)
class CTarget(Target):
    """`minun-opt -t 'c{profile=avr file=source}'`: the C files of an L4 module (all three,
    each after a `// ----- name -----` line, or one: file=header|source|runtime). The
    input is the output of the pipeline's last stage, lower-to-emitc."""

    name = "c"

    profile: str = "x86"
    file: str = "all"
    model: str = "model"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if self.file != "all" and self.file not in FILE_OPTION:
            raise error(f"-t c: file must be all, {', '.join(FILE_OPTION)}")
        stray = next((op for op in module.ops if not op.name.startswith("cemit.")), None)
        if stray is not None:
            raise error(f"-t c prints L4 (cemit) IR, but the module holds "
                             f"'{stray.name}': run the pipeline through lower-to-emitc first, "
                             "e.g. -p lower-to-loops,memory-plan,lower-to-emitc")
        files = print_c(module, self.profile, self.model)
        if self.file == "all":
            for name in FILES:
                output.write(f"// ----- {name} -----\n{files[name]}")
        else:
            output.write(files[FILE_OPTION[self.file]])
