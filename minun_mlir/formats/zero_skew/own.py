"""Zero-skew integer forms of our own, for programs with no external integer reference
(SeeDot programs, float ONNX models we quantize; not a TFLite model or a pre-quantized
ONNX one, whose function carries `minun.requantize` and keeps TFLite's / onnxruntime's
integers). TFLite's ADD/SUB and MUL requantize every operand and result; where an
exact integer form is cheap these compute it instead (docs/numerics.md):

- `x - c`, `x + c` with c a parameter or literal (or an index of one, ProtoNN's `B[i]`)
  read only by matmuls (directly or through a transpose): c rounded onto x's grid
  (scale s_x, int16), `(q - zp) -+ round(c / s_x)` exactly in an int16 at (s_x, 0), no
  requantization; the matmul multiplies the int16s into its int32 accumulator. Used when
  every bound fits (|difference| < 2^15, K |difference|^2 < 2^31);
- `c * acc` with c a scalar constant and acc an int32 accumulator (a matmul's, ProtoNN's
  `-g2 * (del^T del)`, Bonsai's `sigma * (V x)`): c folded into the requantization's
  multiplier (num.requantize {factor = |c|}); for c < 0 to the negated range, then
  num.neg (exact: ~q);
- exp(-y) (a num.neg the rules above made): one num.lut table of y;
- `$(i) (A_i * b_i)` whose term is a matmul or product of int8 values: the terms' int32
  accumulators (one scale: the loop body has one type) summed in int32 with no
  requantization, where n K max|a| max|b| < 2^31 (no sum can wrap).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from minun_mlir.dialects import minun, num
from minun_mlir.dialects.num import AffineType
from minun_mlir.formats.zero_skew import arith as af
from minun_mlir.numerics.convert import shape_of


def el_of(value: SSAValue) -> AffineType:
    el = value.type.element_type if isinstance(value.type, TensorType) else value.type
    assert isinstance(el, AffineType), value.type
    return el


INT16_LIMIT = (1 << 15) - 1
INT32_LIMIT = (1 << 31) - 1
SHIFT_LIMIT = 1 << 30  # loops.shift_requantize's one floor is MBQM's below it


def scalar_constant(old: SSAValue) -> float | None:
    """The value of an L1 scalar parameter or literal, through negations, or None."""
    sign = 1.0
    while isinstance(old.owner, minun.NegOp):
        sign, old = -sign, old.owner.operands[0]
    owner = old.owner
    if not isinstance(owner, (minun.ParamOp, minun.ConstantOp)):
        return None
    values = np.asarray(owner.array(), dtype=np.float64)
    return sign * float(values.reshape(-1)[0]) if values.size == 1 else None


def constant_source(old: SSAValue) -> tuple[Operation, minun.IndexOp | None] | None:
    """(the L1 parameter or literal, the index op reading it or None) of a constant
    operand: the constant itself or `c[i]`."""
    owner = old.owner
    if isinstance(owner, (minun.ParamOp, minun.ConstantOp)):
        return owner, None
    if isinstance(owner, minun.IndexOp) and isinstance(owner.input.owner,
                                                       (minun.ParamOp, minun.ConstantOp)):
        return owner.input.owner, owner
    return None


def offset_bound(t: AffineType) -> int:
    """max |q - zp| of a value of type t."""
    lo, hi = af.int_range(t.width)
    return max(hi - t.zp, t.zp - lo)


def _product_readers(old: SSAValue) -> list[minun.MatMulOp] | None:
    """The matmuls reading `old` (directly or through transposes), or None if anything
    else reads it."""
    found = []
    for use in old.uses:
        user = use.operation
        if isinstance(user, minun.MatMulOp):
            found.append(user)
        elif isinstance(user, minun.TransposeOp):
            inner = _product_readers(user.results[0])
            if inner is None:
                return None
            found += inner
        else:
            return None
    return found or None


def exact_difference(cv, op: Operation, a: SSAValue, b: SSAValue, subtract: bool
                     ) -> SSAValue | None:
    """x -+ c (or c + x) as a saturated int8 on a power-of-two grid, or None where the
    pattern or a bound does not hold. `cv` is the ZeroSkewConverter."""
    if not cv.own or cv.given(op.results[0]) is not None:
        return None
    r = cv.value_range_rounded(op.results[0])
    if _product_readers(op.results[0]) is None or r is None or max(map(abs, r)) == 0:
        return None
    lhs, rhs = op.operands
    found = constant_source(rhs)
    var, var_old, first = a, lhs, True
    if found is None and not subtract:
        found, var, var_old, first = constant_source(lhs), b, rhs, False
    if found is None or constant_source(var_old) is not None:
        return None
    if not isinstance(var.type, TensorType) or el_of(var).width != 8:
        return None
    owner, index = found
    values = np.asarray(owner.array(), dtype=np.float64)
    acc = _accumulator(var)
    step = max(map(abs, r)) / 127  # the profiled |x -+ c| on the int8 codes
    # x: the int32 accumulator the int8 value was requantized from, else that int8's
    # q - zp, shifted right onto the grid (a power-of-two multiple of its scale, the
    # finest at least `step`): no multiply
    for source in ([acc, var] if acc is not None else [var]):
        t, x_bound = _grid(source, step)
        q = af.quantize(values, t.real_scale, 0, 32)
        if x_bound + int(np.max(np.abs(q), initial=0)) <= INT16_LIMIT and \
                worst_case(source) < SHIFT_LIMIT:
            break
    else:
        return None
    wide = AffineType(16, t.real_scale, 0)
    x = cv.requantize(source, wide)
    cv.counter += 1
    name = (owner.sym_name.data if isinstance(owner, minun.ParamOp)
            else f"c{cv.counter}") + "_grid"
    param = num.ParamOp.build_param(name, q, minun.tensor_of(values.shape, wide))
    if index is None:
        c = cv.emit(param)
    else:  # the whole constant beside its int8 copy, indexed here as in L1
        where = cv.map[owner.results[0]].owner
        where.parent_block().insert_op_before(param, where)
        c = cv.copy(index, [param.results[0], cv.map[index.index]])
    kind = num.SubOp if subtract else num.AddOp
    exact = cv.emit(kind.create(operands=[x, c] if first else [c, x], result_types=[
        cv.tensor(op.results[0], wide)]))
    return cv.requantize(exact, AffineType(8, t.real_scale, 0))  # saturated: a clamp


def _accumulator(value: SSAValue) -> SSAValue | None:
    """The int32 accumulator (of a matmul or product of int8 values) an int8 value is a
    plain per-tensor requantization of, or None."""
    rq = value.owner
    if not isinstance(rq, num.RequantizeOp) or rq.channels() is not None or \
            num.in_ort_mode(rq) or rq.left_shift.value.data or rq.divisor is not None or \
            rq.factor is not None:
        return None
    src = rq.input
    owner = src.owner
    if not isinstance(owner, (num.MatMulOp, num.MulOp)) or el_of(src).width != 32:
        return None
    return src if all(el_of(v).width == 8 for v in owner.operands) else None


def _grid(source: SSAValue, step: float) -> tuple[AffineType, int]:
    """(the int16 grid of a difference of `source`: its scale times the smallest power of
    two at least `step`, the bound of |x| there): an int8's |q - zp| or an accumulator's
    worst case, K max|a - za| max|b - zb|, shifted right."""
    t = el_of(source)
    shift = max(0, math.ceil(math.log2(step / t.real_scale)))
    return AffineType(16, t.real_scale * 2.0**shift, 0), (worst_case(source) >> shift) + 1


def worst_case(value: SSAValue) -> int:
    """max |x - zp| of an int8 value, or of the int32 accumulator of a matmul or product of
    8- or 16-bit values (K max|a - za| max|b - zb|); 2^31 for any other."""
    t = el_of(value)
    if t.width != 32:
        return offset_bound(t)
    owner = value.owner
    if not isinstance(owner, (num.MatMulOp, num.MulOp)) or num.in_ort_mode(owner):
        return 1 << 31
    ta, tb = el_of(owner.operands[0]), el_of(owner.operands[1])
    k = owner.operands[0].type.get_shape()[-1] if isinstance(owner, num.MatMulOp) else 1
    return k * offset_bound(ta) * offset_bound(tb)


def shape_k(matmul: minun.MatMulOp) -> int:
    """The contracted length of an L1 matmul."""
    return shape_of(matmul.lhs)[-1]


def folds_scalar(cv, user: Operation, old: SSAValue, new: SSAValue) -> bool:
    """Whether `user` (an L1 op reading `old`, converted to the int32 accumulator `new`)
    is `c * old` with a scalar constant c that fold_scalar folds into a requantization."""
    if not cv.own or not isinstance(user, minun.ScalarMulOp) or user.rhs is not old or \
            cv.channel_scales(new) is not None or cv.given(user.results[0]) is not None:
        return False
    c = scalar_constant(user.lhs)
    return c is not None and c != 0 and math.isfinite(c) and worst_case(new) < SHIFT_LIMIT


def fold_scalar(cv, op: Operation, a: SSAValue, b: SSAValue) -> SSAValue | None:
    """c * acc as one requantization with c in its multiplier (then num.neg for c < 0),
    or None."""
    if not isinstance(op, minun.ScalarMulOp) or not isinstance(b.type, TensorType) \
            or el_of(b).width != 32 or not folds_scalar(cv, op, op.rhs, b):
        return None
    c = scalar_constant(op.lhs)
    lo, hi = cv.type_range(op.results[0])
    if c < 0:
        lo, hi = -hi, -lo
    flipped = power_of_two_type(lo, hi, abs(c) * el_of(b).real_scale)
    y = cv.emit(num.RequantizeOp.make(b, flipped, factor=abs(c)))
    if c > 0:
        return y
    return cv.emit(num.NegOp.create(operands=[y], result_types=[cv.tensor(
        op.results[0], AffineType(8, flipped.real_scale, -1 - flipped.zp))]))


def power_of_two_type(lo: float, hi: float, real: float) -> AffineType:
    """The int8 type covering [lo, hi] (nudged to 0) whose scale is `real` (the real
    value of one accumulator step) times a power of two, the finest that covers it: the
    requantization to it is a rounding shift (no multiply), at most twice coarser than
    ChooseQuantizationParams'."""
    s, _ = af.choose_params(lo, hi)
    scale = real * 2.0 ** math.ceil(math.log2(s / real))
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    zp = int(af.round_away(-128 - lo / scale))
    zp = min(max(zp, -128), 127)
    if (127 - zp) * scale < hi:  # the rounding of zp cut the top: move it down
        zp = max(-128, int(math.floor(127 - hi / scale)))
    return AffineType(8, scale, zp)


