"""The posit helpers of minun_runtime.h: thin wrappers of third_party/softposit's
integer-only runtime and the quires dot products accumulate in. lowering/c_runtime.py
adds HELPERS to its table (name -> (dependencies, C text for a profile))."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minun_mlir.lowering.c_runtime import Profile

# The integer-only runtime, shipped beside the C of a model that uses posits.
SOFTPOSIT_DIR = Path(__file__).resolve().parents[3] / "third_party" / "softposit"
RUNTIME_SOURCES = ("posit.h", "posit.c")


# Posits (!num.posit<n, es>, minun_mlir/formats/posit/loops.py): thin wrappers of the integer-only
# runtime third_party/softposit/posit.c (shipped with the model's C when it is used), on
# patterns stored in n-bit signed integers. A dot product accumulates in the quire of its
# nesting depth d (1 unless a dot product reads a lazy dot product): only the depths a
# model uses get a quire, each sized for the widest format that uses it (`quire_bytes`:
# the format's words and the NaR flag), and the wrappers name it (no current-quire pointer).
MAX_QUIRE_DEPTH = 4
_QUIRE_WRAPPER = re.compile(r"minun_p(?P<n>\d+)e(?P<es>\d)_(?:qclear|fma|qpop)_(?P<d>\d)")
_POSIT_BASE = """
/* posit<n, es> arithmetic: third_party/softposit (posit.h, posit.c beside this file). */
#include "posit.h"
"""


def quire_words(n: int, es: int) -> int:
    """posit.h's POSIT_QUIRE_WORDS: 32-bit words of the quire of posit<n, es>."""
    return (4 * (n - 2) * (1 << es) + n + 31) // 32


def _quire_formats(names: Iterable[str]) -> dict[int, int]:
    """{depth: words} of the quires that the wrappers in `names` use: each depth's sized
    for the widest format that uses it."""
    words: dict[int, int] = {}
    for name in names:
        m = _QUIRE_WRAPPER.fullmatch(name)
        if m:
            d = int(m["d"])
            words[d] = max(words.get(d, 0), quire_words(int(m["n"]), int(m["es"])))
    return words


def quire_bytes(names: Iterable[str]) -> int:
    """The static RAM the quires of a program calling `names` take: per depth its words
    and the NaR flag byte (avr-gcc's .bss; 32-bit targets may pad each to a word)."""
    return sum(4 * w + 1 for w in _quire_formats(names).values())


def quire_storage(d: int, names: Iterable[str]) -> str:
    w = _quire_formats(names)[d]
    return (f"\n/* The quire of depth {d}: {w} word{'s' if w > 1 else ''} and the NaR flag "
            "(posit.h). */\n"
            f"static struct {{\n    uint32_t w[{w}];\n    uint8_t nar;\n}} minun_quire_{d};\n")


_POSIT_FORMATS = [(n, es) for n in (*range(8, 17), 32) for es in (0, 1, 2)]
# the formats posit.c has per-format entry points for (posit_p16e2_add, ...: n and es are
# constants there, faster than posit_add(a, b, 16, 2), most of all on the AVR)
FAST_FORMATS = frozenset((n, es) for n in (8, 16) for es in (0, 1, 2))


def posit_storage(n: int) -> int:
    """The C integer width a posit<n, es> pattern is stored in, sign-extended from n bits
    (as dialects/num.py's PositType.storage_width)."""
    return 8 if n <= 8 else 16 if n <= 16 else 32


def posit_result(expr: str, n: int) -> str:
    """The runtime's n-bit pattern `expr` (in the low bits of a posit_t) as the stored,
    sign-extended integer."""
    w = posit_storage(n)
    if n == w:
        return f"(int{w}_t){expr}"
    return f"(int{w}_t)((int32_t)((uint32_t){expr} << {32 - n}) >> {32 - n})"


def _posit_wrappers(n: int, es: int) -> dict[str, tuple[tuple[str, ...], Callable]]:
    w = posit_storage(n)
    t, u = f"int{w}_t", f"uint{w}_t"
    p = f"minun_p{n}e{es}"
    out: dict[str, tuple[tuple[str, ...], Callable]] = {}

    def fn(text: str) -> Callable[[Profile], str]:
        return lambda prof: text

    fast = (n, es) in FAST_FORMATS
    for op in ("add", "sub", "mul", "div"):
        call = (f"posit_p{n}e{es}_{op}(({u})a, ({u})b)" if fast
                else f"posit_{op}(({u})a, ({u})b, {n}, {es})")
        out[f"{p}_{op}"] = (("minun_posit",), fn(
            f"static inline {t} {p}_{op}({t} a, {t} b)\n{{\n"
            f"    return {posit_result(call, n)};\n}}\n"))
    for op in ("exp", "sigmoid", "tanh", "sqrt", "log"):  # posit8: by table
        call = (f"posit_p8e{es}_{op}(({u})x)" if n == 8
                else f"posit_{op}(({u})x, {n}, {es})")
        out[f"{p}_{op}"] = (("minun_posit",), fn(
            f"static inline {t} {p}_{op}({t} x)\n{{\n"
            f"    return {posit_result(call, n)};\n}}\n"))
    if n != w:  # two's complement of the n-bit pattern (minun_mlir/formats/posit/loops.py)
        out[f"{p}_neg"] = (("minun_posit",), fn(
            f"static inline {t} {p}_neg({t} x)\n{{\n"
            f"    return {posit_result('(0u - (uint32_t)x)', n)};\n}}\n"))
    for n2, es2 in _POSIT_FORMATS:
        if (n2, es2) != (n, es):
            t2 = f"int{posit_storage(n2)}_t"
            out[f"{p}_to_p{n2}e{es2}"] = (("minun_posit",), fn(
                f"static inline {t2} {p}_to_p{n2}e{es2}({t} x)\n{{\n    return "
                f"{posit_result(f'posit_convert(({u})x, {n}, {es}, {n2}, {es2})', n2)};"
                "\n}\n"))
    for d in range(1, MAX_QUIRE_DEPTH + 1):
        q, deps = f"&minun_quire_{d}", (f"minun_quire_{d}",)
        out[f"{p}_qclear_{d}"] = (deps, fn(
            f"static inline void {p}_qclear_{d}(void)\n{{\n"
            f"    posit_quire_clear({q}, {n}, {es});\n}}\n"))
        fma = (f"posit_p{n}e{es}_quire_fma({q}, ({u})a, ({u})b)" if fast
               else f"posit_quire_fma({q}, ({u})a, ({u})b, {n}, {es})")
        out[f"{p}_fma_{d}"] = (deps, fn(
            f"static inline void {p}_fma_{d}({t} a, {t} b)\n{{\n    {fma};\n}}\n"))
        pop = posit_result(f"posit_p{n}e{es}_quire_to_posit({q})" if fast
                           else f"posit_quire_to_posit({q}, {n}, {es})", n)
        out[f"{p}_qpop_{d}"] = (deps, fn(
            f"static inline {t} {p}_qpop_{d}(void)\n{{\n    return {pop};\n}}\n"))
    return out


HELPERS: dict[str, tuple[tuple[str, ...], Callable[[Profile], str]]] = {
    "minun_posit": ((), lambda p: _POSIT_BASE)}
for _d in range(1, MAX_QUIRE_DEPTH + 1):  # the text: quire_storage (runtime_header)
    HELPERS[f"minun_quire_{_d}"] = (("minun_posit",), lambda p: "")
for _n, _es in _POSIT_FORMATS:
    HELPERS.update(_posit_wrappers(_n, _es))
