"""`quantize`: L1 (float tensors) -> L2 (values typed by a number representation).

    quantize{repr=fixed bits=16 scales=data-driven data=train.npy rounding=trunc}
    quantize{repr=fixed bits=16 scales=maxscale maxscale=5}
    quantize{repr=fixed bits=16 scales=maxscale data=train.npy}     (maxscale tuned on data)
    quantize{repr=float32}
    quantize{repr=posit bits=16 es=2}                               (posit<16, 2>)
    quantize{repr=posit bits=8 quire=false}     (dot products rounded term by term)
    quantize{repr=zero-skew bits=8 data=train.npy}     (TFLite's affine int8, zero points)
    quantize{repr=zero-skew bits=8 per-channel=true weight-rounding=gptq data=train.npy}
                                      (int8 codes chosen per layer by its output, GPTQ)

The input has only primitive ops: lower-composite-ops runs before it in the pipeline
(minun_mlir/pipeline.py), and quantize reports a composite op instead of rewriting it.
When `data` is given, it profiles every value with the float evaluator (or reads `profile
= array<f64: lo, hi>` attributes put on ops by hand), and hands the module to the chosen
representation, which assigns types and inserts every shift.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from minun_mlir.diagnostics import error, warn
from minun_mlir.dialects import num
from minun_mlir.formats.fixed import arith as fx
from minun_mlir.formats.int4 import weights as int4_weights
from minun_mlir.limits import check_work
from minun_mlir.modules import replace_module_body, require_level, walk_ops
from minun_mlir.numerics import formats
from minun_mlir.numerics.float_eval import Profile
from minun_mlir.numerics.repr import QuantizeConfig
from minun_mlir.passes.lower_composite_ops import is_composite
from minun_mlir.quantize_options import QuantizeOptions


def load_training_data(module: ModuleOp, data_path: str | Path):
    """A dataset shaped for the model's inputs (minun_mlir/data.py: one input's array, or
    a dict of arrays by input name for several)."""
    from minun_mlir.data import load_dataset
    from minun_mlir.numerics.float_eval import input_shapes

    shapes = input_shapes(module)
    if not shapes:
        raise error("profiling from a file needs a model with an input")
    # a regressor's first column (or 'y') holds targets, any reals; a classifier's labels
    # (maxscale's tuning measures accuracy on them)
    from minun_mlir.modules import is_regression

    return load_dataset(data_path, shapes, targets=is_regression(module))


def profile_module(module: ModuleOp, data_path: str | Path, evaluator: str = "auto"
                   ) -> Profile:
    """Profile every L1 value on a SeeDot dataset (label first), with the instrumented
    float C (minun_mlir/native.py) or the numpy evaluator."""
    from minun_mlir import native

    dataset = load_training_data(module, data_path)
    return native.profile(module, dataset.features, evaluator)


def synthetic_inputs(module: ModuleOp, n: int, seed: int = 0
                     ) -> np.ndarray | dict[str, np.ndarray]:
    """n inputs drawn uniformly in each input's declared range (a dict by input name when
    the model has several)."""
    from minun_mlir.numerics.float_eval import model_inputs

    inputs = model_inputs(module)
    if not inputs:
        raise error("profiling on synthetic inputs needs a model with an input")
    check_work(module, n)  # before the inputs are drawn
    rng = np.random.default_rng(seed)
    drawn = {}
    for op in inputs:
        shape = tuple(op.results[0].type.get_shape())
        lo, hi = op.range_lo.value.data, op.range_hi.value.data
        drawn[op.sym_name.data] = rng.uniform(lo, hi, size=(n, *shape)).astype(np.float32)
    return next(iter(drawn.values())) if len(drawn) == 1 else drawn


def reject_composite_ops(module: ModuleOp) -> None:
    for op in walk_ops(module):
        if is_composite(op):
            raise error(f"{op.name} is a composite op: run lower-composite-ops before "
                        "quantize (the compile pipeline does)", at=op)


def check_weights(module: ModuleOp) -> None:
    """Every parameter and constant finite (NaN/Inf would silently become wrong integers),
    and inside its declared range (maxscale scales from the range; a warning with the
    numbers when the weights exceed it)."""
    from minun_mlir.dialects import minun

    weights = frozenset({minun.ParamOp, minun.ConstantOp})  # exact classes (see name_of)
    for op in walk_ops(module):
        if type(op) not in weights:
            continue
        stored = np.asarray(op.array())
        values = stored.astype(np.float64)
        name = op.sym_name.data if isinstance(op, minun.ParamOp) else "a constant"
        bad = ~np.isfinite(values)
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0]) if values.ndim else ()
            raise error(f"{op.name} {name}: element {list(index)} is {values[index]}; weights "
                        f"must be finite ({int(bad.sum())} are not)", at=op)
        if isinstance(op, minun.ParamOp) and values.size:
            # compared in the weights' own precision: float32(0.3) is above 0.3, and a
            # range declared as 0.3 holds it
            dtype = stored.dtype if stored.dtype.kind == "f" else np.float64
            lo, hi = op.range_lo.value.data, op.range_hi.value.data
            vmin, vmax = float(values.min()), float(values.max())
            if stored.min() < dtype.type(lo) or stored.max() > dtype.type(hi):
                warn(f"{name}: weights span [{vmin:.6g}, {vmax:.6g}], outside the declared "
                     f"range [{lo:.6g}, {hi:.6g}]", at=op)


def tensor_names(module: ModuleOp) -> list[str]:
    """The names `demote` and a bitwidth assignment may use, in program order: the
    parameters', inputs' and named values', and %t1, %t2, ... for the unnamed ones."""
    from xdsl.dialects.builtin import TensorType

    from minun_mlir.modules import main_function
    from minun_mlir.numerics.convert import name_of, temporary_names

    temporaries = temporary_names(module)
    names: dict[str, None] = {}
    for op in walk_ops(main_function(module)):
        for v in op.results:
            name = name_of(v) or temporaries.get(v)
            if isinstance(v.type, TensorType) and name is not None:
                names[name] = None
    return list(names)


