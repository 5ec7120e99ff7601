"""The `softposit` package (PyPI, SoftPosit by Cerlane Leong) as a batch oracle.

Its Python wrapper calls one C function per value; to check millions of values in seconds
this module compiles a small shim (host cc) that loops over numpy arrays and calls the C
functions inside the package's own extension module `_softposit` (linked by path), with the
package's struct types declared as in its softposit_types.h (non-"exact" build).

SoftPosit's formats: posit8 = posit<8, 0> (quire 32 bits), posit16 = posit<16, 1>
(quire 128), posit32 = posit<32, 2> (quire 512), and posit_2 = posit<x, 2> for x = 2..32
(patterns left-aligned in 32 bits, quire 512).
"""

from __future__ import annotations

import ctypes
import subprocess
import tempfile
from pathlib import Path

import numpy as np

SHIM = r"""
#include <stdint.h>
#include <stddef.h>
typedef struct { uint8_t v; } posit8_t;
typedef struct { uint16_t v; } posit16_t;
typedef struct { uint32_t v; } posit32_t;
typedef struct { uint32_t v; } posit_2_t;
typedef struct { uint32_t v; } quire8_t;
typedef struct { uint64_t v[2]; } quire16_t;
typedef struct { uint64_t v[8]; } quire32_t;
typedef struct { uint64_t v[8]; } quire_2_t;

#define BIN(N, T, OP) T OP(T, T); \
  void b_##OP(const int64_t *a, const int64_t *b, int64_t *o, size_t n) { \
    for (size_t i = 0; i < n; i++) { T x, y; x.v = a[i]; y.v = b[i]; o[i] = OP(x, y).v; } }
BIN(8, posit8_t, p8_add) BIN(8, posit8_t, p8_sub) BIN(8, posit8_t, p8_mul) BIN(8, posit8_t, p8_div)
BIN(16, posit16_t, p16_add) BIN(16, posit16_t, p16_sub) BIN(16, posit16_t, p16_mul) BIN(16, posit16_t, p16_div)
BIN(32, posit32_t, p32_add) BIN(32, posit32_t, p32_sub) BIN(32, posit32_t, p32_mul) BIN(32, posit32_t, p32_div)

#define BINX(OP) posit_2_t OP(posit_2_t, posit_2_t, int); \
  void b_##OP(const int64_t *a, const int64_t *b, int64_t *o, size_t n, int x) { \
    for (size_t i = 0; i < n; i++) { posit_2_t p, q; p.v = (uint32_t)a[i] << (32 - x); \
      q.v = (uint32_t)b[i] << (32 - x); o[i] = OP(p, q, x).v >> (32 - x); } }
BINX(pX2_add) BINX(pX2_sub) BINX(pX2_mul) BINX(pX2_div)

#define CONV(TI, TO, OP) TO OP(TI); \
  void c_##OP(const int64_t *a, int64_t *o, size_t n) { \
    for (size_t i = 0; i < n; i++) { TI x; x.v = a[i]; o[i] = OP(x).v; } }
CONV(posit8_t, posit16_t, p8_to_p16) CONV(posit8_t, posit32_t, p8_to_p32)
CONV(posit16_t, posit8_t, p16_to_p8) CONV(posit16_t, posit32_t, p16_to_p32)
CONV(posit32_t, posit8_t, p32_to_p8) CONV(posit32_t, posit16_t, p32_to_p16)

posit_2_t pX2_to_pX2(posit_2_t, int);
void c_pX2_to_pX2(const int64_t *a, int64_t *o, size_t n, int x, int y) {
  for (size_t i = 0; i < n; i++) { posit_2_t p; p.v = (uint32_t)a[i] << (32 - x);
    o[i] = pX2_to_pX2(p, y).v >> (32 - y); } }

#define TOI(T, OP) int64_t OP(T); \
  void i_##OP(const int64_t *a, int64_t *o, size_t n) { \
    for (size_t i = 0; i < n; i++) { T x; x.v = a[i]; o[i] = OP(x); } }
TOI(posit8_t, p8_to_i64) TOI(posit16_t, p16_to_i64) TOI(posit32_t, p32_to_i64)
#define FROMI(T, OP) T OP(int64_t); \
  void f_##OP(const int64_t *a, int64_t *o, size_t n) { \
    for (size_t i = 0; i < n; i++) o[i] = OP(a[i]).v; }
FROMI(posit8_t, i64_to_p8) FROMI(posit16_t, i64_to_p16) FROMI(posit32_t, i64_to_p32)

#define FROMD(T, OP) T OP(double); \
  void d_##OP(const double *a, int64_t *o, size_t n) { \
    for (size_t i = 0; i < n; i++) o[i] = OP(a[i]).v; }
FROMD(posit8_t, convertDoubleToP8) FROMD(posit16_t, convertDoubleToP16) FROMD(posit32_t, convertDoubleToP32)
posit_2_t convertDoubleToPX2(double, int);
void d_convertDoubleToPX2(const double *a, int64_t *o, size_t n, int x) {
  for (size_t i = 0; i < n; i++) o[i] = convertDoubleToPX2(a[i], x).v >> (32 - x); }

#define UNA(T, OP) T OP(T); \
  void u_##OP(const int64_t *a, int64_t *o, size_t n) { \
    for (size_t i = 0; i < n; i++) { T x; x.v = a[i]; o[i] = OP(x).v; } }
UNA(posit8_t, p8_sqrt) UNA(posit16_t, p16_sqrt) UNA(posit32_t, p32_sqrt)
posit_2_t pX2_sqrt(posit_2_t, int);
void u_pX2_sqrt(const int64_t *a, int64_t *o, size_t n, int x) {
  for (size_t i = 0; i < n; i++) { posit_2_t p; p.v = (uint32_t)a[i] << (32 - x);
    o[i] = pX2_sqrt(p, x).v >> (32 - x); } }

/* dot products: rows of k terms, one quire per row */
quire8_t q8_fdp_add(quire8_t, posit8_t, posit8_t); posit8_t q8_to_p8(quire8_t);
quire16_t q16_fdp_add(quire16_t, posit16_t, posit16_t); posit16_t q16_to_p16(quire16_t);
quire32_t q32_fdp_add(quire32_t, posit32_t, posit32_t); posit32_t q32_to_p32(quire32_t);
quire_2_t qX2_fdp_add(quire_2_t, posit_2_t, posit_2_t); posit_2_t qX2_to_pX2(quire_2_t, int);
#define DOT(T, Q, FMA, TO) \
  void q_##FMA(const int64_t *a, const int64_t *b, int64_t *o, size_t rows, size_t k) { \
    for (size_t r = 0; r < rows; r++) { Q q = {0}; \
      for (size_t i = 0; i < k; i++) { T x, y; x.v = a[r * k + i]; y.v = b[r * k + i]; \
        q = FMA(q, x, y); } o[r] = TO(q).v; } }
DOT(posit8_t, quire8_t, q8_fdp_add, q8_to_p8)
DOT(posit16_t, quire16_t, q16_fdp_add, q16_to_p16)
DOT(posit32_t, quire32_t, q32_fdp_add, q32_to_p32)
void q_qX2_fdp_add(const int64_t *a, const int64_t *b, int64_t *o, size_t rows, size_t k, int x) {
  for (size_t r = 0; r < rows; r++) { quire_2_t q = {{0}};
    for (size_t i = 0; i < k; i++) { posit_2_t p, s; p.v = (uint32_t)a[r * k + i] << (32 - x);
      s.v = (uint32_t)b[r * k + i] << (32 - x); q = qX2_fdp_add(q, p, s); }
    o[r] = qX2_to_pX2(q, x).v >> (32 - x); } }
"""

