"""`lower-to-loops`: L2 (values typed by a number representation) -> L3 (buffers and loops).

L3 is builtin `memref` + `scf` + `arith` + `func` with every integer width explicit:
loads of the stored integers, `arith.extsi`/`trunci` for widening and narrowing, shifts and
divisions that round as docs/numerics.md says, `cmpi`/`select`/`maxsi` for saturation.
The result is one function

    func.func @minun_predict(%x: memref<Nxi16>, %out: memref<Mxi16>) -> i32

that reads the quantized input (several inputs: one after another in `%x`, in program
order), writes the scores (the input of the final argmax/sgn, or
the returned tensor) to `%out` and returns the label: exactly the C entry point of
docs/targets.md, so the later levels only change how it is spelled.

How tensors become memory (why the pass is more than one loop nest per op):

- Every tensor buffer is a flat 1-D memref; views (reshape, transpose, splice, index,
  reverse) are strided index maps over a buffer and cost no memory or copy.
- Parameters become `memref.global` constants (dense integers, never text). A rescale of
  a parameter is folded at compile time into another global with `formats.fixed.arith` (the
  integers the evaluator computes), so no weight is ever copied into RAM.
- Every other op first becomes a lazy element function (`Val.load(index)`); a value is
  only written to a buffer when its single consumer cannot pull it element by element
  (it has several uses, is read several times per element, or lives in another region).
  So `conv2d -> rescale -> maxpool` computes each convolution output inside the pooling
  window and stores only the pooled tensor, and a `rescale` feeding a matmul or an add is
  applied on the consumer's loads (Shiftry's "fuse the shift into the operation").
- Convolutions over expensive lazy values are computed row by row: a grouped kxk
  (depthwise) convolution reads such a value through a `Rows` window of k rows (the rows
  it shares with the previous output row moved down, the new ones computed once), and a
  convolution over a value computed row by row through rows again, or a `Pixel` window
  (one pixel's channels) for a 1x1 one (MBConv's project); so MBConv stores rows of its
  expanded tensors, never the tensors.
- A value materialized element-wise from a buffer that is dead afterwards (a rescale, a
  per-channel 1x1 convolution) is written into that buffer; a splice_assign whose value
  reads its own destination updates it in place (the value through a small temporary).
- A value of the input and the parameters read only through splices in loop bodies, at
  most FUSE_RECOMPUTE times per element over all iterations, is recomputed per patch
  instead of stored (face-4's first layer in its RNNPool patches).
- A lazy value copied by a reshape far from its definition is stored at its definition
  when that frees larger buffers earlier (`store_early`).
- All buffers are `memref.alloc` at the top of the function, apart from the computation,
  so that `memory-plan` can place them in one scratch array afterwards.
- `minun.loop` -> `scf.for`: a carried tensor gets its own buffer, filled from the init
  before the loop and from the yielded value at the end of each iteration (in place when
  that is element-wise safe); left splices into a carried value write in place.
  `minun.if_nonneg` -> `scf.if` (only the taken branch runs). L2's i32 values (loop
  indices, tree nodes, labels) become `index`.
- exp/sigmoid/tanh at Shiftry's scales call runtime helpers (`func.func private
  @minun_exp16_trunc` ...) that minun_runtime.h implements with tables generated from
  formats/fixed/arith.py; SeeDot's two-table exp is inlined with its tables as globals; TreeSum
  halvings are unrolled level by level (sizes are static); sparse matmul walks a
  compressed-column copy of the parameter (same terms, same order as SeeDot's format).

Layout: this module is the pass and its driver (`Lowering`: the walk over blocks, the
L2 value -> `Val` bookkeeping and the materialization decisions above) with one dispatch
table from op class to handler. The builder, the value model and the handlers of each op
family live in `lowering/loops/`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float32Type,
    FusedLoc,
    IntegerType,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    TensorType,
    UnknownLoc,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass

from minun_mlir.diagnostics import error
from minun_mlir.dialects import minun, num
from minun_mlir.dialects.num import AffineType, FixedType, PositType
from minun_mlir.formats.bfloat16 import loops as bfloat16_loops
from minun_mlir.formats.fixed.arith import rounding_in
from minun_mlir.formats.int4.packed import pack_globals
from minun_mlir.formats.posit import loops as posit_loops
from minun_mlir.formats.zero_skew import loops as zero_skew_loops
from minun_mlir.lowering.loops import (
    elementwise,
    functions,
    linear,
    movement,
    regions,
    sources,
    trees,
)
from minun_mlir.lowering.loops.builder import Buffer, Gen, Lin, memref_type
from minun_mlir.lowering.loops.values import (
    CHEAP,
    FREE,
    Buf,
    Pixel,
    Rows,
    Val,
    element_of,
    has_rows,
    op_error,
    row_elements,
    shape_of,
    storage,
    windows,
)
from minun_mlir.modules import (
    decision_threshold,
    locate_after,
    main_function,
    replace_module_body,
    require_level,
    walk_ops,
)
from minun_mlir.numerics.input_scales import ATTR as FEATURE_SCALES

ENTRY = "minun_predict"
# `minun.probe = array<i64: result, id, ...>` on an L2 op: record those results' values
# (put there by the native profiler, never by the pipeline).
PROBE = "minun.probe"

# Consumers that read an operand once per element of their result (see consumed_once).
ELEMENTWISE = (num.AddOp, num.SubOp, num.MulOp, num.RescaleOp, num.ExpOp, num.SigmoidOp,
               num.TanhOp, num.LutOp, num.ReluOp, num.Relu6Op, num.ClipOp, num.NegOp, num.MaxOp,
               num.MinOp, num.RequantizeOp)
# Element-wise consumers whose handlers build an `Elementwise` of their operands (so a
# value computed row by row through row windows stays lazy into them, see `row_consumer`).
ROW_ELEMENTWISE = (num.AddOp, num.SubOp, num.MulOp, num.RescaleOp, num.ReluOp, num.Relu6Op,
                   num.ClipOp, num.NegOp, num.MaxOp, num.MinOp, num.RequantizeOp)
# stream-rows' mark on a 1x1 convolution it runs on one row (passes/stream_rows.py): its
# input, computed for that row, is read through a pixel window (rows_of) rather than stored
STREAMED_ROW = "stream_rows_row"
# A value read in loop bodies may be recomputed up to this many times per element rather
# than stored whole (see Lowering.fused_into_loop).
FUSE_RECOMPUTE = 4
VIEWS = (minun.ReshapeOp, minun.TransposeOp, minun.SpliceOp, minun.IndexOp, minun.ReverseOp)
# consumed_once asks for every op: the classes above as sets, looked up by the op's own
# class (every op class here is a leaf, so `type(op) in` is `isinstance`, without the
# abstract base class machinery that isinstance over a tuple of op classes goes through)
_PASSING = frozenset((minun.YieldOp, func.ReturnOp, minun.LoopOp, minun.IfNonNegOp))
_ELEMENTWISE = frozenset(ELEMENTWISE)
_VIEWS = frozenset(VIEWS)
_ENDS = frozenset((minun.YieldOp, func.ReturnOp))

Handler = Callable[["Lowering", Any], Any]


def _handlers() -> dict[type[Operation], Handler]:
    table: dict[type[Operation], Handler] = {}
    for family in (sources, elementwise, movement, linear, functions, regions, trees):
        for op_type, handler in family.HANDLERS.items():
            assert op_type not in table, f"{op_type.name} lowered by two families"
            table[op_type] = handler
    return table


# The one dispatch table of the pass: op class -> handler(driver, op), which returns the
# lowered result(s): a Val per tensor result, an SSA value per scalar one.
HANDLERS: dict[type[Operation], Handler] = _handlers()
# Representations whose arithmetic is runtime calls: element type class -> handlers that
# take precedence for ops on that element type (minun_mlir/formats/posit/loops.py).
REPRESENTATION_HANDLERS: dict[type, dict[type[Operation], Handler]] = {
    PositType: posit_loops.HANDLERS,
    BFloat16Type: bfloat16_loops.HANDLERS,
    AffineType: zero_skew_loops.HANDLERS,
}


def handler_for(op: Operation) -> Handler | None:
    """The handler of `op`: its representation's (by the element type of its first tensor
    result or operand) where that has one, else the generic one."""
    for values in (op.results, op.operands):
        for v in values:
            if isinstance(v.type, TensorType):
                return _handler(type(op), type(v.type.element_type))
    return _handler(type(op), None)


@cache
def _handler(op_type: type[Operation], element: type | None) -> Handler | None:
    table = REPRESENTATION_HANDLERS.get(element)
    if table is not None and op_type in table:
        return table[op_type]
    return HANDLERS.get(op_type)


def _bytes(elem) -> int:
    return elem.width.data // 8 if isinstance(elem, IntegerType) else 4


def _same_block(value: SSAValue, user: Operation) -> bool:
    owner = value.owner
    block = owner if type(owner) is Block else owner.parent_block()
    return user.parent_block() is block


class Lowering:
    """The walk over L2: lowers each op through HANDLERS and keeps what every L2 value
    became (`vals`: tensors as `Val`s, `ints`: scalars as `index` SSA values), deciding
    when a lazy value is written to memory. Handlers build IR with `self.g`."""

    def __init__(self, fn: func.FuncOp, requantize_tables: bool = False):
        self.fn = fn
        self.requantize_tables = requantize_tables  # LowerToLoops's option
        self.rounding = rounding_in(fn)
        self.g = Gen()
        self.vals: dict[SSAValue, Val] = {}
        self.ints: dict[SSAValue, SSAValue] = {}
        self.folded: dict[tuple[SSAValue, str], Val] = {}
        self.relayouts: dict[tuple, Buffer] = {}  # constant globals stored re-ordered
        self.packed: set[str] = set()  # globals of 4-bit codes, two per byte (packed.py)
        self.deferred: dict[Operation, Attribute] = {}  # top-level ops that wrote no code

    # -- entry ---------------------------------------------------------------------------

    def run(self) -> ModuleOp:
        fn, g = self.fn, self.g
        inputs = [op for op in walk_ops(fn) if isinstance(op, num.InputOp)]
        if not inputs:
            raise error("lower-to-loops: the model has no num.input")
        # several inputs share the entry's buffer x, one after another in program order
        # (fixed point: each at its own scale, which model.h gives; any other
        # representation: one element type, which the float wrapper converts)
        same = {storage(element_of(op.result)) if isinstance(element_of(op.result), FixedType)
                else element_of(op.result) for op in inputs}
        if len(same) != 1:
            raise error("lower-to-loops: the inputs are stored in different types ("
                        + ", ".join(f"{op.sym_name.data}: {element_of(op.result)}"
                                    for op in inputs)
                        + "); the C takes them in one buffer of one type")
        self.input_offsets: dict[num.InputOp, int] = {}
        for op in inputs:
            self.input_offsets[op] = sum(math.prod(shape_of(o.result))
                                         for o in self.input_offsets)
        ret = fn.body.block.last_op
        if not isinstance(ret, func.ReturnOp) or len(ret.operands) != 1:
            raise error("lower-to-loops: the model must return one value (a label "
                             "from argmax/sgn or a score tensor)")
        result = ret.operands[0]
        self.label_op: Operation | None = None
        if isinstance(result.type, TensorType):
            self.scores = result
        elif isinstance(result.owner, (num.ArgMaxOp, num.SgnOp)):
            self.label_op = result.owner
            self.scores = result.owner.input
        else:
            raise error("lower-to-loops: an integer result must come from "
                             "num.argmax or num.sgn (its input gives the scores)")
        x_el, s_el = element_of(inputs[0].result), element_of(self.scores)
        for el in (x_el, s_el):
            storage(el)
        n_in = sum(math.prod(shape_of(op.result)) for op in inputs)
        n_out = math.prod(shape_of(self.scores))
        body = Block(arg_types=[memref_type(storage(x_el), n_in),
                                memref_type(storage(s_el), n_out)])
        body.args[0].name_hint, body.args[1].name_hint = "x", "out"
        self.x = Buffer(body.args[0], n_in, storage(x_el))
        self.out = Buffer(body.args[1], n_out, storage(s_el))
        g.names.update({"x", "out"})
        g.block = self.body = body
        self.lower_block(fn.body.block)
        last = body.last_op
        label = self.label(result)
        g.add(func.ReturnOp(self.g.add(arith.IndexCastOp(label, i32))))
        where = ret.location if self.label_op is None else self.label_op.location
        if isinstance(where, UnknownLoc):  # the label of returned scores: their argmax
            where = NameLoc(StringAttr("label (argmax)"), NoneAttr())
        locate_after(body, last, where)
        unused = {op for op in g.top if not op.results[0].uses}
        dropped = {op.name_.root_reference.data for op in unused
                   if isinstance(op, memref.GetGlobalOp)}
        g.top = [op for op in g.top if op not in unused]
        g.drop_globals(dropped)
        for op in reversed(g.top):
            if body.first_op is None:
                body.add_op(op)
            else:
                body.insert_op_before(op, body.first_op)
        pack_globals(g.module_ops, body, self.packed)
        new = func.FuncOp(ENTRY, ((body.args[0].type, body.args[1].type), (i32,)),
                          Region(body))
        attrs = {"num.rounding": StringAttr(self.rounding)}
        if "minun.class_labels" in fn.attributes:  # the names of the labels (model.h)
            attrs["minun.class_labels"] = fn.attributes["minun.class_labels"]
        if "minun.requantize" in fn.attributes:  # a pre-quantized model: its input rounding
            attrs["minun.requantize"] = fn.attributes["minun.requantize"]
        for key in ("minun.input_uint8", "minun.output_uint8"):  # minun_predict_uint8
            if key in fn.attributes:
                attrs[key] = fn.attributes[key]
        # the encoding of the C's input and output (the ABI model.h and the wrappers
        # spell): their L2 element types, typed and verified as such; several fixed-point
        # inputs in one buffer have a scale each (minun.input_scales) instead
        if len(inputs) == 1 or not isinstance(x_el, FixedType):
            attrs["minun.input_encoding"] = x_el
        attrs["minun.output_encoding"] = s_el
        if len(inputs) == 1:
            attrs["minun.input_shape"] = StringAttr("x".join(map(str, shape_of(
                inputs[0].result))))
            if FEATURE_SCALES in inputs[0].attributes:  # numerics/input_scales.py
                attrs[FEATURE_SCALES] = inputs[0].attributes[FEATURE_SCALES]
            attrs["minun.input_name"] = inputs[0].sym_name
        else:  # the C's input buffer holds them one after another (docs/codegen.md)
            attrs["minun.input_names"] = StringAttr(",".join(op.sym_name.data
                                                             for op in inputs))
            attrs["minun.input_shapes"] = StringAttr(",".join(
                "x".join(map(str, shape_of(op.result))) for op in inputs))
            if isinstance(x_el, FixedType):
                attrs["minun.input_scales"] = StringAttr(",".join(
                    str(element_of(op.result).frac) for op in inputs))
        new.attributes.update(attrs)
        return ModuleOp([*g.module_ops, new])

    def label(self, result: SSAValue) -> SSAValue:
        """The returned label: the argmax/sgn of the program, the first maximum of a
        returned score tensor, or for one value whether it is above the decision
        threshold (modules.decision_threshold, the evaluators' rule; a regressor: 0)."""
        if self.label_op is not None:
            return self.ints[result]
        scores = Buf(self.out, shape_of(self.scores), element_of(self.scores))
        threshold = decision_threshold(self.fn)
        if math.prod(scores.shape) == 1 and threshold is not None:
            return functions.above(self, scores, threshold)
        return functions.argmax(self, scores)  # a regressor's one value: 0

    # -- blocks ----------------------------------------------------------------------------

    def lower_block(self, block: Block) -> list[Val | SSAValue]:
        for op in block.ops:
            if type(op) in _ENDS:
                return [self.value(v) for v in op.operands]
            self.lower_op(op)
        return []

    def value(self, v: SSAValue) -> Val | SSAValue:
        return self.vals[v] if isinstance(v.type, TensorType) else self.ints[v]

    def lower_op(self, op: Operation) -> None:
        """Lower one L2 op; at the function's top level, the statements it added (its
        loops, and the lazy values it wrote to memory) take its source location, which
        lower-to-emitc keeps for a per-layer profile (minun_mlir/profile.py)."""
        block = self.g.block
        top = block is self.body
        last = block.last_op if top else None
        self.lower_one(op)
        where = op.location
        if isinstance(where, UnknownLoc):  # an op quantize added (a requantize): its input's
            where = next((v.owner.location for v in op.operands
                          if isinstance(v.owner, Operation)
                          and not isinstance(v.owner.location, UnknownLoc)), where)
        if not top or isinstance(where, UnknownLoc):
            return
        if block.last_op is not last:
            fused = self.fused_into(op)
            locate_after(block, last, FusedLoc([where, *fused], NoneAttr())
                         if fused else where)
        elif any(isinstance(v.type, TensorType) for v in op.operands):
            self.deferred[op] = where  # its values are computed by a later op's code

    def fused_into(self, op: Operation) -> list:
        """The locations of the ops whose values `op`'s statements compute (lazy values a
        handler left unwritten, e.g. a convolution read by a pooling), each taken once:
        a per-layer profile names the layer after all of them."""
        found = []
        for v in op.operands:
            owner = v.owner
            if isinstance(owner, Operation) and owner in self.deferred:
                found += [*self.fused_into(owner), self.deferred.pop(owner)]
        return found

    def lower_one(self, op: Operation) -> None:
        handler = handler_for(op)
        if handler is None:
            raise op_error(op, "not supported by lower-to-loops")
        result = handler(self, op)
        if not op.results:
            return
        results = result if isinstance(result, list) else [result]
        for old, new in zip(op.results, results, strict=True):
            if isinstance(old.type, TensorType):
                self.vals[old] = self.settle(old, new)
            else:
                if old.name_hint and isinstance(new, SSAValue) and new.name_hint is None:
                    new.name_hint = old.name_hint
                self.ints[old] = new
        if PROBE in op.attributes:
            self.probe(op)

    def probe(self, op: Operation) -> None:
        """The native evaluator's instrumentation (minun_mlir/native.py): every element of
        each probed result goes, once it is computed, to `minun_profile(id, value)` (float
        values: the float profile) or `minun_record(id, stored)` (integer storage widened
        to 32 bits: the value maps of a precision search)."""
        pairs = [int(v) for v in op.attributes[PROBE].get_values()]
        for index, ident in zip(pairs[::2], pairs[1::2], strict=True):
            val = self.vals[op.results[index]]
            if val.cost > CHEAP:  # computed once for the probe and the consumers
                val = self.vals[op.results[index]] = self.materialize(val, op.results[index])
            if isinstance(val.elem, Float32Type):
                name, load = "minun_profile", val.load
            elif isinstance(val.elem, IntegerType) and val.elem.width.data <= 32:
                name = "minun_record"

                def load(g, idx, val=val):
                    return g.resize(val.load(g, idx), 32)
            else:
                raise op_error(op, f"{PROBE}: only float values and integers of up to 32 "
                                   "bits are recorded")
            ids = self.g.iconst(ident, 32)
            self.g.nest(val.shape, lambda idx, ids=ids, name=name, load=load: self.g.probe(
                name, [ids, load(self.g, idx)]))

    # -- materialization -------------------------------------------------------------------

    def consumed_once(self, v: SSAValue) -> bool:
        """Whether `v` is read at most once per element, by one consumer in its block."""
        uses = list(v.uses)
        if len(uses) != 1 or not _same_block(v, uses[0].operation):
            return False
        user, index = uses[0].operation, uses[0].index
        kind = type(user)
        if kind in _PASSING:
            return True
        if kind in _ELEMENTWISE:
            return math.prod(shape_of(v)) == math.prod(shape_of(user.results[0]))
        if kind in _VIEWS:
            return index == 0 and self.consumed_once(user.results[0])
        if kind is minun.SpliceAssignOp:
            return index == 0
        if kind is num.MatMulOp:
            m, _ = shape_of(user.lhs)
            _, n = shape_of(user.rhs)
            return n == 1 if index == 0 else m == 1
        if kind is num.MaxPoolOp:
            kernel, strides = minun.ints(user.kernel), minun.ints(user.strides)
            return all(s >= k for s, k in zip(strides, kernel))
        if kind is num.Conv2DOp and index == 0:
            # 1x1, one output channel per group: each input element feeds at most one
            # output element (the 1x1 grouped scale of face-4's first layer)
            _, kh, kw, _, cout = shape_of(user.filter)
            return (kh, kw, cout) == (1, 1, 1)
        return False

    def settle(self, v: SSAValue, val: Val) -> Val:
        """Keep `val` lazy, or write it to a buffer now (see the module docstring)."""
        if v is self.scores:
            if isinstance(val, Buf) and val.buffer is self.out:
                return val
            target = Buf(self.out, val.shape, val.el)
            self.store_into(target, val)
            return target
        if val.cost == FREE or not v.uses:
            return val
        if has_rows(val):
            return val if self.row_consumer(v, val) else self.materialize(val, v)
        if val.cost == CHEAP or self.consumed_once(v):
            return self.materialize(val, v) if self.store_early(v, val) else val
        user = self.single_user(v)
        if isinstance(user, num.Conv2DOp) and self.row_window(user, val):
            return val
        if self.fused_into_loop(v, val):
            return val
        reused = self.in_place(v, val)
        if reused is not None:
            self.store_into(reused, val)
            return reused
        return self.materialize(val, v)

    def in_place(self, v: SSAValue, val: Val) -> Buf | None:
        """A buffer `val` may be written into in place: one it reads only at the element
        being written (element-wise, same shape and storage type), owned whole by a value
        whose only use leads, one op after another, to `v` (so nothing reads it after
        `v` is computed). Reads happen before the write of each element."""
        size = math.prod(val.shape)
        leaves = list(val.leaves(True))
        for leaf, aligned in leaves:
            owner = leaf.buffer.owner
            if not (aligned and leaf.whole and leaf.buffer.elem == val.elem
                    and leaf.buffer.size == size and isinstance(owner, OpResult)
                    and self.dies_into(owner, v)):
                continue
            target = Buf(leaf.buffer, val.shape, val.el)
            if all(other.buffer is not leaf.buffer or (ok and other.same_layout(target))
                   for other, ok in leaves):
                leaf.buffer.owner = v
                return target
        return None

    def dies_into(self, u: SSAValue, v: SSAValue) -> bool:
        """Whether `u`'s only use is an op of its block whose one result is `v` or,
        recursively, dies into `v`."""
        while True:
            user = self.single_user(u)
            if user is None or len(user.results) != 1:
                return False
            if user.results[0] is v:
                return True
            u = user.results[0]

    def store_early(self, v: SSAValue, val: Val) -> bool:
        """Whether `v`, lazy, is better stored now than where its consumer would store it:
        its one consumer is a reshape that copies (a lazy value, or one whose non-unit
        dimensions change), other tensors are computed in between, and storing now ends
        the life of buffers it reads (all their uses come before the reshape) larger than
        itself. face-4's detection heads (30x40x4) are reshaped into the answer at the
        end of the program: stored where they are defined, the 30x40x32 tensors they read
        die there instead of at the end."""
        user = self.single_user(v)
        if not isinstance(user, minun.ReshapeOp) or not isinstance(v, OpResult):
            return False
        order = minun.ints(user.order)
        shape = [val.shape[p] for p in order]
        if [n for n in shape if n != 1] == [n for n in shape_of(user.result) if n != 1]:
            return False  # a view of whatever the reshape reads
        block = user.parent_block()
        ops = list(block.ops)
        at = ops.index(user)
        if not any(isinstance(r.type, TensorType) and not isinstance(op, num.ParamOp)
                   for op in ops[ops.index(v.owner) + 1:at] for r in op.results):
            return False  # nothing computed in between: the same lives either way
        freed, seen = 0, set()
        for leaf, _ in val.leaves(False):
            buf = leaf.buffer
            if buf in seen or not isinstance(buf.owner, OpResult):
                continue
            seen.add(buf)
            dies = True
            for use in buf.owner.uses:
                op = use.operation
                while op is not None and op.parent_block() is not block:
                    op = op.parent_op()
                dies = dies and op is not None and ops.index(op) < at
            if dies:
                freed += buf.size * _bytes(buf.elem)
        return freed > math.prod(val.shape) * _bytes(val.elem)

    def fused_into_loop(self, v: SSAValue, val: Val) -> bool:
        """Whether `v` is better recomputed where a loop reads it than stored whole: a
        value of the input and the parameters only (nothing writes what it reads), read
        only through splices inside loop bodies, whose elements over all iterations are
        at most FUSE_RECOMPUTE times its own (face-4's first convolution, read in
        overlapping 8x8 RNNPool patches, 3.8 times: each patch, materialized in the loop
        body as it is read several times, computes its own elements)."""
        if has_rows(val) or not v.uses:
            return False
        if any(leaf.buffer.owner is not None or leaf.buffer is self.out
               for leaf, _ in val.leaves(False)):
            return False
        read = 0
        for use in v.uses:
            user = use.operation
            if not isinstance(user, minun.SpliceOp) or _same_block(v, user):
                return False
            trips, op = 1, user.parent_op()
            while op is not None and op.parent_block() is not None and not _same_block(v, op):
                if not isinstance(op, minun.LoopOp):
                    return False
                trips *= op.upper.value.data - op.lower.value.data
                op = op.parent_op()
            if not isinstance(op, minun.LoopOp):
                return False
            trips *= op.upper.value.data - op.lower.value.data
            read += trips * math.prod(shape_of(user.result))
        return read <= FUSE_RECOMPUTE * math.prod(val.shape)

    def single_user(self, v: SSAValue) -> Operation | None:
        """The one op using `v` (once, in v's block), else None."""
        uses = list(v.uses)
        if len(uses) != 1 or not _same_block(v, uses[0].operation):
            return None
        return uses[0].operation

    def row_consumer(self, v: SSAValue, val: Val) -> bool:
        """Whether the one consumer of `v`, a value computed row by row, is one too: an
        element-wise op of the same shape, or a convolution reading it through a row
        window. Any other consumer gets `v` materialized (row by row, by store_into)."""
        user = self.single_user(v)
        if isinstance(user, ROW_ELEMENTWISE):
            return shape_of(user.results[0]) == shape_of(v)
        if isinstance(user, num.Conv2DOp):
            return self.row_window(user, val) is not None
        return False

    def row_window(self, conv: num.Conv2DOp, val: Val) -> int | None:
        """The rows of a row window through which `conv` reads its lazy input `val`, or
        None when the input is better read lazily or materialized whole. A window is used
        for a grouped (depthwise) kxk convolution over a value that is expensive to
        recompute (MBConv's expanded tensor: rows x W x C elements live instead of
        H x W x C), and for any convolution over a value already computed row by row
        (MBConv's project 1x1 convolution over the depthwise output, through a pixel
        window: rows_of) when its rows are read in order (stride <= rows)."""
        v = conv.input
        if isinstance(val, Buf) or val.cost <= CHEAP:
            return None
        uses = list(v.uses)
        if len(uses) != 1 or uses[0].index != 0 or not _same_block(v, conv):
            return None
        shape = shape_of(v)
        if len(shape) != 4 or shape[0] != 1:
            return None
        groups, kh, _, _, _ = shape_of(conv.filter)
        sh, _ = minun.ints(conv.strides)
        dh, _ = minun.ints(conv.dilations)
        rows = (kh - 1) * dh + 1
        if has_rows(val):
            return rows if rows >= sh else None
        if groups > 1 and kh > 1 and rows < shape[1]:
            return rows
        if STREAMED_ROW in conv.attributes and rows == 1 and shape[1] == 1:
            return 1  # a 1x1 convolution of a stream-rows row: read pixel by pixel
        return None

    def rows_of(self, conv: num.Conv2DOp, rows: int) -> Rows | Pixel:
        """The window of `conv`'s input (see row_window), with its buffer: one pixel for
        a 1x1 convolution (stride 1, no padding) over a value computed row by row."""
        val = self.vals[conv.input]
        _, _, w, c = val.shape
        _, kh, kw, _, _ = shape_of(conv.filter)
        if ((has_rows(val) or STREAMED_ROW in conv.attributes) and (kh, kw) == (1, 1)
                and minun.ints(conv.strides) == (1, 1) and not any(minun.ints(conv.pads))):
            return Pixel(val, self.g.alloc(c, val.elem, f"{conv.input.name_hint or 'x'}_pixel"))
        hint = f"{conv.input.name_hint or 'x'}_rows"
        buf = self.g.alloc(rows * w * c, val.elem, hint)
        return Rows(val, buf, rows, minun.ints(conv.strides)[0], minun.ints(conv.pads)[0],
                    shape_of(conv.result)[1])

    def materialize(self, val: Val, owner: SSAValue | None = None, hint: str | None = None
                    ) -> Buf:
        hint = hint or (owner.name_hint if owner is not None else None)
        buf = self.g.alloc(max(math.prod(val.shape), 1), val.elem, hint)
        buf.owner = owner
        target = Buf(buf, val.shape, val.el)
        self.store_into(target, val)
        return target

    def store_into(self, target: Buf, val: Val, moves_down: bool = False) -> None:
        """target[i] = val[i] for every index; through a temporary when val reads the
        target's buffer anywhere but at the written element, unless `moves_down`: the
        caller knows val reads only elements after the one written (stream-rows' ring
        rows moved down one), which the stores in index order have not overwritten yet."""
        for leaf, aligned in val.leaves(True):
            if moves_down:
                break
            if leaf.buffer is target.buffer and not (aligned and leaf.same_layout(target)):
                val = self.materialize(val)
                break
        if isinstance(val, Buf) and val.same_layout(target):
            return
        g = self.g
        wins = windows(val)
        if not wins:
            g.nest(val.shape,
                   lambda idx: g.store(val.load(g, idx), target.buffer, target.at(idx)))
            return

        def row(o: Lin) -> list:  # row by row, each row's windows prepared first
            row_elements(g, val, o, lambda idx: g.store(
                val.load(g, [Lin(0), o, *idx]), target.buffer, target.at([Lin(0), o, *idx])))
            return []

        assert len(val.shape) == 4 and val.shape[0] == 1, val.shape
        g.loop(val.shape[1], [], row)

    def buffer_of(self, v: SSAValue) -> Buf:
        """The value as a buffer (materialized if it is lazy)."""
        val = self.vals[v]
        return val if isinstance(val, Buf) else self.materialize(val)

    def owned(self, v: SSAValue, splice: minun.SpliceAssignOp | None = None) -> Buf | None:
        """The value's buffer if the value may be updated in place: it owns the whole
        buffer and this is its only use, in its own block; or, for the destination of
        `splice`, every other use dies into the spliced value (which store_into computes
        before writing, through a temporary when it reads the destination elsewhere)."""
        val = self.vals[v]
        if not (isinstance(val, Buf) and val.whole and val.buffer.owner is v):
            return None
        uses = list(v.uses)
        if len(uses) == 1 and _same_block(v, uses[0].operation):
            return val
        if splice is not None and all(
                (u.operation is splice and v is not splice.value)
                or (u.operation.parent_block() is splice.parent_block()
                    and len(u.operation.results) == 1
                    and (u.operation.results[0] is splice.value
                         or self.dies_into(u.operation.results[0], splice.value)))
                for u in uses):
            return val
        return None


def lower_to_loops(module: ModuleOp, requantize_tables: bool = False) -> ModuleOp:
    """The pass as a function: returns the L3 module (the input is left unchanged)."""
    require_level(module, "lower-to-loops", 2)
    return Lowering(main_function(module, "lower-to-loops"), requantize_tables).run()


@dataclass(frozen=True)
class LowerToLoops(ModulePass):
    """L2 -> L3: buffers (memref), loops (scf) and explicit integer arithmetic (arith).

    `requantize-tables`: zero-skew requantizations run often become constant tables of
    their results or thresholds (formats/zero_skew/tables.py), the same integers. Worth
    it where a 32x32-bit product is slow (the Uno: ~200 cycles); a Cortex-M or x86 does
    it in a few instructions, and the tables would only cost flash. minun-compile sets
    it for the avr target.

    `stream-rows`: first run the stream-rows pass (passes/stream_rows.py) on the L2
    module: chains of row-local ops become loops over rows with line buffers, the same
    integers (minun-compile --stream-rows)."""

    name = "lower-to-loops"
    requantize_tables: bool = False
    stream_rows: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.stream_rows:
            from minun_mlir.passes.stream_rows import stream_rows

            stream_rows(op)
        replace_module_body(op, lower_to_loops(op, self.requantize_tables))

    def lowered(self, op: ModuleOp) -> ModuleOp:
        """What `apply` leaves in a clone of `op`, without the clone unless stream-rows
        rewrites the L2 first (pipeline.lower_l2: the search lowers hundreds of
        candidates): `op` is left unchanged."""
        source = op
        if self.stream_rows:
            from minun_mlir.passes.stream_rows import stream_rows

            source = op.clone()
            stream_rows(source)
        new = lower_to_loops(source, self.requantize_tables)
        new.properties.update(op.properties)
        new.attributes.update(op.attributes)
        new.location = op.location
        return new


