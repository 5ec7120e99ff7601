"""posit representation: the L2 program with `!num.posit<n, es>` elements (MinUn §2.2).

One posit<n, es> per program (`quantize{repr=posit bits=16 es=2}`), or n per tensor (a
bitwidth assignment: MinUn's Procedure 3 keeps t2 at posit8 in a posit16 program; an op
computes in the widest format of its operands and result, `num.convert` rounding between
formats): every value, parameter and constant is a posit pattern, stored as an n-bit
two's complement integer (the order of those integers is the posit order, so relu, max,
min, maxpool, argmax and sgn are the fixed-point integer comparisons and negation is
integer negation). Every operation
rounds its exact result once (formats/posit/arith.py): add, sub and mul per element; matmul and
conv2d accumulate every product of a dot product exactly in a quire and round once;
sparse matmul adds its rounded terms column by column (as its C loop does); exp, sigmoid
and tanh are correctly rounded; softmax and normalise_l2 are posit programs of those
operations (a quire sum, then posit division; normalise_l2 with a correctly rounded
sqrt). Without a quire (`quantize{quire=false}`, `num.quire = false` on the function),
every dot product and sum of those ops rounds each product and each partial sum instead,
in the C loop's order, as sparse matmul does: no quire state in RAM. The kernels here are
bit-exact with the C runtime in third_party/softposit (docs/numerics.md, "Posits").
"""

from __future__ import annotations

import functools

import numpy as np
from xdsl.dialects.builtin import BoolAttr, IntegerAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from minun_mlir.diagnostics import error
from minun_mlir.dialects import minun, num
from minun_mlir.dialects.num import PositType
from minun_mlir.formats.float32.representation import Float32Converter
from minun_mlir.formats.posit import arith as pz
from minun_mlir.numerics import float_eval
from minun_mlir.numerics.convert import codes
from minun_mlir.numerics.float_eval import Profile, _align
from minun_mlir.numerics.repr import QuantizeConfig, Representation

BITS = num.POSIT_WIDTHS  # n of posit<n, es>: 8..16 and 32


@functools.lru_cache(maxsize=256)
def posit_type(n: int, es: int) -> PositType:
    """`!num.posit<n, es>`, made once: types are immutable, and a quantize run asks for
    its few formats once per value (each construction verifies its parameters)."""
    return PositType(n, es)


class PositConverter(Float32Converter):
    """float32's program (same ops, same attributes) with posit<n, es> elements: n per
    tensor (`bits_by_name`, `param_bits`, `demote`; default `bits`), es per width (`es`, or
    `es_by_bits`). An op
    computes in the widest format of its operands and result (see `compute`)."""

    representation_name = "posit"
    exp_method = num.ExpMethod.POSIT

    def __init__(self, config: QuantizeConfig, profile: Profile | None):
        super().__init__(config, profile)
        self.element = posit_type(config.bits, config.es_for(config.bits))
        # (sparse parameter, wider format) -> its copy in that format (sparse_matmul)
        self.widened_sparse: dict[tuple[SSAValue, PositType], SSAValue] = {}

    def format(self, name: str | None, is_param: bool = False) -> PositType:
        bits = self.config.bits_for(name, is_param)
        return posit_type(bits, self.config.es_for(bits))

    def element_of(self, old: SSAValue) -> Attribute:
        # an exact class: cheaper than isinstance (convert.name_of says why)
        return self.format(self.tensor_name(old), type(old.owner) is minun.ParamOp)

    def widest(self, elements: list[Attribute]) -> Attribute:
        return max(elements, key=lambda el: el.width)

    def annotate(self, fn) -> None:
        fn.attributes["num.rounding"] = StringAttr("nearest")
        if not self.config.quire:
            fn.attributes[QUIRE_ATTR] = BoolAttr.from_bool(False)

    def param(self, op, values, name, sparse, declared) -> SSAValue:
        el = self.format(name, is_param=op is not None and not isinstance(op, minun.ConstantOp))
        ty = minun.tensor_of(values.shape, el)
        stored = codes(_encode_reals, values, el.width, el.exponent_bits)  # remembered
        return self.emit(num.ParamOp.build_param(name, stored, ty, sparse))

    def sparse_matmul(self, op, a, b) -> SSAValue:
        # the sparse matrix must stay a num.param (its C is a compressed copy): one in a
        # narrower format than the product is stored again in the wider one (exact), once,
        # beside the original (so it dominates every use, in a loop body or not); the
        # narrow copy goes when nothing else reads it
        wide = self.widest([a.type.element_type, b.type.element_type, self.element_of(
            op.result)])
        if a.type.element_type != wide:
            widened = self.widened_sparse
            if (a, wide) not in widened:
                old = a.owner
                el = a.type.element_type
                stored = pz.signed(pz.convert(old.array().astype(np.int64), el.width,
                                              el.exponent_bits, wide.width,
                                              wide.exponent_bits), wide.width)
                name = old.sym_name.data + ("" if not old.result.uses else f"_p{wide.width}")
                new = num.ParamOp.build_param(
                    name, stored, minun.tensor_of(a.type.get_shape(), wide), True)
                new.location = old.location
                old.parent_block().insert_op_before(new, old)
                if not old.result.uses:
                    old.detach()
                    old.erase()
                widened[(a, wide)] = new.results[0]
            a = widened[(a, wide)]
        return super().sparse_matmul(op, a, b)


