"""Bit-exact batch evaluator for L2 (architecture property 2).

It runs the same engine as the float evaluator (float_eval.py: batch axis, per-example
control flow, profiling), with each op's kernel taken from the representation that owns
its element type (every `num` op, including relu, clip, max, maxpool, argmax, neg ...);
the element-type generic `minun` ops (reshape, splice, concat, ...) keep their L1
kernels, which move integers as they are. Inputs are reals, encoded as the C float
wrapper encodes them; outputs are the stored values (integers for fixed-point), which
`decode_outputs` turns back into reals.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation

from minun_mlir.diagnostics import MinunError
from minun_mlir.formats.fixed import arith as fx
from minun_mlir.modules import main_function
from minun_mlir.numerics import formats
from minun_mlir.numerics.float_eval import EvalResult, evaluate, for_op, l1_lookup, per_call
from minun_mlir.numerics.input_scales import normalize


def _element(op: Operation) -> Attribute | None:
    for v in (*op.results, *op.operands):
        if isinstance(v.type, TensorType):
            return v.type.element_type
    return None


def l2_lookup(op: Operation) -> Callable[..., np.ndarray] | None:
    """The op's kernel. The evaluator looks kernels up while it runs (once per op and
    evaluation), so whether an overflow count is active is decided here: only then is
    the kernel wrapped to attribute what it narrows to `op`. A `prepared` kernel is made
    for `op` here, its attributes read once."""
    el = _element(op)
    if el is not None:
        try:
            kernel = formats.of_element(el).kernels().get(op.name)
        except Exception:  # not a representation type: an L1 op
            kernel = None
        if kernel is not None:
            kernel = for_op(kernel, op)
            return _attributed(kernel) if fx.counter_active() else kernel
    return l1_lookup(op)


def _attributed(kernel: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """The kernel, with what it narrows counted as its op's (fixed.counting_overflow)."""
    def run(op: Operation, *args: np.ndarray) -> np.ndarray:
        with fx.attributed_to(op):
            return kernel(op, *args)

    return per_call(run)  # every run counts, even where the result cannot change


def encode_input(module: ModuleOp | func.FuncOp) -> Callable[[Operation, np.ndarray], np.ndarray]:
    fn = main_function(module)

    def encode(op: Operation, values: np.ndarray) -> np.ndarray:
        el = op.results[0].type.element_type
        rep = formats.of_element(el)
        values = normalize(op, values)  # per-feature input scales, if any
        with fx.attributed_to(op):  # inputs beyond the profiled range saturate here
            return rep.encode(values, el, rep.input_rounding(fn))

    return encode


def evaluate_l2(module: ModuleOp | func.FuncOp, inputs: Mapping[str, np.ndarray] | np.ndarray,
                **kwargs) -> EvalResult:
    return evaluate(module, inputs, lookup=l2_lookup, encode=encode_input(module), **kwargs)


def overflow_report(counter: fx.OverflowCounter) -> dict[str, dict[str, int]]:
    """{tensor: {"overflowed": n, "values": total}} for every op whose results did not all
    fit (wrapped or saturated), by its SSA name or op name and location; sorted by name."""
    from minun_mlir.diagnostics import location_of

    report: dict[str, dict[str, int]] = {}
    for op, count in counter.by_op.items():
        if not count.overflowed or not isinstance(op, Operation):
            continue
        hint = op.results[0].name_hint if op.results else None
        name = getattr(op, "sym_name", None)
        label = name.data if name is not None else hint or op.name
        where = location_of(op)
        key = f"{label} ({op.name}{' at ' + where if where else ''})"
        entry = report.setdefault(key, {"overflowed": 0, "values": 0})
        entry["overflowed"] += count.overflowed
        entry["values"] += count.values
    return dict(sorted(report.items()))


def decode_outputs(module: ModuleOp | func.FuncOp, outputs: list[np.ndarray]
                   ) -> list[np.ndarray]:
    """Stored outputs -> reals (integer results such as labels pass through)."""
    fn = main_function(module)
    decoded = []
    for ty, out in zip(fn.function_type.outputs.data, outputs, strict=True):
        if isinstance(ty, TensorType):
            el = ty.element_type
            decoded.append(formats.of_element(el).decode(out, el))
        else:
            decoded.append(out)
    return decoded


def storage_inputs(module: ModuleOp | func.FuncOp,
                   features: np.ndarray | Mapping[str, np.ndarray]) -> np.ndarray:
    """Reals -> the raw input buffers the generated C takes (minun_input_t): one row per
    example, encoded exactly as the evaluator encodes them. Several inputs (`features` a
    dict by input name) are stored one after another in the model's input order."""
    from minun_mlir.dialects import num
    from minun_mlir.numerics.float_eval import model_inputs

    ops = model_inputs(module)
    if not isinstance(features, Mapping):
        if len(ops) != 1:
            raise MinunError(f"the model has inputs {', '.join(o.sym_name.data for o in ops)}"
                             "; pass a dict of arrays by input name")
        features = {ops[0].sym_name.data: features}
    rows = []
    for op in ops:
        el = op.results[0].type.element_type
        values = encode_input(module)(op, np.asarray(features[op.sym_name.data],
                                                     dtype=np.float64))
        width = num.storage_type(el).width.data if num.integer_stored(el) else 0
        dtype = {8: np.int8, 16: np.int16, 32: np.int32}.get(width, np.float32)
        rows.append(values.reshape(len(values), -1).astype(dtype, copy=False))
    return rows[0] if len(rows) == 1 else np.concatenate(rows, axis=1)
