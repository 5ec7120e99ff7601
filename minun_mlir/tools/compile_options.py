"""Every rule on `minun-compile`'s options in one place, checked before any work.

An option the chosen configuration ignores, a value out of range, or an option that needs
another is refused here with one line naming the option (`minun-compile: error: --x ...`)
instead of being accepted with no effect or failing after a long compile. Rules that need
the model's tensors (--demote, --assign's names) are checked by the quantize pass, the
first stage that knows them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from minun_mlir.diagnostics import error
from minun_mlir.driver import MEMORY_MAP
from minun_mlir.formats.int4 import weights as int4_weights
from minun_mlir.lowering.c_printer import FILES, RUNTIME_SOURCES
from minun_mlir.numerics import formats
from minun_mlir.numerics.repr import DEFAULT_REPRESENTATION
from minun_mlir.outputs import check_file, check_folder
from minun_mlir.profile import PNG_FILE
from minun_mlir.search_report import REPORT_FILES

TOOL = "minun-compile"
# Every file a compile may write into --out (all recorded in its manifest).
GENERATED = (*FILES, *RUNTIME_SOURCES, MEMORY_MAP, PNG_FILE)
# What --json must never replace, even when it is not an input of this run.
SOURCE_SUFFIXES = (".c", ".h", ".sd", ".onnx", ".npy", ".npz", ".pb", ".tflite")


def refuse(message: str) -> Exception:
    """`minun-compile: error: message`: an option's diagnostic names the tool."""
    return error(message, at=TOOL)


# Options that only mean something with another: option -> (its attribute, the needed
# option's attribute, the needed option's flag). Each given without the other is refused.
NEEDS = (
    ("--soft-limit", "soft_limit", "search", "--search haunter"),
    ("--explore-input-scale", "explore_input_scale", "search", "--search shiftry"),
    ("--search-report", "search_report", "search", "--search"),
    ("--max-drop", "max_drop", "search", "--search"),
    ("--ray", "ray", "search", "--search"),
    ("--max-inputs", "max_inputs", "run", "--run"),
    ("--opt", "opt", "run", "--run"),
    ("--timeout", "timeout", "run", "--run"),
    ("--profile", "profile", "run", "--run"),
)