# -- patterns <-> reals -------------------------------------------------------------------


def encode(values: np.ndarray, el: PositType) -> np.ndarray:
    """Reals -> stored patterns (n-bit two's complement integers, int64), rounded once."""
    n, es = el.width, el.exponent_bits
    return pz.signed(pz.encode(np.asarray(values, dtype=np.float64), n, es), n)


def _encode_reals(values: np.ndarray, n: int, es: int) -> np.ndarray:
    """`encode` of any real array as posit<n, es> (convert.codes' key: plain numbers)."""
    return encode(np.asarray(values, dtype=np.float64), posit_type(n, es))


def decode(stored: np.ndarray, el: PositType) -> np.ndarray:
    return pz.decode(np.asarray(stored, dtype=np.int64), el.width, el.exponent_bits)


# -- evaluator kernels: signed patterns in, signed patterns out ---------------------------


def _fmt(op: Operation) -> tuple[int, int]:
    for v in (*op.results, *op.operands):
        if isinstance(v.type, TensorType) and isinstance(v.type.element_type, PositType):
            el = v.type.element_type
            return el.width, el.exponent_bits
    raise AssertionError(op)


def _binary(fn):
    def run(op, a, b):
        n, es = _fmt(op)
        rank = max(a.ndim, b.ndim) - 1
        return pz.signed(fn(_align(a, rank), _align(b, rank), n, es), n)

    return run


def _unary(fn):
    def run(op, x):
        n, es = _fmt(op)
        return pz.signed(fn(x, n, es), n)

    return run


QUIRE_ATTR = "num.quire"  # on the L2 function: false for quantize{quire=false}


def uses_quire(op: Operation) -> bool:
    """Whether the dot products of `op`'s function accumulate in a quire (the default) or
    round every product and partial sum (`num.quire = false`, quantize{quire=false})."""
    parent = op
    while parent is not None and QUIRE_ATTR not in parent.attributes:
        parent = parent.parent_op()
    if parent is None:
        return True
    attr = parent.attributes[QUIRE_ATTR]
    return not (isinstance(attr, IntegerAttr) and attr.value.data == 0)


def _dot(op: Operation, a, b, n: int, es: int, axis: int) -> np.ndarray:
    """The dot products of `op`: through the quire and rounded once, or without one
    (pz.rounded_dot) when its function says num.quire = false."""
    return (pz.dot if uses_quire(op) else pz.rounded_dot)(a, b, n, es, axis=axis)


def _matmul(op, a, b):
    """a (B, m, k) @ b (B, k, n): each dot product through the quire, rounded once (or
    each product and partial sum rounded, without a quire)."""
    n, es = _fmt(op)
    a, b = np.broadcast_arrays(a[:, :, :, None], b[:, None, :, :])  # (B, m, k, n)
    return pz.signed(_dot(op, a, b, n, es, axis=2), n)


