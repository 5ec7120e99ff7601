"""C spelling shared by the printer, the ABI wrappers and the kernel matchers: C types of
cemit types, literals that keep their value on every target (int is 16-bit on AVR),
string literals, and expressions without their outer parentheses."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    IndexType,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute

from minun_mlir.diagnostics import error
from minun_mlir.dialects import cemit


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
    values = arr.tolist()
    if arr.size and -(1 << 15) < arr.min() and arr.max() < 1 << 15:  # all plain ints
        return list(map(str, values))
    return [int_literal(v) for v in values]


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


def bare(text: str) -> str:
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