def validate(args: argparse.Namespace) -> dict[str, int]:
    """Check the options (and fill in the defaults that depend on others: --repr and
    --bits, from --assign's file); returns the --dim values by name."""
    given_bits = args.bits
    if args.assign:
        from minun_mlir.assignment import load_assignment

        assignment = load_assignment(args.assign)
        for flag, given, wanted in (("--bits", args.bits, assignment.bits),
                                    ("--repr", args.repr, assignment.representation)):
            if given is not None and given != wanted:
                raise refuse(f"{flag} {given} differs from the assignment's ({wanted}, in "
                             f"{args.assign}): leave it out, the assignment sets it")
        args.bits = assignment.bits
        args.repr = assignment.representation
        if args.rounding and assignment.rounding and args.rounding != assignment.rounding:
            raise refuse(f"--rounding {args.rounding}: the assignment {args.assign} was "
                         f"searched with --rounding {assignment.rounding}")
        args.rounding = args.rounding or assignment.rounding
    args.repr = args.repr or DEFAULT_REPRESENTATION
    representation = formats.get(args.repr)
    args.bits = representation.default_bits if args.bits is None else args.bits
    rep, bits = args.repr, args.bits
    onnx = Path(args.model).suffix in (".onnx", ".tflite")  # a model carrying its weights
    seedot = Path(args.model).suffix == ".sd"

    for flag, attr, needed, needed_flag in NEEDS:
        if getattr(args, attr) not in (None, False) and not getattr(args, needed):
            raise refuse(f"{flag} is for {needed_flag}, which is not given")

    # the representation's own options: each one it does not honour is refused
    if given_bits is not None and "bits" not in representation.options:
        raise refuse(f"--bits is not an option of --repr {rep} (it has one bitwidth: "
                     f"{representation.default_bits})")
    if bits not in representation.bitwidths:
        raise refuse(f"--repr {rep} takes --bits {representation.bitwidths_text}, got "
                     f"--bits {bits}")
    given_options = (("--es", "es", args.es is not None),
                     ("--no-quire", "quire", args.quire is False),
                     ("--scales maxscale", "scales", args.scales == "maxscale"),
                     ("--input-scale", "input_scale", args.input_scale is not None),
                     ("--input-bits", "input_bits", args.input_bits is not None),
                     ("--param-bits", "param_bits", args.param_bits is not None),
                     ("--demote", "demote", bool(args.demote)),
                     (f"--rounding {args.rounding}", "rounding", args.rounding is not None),
                     (f"--overflow {args.overflow}", "overflow", args.overflow != "wrap"),
                     ("--weight-bits", "weight_bits", args.weight_bits is not None),
                     ("--bias-correction", "bias_correction", args.bias_correction),
                     (f"--weight-rounding {args.weight_rounding}", "weight_rounding",
                      args.weight_rounding != "nearest"))
    for flag, option, given in given_options:
        if given and option not in representation.options:
            note = " (posit<bits, es>)" if option == "es" else ""
            raise refuse(f"{flag} is for --repr {' or '.join(formats.taking(option))}{note}, "
                         f"not --repr {rep}")
    if args.maxscale is not None:
        if args.scales != "maxscale":
            raise refuse("--maxscale is for --scales maxscale (data-driven scales have no P)")
        if not 0 <= args.maxscale < bits:
            raise refuse(f"--maxscale must be in 0..{bits - 1} at {bits} bits, got "
                         f"{args.maxscale}")
    from minun_mlir.passes.quantize import check_input_scale

    check_input_scale(args.input_scale, args.input_bits or bits, "--input-scale", at=TOOL)
    if args.demote:
        names = args.demote.split(",")
        if any(not n.strip() for n in names):
            raise refuse(f"--demote expects comma-separated tensor names, got '{args.demote}'")
        if args.scales == "maxscale":
            raise refuse("--demote needs --scales data-driven (mixed bitwidths)")
        if bits // 2 not in representation.bitwidths:
            raise refuse(f"--demote keeps tensors at half of --bits {bits}, and --repr {rep} "
                         f"has no {bits // 2}-bit type (it takes "
                         f"{representation.bitwidths_text})")
    if args.param_bits is not None:
        if args.param_bits not in representation.bitwidths:
            raise refuse(f"--repr {rep} takes --param-bits {representation.bitwidths_text}, "
                         f"got --param-bits {args.param_bits}")
        if args.scales == "maxscale":
            raise refuse("--param-bits needs --scales data-driven (mixed bitwidths)")
    if args.per_channel and ("per_channel" not in representation.options
                             or args.scales == "maxscale"):
        raise refuse("--per-channel is for --repr zero-skew, or --repr fixed with data-driven "
                     "scales")
    why = int4_weights.refusal(args.weight_bits, args.scales, args.weight_rounding)
    if why is not None:
        raise refuse(why)
    if args.weight_bits is not None and (args.search or args.assign):
        raise refuse("--weight-bits 4 is not searched: the precision searches and their "
                     "assignments choose 8-, 16- or 32-bit tensors")
    if args.input_scales == "feature" and (args.search or args.assign):
        raise refuse("--input-scales feature is not searched: the precision searches and "
                     "their assignments name the tensors of the unfolded program")
    if args.input_scales == "feature" and not args.train:
        raise refuse("--input-scales feature needs --train: each feature's range comes from "
                     "the training data")
    if args.bias_correction and not args.train:
        raise refuse("--bias-correction needs --train: the inputs it measures the quantized "
                     "program's errors on")
    if args.weight_rounding != "nearest" and not args.train:
        raise refuse(f"--weight-rounding {args.weight_rounding} needs --train: the inputs "
                     "each layer's output is matched on")
    if args.weight_rounding != "nearest" and args.bias_correction:
        raise refuse(f"--weight-rounding {args.weight_rounding} already refits the biases "
                     "--bias-correction moves: use one of them")

    # the model's format
    if args.dim and not onnx:
        raise refuse("--dim is for ONNX models (a SeeDot program's shapes are declared)")
    if args.input_range is not None and seedot:
        raise refuse("--input-range is for ONNX models (a SeeDot program declares its "
                     "input's range)")
    if args.synthetic_weights is not None and onnx:
        raise refuse("--synthetic-weights is for SeeDot programs (an ONNX model carries its "
                     "weights)")
    input_range(args)
    dims: dict[str, int] = {}
    if args.dim:
        from minun_mlir.diagnostics import MinunError
        from minun_mlir.frontends.onnx import parse_dims

        try:
            dims = parse_dims(args.dim)
        except MinunError as e:
            raise refuse(str(e)) from None
        for name, size in dims.items():
            if size < 1:
                raise refuse(f"--dim {name}={size}: a dimension must be at least 1")

    # memory, runs and outputs
    if args.ram_budget < 0:
        raise refuse(f"--ram-budget must be a number of bytes (0: no limit), got "
                     f"{args.ram_budget}")
    if args.run and not args.test:
        raise refuse("--run needs --test FILE (the inputs to run)")
    if args.profile and args.target == "x86":
        raise refuse("--profile splits simulated cycles (avr) or instructions (cortex-m) "
                     "by layer; x86 runs natively and has only wall-clock times, which "
                     "cannot be split exactly: use --target avr or a cortex-m target")
    if args.max_inputs is not None and args.max_inputs < 1:
        raise refuse(f"--max-inputs must be at least 1, got {args.max_inputs}")
    if args.timeout is not None and not args.timeout > 0:
        raise refuse(f"--timeout must be a positive number of seconds, got {args.timeout}")
    if args.search is not None:
        check_search(args)
    from minun_mlir import deploy

    if args.out is None and not args.run and not args.print_pipeline:
        args.out = str(default_out(args.model))  # a first try writes its C somewhere
        args.out_is_default = True
    why = deploy.check(args.format, args.target, args.out)
    if why:
        raise refuse(why)
    check_outputs(args)
    return dims


