"""The C runtime's paths for posit<n <= 16> (third_party/softposit/posit.c: 16-bit decode
with one count-leading-zeros, 32-bit arithmetic, word-wise quire), both the generic
functions (posit_add(a, b, n, es)) and the per-format entry points the generated C calls
(posit_p16e2_add(a, b)), against the `softposit` package itself, built natively: every
posit8 pair, a large seeded sample of posit16 pairs with the edge cases (zero, NaR,
maxpos, minpos, exact ties), quire dot products and conversions. SoftPosit covers
posit<8, 0>, <16, 1>, <32, 2> and posit<x, 2>; the other es are checked against the
Python kernels (themselves checked against softposit in test_posit.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from posit_c import RUNTIME, STRICT, PositC
from softposit_oracle import Oracle

from minun_mlir.formats.posit import arith as P

OPS = ("add", "sub", "mul", "div")


@pytest.fixture(scope="module", params=["plain", "byte-shifts"])
def c(request) -> PositC:
    """The runtime as the host builds it, and with the AVR's byte-wise shifts
    (POSIT_BYTE_SHIFTS) so that the host checks that code exhaustively too."""
    flags = ("-DPOSIT_BYTE_SHIFTS=1",) if request.param == "byte-shifts" else ()
    return PositC(flags)


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return Oracle()


_WANT: dict[tuple, list] = {}


def expected(what: tuple, arrays: tuple[np.ndarray, ...], compute) -> np.ndarray:
    """compute(), kept under `what` (the routine and its scalar arguments) and the input
    arrays' bytes until its second reader: both builds of the runtime (the `c` fixture's
    params) are checked against the same expected patterns, computed once."""
    import hashlib

    key = (what, tuple((x.shape, str(x.dtype),
                        hashlib.sha256(np.ascontiguousarray(x)).hexdigest()) for x in arrays))
    held = _WANT.setdefault(key, [None, 0])
    if held[0] is None:
        held[0] = compute()
    held[1] += 1
    return (_WANT.pop(key) if held[1] == 2 else held)[0]


def same(got, want, *inputs) -> None:
    bad = np.nonzero(np.asarray(got) != np.asarray(want))[0]
    rows = [tuple(hex(int(x[i])) for x in (*inputs, got, want)) for i in bad[:5]]
    assert bad.size == 0, f"{bad.size} mismatches (inputs..., C, softposit): {rows}"


def specials(n: int) -> np.ndarray:
    """zero, NaR, +-maxpos, +-minpos, +-1 and their neighbours."""
    nar, maxpos, one = 1 << (n - 1), (1 << (n - 1)) - 1, 1 << (n - 2)
    p = np.array([0, nar, maxpos, maxpos - 1, 1, 2, one, one - 1, one + 1, nar + 1])
    return np.unique(np.concatenate([p, P.neg(p, n)]))


@pytest.mark.parametrize("es", [0, 2])
def test_posit8_every_pair(c, oracle, es):
    a, b = (x.ravel() for x in np.meshgrid(np.arange(256), np.arange(256)))
    for op in OPS:
        want = oracle.binary(op, a, b, 8, es)
        same(c.binary(op, a, b, 8, es), want, a, b)
        same(c.fast_binary(op, a, b, 8, es), want, a, b)


@pytest.mark.parametrize("n,es", [(8, 1), (16, 0)])
def test_formats_softposit_lacks(c, n, es):
    """posit<8, 1> every pair, posit<16, 0> a sample: the Python kernels as the oracle."""
    if n == 8:
        a, b = (x.ravel() for x in np.meshgrid(np.arange(256), np.arange(256)))
    else:
        a, b = np.random.default_rng(160).integers(0, 1 << n, (2, 10**6))
        s = specials(n)
        ea, eb = (x.ravel() for x in np.meshgrid(s, s))
        a, b = np.concatenate([a, ea]), np.concatenate([b, eb])
    for op in OPS:
        want = expected(("P", op, n, es), (a, b), lambda op=op: getattr(P, op)(a, b, n, es))
        same(c.binary(op, a, b, n, es), want, a, b)
        same(c.fast_binary(op, a, b, n, es), want, a, b)
    rows_a, rows_b = np.random.default_rng(n).integers(0, 1 << n, (2, 2000, 32))
    want = expected(("P.dot", n, es), (rows_a, rows_b), lambda: P.dot(rows_a, rows_b, n, es))
    same(c.dot(rows_a, rows_b, n, es), want)
    same(c.fast_dot(rows_a, rows_b, n, es), want)


def add_ties(oracle: Oracle, n: int, es: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (a, b) whose exact sum lies halfway between a and the next pattern up."""
    a = rng.integers(1, (1 << (n - 1)) - 1, 20000)
    va, vb = P.decode(a, n, es), P.decode(a + 1, n, es)
    b = oracle.from_double((vb - va) / 2, n, es)
    keep = P.decode(b, n, es) == (vb - va) / 2  # half an ulp is itself a posit
    a, b = a[keep], b[keep]
    assert a.size > 1000
    return np.concatenate([a, P.neg(a, n)]), np.concatenate([b, P.neg(b, n)])