# which SoftPosit function family serves posit<n, es>
NAMES = {(8, 0): "p8", (16, 1): "p16", (32, 2): "p32"}


def covered(n: int, es: int) -> bool:
    return (n, es) in NAMES or (es == 2 and 2 <= n <= 32)


class Oracle:
    def __init__(self):
        import _softposit  # the package's extension module
        from posit_c import build_once

        so = Path(_softposit.__file__)

        def build(cc: str, out: Path) -> None:
            with tempfile.TemporaryDirectory(prefix="softposit-oracle-") as tmp:
                src = Path(tmp) / "softposit_oracle.c"
                src.write_text(SHIM)
                subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(out), str(src),
                                str(so), f"-Wl,-rpath,{so.parent}"], check=True,
                               capture_output=True)

        lib = build_once("softposit_oracle", [SHIM, str(so)], [so], build)  # rpath: its folder
        self.lib = ctypes.CDLL(str(lib))

    @staticmethod
    def _ptr(x: np.ndarray):
        return x.ctypes.data_as(ctypes.c_void_p)

    def binary(self, op: str, a, b, n: int, es: int) -> np.ndarray:
        a = np.ascontiguousarray(a, dtype=np.int64)
        b = np.ascontiguousarray(b, dtype=np.int64)
        out = np.empty_like(a)
        if (n, es) in NAMES:
            getattr(self.lib, f"b_{NAMES[n, es]}_{op}")(
                self._ptr(a), self._ptr(b), self._ptr(out), ctypes.c_size_t(a.size))
        else:
            assert es == 2
            getattr(self.lib, f"b_pX2_{op}")(self._ptr(a), self._ptr(b), self._ptr(out),
                                             ctypes.c_size_t(a.size), ctypes.c_int(n))
        return out

    def convert(self, a, n: int, es: int, n_to: int, es_to: int) -> np.ndarray:
        a = np.ascontiguousarray(a, dtype=np.int64)
        out = np.empty_like(a)
        if (n, es) in NAMES and (n_to, es_to) in NAMES:
            f = getattr(self.lib, f"c_{NAMES[n, es]}_to_{NAMES[n_to, es_to]}")
            f(self._ptr(a), self._ptr(out), ctypes.c_size_t(a.size))
        else:
            assert es == es_to == 2
            self.lib.c_pX2_to_pX2(self._ptr(a), self._ptr(out), ctypes.c_size_t(a.size),
                                  ctypes.c_int(n), ctypes.c_int(n_to))
        return out

    def from_double(self, x, n: int, es: int) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float64)
        out = np.empty(x.shape, dtype=np.int64)
        if (n, es) in NAMES:
            f = getattr(self.lib, f"d_convertDoubleTo{NAMES[n, es].upper()}")
            f(self._ptr(x), self._ptr(out), ctypes.c_size_t(x.size))
        else:
            self.lib.d_convertDoubleToPX2(self._ptr(x), self._ptr(out),
                                          ctypes.c_size_t(x.size), ctypes.c_int(n))
        return out

    def to_int(self, a, n: int, es: int) -> np.ndarray:
        a = np.ascontiguousarray(a, dtype=np.int64)
        out = np.empty_like(a)
        getattr(self.lib, f"i_{NAMES[n, es]}_to_i64")(self._ptr(a), self._ptr(out),
                                                      ctypes.c_size_t(a.size))
        return out

    def from_int(self, q, n: int, es: int) -> np.ndarray:
        q = np.ascontiguousarray(q, dtype=np.int64)
        out = np.empty_like(q)
        getattr(self.lib, f"f_i64_to_{NAMES[n, es]}")(self._ptr(q), self._ptr(out),
                                                      ctypes.c_size_t(q.size))
        return out

    def sqrt(self, a, n: int, es: int) -> np.ndarray:
        a = np.ascontiguousarray(a, dtype=np.int64)
        out = np.empty_like(a)
        if (n, es) in NAMES:
            getattr(self.lib, f"u_{NAMES[n, es]}_sqrt")(self._ptr(a), self._ptr(out),
                                                         ctypes.c_size_t(a.size))
        else:
            assert es == 2
            self.lib.u_pX2_sqrt(self._ptr(a), self._ptr(out), ctypes.c_size_t(a.size),
                                ctypes.c_int(n))
        return out

    def dot(self, a, b, n: int, es: int) -> np.ndarray:
        """Row-wise dot products of 2-d pattern arrays in SoftPosit's quire."""
        a = np.ascontiguousarray(a, dtype=np.int64)
        b = np.ascontiguousarray(b, dtype=np.int64)
        rows, k = a.shape
        out = np.empty(rows, dtype=np.int64)
        args = [self._ptr(a), self._ptr(b), self._ptr(out), ctypes.c_size_t(rows),
                ctypes.c_size_t(k)]
        if (n, es) in NAMES:
            name = {8: "q8", 16: "q16", 32: "q32"}[n]
            getattr(self.lib, f"q_{name}_fdp_add")(*args)
        else:
            self.lib.q_qX2_fdp_add(*args, ctypes.c_int(n))
        return out
