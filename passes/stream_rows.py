"""`stream-rows`: run a chain of row-local L2 ops as one loop over rows with line buffers.

A chain is a run of ops in one block, each the only consumer of the one before, that read
a bounded window of rows of their (1, H, W, C) operand: a convolution with stride 1 in
rows and `pad = (kh - 1) / 2` rows above and below reads kh rows; element-wise ops,
normaliseL2 and 1x1 convolutions read one row (their other operands must not depend on
the chain). Held whole, every intermediate of the chain is a feature map; streamed, the
chain becomes `minun.loop`s over t (line buffering, MCUNetV2's scheduler without halos):
at step t each op takes row t - lag of its input, a kxk convolution pushes it into a
ring of k rows (its line buffer: rows shifted down, the new row written last, the ring
starting as zeros, which are the padding rows above; zero rows are pushed for the rows
below) and computes its output row t - lag - pad from the ring. Every row is computed
once, so the recomputation is 0; the ops are the same ops on row slices, with the same
types and attributes, so the integers are the evaluator's (only fixed point, whose
padding adds 0, and no halvings, whose tree would see the zero rows in other places).
The steps at which an op has no row yet or none left are split off into loops of their
own, so no step tests a condition.

The chain's input and output stay whole tensors; what goes are the intermediates, which
lower-to-loops would otherwise store whole wherever a convolution reads them. The loop
carries `stream_rows` (stages, ring bytes, whole intermediates replaced, recomputation
0), and a chain of at least two convolutions that cannot be streamed gets
`stream_rows_refused` on its first op, so both are visible in the IR. Opt-in: other
programs' IR and C are unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, TensorType, i32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from minun_mlir.dialects import minun, num
from minun_mlir.dialects.minun import i64_array
from minun_mlir.dialects.num import FixedType
from minun_mlir.modules import main_function, require_level, shape_of

ELEMENTWISE = (num.RescaleOp, num.ReluOp, num.Relu6Op, num.ClipOp, num.AddOp, num.SubOp,
               num.MulOp, num.NormaliseL2Op)


@dataclass
class Stage:
    op: Operation
    pad: int  # rows above (and below) its window: a ring of 2 * pad + 1 rows when > 0
    lag: int  # its input row at step t is t - lag


def _rows(v: SSAValue) -> tuple[int, ...] | None:
    """(1, H, W, C) of a fixed-point 4-D tensor, else None."""
    if not isinstance(v.type, TensorType) or not isinstance(v.type.element_type, FixedType):
        return None
    s = shape_of(v)
    return s if len(s) == 4 and s[0] == 1 else None


def _bytes(v: SSAValue) -> int:
    return math.prod(shape_of(v)) * v.type.element_type.width // 8


def _window(op: Operation, x: SSAValue) -> int | str:
    """The pad of `op`'s row window over its chain operand `x`, or why it has none."""
    if _rows(x) is None or _rows(op.results[0]) is None:
        return "not a fixed-point (1, H, W, C) tensor"
    if shape_of(op.results[0])[1] != shape_of(x)[1]:
        return "changes the number of rows"
    if isinstance(op, num.Conv2DOp):
        if op.input is not x or x in (op.filter, op.bias):
            return "reads the chain through its filter"
        _, kh, _, _, _ = shape_of(op.filter)
        (sh, _), (dh, _) = minun.ints(op.strides), minun.ints(op.dilations)
        pt, pb, _, _ = minun.ints(op.pads)
        if sh != 1 or dh != 1:
            return "row stride or dilation is not 1"
        if kh % 2 == 0 or pt != pb or pt != (kh - 1) // 2:
            return "rows not padded by (kh - 1) / 2 on both sides"
        if op.halvings.value.data and kh > 1:
            return "halvings (its sum tree would see the padding rows)"
        return pt
    if isinstance(op, ELEMENTWISE):
        others = [o for o in op.operands if o is not x]
        if any(len(shape_of(o)) > 1 for o in others) or len(others) + 1 != len(op.operands):
            return "its other operand is not a per-channel constant"
        return 0
    return f"{op.name} is not row-local"


def chains(block: Block) -> list[tuple[SSAValue, list[Operation], str]]:
    """Maximal chains in `block`: (input, ops, why the chain ends)."""
    seen: set[Operation] = set()
    out = []
    for first in list(block.ops):
        if first in seen or not first.results or not first.operands:
            continue
        x = first.operands[0]
        if not isinstance(_window(first, x), int):
            continue
        ops, why = [first], ""
        while True:
            v = ops[-1].results[0]
            uses = list(v.uses)
            if len(uses) != 1:
                why = f"{len(uses)} uses of {v.name_hint or 'a value'}"
                break
            nxt = uses[0].operation
            w = _window(nxt, v) if nxt.parent_block() is block else "in another block"
            if not isinstance(w, int):
                why = f"{nxt.name}: {w}"
                break
            ops.append(nxt)
        seen.update(ops)
        out.append((x, ops, why))
    return out