def sums_exactly(cv, term: SSAValue, n: int) -> bool:
    """Whether n int32 terms like `term` (a matmul or product of int8 values, one scale)
    add up in int32 with no wrap: n K max|a - za| max|b - zb| < 2^31."""
    owner = term.owner
    if not cv.own or not isinstance(owner, (num.MatMulOp, num.MulOp)) or \
            num.in_ort_mode(owner) or cv.channel_scales(term) is not None:
        return False
    ta, tb = el_of(owner.operands[0]), el_of(owner.operands[1])
    if ta.width != 8 or tb.width != 8:
        return False
    k = owner.operands[0].type.get_shape()[-1] if isinstance(owner, num.MatMulOp) else 1
    return n * k * offset_bound(ta) * offset_bound(tb) <= INT32_LIMIT


def sum_length(user: Operation) -> int | None:
    """The trip count of the `$` sum whose body `user` (a yield) ends, or None."""
    parent = user.parent_op() if isinstance(user, minun.YieldOp) else None
    if not isinstance(parent, minun.SumOp):
        return None
    return parent.upper.value.data - parent.lower.value.data


def negated_exp(t: AffineType, neg: AffineType, out: AffineType) -> np.ndarray:
    """The 256 int8 results of exp(num.neg(q)) for q = -128..127 of type t: num.neg's
    integer (t.zp + neg.zp - q, saturated) looked up in exp's table (num.lut: one load
    instead of a negation, its clamps and a load)."""
    q = np.arange(af.QMIN, af.QMAX + 1)
    n = np.clip(t.zp + neg.zp - q, af.QMIN, af.QMAX)
    return af.table("exp", neg.real_scale, neg.zp, out.real_scale, out.zp)[n - af.QMIN]

