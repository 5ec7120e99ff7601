"""The C posit runtime (third_party/softposit/posit.c) computes the same bit patterns as
the Python kernels (minun_mlir/formats/posit/arith.py, themselves checked against softposit and
exact arithmetic in test_posit.py): built for the host with a batch driver and fed the same
operand arrays. And it builds cleanly, without floating point, for the Uno (avr-gcc) and
Cortex-M (arm-none-eabi-gcc)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from posit_c import RUNTIME, STRICT, PositC
from softposit_oracle import Oracle

from minun_mlir.formats.posit import arith as P

CROSS = {
    "host": ["cc", "-O2"],
    "avr": ["avr-gcc", "-mmcu=atmega328p", "-Os"],
    "cortex-m4": ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-Os"],
    "cortex-m0plus": ["arm-none-eabi-gcc", "-mcpu=cortex-m0plus", "-mthumb", "-Os"],
}
NM = {"host": "nm", "avr": "avr-nm", "cortex-m4": "arm-none-eabi-nm",
      "cortex-m0plus": "arm-none-eabi-nm"}
# soft-float helpers (libgcc: __addsf3, __floatsidf, __aeabi_fmul, __aeabi_d2iz, ...),
# libm and the heap
ROOT_C = Path(__file__).resolve().parent / "c"
FORBIDDEN = re.compile(r"sf|df|^__aeabi_[fd]|^(exp|expf|tanh|tanhf|log|logf|pow|sqrt|malloc"
                       r"|calloc|realloc|free)$")


@pytest.fixture(scope="module")
def c() -> PositC:
    return PositC()


@pytest.mark.parametrize("target", CROSS)
def test_builds_cleanly_without_floats(target, tmp_path):
    cc = CROSS[target]
    assert shutil.which(cc[0]), f"{cc[0]} is not installed: run `make toolchains`"
    obj = tmp_path / "posit.o"
    proc = subprocess.run([*cc, *STRICT, "-c", str(RUNTIME / "posit.c"), "-o", str(obj)],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    nm = subprocess.run([NM[target], "-u", str(obj)], capture_output=True, text=True,
                        check=True).stdout.split()
    undefined = [s for s in nm if s != "U"]
    assert not [s for s in undefined if FORBIDDEN.search(s)], undefined
    code = re.sub(r"/\*.*?\*/", "", (RUNTIME / "posit.h").read_text()
                  + (RUNTIME / "posit.c").read_text(), flags=re.S)
    assert not re.search(r"\b(float|double)\b|#include <(math|stdlib)\.h>", code)


def same(got: np.ndarray, want: np.ndarray, *inputs) -> None:
    bad = np.nonzero(np.asarray(got) != np.asarray(want))[0]
    rows = [tuple(hex(int(x[i])) for x in (*inputs, got, want)) for i in bad[:5]]
    assert bad.size == 0, f"{bad.size} mismatches (inputs..., C, Python): {rows}"


@pytest.mark.parametrize("es", P.ES_VALUES)
def test_posit8_every_pair(c, es):
    a, b = (x.ravel() for x in np.meshgrid(np.arange(256), np.arange(256)))
    for op in ("add", "sub", "mul", "div"):
        same(c.binary(op, a, b, 8, es), getattr(P, op)(a, b, 8, es), a, b)
    lt, le, eq = c.compare(a, b, 8)
    same(lt, P.lt(a, b, 8), a, b)
    same(le, P.le(a, b, 8), a, b)
    same(eq, P.eq(a, b, 8), a, b)
    same(c.maximum(a, b, 8), P.maximum(a, b, 8), a, b)
    same(c.relu(np.arange(256), 8), P.relu(np.arange(256), 8))


@pytest.mark.parametrize("n,es", [(16, 1), (32, 2)])
@pytest.mark.parametrize("op", ["add", "mul"])
def test_million_random_pairs(c, n, es, op):
    rng = np.random.default_rng(n + len(op))
    a, b = rng.integers(0, 1 << n, (2, 10**6))
    b[::2] = (P.neg(a[::2], n) + rng.integers(-3, 4, a[::2].size)) & ((1 << n) - 1)
    same(c.binary(op, a, b, n, es), getattr(P, op)(a, b, n, es), a, b)


@pytest.mark.parametrize("n", [9, 10, 12, 14, 16, 32])
@pytest.mark.parametrize("es", P.ES_VALUES)
def test_random_pairs_every_format(c, n, es):
    rng = np.random.default_rng(10 * n + es)
    a, b = rng.integers(0, 1 << n, (2, 10**5))
    for op in ("add", "sub", "mul", "div"):
        same(c.binary(op, a, b, n, es), getattr(P, op)(a, b, n, es), a, b)
    lt, _, _ = c.compare(a, b, n)
    same(lt, P.lt(a, b, n), a, b)


@pytest.mark.parametrize("es", P.ES_VALUES)
@pytest.mark.parametrize("fn", ["exp", "sigmoid", "tanh", "sqrt", "log"])
def test_functions_every_posit16_and_posit8(c, fn, es):
    for n in (8, 16):
        a = np.arange(1 << n)
        same(c.unary(fn, a, n, es), getattr(P, fn)(a, n, es), a)


@pytest.mark.parametrize("fn", ["exp", "sigmoid", "tanh", "sqrt", "log"])
def test_functions_random_posit32(c, fn):
    rng = np.random.default_rng(len(fn))
    for es in P.ES_VALUES:
        a = np.concatenate([rng.integers(0, 1 << 32, 10**5),
                            P.encode(rng.standard_normal(10**5) * 4, 32, es)])
        same(c.unary(fn, a, 32, es), getattr(P, fn)(a, 32, es), a)


def test_conversions(c):
    rng = np.random.default_rng(0)
    for n, es in [(8, 0), (8, 1), (8, 2), (16, 0), (16, 1), (16, 2), (32, 2), (32, 0)]:
        a = np.arange(1 << n) if n < 32 else rng.integers(0, 1 << 32, 10**5)
        for n2, es2 in [(8, 0), (8, 2), (12, 1), (16, 1), (16, 2), (32, 2)]:
            same(c.convert(a, n, es, n2, es2), P.convert(a, n, es, n2, es2), a)
        for scale, bits in [(0, 32), (7, 16), (12, 16), (-3, 8), (20, 32)]:
            same(c.to_fixed(a, scale, bits, n, es),
                 P.to_fixed(a, scale, n, es, bits=bits), a)
        q = np.concatenate([np.arange(-(1 << 15), 1 << 15),
                            rng.integers(-(2**31), 2**31, 10**5), [-(2**31), 2**31 - 1]])
        for scale in (0, 9, -4, 30):
            same(c.from_fixed(q, scale, n, es), P.from_fixed(q, scale, n, es), q)


@pytest.mark.parametrize("n,es", [(8, 0), (8, 1), (8, 2), (12, 2), (16, 0), (16, 1), (16, 2),
                                  (32, 1), (32, 2)])
def test_quire_dot_products(c, n, es):
    rng = np.random.default_rng(n + es)
    shape = (2000, 48)
    a, b = rng.integers(0, 1 << n, (2, *shape))
    same(c.dot(a, b, n, es), P.dot(a, b, n, es))
    x = P.encode(rng.standard_normal(shape) * 2.0 ** rng.integers(-8, 8, shape), n, es)
    y = P.encode(rng.standard_normal(shape), n, es)
    y[:, 1::2] = P.neg(y[:, ::2], n)
    x[:, 1::2] = x[:, ::2]
    x[::7, 3] = 1 << (n - 1)  # NaR
    same(c.dot(x, y, n, es), P.dot(x, y, n, es))


@pytest.mark.parametrize("n,es,k", [(8, 0, 200), (8, 2, 200), (12, 1, 3000),
                                    (16, 1, 50000), (16, 2, 50000)])
def test_quire_wraps_like_the_python_quire(c, n, es, k):
    """Sums of +-maxpos^2 past the quire's n - 1 carry bits (and near-maxpos rows)."""
    rng = np.random.default_rng(k)
    a = np.full((4, k), (1 << (n - 1)) - 1)
    b = np.where(rng.random((4, k)) < 0.1, P.neg(a, n), a)
    got = c.dot(a, b, n, es)
    same(got, P.dot(a, b, n, es))
    assert np.all(P.signed(got, n) < 0)  # wrapped around
    near = a - rng.integers(0, 4, a.shape)
    same(c.dot(near, b, n, es), P.dot(near, b, n, es))


