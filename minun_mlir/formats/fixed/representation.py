"""Fixed-point representation: scale assignment (SeeDot's maxscale rules or Shiftry's
data-driven scales) and the bit-exact kernels of its L2 ops.

Scale rules, per L1 op (B = bitwidth, P = maxscale; docs/numerics.md has the details):

- param, literal: GETP of the largest magnitude (both modes).
- input: GETP of the declared range (maxscale); GetScale of the profile, or the
  input-scale knob (data-driven).
- a + b: both operands to ADDSCALE(min scale), added in B bits (maxscale); both to the
  lower scale, summed exactly, rescaled to the profiled scale (data-driven).
- a <*> b, s * A: operands shifted by S_mul / 2 (MULSCALE), product in B bits; or the
  exact 2B-bit product rescaled.
- A * B, conv2d, A |*| x: MULSCALE pre-shift, B-bit products, TreeSum with TREESUMSCALE
  halvings; or exact products in a 2B-bit wrapping accumulator, rescaled once.
- exp: SeeDot's two tables over the profiled range (maxscale), Shiftry's fixed-scale tables
  (data-driven); sigmoid and tanh: Shiftry's construction in both modes.
- loop-carried values: the lowest scale the body settles on (maxscale fixpoint), or
  GetScale over the init and every iteration's value (data-driven).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from minun_mlir.diagnostics import error
from minun_mlir.dialects import minun, num
from minun_mlir.dialects.num import FixedType
from minun_mlir.formats.fixed import arith as fx
from minun_mlir.formats.int4 import weights as int4
from minun_mlir.numerics import float_eval
from minun_mlir.numerics.convert import L2Converter, codes, shape_of
from minun_mlir.numerics.float_eval import Profile, ValueStats, _align
from minun_mlir.numerics.repr import QuantizeConfig, Representation

WIDTHS = (8, 16, 32, 64)


def hi_of(bits: int) -> int:
    return fx.int_range(bits)[1]


def _tree_leaves(nodes: np.ndarray, roots: np.ndarray) -> list[list[int]]:
    """The leaf rows each tree reaches."""
    out = []
    for root in roots:
        stack, rows = [int(root)], set()
        while stack:
            n = stack.pop()
            if n < 0:
                rows.add(-n - 1)
            else:
                stack.extend(int(c) for c in nodes[n, 1:])
        out.append(sorted(rows))
    return out


def integer_thresholds(op: minun.TreeEnsembleOp, grid: np.ndarray, bounds: tuple[int, int]
                       ) -> tuple[np.ndarray, np.ndarray]:
    """The node table and integer thresholds of a tree ensemble whose thresholds are
    `grid` in units of the input's integers: <= nodes keep floor, < nodes ceil (the integer
    comparison is then the real one); a threshold past `bounds` makes its node
    unconditional (both children the same) before it is clamped."""
    lo, hi = bounds
    leq = op.mode.data == "leq"
    t_int = np.floor(grid) if leq else np.ceil(grid)
    nodes = op.arrays()["nodes"].reshape(-1, 3).copy()
    always = (t_int >= hi) if leq else (t_int > hi)
    never = (t_int < lo) if leq else (t_int <= lo)
    nodes[always, 2] = nodes[always, 1]
    nodes[never, 1] = nodes[never, 2]
    return nodes, np.clip(t_int, lo, hi).astype(np.int64)


def tree_sum_bound(op: minun.TreeEnsembleOp, nodes: np.ndarray) -> float:
    """The largest |sum| the ensemble can produce: over outputs, |base| + the sum over
    trees of their largest |leaf|."""
    a = op.arrays()
    return _tree_bound(_tree_leaves(nodes, a["roots"].reshape(-1)), np.abs(a["leaves"]),
                       np.abs(a["base"]))


def _tree_bound(trees: list[list[int]], leaves: np.ndarray, base: np.ndarray) -> float:
    """max over outputs of |base| + the sum over trees of their largest |leaf|."""
    total = base.astype(np.float64).copy()
    for rows in trees:
        total = total + leaves[rows].max(axis=0)
    return float(total.max())


@functools.lru_cache(maxsize=4096)
def fixed_type(bits: int, scale: int) -> FixedType:
    """`!num.fixed<bits, scale>`, made once: types are immutable, and a quantize run asks
    for the same few thousand times (each construction verifies its parameters)."""
    return FixedType(bits, scale)


def wider(bits: int) -> int:
    """The accumulator width for values of `bits`: twice as wide (64 at most)."""
    return min(2 * bits, 64)


def fits_width(bits_needed: int) -> int:
    return next(w for w in WIDTHS if w >= bits_needed) if bits_needed <= 64 else 64


class FixedConverter(L2Converter):
    representation_name = "fixed-point"

    def __init__(self, config: QuantizeConfig, profile: Profile | None):
        super().__init__(config, profile)
        self.maxscale_mode = config.scales == "maxscale"
        if self.maxscale_mode and config.maxscale is None:
            raise error("quantize: scales=maxscale needs a maxscale")
        self.rules = fx.SeeDotRules(config.bits, config.maxscale or 0)
        self.fused: dict[Operation, SSAValue] = {}  # adds done inside a reduction

    # -- helpers ---------------------------------------------------------------------

    def bits(self, old: SSAValue | None) -> int:
        if old is None:
            return self.config.bits_for(None)
        owner = type(old.owner)  # exact classes: cheaper than isinstance (see name_of)
        is_param = owner is minun.ParamOp
        name = self.tensor_name(old)
        if owner is minun.InputOp and self.config.input_bits is not None \
                and name not in self.config.bits_by_name:
            return self.config.input_bits
        return self.config.bits_for(name, is_param)

    @staticmethod
    def t(value: SSAValue) -> FixedType:
        el = value.type.element_type if isinstance(value.type, TensorType) else value.type
        assert isinstance(el, FixedType), value.type
        return el

    def absmax(self, old: SSAValue | None) -> float | None:
        r = self.value_range(old)
        return None if r is None else max(abs(r[0]), abs(r[1]))

    def scale_for(self, old: SSAValue | None, bits: int, cap: int,
                  fallback: int | None = None) -> int:
        """Data-driven scale of an L1 value (GetScale of its profiled magnitude), never
        above `cap` (the precision its operands give); `fallback` (default: cap) when the
        value was never profiled (e.g. a branch no example took)."""
        fixed = None if old is None or self.maxscale_mode else self.config.scale_override(
            self.tensor_name(old))
        if fixed is not None:
            return min(fixed, cap)
        m = self.absmax(old)
        if m is None:
            return min(cap, cap if fallback is None else fallback)
        return min(fx.get_scale(m, bits), cap)

    def rescale(self, value: SSAValue, bits: int, scale: int, overflow: str | None = None
                ) -> SSAValue:
        el = self.t(value)
        if el.width == bits and el.frac == scale:
            return value
        return self.emit(num.RescaleOp.make(value, fixed_type(bits, scale), self.shift_rounding,
                                            overflow or self.config.overflow))

    @property
    def shift_rounding(self) -> str:
        return self.config.shift_rounding or self.config.rounding

    def cast(self, value: SSAValue, to: Attribute) -> SSAValue:
        if not isinstance(value.type, TensorType):
            return value
        el = to.element_type if isinstance(to, TensorType) else to
        return self.rescale(value, el.width, el.frac)

    def result_type(self, shape, bits: int, scale: int) -> TensorType:
        return minun.tensor_of(shape, fixed_type(bits, scale))

    def _attrs(self, **extra) -> dict[str, Attribute]:
        attrs: dict[str, Attribute] = {"rounding": num.rounding_attr(self.shift_rounding)}
        for k, v in extra.items():
            attrs[k] = IntegerAttr(v, i64) if isinstance(v, int) else v
        return attrs

    def annotate(self, fn) -> None:
        fn.attributes["num.rounding"] = StringAttr(self.config.rounding)
        fn.attributes["num.overflow"] = StringAttr(self.config.overflow)
        if self.maxscale_mode:
            fn.attributes["num.maxscale"] = IntegerAttr(self.config.maxscale, i64)

    # -- leaves ------------------------------------------------------------------------

    def input(self, op: minun.InputOp) -> SSAValue:
        bits = self.bits(op.result)
        declared = max(abs(op.range_lo.value.data), abs(op.range_hi.value.data))
        fixed = self.config.scale_override(op.sym_name.data)
        if fixed is not None and not self.maxscale_mode:
            scale = fixed
        elif self.config.input_scale is not None:
            scale = self.config.input_scale
        elif not self.maxscale_mode and self.absmax(op.result) is not None:
            scale = fx.get_scale(self.absmax(op.result), bits)
        else:
            scale = fx.get_scale(declared, bits)
        ty = self.result_type(shape_of(op.result), bits, scale)
        return self.emit(num.InputOp.create(attributes={"sym_name": op.sym_name},
                                            result_types=[ty]))

    def param(self, op, values, name, sparse, declared) -> SSAValue:
        if op is not None:
            bits = self.bits(op.results[0])
        else:  # a constant the converter made (e.g. leaky relu's alpha)
            bits = self.config.bits_for(name, is_param=True)
        # GETP of the actual values (SeeDot's C-Val), not of the declared range
        magnitude = float(np.abs(values).max()) if values.size else 0.0
        scale = fx.get_scale(magnitude, bits)
        if not self.maxscale_mode and self.config.scale_override(name) is not None:
            scale = self.config.scale_override(name)  # saturated below if too high
        # remembered across runs (convert.codes), except where an overflow report counts
        # what fx.quantize saturates
        stored = (fx.quantize(values, bits, scale, self.config.rounding, "saturate")
                  if fx.counting() else
                  codes(fx.quantize, values, bits, scale, self.config.rounding, "saturate"))
        ty = self.result_type(values.shape, bits, scale)
        return self.emit(num.ParamOp.build_param(name, stored, ty, sparse))

    def init_type(self, op: minun.InitOp, fill: float) -> Attribute:
        bits = self.bits(op.result)
        return fixed_type(bits, fx.get_scale(abs(fill), bits))

    # -- trees -------------------------------------------------------------------------

    def tree_ensemble(self, op: minun.TreeEnsembleOp, x: SSAValue) -> SSAValue:
        """Thresholds at the input's scale, rounded so that the integer comparison is the
        real one on the quantized input: x/2^s <= t iff x <= floor(t 2^s), x/2^s < t iff
        x < ceil(t 2^s). A threshold beyond the input's range makes its node always go
        one way (both children the same), so clamping it changes nothing. Leaves and base
        at one output scale where the worst-case sum (|base| + the largest leaf of every
        tree) fits: the sum over trees is then an exact integer sum in the output width."""
        tx = self.t(x)
        a = op.arrays()
        scaled = a["thresholds"].astype(np.float64) * math.ldexp(1.0, tx.frac)
        nodes, t_int = integer_thresholds(op, scaled, fx.int_range(tx.width))
        bits = self.bits(op.result)
        leaves, base = a["leaves"].astype(np.float64), a["base"].astype(np.float64)
        trees = _tree_leaves(nodes, a["roots"].reshape(-1))
        scale = fx.get_scale(float(_tree_bound(trees, np.abs(leaves), np.abs(base))), bits)
        while True:
            q_leaves = fx.quantize(leaves, bits, scale, "nearest", "saturate")
            q_base = fx.quantize(base, bits, scale, "nearest", "saturate")
            if _tree_bound(trees, np.abs(q_leaves), np.abs(q_base)) <= hi_of(bits):
                break
            scale -= 1
        attrs = dict(op.attributes)
        attrs.update(nodes=minun.dense_ints(nodes), thresholds=minun.dense_ints(
            t_int, tx.width), leaves=minun.dense_ints(q_leaves, bits),
            base=minun.dense_ints(q_base, bits))
        new = minun.TreeEnsembleOp.create(
            operands=[x], attributes=attrs,
            result_types=[self.result_type(shape_of(op.result), bits, scale)])
        return self.emit(new)

    # -- arithmetic --------------------------------------------------------------------

    def add(self, op: Operation, a: SSAValue, b: SSAValue, subtract: bool) -> SSAValue:
        if op in self.fused:  # a per-channel bias added inside the reduction before it
            return self.fused.pop(op)
        kind = num.SubOp if subtract else num.AddOp
        ta, tb = self.t(a), self.t(b)
        shape = shape_of(op.results[0])
        out_bits = self.bits(op.results[0])
        low = min(ta.frac, tb.frac)
        if self.maxscale_mode:
            p3, _ = self.rules.addscale(low)
            a, b = self.rescale(a, self.config.bits, p3), self.rescale(b, self.config.bits, p3)
            return self.emit(kind.create(operands=[a, b], result_types=[
                self.result_type(shape, self.config.bits, p3)]))
        if self.config.adds == "result-scale":  # Shiftry: both operands to the result's
            scale = self.scale_for(op.results[0], out_bits, low)
            a, b = self.rescale(a, out_bits, scale), self.rescale(b, out_bits, scale)
            return self.emit(kind.create(operands=[a, b], result_types=[
                self.result_type(shape, out_bits, scale)]))
        a, b = self.rescale(a, ta.width, low), self.rescale(b, tb.width, low)
        wide = wider(max(ta.width, tb.width))
        total = self.emit(kind.create(operands=[a, b], result_types=[
            self.result_type(shape, wide, low)]))
        return self.rescale(total, out_bits, self.scale_for(op.results[0], out_bits, low))

    def mul(self, op: Operation, a: SSAValue, b: SSAValue) -> SSAValue:
        ta, tb = self.t(a), self.t(b)
        shape = shape_of(op.results[0])
        if self.maxscale_mode:
            p_mul, s_mul = self.rules.mulscale(ta.frac, tb.frac)
            bits = self.config.bits
            a = self.rescale(a, bits, ta.frac - s_mul // 2)
            b = self.rescale(b, bits, tb.frac - s_mul // 2)
            return self.emit(num.MulOp.create(operands=[a, b], result_types=[
                self.result_type(shape, bits, p_mul)]))
        out_bits = self.bits(op.results[0])
        prod = ta.frac + tb.frac
        product = self.emit(num.MulOp.create(operands=[a, b], result_types=[
            self.result_type(shape, fits_width(ta.width + tb.width), prod)]))
        fallback = min(ta.frac, tb.frac)
        return self.rescale(product, out_bits,
                            self.scale_for(op.results[0], out_bits, prod, fallback))

    def _reduction(self, op: Operation, a: SSAValue, b: SSAValue, terms: int, build,
                   channels: tuple[int, int] | None = None):
        """Shared by matmul, sparse matmul and conv2d: `build(a, b, halvings, result_type)`
        makes the op; the rules decide operand shifts, halvings and accumulator width.
        `channels` = (operand index, axis): the weight operand whose scales may be per
        channel (quantize{per-channel=true})."""
        ta, tb = self.t(a), self.t(b)
        shape = shape_of(op.results[0])
        if channels is not None and (self.config.per_channel or self.config.weight_bits) \
                and not self.maxscale_mode:
            weight = self._channel_weight(op, (a, b)[channels[0]], channels[0])
            if weight is not None:
                return self._per_channel(op, a, b, channels, weight, build)
        if self.maxscale_mode:
            bits = self.config.bits
            p_mul, s_mul = self.rules.mulscale(ta.frac, tb.frac)
            p3, s_add = self.rules.treesumscale(p_mul, terms)
            a = self.rescale(a, bits, ta.frac - s_mul // 2)
            b = self.rescale(b, bits, tb.frac - s_mul // 2)
            return self.emit(build(a, b, s_add, self.result_type(shape, bits, p3)))
        out_bits = self.bits(op.results[0])
        prod = ta.frac + tb.frac
        fallback = min(ta.frac, tb.frac)
        out_scale = self.scale_for(op.results[0], out_bits, prod, fallback)
        cap = wider(max(ta.width, tb.width))
        excess = out_bits + (prod - out_scale) - cap
        if excess > 0:  # keep the accumulator at 2B bits: drop low bits of the operands
            a = self.rescale(a, ta.width, ta.frac - (excess + 1) // 2)
            b = self.rescale(b, tb.width, tb.frac - excess // 2)
            prod -= excess
        acc = fits_width(max(out_bits + prod - out_scale, 1))
        acc = min(max(acc, 16), cap)
        total = self.emit(build(a, b, 0, self.result_type(shape, acc, prod)))
        return self.rescale(total, out_bits, out_scale)

    # -- per-channel weight scales ---------------------------------------------------

    def _channel_weight(self, op: Operation, w: SSAValue, index: int) -> np.ndarray | None:
        """The float values of a weight that can take per-channel scales: a dense
        parameter or constant of this block, used by this op only, whose scale is not
        fixed by name; None otherwise."""
        param = w.owner
        old = op.operands[index]
        if not isinstance(param, num.ParamOp) or param.sparse is not None or \
                param.parent_block() is not self.block and not int4.encloses(
                    self.config, old.owner, op) or w.uses or len(list(old.uses)) != 1 or \
                not isinstance(old.owner, (minun.ParamOp, minun.ConstantOp)) or \
                self.config.scale_override(param.sym_name.data) is not None:
            return None
        values = np.asarray(old.owner.array(), dtype=np.float64)
        return values if values.size else None

    def _per_channel(self, op: Operation, a: SSAValue, b: SSAValue,
                     channels: tuple[int, int], values: np.ndarray, build) -> SSAValue:
        """The reduction with a scale per output channel of its weight: each channel at
        the GetScale of its own largest magnitude, its exact sum (at that channel's
        product scale, in a 32-bit accumulator at most), plus the bias an add after it
        brings (when it fits), shifted right to the common output scale by the op's
        `channel_shifts`."""
        index, axis = channels
        operands = [a, b]
        w, x = operands[index], operands[1 - index]
        out_axis = (0, 1)[index] if isinstance(op, minun.MatMulOp) else 3
        fused = self._channel_bias(op, out_axis)
        plan = self._channel_plan(op, x, w, axis, values, fused)
        if fused is not None and plan["bias_bits"] > plan["acc"]:  # the bias stays apart
            fused = None
            plan = self._channel_plan(op, x, w, axis, values, None)
        if plan["x_scale"] != self.t(x).frac:  # as per-tensor: the activation gives bits
            x = self.rescale(x, self.t(x).width, plan["x_scale"])
        scales, out_bits, out_scale = plan["scales"], plan["out_bits"], plan["out_scale"]
        stored = np.concatenate([
            np.expand_dims(fx.quantize(np.take(values, j, axis=axis), int4.code_bits(
                self.config, self.t(w).width), s, int4.code_rounding(self.config),
                "saturate"), axis)
            for j, s in enumerate(scales)], axis=axis)
        operands[index] = self._replace_param(w, stored, self.result_type(
            values.shape, int4.stored_bits(self.config, self.t(w).width), min(scales)), axis,
            scales)
        int4.mark(self.config, operands[index].owner)
        operands[1 - index] = x
        extra = ()
        if fused is not None:  # each channel's bias at its product scale
            add, bias_values, old_bias = fused
            product_scales = [plan["x_scale"] + s for s in scales]
            stored_bias = np.array([int(fx.quantize(np.array(v), plan["acc"], p,
                                                    self.config.rounding, "saturate"))
                                    for v, p in zip(bias_values, product_scales)])
            extra = (self._replace_param(
                old_bias, stored_bias,
                self.result_type((len(bias_values),), plan["acc"], min(product_scales)), 0,
                product_scales),)
        made = build(*operands, 0, self.result_type(shape_of(op.results[0]), plan["acc"],
                                                    out_scale), extra)
        made.attributes["channel_shifts"] = DenseArrayBase.from_list(i64, plan["shifts"])
        value = self.rescale(self.emit(made), out_bits, out_scale,
                             overflow="saturate" if plan["relu"] else None)
        if fused is not None:
            self.fused[fused[0]] = value  # the add is done: converting it returns this
        return value

    def _channel_plan(self, op: Operation, x: SSAValue, w: SSAValue, axis: int,
                      values: np.ndarray, fused) -> dict:
        """The numbers of a per-channel reduction, nothing emitted: the activation's scale
        (lowered when the accumulator would overflow, as per-tensor), the channel scales,
        the result's bits and scale, the shifts, the accumulator's width, the bits the
        fused bias needs and whether a ReLU alone reads the result."""
        tw, tx = self.t(w), self.t(x)
        result = op.results[0] if fused is None else fused[0].results[0]
        out_bits = self.bits(result)
        wfrac = int4.tensor_scale(self.config, values, tw.frac)
        prod = tx.frac + wfrac  # the per-tensor product scale: the lowest channel's
        # a result only a ReLU reads takes the scale of the ReLU's (non-negative) range,
        # the negative values saturating (the ReLU makes them 0): int8 quantizers fold
        # the ReLU into the output range the same way
        uses = list(result.uses)
        relu = uses[0].operation if len(uses) == 1 and isinstance(
            uses[0].operation, minun.ReluOp) else None
        ranged = result if relu is None else relu.results[0]
        out_scale = self.scale_for(ranged, out_bits, prod, min(tx.frac, wfrac))
        cap = max(wider(max(tw.width, tx.width)), 32)
        excess = out_bits + (prod - out_scale) - cap
        sx = tx.frac - (excess + 1) // 2 if excess > 0 else tx.frac
        top = out_scale + cap - out_bits - sx  # the highest scale the accumulator holds
        moved = np.moveaxis(values, axis, 0).reshape(values.shape[axis], -1)
        code = int4.code_bits(self.config, tw.width)
        scales = [min(int4.channel_scale(self.config, c, fx.get_scale(
            float(np.abs(c).max()), code)), top) for c in moved]
        shifts = [sx + s - out_scale for s in scales]
        acc = min(max(fits_width(out_bits + max(shifts)), 16), cap)
        bias_bits = 0
        if fused is not None:  # |b| at scale p needs p + floor(log2 |b|) + 2 bits
            bias_bits = max(64 - fx.get_scale(abs(float(v)), 64) + sx + s if v else 1
                            for v, s in zip(fused[1], scales))
            acc = min(max(acc, fits_width(bias_bits)), cap)
        return {"x_scale": sx, "scales": scales, "out_bits": out_bits,
                "out_scale": out_scale, "shifts": shifts, "acc": acc,
                "bias_bits": bias_bits, "relu": relu is not None}

    def _replace_param(self, old: SSAValue, stored: np.ndarray, ty: Attribute, axis: int,
                       scales: list[int]) -> SSAValue:
        """A per-channel parameter in place of the one `old` was converted to (which
        nothing uses), with its name and location."""
        param = old.owner
        new = num.ParamOp.build_param(param.sym_name.data, stored, ty)
        new.attributes["channel_axis"] = IntegerAttr(axis, i64)
        new.attributes["channel_scales"] = DenseArrayBase.from_list(i64, scales)
        new.location = param.location
        param.parent_block().insert_op_before(new, param)
        new.results[0].name_hint = old.name_hint
        param.detach()
        param.erase()
        return new.results[0]

    def _channel_bias(self, op: Operation, out_axis: int):
        """(the add, its per-channel bias values, the L1 bias) when the only use of the
        reduction's result is an add of a constant that varies only along the output
        channels, already converted to a parameter nothing else uses; else None."""
        uses = list(op.results[0].uses)
        if len(uses) != 1 or not isinstance(uses[0].operation, (minun.AddOp,
                                                                  minun.BiasAddOp)):
            return None
        add = uses[0].operation
        if add.parent_block() is not op.parent_block():
            return None
        old_bias = add.operands[1 - uses[0].index]
        new_bias = self.map.get(old_bias)
        if not isinstance(old_bias.owner, (minun.ParamOp, minun.ConstantOp)) or \
                len(list(old_bias.uses)) != 1 or new_bias is None or \
                not isinstance(new_bias.owner, num.ParamOp) or new_bias.uses or \
                new_bias.owner.parent_block() is not self.block or \
                self.config.scale_override(new_bias.owner.sym_name.data) is not None:
            return None
        shape = shape_of(op.results[0])
        values = np.asarray(old_bias.owner.array(), dtype=np.float64)
        if tuple(shape_of(add.results[0])) != tuple(shape):
            return None
        try:
            full = np.broadcast_to(values, shape)
        except ValueError:
            return None
        index = [0] * len(shape)
        index[out_axis] = slice(None)
        per_channel = full[tuple(index)]
        if not np.array_equal(full, np.broadcast_to(
                np.expand_dims(per_channel, [i for i in range(len(shape)) if i != out_axis]),
                shape)):
            return None
        return add, per_channel, new_bias

    def matmul(self, op, a, b) -> SSAValue:
        def build(x, y, halvings, ty, extra=()):
            return num.MatMulOp.create(operands=[x, y, *extra], attributes=self._attrs(
                halvings=halvings), result_types=[ty])

        # the weight: the rhs (x W, ONNX), else the lhs (W x, SeeDot)
        index = 1 if isinstance(b.owner, num.ParamOp) else 0
        return self._reduction(op, a, b, shape_of(op.lhs)[1], build,
                               channels=(index, 1 if index else 0))

    def sparse_matmul(self, op, a, b) -> SSAValue:
        def build(x, y, shift, ty):
            return num.SparseMatMulOp.create(operands=[x, y], attributes=self._attrs(
                shift=shift), result_types=[ty])

        if not isinstance(a.owner, num.ParamOp):
            raise self.error(op, "the sparse operand must stay a parameter")
        return self._reduction(op, a, b, shape_of(op.lhs)[1], build)

    def conv2d(self, op: minun.Conv2DOp, x, f) -> SSAValue:
        _, kh, kw, cg, _ = shape_of(op.filter)

        def build(a, b, halvings, ty, extra=()):
            attrs = {k: op.attributes[k] for k in ("strides", "pads", "dilations", "groups")}
            return num.Conv2DOp.create(operands=[a, b, *extra], attributes={
                **attrs, **self._attrs(halvings=halvings)}, result_types=[ty])

        # the output channels: the filter's last axis (one group), its group axis
        # (depthwise: one output channel per group)
        groups, cout = op.groups.value.data, shape_of(op.filter)[4]
        channels = (1, 4) if groups == 1 else (1, 0) if cout == 1 else None
        return self._reduction(op, x, f, kh * kw * cg, build, channels=channels)

    # -- table functions ---------------------------------------------------------------

    def _table_bits(self, x: SSAValue) -> int:
        return 8 if self.t(x).width <= 8 else 16

    def exp(self, op: minun.ExpOp, x: SSAValue) -> SSAValue:
        method = self.config.exp
        if method == "auto":
            method = "seedot" if self.maxscale_mode else "shiftry"
        if method == "seedot":
            tx = self.t(x)
            lo_i, hi_i = fx.int_range(tx.width)
            r = self.value_range(op.input)
            if r is not None:
                lo = max(lo_i, math.floor(r[0] * 2.0**tx.frac))
                hi = min(hi_i, max(lo, math.ceil(r[1] * 2.0**tx.frac)))
            else:
                lo, hi = lo_i, 0
            attrs = {"method": num.ExpMethodAttr(num.ExpMethod.SEEDOT), "lo": IntegerAttr(lo, i64),
                     "hi": IntegerAttr(hi, i64),
                     "maxscale": IntegerAttr(self.config.maxscale, i64)}
            p_mul, _ = fx.SeeDotExp(tx.width, tx.frac, lo, hi, self.config.maxscale).out_scale()
            return self.emit(num.ExpOp.create(operands=[x], attributes=attrs, result_types=[
                self.result_type(shape_of(op.result), tx.width, p_mul)]))
        return self.table_function(op, num.ExpOp, x)

    def table_function(self, op: Operation, kind: type, x: SSAValue) -> SSAValue:
        tb = self._table_bits(x)
        s_in, s_out = num._SHIFTRY_SCALES[tb]
        x = self.rescale(x, tb, s_in, overflow="saturate")
        attrs = {"method": num.ExpMethodAttr(num.ExpMethod.SHIFTRY)} if kind is num.ExpOp else {}
        y = self.emit(kind.create(operands=[x], attributes=attrs, result_types=[
            self.result_type(shape_of(op.results[0]), tb, s_out)]))
        out_bits = self.bits(op.results[0])
        if out_bits == tb:
            return y
        # a demoted (or promoted) result gets the data-driven scale of its own width: the
        # table's scale 14 kept at 8 bits wraps every value (sigmoid's [0, 1] needs scale 6)
        return self.rescale(y, out_bits, self.scale_for(op.results[0], out_bits, s_out))

    def softmax(self, op: Operation, x: SSAValue) -> SSAValue:
        bits = self.bits(op.results[0])
        return self.emit(num.SoftmaxOp.create(operands=[x], result_types=[
            self.result_type(shape_of(op.results[0]), bits, bits - 2)]))

    def log_softmax(self, op: Operation, x: SSAValue) -> SSAValue:
        """The result's scale: data-driven (GetScale of the profiled magnitude) or, without
        a profile, that of the largest possible magnitude 2^(b - s_in) + ln n; never
        finer than the input or the log's 16 bits."""
        tx = self.t(x)
        bits = self.bits(op.results[0])
        n = shape_of(op.input)[-1]
        cap = min(tx.frac, fx.LOG_SCALE)
        bound = 2.0 ** (tx.width - tx.frac) + math.log(n)
        scale = self.scale_for(op.results[0], bits, cap, fx.get_scale(bound, bits))
        return self.emit(num.LogSoftmaxOp.create(operands=[x], result_types=[
            self.result_type(shape_of(op.results[0]), bits, scale)]))

    def normalise_l2(self, op: Operation, x: SSAValue) -> SSAValue:
        bits = self.t(x).width
        return self.emit(num.NormaliseL2Op.create(operands=[x], result_types=[
            self.result_type(shape_of(op.results[0]), bits, bits - 2)]))

    # -- types of merged values ------------------------------------------------------------

    def unify(self, values: list[SSAValue]) -> list[SSAValue]:
        types = [self.t(v) for v in values]
        bits, scale = max(t.width for t in types), min(t.frac for t in types)
        return [self.rescale(v, bits, scale) for v in values]

    def carried_type(self, op: minun.LoopOp, index: int, current: Attribute,
                     yielded: Attribute | None) -> Attribute:
        if not isinstance(current, TensorType):
            return current
        cur = current.element_type
        if self.maxscale_mode:
            if yielded is None:
                return current
            ys = yielded.element_type.frac
            return minun.tensor_of(current.get_shape(), fixed_type(cur.width, min(cur.frac, ys)))
        old_yield = op.body.block.last_op.operands[index]
        merged = ValueStats()
        for v in (op.inits[index], old_yield):
            r = self.value_range(v)
            if r is not None:
                merged.add(np.array(r))
        bits = self.bits(op.results[index])
        if not merged.count:
            return minun.tensor_of(current.get_shape(), fixed_type(bits, cur.frac))
        return minun.tensor_of(current.get_shape(),
                               fixed_type(bits, fx.get_scale(merged.absmax, bits)))

    def join_type(self, op: Operation, types: list[Attribute]) -> Attribute:
        if not isinstance(types[0], TensorType):
            return types[0]
        els = [t.element_type for t in types]
        return minun.tensor_of(types[0].get_shape(), fixed_type(
            max(e.width for e in els), min(e.frac for e in els)))

    def sum_types(self, op: minun.SumOp, body: Attribute, n: int):
        if self.maxscale_mode:
            p, _ = self.rules.treesumscale(body.frac, n)
            el = fixed_type(self.config.bits, p)
            return el, el
        el = fixed_type(wider(body.width), body.frac)
        return el, el

    def accumulate(self, acc: SSAValue, term: SSAValue) -> SSAValue:
        return self.emit(num.AddOp.create(operands=[acc, term], result_types=[acc.type]))

    def finish_sum(self, op: minun.SumOp, acc: SSAValue) -> SSAValue:
        if self.maxscale_mode:
            return acc
        bits = self.bits(op.result)
        return self.rescale(acc, bits, self.scale_for(op.result, bits, self.t(acc).frac))


