"""The quantize options, declared once.

`QuantizeOptions` is the one declaration of every option that chooses how a model's reals
become numbers: the quantize pass inherits it (its fields are the pass's options,
`quantize{repr=posit bits=8}`), the driver's `Options` inherits it (a compile's
configuration), and minun-compile's flags are made from its field metadata (`add_flags`,
`from_args`). Whether a number format honours an option is the format's to say
(`Representation.options`); test_options_agree.py checks that the CLI, the pass, the
formats and README's options table name the same options.
"""

from __future__ import annotations

import argparse
from dataclasses import MISSING, dataclass, field, fields

from minun_mlir.formats.fixed.arith import DEFAULT_ROUNDING, Rounding
from minun_mlir.native import EVALUATORS
from minun_mlir.numerics import formats
from minun_mlir.numerics.repr import DEFAULT_REPRESENTATION, QuantizeConfig


@dataclass(frozen=True)
class Flag:
    """How minun-compile spells an option. `unset`: the flag's default is None, so that
    the CLI can tell a given value from the default (the format or the assignment then
    supplies it)."""

    name: str
    help: str = ""
    type: type | None = None
    choices: tuple | None = None
    metavar: str | None = None
    action: str | None = None  # store_true / store_false
    unset: bool = False
    parse: object = None  # str -> the field's value (e.g. "a,b" -> ("a", "b"))


def option(default, flag: Flag | None = None, *, no_flag: str = ""):
    """A field of QuantizeOptions. `no_flag`: why minun-compile has no flag for it."""
    assert (flag is None) == bool(no_flag), "an option has a flag or says why not"
    kwargs = {"default_factory": default} if callable(default) else {"default": default}
    return field(**kwargs, metadata={"flag": flag, "no_flag": no_flag})


def _names(text: str) -> tuple[str, ...]:
    return tuple(n for n in text.split(",") if n)


