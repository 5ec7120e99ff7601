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
    AVR_ASR32,
    HELPERS,
    LIBM,
    PROFILES,
    Profile,
    avr_dot8_helper,
    avr_dot_helper,
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
        self.plain = False  # inside the #else of a DSP kernel: the portable loops only
        # the function's statements: (first, last) lines of model.c (1-based) and the op's
        # location, for a per-layer profile (minun_mlir/profile.py); filled by module()
        self.statement_lines: list[tuple[int, int, Attribute]] = []
        self.statements: dict[type, Callable[[Operation], None]] = {
            cemit.DeclOp: self.decl, cemit.AssignOp: self.assign, cemit.StoreOp: self.store,
            cemit.ForOp: self.for_, cemit.IfOp: self.if_, cemit.ReturnOp: self.return_,
            cemit.VerbatimOp: self.verbatim, cemit.CallStmtOp: self.call_stmt,
        }
        self.expressions: dict[type, Callable[[Operation], str]] = {
            cemit.LiteralOp: self.literal, cemit.RefOp: self.ref, cemit.LoadOp: self.load,
            cemit.BinaryOp: self.binary, cemit.UnaryOp: self.unary, cemit.CastOp: self.cast,
            cemit.CondOp: self.cond, cemit.CallOp: self.call,
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
        before = model_c[:model_c.index(body[list(module.ops).index(fns[0])])]
        at = before.count("\n") + 1  # model.c's line of the function's first line
        self.statement_lines = [(at + a, at + b, loc) for a, b, loc in self.statement_lines]
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
        top = self.depth == 1
        for op in cemit.statements(region):
            method = self.statements.get(type(op))
            if method is None:
                raise error(f"C printer: {op.name} is not a statement")
            first = len(self.lines)
            method(op)
            if top:
                self.statement_lines.append((first, len(self.lines) - 1, op.location))
        self.depth -= 1

    # -- statements ----------------------------------------------------------------------

    def decl(self, op: cemit.DeclOp) -> None:
        const = "const " if op.is_const is not None else ""
        self.line(f"{const}{ctype(op.init.type)} {op.var.data} = {self.expr(op.init)};")

    def assign(self, op: cemit.AssignOp) -> None:
        if self.profile.avr_asm:
            mac = _mac_operands(op)
            if mac is not None:
                self.calls.add("minun_mac16")
                a, b = (_bare(self.expr(v)) for v in mac)
                self.line(f"{op.var.data} = minun_mac16({op.var.data}, {a}, {b});")
                return
        self.line(f"{op.var.data} = {self.expr(op.value)};")

    def store(self, op: cemit.StoreOp) -> None:
        self.line(f"{op.array.data}[{self.expr(op.index)}] = {self.expr(op.value)};")

    def for_(self, op: cemit.ForOp) -> None:
        if self.profile.cortex_m and (not self.plain and (self.smlad_rows(op) or
                                                           self.smlad_loop(op)) or
                                      self.guarded_loop(op)):
            return
        if self.profile.sse2 and (self.split_rows(op) or self.sse2_dot_loop(op)):
            return
        if self.profile.avr_asm and (self.avr_dot_loop(op) or self.avr_dot8_loop(op) or
                                     self.avr_scatter_loop(op) or self.guarded_loop(op)):
            return
        v = op.var.data
        self.line(f"for (int {v} = {self.expr(op.lower)}; {v} < {self.expr(op.upper)}; {v}++) {{")
        self.region(op.body)
        self.line("}")

    def avr_dot_loop(self, op: cemit.ForOp) -> bool:
        """`for (...) acc = acc + (int32_t)a[e + k*i] * (int32_t)b[f + l*i];` over int16_t
        arrays, at most one in program memory: one asm loop (minun_dot16_*: pointers with
        post-increment, the multiply-accumulate in registers, a down counter)."""
        dot = _dot_loop(op)
        if dot is None:
            return False
        stmt, loads = dot
        if loads[0][0].flash is None and loads[1][0].flash is not None:
            loads = loads[::-1]
        if loads[1][0].flash is not None:
            return False
        (la, ka), (lb, kb) = loads
        name = avr_dot_helper(la.flash is not None, ka, kb)
        return self.dot_call(op, stmt, name, la, lb)

    def dot_call(self, op: cemit.ForOp, stmt, name: str, la, lb) -> bool:
        """The loop `op` as one call `acc = name(acc, &a[..], &b[..], n)` of an asm dot
        product helper (its induction variable declared for the index expressions)."""
        self.calls.add(name)
        v, acc = op.var.data, stmt.var.data
        lo, hi = _bare(self.expr(op.lower)), self.expr(op.upper)
        self.line("{")
        self.depth += 1
        self.line(f"const int {v} = {lo};")
        self.line(f"{acc} = {name}({acc}, &{la.array.data}[{_bare(self.expr(la.index))}], "
                  f"&{lb.array.data}[{_bare(self.expr(lb.index))}], {hi} - {v});")
        self.depth -= 1
        self.line("}")
        return True

    def avr_dot8_loop(self, op: cemit.ForOp) -> bool:
        """`for (...) acc = (int32_t)((uint32_t)acc + (uint32_t)((int32_t)a[e + i] *
        (int32_t)b[f + i]));` over int8_t arrays (per-channel 8-bit weights summed in 32
        bits), at most one in program memory: one minun_dot8_* asm loop."""
        dot = _dsp_dot(op)
        if dot is None or dot[2] != "minun_dot8_dsp" or ctype(dot[0].value.type) != "int32_t":
            return False
        stmt, loads, _ = dot
        if loads[0].flash is None and loads[1].flash is not None:
            loads = loads[::-1]
        if loads[1].flash is not None:
            return False
        la, lb = loads
        name = avr_dot8_helper(la.flash is not None)
        return self.dot_call(op, stmt, name, la, lb)

    def guarded_dot(self, op: cemit.ForOp):
        """A dot product whose every product is guarded by one condition that does not
        change in the loop (a convolution's padding test on the channel loop):
        `{ const int v = ...; int32_t r = 0; if (c) { r = a[..] * b[..]; } else { r = 0; }
        acc = acc + r; }`: (invariant declarations, the if, acc, the product's value, the
        loads with their strides), or None. When c is false every product is 0 and acc
        is unchanged, so the test can be made once, before the loop."""
        body = cemit.statements(op.body)
        v = op.var.data
        if len(body) < 3 or not isinstance(body[-1], cemit.AssignOp) or \
                not isinstance(body[-2], cemit.IfOp) or not isinstance(body[-3], cemit.DeclOp):
            return None
        decls, r_decl, guard, acc_stmt = body[:-3], body[-3], body[-2], body[-1]
        if not all(isinstance(d, cemit.DeclOp) and d.is_const is not None and
                   not _mentions(d.init, v) for d in decls):
            return None
        r = r_decl.var.data
        if not _is_zero(r_decl.init) or _mentions(guard.cond, v) or r == v:
            return None
        then, other = cemit.statements(guard.then), cemit.statements(guard.other)
        if len(then) != 1 or not isinstance(then[0], cemit.AssignOp) or \
                then[0].var.data != r or len(other) > 1:
            return None
        if other and not (isinstance(other[0], cemit.AssignOp) and other[0].var.data == r
                          and _is_zero(other[0].value)):
            return None
        product = then[0].value
        acc = acc_stmt.var.data
        if acc in (r, v):
            return None
        wrapped = _uncast(acc_stmt.value, ctype(acc_stmt.value.type))
        add = (wrapped or acc_stmt.value).owner
        if not isinstance(add, cemit.BinaryOp) or add.op.data != "+":
            return None
        operands = [_uncast(x, ctype(add.result.type)) if wrapped is not None else x
                    for x in (add.lhs, add.rhs)]
        refs = [x.owner.var.data for x in operands
                if x is not None and isinstance(x.owner, cemit.RefOp)]
        if sorted(refs) != sorted([acc, r]):
            return None
        factors = _product16(product)
        loads = None if factors is None or ctype(acc_stmt.value.type) != "int32_t" else \
            [_strided16(f, v) for f in factors]
        if loads is not None and any(x is None for x in loads):
            loads = None
        return decls, guard, r_decl, product, acc_stmt, loads

    def guarded_loop(self, op: cemit.ForOp) -> bool:
        """The guarded dot product (guarded_dot) with its test before the loop: on AVR, for
        int16_t arrays (at most one in flash) and an int32_t sum, one minun_dot16_* call;
        otherwise the loop of products and additions without the test."""
        found = self.guarded_dot(op)
        if found is None:
            return False
        decls, guard, r_decl, product, acc_stmt, loads = found
        v, acc = op.var.data, acc_stmt.var.data
        if loads is not None and loads[0][0].flash is None and loads[1][0].flash is not None:
            loads = loads[::-1]
        asm = self.profile.avr_asm and loads is not None and loads[1][0].flash is None
        self.line("{")
        self.depth += 1
        for d in decls:
            self.decl(d)
        self.line(f"if ({_bare(self.expr(guard.cond))}) {{")
        self.depth += 1
        lo, hi = _bare(self.expr(op.lower)), self.expr(op.upper)
        if asm:
            (la, ka), (lb, kb) = loads
            name = avr_dot_helper(la.flash is not None, ka, kb)
            self.calls.add(name)
            self.line(f"const int {v} = {lo};")
            self.line(f"{acc} = {name}({acc}, &{la.array.data}[{_bare(self.expr(la.index))}], "
                      f"&{lb.array.data}[{_bare(self.expr(lb.index))}], {hi} - {v});")
        else:
            self.line(f"for (int {v} = {lo}; {v} < {_bare(hi)}; {v}++) {{")
            self.depth += 1
            self.line(f"const {ctype(r_decl.init.type)} {r_decl.var.data} = "
                      f"{_bare(self.expr(product))};")
            self.line(f"{acc} = {_bare(self.expr(acc_stmt.value))};")
            self.depth -= 1
            self.line("}")
        self.depth -= 1
        self.line("}")
        self.depth -= 1
        self.line("}")
        return True

    def avr_scatter_loop(self, op: cemit.ForOp) -> bool:
        """A column of a sparse matrix (compressed) times one input, as lower-to-loops
        writes it: `{ const int r = rows[e + i]; y[r + f] = y[r + f] + vals[g + i] * xv; }`
        with rows (int8_t) and vals (int16_t) in program memory, y int32_t: one asm loop
        (minun_scatter16)."""
        body = cemit.statements(op.body)
        if len(body) != 2 or not isinstance(body[0], cemit.DeclOp) or \
                not isinstance(body[1], cemit.StoreOp):
            return False
        decl, store = body
        v, r = op.var.data, decl.var.data
        rows = decl.init
        while isinstance(rows.owner, cemit.CastOp) and \
                ctype(rows.type) in ("int", "int16_t", "int32_t"):
            rows = rows.owner.input
        load = rows.owner
        if not (isinstance(load, cemit.LoadOp) and load.flash is not None and
                ctype(load.result.type) == "int8_t" and _coefficient(load.index, v) == 1):
            return False
        if ctype(store.value.type) != "int32_t" or _coefficient(store.index, r) != 1 or \
                _mentions(store.index, v):
            return False
        y_index = self.expr(store.index)

        def is_acc(x: SSAValue) -> bool:
            acc = x.owner
            return isinstance(acc, cemit.LoadOp) and acc.array.data == store.array.data \
                and self.expr(acc.index) == y_index

        factors = _accumulation(store.value, is_acc)
        if factors is None:
            return False
        vals = [f for f in factors if _strided16(f, v) is not None and
                f.owner.flash is not None and _strided16(f, v)[1] == 1]
        if not vals:
            return False
        xv = factors[1] if factors[0] is vals[0] else factors[0]
        if _mentions(xv, v) or _mentions(xv, r) or ctype(xv.type) not in ("int16_t", "int8_t"):
            return False
        index = store.index.owner
        offset = "0"
        if isinstance(index, cemit.BinaryOp):
            free = index.rhs if _mentions(index.lhs, r) else index.lhs
            offset = _bare(self.expr(free))
        self.calls.add("minun_scatter16")
        lo, hi = _bare(self.expr(op.lower)), self.expr(op.upper)
        self.line("{")
        self.depth += 1
        self.line(f"const int {v} = {lo};")
        self.line(f"minun_scatter16(&{store.array.data}[{offset}], "
                  f"&{load.array.data}[{_bare(self.expr(load.index))}], "
                  f"&{vals[0].owner.array.data}[{_bare(self.expr(vals[0].owner.index))}], "
                  f"{_bare(self.expr(xv))}, {hi} - {v});")
        self.depth -= 1
        self.line("}")
        return True

    def smlad_rows(self, op: cemit.ForOp) -> bool:
        """A loop over the rows of a convolution's window whose body is one SMLAD dot
        product (smlad_loop) over a count and start that do not depend on the row, each
        array advancing by a constant stride per row: `{ acc2 = acc; [invariant
        declarations] for (j...) acc2 = acc2 + a[e + k*ky + j] * b[f + l*ky + j]; acc =
        acc2; }`. On the DSP cores, one minun_dot*_rows_dsp call walks the rows with
        pointers (no index arithmetic per row); the loop as it is otherwise (#else)."""
        body = cemit.statements(op.body)
        if len(body) < 3:
            return False
        first, decls, inner, last = body[0], body[1:-2], body[-2], body[-1]
        ky = op.var.data
        if not (isinstance(first, cemit.DeclOp) and first.is_const is None and
                isinstance(first.init.owner, cemit.RefOp) and isinstance(inner, cemit.ForOp)
                and isinstance(last, cemit.AssignOp) and
                isinstance(last.value.owner, cemit.RefOp)):
            return False
        outer, acc = first.init.owner.var.data, first.var.data
        if last.var.data != outer or last.value.owner.var.data != acc:
            return False
        if not all(isinstance(d, cemit.DeclOp) and d.is_const is not None and
                   not _mentions(d.init, ky) for d in decls):
            return False
        found = _dsp_dot(inner)
        if found is None or found[0].var.data != acc or _mentions(inner.lower, ky) or \
                _mentions(inner.upper, ky):
            return False
        stmt, loads, name = found
        strides = [_coefficient(load.index, ky) for load in loads]
        if any(k is None for k in strides):
            return False
        rows = name.replace("_dsp", "_rows_dsp")
        self.calls.add(rows)
        j = inner.var.data
        self.lines.append("#if defined(__ARM_FEATURE_DSP)")
        self.line("{")
        self.depth += 1
        for d in decls:
            self.decl(d)
        self.line(f"const int {ky} = {_bare(self.expr(op.lower))};")
        self.line(f"const int {j} = {_bare(self.expr(inner.lower))};")
        args = ", ".join(f"&{load.array.data}[{_bare(self.expr(load.index))}], {k}"
                         for load, k in zip(loads, strides))
        call = (f"{rows}({outer}, {args}, {self.expr(inner.upper)} - {j}, "
                f"{self.expr(op.upper)} - {ky})")
        if ctype(stmt.value.type) != "int32_t":
            call = f"({ctype(stmt.value.type)}){call}"
        self.line(f"{outer} = {call};")
        self.depth -= 1
        self.line("}")
        self.lines.append("#else")
        v = op.var.data
        self.line(f"for (int {v} = {self.expr(op.lower)}; {v} < {self.expr(op.upper)}; "
                  f"{v}++) {{")
        self.plain = True  # the portable loops, without the DSP kernels
        self.region(op.body)
        self.plain = False
        self.line("}")
        self.lines.append("#endif")
        return True

    def smlad_loop(self, op: cemit.ForOp) -> bool:
        """`for (...) acc = acc + (int32_t)a[e + i] * (int32_t)b[f + i];` over int16_t
        arrays (minun_dot16_dsp), or over int8_t arrays with an int32_t or an int16_t sum
        (minun_dot8_dsp, the int16_t sum being the low half of the int32_t one): on cores
        with the DSP extension (Cortex-M4/M7), one call to a loop of SMLADs on pairs of
        neighbouring elements; the sum is the same modulo 2^32 (SMLAD wraps like the C).
        Other cores compile the loop as it is (#else)."""
        found = _dsp_dot(op)
        if found is None:
            return False
        stmt, loads, name = found
        v, acc = op.var.data, stmt.var.data
        self.calls.add(name)
        ptrs = ", ".join(f"&{load.array.data}[{_bare(self.expr(load.index))}]"
                         for load in loads)
        call = f"{name}({acc}, {ptrs}, {self.expr(op.upper)} - {v})"
        if ctype(stmt.value.type) != "int32_t":
            call = f"({ctype(stmt.value.type)}){call}"
        self.kernel_or_loop(op, "__ARM_FEATURE_DSP", f"{acc} = {call};")
        return True

    def kernel_or_loop(self, op: cemit.ForOp, feature: str, statement: str) -> None:
        """`statement` (a kernel call standing for the whole loop, the loop variable set to
        its first value) where the target has `feature`, the loop as it is otherwise."""
        v, lo, hi = op.var.data, self.expr(op.lower), self.expr(op.upper)
        self.lines.append(f"#if defined({feature})")
        self.line("{")
        self.depth += 1
        self.line(f"const int {v} = {_bare(lo)};")
        self.line(statement)
        self.depth -= 1
        self.line("}")
        self.lines.append("#else")
        self.line(f"for (int {v} = {lo}; {v} < {hi}; {v}++) {{")
        self.region(op.body)
        self.line("}")
        self.lines.append("#endif")

    def split_rows(self, op: cemit.ForOp) -> bool:
        """x86: a loop over rows whose body computes dot products (`acc = 0;` then a
        stride-1 dot loop into acc) and then uses them (rescales, stores) runs as two
        loops: every row's dot products into local arrays, then the rest, which the
        compiler can vectorise across rows. Only with constant bounds, a flat body
        (declarations, stores, assignments), dot loops that read no variable the rest
        declares or assigns, and no element a dot product reads stored by the rest
        (interval test on the affine indices), so every value is the same."""
        bounds = _int_literal(op.lower), _int_literal(op.upper)
        if None in bounds or not 2 <= bounds[1] - bounds[0] <= 4096:
            return False
        lo, hi = bounds
        v = op.var.data
        body = cemit.statements(op.body)
        pairs, rest = [], []
        k = 0
        while k < len(body):
            s = body[k]
            nxt = body[k + 1] if k + 1 < len(body) else None
            if (isinstance(s, cemit.DeclOp) and s.is_const is None
                    and _int_literal(s.init) == 0 and isinstance(nxt, cemit.ForOp)):
                dot = _dot_loop(nxt)
                if dot is not None and dot[0].var.data == s.var.data and \
                        all(stride == 1 for _, stride in dot[1]):
                    pairs.append((s, nxt, dot[1]))
                    k += 2
                    continue
            if not isinstance(s, (cemit.DeclOp, cemit.StoreOp, cemit.AssignOp)):
                return False
            rest.append(s)
            k += 1
        if not pairs:
            return False
        accs = {d.var.data for d, _, _ in pairs}
        local = {s.var.data for s in rest if isinstance(s, (cemit.DeclOp, cemit.AssignOp))}
        if accs & {s.var.data for s in rest if isinstance(s, cemit.AssignOp)}:
            return False
        known = {v: (lo, hi - 1)}
        reads = []
        for _, loop, loads in pairs:
            if any(_mentions(x, name) for name in local
                   for x in (loop.lower, loop.upper, *(ld.index for ld, _ in loads))):
                return False
            first, last = _interval(loop.lower, known), _interval(loop.upper, known)
            inner = {**known, loop.var.data: (first[0], last[1] - 1)} \
                if first is not None and last is not None else known
            reads += [(ld.array.data, ld.index, inner, ctype(ld.result.type))
                      for ld, _ in loads]
        writes = [(st.array.data, st.index, known, ctype(st.value.type))
                  for st in rest if isinstance(st, cemit.StoreOp)]
        for wa, wi, wk, wt in writes:
            for ra, ri, rk, rt in reads:
                if _memory(wa) != _memory(ra):
                    continue
                w, r = _bytes(wa, wi, wk, wt), _bytes(ra, ri, rk, rt)
                if w is None or r is None or not (w[1] < r[0] or r[1] < w[0]):
                    return False
        n = hi - lo
        row = v if lo == 0 else f"{v} - {lo}"
        self.line("{")
        self.depth += 1
        for decl, _, _ in pairs:
            self.line(f"{ctype(decl.init.type)} {decl.var.data}_rows[{n}];")
        self.line(f"for (int {v} = {lo}; {v} < {hi}; {v}++) {{")
        self.depth += 1
        for decl, loop, _ in pairs:
            self.decl(decl)
            self.for_(loop)
            self.line(f"{decl.var.data}_rows[{row}] = {decl.var.data};")
        self.depth -= 1
        self.line("}")
        self.line(f"for (int {v} = {lo}; {v} < {hi}; {v}++) {{")
        self.depth += 1
        for decl, _, _ in pairs:
            self.line(f"const {ctype(decl.init.type)} {decl.var.data} = "
                      f"{decl.var.data}_rows[{row}];")
        for s in rest:
            self.statements[type(s)](s)
        self.depth -= 1
        self.line("}")
        self.depth -= 1
        self.line("}")
        return True

    def sse2_dot_loop(self, op: cemit.ForOp) -> bool:
        """`for (...) acc = acc + (int32_t)a[e + i] * (int32_t)b[f + i];` over int16_t
        arrays, on x86: one minun_dot16_sse2 call (eight products per PMADDWD; the same sum
        modulo 2^32). Without SSE2 the loop compiles as it is (#else)."""
        dot = _dot_loop(op)
        if dot is None or any(k != 1 for _, k in dot[1]):
            return False
        stmt, v = dot[0], op.var.data
        ptrs = [f"&{load.array.data}[{_bare(self.expr(load.index))}]" for load, _ in dot[1]]
        self.calls.add("minun_dot16_sse2")
        acc, hi = stmt.var.data, _bare(self.expr(op.upper))
        self.kernel_or_loop(op, "__SSE2__",
                            f"{acc} = minun_dot16_sse2({ptrs[0]}, {ptrs[1]}, {hi} - {v}, {acc});")
        return True

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
        if self.profile.avr_asm:
            factors = _product16(op.result)
            if factors is not None:
                self.calls.add("minun_mul16")
                a, b = (_bare(self.expr(v)) for v in factors)
                return f"minun_mul16({a}, {b})"
            n = _shift_count(op)
            if ctype(op.result.type) == "int32_t" and n in AVR_ASR32:
                self.calls.add(f"minun_asr32_{n}")
                return f"minun_asr32_{n}({_bare(self.expr(op.lhs))})"
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


# -- patterns the profiles print with target kernels (c_runtime.py) ----------------------


def _narrow16(v: SSAValue) -> SSAValue | None:
    """e when v is `(int32_t)e` of an 8- or 16-bit signed e (exact as an int16_t)."""
    op = v.owner
    if isinstance(op, cemit.CastOp) and ctype(op.result.type) == "int32_t" and \
            ctype(op.input.type) in ("int16_t", "int8_t"):
        return op.input
    return None


def _product16(v: SSAValue) -> tuple[SSAValue, SSAValue] | None:
    """(a, b) when v is `(int32_t)a * (int32_t)b` of 16-bit a and b (never overflows)."""
    op = v.owner
    if isinstance(op, cemit.BinaryOp) and op.op.data == "*" and \
            ctype(op.result.type) == "int32_t":
        a, b = _narrow16(op.lhs), _narrow16(op.rhs)
        if a is not None and b is not None:
            return a, b
    return None


def _shift_count(op: cemit.BinaryOp) -> int | None:
    rhs = op.rhs.owner
    if op.op.data == ">>" and isinstance(rhs, cemit.LiteralOp) and \
            isinstance(rhs.value, IntegerAttr):
        return rhs.value.value.data
    return None


def _uncast(v: SSAValue, spelling: str) -> SSAValue | None:
    op = v.owner
    if isinstance(op, cemit.CastOp) and ctype(op.result.type) == spelling:
        return op.input
    return None


def _mac_operands(op: cemit.AssignOp) -> tuple[SSAValue, SSAValue] | None:
    """(a, b) when the statement is `acc = acc + (int32_t)a * (int32_t)b` on an int32_t
    acc, exact (nsw) or modular (`(int32_t)((uint32_t)acc + (uint32_t)(...))`)."""
    def is_acc(v: SSAValue) -> bool:
        return isinstance(v.owner, cemit.RefOp) and v.owner.var.data == op.var.data

    return _accumulation(op.value, is_acc)


def _accumulation(value: SSAValue, is_acc) -> tuple[SSAValue, SSAValue] | None:
    """(a, b) when value is `acc + (int32_t)a * (int32_t)b` of int32_t, exact or modular,
    with is_acc(acc)."""
    wrapped = _uncast(value, "int32_t")
    modular = wrapped is not None
    if modular:
        value = wrapped
    add = value.owner
    if not (isinstance(add, cemit.BinaryOp) and add.op.data == "+" and
            ctype(add.result.type) == ("uint32_t" if modular else "int32_t")):
        return None
    lhs, rhs = add.lhs, add.rhs
    if modular:
        lhs, rhs = _uncast(lhs, "uint32_t"), _uncast(rhs, "uint32_t")
        if lhs is None or rhs is None:
            return None
    for acc, prod in ((lhs, rhs), (rhs, lhs)):
        if ctype(acc.type) == "int32_t" and is_acc(acc):
            factors = _product16(prod)
            if factors is not None:
                return factors
    return None


def _is_zero(v: SSAValue) -> bool:
    lit = v.owner
    return isinstance(lit, cemit.LiteralOp) and isinstance(lit.value, IntegerAttr) and \
        lit.value.value.data == 0


def _int_literal(v: SSAValue) -> int | None:
    op = v.owner
    while isinstance(op, cemit.CastOp):
        op = op.input.owner
    if isinstance(op, cemit.LiteralOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def _interval(v: SSAValue, known: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    """The least and greatest value of an integer expression over the variables' ranges
    in `known` (None for anything else: a load, an unknown variable, a division)."""
    op = v.owner
    c = _int_literal(v)
    if c is not None:
        return c, c
    if isinstance(op, cemit.CastOp):
        return _interval(op.input, known)
    if isinstance(op, cemit.RefOp):
        return known.get(op.var.data)
    if isinstance(op, cemit.BinaryOp) and op.op.data in "+-*":
        a, b = _interval(op.lhs, known), _interval(op.rhs, known)
        if a is None or b is None:
            return None
        if op.op.data == "+":
            return a[0] + b[0], a[1] + b[1]
        if op.op.data == "-":
            return a[0] - b[1], a[1] - b[0]
        products = [x * y for x in a for y in b]
        return min(products), max(products)
    return None


_CTYPE_BYTES = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4,
                "uint32_t": 4, "int64_t": 8, "float": 4}


def _memory(array: str) -> str:
    """The object an array name lives in: the scratch union's members share one."""
    return array.split(".")[0]


def _bytes(array: str, index: SSAValue, known: dict[str, tuple[int, int]], element: str
           ) -> tuple[int, int] | None:
    """The byte range of `array[index]` over the variables' ranges (None: unknown)."""
    span = _interval(index, known)
    size = _CTYPE_BYTES.get(element)
    if span is None or size is None:
        return None
    return span[0] * size, span[1] * size + size - 1


def _mentions(v: SSAValue, var: str) -> bool:
    op = v.owner
    if isinstance(op, cemit.RefOp):
        return op.var.data == var
    return isinstance(op, cemit.ExpressionOp) and any(_mentions(o, var) for o in op.operands)


def _coefficient(v: SSAValue, var: str) -> int | None:
    """k when the index expression v is e + k * var with e free of var, else None."""
    op = v.owner
    if not _mentions(v, var):
        return 0
    if isinstance(op, cemit.RefOp):
        return 1
    if isinstance(op, cemit.BinaryOp) and op.op.data in "+-":
        a, b = _coefficient(op.lhs, var), _coefficient(op.rhs, var)
        if a is None or b is None:
            return None
        return a + b if op.op.data == "+" else a - b
    if isinstance(op, cemit.BinaryOp) and op.op.data == "*":
        for k, e in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            lit = k.owner
            if isinstance(lit, cemit.LiteralOp) and isinstance(lit.value, IntegerAttr):
                c = _coefficient(e, var)
                return None if c is None else lit.value.value.data * c
    return None


def _strided16(v: SSAValue, var: str) -> tuple[cemit.LoadOp, int] | None:
    """(load, k) when v loads an int16_t array at e + k * var (e free of var)."""
    load = v.owner
    if not (isinstance(load, cemit.LoadOp) and ctype(load.result.type) == "int16_t"):
        return None
    k = _coefficient(load.index, var)
    return None if k is None else (load, k)


def _dot_loop(op: cemit.ForOp) -> tuple[cemit.AssignOp, list[tuple[cemit.LoadOp, int]]] | None:
    """A loop whose body is one `acc = acc + (int32_t)a[...] * (int32_t)b[...]` over
    int16_t arrays indexed affinely in the loop variable: the statement, the two loads
    and their strides."""
    body = cemit.statements(op.body)
    if len(body) != 1 or not isinstance(body[0], cemit.AssignOp):
        return None
    stmt, v = body[0], op.var.data
    factors = _mac_operands(stmt)
    if factors is None or stmt.var.data == v:
        return None
    loads = [_strided16(f, v) for f in factors]
    if any(x is None for x in loads):
        return None
    return stmt, loads  # type: ignore[return-value]


def _dsp_dot(op: cemit.ForOp) -> tuple[cemit.AssignOp, list[cemit.LoadOp], str] | None:
    """(statement, loads, kernel) when the loop's body is one `acc = acc + a[e + i] *
    b[f + i]` (stride 1): int16_t arrays with an int32_t sum (exact or modular), or
    int8_t arrays whose exact product is added to an int32_t or int16_t sum modulo its
    width."""
    dot = _dot_loop(op)
    if dot is not None:
        if all(k == 1 for _, k in dot[1]):
            return dot[0], [load for load, _ in dot[1]], "minun_dot16_dsp"
        return None
    body = cemit.statements(op.body)
    if len(body) != 1 or not isinstance(body[0], cemit.AssignOp):
        return None
    stmt, v = body[0], op.var.data
    acc_t = ctype(stmt.value.type)
    if stmt.var.data == v or acc_t not in ("int32_t", "int16_t"):
        return None
    add = _uncast(stmt.value, acc_t)
    if add is None or not (isinstance(add.owner, cemit.BinaryOp) and add.owner.op.data == "+"):
        return None
    wide = ctype(add.type)
    if wide not in ("unsigned", "uint32_t"):
        return None
    terms = [_uncast(t, wide) for t in (add.owner.lhs, add.owner.rhs)]
    if any(t is None for t in terms):
        return None
    for acc, prod in (terms, terms[::-1]):
        if not (isinstance(acc.owner, cemit.RefOp) and acc.owner.var.data == stmt.var.data):
            continue
        mul = prod.owner
        if not (isinstance(mul, cemit.BinaryOp) and mul.op.data == "*" and
                ctype(mul.result.type) in ("int16_t", "int32_t", "int")):
            return None
        loads = []
        for f in (mul.lhs, mul.rhs):
            while isinstance(f.owner, cemit.CastOp) and \
                    ctype(f.type) in ("int16_t", "int32_t", "int"):
                f = f.owner.input
            load = f.owner
            if not (isinstance(load, cemit.LoadOp) and ctype(load.result.type) == "int8_t"
                    and _coefficient(load.index, v) == 1):
                return None
            loads.append(load)
        return stmt, loads, "minun_dot8_dsp"
    return None


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
    """L4 module -> {"model.h": ..., "model.c": ..., "minun_runtime.h": ...}."""
    if profile not in PROFILES:
        raise error(f"unknown C profile '{profile}' (known: "
                         f"{', '.join(PROFILES)})")
    return CPrinter(PROFILES[profile]).module(module, name)


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