# --------------------------------------------------------------------------------------
# Evaluator kernels: op name -> fn(op, *operand arrays) -> result array (int64)
# --------------------------------------------------------------------------------------


def _el(value: SSAValue) -> FixedType:
    return FixedConverter.t(value)


def _rounding(op: Operation) -> str:
    return op.attributes["rounding"].data


# The kernels run in loops are `prepared` (float_eval.prepared): made once per op and
# evaluation, with the op's attributes read then rather than on every run.

def _prepare_add(op, sign=1):
    bits = _el(op.result).width

    def add(op, a, b):
        rank = max(a.ndim, b.ndim) - 1
        return fx.narrow(_align(a, rank) + sign * _align(b, rank), bits, "wrap")

    return add


def _prepare_mul(op):
    bits = _el(op.result).width

    def mul(op, a, b):
        rank = max(a.ndim, b.ndim) - 1
        return fx.narrow(_align(a, rank) * _align(b, rank), bits, "wrap")

    return mul


def _prepare_channel_shift(op):
    """A reduction with a per-channel weight (`channel_shifts`): its exact wrapped sums
    `y` (batch first) plus the per-channel bias (wrapping), each channel shifted right by
    its shift with the op's rounding."""
    if op.channel_shifts is None:
        return lambda y, bias=None: y
    _, _, axis = num.channel_operand(op)
    shifts = np.array(minun.ints(op.channel_shifts), dtype=np.int64)
    bits, rounding = _el(op.result).width, _rounding(op)

    def shift(y, bias=None):
        shape = [1] * y.ndim
        shape[axis + 1] = len(shifts)
        if bias is not None:
            y = fx.narrow(y + np.asarray(bias, dtype=np.int64).reshape(shape), bits, "wrap")
        return fx.shift_right_by(y, shifts.reshape(shape), rounding)

    return shift