class _Body:
    """Builds one segment's loop body: the ops active at its steps, on row slices."""

    def __init__(self, stages: list[Stage], height: int, t: SSAValue, block: Block):
        self.stages, self.height, self.t, self.block = stages, height, t, block

    def add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def row_index(self, lag: int) -> SSAValue:
        c = self.add(arith.ConstantOp(IntegerAttr(lag, i32)))
        return self.add(arith.SubiOp(self.t, c)).result

    def zero(self, n: int) -> list[SSAValue]:
        c = self.add(arith.ConstantOp(IntegerAttr(0, i32))).result
        return [c] * n

    def row_of(self, whole: SSAValue, row: SSAValue) -> SSAValue:
        _, _, w, c = shape_of(whole)
        z = self.zero(1)[0]
        return self.add(minun.SpliceOp(whole, [z, row, z, z], [1, 1, w, c])).result

    def push(self, ring: SSAValue, row: SSAValue) -> SSAValue:
        """The ring with its rows moved down one (row by row: no copy overlaps itself)
        and `row` written last."""
        _, k, w, c = shape_of(ring)
        for r in range(k - 1):
            at = [self.add(arith.ConstantOp(IntegerAttr(v, i32))).result for v in (0, r + 1)]
            src = self.add(minun.SpliceOp(ring, [at[0], at[1], at[0], at[0]], [1, 1, w, c]))
            to = self.add(arith.ConstantOp(IntegerAttr(r, i32))).result
            ring = self.add(minun.SpliceAssignOp(src, ring, [at[0], to, at[0], at[0]])).result
        z = self.zero(1)[0]
        last = self.add(arith.ConstantOp(IntegerAttr(k - 1, i32))).result
        return self.add(minun.SpliceAssignOp(row, ring, [z, last, z, z])).result

    def row_op(self, op: Operation, x_row: SSAValue, x: SSAValue, pads=None) -> SSAValue:
        """`op` on a slice of rows: the same op, its chain operand replaced, H -> rows."""
        res = op.results[0].type
        shape = list(shape_of(op.results[0]))
        shape[1] = 1
        operands = [x_row if o is x else o for o in op.operands]
        attrs = dict(op.attributes)
        if pads is not None:
            attrs["pads"] = pads
        new = op.create(operands=operands, attributes=attrs, properties=dict(op.properties),
                        result_types=[TensorType(res.element_type, shape)])
        return self.add(new).results[0]


def _segments(stages: list[Stage], height: int) -> list[tuple[int, int]]:
    last = stages[-1].lag + stages[-1].pad + height
    cuts = {0, last}
    for s in stages:
        cuts.update(c for c in (s.lag, s.lag + s.pad, s.lag + height, s.lag + s.pad + height)
                    if 0 <= c <= last)
    cuts = sorted(cuts)
    return list(zip(cuts, cuts[1:]))


def stages_of(x: SSAValue, ops: list[Operation]) -> list[Stage]:
    stages, lag = [], 0
    for op, src in zip(ops, [x, *(o.results[0] for o in ops[:-1])]):
        pad = _window(op, src)
        assert isinstance(pad, int)
        stages.append(Stage(op, pad, lag))
        lag += pad
    return stages


def ring_bytes(stages: list[Stage]) -> int:
    return sum((2 * s.pad + 1) * _bytes(s.op.operands[0]) // shape_of(s.op.operands[0])[1]
               for s in stages if s.pad)


def replaced_bytes(stages: list[Stage]) -> int:
    """The feature maps inside the chain that a kxk convolution reads and lower-to-loops
    would store whole: those computed by a convolution (too dear to recompute per tap),
    but a depthwise one's input, which it already reads through a window of rows
    (lower_to_loops.row_window)."""
    total, conv_before = 0, False
    for s in stages:
        if s.pad and conv_before and s.op.groups.value.data == 1:
            total += _bytes(s.op.operands[0])
        conv_before = conv_before or isinstance(s.op, num.Conv2DOp)
    return total