@pytest.mark.parametrize("es", [1, 2])
def test_posit16_sample_and_edges(c, oracle, es):
    n = 16
    rng = np.random.default_rng(1600 + es)
    a, b = rng.integers(0, 1 << n, (2, 10**6))
    b[::3] = (P.neg(a[::3], n) + rng.integers(-3, 4, a[::3].size)) & 0xFFFF  # cancellation
    s = specials(n)
    r = rng.integers(0, 1 << n, 3000)
    ea, eb = (x.ravel() for x in np.meshgrid(s, np.concatenate([s, r])))
    ta, tb = add_ties(oracle, n, es, rng)
    a, b = np.concatenate([a, ea, eb, ta]), np.concatenate([b, eb, ea, tb])
    for op in OPS:
        want = oracle.binary(op, a, b, n, es)
        same(c.binary(op, a, b, n, es), want, a, b)
        same(c.fast_binary(op, a, b, n, es), want, a, b)


@pytest.mark.parametrize("n,es", [(8, 0), (8, 2), (16, 1), (16, 2)])
def test_quire_dot_products(c, oracle, n, es):
    rng = np.random.default_rng(n * es + 7)
    shape = (3000, 32)
    a, b = rng.integers(0, 1 << n, (2, *shape))
    want = oracle.dot(a, b, n, es)
    same(c.dot(a, b, n, es), want)
    same(c.fast_dot(a, b, n, es), want)
    x = P.encode(rng.standard_normal(shape) * 2.0 ** rng.integers(-6, 6, shape), n, es)
    y = P.encode(rng.standard_normal(shape), n, es)
    y[:, 1::2] = P.neg(y[:, ::2], n)  # cancelling terms
    x[:, 1::2] = x[:, ::2]
    x[:100, 5] = rng.choice(specials(n), 100)
    want = oracle.dot(x, y, n, es)
    same(c.dot(x, y, n, es), want)
    same(c.fast_dot(x, y, n, es), want)


@pytest.mark.parametrize("n,es,n_to,es_to", [(8, 0, 16, 1), (16, 1, 8, 0), (8, 0, 32, 2),
                                             (16, 1, 32, 2), (8, 2, 16, 2), (16, 2, 8, 2),
                                             (16, 2, 32, 2), (32, 2, 16, 1), (32, 2, 8, 0),
                                             (32, 2, 16, 2)])
def test_conversions(c, oracle, n, es, n_to, es_to):
    rng = np.random.default_rng(n + n_to + es)
    a = np.arange(1 << n) if n < 32 else np.concatenate(
        [rng.integers(0, 1 << 32, 10**5), specials(32)])
    same(c.convert(a, n, es, n_to, es_to), oracle.convert(a, n, es, n_to, es_to), a)