def _channel_shift(op, y, bias=None):
    return _prepare_channel_shift(op)(y, bias)


def _prepare_matmul(op):
    bits, halvings = _el(op.result).width, op.halvings.value.data
    if halvings == 0:  # a wrapping sum: int64 arithmetic (itself modular) then narrow
        shift = _prepare_channel_shift(op)
        return lambda op, a, b, bias=None: shift(fx.narrow(np.matmul(a, b), bits, "wrap"), bias)
    rounding = _rounding(op)

    def tree(op, a, b, bias=None):
        terms = fx.narrow(a[:, :, :, None] * b[:, None, :, :], bits, "wrap")  # (B, m, k, n)
        terms = np.moveaxis(terms, 2, 3)  # (B, m, n, k)
        return fx.tree_sum(terms, halvings, bits, rounding)

    return tree


_matmul = float_eval.prepared(_prepare_matmul)


def compress_sparse(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SeeDot's sparse format: for each column, the non-zero values and their 1-based row
    indices, the index list of each column ending with 0."""
    vals, idx = [], []
    for k in range(q.shape[1]):
        rows = np.nonzero(q[:, k])[0]
        vals.extend(q[rows, k].tolist())
        idx.extend((rows + 1).tolist())
        idx.append(0)
    return np.array(vals, dtype=np.int64), np.array(idx, dtype=np.int64)


def _sparse_matmul(op, a, x):
    """Walk the compressed format as the C code does: per column k, per stored value."""
    bits = _el(op.result).width
    shift, rounding = op.shift.value.data, _rounding(op)
    vals, idx = compress_sparse(a[0])
    m, n = a.shape[1], x.shape[2]
    if not fx.counting() and bits < 64:
        # the same integers at once: the sums wrap modulo 2^bits, so adding every term
        # and wrapping once equals wrapping after each addition (int64 arithmetic wraps
        # modulo 2^64, a multiple of 2^bits). The loop below is kept for the overflow
        # report, which counts each partial sum as the C computes it.
        stored = idx != 0
        cols = np.cumsum(~stored)[stored]  # the column of each stored value
        terms = fx.shift_right(fx.narrow(vals[:, None, None] * np.moveaxis(x[:, cols, :], 1, 0),
                                         bits, "wrap"), shift, rounding)  # (E, B, n)
        sums = np.zeros((m, x.shape[0], n), dtype=np.int64)
        np.add.at(sums, idx[stored] - 1, terms)
        return fx.narrow(np.moveaxis(sums, 0, 1), bits, "wrap")
    out = np.zeros((x.shape[0], m, n), dtype=np.int64)
    v = 0
    k = 0
    for j in idx:
        if j == 0:
            k += 1
            continue
        term = fx.narrow(vals[v] * x[:, k, :], bits, "wrap")
        out[:, j - 1, :] = fx.narrow(out[:, j - 1, :] + fx.shift_right(term, shift, rounding),
                                     bits, "wrap")
        v += 1
    return out


def _conv2d(op, x, f, bias=None):
    from minun_mlir.numerics.float_eval import _windows

    bits = _el(op.result).width
    strides, pads, dil = (minun.ints(a) for a in (op.strides, op.pads, op.dilations))
    groups = op.groups.value.data
    f = f[0]
    b, n = x.shape[:2]
    win = _windows(x.reshape(b * n, *x.shape[2:]), f.shape[1:3], strides, pads, dil, 0)
    cg = f.shape[3]
    halvings = op.halvings.value.data
    outs = []
    for g in range(groups):
        w = win[:, :, :, g * cg:(g + 1) * cg]  # (M, Ho, Wo, cg, kh, kw)
        if halvings == 0:
            outs.append(fx.narrow(np.einsum("mhwcij,ijco->mhwo", w, f[g]), bits, "wrap"))
            continue
        w = np.moveaxis(w, 3, 5)  # (M, Ho, Wo, kh, kw, cg): terms in (kh, kw, c) order
        terms = w.reshape(*w.shape[:3], 1, -1) * f[g].reshape(1, 1, 1, -1, f.shape[4]).transpose(
            0, 1, 2, 4, 3)
        terms = fx.narrow(terms, bits, "wrap")  # (M, Ho, Wo, Cout, K)
        outs.append(fx.tree_sum(terms, halvings, bits, _rounding(op)))
    y = np.concatenate(outs, axis=-1)
    return _channel_shift(op, y.reshape(b, n, *y.shape[1:]), bias)


def _exp(op, x):
    if op.method.data == num.ExpMethod.SEEDOT:
        return op.seedot()(x, fx.rounding_in(op))
    return fx.exp_shiftry(x, _el(op.input).width, fx.rounding_in(op))


def _normalise_l2(op, x):
    s_out = _el(op.result).frac
    bits = _el(op.result).width
    k = fx.normalise_prescale(_el(op.input).width, x.shape[-1])
    scaled = x >> np.int64(k)
    norm = fx.isqrt((scaled * scaled).sum(axis=-1, keepdims=True)) << np.int64(k)
    y = fx.cdiv(x << np.int64(s_out), np.where(norm == 0, 1, norm))
    return fx.narrow(np.where(norm == 0, 0, y), bits, "wrap")


def _softmax_exp(a: FixedType, x, rounding: str) -> tuple[np.ndarray, np.ndarray]:
    """d = x - max (exact, <= 0) and e = Shiftry's exp table of d brought to the table's
    input scale (saturated), shared by softmax and log_softmax."""
    tb = 8 if a.width <= 8 else 16
    s_in, _ = num._SHIFTRY_SCALES[tb]
    d = np.asarray(x, dtype=np.int64) - np.max(x, axis=-1, keepdims=True)  # <= 0
    shift = a.frac - s_in
    if shift > 0:
        t = fx.shift_right(d, shift, rounding)
    else:  # exact left shift; what would leave the table's range saturates first
        lo = fx.int_range(tb)[0]
        t = np.where(d < -((-lo) >> -shift), lo, d << np.int64(-shift))
    t = fx.narrow(t, tb, "saturate", count=False)
    return d, fx.exp_shiftry(t, tb, rounding)


def _softmax(op, x):
    a, r = _el(op.input), _el(op.result)
    _, e = _softmax_exp(a, x, fx.rounding_in(op))
    total = e.sum(axis=-1, keepdims=True)
    return (e << np.int64(r.frac)) // total


def log_softmax_scales(a: FixedType, r: FixedType) -> tuple[int, int]:
    """(t, table bits): the scale log_softmax subtracts at (the input's, or up to 16 for
    the log when that is at most 24 bits finer) and the exp table's width."""
    return max(a.frac, min(fx.LOG_SCALE, a.frac + 24)), 8 if a.width <= 8 else 16


def _log_softmax(op, x):
    """y = narrow_sat(round((d 2^(t - s_in) - L_t) / 2^(t - s_out))), L = ln of the sum of
    the exp table values at scale 16, L_t = round(L / 2^(16 - t))."""
    a, r = _el(op.input), _el(op.result)
    rounding = fx.rounding_in(op)
    d, e = _softmax_exp(a, x, rounding)
    t, tb = log_softmax_scales(a, r)
    log = fx.ln_sum(e.sum(axis=-1, keepdims=True), num._SHIFTRY_SCALES[tb][1])
    diff = fx.shift_right(d, a.frac - t, rounding) \
        - fx.shift_right(log, fx.LOG_SCALE - t, rounding)
    return fx.narrow(fx.shift_right(diff, t - r.frac, rounding), r.width, "saturate")


def _prepare_rescale(op: num.RescaleOp):
    bits, overflow, n = _el(op.result).width, op.overflow.data, op.shift
    if n >= 0:  # |x| < 2^62: shifting by 63 already leaves only the rounding of the sign
        n, rounding = min(n, 63), op.rounding.data
        return lambda op, x: fx.narrow(fx.shift_right(x, n, rounding), bits, overflow)
    m = -n
    if overflow == "wrap":  # the low bits of x * 2^m: none are left once m >= bits
        if m < bits:
            return lambda op, x: fx.narrow(np.asarray(x, dtype=np.int64) << np.int64(m),
                                           bits, "wrap")
        return lambda op, x: np.zeros_like(np.asarray(x, dtype=np.int64))
    # saturate as the C does: compare with the thresholds, so the shift never overflows
    lo, hi = fx.int_range(bits)
    hi_t, lo_t = hi >> m, -((-lo) >> m)

    def saturate(op, x):
        x = np.asarray(x, dtype=np.int64)
        # counted as overflow exactly where the C saturates (fixed.counting_overflow)
        fx.narrow(np.where(x > hi_t, hi + 1, np.where(x < lo_t, lo - 1, 0)), bits, "saturate")
        return np.where(x > hi_t, hi, np.where(x < lo_t, lo, np.clip(x, lo_t, hi_t) << np.int64(
            min(m, 63))))

    return saturate


def _prepare_relu6(op):
    el = _el(op.input)
    six = 6 << el.frac if el.frac >= 0 else 6 >> -el.frac
    top = min(six, fx.int_range(el.width)[1])
    return lambda op, x: np.clip(x, 0, top)


def _prepare_clip(op):
    el = _el(op.input)
    lo_i, hi_i = fx.int_range(el.width)
    rounding = fx.rounding_in(op)
    lo = int(fx.quantize(np.array(op.lo.value.data), 64, el.frac, rounding))
    hi = int(fx.quantize(np.array(op.hi.value.data), 64, el.frac, rounding))
    lo, hi = max(lo, lo_i), min(hi, hi_i)
    return lambda op, x: np.clip(x, lo, hi)


def _maxpool(op, x):
    from minun_mlir.numerics.float_eval import max_pool

    return max_pool(op, x, fx.int_range(_el(op.input).width)[0])


def _unary(fn, bits, rounding, op, x):
    """sigmoid or tanh (Shiftry's tables), `partial`-ed with the op's width and rounding."""
    return fn(x, bits, rounding)


def _neg(bits, op, x):
    return fx.narrow(-x, bits, "wrap")


def _init(op):
    # not prepared: its quantize counts (fixed.counting_overflow) on every run, as the op's
    el = _el(op.result)
    q = fx.quantize(np.array(op.fill.value.data), el.width, el.frac, fx.rounding_in(op))
    return np.full((1, *op.result.type.get_shape()), int(q), dtype=np.int64)


class FixedRepresentation(Representation):
    name = "fixed"
    options = frozenset({"bits", "scales", "maxscale", "input_scale", "input_bits", "demote",
                         "rounding", "overflow", "per_channel", "param_bits", "weight_bits",
                         "input_scales"})
    searches = frozenset({"shiftry", "haunter"})

    def label(self, o) -> str:
        name = f"fixed{o.bits}"
        if o.scales == "maxscale":
            name += f"-maxscale{'auto' if o.maxscale is None else o.maxscale}"
        if o.param_bits is not None:
            name += f"-params{o.param_bits}"
        if o.input_bits is not None:
            name += f"-input{o.input_bits}"
        if o.per_channel:
            name += "-per-channel"
        if o.weight_bits:
            name += f"-w{o.weight_bits}"
        if o.demote:
            name += "+demote"
        if o.assign:
            name += "+assign"
        return name

    def owns(self, element: Attribute) -> bool:
        return isinstance(element, FixedType)

    def quantize(self, module: ModuleOp, config: QuantizeConfig, profile: Profile | None
                 ) -> ModuleOp:
        return FixedConverter(config, profile).run(module)

    def encode(self, values: np.ndarray, element: Attribute, rounding: str) -> np.ndarray:
        return fx.quantize(values, element.width, element.frac, rounding, "saturate")

    def c_encode(self, element: Attribute, rounding: str) -> str:
        # fx.quantize in IEEE double: the scaling by 2^frac is exact, the rounding and the
        # saturation are the same operations, so every integer agrees
        lo, hi = fx.int_range(element.width)
        rounded = {"trunc": "trunc(s)", "floor": "floor(s)",
                   "nearest": "floor(s + 0.5)"}[rounding]
        return (f"double s = v * {math.ldexp(1.0, element.frac).hex()};\n"
                f"s = {rounded};\n"
                f"return s < {lo}.0 ? {lo} : s > {hi}.0 ? {hi} : (int32_t)s;")

    def decode(self, stored: np.ndarray, element: Attribute) -> np.ndarray:
        return fx.dequantize(stored, element.frac)

    def kernels(self):
        return _KERNELS


_KERNELS = {
    "num.param": lambda op: op.array().astype(np.int64)[None],
    "num.rescale": float_eval.prepared(_prepare_rescale),
    "num.add": float_eval.prepared(_prepare_add),
    "num.sub": float_eval.prepared(lambda op: _prepare_add(op, -1)),
    "num.mul": float_eval.prepared(_prepare_mul),
    "num.matmul": _matmul,
    "num.sparse_matmul": _sparse_matmul,
    "num.conv2d": _conv2d,
    "num.exp": _exp,
    "num.sigmoid": float_eval.prepared(lambda op: functools.partial(
        _unary, fx.sigmoid_shiftry, _el(op.input).width, fx.rounding_in(op))),
    "num.tanh": float_eval.prepared(lambda op: functools.partial(
        _unary, fx.tanh_shiftry, _el(op.input).width, fx.rounding_in(op))),
    "num.normalise_l2": _normalise_l2,
    "num.softmax": _softmax,
    "num.log_softmax": _log_softmax,
    "num.relu": lambda op, x: np.maximum(x, 0),
    "num.relu6": float_eval.prepared(_prepare_relu6),
    "num.clip": float_eval.prepared(_prepare_clip),
    "num.neg": float_eval.prepared(lambda op: functools.partial(_neg, _el(op.input).width)),
    "num.max": float_eval._binary(np.maximum),
    "num.min": float_eval._binary(np.minimum),
    "num.maxpool": _maxpool,
    "num.argmax": float_eval._argmax,
    "num.sgn": float_eval._sgn,
    "minun.init": _init,
}