def test_c_matches_softposit_directly(c):
    """The C runtime against the oracle itself, not only through the Python kernels."""
    oracle = Oracle()
    rng = np.random.default_rng(9)
    for n, es in ((8, 0), (16, 1), (32, 2), (12, 2)):
        a, b = rng.integers(0, 1 << n, (2, 10**5))
        for op in ("add", "div"):
            same(c.binary(op, a, b, n, es), oracle.binary(op, a, b, n, es), a, b)
        rows_a, rows_b = rng.integers(0, 1 << n, (2, 500, 32))
        same(c.dot(rows_a, rows_b, n, es), oracle.dot(rows_a, rows_b, n, es))
    for n, es in ((8, 0), (16, 1), (8, 2), (16, 2)):  # sqrt: every pattern
        a = np.arange(1 << n)
        same(c.unary("sqrt", a, n, es), oracle.sqrt(a, n, es), a)


MCU_FORMATS = [(8, 0), (8, 2), (12, 1), (16, 1), (16, 2), (32, 2)]
TIMED = ["add", "mul", "div", "exp", "sigmoid", "tanh", "sqrt", "log", "quire_fma"]


def mcu_cases(block: int) -> tuple[list[tuple[int, int, int, int]], str]:
    rng = np.random.default_rng(17)
    cases = []
    for n, es in MCU_FORMATS:
        a = np.concatenate([rng.integers(0, 1 << n, block // 2),
                            P.encode(rng.standard_normal(block - block // 2) * 3, n, es)])
        b = np.concatenate([rng.integers(0, 1 << n, block // 2),
                            P.encode(rng.standard_normal(block - block // 2), n, es)])
        a[:3], b[:3] = [0, 1 << (n - 1), 1], [1, 0, (1 << (n - 1)) - 1]
        cases += [(n, es, int(x), int(y)) for x, y in zip(a, b)]

    def arr(kind, vals):
        return f"static const {kind} MINUN_FLASH case_{{}}[] = {{{{{', '.join(map(str, vals))}}}}};\n"

    header = (f"#define CASES {len(cases)}\n#define BLOCK {block}\n#define DOT_K 8\n"
              + arr("uint8_t", [c[0] for c in cases]).format("n")
              + arr("uint8_t", [c[1] for c in cases]).format("es")
              + arr("uint32_t", [f"{c[2]}UL" for c in cases]).format("a")
              + arr("uint32_t", [f"{c[3]}UL" for c in cases]).format("b"))
    return cases, header


def mcu_expected(cases, block: int) -> list[list[int]]:
    rows = []
    for i, (n, es, a, b) in enumerate(cases):
        start = i - i % block
        k = [start + (i - start + j) % block for j in range(8)]
        row = [getattr(P, op)(a, b, n, es) for op in ("add", "sub", "mul", "div")]
        row += [getattr(P, fn)(a, n, es) for fn in ("exp", "sigmoid", "tanh", "sqrt", "log")]
        row += [P.convert(a, n, es, 16, 1), P.to_fixed(a, 8, n, es, bits=16) & 0xFFFFFFFF,
                P.from_fixed(P.signed(b, n), 5, n, es), P.lt(a, b, n),
                P.dot([cases[j][2] for j in k], [cases[j][3] for j in k], n, es)]
        rows.append([int(x) for x in row])
    return rows


@pytest.mark.parametrize("target", ["avr", "cortex-m0plus"])
def test_same_patterns_on_simulated_microcontrollers(target, tmp_path):
    """avr-gcc on the ATmega328P (16-bit int, 64-bit arithmetic in libgcc) under simavr,
    Cortex-M0+ under QEMU: the same patterns as the Python kernels; and what one posit16
    call costs (printed)."""
    from minun_mlir.targets import build_and_run

    block = 12
    cases, header = mcu_cases(block)
    (tmp_path / "posit_cases.h").write_text(header)
    result = build_and_run([RUNTIME / "posit.c", ROOT_C / "posit_mcu.c"], target,
                           include_dirs=[RUNTIME, tmp_path, ROOT_C], cflags=STRICT,
                           work_dir=tmp_path / "build", name="posit_mcu")
    got = [[int(v, 16) for v in line.split()] for line in result.output.strip().splitlines()]
    assert got == mcu_expected(cases, block)
    assert len(result.latencies) == len(TIMED)
    print(f"{target}: " + ", ".join(f"{op} {t} {result.latency_unit}"
                                    for op, t in zip(TIMED, result.latencies))
          + f"; flash {result.flash_bytes} B")
