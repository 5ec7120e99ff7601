"""The end-to-end compile: model file -> L1 -> L2 -> C, with the accuracy report a user needs
to trust the result. `minun-compile` is its command line; the benchmark uses it too.

The compile is the declared pass pipeline (minun_mlir/pipeline.py), its text made from the
options (`Options.pipeline`, printed by `minun-compile --print-pipeline`) and run once on
in-memory IR: the frontend's L1, the stages up to quantize (profiling the float model on
the training data) give L2, which the bit-exact evaluator runs on the test data, and, when
an output directory is given, the remaining stages give L4, printed as C for one target.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from minun_mlir.data import Dataset, accuracy, disagreement, load_dataset, predictions
from minun_mlir.diagnostics import MinunError, error, stage, warn
from minun_mlir.formats.fixed import arith as fx
from minun_mlir.modules import (
    class_labels,
    decision_threshold,
    is_regression,
    main_function,
    mark_regression,
)
from minun_mlir.native import evaluate_outputs, float_outputs, use_native
from minun_mlir.numerics import formats
from minun_mlir.numerics.float_eval import model_inputs
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2, overflow_report
from minun_mlir.pipeline import pipeline_passes, pipeline_text, run_pipeline
from minun_mlir.quantize_options import QuantizeOptions


@dataclass(frozen=True)
class Options(QuantizeOptions):
    """A compile's configuration: the quantize options (QuantizeOptions, declared once
    for the pass, the CLI and this) and what the later stages take."""

    target: str = "x86"  # x86, avr, cortex-m0plus, cortex-m3, cortex-m4(f), cortex-m4-mps2
    planner: str = "greedy"
    input_in_scratch: bool = False  # the input a planned buffer (minun_predict_in_place)
    output_in_scratch: bool = False  # the output a planned buffer (minun_output_buffer)
    budget: int = 0  # bytes of RAM the buffers may use (memory-plan's budget); 0: no limit
    stream_rows: bool = False  # lower-to-loops{stream-rows}: chains as loops over rows

    def pipeline(self, train: str | Path | None = None) -> str:
        """The pass pipeline this compile runs (as `minun-opt --pass-pipeline` takes it)."""
        return pipeline_text(self.stage_options(train))

    def passes(self, train: str | Path | None = None) -> tuple[ModulePass, ...]:
        """The passes this compile runs, built from the options (no text in between)."""
        return pipeline_passes(self.stage_options(train))

    def stage_options(self, train: str | Path | None = None) -> dict[str, dict[str, object]]:
        """The options of each stage of the pipeline (pipeline.STAGES) this compile runs."""
        quantize = self.pass_options()
        quantize.pop("data", None)
        quantize.pop("synthetic", None)
        if train is not None:
            quantize["data"] = str(train)
        elif self.synthetic:
            quantize["synthetic"] = self.synthetic
        from minun_mlir.codegen import requantize_tables

        stages: dict[str, dict[str, object]] = {"quantize": quantize}
        if requantize_tables(self.target):
            stages["lower-to-loops"] = {"requantize_tables": True}
        if self.stream_rows:
            stages.setdefault("lower-to-loops", {})["stream_rows"] = True
        stages["memory-plan"] = {"planner": self.planner, "budget": self.budget,
                                 "input_in_scratch": self.input_in_scratch,
                                 "output_in_scratch": self.output_in_scratch}
        return stages

    @property
    def label(self) -> str:
        """A short name for reports: float32, fixed16, fixed8-maxscale5, fixed16+demote."""
        return formats.get(self.representation).label(self)


@dataclass
class Compiled:
    """What one compile produced, with the numbers of its report."""

    name: str
    options: Options
    l1: ModuleOp
    l2: ModuleOp
    test: Dataset | None
    pipeline: str = ""
    overflow: dict[str, dict[str, int]] | None = field(default_factory=dict)  # on the test
    # data; None when the native evaluator ran (it does not count overflow)
    stored_outputs: np.ndarray | None = None  # the evaluator's stored outputs (integers)
    error: dict[str, float] | None = None  # fixed vs float output: SQNR (dB), max abs error
    target_error: dict[str, float] | None = None  # a regressor's mean absolute error vs the
    # test data's targets: float_mae (the float program), mae (this program)
    classes: int = 2  # labels the model tells apart (num_classes)
    l4: ModuleOp | None = None
    l3: ModuleOp | None = None  # after memory-plan: the live ranges of a per-layer profile
    float_accuracy: float | None = None
    accuracy: float | None = None
    disagreement: float | None = None
    float_predictions: np.ndarray | None = None
    predictions: np.ndarray | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    c_dir: Path | None = None
    memory: dict[str, object] = field(default_factory=dict)  # the plan's numbers, with C
    # a large disagreement with float, measured again with --rounding nearest (trunc only)
    nearest_disagreement: float | None = None

    def memory_line(self) -> str:
        m = self.memory
        moves = (f", {m['defrag_moves']} defragmentation move"
                 f"{'' if m['defrag_moves'] == 1 else 's'}"
                 if m.get("defrag_moves") is not None else "")
        sides = [f"the {side}" for side in ("input", "output") if m.get(f"{side}_in_scratch")]
        what = ", ".join(["buffers", *sides[:-1]]) + (f" and {sides[-1]}" if sides else "")
        where = f"; memory map: {m['map']}" if m.get("map") else ""
        return (f"  RAM for {what} ({m['planner']}): {m['scratch_bytes']:,} B, lower bound "
                f"{m['lower_bound_bytes']:,} B{moves}{where}")

    @property
    def class_labels(self) -> list[str] | list[int] | None:
        """The labels of classes 0..n-1 (an ONNX classifier's string labels, or integer
        labels other than 0..n-1), or None."""
        return class_labels(self.l1)

    def label_names(self, labels) -> list[str]:
        """Labels (class indices) as the model's class labels where it has them, else as
        numbers."""
        names = self.class_labels
        return [str(names[int(k)]) if names and 0 <= int(k) < len(names) else str(int(k))
                for k in np.asarray(labels).reshape(-1)]

    @property
    def labels_meaningful(self) -> bool:
        """Whether the output is a label or class scores (not, say, a detection map or a
        regressor's value)."""
        return self.classes <= MAX_CLASSES and not is_regression(self.l1)

    def summary(self, show_c_dir: bool = True) -> str:
        lines = [f"{self.name} [{self.options.label}]"]
        if self.class_labels:
            lines.append("  class labels: " + ", ".join(
                f"{k} -> {name}" if isinstance(name, int) else f"{k} {name!r}"
                for k, name in enumerate(self.class_labels))
                + " (the C returns the index; model.h: minun_class_labels)")
        if self.test is not None:
            lines.append(f"  test data: {self.test.name}: {len(self.test)} examples"
                         if is_regression(self.l1) else f"  test data: {self.test.label_note}")
            if self.labels_meaningful and not self.test.labelled:
                lines.append(f"  accuracy: not reported (the test data has no labels)   "
                             f"disagreement with float: {self.disagreement:.2%}")
            elif self.labels_meaningful:
                lines.append(f"  float accuracy: {self.float_accuracy:.2%}   "
                             f"{self.options.label} accuracy: {self.accuracy:.2%}   "
                             f"disagreement: {self.disagreement:.2%}")
            elif is_regression(self.l1) and self.target_error is not None:
                lines.append(f"  mean absolute error vs the test targets: float "
                             f"{self.target_error['float_mae']:.4g}   {self.options.label} "
                             f"{self.target_error['mae']:.4g} (a regressor: no label)")
            elif is_regression(self.l1):
                lines.append("  accuracy: not reported (a regressor: the output is a "
                             "predicted value, not a label)")
            else:
                lines.append(f"  accuracy: not reported (the output is {self.classes:,} "
                             "values, not class scores)")
            if self.labels_meaningful and self.disagreement > DISAGREEMENT_WARNING:
                lines.append(self.disagreement_warning())
            if self.error is not None:
                lines.append(f"  {self.options.label} vs float output: SQNR "
                             f"{self.error['sqnr_db']:.1f} dB, max abs error "
                             f"{self.error['max_abs_error']:.4g}")
            if self.overflow is None:
                lines.append("  overflow on the test data: not counted (native evaluator; "
                             "--evaluator numpy counts wrapped and saturated values)")
            else:
                lines.append("  overflow on the test data: " + describe_overflow(self.overflow))
        if self.c_dir is not None and show_c_dir:
            lines.append(f"  C for {self.options.target}: {self.c_dir}")
        if self.memory:
            lines.append(self.memory_line())
        lines.append("  time: " + ", ".join(f"{k} {v:.2f} s" for k, v in self.seconds.items()))
        return "\n".join(lines)


    def disagreement_warning(self) -> str:
        """Why the program may disagree with float this much, the likeliest cause first:
        truncating shifts (measured with nearest when the compile could), then width."""
        o = self.options
        head = (f"  warning: {o.label} disagrees with float on {self.disagreement:.2%} of the "
                "test inputs")
        if self.nearest_disagreement is not None:
            if self.nearest_disagreement < self.disagreement:
                return (f"{head}; with --rounding nearest it disagrees on "
                        f"{self.nearest_disagreement:.2%} (measured): the truncating shifts "
                        "(--rounding trunc, the default) lose this much; use --rounding "
                        "nearest")
            head += (f" (--rounding nearest measured: {self.nearest_disagreement:.2%}, no "
                     "better)")
        causes = ["too few bits for this model (--bits 16, or --search to choose per "
                  "tensor)"]
        if takes_rounding(o) and o.rounding == "trunc" and self.nearest_disagreement is None:
            causes.insert(0, "truncating shifts (try --rounding nearest)")
        if self.overflow:
            causes.append("values that overflow their scales (above)")
        return f"{head}; likely causes: {'; '.join(causes)}"


# Label disagreement with float above which the summary warns and says why it may be.
DISAGREEMENT_WARNING = 0.10


# An output with more values than this is not read as class scores (accuracy is then not
# reported; the fixed-vs-float error is).
MAX_CLASSES = 1000


def output_error(reference: np.ndarray, approx: np.ndarray) -> dict[str, float] | None:
    """SQNR (dB) and max abs error of `approx` against `reference` (real outputs); None
    for label outputs."""
    ref, got = np.asarray(reference), np.asarray(approx)
    if ref.dtype.kind not in "f" or got.dtype.kind not in "f" or ref.shape != got.shape:
        return None
    ref, got = ref.astype(np.float64), got.astype(np.float64)
    noise = float(np.sum((ref - got) ** 2))
    signal = float(np.sum(ref ** 2))
    sqnr = math.inf if noise == 0 else (10 * math.log10(signal / noise) if signal else -math.inf)
    return {"sqnr_db": round(sqnr, 6) if math.isfinite(sqnr) else sqnr,
            "max_abs_error": round(float(np.max(np.abs(ref - got))) if ref.size else 0.0, 10)}


MEMORY_MAP = "memory_map.png"  # written beside the C (minun_mlir/memory_map.py)

# A tensor whose values overflow more often than this on the test data gets a warning.
OVERFLOW_WARNING = 0.01


def describe_overflow(overflow: dict[str, dict[str, int]]) -> str:
    if not overflow:
        return "none (every value fit its type)"
    total = sum(c["overflowed"] for c in overflow.values())
    worst = sorted(overflow.items(), key=lambda kv: (-kv[1]["overflowed"], kv[0]))[:3]
    shown = ", ".join(f"{name.split(' (')[0]} {c['overflowed']:,}/{c['values']:,}"
                      for name, c in worst)
    return f"{total:,} values wrapped or saturated in {len(overflow)} tensors ({shown})"


def warn_overflow(overflow: dict[str, dict[str, int]]) -> None:
    for name, c in overflow.items():
        if c["overflowed"] > OVERFLOW_WARNING * c["values"]:
            warn(f"{name}: {c['overflowed']:,} of {c['values']:,} values overflowed on the "
                 "test data (wrapped or saturated): its scale is too high for these inputs; "
                 "profile on data like them (--train) or use more bits")


def implied_representation(l1: ModuleOp) -> tuple[str, str] | None:
    """(representation, op name) when an op of `l1` compiles onto one representation only
    (its ONLY_REPRESENTATION: TFLite's integer LSTM, zero-skew): what a compile given no
    representation uses. None: any representation may be tried."""
    for op in l1.walk():
        only = getattr(op, "ONLY_REPRESENTATION", None)
        if only is not None:
            return only, op.name
    return None


def load_model(path: str | Path, weights: str | Path | None = None,
               dims: dict[str, int] | None = None, synthetic: int | None = None,
               input_range: tuple[float, float] | None = None) -> ModuleOp:
    """A SeeDot program (.sd, weights beside it or in `weights`, or drawn in the declared
    ranges with seed `synthetic`) or an ONNX file (symbolic input dimensions fixed by
    `dims`) or a TFLite file (.tflite) -> L1."""
    path = Path(path)
    if path.suffix == ".sd":
        from minun_mlir.frontends.seedot import load_program

        if input_range is not None:
            raise error(f"{path}: --input-range is for ONNX models (a SeeDot program "
                        "declares its input's range)")
        return load_program(path, weights, synthetic)
    if synthetic is not None:
        raise error(f"{path}: --synthetic-weights is for SeeDot programs (an ONNX model "
                    "carries its weights)")
    if path.suffix == ".onnx":
        from minun_mlir.frontends.onnx import import_model, read_model

        model = read_model(path)  # minun-opt's reader: a damaged file is a located error
        graph = model.graph
        ranges = None
        if input_range is not None:
            ranges = {i.name: input_range for i in graph.input}
        if len(graph.output) == 1:
            return import_model(model, dims=dims, input_ranges=ranges, path=path)
        label = _label_output(graph, path)
        module = import_model(model, dims=dims, input_ranges=ranges, outputs=[label],
                              path=path)
        from minun_mlir.dialects import minun

        if not isinstance(main_function(module).body.block.last_op.operands[0].owner,
                          minun.ArgMaxOp):
            raise error(f"the integer output '{label}' is not a label (an argmax of scores); "
                        "a compiled program returns a label or a score tensor", at=str(path))
        return module
    if path.suffix == ".tflite":
        from minun_mlir.frontends.tflite import import_model as import_tflite

        if dims:
            raise error(f"{path}: --dim is for ONNX models (a TFLite model's shapes are "
                        "fixed)")
        return import_tflite(path, input_range=input_range)
    raise error(f"{path}: unknown model format '{path.suffix}' (expected .sd, .onnx or "
                ".tflite)")


def _label_output(graph, path: Path) -> str:
    """The one output a program compiles to, for an ONNX model with several: its integer
    (or string) output, the label (a scikit-learn classifier's label beside its
    probabilities: the C writes the scores it is the argmax of, and returns the label, the
    class index for string labels). Only the nodes it needs are imported."""
    import onnx

    names = [o.name for o in graph.output]
    labels = [o.name for o in graph.output if o.type.HasField("tensor_type") and
              o.type.tensor_type.elem_type in (onnx.TensorProto.INT64, onnx.TensorProto.INT32,
                                               onnx.TensorProto.STRING)]
    if len(labels) != 1:
        raise error(f"the model has {len(names)} outputs ({', '.join(names)}); a "
                    "compiled program returns one: a label (the argmax of scores) or a "
                    "score tensor", at=str(path))
    others = ", ".join(f"'{n}'" for n in names if n != labels[0])
    warn(f"compiling the label output '{labels[0]}' (the C also writes the scores it is "
         f"the argmax of); not compiled: {others}", at=str(path))
    return labels[0]


def num_classes(module: ModuleOp) -> int:
    """How many labels the model tells apart: the argmax's scores, 2 for sgn or a single
    score, else the number of output elements (used to read 0- or 1-based labels)."""
    from minun_mlir.dialects import minun

    fn = main_function(module)
    ret = fn.body.block.last_op
    value = ret.operands[0]
    if isinstance(value.owner, minun.ArgMaxOp):
        value = value.owner.input
    elif isinstance(value.owner, minun.SgnOp):
        return 2
    count = int(np.prod(value.type.get_shape())) if hasattr(value.type, "get_shape") else 2
    return count if count > 1 else 2


def _input_ranges(module: ModuleOp) -> str:
    """'input range [lo, hi]', or for several inputs 'input ranges (a [lo, hi], ...)'."""
    ranges = [(op.sym_name.data, f"[{op.range_lo.value.data:g}, {op.range_hi.value.data:g}]")
              for op in model_inputs(module)]
    if len(ranges) == 1:
        return f"input range {ranges[0][1]}"
    return "input ranges (" + ", ".join(f"{n} {r}" for n, r in ranges) + ")"


def _input_shape(module: ModuleOp) -> tuple[int, ...] | dict[str, tuple[int, ...]]:
    """The input's shape, or {name: shape} in input order for a model with several
    (minun_mlir/data.py reads datasets for either)."""
    from minun_mlir.numerics.float_eval import input_shapes

    shapes = input_shapes(module)
    if not shapes:
        raise error("the end-to-end compile needs a model with an input")
    return next(iter(shapes.values())) if len(shapes) == 1 else shapes


def takes_rounding(options: Options) -> bool:
    """Whether the representation rounds by --rounding (where trunc can cost accuracy)."""
    from minun_mlir.numerics import formats

    return "rounding" in formats.get(options.representation).options


def printable_pipeline(options: Options, train: str | Path | None) -> str:
    """The pipeline text for the report; a path the text cannot carry (a carriage return)
    is no reason to fail a compile that never needed the text."""
    try:
        return options.pipeline(train)
    except MinunError as e:
        return f"(not printable: {e})"


def compile_model(model: str | Path, options: Options = Options(), *,
                  weights: str | Path | None = None, train: str | Path | None = None,
                  test: str | Path | None = None, out_dir: str | Path | None = None,
                  name: str | None = None, dims: dict[str, int] | None = None,
                  synthetic_weights: int | None = None,
                  input_range: tuple[float, float] | None = None,
                  regression: bool = False) -> Compiled:
    """Compile `model`; profile on `train` (required for data-driven scales), report
    accuracy on `test`, and write C for `options.target` into `out_dir` when given.
    `regression`: the model is a regressor though its operators do not say so (a network
    with one output; an ai.onnx.ml regressor is one anyway): no label, no accuracy."""
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    with stage("frontend"):
        l1 = load_model(model, weights, dims, synthetic_weights, input_range)
    if regression:
        mark_regression(l1)
    seconds["frontend"] = time.perf_counter() - t0
    shape = _input_shape(l1)
    threshold = decision_threshold(l1)  # the label of a one-value output: value > it
    test_set = (load_dataset(test, shape, num_classes(l1), threshold,
                             targets=is_regression(l1)) if test is not None else None)
    float_pred = None
    float_out = None
    if test_set is not None:
        t0 = time.perf_counter()
        with stage("float evaluator"):
            float_out = float_outputs(l1, test_set.features, options.evaluator)[0]
            float_pred = predictions(float_out, threshold)
        seconds["float"] = time.perf_counter() - t0
    if "scales" in formats.get(options.representation).options and train is None:
        if options.scales == "maxscale" and options.maxscale is None:
            raise error("--scales maxscale needs --maxscale P, or --train FILE to choose P")
        if options.scales == "data-driven":
            if not options.synthetic:
                raise error("data-driven scales need training data (--train FILE), or "
                            "--scales maxscale --maxscale P")
            warn(f"no training data: scales profiled on {options.synthetic} inputs drawn "
                 f"uniformly in the declared {_input_ranges(l1)}; give --train "
                 "FILE for scales that fit real data")
    passes = options.passes(train)
    to_l2 = [p.name for p in passes].index("quantize") + 1
    t0 = time.perf_counter()
    l2 = l1.clone()
    run_pipeline(l2, passes[:to_l2])
    seconds["quantize"] = time.perf_counter() - t0
    result = Compiled(name or Path(model).stem, options, l1, l2, test_set, seconds=seconds,
                      pipeline=printable_pipeline(options, train), classes=num_classes(l1))
    if test_set is not None:
        t0 = time.perf_counter()
        with stage("bit-exact evaluator"):
            if use_native(options.evaluator, l2, len(test_set)):
                stored = evaluate_outputs(l2, test_set.features, "native")
                result.overflow = None  # the native build does not count it
            else:
                with fx.counting_overflow() as counter:
                    stored = evaluate_l2(l2, test_set.features).outputs
                result.overflow = overflow_report(counter)
                warn_overflow(result.overflow)
        outputs = decode_outputs(l2, stored)
        result.stored_outputs = stored[0]
        pred = predictions(outputs[0], threshold)
        seconds["evaluate"] = time.perf_counter() - t0
        result.float_predictions, result.predictions = float_pred, pred
        if result.labels_meaningful and test_set.labelled:
            result.float_accuracy = accuracy(float_pred, test_set.labels)
            result.accuracy = accuracy(pred, test_set.labels)
        result.disagreement = disagreement(float_pred, pred)
        if (result.disagreement > DISAGREEMENT_WARNING and result.labels_meaningful
                and takes_rounding(options) and options.rounding == "trunc"
                and not options.assign):  # one more quantize and evaluation, here only
            with stage("rounding check"):
                nearest = dataclasses.replace(options, rounding="nearest")
                l2n = l1.clone()
                run_pipeline(l2n, nearest.passes(train)[:to_l2])
                stored_n = evaluate_outputs(l2n, test_set.features, options.evaluator)
                result.nearest_disagreement = disagreement(
                    float_pred, predictions(decode_outputs(l2n, stored_n)[0]))
        result.error = output_error(float_out, outputs[0])
        if test_set.targets is not None:
            result.target_error = {
                f"{k}mae": float(np.mean(np.abs(np.ravel(o) - test_set.targets)))
                for k, o in (("float_", np.reshape(float_out, len(test_set))),
                             ("", np.reshape(outputs[0], len(test_set))))}
    if out_dir is not None:
        from minun_mlir.codegen import check_tensor_sizes, select_kernels, write_c
        from minun_mlir.memory_map import memory_map, render_png

        check_tensor_sizes(l2, options.target)
        t0 = time.perf_counter()
        l4 = l2.clone()
        l3 = run_pipeline(l4, passes[to_l2:], keep=("memory-plan",))["memory-plan"]
        with stage("select-target-kernels"):
            l4 = select_kernels(l4, options.target, copy=False)  # its loops as kernels
        result.l4, result.l3 = l4, l3
        plan = memory_map(l3, options.planner)
        with stage("memory map"):
            png = render_png(plan, f"{result.name} [{options.label}]")
        with stage("C printer"):
            result.c_dir = Path(write_c(l4, options.target, out_dir,
                                        extra={MEMORY_MAP: png}))
        moves = main_function(l3).attributes.get("minun.defrag_moves")
        result.memory = {"planner": options.planner, "scratch_bytes": plan.scratch,
                         "input_in_scratch": options.input_in_scratch,
                         "output_in_scratch": options.output_in_scratch,
                         "lower_bound_bytes": plan.lower_bound,
                         "defrag_moves": moves.value.data if moves is not None else None,
                         "map": str(result.c_dir / MEMORY_MAP)}
        if plan.runtime:  # posit quires: static RAM beside the scratch (model.c's .bss)
            result.memory["runtime_bytes"] = plan.runtime
        seconds["codegen"] = time.perf_counter() - t0
    elif options.budget:  # no C to write, but the RAM budget is still checked
        to_l3 = [p.name for p in passes].index("memory-plan") + 1
        run_pipeline(l2.clone(), passes[to_l2:to_l3])
    return result
