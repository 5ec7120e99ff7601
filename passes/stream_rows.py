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

A chain may also start with a producer loop, `minun.loop (%i = 0 to N)` carrying a zero
(1, H, W, C) tensor into which its iterations write only row %i (RNNPool's loop over patch
rows): its body runs at step t < N with a one-row tensor in place of the whole one, and
zero rows are emitted for rows N..H-1. Fix-ups of the produced tensor (a splice of it
written back into it) join the chain too: a copy within every row (columns), or a copy of
an earlier row a into a later row b, for which row a is kept in a one-row buffer.

The chain's input and output stay whole tensors; what goes are the intermediates, which
lower-to-loops would otherwise store whole wherever a convolution reads them. The loop
carries `stream_rows` (stages, ring bytes, whole intermediates replaced, recomputation
0), and a chain of at least two convolutions that cannot be streamed gets
`stream_rows_refused` on its first op, so both are visible in the IR. Opt-in: other
programs' IR and C are unchanged.

What a chain is lives in stream_chains.py; which map a chain's output may overwrite as its
rows die (the overlays) in stream_overlay.py; the heads' shared maps computed once per
head (the forks) in stream_forks.py; this module rewrites.
"""


from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    i32,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from minun_mlir.dialects import minun, num
from minun_mlir.dialects.minun import i64_array
from minun_mlir.modules import main_function, require_level, shape_of
from minun_mlir.passes.stream_chains import (  # noqa: F401  (names tests and tools use)
    OVER,
    STREAM_ID,
    UNSET,
    Stage,
    _height,
    _operand,
    _out_step,
    _strided,
    _write_step,
    chains,
    repeats_row,
    replaced_bytes,
    ring_bytes,
)
from minun_mlir.passes.stream_forks import (  # noqa: F401
    conv_macs,
    duplicate_forks,
    recomputation,
)
from minun_mlir.passes.stream_overlay import overlay, overlay_saving  # noqa: F401


class _Body:
    """Builds one segment's loop body: the stages active at its steps, on rows."""

    def __init__(self, t: SSAValue, block: Block, stride: int = 1, k: int = 0):
        """`t` the loop's index; with a row stride S, this body is sub-step k of step t,
        which runs steps S * t .. S * t + S - 1 (`tau`: S * t + k)."""
        self.t, self.block, self.tau = t, block, t
        if stride > 1:
            scaled = self.add(arith.MuliOp(t, self.const(stride))).result
            self.tau = self.add(arith.AddiOp(scaled, self.const(k))).result

    def coarse(self, offset: int) -> SSAValue:
        """t + offset: the output row of a strided convolution at this sub-step."""
        return self.add(arith.AddiOp(self.t, self.const(offset))).result

    def add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def const(self, v: int) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(v, i32))).result

    def row_index(self, lag: int) -> SSAValue:
        return self.add(arith.SubiOp(self.tau, self.const(lag))).result

    def row_of(self, whole: SSAValue, row: SSAValue) -> SSAValue:
        _, _, w, c = shape_of(whole)
        z = self.const(0)
        return self.add(minun.SpliceOp(whole, [z, row, z, z], [1, 1, w, c])).result

    def zero_row(self, like: SSAValue) -> SSAValue:
        _, _, w, c = shape_of(like)
        return self.add(minun.InitOp([1, 1, w, c], 0.0, like.type.element_type)).result

    def push(self, ring: SSAValue, row: SSAValue) -> SSAValue:
        """The ring with its rows moved down one (row by row: no copy overlaps itself)
        and `row` written last."""
        _, k, w, c = shape_of(ring)
        for r in range(k - 1):
            z = self.const(0)
            src = self.add(minun.SpliceOp(ring, [z, self.const(r + 1), z, z], [1, 1, w, c]))
            move = self.add(minun.SpliceAssignOp(src, ring, [z, self.const(r), z, z]))
            move.attributes["stream_rows_move"] = UnitAttr()  # no temporary (store_into)
            ring = move.result
        z = self.const(0)
        return self.add(minun.SpliceAssignOp(row, ring, [z, self.const(k - 1), z, z])).result

    def push_again(self, ring: SSAValue) -> SSAValue:
        """The ring with its newest row pushed again (repeats_row): its rows moved down
        one, the last one kept."""
        _, k, w, c = shape_of(ring)
        for r in range(k - 1):
            z = self.const(0)
            src = self.add(minun.SpliceOp(ring, [z, self.const(r + 1), z, z], [1, 1, w, c]))
            move = self.add(minun.SpliceAssignOp(src, ring, [z, self.const(r), z, z]))
            move.attributes["stream_rows_move"] = UnitAttr()
            ring = move.result
        return ring

    def side_row(self, base: SSAValue, ops: tuple, lag: int) -> SSAValue:
        """Row t - lag of a map a stage reads beside the chain: of `base`, then `ops`."""
        row = self.row_of(base, self.row_index(lag))
        for op in ops:
            row = self.row_op(op, row, _operand(op))
        return row

    def row_op(self, op: Operation, x_row: SSAValue, x: SSAValue, pads=None,
               sides: dict | None = None) -> SSAValue:
        """`op` on a slice of rows: the same op, its chain operand replaced, H -> 1 (and
        the whole maps it reads beside the chain by their rows: `sides`)."""
        res = op.results[0].type
        shape = list(shape_of(op.results[0]))
        shape[1] = 1
        sides = sides or {}
        operands = [x_row if o is x else sides.get(o, o) for o in op.operands]
        attrs = dict(op.attributes)
        if pads is not None:
            attrs["pads"] = pads
        if isinstance(op, num.Conv2DOp) and shape_of(op.filter)[1:3] == (1, 1):
            # lower-to-loops reads its input pixel by pixel (lower_to_loops.STREAMED_ROW)
            attrs["stream_rows_row"] = UnitAttr()
        new = op.create(operands=operands, attributes=attrs, properties=dict(op.properties),
                        result_types=[TensorType(res.element_type, shape)])
        return self.add(new).results[0]

    def copy(self, sp: minun.SpliceOp, sa: minun.SpliceAssignOp, src: SSAValue,
             dest: SSAValue) -> SSAValue:
        """A fix-up's splice of `src` written into `dest`, both one row."""
        z = self.const(0)
        starts = [z if i == 1 else v for i, v in enumerate(sp.starts)]
        sizes = list(minun.ints(sp.sizes))
        sizes[1] = 1
        piece = self.add(minun.SpliceOp(src, starts, sizes)).result
        at = [z if i == 1 else v for i, v in enumerate(sa.starts)]
        return self.add(minun.SpliceAssignOp(piece, dest, at)).result

    def producer(self, loop: minun.LoopOp, k: int, vals: list[SSAValue], slots) -> SSAValue:
        """The loop's body at iteration t with a one-row tensor in place of its feature
        map (its row index 0); the other carried values are `vals[slots]`."""
        blk = loop.body.block
        row = self.zero_row(loop.inits[k])
        others = [i for i in range(len(loop.inits)) if i != k]
        mapper: dict[SSAValue, SSAValue] = {blk.args[0]: self.tau, blk.args[1 + k]: row}
        for i, slot in zip(others, slots):
            mapper[blk.args[1 + i]] = vals[slot]
        new_ops = []
        for op in blk.ops:
            if isinstance(op, minun.YieldOp):
                break
            new_ops.append(self.add(op.clone(mapper)))
        row_type = row.type
        derived = {row}
        for top in new_ops:
            for op in list(top.walk()):
                if isinstance(op, minun.LoopOp):
                    for i, v in enumerate(op.inits):
                        if v in derived:
                            arg, res = op.body.block.args[1 + i], op.results[i]
                            arg._type = res._type = row_type  # the row instead of the map
                            derived.update((arg, res))
                elif isinstance(op, minun.SpliceAssignOp) and op.dest in derived:
                    zero = arith.ConstantOp(IntegerAttr(0, i32))
                    Rewriter.insert_op(zero, InsertPoint.before(op))
                    op.operands[3] = zero.result
                    op.result._type = row_type
                    derived.add(op.result)
        yielded = [mapper.get(v, v) for v in blk.last_op.values]
        for i, slot in zip(others, slots):
            vals[slot] = yielded[i]
        return yielded[k]


