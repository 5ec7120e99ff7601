"""The walk from L1 to L2 that every representation shares.

`L2Converter` visits the L1 function in order and builds a new L2 function. `HANDLERS`, at
the end of this file, maps each L1 op class to its conversion rule (an `L2Converter`
method, or `as_num(...)`). Ops that only move values (reshape, splice, concat, ...) are
copied with their element types replaced; comparisons, selections and negation (relu,
clip, max, maxpool, argmax, neg, ...) become their `num` counterparts (dialects/num.py
says why); regions (loop, sum, conditional) are rebuilt here; everything that computes is
delegated to the representation's hooks (`input`, `param`, `add`, `matmul`, `exp`, ...),
which decide types, shifts and widths. Representations subclass `L2Converter` and
implement the hooks; they do not change the table.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType, UnknownLoc, f64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from minun_mlir.diagnostics import MinunError, error
from minun_mlir.dialects import minun, num
from minun_mlir.modules import main_function, shape_of, walk_ops  # noqa: F401  (shape_of: for the representations)
from minun_mlir.numerics.float_eval import Profile, ValueStats
from minun_mlir.numerics.repr import QuantizeConfig

# exact op classes, looked up by type as HANDLERS is: isinstance on an xDSL op class goes
# through ABCMeta, ten times slower, and these run for every value (none is subclassed)
NAMED_OWNERS = frozenset({minun.ParamOp, minun.InputOp})
LEAVES = frozenset({minun.ConstantOp, minun.ParamOp, minun.InputOp})
TERMINATORS = frozenset({func.ReturnOp, minun.YieldOp})


def name_of(value: SSAValue) -> str | None:
    """A user-facing name: a parameter's or input's name, else the SSA name hint."""
    owner = value.owner
    if type(owner) in NAMED_OWNERS:
        return owner.sym_name.data
    return value.name_hint


def temporary_names(module: ModuleOp) -> dict[SSAValue, str]:
    """Names for the tensors a program leaves unnamed (subexpressions): %t1, %t2, ... in
    program order, as Shiftry's paper numbers its temporaries. A precision search assigns
    them bits by these names, and an assignment replays on the same program (the same
    frontend and lower-composite-ops give the same order)."""
    names: dict[SSAValue, str] = {}
    for op in walk_ops(main_function(module)):
        if type(op) in LEAVES:
            continue
        for v in op.results:
            if isinstance(v.type, TensorType) and name_of(v) is None:
                names[v] = f"%t{len(names) + 1}"
    return names


# the largest parameter (in elements) whose codes `codes` remembers: a search quantizes
# the same weights at the same few formats for every candidate, and small arrays are
# where building the codes costs more than the array; the cache holds at most
# 512 x 4096 elements
CODES_CACHED_SIZE = 4096


def codes(encode: Callable[..., np.ndarray], values: np.ndarray, *params) -> np.ndarray:
    """`encode(values, *params)` (a pure function of the values' bytes, dtype and shape
    and of `params`), remembered for small arrays; the result is read-only."""
    if values.size > CODES_CACHED_SIZE:
        return encode(values, *params)
    return _codes(encode, values.tobytes(), values.dtype.str, values.shape, params)


@functools.lru_cache(maxsize=512)
def _codes(encode, data: bytes, dtype: str, shape: tuple[int, ...], params: tuple
           ) -> np.ndarray:
    out = encode(np.frombuffer(data, dtype=dtype).reshape(shape).copy(), *params)
    if isinstance(out, np.ndarray):
        out.flags.writeable = False
    return out


class L2Converter:
    """Base converter; subclasses implement the representation-specific hooks."""

    def __init__(self, config: QuantizeConfig, profile: Profile | None):
        self.config = config
        self.profile: Profile = profile or {}
        self.map: dict[SSAValue, SSAValue] = {}
        self.block: Block | None = None
        self.source: Operation | None = None  # the L1 op being converted
        self.counter = 0
        self.temporaries: dict[SSAValue, str] = {}  # unnamed L1 tensors: %t1, %t2, ...

    # -- plumbing --------------------------------------------------------------------

    def tensor_name(self, old: SSAValue) -> str | None:
        """The name a bitwidth assignment uses for an L1 value (its own, or %tN)."""
        return name_of(old) or self.temporaries.get(old)

    def emit(self, op: Operation) -> SSAValue:
        assert self.block is not None
        if self.source is not None and isinstance(op.location, UnknownLoc):
            op.location = self.source.location  # L2 ops point at the program line they came from
        self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def error(self, op: Operation, message: str) -> MinunError:
        return error(f"{op.name}: {message}", at=op)

    def stats(self, value: SSAValue) -> ValueStats | None:
        return self.profile.get(value)

    def value_range(self, old: SSAValue | None) -> tuple[float, float] | None:
        """The profiled (min, max) of an L1 value; a `profile = array<f64: lo, hi>`
        attribute on its op wins over the profile from data."""
        if old is None:
            return None
        attr = getattr(old.owner, "attributes", {}).get("profile")
        if attr is not None:
            lo, hi = (float(v) for v in attr.get_values())
            return lo, hi
        stats = self.stats(old)
        if stats is None or not stats.count:
            return None
        return stats.min, stats.max

    def run(self, module: ModuleOp) -> ModuleOp:
        fn = main_function(module, "quantize")
        self.temporaries = temporary_names(module)
        block = Block()
        results = self.convert_block(fn.body.block, block)
        block.add_op(func.ReturnOp(*results))
        new_fn = func.FuncOp(fn.sym_name.data, ((), [r.type for r in results]),
                             Region(block))
        for key, value in fn.attributes.items():
            if key not in ("sym_name", "function_type"):
                new_fn.attributes[key] = value
        self.annotate(new_fn)
        return ModuleOp([new_fn])

    def annotate(self, fn: func.FuncOp) -> None:
        """Record module-wide facts (rounding of the input conversion) on the function."""

    def convert_block(self, old: Block, new: Block) -> list[SSAValue]:
        """Convert every op of `old` into `new`; return the mapped terminator operands."""
        saved, self.block = self.block, new
        try:
            for op in old.ops:
                if type(op) in TERMINATORS:
                    return [self.finish_result(self.map[v], v) for v in op.operands]
                self.convert_op(op)
            return []
        finally:
            self.block = saved

    def finish_result(self, value: SSAValue, old: SSAValue) -> SSAValue:
        return value

    def convert_op(self, op: Operation) -> None:
        handler = HANDLERS.get(type(op))
        if handler is None:
            raise self.error(op, f"not supported by the {self.representation_name} "
                                 "representation")
        saved, self.source = self.source, op
        try:
            result = handler(self, op)
        finally:
            self.source = saved
        if op.results:
            results = result if isinstance(result, (list, tuple)) else [result]
            for old, new in zip(op.results, results, strict=True):
                self.map[old] = new
                if old.name_hint and not new.name_hint and new.owner is not None:
                    new.name_hint = old.name_hint

    @property
    def representation_name(self) -> str:
        return type(self).__name__

    def copy(self, op: Operation, operands: Sequence[SSAValue],
             kind: type[Operation] | None = None) -> SSAValue:
        """Re-create a value-moving op on new operands (as an op of class `kind`, default
        the same class), result element type from its source operand (the tensor it
        moves)."""
        source = operands[1] if isinstance(op, minun.SpliceAssignOp) else operands[0]
        results = []
        for r in op.results:
            if isinstance(r.type, TensorType):
                el = source.type.element_type
                results.append(minun.tensor_of(r.type.get_shape(), el))
            else:
                results.append(r.type)
        new = (kind or type(op)).create(operands=list(operands),
                                        attributes=dict(op.attributes), result_types=results)
        return self.emit(new)

    def convert_neg(self, op: minun.NegOp) -> SSAValue:
        """num.neg, its result in `negated_type` (the operand's type, where the format's
        values are symmetric about 0)."""
        x = self.map[op.operands[0]]
        if not isinstance(x.type, TensorType):
            return self.copy(op, [x], num.NegOp)
        el = self.negated_type(x)
        return self.emit(num.NegOp.create(
            operands=[x], attributes=dict(op.attributes),
            result_types=[minun.tensor_of(op.results[0].type.get_shape(), el)]))

    def negated_type(self, x: SSAValue) -> Attribute:
        return x.type.element_type

    # -- ops every representation handles alike ----------------------------------------

    def convert_move(self, op: Operation) -> SSAValue:
        """A value-moving op, copied with its operands' element type."""
        return self.copy(op, [self.map[v] for v in op.operands])

    def convert_unified(self, op: Operation) -> SSAValue:
        """A value-moving op whose tensor operands must share one type first."""
        return self.copy(op, self.unify_operands(op))

    def convert_arith_constant(self, op: arith.ConstantOp) -> SSAValue:
        return self.emit(arith.ConstantOp(op.value, op.result.type))

    def convert_int_binary(self, op: Operation) -> SSAValue:
        new = type(op).create(operands=[self.map[v] for v in op.operands],
                              attributes=dict(op.attributes), result_types=[op.results[0].type])
        return self.emit(new)

    def convert_add(self, op: Operation) -> SSAValue:
        return self.add(op, self.map[op.lhs], self.map[op.rhs], subtract=False)

    def convert_sub(self, op: Operation) -> SSAValue:
        return self.add(op, self.map[op.lhs], self.map[op.rhs], subtract=True)

    def convert_mul(self, op: Operation) -> SSAValue:
        return self.mul(op, self.map[op.lhs], self.map[op.rhs])

    def convert_leaky_relu(self, op: minun.LeakyReluOp) -> SSAValue:
        alpha = float(op.alpha.value.data)
        if not 0.0 <= alpha <= 1.0:
            raise self.error(op, f"alpha {alpha} outside [0, 1] is not supported")
        x = self.map[op.input]
        scaled = self.mul(op, x, self.constant(np.float32(alpha), "alpha"))
        a, b = self.unify([x, scaled])
        return self.emit(num.MaxOp.create(operands=[a, b], result_types=[a.type]))

    def convert_input(self, op: minun.InputOp) -> SSAValue:
        return self.input(op)

    def convert_param(self, op: minun.ParamOp) -> SSAValue:
        return self.param(op, op.array(), op.sym_name.data, op.sparse is not None,
                          declared=max(abs(op.range_lo.value.data), abs(op.range_hi.value.data)))

    def convert_constant(self, op: minun.ConstantOp) -> SSAValue:
        self.counter += 1
        return self.param(op, op.array(), f"c{self.counter}", False, declared=0.0)

    def constant(self, value: np.ndarray, hint: str) -> SSAValue:
        """A compile-time constant made by the converter itself (not in L1)."""
        self.counter += 1
        return self.param(None, np.asarray(value, dtype=np.float32), f"{hint}{self.counter}",
                          False, declared=0.0)

    def convert_matmul(self, op: minun.MatMulOp) -> SSAValue:
        return self.matmul(op, self.map[op.lhs], self.map[op.rhs])

    def convert_sparse_matmul(self, op: minun.SparseMatMulOp) -> SSAValue:
        return self.sparse_matmul(op, self.map[op.lhs], self.map[op.rhs])

    def convert_conv2d(self, op: minun.Conv2DOp) -> SSAValue:
        return self.conv2d(op, self.map[op.input], self.map[op.filter])

    def convert_exp(self, op: minun.ExpOp) -> SSAValue:
        return self.exp(op, self.map[op.input])

    def convert_sigmoid(self, op: minun.SigmoidOp) -> SSAValue:
        return self.table_function(op, num.SigmoidOp, self.map[op.input])

    def convert_tanh(self, op: minun.TanhOp) -> SSAValue:
        return self.table_function(op, num.TanhOp, self.map[op.input])

    def convert_normalise_l2(self, op: minun.NormaliseL2Op) -> SSAValue:
        return self.normalise_l2(op, self.map[op.input])

    def convert_softmax(self, op: minun.SoftmaxOp) -> SSAValue:
        shape = shape_of(op.input)
        if op.axis.value.data != len(shape) - 1:
            raise self.error(op, f"softmax over axis {op.axis.value.data} of a "
                                 f"{len(shape)}-D tensor: only the last axis is supported")
        return self.softmax(op, self.map[op.input])

    def convert_log_softmax(self, op: minun.LogSoftmaxOp) -> SSAValue:
        shape = shape_of(op.input)
        if op.axis.value.data != len(shape) - 1:
            raise self.error(op, f"log_softmax over axis {op.axis.value.data} of a "
                                 f"{len(shape)}-D tensor: only the last axis is supported")
        return self.log_softmax(op, self.map[op.input])

    def convert_init(self, op: minun.InitOp) -> SSAValue:
        fill = float(op.fill.value.data)
        el = self.init_type(op, fill)
        # the L1 op's own f64 fill attribute when it is one (InitOp(shape, fill, el) would
        # build the same attribute again)
        attr = op.fill if op.fill.type == f64 else minun.f64_attr(fill)
        return self.emit(minun.InitOp.create(attributes={"fill": attr}, result_types=[
            minun.tensor_of(op.result.type.get_shape(), el)]))

    def convert_tree_ensemble(self, op: minun.TreeEnsembleOp) -> SSAValue:
        return self.tree_ensemble(op, self.map[op.input])

    def convert_tflite_lstm(self, op: minun.TFLiteLstmOp) -> SSAValue:
        return self.tflite_lstm(op, self.map[op.input])

    def convert_call(self, op: minun.CallOp) -> SSAValue:
        return self.copy(op, [self.map[v] for v in op.args])

    # -- regions ---------------------------------------------------------------------

    def convert_loop(self, op: minun.LoopOp) -> list[SSAValue]:
        inits = [self.map[v] for v in op.inits]
        old_yield = op.body.block.last_op
        assert isinstance(old_yield, minun.YieldOp)
        types = [self.carried_type(op, i, v.type, None) for i, v in enumerate(inits)]
        for _ in range(64):
            body, yields = self._loop_body(op, types)
            new_types = [self.carried_type(op, i, types[i], yields[i].type)
                         for i in range(len(inits))]
            if new_types == types:
                break
            types = new_types
        else:
            raise self.error(op, "the carried values' types do not settle")
        inits = [self.cast(v, t) for v, t in zip(inits, types)]
        loop = minun.LoopOp.create(operands=inits, attributes=dict(op.attributes),
                                   result_types=types, regions=[Region(body)])
        self.emit(loop)
        return list(loop.results)

    def _loop_body(self, op: minun.LoopOp, types: list[Attribute]):
        block = Block(arg_types=[op.body.block.args[0].type, *types])
        for old, new in zip(op.body.block.args, block.args):
            self.map[old] = new
            new.name_hint = old.name_hint
        values = self.convert_block(op.body.block, block)
        saved, self.block = self.block, block
        casted = [self.cast(v, t) for v, t in zip(values, types)]
        self.block = saved
        block.add_op(minun.YieldOp(*casted))
        return block, values

    def convert_sum(self, op: minun.SumOp) -> SSAValue:
        # $(i = [a:b]) e  ->  a loop carrying an accumulator. The body is converted once;
        # the accumulator's block argument is added when its type (from the body's) is known.
        index = op.body.block.args[0]
        block = Block(arg_types=[index.type])
        self.map[index] = block.args[0]
        block.args[0].name_hint = index.name_hint
        (value,) = self.convert_block(op.body.block, block)
        n = op.upper.value.data - op.lower.value.data
        acc_el, term_el = self.sum_types(op, value.type.element_type, n)
        shape = shape_of(op.result)
        zero = self.emit(minun.InitOp(shape, 0.0, acc_el))
        acc = block.insert_arg(zero.type, 1)
        saved, self.block = self.block, block
        total = self.accumulate(acc, self.cast(value, term_el))
        self.block = saved
        block.add_op(minun.YieldOp(total))
        loop = minun.LoopOp.create(operands=[zero], attributes={
            "lower": op.lower, "upper": op.upper}, result_types=[zero.type],
            regions=[Region(block)])
        self.emit(loop)
        return self.finish_sum(op, loop.results[0])

    def convert_if_nonneg(self, op: minun.IfNonNegOp) -> SSAValue:
        blocks, values = [], []
        for region in (op.then_region, op.else_region):
            b = Block()
            (v,) = self.convert_block(region.block, b)
            blocks.append(b)
            values.append(v)
        ty = self.join_type(op, [v.type for v in values])
        for b, v in zip(blocks, values):
            saved, self.block = self.block, b
            cast = self.cast(v, ty)
            self.block = saved
            b.add_op(minun.YieldOp(cast))
        new = minun.IfNonNegOp.create(operands=[self.map[op.cond]], result_types=[ty],
                                      regions=[Region(blocks[0]), Region(blocks[1])])
        return self.emit(new)

    # -- hooks (representation-specific) ---------------------------------------------

    def input(self, op: minun.InputOp) -> SSAValue:
        raise NotImplementedError

    def param(self, op: Operation | None, values: np.ndarray, name: str, sparse: bool,
              declared: float) -> SSAValue:
        raise NotImplementedError

    def init_type(self, op: minun.InitOp, fill: float) -> Attribute:
        raise NotImplementedError

    def add(self, op: Operation, a: SSAValue, b: SSAValue, subtract: bool) -> SSAValue:
        raise NotImplementedError

    def mul(self, op: Operation, a: SSAValue, b: SSAValue) -> SSAValue:
        raise NotImplementedError

    def matmul(self, op: Operation, a: SSAValue, b: SSAValue) -> SSAValue:
        raise NotImplementedError

    def sparse_matmul(self, op: Operation, a: SSAValue, b: SSAValue) -> SSAValue:
        raise NotImplementedError

    def conv2d(self, op: minun.Conv2DOp, x: SSAValue, f: SSAValue) -> SSAValue:
        raise NotImplementedError

    def exp(self, op: minun.ExpOp, x: SSAValue) -> SSAValue:
        raise NotImplementedError

    def table_function(self, op: Operation, kind: type, x: SSAValue) -> SSAValue:
        raise NotImplementedError

    def normalise_l2(self, op: Operation, x: SSAValue) -> SSAValue:
        raise NotImplementedError

    def softmax(self, op: Operation, x: SSAValue) -> SSAValue:
        raise NotImplementedError

    def log_softmax(self, op: Operation, x: SSAValue) -> SSAValue:
        raise self.error(op, f"not supported by the {self.representation_name} "
                             "representation")

    def tflite_lstm(self, op: minun.TFLiteLstmOp, x: SSAValue) -> SSAValue:
        raise self.error(op, "TFLite's integer LSTM compiles onto the zero-skew "
                         f"representation only (--repr zero-skew), not "
                         f"{self.representation_name}")

    def tree_ensemble(self, op: minun.TreeEnsembleOp, x: SSAValue) -> SSAValue:
        raise self.error(op, f"not supported by the {self.representation_name} "
                             "representation (trees are compiled in fixed point or float32)")

    def cast(self, value: SSAValue, to: Attribute) -> SSAValue:
        """Convert `value` to type `to` (a no-op when equal)."""
        raise NotImplementedError

    def unify(self, values: list[SSAValue]) -> list[SSAValue]:
        """Bring tensors to one element type (for concat, max, splice_assign ...)."""
        raise NotImplementedError

    def unify_operands(self, op: Operation) -> list[SSAValue]:
        tensors = [self.map[v] for v in op.operands if isinstance(v.type, TensorType)]
        unified = iter(self.unify(tensors))
        return [next(unified) if isinstance(v.type, TensorType) else self.map[v]
                for v in op.operands]

    def carried_type(self, op: minun.LoopOp, index: int, current: Attribute,
                     yielded: Attribute | None) -> Attribute:
        """The type of carried value `index`: first from the init's type (`yielded` None),
        then refined from the type the body yields until it no longer changes."""
        raise NotImplementedError

    def join_type(self, op: Operation, types: list[Attribute]) -> Attribute:
        raise NotImplementedError

    def sum_types(self, op: minun.SumOp, body: Attribute, n: int
                  ) -> tuple[Attribute, Attribute]:
        raise NotImplementedError

    def accumulate(self, acc: SSAValue, term: SSAValue) -> SSAValue:
        raise NotImplementedError

    def finish_sum(self, op: minun.SumOp, acc: SSAValue) -> SSAValue:
        raise NotImplementedError