def compressed(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values, rows, columns) of the nonzero entries, column by column (the order of the
    C loop over the compressed-column copy, lowering/loops/linear.py)."""
    cols = [np.nonzero(a[:, c])[0] for c in range(a.shape[1])]
    rows = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    colidx = np.concatenate([[c] * len(r) for c, r in enumerate(cols)]) if cols else rows
    return a[rows, colidx.astype(np.int64)], rows, colidx.astype(np.int64)


def _sparse_matmul(op, a, x):
    """Column by column over the nonzero entries: acc[j] = acc[j] + a[j, k] * x[k], the
    product and the sum each rounded (no quire: the terms of a row are far apart)."""
    n, es = _fmt(op)
    vals, rows, cols = compressed(a[0])
    out = np.zeros((x.shape[0], a.shape[1], x.shape[2]), dtype=np.int64)
    for v, j, k in zip(vals, rows, cols):
        term = pz.mul(np.int64(v), x[:, k, :], n, es)
        out[:, j, :] = pz.signed(pz.add(out[:, j, :], term, n, es), n)
    return out


def _conv2d(op, x, f):
    """Each output's kh*kw*C/G products (zero padding) through the quire, rounded once."""
    from minun_mlir.numerics.float_eval import _windows

    n_, es = _fmt(op)
    strides, pads, dil = (minun.ints(a) for a in (op.strides, op.pads, op.dilations))
    groups = op.groups.value.data
    f = f[0]
    b, n = x.shape[:2]
    win = _windows(x.reshape(b * n, *x.shape[2:]), f.shape[1:3], strides, pads, dil, 0)
    cg = f.shape[3]
    outs = []
    for g in range(groups):
        w = win[:, :, :, g * cg:(g + 1) * cg]  # (M, Ho, Wo, cg, kh, kw)
        w = np.moveaxis(w, 3, 5).reshape(*w.shape[:3], 1, -1)  # (M, Ho, Wo, 1, K)
        fk = f[g].reshape(-1, f.shape[4]).T.reshape(1, 1, 1, f.shape[4], -1)  # (.., Cout, K)
        outs.append(pz.signed(_dot(op, *np.broadcast_arrays(w, fk), n_, es, axis=-1), n_))
    y = np.concatenate(outs, axis=-1)
    return y.reshape(b, n, *y.shape[1:])


def _softmax(op, x):
    """Per row: m = max (integer order), d = x - m and e = exp(d) each rounded, the sum of
    e through the quire (e * 1) rounded once, then e / sum rounded."""
    n, es = _fmt(op)
    d = pz.sub(x, x.max(axis=-1, keepdims=True), n, es)
    e = pz.exp(d, n, es)
    total = _dot(op, e, np.full_like(e, 1 << (n - 2)), n, es, axis=-1)[..., None]
    return pz.signed(pz.div(e, total, n, es), n)


def _log_softmax(op, x):
    """Per row: d = x - m and e = exp(d) rounded, the quire sum of e rounded once, its
    log rounded, y = d - log rounded."""
    n, es = _fmt(op)
    d = pz.sub(x, x.max(axis=-1, keepdims=True), n, es)
    e = pz.exp(d, n, es)
    total = _dot(op, e, np.full_like(e, 1 << (n - 2)), n, es, axis=-1)[..., None]
    return pz.signed(pz.sub(d, pz.log(total, n, es), n, es), n)


def _normalise_l2(op, x):
    """Per position: the sum of squares through the quire rounded once, its sqrt rounded,
    each x / sqrt rounded; 0 where the sum is 0 (every x is 0)."""
    n, es = _fmt(op)
    norm = pz.sqrt(_dot(op, x, x, n, es, axis=-1), n, es)[..., None]
    return pz.signed(np.where(norm == 0, 0, pz.div(x, norm, n, es)), n)


def _bounds(op, lo: float, hi: float) -> tuple[int, int]:
    n, es = _fmt(op)
    el = PositType(n, es)
    return int(encode(np.array(lo), el)), int(encode(np.array(hi), el))