def stream_chain(x: SSAValue, ops: list[Operation]) -> minun.LoopOp:
    """Replace the chain `ops` (reading `x`) by loops over rows; returns the last loop."""
    stages = stages_of(x, ops)
    height = shape_of(x)[1]
    end = ops[-1].results[0]
    rewriter_at = InsertPoint.before(ops[-1])
    pre: list[Operation] = []
    rings = []
    for s, src in zip(stages, [x, *(o.results[0] for o in ops[:-1])]):
        if s.pad:
            _, _, w, c = shape_of(src)
            init = minun.InitOp([1, 2 * s.pad + 1, w, c], 0.0, src.type.element_type)
            pre.append(init)
            rings.append(init.result)
    out = minun.InitOp(list(shape_of(end)), 0.0, end.type.element_type)
    pre.append(out)
    for p in pre:
        Rewriter.insert_op(p, rewriter_at)
    carried = [*rings, out.result]
    loop = None
    for lo, hi in _segments(stages, height):
        types = [v.type for v in carried]
        block = Block(arg_types=[i32, *types])
        body = _Body(stages, height, block.args[0], block)
        ring_args = list(block.args[1:-1])
        result = block.args[-1]
        row: SSAValue | None = None
        src = x
        new_rings = []
        ri = 0
        for s in stages:
            r_in = (lo - s.lag)  # this segment's first input row; all steps agree on signs
            has_in = 0 <= r_in < height
            if s is stages[0]:
                row = body.row_of(x, body.row_index(0)) if has_in else None
            if s.pad:
                ring = ring_args[ri]
                if has_in:
                    assert row is not None
                    ring = body.push(ring, row)
                elif height <= r_in < height + s.pad:
                    _, _, w, c = shape_of(src)
                    zero = body.add(minun.InitOp([1, 1, w, c], 0.0, src.type.element_type))
                    ring = body.push(ring, zero.result)
                new_rings.append(ring)
                ri += 1
                r_out = r_in - s.pad
                if 0 <= r_out < height and (has_in or height <= r_in < height + s.pad):
                    _, _, pl, pr = minun.ints(s.op.pads)
                    row = body.row_op(s.op, ring, src, pads=i64_array((0, 0, pl, pr)))
                else:
                    row = None
            else:
                row = body.row_op(s.op, row, src) if has_in and row is not None else None
            src = s.op.results[0]
        if row is not None:
            z = body.zero(1)[0]
            at = body.row_index(stages[-1].lag + stages[-1].pad)
            result = body.add(minun.SpliceAssignOp(row, result, [z, at, z, z])).result
        body.add(minun.YieldOp(*new_rings, result))
        loop = minun.LoopOp.create(
            operands=carried, result_types=[v.type for v in carried],
            attributes={"lower": IntegerAttr(lo, 64), "upper": IntegerAttr(hi, 64)},
            regions=[Region(block)])
        Rewriter.insert_op(loop, rewriter_at)
        carried = list(loop.results)
    assert loop is not None
    loop.attributes["stream_rows"] = StringAttr(
        f"ops {len(ops)} rows {height} rings {len(rings)} ring bytes {ring_bytes(stages)} "
        f"feature maps replaced {replaced_bytes(stages)} B recomputation 0")
    loop.results[-1].name_hint = end.name_hint
    end.replace_all_uses_with(loop.results[-1])
    for op in reversed(ops):
        op.detach()
        op.erase()
    return loop


def stream_rows(module: ModuleOp) -> list[str]:
    """Stream every chain whose rings are smaller than the feature maps they replace;
    returns one line per decision (streamed, or refused for a chain with a kxk
    convolution)."""
    require_level(module, "stream-rows", 2)
    fn = main_function(module, "stream-rows")
    report: list[str] = []
    refused: set[Operation] = set()
    while True:  # again after each rewrite: a streamed chain's result is a new value
        todo = [c for c in chains(fn.body.block) if c[1][0] not in refused]
        if not todo:
            return report
        x, ops, why = todo[0]
        stages = stages_of(x, ops)
        rings, replaced = ring_bytes(stages), replaced_bytes(stages)
        if replaced <= rings:
            refused.add(ops[0])
            if any(s.pad for s in stages):
                reason = (f"{len(ops)} ops, ended by {why}: rings of {rings} B would replace "
                          f"{replaced} B of feature maps")
                ops[0].attributes["stream_rows_refused"] = StringAttr(reason)
                report.append(f"refused: {reason}")
            continue
        loop = stream_chain(x, ops)
        report.append(f"streamed: {loop.attributes['stream_rows'].data}")


@dataclass(frozen=True)
class StreamRows(ModulePass):
    """L2 -> L2: chains of row-local ops as loops over rows with line buffers."""

    name = "stream-rows"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stream_rows(op)