def is_int(value: SSAValue) -> bool:
    return isinstance(value.type, IntegerType)


# --------------------------------------------------------------------------------------
# L1 op class -> conversion rule. Every L1 op the converter accepts is listed here; an op
# missing from the table is "not supported by the <representation> representation".
# The rules are L2Converter methods: representations customise the hooks they call
# (add, matmul, cast, ...), not this table.
# --------------------------------------------------------------------------------------

Handler = Callable[[L2Converter, Operation], "SSAValue | list[SSAValue]"]


def as_num(kind: type[Operation], unify: bool = False) -> Handler:
    """The rule for an L1 op whose L2 form is the `num` op `kind` (same operands and
    attributes, results in the operands' representation): comparisons, selections and
    negation, whose integer code depends on the encoding. With `unify`, the tensor
    operands are first brought to one type."""

    def convert(self: L2Converter, op: Operation) -> SSAValue:
        operands = (self.unify_operands(op) if unify
                    else [self.map[v] for v in op.operands])
        return self.copy(op, operands, kind)

    convert.__name__ = f"as_num({kind.__name__})"
    return convert


HANDLERS: dict[type[Operation], Handler] = {
    # leaves
    minun.InputOp: L2Converter.convert_input,
    minun.ParamOp: L2Converter.convert_param,
    minun.ConstantOp: L2Converter.convert_constant,
    minun.InitOp: L2Converter.convert_init,
    arith.ConstantOp: L2Converter.convert_arith_constant,
    # integer index arithmetic (loop counters, tree nodes): unchanged
    arith.AddiOp: L2Converter.convert_int_binary,
    arith.SubiOp: L2Converter.convert_int_binary,
    arith.MuliOp: L2Converter.convert_int_binary,
    # arithmetic: the representation's hooks
    minun.AddOp: L2Converter.convert_add,
    minun.BiasAddOp: L2Converter.convert_add,
    minun.SubOp: L2Converter.convert_sub,
    minun.BiasSubOp: L2Converter.convert_sub,
    minun.HadamardOp: L2Converter.convert_mul,
    minun.ScalarMulOp: L2Converter.convert_mul,
    minun.MatMulOp: L2Converter.convert_matmul,
    minun.SparseMatMulOp: L2Converter.convert_sparse_matmul,
    minun.Conv2DOp: L2Converter.convert_conv2d,
    minun.ExpOp: L2Converter.convert_exp,
    minun.SigmoidOp: L2Converter.convert_sigmoid,
    minun.TanhOp: L2Converter.convert_tanh,
    minun.NormaliseL2Op: L2Converter.convert_normalise_l2,
    minun.SoftmaxOp: L2Converter.convert_softmax,
    minun.LogSoftmaxOp: L2Converter.convert_log_softmax,
    minun.LeakyReluOp: L2Converter.convert_leaky_relu,
    # comparisons, selections, negation: `num` ops (their integers depend on the encoding)
    minun.ReluOp: as_num(num.ReluOp),
    minun.Relu6Op: as_num(num.Relu6Op),
    minun.ClipOp: as_num(num.ClipOp),
    minun.NegOp: L2Converter.convert_neg,
    minun.MaxOp: as_num(num.MaxOp, unify=True),
    minun.MinOp: as_num(num.MinOp, unify=True),
    minun.MaxPoolOp: as_num(num.MaxPoolOp),
    minun.ArgMaxOp: as_num(num.ArgMaxOp),
    minun.SgnOp: as_num(num.SgnOp),
    # pure data movement: the same `minun` op, copied with its operands' element type
    minun.ReshapeOp: L2Converter.convert_move,
    minun.TransposeOp: L2Converter.convert_move,
    minun.SpliceOp: L2Converter.convert_move,
    minun.IndexOp: L2Converter.convert_move,
    minun.ReverseOp: L2Converter.convert_move,
    # ... whose tensor operands are first brought to one type
    minun.ConcatOp: L2Converter.convert_unified,
    minun.SpliceAssignOp: L2Converter.convert_unified,
    # structure (element-type generic `minun` ops)
    minun.CallOp: L2Converter.convert_call,
    minun.LoopOp: L2Converter.convert_loop,
    minun.SumOp: L2Converter.convert_sum,
    minun.IfNonNegOp: L2Converter.convert_if_nonneg,
    minun.TreeEnsembleOp: L2Converter.convert_tree_ensemble,
    minun.TFLiteLstmOp: L2Converter.convert_tflite_lstm,
}