def clip_bounds(op: Operation) -> tuple[int, int]:
    """The stored patterns num.clip / num.relu6 clamp to (the bounds rounded once)."""
    if isinstance(op, num.Relu6Op):
        return _bounds(op, 0.0, 6.0)
    return _bounds(op, float(op.lo.value.data), float(op.hi.value.data))


def _clip(op, x):
    lo, hi = clip_bounds(op)
    return np.clip(x, lo, hi)


def _maxpool(op, x):
    from minun_mlir.numerics.float_eval import max_pool

    return max_pool(op, x, -(1 << (_fmt(op)[0] - 1)))


def _convert(op, x):
    """num.convert: the pattern of the target format nearest the value (ties to even)."""
    a, b = op.input.type.element_type, op.result.type.element_type
    return pz.signed(pz.convert(x, a.width, a.exponent_bits, b.width, b.exponent_bits),
                     b.width)


def _init(op):
    el = op.result.type.element_type
    return np.full((1, *op.result.type.get_shape()), int(encode(np.array(
        op.fill.value.data), el)), dtype=np.int64)


_KERNELS = {
    "num.param": lambda op: op.array().astype(np.int64)[None],
    "num.convert": _convert,
    "num.add": _binary(pz.add),
    "num.sub": _binary(pz.sub),
    "num.mul": _binary(pz.mul),
    "num.matmul": _matmul,
    "num.sparse_matmul": _sparse_matmul,
    "num.conv2d": _conv2d,
    "num.exp": _unary(pz.exp),
    "num.sigmoid": _unary(pz.sigmoid),
    "num.tanh": _unary(pz.tanh),
    "num.softmax": _softmax,
    "num.log_softmax": _log_softmax,
    "num.normalise_l2": _normalise_l2,
    "num.relu": lambda op, x: np.maximum(x, 0),
    "num.relu6": _clip,
    "num.clip": _clip,
    "num.neg": lambda op, x: pz.signed(-x, _fmt(op)[0]),
    "num.max": float_eval._binary(np.maximum),
    "num.min": float_eval._binary(np.minimum),
    "num.maxpool": _maxpool,
    "num.argmax": float_eval._argmax,
    "num.sgn": float_eval._sgn,
    "minun.init": _init,
}


class PositRepresentation(Representation):
    name = "posit"
    needs_profile = False
    bitwidths = BITS
    bitwidths_text = "8..16 or 32"
    options = frozenset({"bits", "es", "quire", "demote", "param_bits"})
    searches = frozenset({"haunter"})

    def label(self, o) -> str:
        return (f"posit{o.bits}" + ("" if o.es == 2 else f"-es{o.es}")
                + ("" if o.param_bits is None else f"-params{o.param_bits}")
                + ("" if o.quire else "-noquire"))

    def owns(self, element: Attribute) -> bool:
        return isinstance(element, PositType)

    def quantize(self, module: ModuleOp, config: QuantizeConfig, profile: Profile | None
                 ) -> ModuleOp:
        if config.bits not in BITS or not 0 <= config.es <= 2:
            raise error(f"quantize: posits need bits 8..16 or 32 and es 0..2, got bits="
                        f"{config.bits} es={config.es}")
        for bits, es in sorted(config.es_by_bits.items()):
            if bits not in BITS or not 0 <= es <= 2:
                raise error(f"quantize: posits need bits 8..16 or 32 and es 0..2, got es={es} "
                            f"for {bits}-bit posits")
        if config.scales == "maxscale" or config.scale_by_name:
            raise error("quantize: posits have no scales (no maxscale or per-tensor scales)")
        widths = {config.bits_for(n) for n in (*config.bits_by_name, *config.demote)}
        if config.param_bits is not None:
            widths.add(config.param_bits)
        if not widths <= set(BITS):
            raise error(f"quantize: posit tensors need bits 8..16 or 32, got "
                        f"{', '.join(map(str, sorted(widths - set(BITS))))}")
        return PositConverter(config, profile).run(module)

    def encode(self, values: np.ndarray, element: Attribute, rounding: str) -> np.ndarray:
        return encode(values, element)

    def decode(self, stored: np.ndarray, element: Attribute) -> np.ndarray:
        return decode(stored, element)

    def kernels(self):
        return _KERNELS