@dataclass(frozen=True)
class QuantizeOptions:
    """How the reals of a model become numbers (docs/numerics.md)."""

    repr: str = option(DEFAULT_REPRESENTATION, Flag(
        "--repr", choices=tuple(formats.REGISTRY), unset=True,
        help="number representation: fixed point (default, or the one of --assign's file), "
        "float32, posit<bits, es>, bfloat16 or zero-skew (TFLite's affine int8: scale and "
        "zero point per tensor, int32 accumulators; --bits 8 only)"))
    bits: int = option(16, Flag(
        "--bits", type=int, choices=(*range(8, 17), 32), unset=True,
        metavar="{8,16,32 (posits: 8..16, 32)}",
        help="the bitwidth (default 16, 8 for --repr zero-skew, or the one of --assign's "
        "file)"))
    es: int = option(2, Flag(
        "--es", type=int, choices=(0, 1, 2), unset=True,
        help="--repr posit: exponent bits of posit<bits, es> (default 2; with --search "
        "haunter, chosen per bitwidth by MinUn's stage I)"))
    scales: str = option("data-driven", Flag("--scales", choices=("data-driven", "maxscale")))
    maxscale: int | None = option(None, Flag(
        "--maxscale", type=int, help="SeeDot's maxscale P (default: tuned on --train)"))
    rounding: str = option(DEFAULT_ROUNDING, Flag(
        "--rounding", choices=tuple(Rounding), unset=True,
        help=f"how shifts round (default {DEFAULT_ROUNDING}; --search compares trunc and "
        "nearest unless this is given; --assign takes the file's)"))
    shift_rounding: str = option("", no_flag="Shiftry's own generated arithmetic (floor "
                                 "shifts, truncated constants), to reproduce its paper")
    adds: str = option("exact", no_flag="Shiftry's own generated arithmetic (adds at the "
                       "result's scale), to reproduce its paper")
    overflow: str = option("wrap", Flag("--overflow", choices=("wrap", "saturate")))
    input_scale: int | None = option(None, Flag("--input-scale", type=int))
    input_scales: str = option("auto", Flag(
        "--input-scales", choices=("auto", "tensor", "feature"),
        help="tensor: one scale for the whole input; feature: each input feature's "
        "training-data range folded into the weights that read it (needs --train); auto "
        "(default): feature where the training data's features span very different "
        "ranges (raw measurements) and the input is read by weights only, else tensor"))
    exp: str = option("auto", no_flag="the exp table's rule follows --scales (SeeDot's "
                      "under maxscale, Shiftry's otherwise)")
    demote: tuple[str, ...] = option(tuple, Flag(
        "--demote", parse=_names, help="comma-separated names kept at bits/2"))
    param_bits: int | None = option(None, Flag(
        "--param-bits", type=int, choices=(8, 16, 32),
        help="every parameter (weights, biases) at this bitwidth and the other values at "
        "--bits: --bits 16 --param-bits 8 halves the weights' flash (mixed bitwidths, "
        "data-driven scales)"))
    input_bits: int | None = option(None, Flag(
        "--input-bits", type=int, choices=(8, 16, 32),
        help="the input's bitwidth (default --bits; 8 holds camera pixels as bytes), its "
        "scale chosen by the same data-driven rule"))
    data: str = option("", no_flag="minun-compile's --train, which also feeds the search "
                       "and the report")
    evaluator: str = option("auto", Flag(
        "--evaluator", choices=EVALUATORS,
        help="what runs the model for profiling, tuning and the report: native (its C "
        "built for this machine), numpy (the reference evaluators, which also count "
        "overflow), auto (native for large models; default)"))
    synthetic: int = option(0, no_flag="minun-compile profiles on synthetic inputs when "
                            "no --train is given")
    assign: str = option("", Flag(
        "--assign", metavar="FILE",
        help="per-tensor bits and scales from a precision search (its assignment.json); "
        "the compile replays them"))
    per_channel: bool = option(False, Flag(
        "--per-channel", action="store_true",
        help="fixed point and zero-skew: a scale per output channel for the weights of "
        "matmuls and convolutions, their bias added in the accumulator (zero-skew: a "
        "requantization multiplier per channel)"))
    weight_bits: int | None = option(None, Flag(
        "--weight-bits", type=int, choices=(4,),
        help="fixed point (data-driven scales) and zero-skew: the weights of matmuls and "
        "convolutions as int4 codes, two per byte in flash, symmetric with a scale per "
        "output channel; the activations keep --repr/--bits (docs/numerics.md, \"4-bit "
        "weights\")"))
    bias_correction: bool = option(False, Flag(
        "--bias-correction", action="store_true",
        help="--repr zero-skew: move each bias of a matmul or convolution by the mean "
        "error the quantized program makes there on the training data, then quantize "
        "again (needs --train)"))
    weight_rounding: str = option("nearest", Flag(
        "--weight-rounding", choices=("nearest", "gptq"),
        help="--repr zero-skew: how int8 weights are rounded. gptq: the codes of each "
        "matmul or convolution chosen together (and its bias refitted) so that its output "
        "on the training data stays closest to the float model's (needs --train; "
        "default: nearest)"))
    quire: bool = option(True, Flag(
        "--no-quire", action="store_false", unset=True,
        help="--repr posit: dot products without a quire (every product and partial sum "
        "rounded; no quire in RAM). With --search haunter the search tries both unless "
        "this is given"))

    @property
    def representation(self) -> str:
        return self.repr

    def config(self) -> QuantizeConfig:
        """The numerics' view of these options (numerics/repr.py)."""
        return QuantizeConfig(
            bits=self.bits, es=self.es, scales=self.scales, maxscale=self.maxscale,
            rounding=self.rounding, overflow=self.overflow, input_scale=self.input_scale,
            input_scales=self.input_scales,
            shift_rounding=self.shift_rounding or None, adds=self.adds, exp=self.exp,
            demote=tuple(self.demote), param_bits=self.param_bits,
            input_bits=self.input_bits, per_channel=self.per_channel, quire=self.quire,
            weight_bits=self.weight_bits,
            bias_correction=self.bias_correction, weight_rounding=self.weight_rounding)

    def pass_options(self) -> dict[str, object]:
        """The quantize pass's options (its printed form leaves out the defaults)."""
        return {f.name: getattr(self, f.name) for f in fields(QuantizeOptions)}


def _default(f):
    return f.default_factory() if f.default is MISSING else f.default


def schema() -> list:
    """The options' fields, in declaration order (dataclasses.Field)."""
    return list(fields(QuantizeOptions))


def add_flags(parser: argparse.ArgumentParser) -> None:
    """minun-compile's flags for the options that have one."""
    for f in schema():
        flag: Flag | None = f.metadata["flag"]
        if flag is None:
            continue
        kwargs: dict[str, object] = {"dest": f.name, "help": flag.help or None}
        if flag.action:
            kwargs["action"] = flag.action
            kwargs["default"] = None if flag.unset else _default(f)
        else:
            kwargs["default"] = None if flag.unset else (
                "" if flag.parse else _default(f))
            for key in ("type", "choices", "metavar"):
                if getattr(flag, key) is not None:
                    kwargs[key] = getattr(flag, key)
        parser.add_argument(flag.name, **kwargs)


def from_args(args: argparse.Namespace) -> dict[str, object]:
    """The options minun-compile's flags give (a flag left unset keeps the default)."""
    out: dict[str, object] = {}
    for f in schema():
        flag: Flag | None = f.metadata["flag"]
        if flag is None or getattr(args, f.name) is None:
            continue
        value = getattr(args, f.name)
        out[f.name] = flag.parse(value) if flag.parse else value
    return out
