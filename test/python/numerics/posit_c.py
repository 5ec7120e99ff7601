"""The C posit runtime (third_party/softposit/) built for the host as a shared library
with a batch driver, so tests feed it the numpy arrays the Python kernels get."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
RUNTIME = ROOT / "third_party" / "softposit"
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]

DRIVER = r"""
#include <stddef.h>
#include "posit.h"
#define BIN(OP) void b_##OP(const int64_t *a, const int64_t *b, int64_t *o, size_t k, \
    int n, int es) { size_t i; for (i = 0; i < k; i++) \
    o[i] = (int64_t)posit_##OP((posit_t)a[i], (posit_t)b[i], n, es); }
BIN(add) BIN(sub) BIN(mul) BIN(div)
#define UN(OP) void u_##OP(const int64_t *a, int64_t *o, size_t k, int n, int es) { \
    size_t i; for (i = 0; i < k; i++) o[i] = (int64_t)posit_##OP((posit_t)a[i], n, es); }
UN(exp) UN(sigmoid) UN(tanh) UN(sqrt) UN(log)
void u_convert(const int64_t *a, int64_t *o, size_t k, int n, int es, int n2, int es2) {
    size_t i; for (i = 0; i < k; i++) o[i] = (int64_t)posit_convert((posit_t)a[i], n, es, n2, es2); }
void u_from_fixed(const int64_t *a, int64_t *o, size_t k, int scale, int n, int es) {
    size_t i; for (i = 0; i < k; i++) o[i] = (int64_t)posit_from_fixed((int32_t)a[i], scale, n, es); }
void u_to_fixed(const int64_t *a, int64_t *o, size_t k, int scale, int bits, int n, int es) {
    size_t i; for (i = 0; i < k; i++) o[i] = posit_to_fixed((posit_t)a[i], scale, bits, n, es); }
void u_cmp(const int64_t *a, const int64_t *b, int64_t *o, size_t k, int n) {
    size_t i; for (i = 0; i < k; i++) o[i] = posit_lt((posit_t)a[i], (posit_t)b[i], n)
        | posit_le((posit_t)a[i], (posit_t)b[i], n) << 1 | posit_eq((posit_t)a[i], (posit_t)b[i], n) << 2; }
void u_max(const int64_t *a, const int64_t *b, int64_t *o, size_t k, int n) {
    size_t i; for (i = 0; i < k; i++) o[i] = (int64_t)posit_max((posit_t)a[i], (posit_t)b[i], n); }
void u_relu(const int64_t *a, int64_t *o, size_t k, int n) {
    size_t i; for (i = 0; i < k; i++) o[i] = (int64_t)posit_relu((posit_t)a[i], n); }
void q_dot(const int64_t *a, const int64_t *b, int64_t *o, size_t rows, size_t k, int n, int es) {
    size_t r, i; posit_quire_t q;
    for (r = 0; r < rows; r++) { posit_quire_clear(&q, n, es);
        for (i = 0; i < k; i++) posit_quire_fma(&q, (posit_t)a[r * k + i], (posit_t)b[r * k + i], n, es);
        o[r] = (int64_t)posit_quire_to_posit(&q, n, es); } }
/* the per-format entry points (posit_p16e2_add, ...): op 0..3 = add, sub, mul, div */
#define FAST(N, ES) \
void f_p##N##e##ES(int op, const int64_t *a, const int64_t *b, int64_t *o, size_t k) { \
    size_t i; for (i = 0; i < k; i++) { posit_t x = (posit_t)a[i], y = (posit_t)b[i]; \
        o[i] = (int64_t)(op == 0 ? posit_p##N##e##ES##_add(x, y) \
            : op == 1 ? posit_p##N##e##ES##_sub(x, y) : op == 2 ? posit_p##N##e##ES##_mul(x, y) \
            : posit_p##N##e##ES##_div(x, y)); } } \
void fq_p##N##e##ES(const int64_t *a, const int64_t *b, int64_t *o, size_t rows, size_t k) { \
    size_t r, i; posit_quire_t q; \
    for (r = 0; r < rows; r++) { posit_quire_clear(&q, N, ES); \
        for (i = 0; i < k; i++) \
            posit_p##N##e##ES##_quire_fma(&q, (posit_t)a[r * k + i], (posit_t)b[r * k + i]); \
        o[r] = (int64_t)posit_p##N##e##ES##_quire_to_posit(&q); } }
FAST(8, 0) FAST(8, 1) FAST(8, 2) FAST(16, 0) FAST(16, 1) FAST(16, 2)
/* posit8 functions by table: op 0..4 = exp, sigmoid, tanh, sqrt, log */
#define FAST8(ES) \
void fu_p8e##ES(int op, const int64_t *a, int64_t *o, size_t k) { size_t i; \
    for (i = 0; i < k; i++) { posit_t x = (posit_t)a[i]; \
        o[i] = (int64_t)(op == 0 ? posit_p8e##ES##_exp(x) : op == 1 ? posit_p8e##ES##_sigmoid(x) \
            : op == 2 ? posit_p8e##ES##_tanh(x) : op == 3 ? posit_p8e##ES##_sqrt(x) \
            : posit_p8e##ES##_log(x)); } }
FAST8(0) FAST8(1) FAST8(2)
"""
FAST_OPS = ("add", "sub", "mul", "div")
FAST8_FUNCTIONS = ("exp", "sigmoid", "tanh", "sqrt", "log")


def build_once(name: str, key: list[str], sources: list[Path], build) -> Path:
    """`build(cc, out)`'s shared library, from the build cache (cache.cached_build: keyed
    by `key`, the sources' text and the compiler's identity), so test files and xdist
    workers share one build."""
    from minun_mlir.targets.cache import cached_build
    from minun_mlir.targets.toolchain import tool_identity

    cc = shutil.which("cc") or shutil.which("gcc")
    return cached_build(name, ".so", [cc, tool_identity(cc), *key], sources,
                        lambda out: build(cc, out))


class PositC:
    def __init__(self, cflags: tuple[str, ...] = ()):
        sources = [RUNTIME / "posit.c", RUNTIME / "posit.h"]

        def build(cc: str, out: Path) -> None:
            with tempfile.TemporaryDirectory(prefix="posit-c-") as tmp:
                driver = Path(tmp) / "posit_driver.c"
                driver.write_text(DRIVER)
                proc = subprocess.run([cc, *STRICT, "-O2", *cflags, "-shared", "-fPIC",
                                       f"-I{RUNTIME}", "-o", str(out),
                                       str(RUNTIME / "posit.c"), str(driver)],
                                      capture_output=True, text=True)
            assert proc.returncode == 0 and proc.stderr == "", proc.stderr

        lib = build_once("posit_c", [DRIVER, *cflags], sources, build)
        self.lib = ctypes.CDLL(str(lib))

    @staticmethod
    def _in(x) -> np.ndarray:
        return np.ascontiguousarray(x, dtype=np.int64)

    @staticmethod
    def _p(x: np.ndarray):
        return x.ctypes.data_as(ctypes.c_void_p)

    def binary(self, op: str, a, b, n: int, es: int) -> np.ndarray:
        a, b = np.broadcast_arrays(self._in(a), self._in(b))
        a, b = self._in(a), self._in(b)
        o = np.empty_like(a)
        getattr(self.lib, f"b_{op}")(self._p(a), self._p(b), self._p(o),
                                     ctypes.c_size_t(a.size), n, es)
        return o

    def fast_binary(self, op: str, a, b, n: int, es: int) -> np.ndarray:
        """posit_p<n>e<es>_<op>(a, b): the per-format entry points (n = 8, 16)."""
        a, b = np.broadcast_arrays(self._in(a), self._in(b))
        a, b = self._in(a), self._in(b)
        o = np.empty_like(a)
        getattr(self.lib, f"f_p{n}e{es}")(FAST_OPS.index(op), self._p(a), self._p(b),
                                          self._p(o), ctypes.c_size_t(a.size))
        return o

    def fast8_unary(self, fn: str, a, es: int) -> np.ndarray:
        """posit_p8e<es>_<fn>(a): the posit8 function tables."""
        a = self._in(a)
        o = np.empty_like(a)
        getattr(self.lib, f"fu_p8e{es}")(FAST8_FUNCTIONS.index(fn), self._p(a), self._p(o),
                                         ctypes.c_size_t(a.size))
        return o

    def fast_dot(self, a, b, n: int, es: int) -> np.ndarray:
        """Rows accumulated with posit_p<n>e<es>_quire_fma, rounded by ..._quire_to_posit."""
        a, b = self._in(a), self._in(b)
        o = np.empty(a.shape[0], dtype=np.int64)
        getattr(self.lib, f"fq_p{n}e{es}")(self._p(a), self._p(b), self._p(o),
                                           ctypes.c_size_t(a.shape[0]),
                                           ctypes.c_size_t(a.shape[1]))
        return o

    def unary(self, op: str, a, n: int, es: int) -> np.ndarray:
        a = self._in(a)
        o = np.empty_like(a)
        getattr(self.lib, f"u_{op}")(self._p(a), self._p(o), ctypes.c_size_t(a.size), n, es)
        return o

    def convert(self, a, n: int, es: int, n2: int, es2: int) -> np.ndarray:
        a = self._in(a)
        o = np.empty_like(a)
        self.lib.u_convert(self._p(a), self._p(o), ctypes.c_size_t(a.size), n, es, n2, es2)
        return o

    def from_fixed(self, q, scale: int, n: int, es: int) -> np.ndarray:
        q = self._in(q)
        o = np.empty_like(q)
        self.lib.u_from_fixed(self._p(q), self._p(o), ctypes.c_size_t(q.size), scale, n, es)
        return o

    def to_fixed(self, a, scale: int, bits: int, n: int, es: int) -> np.ndarray:
        a = self._in(a)
        o = np.empty_like(a)
        self.lib.u_to_fixed(self._p(a), self._p(o), ctypes.c_size_t(a.size), scale, bits,
                            n, es)
        return o

    def compare(self, a, b, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a, b = self._in(a), self._in(b)
        o = np.empty_like(a)
        self.lib.u_cmp(self._p(a), self._p(b), self._p(o), ctypes.c_size_t(a.size), n)
        return (o & 1) == 1, (o & 2) == 2, (o & 4) == 4

    def maximum(self, a, b, n: int) -> np.ndarray:
        a, b = self._in(a), self._in(b)
        o = np.empty_like(a)
        self.lib.u_max(self._p(a), self._p(b), self._p(o), ctypes.c_size_t(a.size), n)
        return o

    def relu(self, a, n: int) -> np.ndarray:
        a = self._in(a)
        o = np.empty_like(a)
        self.lib.u_relu(self._p(a), self._p(o), ctypes.c_size_t(a.size), n)
        return o

    def dot(self, a, b, n: int, es: int) -> np.ndarray:
        a, b = self._in(a), self._in(b)
        rows, k = a.shape
        o = np.empty(rows, dtype=np.int64)
        self.lib.q_dot(self._p(a), self._p(b), self._p(o), ctypes.c_size_t(rows),
                       ctypes.c_size_t(k), n, es)
        return o
