"""Float reference evaluator for the L1 dialect, vectorised over a batch of inputs.

Every SSA value is a numpy array whose first axis is the batch: size B for values that
depend on the input, size 1 for values that do not (parameters, constants, loop indices),
so numpy broadcasting shares them across the batch for free. Integers (loop indices,
node numbers, argmax) are int64 arrays of shape (B,) or (1,).

Data-dependent control flow stays right per example: a conditional splits the batch and
runs each branch only on the examples that take it; splices and indexes gather per
example when their start differs across the batch.

Each block is resolved once per evaluation (each op's kernel or handler, its operands);
in a loop's body the ops whose operands do not change from iteration to iteration
(parameters, constants, rescales of parameters ...) run on the first iteration only, their
results staying for the later ones: kernels are pure functions of their op and operands.

With `profile=True` it also records, for every SSA value (inside loops: over all
iterations), its min, max and a histogram of binary exponents: the profile that
data-driven scale assignment (Shiftry §6.1) consumes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from minun_mlir.diagnostics import MinunError, error
from minun_mlir.dialects import minun
from minun_mlir.ir_text import location_of
from minun_mlir.modules import main_function, walk_ops


class EvaluationError(MinunError):
    """A run-time failure of the evaluated program (index out of range, missing input)."""


def _error(op: Operation, message: str) -> EvaluationError:
    where = location_of(op)
    return EvaluationError(f"{where + ': ' if where else ''}error: {op.name}: {message}")


# --------------------------------------------------------------------------------------
# Profile
# --------------------------------------------------------------------------------------

EXP_LO, EXP_HI = -64, 64  # histogram of floor(log2|x|) clipped to this range


@dataclass
class ValueStats:
    """What the profiler keeps per SSA value (merged over batches and loop iterations)."""

    min: float = math.inf
    max: float = -math.inf
    count: int = 0
    zeros: int = 0
    exp_hist: np.ndarray = field(
        default_factory=lambda: np.zeros(EXP_HI - EXP_LO + 1, dtype=np.int64))

    @property
    def absmax(self) -> float:
        return max(abs(self.min), abs(self.max)) if self.count else 0.0

    def add(self, values: np.ndarray) -> None:
        if values.size == 0:
            return
        # (the ufuncs' reductions themselves: what values.min() and max() call, without
        # their Python wrappers, which cost more than the work on small arrays)
        self.min = min(self.min, float(np.minimum.reduce(values, axis=None)))
        self.max = max(self.max, float(np.maximum.reduce(values, axis=None)))
        self.count += values.size
        if values.dtype.kind == "f":
            # every value's exponent at once, without first copying out the nonzero ones:
            # frexp(0) gives exponent 0, the bin of [0.5, 1), which the zeros then leave
            zeros = values.size - int(np.count_nonzero(values))
            self.zeros += zeros
            if zeros < values.size:
                _, exps = np.frexp(values)  # |x| in [2^(e-1), 2^e)
                # clip(e - 1, EXP_LO, EXP_HI) - EXP_LO, in int64
                idx = np.subtract(exps, 1 + EXP_LO, dtype=np.int64)
                np.maximum(idx, 0, out=idx)
                np.minimum(idx, EXP_HI - EXP_LO, out=idx)
                hist = np.bincount(idx.ravel(), minlength=self.exp_hist.size)
                hist[-1 - EXP_LO] -= zeros
                self.exp_hist += hist

    def fraction_at_or_above(self, exponent: int) -> float:
        """Fraction of values with |x| >= 2^exponent (how much a scale would clip)."""
        if not self.count:
            return 0.0
        k = min(max(exponent, EXP_LO), EXP_HI + 1) - EXP_LO
        return float(self.exp_hist[k:].sum()) / self.count

    def abs_percentile(self, q: float) -> float:
        """Upper bound of the q-th percentile (0..100) of |x|, at power-of-two resolution."""
        if not self.count:
            return 0.0
        target = q / 100.0 * self.count - self.zeros
        if target <= 0:
            return 0.0
        cum = np.cumsum(self.exp_hist)
        k = int(np.searchsorted(cum, target))
        return float(2.0 ** (k + EXP_LO + 1))


Profile = dict[SSAValue, ValueStats]


@dataclass
class EvalResult:
    outputs: list[np.ndarray]
    profile: Profile | None = None
    # the values asked for with `record=`: every batch and loop iteration, stacked on axis 0
    recorded: dict[SSAValue, np.ndarray] = field(default_factory=dict)


# --------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------


def model_inputs(module: ModuleOp | func.FuncOp) -> list[Operation]:
    """The input ops (L1 `minun.input` or L2 `num.input`) of the main function."""
    return [op for op in walk_ops(main_function(module))
            if op.name in ("minun.input", "num.input")]


def input_shapes(module: ModuleOp | func.FuncOp) -> dict[str, tuple[int, ...]]:
    """{name: shape} of the model's inputs, in their order (the C's input order)."""
    return {op.sym_name.data: tuple(op.results[0].type.get_shape())
            for op in model_inputs(module)}


Lookup = Callable[[Operation], Callable[..., np.ndarray] | None]


def l1_lookup(op: Operation) -> Callable[..., np.ndarray] | None:
    return for_op(_IMPLS.get(type(op)), op)


def for_op(kernel: Callable[..., np.ndarray] | None, op: Operation
           ) -> Callable[..., np.ndarray] | None:
    """`kernel` as the evaluator runs it for `op`: a `prepared` kernel made for `op`
    (its attributes read once, not on every run), any other as it is."""
    prepare = getattr(kernel, "prepare", None)
    return prepare(op) if prepare is not None else kernel


def evaluate(
    module: ModuleOp | func.FuncOp,
    inputs: Mapping[str, np.ndarray] | np.ndarray,
    *,
    profile: bool = False,
    batch_size: int = 8192,
    externals: Mapping[str, Callable[..., np.ndarray]] | None = None,
    lookup: Lookup | None = None,
    encode: Callable[[Operation, np.ndarray], np.ndarray] | None = None,
    record: Collection[SSAValue] = (),
) -> EvalResult:
    """Run the model's `main` on a batch. `inputs` maps input names to arrays of shape
    (B, *declared_shape); a bare array is taken for the single input. The batch is
    processed in chunks of `batch_size` to bound memory; outputs are concatenated and
    profiles merged. `lookup` maps ops to kernels (default: L1 float semantics) and
    `encode` turns real inputs into the input op's representation (L2); the values in
    `record` come back in `recorded` (e.g. a layer's output, for bias correction).
    """
    fn = main_function(module)
    declared = {op.sym_name.data: op for op in model_inputs(fn)}
    if isinstance(inputs, np.ndarray):
        if len(declared) != 1:
            raise error(f"the model has inputs {sorted(declared)}; pass a dict")
        inputs = {next(iter(declared)): inputs}
    arrays: dict[str, np.ndarray] = {}
    for name, op in declared.items():
        if name not in inputs:
            raise error(f"no value given for model input '{name}'")
        arr = np.asarray(inputs[name], dtype=np.float64)
        shape = tuple(op.results[0].type.get_shape())
        if arr.shape[1:] != shape:
            if arr.ndim >= 1 and arr[0].size == math.prod(shape):
                arr = arr.reshape(arr.shape[0], *shape)
            else:
                raise error(f"input '{name}' has shape {arr.shape}; expected (batch, "
                            f"{', '.join(map(str, shape))})")
        arrays[name] = encode(op, arr) if encode is not None else arr
    total = next(iter(arrays.values())).shape[0] if arrays else 1
    stats: Profile | None = {} if profile else None
    chunks: list[list[np.ndarray]] = []
    recorded: dict[SSAValue, list[np.ndarray]] = {}
    for start in range(0, max(total, 1), batch_size):
        part = {k: v[start:start + batch_size] for k, v in arrays.items()}
        b = next(iter(part.values())).shape[0] if part else 1
        ev = _Evaluator(part, stats, dict(externals or {}), lookup or l1_lookup, record)
        outs = ev.run_block(fn.body.block, {}, b)
        chunks.append([np.broadcast_to(o, (b, *o.shape[1:])) for o in outs])
        for value, seen in ev.recorded.items():
            recorded.setdefault(value, []).extend(seen)
    outputs = [np.concatenate([c[i] for c in chunks]) for i in range(len(chunks[0]))]
    return EvalResult(outputs, stats, {v: np.concatenate(a) for v, a in recorded.items()})


def _batch(*arrays: np.ndarray) -> int:
    return max(a.shape[0] for a in arrays)


def _align(a: np.ndarray, rank: int) -> np.ndarray:
    """Insert axes after the batch axis so trailing (non-batch) dims align for numpy."""
    missing = rank - (a.ndim - 1)
    return a.reshape(a.shape[0], *([1] * missing), *a.shape[1:]) if missing > 0 else a


def _binary(fn):
    def run(op, a, b):
        rank = max(a.ndim, b.ndim) - 1
        return fn(_align(a, rank), _align(b, rank))

    return run


def _scalar_broadcast(s: np.ndarray, t: np.ndarray) -> np.ndarray:
    return s.reshape(s.shape[0], *([1] * (t.ndim - 1)))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


_ERF = np.vectorize(math.erf, otypes=[np.float64])


def _erf(x: np.ndarray) -> np.ndarray:
    return _ERF(x)


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def _windows(x: np.ndarray, kernel, strides, pads, dilations, fill: float) -> np.ndarray:
    """(M, H, W, C) -> (M, Ho, Wo, C, kh, kw) windows after padding with `fill`."""
    t, b, left, r = pads
    xp = np.pad(x, ((0, 0), (t, b), (left, r), (0, 0)), constant_values=fill)
    eff = [d * (k - 1) + 1 for k, d in zip(kernel, dilations)]
    w = sliding_window_view(xp, eff, axis=(1, 2))
    return w[:, ::strides[0], ::strides[1], :, ::dilations[0], ::dilations[1]]


def max_pool(op, x: np.ndarray, fill) -> np.ndarray:
    """A maxpool op on stored values (B, N, H, W, C), padding read as `fill` (the format's
    lowest value, which never wins): every L2 evaluator's max pooling, whose order on its
    integers is the order of the reals they stand for."""
    b, n = x.shape[:2]
    win = _windows(x.reshape(b * n, *x.shape[2:]), minun.ints(op.kernel),
                   minun.ints(op.strides), minun.ints(op.pads), (1, 1), fill)
    y = win.max(axis=(-2, -1))
    return y.reshape(b, n, *y.shape[1:])


def _conv2d(x: np.ndarray, f: np.ndarray, strides, pads, dilations, groups: int) -> np.ndarray:
    """x (M,H,W,C), f (G,kh,kw,C/G,Cout) -> (M,Ho,Wo,G*Cout)."""
    win = _windows(x, f.shape[1:3], strides, pads, dilations, 0.0)
    cg = f.shape[3]
    outs = [np.einsum("mhwcij,ijco->mhwo", win[:, :, :, g * cg:(g + 1) * cg], f[g],
                      optimize=True) for g in range(groups)]
    return np.concatenate(outs, axis=-1)


def _captured(op: Operation) -> tuple[SSAValue, ...]:
    """The values defined outside `op` that the ops of its regions read (in the order
    first read): all of the environment that a branch needs."""
    defined: set[SSAValue] = set()
    read: dict[SSAValue, None] = {}
    for inner in walk_ops(op):
        for region in inner.regions:
            for block in region.blocks:
                defined.update(block.args)
        if inner is not op:
            defined.update(inner.results)
            read.update(dict.fromkeys(inner.operands))
    return tuple(v for v in read if v not in defined)


def per_call(kernel: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """Mark `kernel` as doing more than computing its result (it counts overflow), so the
    evaluator runs it every time its op runs, even where its result cannot change."""
    kernel.per_call = True  # type: ignore[attr-defined]
    return kernel


def prepared(prepare: Callable[[Operation], Callable[..., np.ndarray]]
             ) -> Callable[..., np.ndarray]:
    """A kernel made for each op: `prepare(op)` reads the op's attributes once and returns
    its kernel `(op, *arrays)`, which the L2 evaluator runs on every iteration (l2_lookup
    prepares once per op and evaluation). Called as is, it prepares on every call.
    `prepare` runs outside its op's overflow attribution (fixed.counting_overflow), so
    whatever narrowing the op counts belongs in the kernel it returns."""
    def kernel(op: Operation, *args: np.ndarray) -> np.ndarray:
        return prepare(op)(op, *args)

    kernel.prepare = prepare  # type: ignore[attr-defined]
    return kernel


class _Step(NamedTuple):
    """One op of a block, resolved once per evaluation (not on every loop iteration):
    an op without regions runs `kernel(op, *operand arrays)` for its one result; any other
    op runs `special(env, rows)`, which returns its results. `invariant`: in a loop's body,
    the op computes the same results on every iteration (a pure op whose operands come
    from outside the body or from invariant ops), so only the first computes them."""

    op: Operation
    kernel: Callable[..., np.ndarray] | None
    special: Callable[[dict[SSAValue, np.ndarray], int], list[np.ndarray]] | None
    operands: tuple[SSAValue, ...]
    results: tuple[SSAValue, ...]
    invariant: bool = False


class _Program(NamedTuple):
    """A block's steps up to its terminator, and the values the terminator returns."""

    steps: tuple[_Step, ...]
    returned: tuple[SSAValue, ...]


# leaf ops without a kernel whose results depend on their operands only
_PURE_LEAVES = (minun.InputOp, minun.SpliceOp, minun.SpliceAssignOp, minun.IndexOp)


class _Evaluator:
    def __init__(self, inputs: dict[str, np.ndarray], stats: Profile | None,
                 externals: dict[str, Callable[..., np.ndarray]], lookup: Lookup,
                 record: Collection[SSAValue] = ()):
        self.inputs = inputs
        self.stats = stats
        self.externals = externals
        self.lookup = lookup
        self.record = set(record)
        self.recorded: dict[SSAValue, list[np.ndarray]] = {}
        # per block, its resolved steps: found once an evaluation, when the block first
        # runs, not again on every loop iteration
        self.programs: dict[Block, _Program] = {}

    # A block runs with an environment (SSAValue -> array). `rows` is the batch size
    # of this (sub)batch, used to size per-example selections. `again`: a later iteration
    # of a loop's body in the environment of the earlier ones, which hold the results of
    # its invariant ops.
    def run_block(self, block: Block, env: dict[SSAValue, np.ndarray], rows: int,
                  again: bool = False) -> list[np.ndarray]:
        program = self.programs.get(block)
        if program is None:
            program = self.programs[block] = self._compile(block)
        observe = self.stats is not None or bool(self.record)
        for op, kernel, special, operands, results, invariant in program.steps:
            if invariant and again:
                if observe:  # profiled and recorded on every iteration, as computed
                    for value in results:
                        self._observe(value, env[value], rows)
                continue
            if kernel is not None:  # one result
                env[results[0]] = array = kernel(op, *[env[v] for v in operands])
                if observe:
                    self._observe(results[0], array, rows)
                continue
            for value, array in zip(results, special(env, rows), strict=True):
                env[value] = array
                if observe:
                    self._observe(value, array, rows)
        return [env[v] for v in program.returned]

    def _observe(self, value: SSAValue, array: np.ndarray, rows: int) -> None:
        if self.stats is not None:
            stats = self.stats.get(value)
            if stats is None:
                stats = self.stats[value] = ValueStats()
            stats.add(array)
        if self.record and value in self.record:
            self.recorded.setdefault(value, []).append(
                np.broadcast_to(array, (rows, *np.shape(array)[1:])))

    def run_op(self, op: Operation, env: dict[SSAValue, np.ndarray], rows: int
               ) -> list[np.ndarray]:
        """One op's results (what run_block does for each op of a block)."""
        step = self._step(op)
        if step.kernel is not None:
            return [step.kernel(op, *[env[v] for v in step.operands])]
        return step.special(env, rows)

    def _compile(self, block: Block) -> _Program:
        """The block's steps; in a loop's body, which of them are invariant."""
        in_loop = isinstance(block.parent_op(), (minun.LoopOp, minun.SumOp))
        varying = set(block.args)  # the values that change from iteration to iteration
        steps = []
        op = block.first_op
        while op is not None:
            if isinstance(op, (func.ReturnOp, minun.YieldOp)):
                return _Program(tuple(steps), tuple(op.operands))
            step = self._step(op)
            if in_loop and self._pure(step) and varying.isdisjoint(step.operands):
                step = step._replace(invariant=True)
            else:
                varying.update(step.results)
            steps.append(step)
            op = op.next_op
        return _Program(tuple(steps), ())

    @staticmethod
    def _pure(step: _Step) -> bool:
        """Whether the step's results depend on its operands only (no effect, no region)."""
        if step.kernel is not None:
            return not getattr(step.kernel, "per_call", False)
        return isinstance(step.op, _PURE_LEAVES) or step.op.name == "num.input"

    def _step(self, op: Operation) -> _Step:
        operands, results = tuple(op.operands), tuple(op.results)
        special = self._special(op)
        kernel = None
        if special is None:
            kernel = self.lookup(op)
            if kernel is None:
                special = self._leaf(op, operands)
            elif len(results) != 1:  # run_block runs kernels for one result only
                special, kernel = self._leaf_kernel(op, kernel, operands), None
        return _Step(op, kernel, special, operands, results)

    @staticmethod
    def _leaf_kernel(op: Operation, kernel, operands: tuple[SSAValue, ...]):
        return lambda env, rows: [kernel(op, *[env[v] for v in operands])]

    def _special(self, op: Operation):
        """The handler of an op with regions (they run blocks), or None."""
        if isinstance(op, minun.SumOp):
            return partial(self._sum, op)
        if isinstance(op, minun.LoopOp):
            return partial(self._loop, op)
        if isinstance(op, minun.IfNonNegOp):
            return partial(self._if, op, _captured(op))
        return None

    def _leaf(self, op: Operation, operands: tuple[SSAValue, ...]):
        """The handler of an op without a kernel: inputs, per-example slicing, calls."""
        if op.name in ("minun.input", "num.input"):
            name = op.sym_name.data
            return lambda env, rows: [self.inputs[name]]
        if isinstance(op, minun.SpliceOp):
            sizes = minun.ints(op.sizes)
            return lambda env, rows: [self._gather(op, env[operands[0]],
                                                   [env[v] for v in operands[1:]], sizes)]
        if isinstance(op, minun.SpliceAssignOp):
            return lambda env, rows: [self._scatter(op, env[operands[0]], env[operands[1]],
                                                    [env[v] for v in operands[2:]])]
        if isinstance(op, minun.IndexOp):
            return lambda env, rows: [self._index(op, env[operands[0]], env[operands[1]])]
        if isinstance(op, minun.CallOp):
            name = op.callee.string_value()
            return lambda env, rows: [self._call(op, name, [env[v] for v in operands])]

        def unsupported(env, rows):
            raise _error(op, "the float evaluator does not implement this op")

        return unsupported

    # -- regions ---------------------------------------------------------------------
    # A loop's body runs in one environment for all its iterations: every value the body
    # defines is written by an iteration before that iteration reads it (SSA), and its
    # invariant ops' results, written by the first iteration, stay for the later ones.

    def _sum(self, op: minun.SumOp, env, rows) -> list[np.ndarray]:
        block = op.body.block
        index = block.args[0]
        inner = dict(env)
        total = None
        lower = op.lower.value.data
        for i in range(lower, op.upper.value.data):
            inner[index] = np.array([i], dtype=np.int64)
            (value,) = self.run_block(block, inner, rows, again=i > lower)
            total = value if total is None else total + value
        return [total]

    def _loop(self, op: minun.LoopOp, env, rows) -> list[np.ndarray]:
        carried = [env[v] for v in op.inits]
        block = op.body.block
        index, *carried_args = block.args
        inner = dict(env)
        lower = op.lower.value.data
        for i in range(lower, op.upper.value.data):
            inner[index] = np.array([i], dtype=np.int64)
            inner.update(zip(carried_args, carried))
            carried = self.run_block(block, inner, rows, again=i > lower)
        return carried

    def _if(self, op: minun.IfNonNegOp, captured: tuple[SSAValue, ...], env, rows
            ) -> list[np.ndarray]:
        """`captured`: the values defined outside `op` that its branches read."""
        cond = env[op.cond]
        mask = cond.reshape(cond.shape[0]) >= 0
        if mask.all() or not mask.any():
            region = op.then_region if mask.all() else op.else_region
            return [self.run_block(region.block, {v: env[v] for v in captured}, rows)[0]]
        # Split the batch: each branch runs only on the examples that take it.
        rows_b = max(rows, mask.size)
        mask = np.broadcast_to(mask, (rows_b,))
        out = None
        for region, sel in ((op.then_region, mask), (op.else_region, ~mask)):
            idx = np.nonzero(sel)[0]
            sub = {}
            for v in captured:
                a = env[v]
                sub[v] = a[idx] if a.shape[0] == rows_b and rows_b > 1 else a
            (value,) = self.run_block(region.block, sub, idx.size)
            value = np.broadcast_to(value, (idx.size, *value.shape[1:]))
            if out is None:
                out = np.empty((rows_b, *value.shape[1:]), dtype=value.dtype)
            out[idx] = value
        return [out]

    # -- leaves without a kernel ----------------------------------------------------------

    def _index(self, op: minun.IndexOp, x: np.ndarray, i: np.ndarray) -> np.ndarray:
        shape = x.shape[1:]
        zero = np.zeros(1, dtype=np.int64)
        starts = [i] + [zero] * (len(shape) - 1)
        got = self._gather(op, x, starts, (1, *shape[1:]))
        return got.reshape(got.shape[0], *shape[1:])

    def _call(self, op: minun.CallOp, name: str, args: list[np.ndarray]) -> np.ndarray:
        if name not in self.externals:
            raise _error(op, f"no implementation given for external function '{name}' "
                             f"(pass externals={{'{name}': fn}})")
        return np.asarray(self.externals[name](*args))

    # -- per-example slicing -----------------------------------------------------------

    def _slices(self, op, x: np.ndarray, starts: list[np.ndarray], sizes, shape):
        """Index arrays that select [start:+size] per dim, per example (broadcast)."""
        if all(s.shape[0] == 1 and s.dtype.kind == "i" for s in starts):
            # the same starts for every example (loop indices): plain slices, checked on
            # Python ints (the checks below give the same verdicts on these)
            firsts = [int(s[0]) for s in starts]
            for d, (i, n) in enumerate(zip(firsts, sizes)):
                if i < 0 or i + n > shape[d]:
                    raise _error(op, f"slice [{i}:+{n}] of dimension {d} is outside "
                                     f"{minun.shape_str(shape)}")
            return (slice(None),) + tuple(slice(i, i + n) for i, n in zip(firsts, sizes))
        for d, (s, n) in enumerate(zip(starts, sizes)):
            if (s < 0).any() or (s + n > shape[d]).any():
                bad = int(s[(s < 0) | (s + n > shape[d])][0])
                raise _error(op, f"slice [{bad}:+{n}] of dimension {d} is outside "
                                 f"{minun.shape_str(shape)}")
        if all(s.shape[0] == 1 for s in starts):
            return (slice(None),) + tuple(slice(int(s[0]), int(s[0]) + n)
                                          for s, n in zip(starts, sizes))
        b = max(x.shape[0], *(s.shape[0] for s in starts))
        rank = len(sizes)
        bidx = (np.arange(b) if x.shape[0] == b else np.zeros(b, dtype=np.int64))
        grids = [bidx.reshape(b, *([1] * rank))]
        for d, (s, n) in enumerate(zip(starts, sizes)):
            g = np.broadcast_to(s, (b,))[:, None] + np.arange(n)[None, :]
            shape_d = [b] + [1] * rank
            shape_d[d + 1] = n
            grids.append(g.reshape(shape_d))
        return tuple(grids)

    def _gather(self, op, x: np.ndarray, starts, sizes) -> np.ndarray:
        index = self._slices(op, x, list(starts), sizes, x.shape[1:])
        return x[index]

    def _scatter(self, op, value: np.ndarray, dest: np.ndarray, starts) -> np.ndarray:
        sizes = value.shape[1:]
        b = max(value.shape[0], dest.shape[0], *(s.shape[0] for s in starts))
        out = np.array(np.broadcast_to(dest, (b, *dest.shape[1:])), dtype=np.result_type(
            dest, value))
        index = self._slices(op, out, list(starts), sizes, dest.shape[1:])
        out[index] = value if isinstance(index[0], slice) else np.broadcast_to(
            value, (b, *sizes))
        return out


# --------------------------------------------------------------------------------------
# Per-op semantics (ops without regions or per-example indexing)
# --------------------------------------------------------------------------------------


def _attr_float(attr) -> float:
    return float(attr.value.data)


def _axis(op) -> int:
    return int(op.axis.value.data) + 1


def _nhwc_op(fn):
    """Run a 4-D NHWC kernel on (B, N, H, W, C) by merging the batch axes."""

    def run(op, x, *rest):
        b, n = x.shape[:2]
        y = fn(op, x.reshape(b * n, *x.shape[2:]), *rest)
        return y.reshape(b, n, *y.shape[1:])

    return run


def _shared(op, value: np.ndarray, what: str) -> np.ndarray:
    if value.shape[0] != 1:
        raise _error(op, f"{what} must not depend on the input")
    return value[0]


@_nhwc_op
def _conv_op(op, x, f):
    return _conv2d(x, _shared(op, f, "the filter"), minun.ints(op.strides),
                   minun.ints(op.pads), minun.ints(op.dilations), int(op.groups.value.data))


@_nhwc_op
def _mbconv_op(op, x, f1, w1, b1, f2, w2, b2, f3, w3, b3):
    sh = [_shared(op, v, "mbconv weights") for v in (f1, w1, b1, f2, w2, b2, f3, w3, b3)]
    f1, w1, b1, f2, w2, b2, f3, w3, b3 = sh
    t = np.clip(_conv2d(x, f1, (1, 1), (0, 0, 0, 0), (1, 1), 1) * w1 + b1, 0.0, 6.0)
    t = np.clip(_conv2d(t, f2, minun.ints(op.strides), minun.ints(op.pads), (1, 1),
                        f2.shape[0]) * w2 + b2, 0.0, 6.0)
    return _conv2d(t, f3, (1, 1), (0, 0, 0, 0), (1, 1), 1) * w3 + b3


@_nhwc_op
def _maxpool_op(op, x):
    win = _windows(x, minun.ints(op.kernel), minun.ints(op.strides), minun.ints(op.pads),
                   (1, 1), -np.inf)
    return win.max(axis=(-2, -1))


@_nhwc_op
def _avgpool_op(op, x):
    kernel, strides, pads = minun.ints(op.kernel), minun.ints(op.strides), minun.ints(op.pads)
    total = _windows(x, kernel, strides, pads, (1, 1), 0.0).sum(axis=(-2, -1))
    if op.count_include_pad is not None:
        return total / (kernel[0] * kernel[1])
    ones = np.ones((1, *x.shape[1:3], 1))
    count = _windows(ones, kernel, strides, pads, (1, 1), 0.0).sum(axis=(-2, -1))
    return total / count


def _normalise_l2(op, x):
    norm = np.sqrt((x * x).sum(axis=-1, keepdims=True))
    return np.where(norm > 0, x / np.where(norm > 0, norm, 1.0), x)


def _prepare_reshape(op: minun.ReshapeOp) -> Callable[..., np.ndarray]:
    """The reshape kernel with the op's order and shape read once (it runs in loops)."""
    axes = (0, *(o + 1 for o in minun.ints(op.order)))
    shape = tuple(op.result.type.get_shape())
    return lambda op, x: x.transpose(axes).reshape(x.shape[0], *shape)


def _prepare_transpose(op: minun.TransposeOp) -> Callable[..., np.ndarray]:
    axes = (0, *(p + 1 for p in minun.ints(op.perm)))
    return lambda op, x: x.transpose(axes)


def _concat(op, *xs):
    b = _batch(*xs)
    return np.concatenate([np.broadcast_to(x, (b, *x.shape[1:])) for x in xs], axis=_axis(op))


def _batchnorm(op, x, scale, bias, mean, var):
    def chan(v):  # (b, C) -> (b, 1, ..., 1, C): the channel is the last axis
        return v.reshape(v.shape[0], *([1] * (x.ndim - 2)), v.shape[-1])

    eps = _attr_float(op.epsilon)
    return (x - chan(mean)) / np.sqrt(chan(var) + eps) * chan(scale) + chan(bias)


def _tflite_lstm(op, x):
    """TFLite's integer LSTM at L1: the reals of its integers, its input quantized at its
    scale as TFLite's QUANTIZE does (formats/zero_skew/tflite_lstm.py)."""
    from minun_mlir.formats.zero_skew import arith as af
    from minun_mlir.formats.zero_skew import tflite_lstm as tl

    p = op.lstm_params()
    s_x, s_h = (float(v) for v in minun.dense_to_numpy(op.scales))
    q = af.tflite_quantize(x, s_x, p.zp_x, 8)
    return (tl.lstm(p, q, op.time_major is not None) - p.zp_h) * s_h


def _tree_ensemble(op, x):
    """Walk every tree for each example (vectorized over the batch), sum the leaf rows in
    tree order, then add the base. Integer thresholds (L2 fixed point) compare and sum as
    int64; float ones in the input's float type (f64 at L1, f32 for the f32 L2)."""
    a = op.arrays()
    nodes = a["nodes"].reshape(-1, 3).astype(np.int64)
    integer = a["thresholds"].dtype.kind == "i"
    dt = np.int64 if integer else x.dtype
    flat = x.reshape(x.shape[0], -1).astype(dt)
    thr, leaves, base = (a[k].astype(dt) for k in ("thresholds", "leaves", "base"))
    rows = np.arange(flat.shape[0])
    acc = np.zeros((flat.shape[0], leaves.shape[1]), dt)
    leq = op.mode.data == "leq"
    for root in a["roots"].reshape(-1):
        n = np.full(flat.shape[0], int(root), np.int64)
        while (active := n >= 0).any():
            idx = np.where(active, n, 0)
            v = flat[rows, nodes[idx, 0]]
            go = v <= thr[idx] if leq else v < thr[idx]
            n = np.where(active, np.where(go, nodes[idx, 1], nodes[idx, 2]), n)
        acc = acc + leaves[-n - 1]
    return (acc + base).reshape(flat.shape[0], *op.result.type.get_shape())


def _argmax(op, x):
    return x.reshape(x.shape[0], -1).argmax(axis=1).astype(np.int64)


def _sgn(op, x):
    return (x.reshape(x.shape[0]) > 0).astype(np.int64)


def _arith_constant(op: arith.ConstantOp):
    if not isinstance(op.result.type, IntegerType):
        raise _error(op, "only integer arith constants are supported at L1")
    return np.array([op.value.value.data], dtype=np.int64)


_IMPLS: dict[type[Operation], Callable[..., np.ndarray]] = {
    minun.ParamOp: lambda op: op.array().astype(np.float64)[None],
    minun.ConstantOp: lambda op: op.array().astype(np.float64)[None],
    minun.InitOp: lambda op: np.full((1, *op.result.type.get_shape()),
                                     _attr_float(op.fill)),
    minun.AddOp: _binary(np.add),
    minun.SubOp: _binary(np.subtract),
    minun.HadamardOp: _binary(np.multiply),
    minun.DivOp: _binary(np.divide),
    minun.MaxOp: _binary(np.maximum),
    minun.MinOp: _binary(np.minimum),
    minun.BiasAddOp: lambda op, a, b: a + _align(b, a.ndim - 1),
    minun.BiasSubOp: lambda op, a, b: a - _align(b, a.ndim - 1),
    minun.MatMulOp: lambda op, a, b: np.matmul(a, b),
    minun.SparseMatMulOp: lambda op, a, b: np.matmul(a, b),
    minun.ScalarMulOp: lambda op, s, t: _scalar_broadcast(s, t) * t,
    minun.NegOp: lambda op, x: -x,
    minun.ReluOp: lambda op, x: np.maximum(x, 0.0),
    minun.Relu6Op: lambda op, x: np.clip(x, 0.0, 6.0),
    minun.ExpOp: lambda op, x: np.exp(x),
    minun.TanhOp: lambda op, x: np.tanh(x),
    minun.SigmoidOp: lambda op, x: _sigmoid(x),
    minun.ErfOp: lambda op, x: _erf(x),
    minun.ClipOp: lambda op, x: np.clip(x, _attr_float(op.lo), _attr_float(op.hi)),
    minun.LeakyReluOp: lambda op, x: np.where(x >= 0, x, _attr_float(op.alpha) * x),
    minun.SoftmaxOp: lambda op, x: _softmax(x, _axis(op)),
    minun.LogSoftmaxOp: lambda op, x: _log_softmax(x, _axis(op)),
    minun.ReverseOp: lambda op, x: np.flip(x, axis=_axis(op)),
    minun.NormaliseL2Op: _normalise_l2,
    minun.ArgMaxOp: _argmax,
    minun.TreeEnsembleOp: _tree_ensemble,
    minun.TFLiteLstmOp: _tflite_lstm,
    minun.SgnOp: _sgn,
    minun.TransposeOp: prepared(_prepare_transpose),
    minun.ReshapeOp: prepared(_prepare_reshape),
    minun.ConcatOp: _concat,
    minun.Conv2DOp: _conv_op,
    minun.MBConvOp: _mbconv_op,
    minun.MaxPoolOp: _maxpool_op,
    minun.AvgPoolOp: _avgpool_op,
    minun.GlobalAvgPoolOp: lambda op, x: x.mean(axis=(2, 3), keepdims=True),
    minun.BatchNormOp: _batchnorm,
    arith.ConstantOp: _arith_constant,
    arith.AddiOp: lambda op, a, b: a + b,
    arith.SubiOp: lambda op, a, b: a - b,
    arith.MuliOp: lambda op, a, b: a * b,
}
