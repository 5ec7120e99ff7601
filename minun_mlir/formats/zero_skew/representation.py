"""Zero-skew int8 representation (`quantize{repr=zero-skew bits=8}`): TFLite's / gemmlowp's
affine quantization, `real = scale * (q - zero_point)`, as an L2 representation.

Types: `!num.affine<8, s, zp>` for values, `!num.affine<32, s, 0>` for int32 accumulators.
Calibration from the float program's profile (`data=`, or `profile` attributes):

- every computed value and the input: (s, zp) = ChooseQuantizationParams(min, max) of its
  profiled range (nudged to include 0, affine.choose_params);
- parameters and literals: symmetric, zp = 0, s = max|w| / 127 (TFLite's int8 weights);
  a parameter added to an int32 accumulator (a bias) is stored in int32 at the
  accumulator's scale s_a * s_b instead;
- sigmoid and tanh: TFLite's fixed output quantization (1/256, -128) and (1/128, 0).

Ops (docs/numerics.md has the table):

- matmul, sparse matmul, conv2d, mul: sum of (qa - zpa)(qb - zpb) exact in int32 (padding
  contributes 0, as TFLite pads with the input's zero point); the result stays an int32
  accumulator while its only users are a bias add, relu, maxpool, argmax, sgn or a
  condition, and is requantized (`num.requantize`: MultiplyByQuantizedMultiplier) to the
  int8 type of the L1 value it stands for before anything else reads it (so a
  matmul + bias + relu is TFLite's FULLY_CONNECTED with a fused relu);
- add, sub of int8 values: TFLite's ADD/SUB kernel, each operand requantized to
  int32 at scale 2 max(s_a, s_b) / 2^20 after a left shift of 20, the exact sum, then
  requantized to the output;
- per-channel weights (`per-channel=true`, TFLite's per-channel conv / fully-connected):
  a matmul's or convolution's weight symmetric int8 with a scale per output channel
  (`channel_real_scales` on its num.param), the accumulator's channel c at
  s_x * s_w[c], a bias added to it stored in int32 at that channel's scale, and the
  requantization a multiplier and shift per channel (`channel_multipliers`);
- a pre-quantized ONNX model (`minun.requantize = "onnxruntime"` on its function):
  its int32 -> int8 requantizations are onnxruntime's (num.requantize mode onnxruntime:
  float32 multiply, round half to even, in integers), an add, sub or product of int8
  values is onnxruntime's float32 DequantizeLinear, Add (Sub, Mul), QuantizeLinear
  (num.add / num.sub / num.mul mode onnxruntime), a relu, max pool, reshape or concat
  it quantizes again is requantized as its DequantizeLinear-QuantizeLinear pair, and
  its input is quantized as QuantizeLinear (input_rounding "onnxruntime"), so its
  integers are onnxruntime's;
- exp, sigmoid, tanh: a 256-entry int8 -> int8 table per op, computed at compile time
  from the dequantized input and the output's quantization;
- softmax: per row, e = a 256-entry int32 table of exp(-s (max - q)) at 2^K, the
  rounded quotient 255 e / sum, output (1/255, -128): TFLite's int8 softmax, but with
  1.0 representable (TFLite's 1/256 stops at 255/256); in a TFLite model (the frontend
  marks its function `minun.requantize = "tflite"`) whose softmax output is (1/256,
  -128), TFLite's own kernel integer for integer (`num.softmax {tflite}`,
  formats/zero_skew/tflite_softmax.py);
- a TFLite model's quantized average pooling and mean (lower-composite-ops marks them):
  num.avgpool (TFLite's kernel: the window's sum over its count, ties away from zero)
  and the sum requantized with the count folded into the multiplier (num.requantize
  {divisor}), as TFLM computes them;
- log_softmax: per row, the sum of softmax's exp table, its ln by fixed point's
  ln_sum (16 fraction bits), s_in (max - q) at 2^16 added, requantized (MBQM) to the
  output's calibrated scale;
- tflite_lstm (a TFLite model's int8 LSTM): TFLM's integer LSTM, the file's integers
  and the kernel's parameters on the op, int8 in and out at the file's (scale, zero
  point)s (formats/zero_skew/tflite_lstm.py);
- tree_ensemble: thresholds on the input's int8 grid (q <= floor(t/s + zp), q <
  ceil(t/s + zp): each node decides as on the real s (q - zp)), leaves and base in int32
  at the scale where the worst-case sum is 2^30: an int32 accumulator;
- relu: max(q, zp); relu6 / clip: clamps at the bounds quantized at the operand's type;
  max, min, maxpool, argmax: integer comparisons (the order of q is the values' order);
  sgn and conditions read an int32 value with zero point 0 (q - zp, exactly).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    i8,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from minun_mlir.diagnostics import error, warn
from minun_mlir.dialects import minun, num
from minun_mlir.dialects.num import AffineType
from minun_mlir.formats.int4 import weights as int4
from minun_mlir.formats.zero_skew import arith as af
from minun_mlir.formats.zero_skew import hoist as zs_hoist
from minun_mlir.formats.zero_skew import lut_region as lut
from minun_mlir.formats.zero_skew import own
from minun_mlir.formats.zero_skew import tflite_lstm as tl
from minun_mlir.formats.zero_skew import tflite_softmax as tsm
from minun_mlir.modules import main_function
from minun_mlir.numerics import float_eval
from minun_mlir.numerics.convert import L2Converter, shape_of
from minun_mlir.numerics.float_eval import Profile, _align
from minun_mlir.numerics.repr import QuantizeConfig, Representation

# L1 consumers that read an int32 accumulator as it is (the accumulator's zero point is 0,
# so its sign and order are the real's); any other consumer gets the requantized int8
WIDE_USERS = (minun.AddOp, minun.BiasAddOp, minun.SubOp, minun.BiasSubOp, minun.ReluOp,
              minun.MaxPoolOp, minun.ArgMaxOp, minun.SgnOp, minun.IfNonNegOp)
# ops whose unprofiled result may take their operand's type (a relu or pooling between a
# pre-quantized value and its consumer)
PASS_THROUGH = (minun.ReluOp, minun.MaxPoolOp, minun.ReshapeOp, minun.TransposeOp)
SIGMOID_OUT = AffineType(8, 1.0 / 256, -128)  # TFLite's int8 LOGISTIC output
TANH_OUT = AffineType(8, 1.0 / 128, 0)  # and TANH's
DEFAULT_RANGE = (-1.0, 1.0)  # a value the profile never saw (a branch no example took)
# the func attribute of a pre-quantized model: "onnxruntime" (ONNX), "tflite" (TFLite)
REQUANTIZE = "minun.requantize"
# on a convolution summing n values of a TFLite model's MEAN (lower-composite-ops): its
# requantization divides by n as TFLM does
MEAN_DIVISOR = "minun.mean_divisor"
# on the convolution (and the border correction) of a TFLite model's quantized
# AVERAGE_POOL_2D (lower-composite-ops): zero-skew computes TFLite's num.avgpool instead
TFLITE_AVGPOOL = "minun.tflite_avgpool"
# on the convolution (1/k filter, MEAN_DIVISOR k) of an onnxruntime model's quantized
# average pool (lower-composite-ops): zero-skew sums with a filter of ones and requantizes
# as MLAS does (num.requantize divisor k, mode onnxruntime)
ORT_AVGPOOL = "minun.ort_avgpool"
# the attribute that gives an L1 value its quantization (array<f64: s, zp>, or a weight's
# per-channel array<f64: s_0, ..., s_(C-1), 0>): from a pre-quantized ONNX model, or
# pinned by weight rounding
QUANTIZATION = "quantization"
# on a minun.clip to the reals of its operand's given int8 type (a QuantizeLinear's
# saturation, frontends/onnx/quantized.py): that type is the clamp, the op is dropped
SATURATE = "minun.saturate"


def el_of(value: SSAValue) -> AffineType:
    el = value.type.element_type if isinstance(value.type, TensorType) else value.type
    assert isinstance(el, AffineType), value.type
    return el


def channel_scales(value: SSAValue) -> tuple[int, list[float]] | None:
    """(axis, real scale of each index of it) of an int32 accumulator of a matmul or
    convolution with a per-channel weight (through the bias adds, relus and max pools that
    keep it int32), or None for a value with one scale."""
    owner = value.owner
    if isinstance(owner, (num.MatMulOp, num.Conv2DOp)):
        for i, v in enumerate(owner.operands[:2]):
            p = v.owner
            if isinstance(p, num.ParamOp) and p.channel_real_scales is not None:
                other = el_of(owner.operands[1 - i]).real_scale
                axis = (0, 1)[i] if isinstance(owner, num.MatMulOp) else 3
                return axis, [other * s for s in p.real_scales()]
        return None
    if isinstance(owner, (num.AddOp, num.SubOp)) and el_of(value).width == 32:
        for v in owner.operands:
            if not isinstance(v.owner, num.ParamOp):
                found = channel_scales(v)
                if found is not None:
                    return found
        return None
    if isinstance(owner, (num.ReluOp, num.MaxPoolOp)):
        return channel_scales(owner.operands[0])
    return None


def real_range(t: AffineType) -> tuple[float, float]:
    lo, hi = af.int_range(t.width)
    return t.real_scale * (lo - t.zp), t.real_scale * (hi - t.zp)


class ZeroSkewConverter(L2Converter):
    representation_name = "zero-skew"
    channel_scales = staticmethod(channel_scales)  # for own.py

    def __init__(self, config: QuantizeConfig, profile: Profile | None):
        super().__init__(config, profile)
        self.unranged: list[Operation] = []  # ops whose value took DEFAULT_RANGE
        # how int32 accumulators are requantized to int8: TFLite's MBQM, or onnxruntime's
        # float32 rounding for a pre-quantized model (`minun.requantize = "onnxruntime"`
        # on its function, from the ONNX importer)
        self.mode = num.RequantizeMode.TFLITE
        self.join_to: AffineType | None = None  # the given type of a concat / max / min
        self.tflite_kernels = False
        # no external integer reference (no minun.requantize on the function): own.py's
        # exact forms replace TFLite's ADD/SUB, MUL and requantized sums where they apply
        self.own = True

    def negated_type(self, x: SSAValue) -> AffineType:
        """-x at the complementary zero point (num.neg: q -> ~q, exact); a per-channel
        accumulator keeps its type."""
        t = el_of(x)
        if channel_scales(x) is not None:
            return t
        return AffineType(t.width, t.real_scale, -1 - t.zp)

    # -- calibration ---------------------------------------------------------------------

    def value_range_rounded(self, old: SSAValue | None) -> tuple[float, float] | None:
        """The profiled range with its ends rounded outward to 12 significant bits
        (affine.outward: profiles from numpy and from the native C, which may differ in a
        float's last bits, give one program)."""
        r = self.value_range(old)
        return None if r is None else (af.outward(r[0]), af.outward(r[1]))

    @staticmethod
    def given(old: SSAValue | None) -> AffineType | None:
        """The (scale, zero point) a pre-quantized model gives the value
        (`quantization = array<f64: s, zp>`, frontends/onnx/quantized.py)."""
        attr = getattr(getattr(old, "owner", None), "attributes", {}).get(QUANTIZATION)
        if attr is None or len(attr.get_values()) != 2:
            return None
        s, zp = attr.get_values()
        return AffineType(8, float(s), int(zp))

    @staticmethod
    def given_channels(old: SSAValue | None) -> list[float] | None:
        """The per-channel scales a pre-quantized model gives a weight
        (`quantization = array<f64: s_0, ..., s_(C-1), 0>`), or None."""
        attr = getattr(getattr(old, "owner", None), "attributes", {}).get(QUANTIZATION)
        if attr is None or len(attr.get_values()) == 2:
            return None
        return [float(v) for v in attr.get_values()[:-1]]

    def type_for(self, old: SSAValue | None,
                 fallback: tuple[float, float] = DEFAULT_RANGE) -> AffineType:
        given = self.given(old)
        if given is not None:
            return given
        r = self.value_range_rounded(old)
        if r is None and isinstance(getattr(old, "owner", None), PASS_THROUGH):
            return self.type_for(old.owner.operands[0], fallback)  # relu of a given type
        if r is None and fallback is DEFAULT_RANGE and isinstance(getattr(old, "owner", None),
                                                                  Operation):
            self.unranged.append(old.owner)
        lo, hi = r or fallback
        return AffineType(8, *af.choose_params(lo, hi))

    def type_range(self, old: SSAValue) -> tuple[float, float]:
        """The real range of type_for(old)'s codes (the profiled range, nudged to 0)."""
        return real_range(self.type_for(old))

    def tensor(self, old: SSAValue, el: Attribute) -> TensorType:
        return minun.tensor_of(shape_of(old), el)

    # -- int32 accumulators and int8 values ------------------------------------------------

    def requantize(self, value: SSAValue, to: AffineType, left_shift: int = 0,
                   divisor: int | None = None) -> SSAValue:
        if el_of(value) == to and left_shift == 0 and divisor is None:
            return value
        channels = channel_scales(value) if isinstance(value.type, TensorType) else None
        a = el_of(value)
        mode = self.mode if left_shift == 0 and to.width == 8 and (
            a.width == 8 or a.zp == 0) else num.RequantizeMode.TFLITE
        if channels is not None:
            return self.emit(num.RequantizeOp.make_channels(value, to, *channels, mode))
        return self.emit(num.RequantizeOp.make(value, to, left_shift, mode, divisor))

    def narrow(self, value: SSAValue, old: SSAValue | None) -> SSAValue:
        """An int32 accumulator requantized to the int8 type of the L1 value it stands for
        (a sum of n TFLite averages: with n folded into the multiplier, MEAN_DIVISOR)."""
        if not isinstance(value.type, TensorType) or el_of(value).width == 8:
            return value
        n = getattr(getattr(old, "owner", None), "attributes", {}).get(MEAN_DIVISOR)
        return self.requantize(value, self.type_for(old), divisor=None if n is None
                               else n.value.data)

    def zero_based(self, value: SSAValue) -> SSAValue:
        """q - zp exactly, as an int32 with zero point 0 (multiplier 1: 2^30, shift 1)."""
        t = el_of(value)
        if t.zp == 0:
            return value
        return self.requantize(value, AffineType(32, t.real_scale, 0))

    def _lut(self, op: Operation, ops: list[Operation], source: SSAValue) -> SSAValue:
        """The region `ops` from `source` to op's operand as one num.lut (lut_region.py);
        the steps converted before it are erased."""
        a, r = self.given(source), self.given(op.results[0])
        values = lut.table(ops, source, a.real_scale, a.zp, r.real_scale, r.zp)
        y = self.emit(num.LutOp.create(
            operands=[self.map[source]],
            attributes={"table": DenseArrayBase.from_list(i8, values.tolist())},
            result_types=[self.tensor(op.results[0], r)]))
        for old in reversed(ops):
            _erase_dead(self.map.pop(old.results[0], None))
        self.unranged = [o for o in self.unranged if o not in ops]  # their ranges are moot
        return y

    def convert_op(self, op: Operation) -> None:
        if SATURATE in op.attributes and self.given(op.operands[0]) == self.given(
                op.results[0]) is not None:
            found = self.mode == num.RequantizeMode.ONNXRUNTIME and lut.region(
                op.operands[0], self.given)
            self.map[op.results[0]] = self.map[op.operands[0]] if not found else \
                self._lut(op, *found)
            return
        cond = None
        if isinstance(op, (minun.SgnOp, minun.IfNonNegOp)) and \
                isinstance(op.operands[0].type, TensorType):
            cond = op.operands[0]
            saved = self.map[cond]
            self.map[cond] = self.zero_based(saved)  # only for this op
        # operands joined into a value the model quantizes go straight to its type
        self.join_to = self.given(op.results[0]) if len(op.results) == 1 else None
        try:
            super().convert_op(op)
        finally:
            self.join_to = None
            if cond is not None:
                self.map[cond] = saved
        for old in op.results:
            new = self.map.get(old)
            if new is None or not isinstance(new.type, TensorType):
                continue
            given = self.given(old)
            if el_of(new).width == 8:
                if given is not None and el_of(new) != given:
                    # e.g. a relu, max pool or reshape the model requantizes after (its
                    # DequantizeLinear, the op in float, QuantizeLinear)
                    narrowed = self.requantize(new, given)
                    narrowed.name_hint, new.name_hint = old.name_hint, None
                    self.map[old] = narrowed
                continue
            block = op.parent_block()
            # an argmax across channels of different scales reads the int8 values
            wide = WIDE_USERS if channel_scales(new) is None else tuple(
                k for k in WIDE_USERS if k is not minun.ArgMaxOp)
            # a value a pre-quantized model quantizes (its QDQ pair) is int8 there
            if self.given(old) is None and all(
                    isinstance(u.operation, wide) and u.operation.parent_block() is block
                    or own.folds_scalar(self, u.operation, old, new)
                    or own.sum_length(u.operation) is not None and own.sums_exactly(
                        self, new, own.sum_length(u.operation))
                    for u in old.uses):
                continue  # e.g. matmul -> bias add -> relu: requantized after the relu
            narrowed = self.narrow(new, old)
            narrowed.name_hint, new.name_hint = old.name_hint, None
            self.map[old] = narrowed

    def run(self, module: ModuleOp) -> ModuleOp:
        fn = main_function(module, "quantize")
        mode = fn.attributes.get(REQUANTIZE)
        if mode is not None:
            modes = [m.value for m in num.RequantizeMode]
            if not isinstance(mode, StringAttr) or mode.data not in modes:
                raise error(f"quantize: {REQUANTIZE} must be one of {modes}, got {mode}",
                            at=fn)
            self.mode = num.RequantizeMode(mode.data)
        self.own = mode is None
        # a TFLite model (its frontend says "tflite"): TFLite's own int8 softmax kernel
        self.tflite_kernels = mode == StringAttr(num.RequantizeMode.TFLITE.value)
        out = super().run(module)
        if self.unranged:
            first, count = self.unranged[0], len(dict.fromkeys(self.unranged))
            warn(f"zero-skew: {count} value(s) have no profiled range and no "
                 f"quantization of their own (the first: {first.name}) and take [-1, 1]: "
                 "profile the model (quantize's data=, minun-compile --train)", at=first)
        zs_hoist.hoist_requantizes(out)
        # a bias stored in int32 leaves its int8 copy unused, a constant folded into a
        # multiplier (own.fold_scalar) its negation, an int16 difference's constant its
        # int8 view
        for op in reversed(list(out.walk())):
            if isinstance(op, (num.ParamOp, num.NegOp, minun.IndexOp, num.RequantizeOp)) and \
                    not op.results[0].uses:
                op.detach()
                op.erase()
        return out

    def annotate(self, fn) -> None:
        fn.attributes["num.rounding"] = StringAttr("nearest")

    # -- leaves ----------------------------------------------------------------------------

    def input(self, op: minun.InputOp) -> SSAValue:
        declared = (op.range_lo.value.data, op.range_hi.value.data)
        ty = self.tensor(op.result, self.type_for(op.result, declared))
        return self.emit(num.InputOp.create(attributes={"sym_name": op.sym_name},
                                            result_types=[ty]))

    def param(self, op, values, name, sparse, declared) -> SSAValue:
        el = self.given(op.results[0]) if op is not None else None
        if op is not None and self.given_channels(op.results[0]) is not None:
            uses = list(op.results[0].uses)
            if len(uses) != 1 or not isinstance(uses[0].operation, (minun.MatMulOp,
                                                                   minun.Conv2DOp)):
                raise self.error(op, "a weight with per-channel scales must feed one "
                                 "matmul or convolution only")
            el = None  # stored per channel by the op (_channel_weight)
        if el is None:
            el = AffineType(8, af.symmetric_scale(values), 0)
        elif sparse and el.zp != 0:
            raise self.error(op, "a sparse parameter needs zero point 0")
        ty = minun.tensor_of(values.shape, el)
        q = af.quantize(values, el.real_scale, el.zp, 8)
        return self.emit(num.ParamOp.build_param(name, q, ty, sparse))

    def init_type(self, op: minun.InitOp, fill: float) -> Attribute:
        return AffineType(8, *af.choose_params(fill, fill))

    # -- arithmetic ------------------------------------------------------------------------

    def tflite_lstm(self, op: minun.TFLiteLstmOp, x: SSAValue) -> SSAValue:
        """TFLite's integer LSTM (tflite_lstm.py): int8 in and out at the file's (scale,
        zero point)s, the op's own integers."""
        p = op.lstm_params()
        s_x, s_h = (float(v) for v in minun.dense_to_numpy(op.scales))
        tx = el_of(x)
        if tx.width != 8 or tx.zp != p.zp_x or tx.real_scale != s_x:
            raise self.error(op, f"the input is {tx}, TFLite's LSTM reads int8 at scale "
                             f"{s_x} and zero point {p.zp_x}")
        out = self.tensor(op.result, AffineType(8, s_h, p.zp_h))
        return self.emit(minun.TFLiteLstmOp.create(
            operands=[x], attributes=dict(op.attributes), result_types=[out]))

    def tree_ensemble(self, op: minun.TreeEnsembleOp, x: SSAValue) -> SSAValue:
        """Thresholds on the input's int8 grid: s (q - zp) <= t iff q <= floor(t/s + zp),
        s (q - zp) < t iff q < ceil(t/s + zp), exact; a threshold past [-128, 127] makes
        its node unconditional (both children the same, as in fixed point). Leaves and
        base in int32 at one scale (zero point 0) where the worst-case sum is 2^30: an
        int32 accumulator, read as it is by an argmax and requantized for anything else."""
        from minun_mlir.formats.fixed.representation import integer_thresholds, tree_sum_bound

        tx = el_of(x)
        a = op.arrays()
        grid = a["thresholds"].astype(np.float64) / tx.real_scale + tx.zp
        nodes, t_int = integer_thresholds(op, grid, af.int_range(tx.width))
        leaves, base = a["leaves"].astype(np.float64), a["base"].astype(np.float64)
        scale = max(tree_sum_bound(op, nodes), 1e-30) / 2.0 ** 30
        out = AffineType(32, scale, 0)
        attrs = dict(op.attributes)
        attrs.update(nodes=minun.dense_ints(nodes), thresholds=minun.dense_ints(
            t_int, tx.width), leaves=minun.dense_ints(np.round(leaves / scale), 32),
            base=minun.dense_ints(np.round(base / scale), 32))
        return self.emit(minun.TreeEnsembleOp.create(
            operands=[x], attributes=attrs, result_types=[self.tensor(op.result, out)]))

    def _bias(self, op: Operation, acc: SSAValue, other: SSAValue) -> SSAValue | None:
        """A parameter or literal added to an int32 accumulator, stored in int32 at its
        scale (TFLite's bias), or None."""
        owner = other.owner
        if el_of(acc).width != 32 or not isinstance(owner, (minun.ParamOp,
                                                             minun.ConstantOp)):
            return None
        values = np.asarray(owner.array(), dtype=np.float64)
        t = el_of(acc)
        channels = channel_scales(acc)
        if channels is not None:  # each channel's bias at that channel's scale
            axis, scales = channels
            baxis = axis - (len(shape_of(acc)) - values.ndim)
            if baxis < 0 or values.shape[baxis] != len(scales):
                return None  # constant across channels: added in int8
            shape = [1] * values.ndim
            shape[baxis] = len(scales)
            real = np.array(scales).reshape(shape)
        self.counter += 1
        name = (owner.sym_name.data if isinstance(owner, minun.ParamOp)
                else f"c{self.counter}") + "_acc"
        if channels is None:
            q = af.quantize(values, t.real_scale, 0, 32)
            return self.emit(num.ParamOp.build_param(name, q, minun.tensor_of(values.shape,
                                                                              t)))
        q = af.quantize_per_element(values, real, 32)
        param = num.ParamOp.build_param(name, q, minun.tensor_of(values.shape, t))
        param.attributes["channel_axis"] = IntegerAttr(baxis, i64)
        param.attributes["channel_real_scales"] = num.real_scales_attr(scales)
        return self.emit(param)

    def add(self, op: Operation, a: SSAValue, b: SSAValue, subtract: bool) -> SSAValue:
        kind = num.SubOp if subtract else num.AddOp
        lhs, rhs = op.operands[0], op.operands[1]
        bias = self._bias(op, a, rhs)
        if bias is not None:
            return self.emit(kind.create(operands=[a, bias], result_types=[
                self.tensor(op.results[0], el_of(a))]))
        bias = self._bias(op, b, lhs)
        if bias is not None:
            return self.emit(kind.create(operands=[bias, b], result_types=[
                self.tensor(op.results[0], el_of(b))]))
        exact = own.exact_difference(self, op, a, b, subtract)
        if exact is not None:
            return exact
        a, b = self.narrow(a, lhs), self.narrow(b, rhs)
        if self.mode == num.RequantizeMode.ONNXRUNTIME:  # onnxruntime's float32 Add
            return self.emit(kind.create(
                operands=[a, b], attributes={"mode": num.RequantizeModeAttr(self.mode)},
                result_types=[self.tensor(op.results[0], self.type_for(op.results[0]))]))
        # TFLite's int8 ADD / SUB: both to int32 at 2 max(s) / 2^20, exact sum, requantize
        twice = 2 * max(el_of(a).real_scale, el_of(b).real_scale)
        mid = AffineType(32, twice / (1 << af.ADD_LEFT_SHIFT), 0)
        x = self.requantize(a, mid, af.ADD_LEFT_SHIFT)
        y = self.requantize(b, mid, af.ADD_LEFT_SHIFT)
        total = self.emit(kind.create(operands=[x, y], result_types=[
            self.tensor(op.results[0], mid)]))
        return self.requantize(total, self.type_for(op.results[0]))

    def _product_type(self, a: SSAValue, b: SSAValue) -> AffineType:
        return AffineType(32, el_of(a).real_scale * el_of(b).real_scale, 0)

    def mul(self, op: Operation, a: SSAValue, b: SSAValue) -> SSAValue:
        if TFLITE_AVGPOOL in op.attributes and isinstance(a.owner, num.AvgPoolOp):
            _drop_unused(b)  # the border correction: num.avgpool counts the pixels
            return a
        folded = own.fold_scalar(self, op, a, b)
        if folded is not None:
            return folded
        olds = list(op.operands) + [None, None]  # leaky relu: alpha * x, one operand
        a, b = self.narrow(a, olds[0]), self.narrow(b, olds[1])
        if self.mode == num.RequantizeMode.ONNXRUNTIME and isinstance(
                op, (minun.HadamardOp, minun.ScalarMulOp)):  # onnxruntime's float32 Mul
            return self.emit(num.MulOp.create(
                operands=[a, b], attributes={"mode": num.RequantizeModeAttr(self.mode)},
                result_types=[self.tensor(op.results[0], self.type_for(op.results[0]))]))
        return self.emit(num.MulOp.create(operands=[a, b], result_types=[
            self.tensor(op.results[0], self._product_type(a, b))]))

    @staticmethod
    def _attrs(**ints) -> dict[str, Attribute]:
        return {"rounding": num.rounding_attr("nearest"),
                **{k: IntegerAttr(v, i64) for k, v in ints.items()}}

    # -- per-channel weights -----------------------------------------------------------

    def _channel_weight(self, op: Operation, w: SSAValue, index: int, axis: int
                        ) -> SSAValue:
        """With per-channel=true, the weight operand `w` (operand `index` of `op`) with a
        symmetric scale per index of `axis` (max |w_c| / 127) when it is a dense
        parameter or constant of this block that only this op reads and has no
        quantization of its own; else `w` as it is."""
        param, old = w.owner, op.operands[index]
        given = self.given_channels(old)
        packed = self.config.weight_bits
        if given is not None and packed:
            raise self.error(op, "--weight-bits 4: this weight's int8 codes and per-channel "
                             "scales come with the model and cannot be repacked")
        if given is not None:
            if not isinstance(param, num.ParamOp) or param.parent_block() is not self.block \
                    or w.uses:
                raise self.error(op, "a weight with per-channel scales must be a parameter "
                                 "of this block that only this op reads")
        elif not (self.config.per_channel or packed) or not isinstance(param, num.ParamOp) or \
                param.sparse is not None or param.parent_block() is not self.block and \
                not int4.encloses(self.config, old.owner, op) or \
                w.uses or len(list(old.uses)) != 1 or \
                not isinstance(old.owner, (minun.ParamOp, minun.ConstantOp)) or \
                self.given(old) is not None:
            return w
        values = np.asarray(old.owner.array(), dtype=np.float64)
        if given is None and (values.size == 0 or values.shape[axis] < 2 and not packed):
            return w
        shape = [1] * values.ndim
        shape[axis] = values.shape[axis]
        if given is not None:
            scales = given
            ratio = values / np.array(scales).reshape(shape) if len(scales) == \
                values.shape[axis] else None
            # the model's integers: exact multiples of each output channel's scale
            if ratio is None or np.max(np.abs(ratio - np.rint(ratio))) > 1e-3:
                raise self.error(op, f"the weight's {len(scales)} per-channel scales are "
                                 f"not along its {values.shape[axis]} output channels")
        else:
            moved = np.moveaxis(values, axis, 0).reshape(values.shape[axis], -1)
            scales = [int4.real_scale(self.config, c, af.symmetric_scale(c)) for c in moved]
        q = af.quantize_per_element(values, np.array(scales).reshape(shape),
                                    int4.code_bits(self.config, 8))
        new = num.ParamOp.build_param(param.sym_name.data, q, minun.tensor_of(
            values.shape, AffineType(8, max(scales), 0)))
        new.attributes["channel_axis"] = IntegerAttr(axis, i64)
        new.attributes["channel_real_scales"] = num.real_scales_attr(scales)
        int4.mark(self.config, new)
        new.location = param.location
        param.parent_block().insert_op_before(new, param)
        new.results[0].name_hint = w.name_hint
        param.detach()
        param.erase()
        return new.results[0]

    def matmul(self, op, a, b) -> SSAValue:
        # the weight: the rhs (x W, ONNX; channels its columns), else the lhs (W x, SeeDot;
        # its rows)
        if isinstance(b.owner, num.ParamOp):
            b = self._channel_weight(op, b, 1, 1)
        elif isinstance(a.owner, num.ParamOp):
            a = self._channel_weight(op, a, 0, 0)
        return self.emit(num.MatMulOp.create(operands=[a, b], attributes=self._attrs(
            halvings=0), result_types=[self.tensor(op.result, self._product_type(a, b))]))

    def sparse_matmul(self, op, a, b) -> SSAValue:
        if not isinstance(a.owner, num.ParamOp):
            raise self.error(op, "the sparse operand must stay a parameter")
        return self.emit(num.SparseMatMulOp.create(operands=[a, b], attributes=self._attrs(
            shift=0), result_types=[self.tensor(op.result, self._product_type(a, b))]))

    def conv2d(self, op: minun.Conv2DOp, x, f) -> SSAValue:
        if ORT_AVGPOOL in op.attributes:  # the window sums (weights 1 stored as 1)
            name, shape = f.owner.sym_name.data, shape_of(op.filter)
            _drop_unused(f)
            f = self.emit(num.ParamOp.build_param(name, np.ones(shape, np.int64),
                                                  minun.tensor_of(shape, AffineType(8, 1.0, 0))))
            attrs = {k: op.attributes[k] for k in ("strides", "pads", "dilations", "groups")}
            return self.emit(num.Conv2DOp.create(operands=[self.narrow(x, op.input), f],
                                                 attributes={**attrs, **self._attrs(halvings=0)},
                                                 result_types=[self.tensor(
                                                     op.result, self._product_type(x, f))]))
        if TFLITE_AVGPOOL in op.attributes:  # a TFLite model's AVERAGE_POOL_2D
            x = self.narrow(x, op.input)
            if self.given(op.results[0]) == el_of(x):  # TFLite's kernel, in its type
                _drop_unused(f)
                kernel = shape_of(op.filter)[1:3]
                return self.emit(num.AvgPoolOp.create(operands=[x], attributes={
                    "kernel": minun.i64_array(kernel), "strides": op.strides,
                    "pads": op.pads}, result_types=[self.tensor(op.results[0], el_of(x))]))
        # the output channels: the filter's last axis (one group), its group axis
        # (depthwise: one output channel per group); other grouped convolutions keep one
        groups, cout = op.groups.value.data, shape_of(op.filter)[4]
        axis = 4 if groups == 1 else 0 if cout == 1 else None
        if axis is not None:
            f = self._channel_weight(op, f, 1, axis)
        elif self.given_channels(op.filter) is not None:
            raise self.error(op, "per-channel scales on a grouped convolution with several "
                             "output channels per group are not supported")
        attrs = {k: op.attributes[k] for k in ("strides", "pads", "dilations", "groups")}
        return self.emit(num.Conv2DOp.create(operands=[x, f], attributes={
            **attrs, **self._attrs(halvings=0)}, result_types=[
                self.tensor(op.result, self._product_type(x, f))]))

    def exp(self, op: minun.ExpOp, x: SSAValue) -> SSAValue:
        neg = x.owner
        if self.own and isinstance(neg, num.NegOp) and isinstance(x.type, TensorType) and \
                self.given(op.results[0]) is None:  # exp(-y): one table of y (own.py)
            return self.emit(num.LutOp.create(operands=[neg.input], attributes={
                "table": DenseArrayBase.from_list(i8, own.negated_exp(
                    el_of(neg.input), el_of(x), self.type_for(op.results[0])).tolist())},
                result_types=[self.tensor(op.results[0], self.type_for(op.results[0]))]))
        return self.table_function(op, num.ExpOp, x)

    def table_function(self, op: Operation, kind: type, x: SSAValue) -> SSAValue:
        out = self.given(op.results[0]) or {num.SigmoidOp: SIGMOID_OUT,
                                            num.TanhOp: TANH_OUT}.get(kind)
        if out is None:
            out = self.type_for(op.results[0])
        attrs = {"method": num.ExpMethodAttr(num.ExpMethod.TABLE)} if kind is num.ExpOp else {}
        return self.emit(kind.create(operands=[x], attributes=attrs, result_types=[
            self.tensor(op.results[0], out)]))

    def normalise_l2(self, op, x):
        raise self.error(op, "not supported by the zero-skew representation yet")

    def softmax(self, op, x):
        # probabilities on all 256 codes (1/255, -128; affine.SOFTMAX_SCALE); the input
        # narrowed to int8
        x = self.narrow(x, op.operands[0])
        tfl = AffineType(8, tsm.SCALE, tsm.ZP)
        if self.tflite_kernels and self.given(op.results[0]) == tfl and \
                0 < shape_of(op.results[0])[-1] <= tsm.MAX_ROW:  # TFLite's kernel, exactly
            return self.emit(num.SoftmaxOp.create(
                operands=[x], attributes={"tflite": UnitAttr()},
                result_types=[self.tensor(op.results[0], tfl)]))
        return self.emit(num.SoftmaxOp.create(operands=[x], result_types=[self.tensor(
            op.results[0], AffineType(8, af.SOFTMAX_SCALE, af.SOFTMAX_ZP))]))

    def log_softmax(self, op, x):
        """The input narrowed to int8; the output calibrated as any computed value (not
        TFLite's fixed (16/256, 127), which saturates below -15.94: a confident
        classifier's log-probabilities go far lower)."""
        x = self.narrow(x, op.operands[0])
        return self.emit(num.LogSoftmaxOp.create(operands=[x], result_types=[self.tensor(
            op.results[0], self.type_for(op.results[0]))]))

    # -- types of merged values --------------------------------------------------------------

    def cast(self, value: SSAValue, to: Attribute) -> SSAValue:
        if not isinstance(value.type, TensorType):
            return value
        return self.requantize(value, to.element_type if isinstance(to, TensorType) else to)

    @staticmethod
    def _covering(types: list[AffineType]) -> AffineType:
        ranges = [real_range(t) for t in types]
        return AffineType(8, *af.choose_params(min(r[0] for r in ranges),
                                               max(r[1] for r in ranges)))

    def unify(self, values: list[SSAValue]) -> list[SSAValue]:
        if self.join_to is not None:  # a concat (max, min) the model quantizes
            return [self.requantize(v, self.join_to) for v in values]
        types = {el_of(v) for v in values}
        if len(types) == 1 and el_of(values[0]).width == 8:
            return values
        # int32 accumulators (leaky relu's alpha * x) take the int8 operands' range
        narrow = [t for t in types if t.width == 8]
        to = self._covering(narrow) if narrow else AffineType(8, *af.choose_params(
            *DEFAULT_RANGE))
        return [self.requantize(v, to) for v in values]

    def carried_type(self, op: minun.LoopOp, index: int, current: Attribute,
                     yielded: Attribute | None) -> Attribute:
        if not isinstance(current, TensorType):
            return current
        ranges = [r for r in (self.value_range_rounded(op.inits[index]),
                              self.value_range_rounded(op.body.block.last_op.operands[index]))
                  if r is not None]
        if not ranges:
            el = current.element_type
            el = el if el.width == 8 else self._covering([el])
        else:
            el = AffineType(8, *af.choose_params(min(r[0] for r in ranges),
                                                 max(r[1] for r in ranges)))
        return minun.tensor_of(current.get_shape(), el)

    def join_type(self, op: Operation, types: list[Attribute]) -> Attribute:
        if not isinstance(types[0], TensorType):
            return types[0]
        return minun.tensor_of(types[0].get_shape(),
                               self._covering([t.element_type for t in types]))

    def sum_types(self, op: minun.SumOp, body: Attribute, n: int):
        # an int32 accumulator 2^23 times finer than the largest of the sum and a term: the
        # terms (int8 values) are requantized to it and added exactly
        if body.width == 32:  # a product's accumulator (own.sums_exactly): summed as it is
            return body, body
        r = self.value_range_rounded(op.result)
        lo, hi = real_range(body)
        m = max(abs(lo), abs(hi), *(abs(v) for v in (r or ())))
        el = AffineType(32, m / (1 << 23), 0)
        return el, el

    def accumulate(self, acc: SSAValue, term: SSAValue) -> SSAValue:
        return self.emit(num.AddOp.create(operands=[acc, term], result_types=[acc.type]))

    def finish_sum(self, op: minun.SumOp, acc: SSAValue) -> SSAValue:
        return acc  # requantized by convert_op unless its users read int32


# --------------------------------------------------------------------------------------
# Evaluator kernels: op name -> fn(op, *operand arrays) -> stored integers (int64)
# --------------------------------------------------------------------------------------


def _t(v: SSAValue) -> AffineType:
    return el_of(v)


def _requantize(op: num.RequantizeOp, x):
    a, r = _t(op.input), _t(op.result)
    ort = num.in_ort_mode(op)
    channels = op.channels()
    if channels is not None:  # per channel: zero point 0 in, no left shift
        axis, ms, ks = channels
        axis -= len(op.input.type.get_shape())  # from the end: x has a batch axis first
        x = np.asarray(x, dtype=np.int64)
        out = np.empty_like(x)
        lo, hi = af.int_range(r.width)
        for c, (m, k) in enumerate(zip(ms, ks)):
            index = [slice(None)] * x.ndim
            index[axis] = c
            y = af.ort_mul(x[tuple(index)], m, k) if ort else af.mbqm(x[tuple(index)], m, k)
            out[tuple(index)] = np.clip(y + r.zp, lo, hi)
        return out
    if ort and a.width == 8:  # DequantizeLinear then QuantizeLinear
        return af.ort_requantize8(x, a.zp, a.real_scale, r.zp, r.real_scale, r.width)
    if ort:
        return af.ort_requantize(x, r.zp, op.multiplier.value.data, op.shift.value.data,
                                 r.width)
    return af.requantize(x, a.zp, r.zp, op.left_shift.value.data, op.multiplier.value.data,
                         op.shift.value.data, r.width)


def _add(op, a, b, sign=1):
    rank = max(a.ndim, b.ndim) - 1
    a, b = _align(a, rank), _align(b, rank)
    if num.in_ort_mode(op):
        ta, tb, r = _t(op.lhs), _t(op.rhs), _t(op.result)
        return af.ort_add(a - ta.zp, b - tb.zp, ta.real_scale, tb.real_scale, r.real_scale,
                          r.zp, r.width, subtract=sign < 0)
    return af.wrap32(a + sign * b)


def _mul(op, a, b):
    rank = max(a.ndim, b.ndim) - 1
    da, db = a - _t(op.lhs).zp, b - _t(op.rhs).zp
    if num.in_ort_mode(op):
        r = _t(op.result)
        return af.ort_product(_align(da, rank), _align(db, rank), _t(op.lhs).real_scale,
                              _t(op.rhs).real_scale, r.real_scale, r.zp, r.width)
    return af.wrap32(_align(da, rank) * _align(db, rank))


def _matmul(op, a, b):
    return af.wrap32(np.matmul(a - _t(op.lhs).zp, b - _t(op.rhs).zp))


def _conv2d(op, x, f):
    from minun_mlir.numerics.float_eval import _windows

    strides, pads, dil = (minun.ints(a) for a in (op.strides, op.pads, op.dilations))
    groups = op.groups.value.data
    f = f[0] - _t(op.filter).zp
    b, n = x.shape[:2]
    d = (x - _t(op.input).zp).reshape(b * n, *x.shape[2:])
    win = _windows(d, f.shape[1:3], strides, pads, dil, 0)  # padding: q = zp, so 0
    cg = f.shape[3]
    outs = [np.einsum("mhwcij,ijco->mhwo", win[:, :, :, g * cg:(g + 1) * cg], f[g])
            for g in range(groups)]
    y = af.wrap32(np.concatenate(outs, axis=-1))
    return y.reshape(b, n, *y.shape[1:])


def op_table(op: Operation) -> np.ndarray:
    """The 256 int8 outputs of an exp / sigmoid / tanh op, for inputs -128..127."""
    a, r = _t(op.operands[0]), _t(op.results[0])
    if op.name == "num.lut":
        return np.asarray(op.table.get_values(), dtype=np.int64)
    function = {"num.exp": "exp", "num.sigmoid": "sigmoid", "num.tanh": "tanh"}[op.name]
    return af.table(function, a.real_scale, a.zp, r.real_scale, r.zp)


def _table(op, x):
    return op_table(op)[np.asarray(x, dtype=np.int64) - af.QMIN]


def _erase_dead(value: SSAValue | None) -> None:
    """Erase the op computing value if nothing reads it, and so on up its operands."""
    owner = getattr(value, "owner", None)
    if not isinstance(owner, Operation) or isinstance(owner, num.InputOp) or \
            owner.parent is None or any(r.uses for r in owner.results):
        return  # (a leaf not placed yet: an unused num.param is dropped at the end)
    operands = list(owner.operands)
    owner.detach()
    owner.erase()
    for x in operands:
        _erase_dead(x)


def clip_bounds(op: Operation) -> tuple[int, int]:
    t = _t(op.operands[0])
    lo, hi = (0.0, 6.0) if isinstance(op, num.Relu6Op) else (
        float(op.lo.value.data), float(op.hi.value.data))
    q = af.quantize(np.array([lo, hi]), t.real_scale, t.zp, t.width)
    return int(q[0]), int(q[1])


def _clip(op, x):
    lo, hi = clip_bounds(op)
    return np.clip(x, lo, hi)


def _neg(op, x):
    """-(s (q - zp)) stored at the result's zero point zr: zp + zr - q (~q where zr is
    -1 - zp, num.neg's exact form), saturated where zr is zp."""
    t, r = _t(op.input), _t(op.result)
    return np.clip(t.zp + r.zp - np.asarray(x, dtype=np.int64), *af.int_range(t.width))


def _maxpool(op, x):
    from minun_mlir.numerics.float_eval import max_pool

    return max_pool(op, x, af.int_range(_t(op.input).width)[0])


def _drop_unused(value: SSAValue) -> None:
    """Erase a converted parameter nothing reads (a filter num.avgpool replaces)."""
    owner = value.owner
    if isinstance(owner, num.ParamOp) and not value.uses:
        owner.detach()
        owner.erase()


def avgpool_counts(shape, kernel, strides, pads) -> np.ndarray:
    """[OH, OW]: how many input pixels each window of an NHWC `shape` covers."""
    from minun_mlir.numerics.float_eval import _windows

    ones = np.ones((1, shape[1], shape[2], 1), dtype=np.int64)
    return _windows(ones, kernel, strides, pads, (1, 1), 0).sum(axis=(-2, -1))[0, :, :, 0]


def _avgpool(op, x):
    """TFLite's int8 average pool: the window's sum of stored values over its count, ties
    away from zero (C's truncating division of sum +- count / 2)."""
    from minun_mlir.numerics.float_eval import _windows

    k, s, p = (minun.ints(a) for a in (op.kernel, op.strides, op.pads))
    b, n = x.shape[:2]
    flat = np.asarray(x, dtype=np.int64).reshape(b * n, *x.shape[2:])
    sums = _windows(flat, k, s, p, (1, 1), 0).sum(axis=(-2, -1))
    counts = avgpool_counts(shape_of(op.input), k, s, p)[None, :, :, None]
    num_ = np.where(sums > 0, sums + counts // 2, sums - counts // 2)
    y = np.where(num_ >= 0, num_ // counts, -((-num_) // counts))
    return y.reshape(b, n, *y.shape[1:])


def init_value(op: minun.InitOp) -> int:
    t = _t(op.result)
    return int(af.quantize(np.array(float(op.fill.value.data)), t.real_scale, t.zp, t.width))


_KERNELS = {
    "num.param": lambda op: op.array().astype(np.int64)[None],
    "num.requantize": _requantize,
    "num.add": _add,
    "num.sub": lambda op, a, b: _add(op, a, b, -1),
    "num.mul": _mul,
    "num.matmul": _matmul,
    "num.sparse_matmul": _matmul,  # a zero weight adds 0 (weights have zero point 0)
    "num.conv2d": _conv2d,
    "num.exp": _table,
    "num.sigmoid": _table,
    "num.tanh": _table,
    "num.lut": _table,
    "minun.tflite_lstm": lambda op, x: tl.lstm(op.lstm_params(), x, op.time_major is not None),
    "num.softmax": lambda op, x: tsm.softmax(x, _t(op.input).real_scale) if op.tflite
    else af.softmax(x, _t(op.input).real_scale, num.softmax_levels(_t(op.result))),
    "num.log_softmax": lambda op, x: af.log_softmax(x, _t(op.input).real_scale,
                                                    _t(op.result).real_scale, _t(op.result).zp),
    "num.relu": lambda op, x: np.maximum(x, _t(op.input).zp),
    "num.relu6": _clip,
    "num.clip": _clip,
    "num.neg": _neg,
    "num.max": float_eval._binary(np.maximum),
    "num.min": float_eval._binary(np.minimum),
    "num.maxpool": _maxpool,
    "num.avgpool": _avgpool,
    "num.argmax": float_eval._argmax,
    "num.sgn": float_eval._sgn,
    "minun.init": lambda op: np.full((1, *op.result.type.get_shape()), init_value(op),
                                     dtype=np.int64),
}


class ZeroSkewRepresentation(Representation):
    name = "zero-skew"
    bitwidths = (8,)
    bitwidths_text = "8 (int8 values, int32 accumulators)"
    default_bits = 8
    options = frozenset({"bits", "per_channel", "bias_correction", "weight_rounding",
                         "weight_bits"})

    def label(self, o) -> str:
        return (f"zero-skew{o.bits}" + ("-per-channel" if o.per_channel else "")
                + (f"-w{o.weight_bits}" if o.weight_bits else "")
                + ("-bias-corrected" if o.bias_correction else "")
                + ("" if o.weight_rounding == "nearest" else f"-{o.weight_rounding}"))

    def owns(self, element: Attribute) -> bool:
        return isinstance(element, AffineType)

    def quantize(self, module: ModuleOp, config: QuantizeConfig, profile: Profile | None
                 ) -> ModuleOp:
        return ZeroSkewConverter(config, profile).run(module)

    def input_rounding(self, fn) -> str:
        """"onnxruntime" for a pre-quantized ONNX model (its inputs quantized as
        onnxruntime's QuantizeLinear: float32, half to even), "tflite" for a TFLite model
        (TFLite's QUANTIZE: the float32 quotient, ties away from zero), else "nearest"
        (ties away from zero, in double)."""
        attr = fn.attributes.get(REQUANTIZE)
        if attr == StringAttr("tflite"):  # a TFLite model: its QUANTIZE, in float32
            return "tflite"
        return "onnxruntime" if attr == StringAttr("onnxruntime") else "nearest"

    def encode(self, values: np.ndarray, element: Attribute, rounding: str) -> np.ndarray:
        if rounding == "onnxruntime":
            return af.ort_quantize(values, element.real_scale, element.zp, element.width)
        if rounding == "tflite":
            return af.tflite_quantize(values, element.real_scale, element.zp, element.width)
        return af.quantize(values, element.real_scale, element.zp, element.width)

    def c_encode(self, element: Attribute, rounding: str) -> str:
        if rounding == "onnxruntime":
            return af.c_ort_quantize("v", element.real_scale, element.zp,
                                     element.width) + "\nreturn q;"
        # affine.quantize in IEEE double: the same division, round() (ties away) and clamps
        # (tflite_quantize: the quotient in float32 first)
        lo, hi = af.int_range(element.width)
        quotient = (f"(double)((float)v / (float){element.real_scale.hex()})"
                    if rounding == "tflite" else f"v / {element.real_scale.hex()}")
        return (f"double r = round({quotient});\n"
                f"if (r < {lo - 1 - abs(element.zp)}.0) r = {lo - 1 - abs(element.zp)}.0;\n"
                f"if (r > {hi + 1 + abs(element.zp)}.0) r = {hi + 1 + abs(element.zp)}.0;\n"
                f"int32_t q = (int32_t)r + {element.zp};\n"
                f"return q < {lo} ? {lo} : q > {hi} ? {hi} : q;")

    def decode(self, stored: np.ndarray, element: Attribute) -> np.ndarray:
        return af.dequantize(stored, element.real_scale, element.zp)

    def kernels(self):
        return _KERNELS
