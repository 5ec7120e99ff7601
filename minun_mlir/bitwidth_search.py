"""Automatic bitwidth assignment: Shiftry's demotion search (OOPSLA'20 §6.2).

A program is first given data-driven scales at the default bitwidth (16). Then:

- PartialDemote: every named tensor (parameter, input, named value) is demoted alone to
  half the bitwidth, at the 4 scales `s16 - 8 .. s16 - 5`; its loss is the best loss of
  those programs and its scale the one that gave it (ties: the lower scale).
- the tensors are ordered by that loss (ties: program order);
- CumulativeDemote: the programs demoting the first 1, 2, ... tensors of that order.

Two strategies pick one of the cumulative programs: `ram` (the fewest demotions whose RAM,
the scratch size the real memory planner gives, fits a budget) and `loss` (Shiftry's
Algorithm 14: the most demotions before the first program whose loss exceeds a limit).

The result is an `Assignment`: name -> (bits, scale), written as JSON, which the quantize
pass applies (`quantize{assign="file.json"}`, `minun-compile --assign FILE`); the final
program is produced once by the normal pipeline.

The search is generic in how a candidate is evaluated (`evaluate(candidates) -> results`),
so that a test can run it on an independent model of the paper's arithmetic; `Evaluator`
is the real one: quantize with the candidate's bits and scales, the bit-exact evaluator on
the search data, and memory-plan on the candidate's L3, in a process pool when asked.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import os
import pickle
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType

from minun_mlir.assignment import Assignment, load_assignment  # noqa: F401  (its result)
from minun_mlir.diagnostics import error
from minun_mlir.numerics import formats
from minun_mlir.numerics.repr import DEFAULT_REPRESENTATION, QuantizeConfig

METRICS = ("accuracy", "disagreement", "mae")
STRATEGIES = ("ram", "loss")
# fixed point: the roundings a search compares (its uniform programs, MinUn-style stage I)
ROUNDINGS = ("trunc", "nearest")
EXPLORE = 4  # scales tried for a demoted tensor (Shiftry's Algorithm 13: s .. s + 3)


# -- candidates and their results ------------------------------------------------------------

# A candidate: (default bits, ((name, bits, scale or None), ...) sorted by name).
Candidate = tuple[int, tuple[tuple[str, int, int | None], ...]]


def candidate(demoted: dict[str, tuple[int, int | None]], bits: int = 16) -> Candidate:
    return bits, tuple(sorted((n, b, s) for n, (b, s) in demoted.items()))


@dataclass(frozen=True)
class Result:
    """One evaluated program."""

    loss: float  # lower is better: accuracy points lost, disagreement points, or mae
    ram: int | None = None  # static RAM: the planner's scratch and the runtime's quires
    accuracy: float | None = None  # on the search data (classifiers)
    flash: int | None = None  # bytes of parameters
    types: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (bits, scale)
    error: str | None = None  # why the candidate could not be compiled (loss is then inf)
    sqnr_db: float | None = None  # real outputs: SQNR vs the float program's (dB)


Evaluate = Callable[[Sequence[Candidate]], list[Result]]


@dataclass
class Point:
    """An evaluated configuration, as the report lists it."""

    kind: str  # baseline, partial, cumulative
    label: str
    candidate: Candidate
    result: Result


@dataclass
class Search:
    """Everything a search found (the report is written from this)."""

    variables: list[str]
    base: Result  # the default bitwidth, data-driven scales
    partial: dict[str, tuple[int | None, Result]]  # var -> (best scale, result)
    order: list[str]
    cumulative: list[Result]  # cumulative[i]: the first i + 1 of `order` demoted
    chosen: int  # how many of `order` are demoted (0: none)
    assignment: Assignment
    strategy: str
    points: list[Point] = field(default_factory=list)
    baselines: dict[str, Result] = field(default_factory=dict)
    bits: int = 16
    ram_budget: int | None = None
    max_loss: float | None = None
    metric: str = "accuracy"
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    algorithm: str = "shiftry"  # or "haunter" (then `order` is the promotion order)
    instances: list[Instance] = field(default_factory=list)  # haunter's explorations
    scores: dict[str, float] = field(default_factory=dict)  # haunter's promotability
    chosen_override: Result | None = None
    soft_limit: float = 1.0
    representation: str = DEFAULT_REPRESENTATION
    # haunter on posits, stage I (MinUn's Algorithm 4): the uniform programs it compared,
    # "posit<n, es>" -> result, and the es chosen per bitwidth
    stage_one: dict[str, Result] = field(default_factory=dict)
    uniform: str | None = None  # the uniform program chosen over the search's own, if any

    @property
    def chosen_result(self) -> Result:
        if self.chosen_override is not None:
            return self.chosen_override
        return self.base if self.chosen == 0 else self.cumulative[self.chosen - 1]

    @property
    def changed(self) -> list[str]:
        """The tensors not at the default bitwidth, in program order."""
        a = self.assignment
        return [v for v in self.variables if a.tensors.get(v, (a.bits,))[0] != a.bits]

    @property
    def bits_count(self) -> dict[int, int]:
        """How many of the search's tensors the chosen assignment puts at each bitwidth
        (what every summary of the search says)."""
        a = self.assignment
        counts: dict[int, int] = {}
        for v in self.variables:
            b = a.tensors.get(v, (a.bits,))[0]
            counts[b] = counts.get(b, 0) + 1
        return dict(sorted(counts.items()))


def effective(tensors: dict[str, tuple[int, int | None]], result: Result,
              variables: Sequence[str], bits: int) -> dict[str, tuple[int, int | None]]:
    """The assignment's tensors as the chosen program has them: a tensor the search
    changed gets the (bits, scale) its L2 gives it (a computed value never goes above its
    operands' precision, so a promotion can leave it at the low width), and a tensor it
    did not change but that ended away from the default width is listed too, so that the
    assignment file says what the report's table shows."""
    out = {v: result.types.get(v, bs) for v, bs in tensors.items()}
    out |= {v: result.types[v] for v in variables
            if v not in out and v in result.types and result.types[v][0] != bits}
    return out


def prefer_uniform(search: Search, uniforms: dict[str, tuple[Assignment, Result]],
                   limit: float) -> None:
    """A search never returns a program that loses more than a uniform one (every
    bitwidth, rounding or es it tried) it could have built within `limit` bytes: the best
    uniform program that fits replaces the search's choice when it loses less, or when the
    choice does not fit (ties: the search's choice). The uniform programs are listed as
    baselines."""
    def fits(r: Result) -> bool:
        return r.ram is not None and r.ram <= limit

    for label, (_, r) in uniforms.items():
        search.baselines.setdefault(label, r)
    best = min(((r.loss, label) for label, (_, r) in uniforms.items() if fits(r)),
               default=None)
    chosen = search.chosen_result
    if best is not None and (best[0] < chosen.loss or not fits(chosen)):
        assignment, search.chosen_override = uniforms[best[1]]
        search.assignment, search.uniform = assignment, best[1]


def shiftry_search(variables: Sequence[str], scales: dict[str, int], evaluate: Evaluate,
                   strategy: str = "loss", ram_budget: int | None = None,
                   max_loss: float | None = None, bits: int = 16, explore: int = EXPLORE,
                   baselines: dict[str, Candidate] | None = None,
                   base: dict[str, tuple[int, int | None]] | None = None) -> Search:
    """Shiftry's PartialDemote + CumulativeDemote over `variables` (program order), whose
    scales at `bits` are `scales` (a variable without one is demoted at the quantizer's own
    data-driven scale). `evaluate` runs a batch of candidates (in any order, in parallel if
    it likes) and returns their results in order. `base` fixes tensors' (bits, scale) in
    every candidate (say, the input's scale from `explore_input_scale`)."""
    fixed = dict(base or {})
    if strategy not in STRATEGIES:
        raise error(f"search strategy must be one of {', '.join(STRATEGIES)}, got "
                    f"'{strategy}'")
    if strategy == "ram" and ram_budget is None:
        raise error("the ram strategy needs a RAM budget")
    if strategy == "loss" and max_loss is None:
        raise error("the loss strategy needs a loss limit (--max-drop)")
    half = bits // 2
    trials: list[tuple[str, int | None]] = []
    for v in variables:
        if v in scales:
            trials += [(v, scales[v] - half + k) for k in range(explore)]
        else:
            trials.append((v, None))
    extra = dict(baselines or {})
    batch = [candidate(fixed, bits)] + [candidate(fixed | {v: (half, s)}, bits)
                                        for v, s in trials]
    batch += list(extra.values())
    results = evaluate(batch)
    base, partial_results = results[0], results[1:1 + len(trials)]
    base_results = dict(zip(extra, results[1 + len(trials):], strict=True))
    points = [Point("baseline", f"fixed{bits}", batch[0], base)]
    points += [Point("baseline", k, extra[k], r) for k, r in base_results.items()]
    partial: dict[str, tuple[int | None, Result]] = {}
    for (v, s), r, c in zip(trials, partial_results, batch[1:], strict=False):
        points.append(Point("partial", f"{v}@{s}", c, r))
        if v not in partial or r.loss < partial[v][1].loss:  # ties: the first (lower) scale
            partial[v] = (s, r)
    position = {v: i for i, v in enumerate(variables)}
    order = sorted(variables, key=lambda v: (partial[v][1].loss, position[v]))
    prefixes = []
    demoted: dict[str, tuple[int, int | None]] = dict(fixed)
    for v in order:
        demoted[v] = (half, partial[v][0])
        prefixes.append(candidate(dict(demoted), bits))
    cumulative = evaluate(prefixes)
    for i, (c, r) in enumerate(zip(prefixes, cumulative, strict=True)):
        points.append(Point("cumulative", f"first {i + 1}", c, r))
    if strategy == "loss":
        chosen = 0
        for r in cumulative:  # Algorithm 14: stop at the first program losing too much
            if r.loss > max_loss:
                break
            chosen += 1
    else:
        results = [base, *cumulative]
        fits = [i for i, r in enumerate(results) if r.ram is not None and r.ram <= ram_budget]
        uniform_fits = any(r.ram is not None and r.ram <= ram_budget
                           for r in base_results.values())
        if fits:
            # Shiftry takes the fewest demotions that fit, expecting that to lose the
            # least; a longer prefix can lose less, so: the least loss among the prefixes
            # that fit, fewer demotions on a tie
            chosen = min(fits, key=lambda i: (results[i].loss, i))
        elif uniform_fits:
            chosen = 0  # no prefix fits (unnamed temporaries stay wide): a uniform one, below
        else:
            rams = [r.ram for r in cumulative if r.ram is not None]
            least = f"{min(rams):,} B" if rams else "no program that compiles"
            raise error(f"no demotion fits {ram_budget:,} B of RAM: the least any prefix of "
                        f"the {len(order)} demotions needs is {least}")
    chosen_c = base if chosen == 0 else cumulative[chosen - 1]
    tensors = {v: (half, chosen_c.types.get(v, (half, partial[v][0]))[1])
               for v in order[:chosen]}
    tensors = {v: bs for v, bs in fixed.items() if v not in tensors} | tensors
    tensors = effective(tensors, chosen_c, variables, bits)
    search = Search(list(variables), base, partial, order, cumulative, chosen,
                    Assignment(bits, tensors), strategy, points, base_results, bits,
                    ram_budget, max_loss)
    if strategy == "ram":  # a uniform baseline that fits and loses less wins
        prefix_fits = chosen_c.ram is not None and chosen_c.ram <= ram_budget
        better = [(r.loss, name) for name, r in base_results.items()
                  if r.ram is not None and r.ram <= ram_budget
                  and (r.loss < chosen_c.loss or not prefix_fits)]
        if better:
            _, name = min(better)
            search.chosen_override = base_results[name]
            search.assignment = Assignment(extra[name][0], {})
            search.uniform = name
        result = search.chosen_result
        if max_loss is not None and result.loss > max_loss:
            raise error(f"the program chosen to fit {ram_budget:,} B of RAM loses "
                        f"{result.loss:.4g}, more than the limit {max_loss:g}")
    return search


# -- the real evaluation ---------------------------------------------------------------------


def named_tensors(l1: ModuleOp, temporaries: bool = False
                  ) -> list[tuple[str, tuple[int, ...]]]:
    """The tensors a search can demote, in program order: parameters, inputs and values
    with a name (SeeDot's `let` names, ONNX tensor names); with `temporaries`, the unnamed
    ones too, as %t1, %t2, ... (convert.temporary_names)."""
    from minun_mlir.dialects import minun
    from minun_mlir.numerics.convert import name_of, temporary_names

    unnamed = temporary_names(l1) if temporaries else {}
    seen: dict[str, tuple[int, ...]] = {}
    for op in l1.walk():
        for v in op.results:
            if not isinstance(v.type, TensorType):
                continue
            if isinstance(op, minun.ConstantOp) or v.type.element_type.name != "f32":
                continue
            name = name_of(v) or unnamed.get(v)
            if name and name not in seen:
                seen[name] = tuple(v.type.get_shape())
    return list(seen.items())


def l2_types(l2: ModuleOp) -> dict[str, tuple[int, int | None]]:
    """name -> (bits, scale) of the named fixed-point and posit tensors of an L2 module
    (the first value of each name; a posit's scale is None)."""
    from minun_mlir.dialects import num

    out: dict[str, tuple[int, int]] = {}
    for op in l2.walk():
        for v in op.results:
            el = v.type.element_type if isinstance(v.type, TensorType) else v.type
            if not isinstance(el, (num.FixedType, num.PositType)):
                continue
            if isinstance(op, (num.ParamOp, num.InputOp)):
                name = op.sym_name.data
            else:
                name = v.name_hint
            if name and name not in out:
                out[name] = (el.width, el.frac if isinstance(el, num.FixedType) else None)
    return out


def param_bytes(l2: ModuleOp) -> int:
    from minun_mlir.dialects import num

    total = 0
    for op in l2.walk():
        if isinstance(op, num.ParamOp):
            ty = op.result.type
            el = ty.element_type
            width = num.storage_type(el).width.data if num.integer_stored(el) else 32
            total += int(np.prod(ty.get_shape())) * width // 8
    return total


@dataclass(frozen=True)
class RamPlan:
    """How a candidate's RAM is planned: as the compile that replays its assignment plans
    it (minun-compile --input-in-scratch, --output-in-scratch, --stream-rows), so the RAM a
    search fits to a budget is the RAM the compile reports."""

    input_in_scratch: bool = False  # the input a planned buffer (its bytes counted)
    output_in_scratch: bool = False  # the output a planned buffer (its bytes counted)
    stream_rows: bool = False  # lower-to-loops{stream-rows}: the streamed plan

    def memory_plan(self) -> dict[str, bool]:
        """memory-plan's options for this plan (only those set, as lower_l2 takes them)."""
        return {k: True for k in ("input_in_scratch", "output_in_scratch")
                if getattr(self, k)}


@dataclass
class _Problem:
    """What a worker needs to evaluate candidates (picklable)."""

    l1_text: str
    profile: list[tuple[int, object]]  # (value index in walk order, ValueStats)
    features: np.ndarray
    labels: np.ndarray | None
    reference: np.ndarray  # the float program's outputs on `features`
    config: QuantizeConfig
    metric: str
    planner: str
    evaluator: str
    key: str = ""  # identifies the problem in a worker that serves several calls
    representation: str = DEFAULT_REPRESENTATION  # or posit (per-tensor posit<n, es> formats)
    plan: RamPlan = RamPlan()  # how a candidate's RAM is planned


def _values(module: ModuleOp):
    for op in module.walk():
        yield from op.results


def program_key(module: ModuleOp) -> tuple:
    """A key equal for two modules exactly when they are the same program: every op's
    name, attributes and properties (in order), result types and name hints, operands as
    the numbers of the values they read (in definition order), successors, and its
    regions' blocks (argument types and name hints, ops) — everything the printed text is
    made of, without printing it (xDSL's printer costs more than quantizing a small
    program). Compared by equality as a dict key, so two programs never share one by a
    hash collision; attributes compare by value (floats by their bits, as printed)."""
    number: dict = {}
    blocks: dict = {}

    def ref(v) -> int:
        return number.setdefault(v, len(number))

    def op_key(op) -> tuple:
        operands = tuple(ref(v) for v in op.operands)
        regions = tuple(tuple(block_key(b) for b in r.blocks) for r in op.regions)
        results = tuple((r.type, r.name_hint, ref(r)) for r in op.results)
        return (op.name, operands, results, tuple(op.attributes.items()),
                tuple(op.properties.items()),
                tuple(blocks.setdefault(b, len(blocks)) for b in op.successors), regions)

    def block_key(block) -> tuple:
        blocks.setdefault(block, len(blocks))
        args = tuple((a.type, a.name_hint, ref(a)) for a in block.args)
        return args, tuple(op_key(op) for op in block.ops)

    return op_key(module)


@functools.lru_cache(maxsize=2)
def _parsed_l1(text: str) -> ModuleOp:
    """The L1 module of a problem's text, parsed once for the workers of one search
    (its uniform programs, stage I and the search itself each have an Evaluator of the same
    text). Shared read-only: the workers only quantize it (quantize_module returns a new
    module and leaves its input as it was) and number its values."""
    from minun_mlir.ir_text import parse_ir

    return parse_ir(text)


class _Worker:
    """What evaluating candidates of one problem needs, built once per process that
    evaluates them: the L1 module parsed from the problem's text (so every process starts
    from the same module) and its profile keyed by that module's values. The serial path
    holds one in its Evaluator; a pool or Ray worker process keeps the one of the problem
    it serves in `_Worker.in_this_process` (set by the pool's initializer)."""

    in_this_process: _Worker | None = None

    def __init__(self, problem: _Problem):
        self.problem = problem
        self.l1 = _parsed_l1(problem.l1_text)
        values = list(_values(self.l1))
        self.profile = {values[i]: stats for i, stats in problem.profile}
        # an L2 program (program_key) -> its result, and -> its RAM: candidates the
        # quantizer maps to the same program (a demotion or promotion a computed value
        # cannot take) are evaluated and memory-planned once
        self.by_program: dict[tuple, Result] = {}
        self.ram_by_program: dict[tuple, int] = {}

    def evaluate(self, c: Candidate) -> Result:
        """A candidate's result; one the compiler rejects (say, a demotion a loop cannot
        take) gets an infinite loss and the diagnostic, so the search goes on without it."""
        from minun_mlir.diagnostics import MinunError

        try:
            return self._evaluate_checked(c)
        except MinunError as e:
            return Result(math.inf, None, error=str(e).removeprefix("error: "))

    def _evaluate_checked(self, c: Candidate) -> Result:
        from minun_mlir.data import accuracy, disagreement, predictions
        from minun_mlir.modules import decision_threshold
        from minun_mlir.native import evaluate_outputs
        from minun_mlir.numerics.l2_eval import decode_outputs

        problem = self.problem
        l2 = self.quantized(c)
        program = program_key(l2)
        if program in self.by_program:
            return self.by_program[program]
        out = decode_outputs(l2, evaluate_outputs(l2, problem.features, problem.evaluator))[0]
        acc = sqnr = None
        if problem.metric == "mae":
            from minun_mlir.driver import output_error

            loss = float(np.mean(np.abs(np.asarray(out, np.float64)
                                        - np.asarray(problem.reference, np.float64))))
            sqnr = (output_error(problem.reference, out) or {}).get("sqnr_db")
        else:
            threshold = decision_threshold(l2)
            pred, ref = predictions(out, threshold), predictions(problem.reference, threshold)
            acc = accuracy(pred, problem.labels) if problem.labels is not None else None
            if problem.metric == "accuracy":
                loss = 100 * (accuracy(ref, problem.labels) - acc)
            else:
                loss = 100 * disagreement(ref, pred)
        result = Result(round(loss, 12), self.planned_ram(l2, program), acc,
                        param_bytes(l2), l2_types(l2), sqnr_db=sqnr)
        self.by_program[program] = result
        return result

    def planned_ram(self, l2: ModuleOp, program: tuple | None = None) -> int:
        """The program's static RAM: the memory planner's scratch and the runtime's quires
        (the Uno's .data + .bss of model.c), as minun-compile reports them. `program`: its
        program_key, when the caller has it."""
        program = program_key(l2) if program is None else program
        if program in self.ram_by_program:
            return self.ram_by_program[program]
        ram = self._plan(l2)
        self.ram_by_program[program] = ram
        return ram

    def _plan(self, l2: ModuleOp) -> int:
        from minun_mlir.memory_map import static_ram
        from minun_mlir.pipeline import lower_l2

        plan = self.problem.plan
        l3 = lower_l2(l2, stop="memory-plan", stream_rows=plan.stream_rows,
                      planner=self.problem.planner, **plan.memory_plan())
        return int(static_ram(l3, self.problem.planner))

    def quantized(self, c: Candidate) -> ModuleOp:
        from minun_mlir.passes.quantize import quantize_module
        from minun_mlir.pipeline import gc_paused

        bits, tensors = c
        config = dataclasses.replace(
            self.problem.config, bits=bits, bits_by_name={n: b for n, b, _ in tensors},
            scale_by_name={n: s for n, _, s in tensors if s is not None})
        with gc_paused():  # as run_pipeline runs the pass
            return quantize_module(self.l1, config, self.problem.representation,
                                   profile=self.profile)

    def ram_or_none(self, c: Candidate) -> int | None:
        """RAM only (quantize, lower-to-loops, memory-plan; no evaluation); None when the
        compiler rejects the candidate."""
        from minun_mlir.diagnostics import MinunError

        try:
            return self.planned_ram(self.quantized(c))
        except MinunError:
            return None

    def value_map(self, c: Candidate) -> dict[str, np.ndarray]:
        """MinUn's value map: the reals every named tensor holds on the search data (all loop
        iterations; a constant once). Natively (`native.value_maps`) when the evaluator option
        and the work say so, else with the numpy L2 evaluator (the reference it is tested
        against)."""
        from minun_mlir import native
        from minun_mlir.modules import main_function
        from minun_mlir.numerics import float_eval
        from minun_mlir.numerics.l2_eval import encode_input, l2_lookup

        problem = self.problem
        l2 = self.quantized(c)
        if native.use_native(problem.evaluator, l2, len(problem.features)):
            return native.value_maps(l2, problem.features)
        fn = main_function(l2)
        recorded = native.recorded_values(l2)
        names = {v: n for v, n in recorded.items() if not native.is_constant(v)}
        seen = {n: [a] for n, a in native.constant_values(recorded).items()}

        class Recorder(dict):
            """The evaluator's statistics map (float_eval._Evaluator asks `get(value)` for
            the object whose `add(array)` takes each array of `value`): every array is
            recorded instead."""

            def get(self, value, default=None):
                return _Record(value)

            setdefault = get

        class _Record:
            def __init__(self, value):
                self.value = value

            def add(self, array):
                if self.value in names:
                    el = self.value.type.element_type
                    real = formats.of_element(el).decode(np.asarray(array), el)
                    seen.setdefault(names[self.value], []).append(np.ravel(real))

        (inp,) = float_eval.model_inputs(fn)
        encoded = encode_input(fn)(inp, np.asarray(problem.features, np.float64))
        evaluator = float_eval._Evaluator({inp.sym_name.data: encoded}, Recorder(), {}, l2_lookup)
        evaluator.run_block(fn.body.block, {}, len(encoded))
        return {n: np.concatenate(v) for n, v in seen.items()}



def _init_pool_worker(problem: _Problem) -> None:
    _Worker.in_this_process = _Worker(problem)


def _evaluate_in_pool(cs: Sequence[Candidate]) -> list[Result]:
    return [_Worker.in_this_process.evaluate(c) for c in cs]  # type: ignore[union-attr]


def _evaluate_in_worker(problem: _Problem, c: Candidate) -> Result:
    """A Ray task: (re)initialise this worker process for `problem` when it served
    another one."""
    worker = _Worker.in_this_process
    if worker is None or worker.problem.key != problem.key or not problem.key:
        worker = _Worker.in_this_process = _Worker(problem)
    return worker.evaluate(c)


class Evaluator:
    """Evaluates candidates for one model: serially (jobs=1) or in a pool of `jobs`
    processes (0: one per core). Both paths start from the same text of the L1 module, so
    they give the same results. Results are cached by candidate."""

    def __init__(self, l1: ModuleOp, profile, features: np.ndarray, labels, reference,
                 config: QuantizeConfig, metric: str = "accuracy", planner: str = "greedy",
                 evaluator: str = "auto", jobs: int = 1, progress: bool | None = None,
                 ray: str | None = None, representation: str = "fixed",
                 plan: RamPlan = RamPlan(), memo: dict | None = None):
        if metric not in METRICS:
            raise error(f"search metric must be one of {', '.join(METRICS)}, got '{metric}'")
        index = {v: i for i, v in enumerate(_values(l1))}
        import uuid

        problem = _Problem(str(l1), [(index[v], s) for v, s in profile.items() if v in index],
                           features, labels, reference, config, metric, planner, evaluator,
                           uuid.uuid4().hex, representation, plan)
        self.ray = ray
        self.problem = problem
        # a caller's memo shared by several searches of one problem (say, two soft limits):
        # results keyed by a digest of everything that determines them and the candidate
        self.memo = memo
        self.digest = None if memo is None else hashlib.sha256(pickle.dumps(
            dataclasses.replace(problem, key=""))).hexdigest()
        self.jobs = jobs if jobs > 0 else (os.cpu_count() or 1)
        self.progress = sys.stderr.isatty() if progress is None else progress
        self.cache: dict[Candidate, Result] = {}
        self.ram_cache: dict[Candidate, int] = {}
        self.best: Result | None = None
        self._pool = None
        self._progress_bar = None
        self.expected = 0
        self.total = 0

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc) -> None:
        if self._progress_bar is not None:
            self._progress_bar.close()
            self._progress_bar = None
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def expect(self, n: int) -> None:
        """Announce `n` more programs for the progress bar's total."""
        self.expected += n

    def _bar(self, n: int):
        """The progress bar, kept across calls (closed on exit); None when quiet."""
        if not self.progress:
            return None
        if self._progress_bar is None:
            try:
                from tqdm import tqdm
            except ImportError:
                self.progress = False
                return None
            self._progress_bar = tqdm(total=max(self.expected, n), desc="precision search",
                                      unit="program", file=sys.stderr, leave=False)
        bar = self._progress_bar
        if bar.n + n > bar.total:
            bar.total = bar.n + n
            bar.refresh()
        return bar

    def _note(self, bar, r: Result) -> None:
        if r.ram is None:
            if bar is not None:
                bar.update(1)
            return
        if self.best is None or (r.loss, r.ram or 0) < (self.best.loss, self.best.ram or 0):
            self.best = r
        if bar is not None:
            b = self.best
            acc = f"acc {b.accuracy:.2%}" if b.accuracy is not None else f"loss {b.loss:.4g}"
            bar.set_postfix_str(f"best {acc}, RAM {b.ram:,} B")
            bar.update(1)

    def _ray_map(self, todo: list[Candidate], bar) -> list[Result]:
        """The candidates as Ray tasks: `ray` is Ray's address (`auto`: the running
        cluster) or `local` (start a Ray instance on this machine)."""
        try:
            import ray
        except ImportError:
            raise error("--ray needs the ray package (pip install 'minun-mlir[ray]')") from None
        if not ray.is_initialized():
            ray.init(address=None if self.ray == "local" else self.ray,
                     include_dashboard=False, log_to_driver=False,
                     logging_level="ERROR", configure_logging=False)
        task = ray.remote(_evaluate_in_worker)
        shared = ray.put(self.problem)
        refs = [task.remote(shared, c) for c in todo]
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            self._note(bar, ray.get(done[0]))
        return ray.get(refs)

    @functools.cached_property
    def worker(self) -> _Worker:
        """This process's worker for the problem (the serial path, RAM and value maps)."""
        return _Worker(self.problem)

    def ram(self, candidates: Sequence[Candidate]) -> list[int]:
        """RAM only (quantize, lower-to-loops, memory-plan; no evaluation), here."""
        out = []
        for c in candidates:
            if c not in self.ram_cache and self.memo is not None:
                if (self.digest, c) in self.memo:
                    self.ram_cache[c] = self.memo[self.digest, c].ram
                elif (self.digest, "ram", c) in self.memo:
                    self.ram_cache[c] = self.memo[self.digest, "ram", c]
            if c not in self.ram_cache:
                self.ram_cache[c] = (self.cache[c].ram if c in self.cache
                                     else self.worker.ram_or_none(c))
                if self.memo is not None:
                    self.memo[self.digest, "ram", c] = self.ram_cache[c]
            out.append(self.ram_cache[c])
        return out

    def values(self, c: Candidate) -> dict[str, np.ndarray]:
        return self.worker.value_map(c)

    def __call__(self, candidates: Sequence[Candidate]) -> list[Result]:
        if self.memo is not None:
            for c in candidates:
                if c not in self.cache and (self.digest, c) in self.memo:
                    self.cache[c] = self.memo[self.digest, c]
        todo = list(dict.fromkeys(c for c in candidates if c not in self.cache))
        self.total += len(todo)
        bar = self._bar(len(todo))
        try:
            if self.ray and todo:
                for c, r in zip(todo, self._ray_map(todo, bar), strict=True):
                    self.cache[c] = r
            elif self.jobs == 1 or len(todo) <= 1:
                for c in todo:
                    self.cache[c] = self.worker.evaluate(c)
                    self._note(bar, self.cache[c])
            else:
                from concurrent.futures import ProcessPoolExecutor, as_completed
                from multiprocessing import get_context

                if self._pool is None:
                    self._pool = ProcessPoolExecutor(
                        max_workers=self.jobs, mp_context=get_context("spawn"),
                        initializer=_init_pool_worker, initargs=(self.problem,))
                # neighbours in a batch (one tensor's scales) often quantize to the same
                # program, which a worker evaluates once: send them to one worker
                size = max(1, min(EXPLORE, len(todo) // (2 * self.jobs)))
                chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
                futures = {self._pool.submit(_evaluate_in_pool, cs): cs for cs in chunks}
                for f in as_completed(futures):
                    for c, r in zip(futures[f], f.result(), strict=True):
                        self.cache[c] = r
                        self._note(bar, r)
        finally:
            if bar is not None:
                bar.refresh()
        if self.memo is not None:
            for c in todo:
                self.memo[self.digest, c] = self.cache[c]
        return [self.cache[c] for c in candidates]


def _prepare(l1: ModuleOp, train, evaluator: str, metric: str | None, default: str = "accuracy"):
    """The L1 with composite ops lowered, its profile and float outputs on `train`, and the
    metric (`default` for classifiers, mae for other outputs)."""
    from minun_mlir import native
    from minun_mlir.data import predictions
    from minun_mlir.modules import is_regression
    from minun_mlir.pipeline import pipeline_text, run_pipeline

    prepared = l1.clone()
    run_pipeline(prepared, pipeline_text(stop="lower-composite-ops"))
    profile = native.profile(prepared, train.features, evaluator)
    reference = native.float_outputs(prepared, train.features, evaluator)[0]
    if metric is None:
        out = np.asarray(reference)
        metric = default if (out.ndim <= 1 or np.prod(out.shape[1:]) <= 1000) and \
            not is_regression(l1) else "mae"
        if metric != "mae" and (len(predictions(reference)) != len(train.labels)
                                or not getattr(train, "labelled", True)):
            metric = "mae"  # no labels to count (an .npz without 'y'): the float outputs
    return prepared, profile, reference, metric


def uniform_programs(prepared, profile, reference, train, config: QuantizeConfig,
                     bitwidths: Sequence[int], roundings: Sequence[str], metric: str,
                     planner: str, evaluator: str, plan: RamPlan, memo: dict | None = None
                     ) -> dict[tuple[int, str], tuple[Assignment, Result]]:
    """Every uniform fixed-point program at `bitwidths` x `roundings`, evaluated on
    `train`: (bits, rounding) -> (its assignment, its result)."""
    out = {}
    for r in dict.fromkeys(roundings):
        with Evaluator(prepared, profile, train.features, train.labels, reference,
                       dataclasses.replace(config, rounding=r), metric, planner, evaluator,
                       jobs=1, progress=False, plan=plan, memo=memo) as run:
            results = run([candidate({}, b) for b in bitwidths])
        for b, res in zip(bitwidths, results, strict=True):
            out[b, r] = (Assignment(b, {}, rounding=r), res)
    return out


def choose_rounding(uniforms: dict[tuple[int, str], tuple[Assignment, Result]],
                    bits: int) -> str:
    """The rounding a fixed-point search runs with: the one whose uniform program at
    `bits` (the search's low width) loses least; ties: the first tried (trunc). A
    truncating shift loses half a unit on average at every rescale, which on a recurrent
    program at 8 bits can cost most of the accuracy."""
    tried = [(res.loss, i, r) for i, ((b, r), (_, res)) in enumerate(uniforms.items())
             if b == bits]
    return min(tried)[2]


def uniform_labels(uniforms: dict[tuple[int, str], tuple[Assignment, Result]],
                   representation: str, rounding: str | None
                   ) -> dict[str, tuple[Assignment, Result]]:
    """The uniform programs under report labels: fixed8 for the search's own rounding,
    fixed8-nearest for another."""
    return {f"{representation}{b}" + ("" if r == rounding else f"-{r}"): v
            for (b, r), v in uniforms.items()}


def explore_input_scale(run: Evaluate, name: str, bits: int, default: int
                        ) -> tuple[int, dict[int, Result]]:
    """Shiftry's stage II (Algorithm 12): the input's scale chosen by loss among 0 .. bits
    with everything else data-driven; ties go to the scale nearest the data-driven one
    (`default`), then the lower."""
    scales = list(range(0, bits + 1))
    results = dict(zip(scales, run([candidate({name: (bits, s)}, bits) for s in scales]),
                       strict=True))
    best = min(scales, key=lambda s: (results[s].loss, abs(s - default), s))
    return best, results


def search_model(l1: ModuleOp, train, *, bits: int = 16, strategy: str | None = None,
                 ram_budget: int | None = None, max_drop: float | None = None,
                 metric: str | None = None, planner: str = "greedy", evaluator: str = "auto",
                 jobs: int = 1, progress: bool | None = None,
                 config: QuantizeConfig | None = None, ray: str | None = None,
                 explore_input: bool = False, input_in_scratch: bool = False,
                 roundings: Sequence[str] = ROUNDINGS, output_in_scratch: bool = False,
                 stream_rows: bool = False, memo: dict | None = None) -> Search:
    """Shiftry's search on an L1 module (composite ops allowed: the declared pipeline's
    first stage runs here) with the dataset `train` (search data): profile, data-driven
    scales at `bits` (with `explore_input`, the input's scale then chosen by Shiftry's
    stage II), then `shiftry_search` with the real evaluation. `strategy` defaults to `ram`
    when a budget is given, else `loss`. With `input_in_scratch` the input is a planned
    buffer, so its bytes count in each candidate's RAM (minun-compile --input-in-scratch);
    likewise `output_in_scratch`, and with `stream_rows` each candidate's RAM is its
    streamed plan (RamPlan).

    The search demotes under the rounding of `roundings` whose uniform program at
    bits / 2 loses least (`choose_rounding`); with a RAM budget, the uniform programs at
    both widths and every rounding are candidates too (`prefer_uniform`). `memo`: as
    haunter_model's, shared by searches of one model and data."""

    plan = RamPlan(input_in_scratch, output_in_scratch, stream_rows)
    strategy = strategy or ("ram" if ram_budget else "loss")
    widths = formats.get("fixed").bitwidths
    if bits // 2 not in widths or bits % 2:
        raise error(f"shiftry's search demotes tensors from {bits} to {bits // 2} bits, and "
                    f"fixed point has {formats.get('fixed').bitwidths_text} bits: search at "
                    f"{', '.join(str(b) for b in widths if b // 2 in widths)} bits (e.g. "
                    "--bits 16, which demotes to 8)")
    prepared, profile, reference, metric = _prepare(l1, train, evaluator, metric)
    config = dataclasses.replace(config or QuantizeConfig(), bits=bits,
                                 scales="data-driven")
    uniforms = uniform_programs(prepared, profile, reference, train, config,
                                (bits, bits // 2), roundings, metric, planner, evaluator,
                                plan, memo)
    config = dataclasses.replace(config, rounding=choose_rounding(uniforms, bits // 2))
    named = named_tensors(prepared, temporaries=True)
    with Evaluator(prepared, profile, train.features, train.labels, reference, config,
                   metric, planner, evaluator, jobs, progress, ray,
                   plan=plan, memo=memo) as run:
        run.expect(1 + (EXPLORE + 1) * len(named) + 1)
        for (b, r), (_, res) in uniforms.items():  # evaluated already
            if r == config.rounding:
                run.cache[candidate({}, b)] = res
        base_types = run([candidate({}, bits)])[0].types
        # named tensors the quantizer kept (with their scales), and the temporaries (no
        # name in L2: demoted at the quantizer's own data-driven scale)
        variables = [n for n, _ in named if n in base_types or n.startswith("%t")]
        scales = {n: base_types[n][1] for n in variables if n in base_types}
        baselines = {f"fixed{bits // 2}": candidate({}, bits // 2)} if bits > 8 else {}
        base: dict[str, tuple[int, int | None]] = {}
        if explore_input:
            from minun_mlir.numerics.float_eval import model_inputs

            for op in model_inputs(prepared):
                x = op.sym_name.data
                if x in scales:
                    run.expect(bits + 1)
                    scales[x], _ = explore_input_scale(run, x, bits, scales[x])
                    base[x] = (bits, scales[x])
        search = shiftry_search(variables, scales, run, strategy, ram_budget, max_drop,
                                bits, baselines=baselines, base=base)
    search.assignment = dataclasses.replace(search.assignment, rounding=config.rounding)
    if strategy == "ram":
        prefer_uniform(search, uniform_labels(uniforms, "fixed", config.rounding),
                       ram_budget)
        if max_drop is not None and search.chosen_result.loss > max_drop:
            raise error(f"the program chosen to fit {ram_budget:,} B of RAM loses "
                        f"{search.chosen_result.loss:.4g}, more than the limit "
                        f"{max_drop:g}")
    search.metric = metric
    search.shapes = dict(named)
    return search


# -- MinUn's Haunter (promotion) -------------------------------------------------------------


def promotability(high: dict[str, np.ndarray], low: dict[str, np.ndarray],
                  sizes: dict[str, int]) -> dict[str, float]:
    """MinUn's heat map (Algorithm 6): per tensor, the 95th percentile of the element-wise
    |high - low| deviations (the element at index floor(0.95 (n - 1)) of the sorted
    deviations, which is what the paper's Table 1 shows for 2-element tensors) divided by
    the tensor's number of elements."""
    scores = {}
    for name, h in high.items():
        dev = np.abs(np.asarray(h, np.float64).ravel()
                     - np.asarray(low[name], np.float64).ravel())
        p95 = float(np.percentile(dev, 95, method="lower")) if dev.size else 0.0
        scores[name] = p95 / max(sizes.get(name, 1), 1)
    return scores


def promotion_order(scores: dict[str, float], variables: Sequence[str]) -> list[str]:
    """Decreasing promotability; ties in program order."""
    position = {v: i for i, v in enumerate(variables)}
    return sorted(scores, key=lambda v: (-scores[v], position.get(v, len(position))))


@dataclass
class Instance:
    """One exploration of Algorithm 8: where it started and every promotion it tried."""

    start: tuple[str, ...]
    steps: list[tuple[tuple[str, ...], int, bool]]  # (promoted, RAM, kept)
    final: tuple[str, ...]
    ram: int


def promote_within_limit(promoted: list[str], order: Sequence[str],
                         ram: Callable[[tuple[str, ...]], int], limit: float,
                         steps: list) -> list[str]:
    """Algorithm 7 on `promoted` (changed in place): promote each tensor of `order` in
    turn, reverting a promotion whose RAM exceeds `limit` (memory limit x soft limit
    factor). Returns the overshooting tensors (RAM at or above the limit)."""
    overshooting = []
    for v in order:
        trial = promoted if v in promoted else promoted + [v]
        usage = ram(tuple(trial))
        kept = usage <= limit
        steps.append((tuple(trial), usage, kept))
        if kept and v not in promoted:
            promoted.append(v)
        elif not kept and v in promoted:
            promoted.remove(v)
        if usage >= limit:
            overshooting.append(v)
    return overshooting


def haunter_explore(order: Sequence[str], ram: Callable[[tuple[str, ...]], int],
                    memory_limit: int, soft_limit: float = 1.0,
                    first_only: bool = False) -> list[Instance]:
    """Algorithm 8's explorations, each starting from all tensors at the low bitwidth:
    (1) promoting in `order`; (2) for each overshooting tensor, promoting it first (if it
    fits alone), then the order; (3) promoting all overshooting tensors first, then the
    order. Repeated final configurations are kept (the caller evaluates each once).
    `first_only`: exploration (1) alone (one RAM plan per tensor, where (2) plans one per
    tensor for each overshooting tensor that fits alone)."""
    limit = memory_limit * soft_limit
    instances = []
    steps: list = []
    promoted: list[str] = []
    overshooting = promote_within_limit(promoted, order, ram, limit, steps)
    instances.append(Instance((), steps, tuple(promoted), ram(tuple(promoted))))
    if first_only:
        return instances
    for v in overshooting:
        steps = []
        usage = ram((v,))
        steps.append(((v,), usage, usage <= limit))
        if usage > limit:
            continue
        promoted = [v]
        promote_within_limit(promoted, order, ram, limit, steps)
        instances.append(Instance((v,), steps, tuple(promoted), ram(tuple(promoted))))
    if overshooting:
        steps = []
        promoted = list(overshooting)
        steps.append((tuple(promoted), ram(tuple(promoted)), True))
        promote_within_limit(promoted, order, ram, limit, steps)
        instances.append(Instance(tuple(overshooting), steps, tuple(promoted),
                                  ram(tuple(promoted))))
    return instances


def haunter_model(l1: ModuleOp, train, memory_limit: int, *, soft_limit: float = 1.0,
                  low: int = 8, high: int = 16, metric: str | None = None,
                  planner: str = "greedy", evaluator: str = "auto", jobs: int = 1,
                  progress: bool | None = None, ray: str | None = None,
                  representation: str = DEFAULT_REPRESENTATION, es: int | None = None,
                  input_in_scratch: bool = False, quire: bool | None = None,
                  roundings: Sequence[str] = ROUNDINGS, output_in_scratch: bool = False,
                  stream_rows: bool = False, first_only: bool = False,
                  memo: dict | None = None) -> Search:
    """MinUn's Haunter, on fixed point (data-driven scales) or posits (`representation`
    posit, posit<n, es> per tensor): the value maps of the programs
    with every named tensor at `high` and at `low` bits (everything else at `low`);
    promotability = 95th percentile deviation / size; the explorations of Algorithm 8
    with the program's static RAM (the real planner's scratch and the runtime's quires;
    limit `memory_limit` x `soft_limit`); the final
    configuration of each exploration (and all-low) evaluated on `train`, in parallel;
    the one with the least loss (default metric: disagreement with float, as MinUn)
    wins; among equal losses, the one using more of the RAM (more tensors promoted).
    On posits the quire is part of the choice: `quire` None searches with one and
    without one (quantize{quire=false}: every product and partial sum rounded, no quire
    in RAM, the assignment says "quire": false) and keeps the program that loses less
    (with a quire on a tie); True or False searches only that kind.

    Stage I on posits (MinUn's Algorithm 4) when `es` is None: es for the 8-bit posits
    is 0 if the all-8-bit program with posit<8, 0> loses less than with posit<8, 2>, else
    2; es for the 16-bit ones is 1 if the all-16-bit program with posit<16, 1> loses less
    than with posit<16, 2>, else 2 (other widths: 2). An `es` given is used at every
    width.

    On fixed point the search runs with the rounding of `roundings` whose all-`low`
    program loses least (`choose_rounding`). Whatever the representation, the uniform
    programs it tried (each width, rounding or es) are candidates too
    (`prefer_uniform`), and with a soft limit above 1 the explorations at limit 1 are
    made as well, so a wider soft limit never chooses worse than the default.

    Each candidate's RAM is planned as the compile replaying it plans it (RamPlan: the
    input and output in the scratch, the streamed plan of --stream-rows). `first_only`:
    Algorithm 8's first exploration alone (haunter_explore), for plans too dear to make
    once per tensor for each overshooting tensor. `memo`: a dict shared by searches of
    one model and data (say, at two soft limits), so a program one evaluated is not
    evaluated again (content-keyed: the same results as without it)."""
    plan = RamPlan(input_in_scratch, output_in_scratch, stream_rows)
    prepared, profile, reference, metric = _prepare(l1, train, evaluator, metric,
                                                    "disagreement")
    uniforms: dict[str, tuple[Assignment, Result]] = {}
    rounding = None
    rep = formats.get(representation)
    if "rounding" in rep.options:  # the uniform programs compare roundings too
        tried = uniform_programs(prepared, profile, reference, train,
                                 QuantizeConfig(bits=low), (low, high), roundings, metric,
                                 planner, evaluator, plan, memo)
        rounding = choose_rounding(tried, low)
        uniforms = uniform_labels(tried, representation, rounding)
    args = (prepared, profile, reference, train, memory_limit, soft_limit, low, high, metric,
            planner, evaluator, jobs, progress, ray, representation, es, plan,
            rounding, uniforms, memo)
    if quire is not None and "quire" not in rep.options:
        raise error(f"the quire option is for repr={' or '.join(formats.taking('quire'))}")
    kinds = [True, False] if quire is None and "quire" in rep.options else [quire]
    if es is not None and "es" not in rep.options:
        raise error(f"es is for repr={' or '.join(formats.taking('es'))}")
    found = [_haunter(*args, quire=q is not False, first_only=first_only) for q in kinds]
    searches = [f for f in found if isinstance(f, Search)]
    if not searches:
        needs = " (with a quire, then without)" if len(found) > 1 else ""
        raise error(f"no configuration fits {memory_limit:,} B of RAM: with every tensor "
                    f"at {low} bits the program needs "
                    f"{', then '.join(f'{n:,} B' for n in found)}{needs}")
    return min(searches, key=lambda f: f.chosen_result.loss)  # stable: the quire first


def _haunter(prepared, profile, reference, train, memory_limit, soft_limit, low, high,
             metric, planner, evaluator, jobs, progress, ray, representation, es,
             plan, rounding, uniforms, memo, quire: bool, first_only: bool = False
             ) -> Search | int | float:
    """One Haunter search (haunter_model): the Search, or the all-low program's RAM when
    no configuration fits. `rounding`: fixed point's (None for posits); `uniforms`: the
    uniform programs evaluated already (label -> assignment, result)."""
    stage_one: dict[str, Result] = {}
    if "es" in formats.get(representation).options:  # stage I chooses es per bitwidth
        es_by_bits = ({low: es, high: es} if es is not None else posit_stage_one(
            prepared, profile, reference, train, low, high, metric, planner, evaluator,
            plan, quire, stage_one, memo))
    else:
        es_by_bits = {}
    config = QuantizeConfig(bits=low, es=es_by_bits.get(low, 2), es_by_bits=es_by_bits,
                            quire=quire, rounding=rounding or "trunc")
    named = dict(named_tensors(prepared))
    with Evaluator(prepared, profile, train.features, train.labels, reference, config,
                   metric, planner, evaluator, jobs, progress, ray, representation,
                   plan, memo) as run:
        all_low = candidate({}, low)
        for bits, es_ in es_by_bits.items():  # stage I ran the uniform programs already
            if f"posit<{bits}, {es_}>" in stage_one:
                run.cache[candidate({}, bits)] = stage_one[f"posit<{bits}, {es_}>"]
        for bits in (low, high):
            if f"{representation}{bits}" in uniforms:
                run.cache[candidate({}, bits)] = uniforms[f"{representation}{bits}"][1]
        low_types = run([all_low])[0].types
        variables = [n for n in named if n in low_types]

        def promoted(names) -> Candidate:
            return candidate({v: (high, None) for v in names}, low)

        values_high = run.values(promoted(variables))
        values_low = run.values(all_low)
        sizes = {v: int(np.prod(named[v])) for v in variables}
        scores = promotability({v: values_high[v] for v in variables if v in values_high},
                               values_low, sizes)
        for v in variables:
            scores.setdefault(v, 0.0)
        order = promotion_order(scores, variables)

        def ram(p) -> float:  # a configuration the compiler rejects never fits
            r = run.ram([promoted(p)])[0]
            return math.inf if r is None else r

        instances = haunter_explore(order, ram, memory_limit, soft_limit, first_only)
        if soft_limit > 1:  # a wider limit's candidates include the default's
            instances = haunter_explore(order, ram, memory_limit,
                                        first_only=first_only) + instances
        finals = list(dict.fromkeys([frozenset()] + [frozenset(i.final) for i in instances]))
        fixed_high = candidate({}, high)
        cands = [promoted([v for v in variables if v in f]) for f in finals]
        rams = run.ram(cands)
        if not any(r is not None and r <= memory_limit * soft_limit for r in rams):
            return rams[0] if rams[0] is not None else math.inf  # nothing to evaluate
        results = run(cands + [fixed_high])
    final_results, high_result = results[:-1], results[-1]
    limit = memory_limit * soft_limit
    fitting = [i for i, r in enumerate(final_results) if r.ram is not None and r.ram <= limit]
    if not fitting:
        return final_results[0].ram or math.inf
    # ties: the more precise program (more RAM, still within the limit)
    best = min(fitting, key=lambda i: (final_results[i].loss, -final_results[i].ram, i))
    chosen = final_results[best]
    tensors = effective({v: (high, chosen.types[v][1]) for v in variables
                         if v in finals[best]}, chosen, variables, low)
    points = [Point("baseline", f"{representation}{low}", all_low, final_results[0]),
              Point("baseline", f"{representation}{high}", fixed_high, high_result)]
    points += [Point("exploration", "+".join(v for v in variables if v in f) or "none", c, r)
               for f, c, r in zip(finals, cands, final_results, strict=True)]
    def uniform(bits: int, es: dict[int, int]) -> Assignment:
        return Assignment(bits, {}, representation, quire, es, rounding)

    uniforms = {f"{representation}{low}": (uniform(low, es_by_bits), final_results[0]),
                f"{representation}{high}": (uniform(high, es_by_bits), high_result),
                **uniforms}
    for label, r in stage_one.items():  # "posit<8, 0>"
        bits, es_ = (int(x) for x in label.removeprefix("posit<").rstrip(">").split(","))
        uniforms[label] = (uniform(bits, {bits: es_}), r)
    search = Search(variables, final_results[0], {}, order, [], best,
                    Assignment(low, tensors, representation, quire, es_by_bits, rounding),
                    "ram", points, {f"{representation}{high}": high_result}, low,
                    memory_limit, None, metric, dict(named), "haunter", instances, scores,
                    chosen, soft_limit, representation, stage_one)
    prefer_uniform(search, {k: v for k, v in uniforms.items()
                            if k != f"{representation}{low}"}, limit)
    return search


# MinUn's Algorithm 4: for a bitwidth, the es it tries against es = 2
STAGE_ONE_ES = {8: 0, 16: 1}


def posit_stage_one(prepared, profile, reference, train, low: int, high: int, metric: str,
                    planner: str, evaluator: str, plan: RamPlan, quire: bool,
                    results: dict[str, Result], memo: dict | None = None) -> dict[int, int]:
    """Haunter's stage I on posits (MinUn's Algorithm 4): per bitwidth of {low, high}
    that the paper tunes (8: es 0 or 2; 16: es 1 or 2), the uniform program at each es,
    evaluated on `train`; the other es wins only if it loses strictly less. Fills
    `results` ("posit<n, es>" -> result) and returns {bits: es}."""
    chosen = {}
    for bits in dict.fromkeys((low, high)):
        chosen[bits] = 2
        if bits not in STAGE_ONE_ES:
            continue
        loss = {}
        for es in (STAGE_ONE_ES[bits], 2):
            config = QuantizeConfig(bits=bits, es=es, quire=quire)
            with Evaluator(prepared, profile, train.features, train.labels, reference, config,
                           metric, planner, evaluator, jobs=1, progress=False,
                           representation="posit", plan=plan, memo=memo) as run:
                r = run([candidate({}, bits)])[0]
            results[f"posit<{bits}, {es}>"] = r
            loss[es] = r.loss
        if loss[STAGE_ONE_ES[bits]] < loss[2]:
            chosen[bits] = STAGE_ONE_ES[bits]
    return chosen