def check_names(module: ModuleOp, names, what: str, at: str | None = None) -> None:
    """Every name in `names` a tensor of the module: a misspelt name would otherwise
    change nothing while the report claims it did."""
    import difflib

    if not names:  # nothing to look up (the usual case): no walk
        return
    known = tensor_names(module)
    unknown = [n for n in names if n not in known]
    if not unknown:
        return
    close = difflib.get_close_matches(unknown[0], known, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    shown = [n for n in known if not n.startswith("%t")]
    listed = ", ".join(shown[:20]) + (", ..." if len(shown) > 20 else "")
    missing = ", ".join(repr(n) for n in unknown)
    raise error(f"{what + ': ' if what else ''}no tensor named {missing} in the model{hint}; "
                f"its tensors: {listed}"
                + (f", %t1..%t{len(known) - len(shown)} (unnamed values)"
                   if len(known) > len(shown) else ""), at=at)


def check_input_scale(scale: int | None, width: int, what: str, at: str | None = None
                      ) -> None:
    """The input scales that make sense for a `width`-bit input (its value times 2^scale
    is stored): -width..width, which holds Shiftry's exploration (0..width) and the
    data-driven rule's choice for inputs up to 2^width."""
    if scale is not None and not -width <= scale <= width:
        raise error(f"{what} must be in -{width}..{width} for a {width}-bit input (the "
                    f"input's value times 2^scale is stored), got {scale}", at=at)


def format_options() -> list[str]:
    """The options some number format honours and another does not (bits aside: every
    format checks its own bitwidths)."""
    return sorted(set().union(*(r.options for r in formats.REGISTRY.values())) - {"bits"})


def takers(option: str) -> str:
    """`fixed` or `posit or repr=fixed`: the representations honouring a quantize option."""
    return " or repr=".join(formats.taking(option))


def quantize_module(module: ModuleOp, config: QuantizeConfig, representation: str = "fixed",
                    profile: Profile | None = None, data: str | Path | None = None,
                    evaluator: str = "auto", synthetic: int = 0) -> ModuleOp:
    """The pass as a function: returns a new L2 module; `module` (L1 with primitive ops
    only) is not changed. `evaluator` (auto|native|numpy) runs the profiling and the
    maxscale search; both evaluators give the same results (tested). Without data,
    `synthetic` > 0 profiles on that many inputs drawn uniformly in the declared input
    ranges (seeded): scales for a model whose data is not at hand."""
    for name, allowed in (("rounding", fx.ROUNDING_MODES), ("overflow", fx.OVERFLOW_MODES),
                          ("shift_rounding", (None, *fx.ROUNDING_MODES)),
                          ("adds", ("exact", "result-scale")),
                          ("scales", ("maxscale", "data-driven")),
                          ("input_scales", ("auto", "tensor", "feature")),
                          ("exp", ("auto", "seedot", "shiftry"))):
        if getattr(config, name) not in allowed:
            raise error(f"quantize: {name} must be one of {', '.join(a for a in allowed if a)}, "
                             f"got '{getattr(config, name)}'")
    from minun_mlir.native import EVALUATORS

    if evaluator not in EVALUATORS:
        raise error(f"quantize: evaluator must be one of {', '.join(EVALUATORS)}, got "
                    f"'{evaluator}'")
    rep = formats.get(representation)
    if config.bits not in rep.bitwidths:
        raise error(f"quantize: bits must be {rep.bitwidths_text}, got {config.bits}")
    if config.param_bits is not None and "param_bits" not in rep.options:
        raise error(f"quantize: param-bits is for repr={takers('param_bits')} (repr="
                    f"{representation} has one bitwidth for every tensor)")
    if config.param_bits is not None and config.param_bits not in rep.bitwidths:
        raise error(f"quantize: param-bits must be {rep.bitwidths_text}, got "
                         f"{config.param_bits}")
    if config.input_bits is not None and config.input_bits not in fx.BITWIDTHS:
        raise error(f"quantize: input-bits must be 8, 16 or 32, got {config.input_bits}")
    if config.per_channel and ("per_channel" not in rep.options
                               or config.scales == "maxscale"):
        raise error("quantize: per-channel is for repr=zero-skew, or repr=fixed with "
                    "scales=data-driven")
    why = int4_weights.refusal(config.weight_bits, config.scales, config.weight_rounding,
                               "weight-bits")
    if why is not None and "weight_bits" in rep.options:
        raise error(f"quantize: {why}")
    if not config.quire and "quire" not in rep.options:
        raise error(f"quantize: quire=false is for repr={takers('quire')} (repr="
                    f"{representation} has no quire)")
    if config.input_bits is not None and "input_bits" not in rep.options:
        raise error(f"quantize: input-bits is for repr={takers('input_bits')} (the input of a "
                    f"{representation} model has its representation's type)")
    check_input_scale(config.input_scale, config.input_bits or config.bits,
                      "quantize: input-scale")
    defaults = QuantizeConfig()
    for name in format_options():  # what the format does not honour is refused, not ignored
        value = getattr(config, name)
        if name not in rep.options and value != getattr(defaults, name):
            shown = ",".join(value) if isinstance(value, tuple) else value
            given = name.replace("_", "-") + ("" if isinstance(value, bool) else f"={shown}")
            raise error(f"quantize: {given} is for repr={takers(name)}, not {representation}")
    if config.maxscale is not None and not 0 <= config.maxscale < config.bits:
        raise error(f"quantize: maxscale must be in 0..{config.bits - 1} at {config.bits} "
                    f"bits, got {config.maxscale}")
    if config.scales == "maxscale" and (config.demote or config.bits_by_name
                                        or config.scale_by_name
                                        or config.param_bits is not None
                                        or config.input_bits is not None):
        raise error("quantize: mixed bitwidths need scales=data-driven")
    require_level(module, "quantize", 1)
    reject_composite_ops(module)
    check_names(module, config.demote, "quantize: demote")
    check_weights(module)
    if config.input_scales == "feature":
        module, profile = _feature_scales(module, config, data, evaluator, profile)
    elif config.input_scales == "auto" and _auto_feature_scales(config, representation, data,
                                                                profile):
        module, profile = _feature_scales(module, config, data, evaluator, profile, auto=True)
    if not formats.get(representation).needs_profile:
        pass  # one type per program: nothing to profile
    elif data is not None and profile is None:
        profile = profile_module(module, data, evaluator)
    elif synthetic and profile is None and config.scales == "data-driven":
        from minun_mlir import native

        profile = native.profile(module, synthetic_inputs(module, synthetic), evaluator)
    if config.weight_rounding != "nearest":
        from minun_mlir.numerics.weight_rounding import METHODS, carry_profile, round_weights

        if config.weight_rounding not in METHODS:
            raise error(f"quantize: weight-rounding must be one of {', '.join(METHODS)}, "
                        f"got '{config.weight_rounding}'")
        if config.bias_correction:
            raise error(f"quantize: weight-rounding={config.weight_rounding} already fits the "
                        "biases bias-correction would move: use one of them")
        if data is None:
            raise error(f"quantize: weight-rounding={config.weight_rounding} needs data= (the "
                        "calibration inputs the layers' outputs are matched on)")
        # the float model's ranges stay the calibration: codes on the int8 grid and refitted
        # biases are not a new model to calibrate on
        original, ranges = module, profile or {}
        module = round_weights(
            module, load_training_data(module, data).features,
            lambda m: rep.quantize(m, config, carry_profile(ranges, original, m)),
            config.per_channel)
        profile = carry_profile(ranges, original, module)
    if config.bias_correction:
        if data is None:
            raise error("quantize: bias-correction needs data= (the calibration inputs it "
                        "measures the quantized program's errors on)")
        from minun_mlir.numerics.bias_correction import correct_biases

        module = correct_biases(
            module, load_training_data(module, data).features,
            lambda m: rep.quantize(m, config, profile_module(m, data, evaluator)))
        profile = profile_module(module, data, evaluator)
    if config.scales == "maxscale" and config.maxscale is None:
        if data is None:
            raise error("quantize: scales=maxscale needs maxscale=P, or data= to "
                             "choose P by accuracy on the training data")
        from minun_mlir.search import tune_maxscale

        best, _ = tune_maxscale(module, config, load_training_data(module, data), profile,
                                representation, evaluator)
        config = dataclasses.replace(config, maxscale=best)
    l2 = formats.get(representation).quantize(module, config, profile)
    try:
        l2.verify()
    except VerifyException as e:
        raise out_of_range_scales(l2) or error(
            f"quantize produced invalid IR (a bug, please report): {e}") from None
    warn_far_apart_scales(l2)
    copy_feature_scales(module, l2)
    return l2


def _auto_feature_scales(config: QuantizeConfig, representation: str, data,
                         profile: Profile | None) -> bool:
    """Whether input-scales=auto may fold: a format that takes per-feature input scales,
    data-driven scales profiled here on training data, and no per-tensor choice (a
    search's or an assignment's names and scales are the unfolded program's)."""
    return (data is not None and profile is None
            and "input_scales" in formats.get(representation).options
            and config.scales == "data-driven" and not config.bias_correction
            and config.weight_rounding == "nearest" and config.weight_bits is None
            and not (config.demote or config.bits_by_name or config.scale_by_name)
            and config.param_bits is None and config.input_bits is None
            and config.input_scale is None)


def _feature_scales(module: ModuleOp, config: QuantizeConfig, data, evaluator: str,
                    profile: Profile | None, auto: bool = False
                    ) -> tuple[ModuleOp, Profile | None]:
    """input-scales=feature: a copy of `module` with the input's per-feature ranges
    folded into its first weights (numerics/input_scales.py), and its profile on the
    training data as that program takes them."""
    from minun_mlir import native
    from minun_mlir.numerics import input_scales

    if data is None:
        raise error("quantize: input-scales=feature needs the training data (minun-compile "
                    "--train FILE, the pass's data=): each feature's range comes from it")
    if config.scales == "maxscale" or config.bias_correction \
            or config.weight_rounding != "nearest":
        raise error("quantize: input-scales=feature is for scales=data-driven, without "
                    "bias-correction or weight-rounding")
    folded = module.clone()
    features = input_scales.fold(folded, load_training_data(module, data).features, auto)
    if features is None:
        return module, profile
    module = folded
    return module, native.profile(module, features, evaluator)


def copy_feature_scales(l1: ModuleOp, l2: ModuleOp) -> None:
    """The per-feature input ranges of an L1 input onto its L2 input (its encoding)."""
    from minun_mlir.numerics.input_scales import ATTR

    found = {op.sym_name.data: op.attributes[ATTR] for op in walk_ops(l1)
             if op.name == "minun.input" and ATTR in op.attributes}
    if not found:  # no per-feature ranges (the usual case): nothing to copy
        return
    for op in walk_ops(l2):
        if op.name == "num.input" and op.sym_name.data in found:
            op.attributes[ATTR] = found[op.sym_name.data]


def out_of_range_scales(l2: ModuleOp) -> Exception | None:
    """The user's error behind a rescale no shift describes: values that differ in
    magnitude by more than 2^MAX_SHIFT (training data in absurd units)."""
    for op, a, b in _rescales(l2):
        if abs(a - b) > num.MAX_SHIFT:
            return error(f"the profiled values here and at its input differ in magnitude "
                         f"by 2^{abs(a - b)}: fixed-point scales {a} and {b} are more than "
                         f"{num.MAX_SHIFT} shifts apart (are the training data in the "
                         "model's units?)", at=op)
    return None


def warn_far_apart_scales(l2: ModuleOp) -> None:
    """A rescale by more than 62 shifts drops every bit of its input (or saturates): right
    when a bias is negligible next to a huge sum, suspicious when data are in the wrong
    units, so say it once per program."""
    for op, a, b in _rescales(l2):
        if abs(a - b) > 62:
            warn(f"the profiled values here and at its input differ in magnitude by "
                 f"2^{abs(a - b)} (fixed-point scales {a} and {b}): the smaller side is lost "
                 "entirely (are the training data in the model's units?)", at=op)
            return


def _rescales(l2: ModuleOp):
    for op in walk_ops(l2):
        if type(op) is num.RescaleOp:  # an exact class: cheaper than isinstance (see name_of)
            yield (op, op.operands[0].type.element_type.frac,
                   op.results[0].type.element_type.frac)


@dataclass(frozen=True)
class Quantize(QuantizeOptions, ModulePass):
    """Assign a number representation to every value (SeeDot / Shiftry scale rules).
    Its options are QuantizeOptions' fields (minun_mlir/quantize_options.py)."""

    name = "quantize"

    def __post_init__(self) -> None:
        if self.synthetic < 0:  # a bad option fails when the pipeline is built
            raise error(f"quantize: synthetic must be a number of inputs (0: none), got "
                        f"{self.synthetic}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = self.config()
        from minun_mlir.assignment import Assignment, load_assignment

        found = op.attributes.pop("minun.assignment", None)  # from bitwidth-assign
        assignment = (load_assignment(self.assign) if self.assign else
                      Assignment.from_json(found.data, "bitwidth-assign") if found is not None
                      else None)
        if assignment is not None:
            assignment.check_representation(self.repr)
            check_names(op, assignment.tensors, "" if self.assign else "bitwidth-assign",
                        at=self.assign or None)
            config = assignment.apply(config)
        replace_module_body(op, quantize_module(op, config, self.repr, data=self.data or None,
                                                evaluator=self.evaluator,
                                                synthetic=self.synthetic))