_AGAIN = object()  # _sub_step's row at a step whose ring pushes its newest row again


def _segments(stages: list[Stage], height: int) -> list[tuple[int, int]]:
    """Ranges of loop steps at which every stage does the same (a strided chain's step
    runs `stride` steps, one sub-step each, cut so that each sub-step agrees too)."""
    last = _write_step(stages, height - 1) + 1
    cuts = {0, last}
    k = _strided(stages)
    for s in stages[:k + 1]:
        h = _height(s)
        cuts.update((s.lag, s.lag + s.pad, s.lag + h, s.lag + s.pad + h))
        if s.kind == "producer":
            cuts.add(s.extra[1])
        if s.kind == "row_copy":
            cuts.update(s.lag + r + d for r in s.extra for d in (0, 1))
    st = stages[k]
    if st.stride > 1:
        cuts.update((_out_step(st, 0), _out_step(st, shape_of(st.result)[1] - 1) + 1))
    cuts = sorted(c for c in cuts if 0 <= c <= last)
    n = st.stride
    coarse = sorted({c // n for c in cuts} | {-(-c // n) for c in cuts})
    return list(zip(coarse, coarse[1:]))


def _carried(stages: list[Stage]) -> list[Operation]:
    """The loops' initial carried values (the output's last), each stage's slots set."""
    inits: list[Operation | SSAValue] = []
    for i, s in enumerate(stages):
        if s.kind == "row_copy" and repeats_row(stages, i):
            s.slots = ()
        elif s.pad:
            _, _, w, c = shape_of(s.src)
            inits.append(minun.InitOp([1, 2 * s.pad + 1, w, c], 0.0, s.src.type.element_type))
            s.slots = (len(inits) - 1,)
        elif s.kind == "row_copy":
            _, _, w, c = shape_of(s.src)
            inits.append(minun.InitOp([1, 1, w, c], 0.0, s.src.type.element_type))
            s.slots = (len(inits) - 1,)
        elif s.kind == "producer":
            k = s.extra[0]
            others = [v for i, v in enumerate(s.op.inits) if i != k]
            s.slots = tuple(range(len(inits), len(inits) + len(others)))
            inits.extend(others)
    end = stages[-1].result
    inits.append(minun.InitOp(list(shape_of(end)), 0.0, end.type.element_type))
    return inits


def _sub_step(stages: list[Stage], body: _Body, vals: list[SSAValue], step: int,
              k_strided: int, sub: int) -> None:
    """One step of the chain into `body` (`step`: its first step in the segment, at which
    every stage does what it does at the segment's other steps); `vals`: the carried
    values, updated."""
    row: SSAValue | None = None
    out_index: SSAValue | None = None
    # a row the ring repeats (repeats_row): nothing computes it, the ring pushes it again
    again = next((j for j, s in enumerate(stages) if s.kind == "row_copy"
                  and step - s.lag == s.extra[1] and repeats_row(stages, j)), None)
    for i, s in enumerate(stages):
        height = _height(s)
        r_in = step - s.lag  # this segment's first input row: its steps agree on signs
        has_in = 0 <= r_in < height
        if again is not None and not s.pad and (i < again or row is _AGAIN):
            row = _AGAIN  # the stages up to the ring: nothing to compute at this step
            continue
        if s.kind == "producer":
            k, n = s.extra
            row = (body.producer(s.op, k, vals, s.slots) if r_in < n else
                   body.zero_row(s.result) if has_in else None)
        elif s.kind == "columns":
            sp, sa = s.ops
            row = body.copy(sp, sa, row, row) if row is not None else None
        elif s.kind == "row_copy" and s.slots:
            (slot,), (a, b) = s.slots, s.extra
            sp, sa = s.ops
            if row is not None and r_in == a:
                vals[slot] = row
            if row is not None and r_in == b:
                row = body.copy(sp, sa, vals[slot], row)
        elif s is stages[0] and s.src is not None and has_in:
            row = body.row_of(s.src, body.row_index(0))
        if s.kind != "op":
            continue
        if s.pad:
            (slot,) = s.slots
            if row is _AGAIN:
                vals[slot] = body.push_again(vals[slot])
            elif has_in:
                assert row is not None
                vals[slot] = body.push(vals[slot], row)
            elif height <= r_in < height + s.pad:
                vals[slot] = body.push(vals[slot], body.zero_row(s.src))
            first = r_in + s.pad - shape_of(s.op.filter)[1] + 1  # stride * its output row
            if r_in >= 0 and first % s.stride == 0 and 0 <= first // s.stride < shape_of(
                    s.result)[1]:
                _, _, pl, pr = minun.ints(s.op.pads)
                row = body.row_op(s.op, vals[slot], s.src, pads=i64_array((0, 0, pl, pr)))
                if s.stride > 1:
                    out_index = body.coarse((sub - s.lag + first - r_in) // s.stride)
            else:
                row = None
        else:
            if (has_in or i > k_strided) and row is not None:
                sides = {y: body.side_row(base, ops, s.lag) for y, base, ops in s.side}
                row = body.row_op(s.op, row, s.src, sides=sides)
            else:
                row = None
    if row is not None:
        z = body.const(0)
        at_row = out_index if out_index is not None else body.row_index(
            stages[-1].lag + stages[-1].pad)
        vals[-1] = body.add(minun.SpliceAssignOp(row, vals[-1], [z, at_row, z, z])).result


def stream_chain(stages: list[Stage]) -> minun.LoopOp:
    """Replace the chain by loops over rows; returns the last loop."""
    end = stages[-1].result
    height = shape_of(end)[1]
    over = overlay(stages)
    block = stages[-1].ops[-1].parent_block()
    number = sum(1 for op in block.ops if isinstance(op, minun.InitOp)
                 and STREAM_ID in op.attributes)
    at = InsertPoint.before(stages[-1].ops[-1])
    carried = []
    inits = _carried(stages)
    # every row of the output is written before it is read: no fill (lower_loop)
    inits[-1].attributes[UNSET] = UnitAttr()
    inits[-1].attributes[STREAM_ID] = IntegerAttr(number, 64)
    if over is not None:
        inits[-1].attributes[OVER] = StringAttr(f"{over[0]} {over[1]}")
    for v in inits:
        if isinstance(v, Operation):
            Rewriter.insert_op(v, at)
            v = v.results[0]
        carried.append(v)
    loop = None
    k_strided, stride = _strided(stages), stages[_strided(stages)].stride
    for lo, hi in _segments(stages, height):
        block = Block(arg_types=[i32, *(v.type for v in carried)])
        vals = list(block.args[1:])
        for sub in range(stride):
            body = _Body(block.args[0], block, stride, sub)
            _sub_step(stages, body, vals, stride * lo + sub, k_strided, sub)
        block.add_op(minun.YieldOp(*vals))
        loop = minun.LoopOp.create(
            operands=carried, result_types=[v.type for v in carried],
            attributes={"lower": IntegerAttr(lo, 64), "upper": IntegerAttr(hi, 64)},
            regions=[Region(block)])
        Rewriter.insert_op(loop, at)
        carried = list(loop.results)
    assert loop is not None
    loop.attributes["stream_rows"] = StringAttr(
        f"ops {sum(len(s.ops) for s in stages)} rows {height} "
        f"buffers {sum(1 for s in stages if s.pad or s.kind == 'row_copy' and s.slots)} "
        f"ring bytes {ring_bytes(stages)} feature maps replaced {replaced_bytes(stages)} B "
        f"recomputation 0" + ("" if over is None else
                              f" over {'the input' if over[0] == 'input' else 'map ' + over[0]}"
                              f" at {over[1]} B")
        + "".join(f" row {s.extra[0]} pushed again as row {s.extra[1]}"
                  for s in stages if s.kind == "row_copy" and not s.slots))
    loop.results[-1].name_hint = end.name_hint
    end.replace_all_uses_with(loop.results[-1])
    dead = [s.op.inits[s.extra[0]].owner for s in stages if s.kind == "producer"]
    for s in reversed(stages):
        for op in reversed(s.ops):
            op.detach()
            op.erase()
    for op in dead:
        if not op.results[0].uses:
            op.detach()
            op.erase()
    return loop


def stream_rows(module: ModuleOp, every: bool = False) -> list[str]:
    """Stream every chain whose rings are smaller than the feature maps they replace
    (`every`: every chain with a ring or a producer loop, a gain or not: for tests at
    small sizes); returns one line per decision (streamed, or refused for a chain with a
    kxk convolution or a producer loop)."""
    require_level(module, "stream-rows", 2)
    fn = main_function(module, "stream-rows")
    report: list[str] = duplicate_forks(fn.body.block, every)
    refused: set[Operation] = set()
    while True:  # again after each rewrite: a streamed chain's result is a new value
        todo = [c for c in chains(fn.body.block) if c[0][0].op not in refused]
        if not todo:
            return report
        stages, why = todo[0]
        rings = ring_bytes(stages)
        replaced = replaced_bytes(stages) + overlay_saving(stages, overlay(stages))
        windowed = any(s.pad or s.kind == "producer" for s in stages)
        if (replaced <= rings or not windowed) and not (every and windowed):
            refused.add(stages[0].op)
            if windowed:
                ops = sum(len(s.ops) for s in stages)
                reason = (f"{ops} ops, ended by {why}: rings of {rings} B would replace "
                          f"{replaced} B of feature maps")
                stages[0].op.attributes["stream_rows_refused"] = StringAttr(reason)
                report.append(f"refused: {reason}")
            continue
        loop = stream_chain(stages)
        report.append(f"streamed: {loop.attributes['stream_rows'].data}")


@dataclass(frozen=True)
class StreamRows(ModulePass):
    """L2 -> L2: chains of row-local ops as loops over rows with line buffers. `every`:
    stream every chain it can, whether or not its rings are smaller."""

    name = "stream-rows"
    every: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stream_rows(op, self.every)