def check_search(args: argparse.Namespace) -> None:
    if args.train is None:
        raise refuse("--search needs training data (--train FILE)")
    rep = formats.get(args.repr)
    for flag, given in (("--demote", bool(args.demote)),
                        ("--param-bits", args.param_bits is not None)):
        if given:
            raise refuse(f"{flag} chooses bitwidths by hand, --search chooses them: use one "
                         "of them")
    if not rep.searches or args.scales != "data-driven" or args.assign:
        raise refuse("--search assigns fixed-point (or, with haunter, posit) bitwidths with "
                     "data-driven scales (not with --repr float32 or bfloat16, --scales "
                     "maxscale or --assign)")
    if args.search not in rep.searches:
        raise refuse(f"--repr {args.repr}: --search {' or '.join(sorted(rep.searches))} "
                     "(shiftry's demotion explores fixed-point scales)")
    if not args.ram_budget and args.max_drop is None:
        raise refuse("--search needs --ram-budget BYTES, --max-drop POINTS or both")
    if args.search == "haunter" and (not args.ram_budget or args.max_drop is not None
                                     or args.explore_input_scale):
        raise refuse("--search haunter needs --ram-budget BYTES (and takes no --max-drop or "
                     "--explore-input-scale)")
    if args.search == "shiftry" and args.soft_limit is not None:
        raise refuse("--soft-limit is for --search haunter (MinUn's soft limit)")
    if args.soft_limit is not None and not args.soft_limit >= 1:
        raise refuse(f"--soft-limit is a factor of --ram-budget, at least 1, got "
                     f"{args.soft_limit}")
    if args.jobs < 0:
        raise refuse(f"--jobs must be 0 (one per core) or more, got {args.jobs}")


def check_outputs(args: argparse.Namespace) -> None:
    """Every place this compile will write, checked before any work (outputs.py's rules):
    --out may hold only files a compile wrote, --json is a file of its own that no input
    of this run is, and a search report goes to a folder of its own."""
    inputs = (args.model, args.weights, args.train, args.test, args.assign)
    if args.out is not None:
        check_folder(args.out, GENERATED, "--out")
        from minun_mlir.deploy import planned

        for folder, names in planned(args.format, args.model, args.out, GENERATED):
            check_folder(folder, names, "--out")
    if args.search is not None:
        check_folder(search_folder(args), REPORT_FILES, "--search-report")
    if args.json is not None:
        check_file(args.json, "--json", inputs, SOURCE_SUFFIXES)
        if args.out is not None and Path(args.json).resolve().parent == Path(
                args.out).resolve() and Path(args.json).name in GENERATED:
            raise error("--json names a file the compile writes into --out", at=args.json)


def default_out(model: str) -> Path:
    """Where a compile without --out (and without --run) writes: build/NAME, NAME being
    the model file's stem, or its folder's name for a `model.sd`/`model.onnx`
    (benchmarks/models/lenet-digits10/model.sd: build/lenet-digits10)."""
    path = Path(model)
    name = path.parent.name if path.stem == "model" and path.parent.name else path.stem
    return Path("build") / name


def search_folder(args: argparse.Namespace) -> Path:
    """Where --search writes its report (--search-report, else OUT/search, else
    build/MODEL-search when --run builds in a temporary folder)."""
    if args.search_report:
        return Path(args.search_report)
    return Path(args.out) / "search" if args.out else (
        Path("build") / f"{Path(args.model).stem}-search")


def input_range(args: argparse.Namespace) -> tuple[float, float] | None:
    if args.input_range is None:
        return None
    parts = args.input_range.rpartition("=")[2].split(",")
    try:
        lo, hi = (float(v) for v in parts)
    except ValueError:
        raise refuse(f"--input-range expects LO,HI (two numbers), got '{args.input_range}'"
                    ) from None
    if not lo < hi:
        raise refuse(f"--input-range {args.input_range}: LO must be below HI")
    return lo, hi
