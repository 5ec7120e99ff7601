"""bfloat16 representation: the L2 program with `bf16` elements (`quantize{repr=bfloat16}`).

A bfloat16 is the top half of a float32 (sign, 8 exponent bits, 7 fraction bits). Every
operation computes in float32 and rounds its result to bfloat16 once, to nearest, ties to
even (NaN stays a quiet NaN): add, sub and mul per element (the float32 product of two
bfloat16s is exact); matmul and conv2d form each output's dot product in float32, adding
the (exact) products in order (matmul: k ascending; conv2d: (kh, kw, c), padding adding
0), and round once; sparse matmul rounds after each term it adds; exp, sigmoid, tanh, log
and sqrt are the real function rounded once (`function_table`: not float32 libm calls,
whose last bit differs between numpy and the boards' C libraries; the C computes the same
on integers); softmax, log_softmax and normalise_l2 are programs of such steps (x - max,
exp, an ordered float32 sum, log or sqrt, a division), each rounded.

Storage: the 16-bit pattern mapped to an integer whose order is the values' order
(`key = p ^ ((p >> 15) & 0x7fff)` on the signed 16-bit pattern: positive patterns as they
are, negative ones with the magnitude bits flipped), so that relu, max, min, maxpool,
argmax, sgn and clipping are integer comparisons as for fixed point and posits. There is
one zero: a result (or an encoded real) of -0 is stored as +0, so that those integer
comparisons follow IEEE's -0 == +0 (with -0's key -1 just below +0, an argmax over a
product with an exact zero depended on whether the C added it to +0). Negation is `~key`
but for 0. The C converts keys to floats and back in
minun_runtime.h (`minun_bf16_*`, minun_mlir/formats/bfloat16/loops.py).
"""

from __future__ import annotations

import functools

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, ModuleOp, StringAttr, bf16
from xdsl.ir import Attribute, Operation

from minun_mlir.dialects import minun, num
from minun_mlir.formats.float32.representation import Float32Converter
from minun_mlir.numerics import float_eval
from minun_mlir.numerics.float_eval import Profile, _align
from minun_mlir.numerics.repr import QuantizeConfig, Representation


class BFloat16Converter(Float32Converter):
    """float32's program (same ops, same attributes) with bf16 elements."""

    representation_name = "bfloat16"
    element = bf16

    def annotate(self, fn) -> None:
        fn.attributes["num.rounding"] = StringAttr("nearest")

    def param(self, op, values, name, sparse, declared):
        ty = minun.tensor_of(values.shape, bf16)
        return self.emit(num.ParamOp.build_param(name, encode(values), ty, sparse))


# -- float32 <-> bfloat16 patterns <-> stored keys ----------------------------------------