@pytest.mark.parametrize("es", [0, 1, 2])
def test_posit8_function_tables(c, oracle, es):
    """posit_p8e<es>_exp ... read tables (tools/posit8_tables.py): every pattern equals the
    runtime's computed function and the Python kernel; sqrt also equals softposit's."""
    a = np.arange(256)
    for fn in ("exp", "sigmoid", "tanh", "sqrt", "log"):
        got = c.fast8_unary(fn, a, es)
        same(got, c.unary(fn, a, 8, es), a)
        same(got, getattr(P, fn)(a, 8, es), a)
    if es in (0, 2):
        same(c.fast8_unary("sqrt", a, es), oracle.sqrt(a, 8, es), a)


@pytest.mark.parametrize("n", range(9, 16))
def test_functions_every_input_of_the_middle_sizes(c, n):
    """exp, sigmoid, tanh, log of every posit<9..15, es> pattern (the runtime's shorter
    series for n <= 16) equal the Python kernels' (full series); test_softposit_c.py
    checks n = 8 and 16."""
    a = np.arange(1 << n)
    for es in (0, 1, 2):
        for fn in ("exp", "sigmoid", "tanh", "log"):
            same(c.unary(fn, a, n, es), getattr(P, fn)(a, n, es), a)


MCU_FORMATS = [(8, 0), (8, 1), (8, 2), (16, 0), (16, 1), (16, 2)]
MCU_BLOCK, DOT_K = 40, 8


def mcu_cases() -> tuple[list[tuple[int, int, int, int]], str]:
    """MCU_BLOCK cases per format: random patterns, typical values and the specials."""
    rng = np.random.default_rng(33)
    cases = []
    for n, es in MCU_FORMATS:
        s = specials(n)
        a = np.concatenate([s, rng.integers(0, 1 << n, 10),
                            P.encode(rng.standard_normal(MCU_BLOCK - 10 - s.size) * 3, n, es)])
        b = np.concatenate([rng.permutation(s), rng.integers(0, 1 << n, 10),
                            P.encode(rng.standard_normal(MCU_BLOCK - 10 - s.size), n, es)])
        cases += [(n, es, int(x), int(y)) for x, y in zip(a, b)]
    header = (f"#define CASES {len(cases)}\n#define BLOCK {MCU_BLOCK}\n#define DOT_K {DOT_K}\n"
              "static const uint8_t MINUN_FLASH case_format[] = {"
              + ", ".join(str(MCU_FORMATS.index((c[0], c[1]))) for c in cases) + "};\n"
              "static const uint32_t MINUN_FLASH case_a[] = {"
              + ", ".join(f"{c[2]}UL" for c in cases) + "};\n"
              "static const uint32_t MINUN_FLASH case_b[] = {"
              + ", ".join(f"{c[3]}UL" for c in cases) + "};\n")
    return cases, header


def mcu_expected(cases) -> list[list[int]]:
    rows = []
    for i, (n, es, a, b) in enumerate(cases):
        start = i - i % MCU_BLOCK
        k = [start + (i - start + j) % MCU_BLOCK for j in range(DOT_K)]
        row = [getattr(P, op)(a, b, n, es) for op in OPS]
        row.append(P.dot([cases[j][2] for j in k], [cases[j][3] for j in k], n, es))
        if n == 8:
            row += [getattr(P, fn)(a, n, es) for fn in ("exp", "sigmoid", "tanh", "sqrt", "log")]
        rows.append([int(x) for x in row])
    return rows


@pytest.mark.parametrize("target", ["avr", "cortex-m4"])
def test_entry_points_on_simulated_boards(target, tmp_path):
    """The per-format entry points built by avr-gcc for the Uno (simavr) and by
    arm-none-eabi-gcc for the Cortex-M4 (QEMU), with the strict flags: the same patterns
    as the Python kernels for every format and function the generated C calls."""
    from minun_mlir.targets import build_and_run

    cases, header = mcu_cases()
    (tmp_path / "posit_fast_cases.h").write_text(header)
    result = build_and_run([RUNTIME / "posit.c", Path(__file__).parent / "c" / "posit_fast_mcu.c"],
                           target, include_dirs=[RUNTIME, tmp_path, Path(__file__).parent / "c"],
                           cflags=STRICT, work_dir=tmp_path / "build", name="posit_fast_mcu")
    got = [[int(v, 16) for v in line.split()] for line in result.output.strip().splitlines()]
    assert got == mcu_expected(cases)