def round_f32(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 patterns (uint16 values in int64), to nearest, ties to even;
    NaN -> the quiet NaN 0x7fc0 with the sign kept."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.int64)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return np.where(nan, (u >> 16) | 0x40, r) & 0xFFFF


def pattern_to_f32(p: np.ndarray) -> np.ndarray:
    return ((np.asarray(p, dtype=np.int64) & 0xFFFF) << 16).astype(np.uint32).view(np.float32)


def key(p: np.ndarray) -> np.ndarray:
    """pattern (0..0xffff) -> the order-preserving signed 16-bit key."""
    s = np.asarray(p, dtype=np.int64) & 0xFFFF
    s = np.where(s >= 0x8000, s - 0x10000, s)
    return np.where(s < 0, s ^ 0x7FFF, s)


def pattern(k: np.ndarray) -> np.ndarray:
    """key -> pattern (the map is its own inverse on signed 16-bit values)."""
    return key(k) & 0xFFFF


def to_f32(k: np.ndarray) -> np.ndarray:
    return pattern_to_f32(pattern(k))


def from_f32(x: np.ndarray) -> np.ndarray:
    """float32 -> stored keys, rounded; -0 stored as +0 (one zero: see the module's doc)."""
    p = round_f32(x)
    return key(np.where(p == 0x8000, 0, p))


def encode(values: np.ndarray) -> np.ndarray:
    """Reals -> stored keys: rounded to float32 first (the C input is a float32), then to
    bfloat16."""
    return from_f32(np.asarray(values, dtype=np.float64).astype(np.float32))


def decode(stored: np.ndarray) -> np.ndarray:
    return to_f32(stored).astype(np.float64)


# -- exp, sigmoid, tanh, log, sqrt: the real function correctly rounded -----------------------


def round_f64(y: np.ndarray) -> np.ndarray:
    """float64 -> bfloat16 patterns, to nearest, ties to even, in one rounding (through
    float32 it would be two); NaN -> 0x7fc0."""
    y = np.asarray(y, dtype=np.float64)
    a = np.abs(y)
    finite = np.isfinite(a) & (a > 0)
    _, ex = np.frexp(np.where(finite, a, 1.0))
    q = np.maximum(ex - 1, -126) - 7  # the exponent of a bfloat16 ulp at a
    r = np.ldexp(np.rint(np.ldexp(np.where(finite, a, 0.0), -q)), q)
    with np.errstate(over="ignore"):
        p = (np.where(finite, r, a).astype(np.float32).view(np.uint32) >> 16).astype(np.int64)
    p = np.where(np.signbit(y), p | 0x8000, p)
    return np.where(np.isnan(y), 0x7FC0, p)


_FUNCTIONS = {
    "exp": np.exp,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "tanh": np.tanh,
    "log": np.log,
    "sqrt": np.sqrt,
}


@functools.cache
def function_table(name: str) -> np.ndarray:
    """The pattern of f(x) for each of the 65,536 patterns x: f in float64, rounded once
    to bfloat16 (a NaN x gives x quieted, log and sqrt of a negative 0x7fc0). The C
    computes the same on integers (formats/bfloat16/runtime.py's minun_bf16_functions)."""
    p = np.arange(1 << 16, dtype=np.int64)
    with np.errstate(all="ignore"):
        t = round_f64(_FUNCTIONS[name](pattern_to_f32(p).astype(np.float64)))
    return np.where((p & 0x7FFF) > 0x7F80, p | 0x40, t)


def apply(name: str, k: np.ndarray) -> np.ndarray:
    """The function `name` on stored keys."""
    return key(function_table(name)[pattern(k)])


# -- evaluator kernels: keys in, keys out ---------------------------------------------------


def _binary(fn):
    def run(op, a, b):
        rank = max(a.ndim, b.ndim) - 1
        return from_f32(fn(to_f32(_align(a, rank)), to_f32(_align(b, rank))))

    return run


def _unary(fn):
    def run(op, x):
        return from_f32(fn(to_f32(x)))

    return run


def _sequential(terms: np.ndarray) -> np.ndarray:
    """float32 sum over the last axis, in order, from +0."""
    acc = np.zeros(terms.shape[:-1], dtype=np.float32)
    for i in range(terms.shape[-1]):
        acc = (acc + terms[..., i]).astype(np.float32)
    return acc


def _matmul(op, a, b):
    fa, fb = to_f32(a), to_f32(b)  # (B, m, k), (B, k, n)
    terms = (fa[:, :, :, None] * fb[:, None, :, :]).astype(np.float32)  # exact products
    return from_f32(_sequential(np.moveaxis(terms, 2, 3)))


def _sparse_matmul(op, a, x):
    from minun_mlir.formats.posit.representation import compressed

    _, rows, cols = compressed(a[0])  # the nonzero keys, column by column
    fa, fx = to_f32(a[0]), to_f32(x)
    out = np.zeros((x.shape[0], a.shape[1], x.shape[2]), dtype=np.float32)
    for j, k in zip(rows, cols):
        out[:, j, :] = pattern_to_f32(round_f32(
            (out[:, j, :] + (fa[j, k] * fx[:, k, :]).astype(np.float32)).astype(np.float32)))
    return key(round_f32(out))


def _conv2d(op, x, f):
    from minun_mlir.numerics.float_eval import _windows

    strides, pads, dil = (minun.ints(a) for a in (op.strides, op.pads, op.dilations))
    groups = op.groups.value.data
    f = to_f32(f[0])
    b, n = x.shape[:2]
    win = _windows(to_f32(x).reshape(b * n, *x.shape[2:]), f.shape[1:3], strides, pads, dil,
                   0.0).astype(np.float32)
    cg = f.shape[3]
    outs = []
    for g in range(groups):
        w = win[:, :, :, g * cg:(g + 1) * cg]  # (M, Ho, Wo, cg, kh, kw)
        w = np.moveaxis(w, 3, 5).reshape(*w.shape[:3], 1, -1)  # (M, Ho, Wo, 1, K)
        fk = f[g].reshape(-1, f.shape[4]).T.reshape(1, 1, 1, f.shape[4], -1)
        outs.append(_sequential((w * fk).astype(np.float32)))
    y = from_f32(np.concatenate(outs, axis=-1))
    return y.reshape(b, n, *y.shape[1:])


def _softmax(op, x):
    """Per row: m = max (key order), d = x - m and e = exp(d) each rounded, the float32 sum
    of e in order from +0 rounded once, then e / sum rounded."""
    top = to_f32(x.max(axis=-1, keepdims=True))
    d = from_f32((to_f32(x) - top).astype(np.float32))
    e = to_f32(apply("exp", d))
    total = to_f32(from_f32(_sequential(e)))[..., None]
    return from_f32((e / total).astype(np.float32))


def _log_softmax(op, x):
    """Per row: d = x - m and e = exp(d) rounded, the ordered float32 sum of e rounded,
    its log rounded, y = d - log rounded."""
    top = to_f32(x.max(axis=-1, keepdims=True))
    d = from_f32((to_f32(x) - top).astype(np.float32))
    e = to_f32(apply("exp", d))
    log = to_f32(apply("log", from_f32(_sequential(e))))
    return from_f32((to_f32(d) - log[..., None]).astype(np.float32))


def _normalise_l2(op, x):
    """Per position: the float32 sum of the (exact) squares in order rounded once, its
    square root rounded, x / that rounded; 0 where the norm is not positive."""
    f = to_f32(x)
    norm = to_f32(apply("sqrt", from_f32(_sequential((f * f).astype(np.float32)))))
    norm = norm[..., None]
    q = from_f32((f / np.where(norm > 0, norm, np.float32(1))).astype(np.float32))
    return np.where(norm > 0, q, 0)


def clip_bounds(op: Operation) -> tuple[int, int]:
    lo, hi = (0.0, 6.0) if isinstance(op, num.Relu6Op) else (
        float(op.lo.value.data), float(op.hi.value.data))
    return int(encode(np.array(lo))), int(encode(np.array(hi)))


def _clip(op, x):
    lo, hi = clip_bounds(op)
    return np.clip(x, lo, hi)


def _maxpool(op, x):
    from minun_mlir.numerics.float_eval import max_pool

    return max_pool(op, x, -(1 << 15))


_KERNELS = {
    "num.param": lambda op: op.array().astype(np.int64)[None],
    "num.add": _binary(np.add),
    "num.sub": _binary(np.subtract),
    "num.mul": _binary(np.multiply),
    "num.matmul": _matmul,
    "num.sparse_matmul": _sparse_matmul,
    "num.conv2d": _conv2d,
    "num.exp": lambda op, x: apply("exp", x),
    "num.sigmoid": lambda op, x: apply("sigmoid", x),
    "num.tanh": lambda op, x: apply("tanh", x),
    "num.softmax": _softmax,
    "num.log_softmax": _log_softmax,
    "num.normalise_l2": _normalise_l2,
    "num.relu": lambda op, x: np.maximum(x, 0),
    "num.relu6": _clip,
    "num.clip": _clip,
    "num.neg": lambda op, x: np.where(x == 0, 0, ~x),
    "num.max": float_eval._binary(np.maximum),
    "num.min": float_eval._binary(np.minimum),
    "num.maxpool": _maxpool,
    "num.argmax": float_eval._argmax,
    "num.sgn": float_eval._sgn,
    "minun.init": lambda op: np.full((1, *op.result.type.get_shape()),
                                     int(encode(np.array(op.fill.value.data))), dtype=np.int64),
}


class BFloat16Representation(Representation):
    name = "bfloat16"
    needs_profile = False

    def owns(self, element: Attribute) -> bool:
        return isinstance(element, BFloat16Type)

    def quantize(self, module: ModuleOp, config: QuantizeConfig, profile: Profile | None
                 ) -> ModuleOp:
        return BFloat16Converter(config, profile).run(module)

    def encode(self, values: np.ndarray, element: Attribute, rounding: str) -> np.ndarray:
        return encode(values)

    def decode(self, stored: np.ndarray, element: Attribute) -> np.ndarray:
        return decode(stored)

    def kernels(self):
        return _KERNELS
