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
"""

from __future__ import annotations

import math
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
from minun_mlir.dialects.num import FixedType
from minun_mlir.modules import main_function, require_level, shape_of

# marks on a streamed chain's output init, read by lower-to-loops (regions.lower_loop):
# no zero fill (every row is written before it is read), and the bytes by which the
# function's input may start above it in the scratch (memory-plan groups the two)
UNSET = "stream_rows_unset"
STREAM_ID = "stream_rows_id"  # the output's number, for a later chain's overlay
OVER = "stream_rows_over"  # "input SHIFT" or "ID SHIFT": what it may overwrite
ELEMENTWISE = (num.RescaleOp, num.ReluOp, num.Relu6Op, num.ClipOp, num.AddOp, num.SubOp,
               num.MulOp, num.NormaliseL2Op)


@dataclass
class Stage:
    """One step of a chain. kind: "op" (a row-local op; a ring of 2 * pad + 1 rows when
    pad > 0), "producer" (a loop writing row i at iteration i: extra = (carried index,
    N)), "columns" (a fix-up within every row) or "row_copy" (a fix-up copying row a into
    row b: extra = (a, b)). Its input row at step t is t - lag."""

    op: Operation
    kind: str = "op"
    pad: int = 0
    lag: int = 0
    src: SSAValue | None = None  # the chain value it reads (None for a producer)
    extra: tuple = ()
    ops: tuple = ()  # the ops it replaces (a fix-up: its splice, then its splice_assign)
    slots: tuple = ()  # its carried values' places among the loops' carried values
    side: tuple = ()  # whole maps of its input's shape it reads row by row (residuals)
    stride: int = 1  # a kxk convolution's row stride: an output row every stride steps

    @property
    def result(self) -> SSAValue:
        if self.kind == "producer":
            return self.op.results[self.extra[0]]
        return self.op.results[0]


def _bytes(v: SSAValue) -> int:
    return math.prod(shape_of(v)) * v.type.element_type.width // 8


def _row_bytes(v: SSAValue) -> int:
    return _bytes(v) // shape_of(v)[1]


def _const(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def _rows(v: SSAValue) -> tuple[int, ...] | None:
    """(1, H, W, C) of a fixed-point 4-D tensor, else None."""
    if not isinstance(v.type, TensorType) or not isinstance(v.type.element_type, FixedType):
        return None
    s = shape_of(v)
    return s if len(s) == 4 and s[0] == 1 else None


def _side(o: SSAValue, x: SSAValue) -> bool:
    """Whether `o` is a whole feature map of `x`'s shape an element-wise op may read row
    by row beside the chain (a residual connection: row r at the step the chain's row r
    is there)."""
    return _rows(o) is not None and shape_of(o) == shape_of(x)


def _sides(op: Operation, x: SSAValue) -> tuple[tuple[SSAValue, SSAValue, tuple], ...]:
    """The whole maps `op` reads beside its chain operand `x`: (map, the value it is
    computed from pixel by pixel, those ops), the ops then run on rows in the chain
    (a residual connection's rescale), so the map itself is never held whole."""
    if not isinstance(op, ELEMENTWISE):
        return ()
    out = []
    for y in (o for o in op.operands if o is not x and len(shape_of(o)) > 1):
        ops = tuple(_prefix(y, op.parent_block())) if len(list(y.uses)) == 1 else ()
        out.append((y, _operand(ops[0]) if ops else y, ops))
    return tuple(out)


def _stage(op: Operation, v: SSAValue, pad: int) -> Stage:
    side = _sides(op, v)
    stride = minun.ints(op.strides)[0] if isinstance(op, num.Conv2DOp) else 1
    return Stage(op, pad=pad, src=v, ops=(*(p for _, _, ops in side for p in ops), op),
                 side=side, stride=stride)


def _window(op: Operation, x: SSAValue) -> int | str:
    """The pad of `op`'s row window over its chain operand `x`, or why it has none."""
    if _rows(x) is None or _rows(op.results[0]) is None:
        return "not a fixed-point (1, H, W, C) tensor"
    if shape_of(op.results[0])[1] != shape_of(x)[1] and not isinstance(op, num.Conv2DOp):
        return "changes the number of rows"
    if isinstance(op, num.Conv2DOp):
        if op.input is not x or x in (op.filter, op.bias):
            return "reads the chain through its filter"
        _, kh, _, _, _ = shape_of(op.filter)
        (sh, _), (dh, _) = minun.ints(op.strides), minun.ints(op.dilations)
        pt, pb, _, _ = minun.ints(op.pads)
        if dh != 1 or (sh != 1 and kh == 1):
            return "row dilation is not 1, or a 1x1 convolution strides rows"
        if kh % 2 == 0 or pt != pb or pt != (kh - 1) // 2:
            return "rows not padded by (kh - 1) / 2 on both sides"
        if op.halvings.value.data and kh > 1:
            return "halvings (its sum tree would see the padding rows)"
        return pt
    if isinstance(op, ELEMENTWISE):
        others = [o for o in op.operands if o is not x]
        if len(others) + 1 != len(op.operands) or any(
                len(shape_of(o)) > 1 and not _side(o, x) for o in others):
            return "its other operand is neither a per-channel constant nor a map of its shape"
        return 0
    return f"{op.name} is not row-local"


def _producer(op: Operation) -> tuple[int, int] | str:
    """(carried index, N) of a loop writing row i of a zero (1, H, W, C) tensor at its
    iteration i and nothing else of it, or why it is not one."""
    if not isinstance(op, minun.LoopOp) or op.lower.value.data != 0:
        return "not a loop from 0"
    found = [k for k, v in enumerate(op.inits) if _rows(v) is not None
             and isinstance(v.owner, minun.InitOp) and v.owner.fill.value.data == 0.0
             and len(list(v.uses)) == 1]
    if len(found) != 1:
        return "carries no one zero feature map"
    (k,) = found
    n, h = op.upper.value.data, shape_of(op.inits[k])[1]
    if n > h or any(r.uses for i, r in enumerate(op.results) if i != k):
        return "writes past its rows, or other results are used"
    iv = op.body.block.args[0]
    derived = {op.body.block.args[1 + k]}
    for inner in op.body.walk():
        for use, v in enumerate(inner.operands):
            if v not in derived:
                continue
            if isinstance(inner, minun.LoopOp) and inner is not op:
                i = list(inner.inits).index(v)
                derived.update((inner.body.block.args[1 + i], inner.results[i]))
            elif (isinstance(inner, minun.SpliceAssignOp) and use == 1
                  and inner.starts[1] is iv and shape_of(inner.value)[1] == 1):
                derived.add(inner.result)
            elif not isinstance(inner, minun.YieldOp):
                return f"{inner.name} reads the feature map it writes"
    if op.body.block.last_op.values[k] not in derived:
        return "does not yield the feature map it writes"
    return k, n


def _fixup(v: SSAValue) -> tuple[str, tuple, tuple] | None:
    """A splice of `v` written back into `v`: ("columns", (), (splice, splice_assign)) when
    both span every row, ("row_copy", (a, b), ...) for row a copied into a later row b."""
    uses = list(v.uses)
    splices = [u.operation for u in uses if isinstance(u.operation, minun.SpliceOp)]
    assigns = [u.operation for u in uses
               if isinstance(u.operation, minun.SpliceAssignOp) and u.index == 1]
    if len(uses) != 2 or len(splices) != 1 or len(assigns) != 1:
        return None
    (sp,), (sa,) = splices, assigns
    if [u.operation for u in sp.result.uses] != [sa]:
        return None
    if sa.value is not sp.result or sp.parent_block() is not v.owner.parent_block():
        return None
    a, b = _const(sp.starts[1]), _const(sa.starts[1])
    h = shape_of(sp.result)[1]
    if h == shape_of(v)[1] and a == 0 and b == 0:
        return "columns", (), (sp, sa)
    if h == 1 and a is not None and b is not None and a < b:
        return "row_copy", (a, b), (sp, sa)
    return None


def _next(v: SSAValue, block: Block) -> Stage | str:
    """The stage that reads chain value `v`, or why there is none."""
    fix = _fixup(v)
    if fix is not None:
        kind, extra, ops = fix
        return Stage(ops[1], kind, src=v, extra=extra, ops=ops)
    uses = list(v.uses)
    if len(uses) != 1:
        return f"{len(uses)} uses of {v.name_hint or 'a value'}"
    nxt = uses[0].operation
    w = _window(nxt, v) if nxt.parent_block() is block else "in another block"
    if not isinstance(w, int):
        return f"{nxt.name}: {w}"
    return _stage(nxt, v, w)


def chains(block: Block) -> list[tuple[list[Stage], str]]:
    """Maximal chains in `block`: (stages, why the chain ends)."""
    seen: set[Operation] = set()
    out = []
    for first in list(block.ops):
        if first in seen or not first.results:
            continue
        prod = _producer(first)
        if isinstance(prod, tuple):
            stages = [Stage(first, "producer", extra=prod, ops=(first,))]
        elif first.operands and isinstance(_window(first, first.operands[0]), int):
            x = first.operands[0]
            stages = [_stage(first, x, _window(first, x))]
        else:
            continue
        while True:
            nxt = _next(stages[-1].result, block)
            if isinstance(nxt, str):
                why = nxt
                break
            if any(s.stride > 1 for s in stages) and (nxt.pad or nxt.side or nxt.kind != "op"):
                why = f"{nxt.op.name}: a row window or a side map after a row stride"
                break
            if nxt.stride > 1 and any(s.kind == "row_copy" for s in stages):
                why = f"{nxt.op.name}: a row stride after a row copy"
                break
            stages.append(nxt)
        lag = 0
        for s in stages:
            s.lag = lag
            lag += s.pad
        for s in stages:
            seen.update(s.ops)
        out.append((stages, why))
    return out


def ring_bytes(stages: list[Stage]) -> int:
    """The rings' bytes and the row buffers' of row copies."""
    return sum((2 * s.pad + 1) * _row_bytes(s.src) if s.pad else
               _row_bytes(s.src) if s.kind == "row_copy" else 0 for s in stages)


def replaced_bytes(stages: list[Stage]) -> int:
    """The feature maps inside the chain that lower-to-loops would store whole: a
    producer loop's, and those a kxk convolution reads that a convolution computed (too
    dear to recompute per tap), but a depthwise one's input, which it already reads
    through a window of rows (lower_to_loops.row_window)."""
    total, conv_before = 0, False
    for s in stages:
        if s.kind == "producer":
            total += _bytes(s.result)
        elif s.pad and conv_before and s.op.groups.value.data == 1:
            total += _bytes(s.src)
        conv_before = conv_before or isinstance(s.op, num.Conv2DOp)
    return total


def _affine(v: SSAValue, iv: SSAValue) -> tuple[int, int] | None:
    """(a, b) when index `v` is a * iv + b with constants a, b, else None."""
    c = _const(v)
    if c is not None:
        return 0, c
    if v is iv:
        return 1, 0
    op = v.owner
    if not isinstance(op, arith.MuliOp | arith.AddiOp | arith.SubiOp):
        return None
    x, y = _affine(op.lhs, iv), _affine(op.rhs, iv)
    if x is None or y is None or (isinstance(op, arith.MuliOp) and x[0] and y[0]):
        return None
    if isinstance(op, arith.MuliOp):
        return x[0] * y[1] + y[0] * x[1], x[1] * y[1]
    sign = 1 if isinstance(op, arith.AddiOp) else -1
    return x[0] + sign * y[0], x[1] + sign * y[1]


def _row_map(op: Operation, v: SSAValue):
    """For an op computing its result row by row from its operand `v` (a convolution of
    any row stride, an element-wise op with per-channel constants): rows [lo, hi) of the
    result -> the rows of `v` it reads; None for any other op."""
    h = shape_of(v)[1]
    if isinstance(op, num.Conv2DOp) and op.input is v and v not in (op.filter, op.bias):
        _, kh, _, _, _ = shape_of(op.filter)
        (sh, _), (dh, _) = minun.ints(op.strides), minun.ints(op.dilations)
        pt = minun.ints(op.pads)[0]
        return lambda lo, hi: (max(0, lo * sh - pt), min(h, (hi - 1) * sh - pt + (kh - 1) * dh + 1))
    if isinstance(op, ELEMENTWISE) and not isinstance(_window(op, v), str):
        return lambda lo, hi: (lo, hi)
    return None


def input_rows_read(loop: minun.LoopOp) -> tuple[SSAValue, list[tuple[int, int]]] | None:
    """The function input a producer loop reads, and the rows of it (as the (1, H, W, C)
    reshape of it the ops read) that iteration t reads, for each t: when every 4-D
    tensor the loop's body reads from outside is read through splices at rows
    a * t + b, and each is computed from the input alone by ops that compute a row from
    a bounded band of rows (convolutions, element-wise ops), each the only reader of
    the one before, from an identity reshape of the input. Else None."""
    iv = loop.body.block.args[0]
    inside = set(loop.walk())
    reads: dict[SSAValue, list[tuple[int, int, int]]] = {}
    for op in loop.body.walk():
        for v in op.operands:
            owner = v.owner.parent_op() if isinstance(v.owner, Block) else v.owner
            if owner in inside or _rows(v) is None:
                continue
            if isinstance(v.owner, Block) or v.owner.parent_block() is not loop.parent_block():
                return None
            if not isinstance(op, minun.SpliceOp) or op.input is not v:
                return None
            ab = _affine(op.starts[1], iv)
            if ab is None:
                return None
            reads.setdefault(v, []).append((*ab, minun.ints(op.sizes)[1]))
    if not reads:
        return None
    source, per_step = None, [(1 << 62, -1)] * loop.upper.value.data
    for v, splices in reads.items():
        if any(u.operation not in inside for u in v.uses):
            return None  # read after the loop too
        maps, x = [], v
        while not isinstance(x.owner, minun.ReshapeOp):
            op = x.owner
            if not isinstance(op, Operation) or len(op.operands) == 0:
                return None
            src = op.operands[0] if not isinstance(op, num.Conv2DOp) else op.input
            m = _row_map(op, src)
            if m is None or _rows(src) is None or len(list(src.uses)) != 1:
                return None
            maps.append(m)
            x = src
        reshape = x.owner
        inp = reshape.input
        if (minun.ints(reshape.order) != tuple(range(len(shape_of(inp))))
                or not isinstance(inp.owner, num.InputOp) or len(list(inp.uses)) != 1
                or (maps and len(list(x.uses)) != 1) or source not in (None, x)):
            return None
        source = x
        for t in range(len(per_step)):
            for a, b, size in splices:
                lo, hi = a * t + b, a * t + b + size
                for m in maps:
                    lo, hi = m(lo, hi)
                per_step[t] = (min(per_step[t][0], lo), max(per_step[t][1], hi))
    return source, per_step


def _shift(stages: list[Stage], src: SSAValue, last: list[int]) -> int | None:
    """How far above the chain's output `src` may start so that the output overwrites
    only rows of `src` no step reads any more (MCUNetV2's in-place update with a lag):
    output row r is written at step r + lag, and every row of `src` read at that step or
    later (`last[j]`: the last step reading row j) must lie above it. None when that
    saves nothing."""
    end = stages[-1].result
    ro, ri = _row_bytes(end), _row_bytes(src)
    shift = 0
    for r in range(shape_of(end)[1]):
        live = [j for j in range(len(last)) if last[j] >= _write_step(stages, r)]
        if live:
            shift = max(shift, (r + 1) * ro - min(live) * ri)
    align = max(end.type.element_type.width, src.type.element_type.width) // 8
    shift = -(-shift // align) * align
    return shift if shift < _bytes(end) else None


def _stream_init(v: SSAValue) -> minun.InitOp | None:
    """The init of a stream-rows output `v` (through its loops' carried values)."""
    while isinstance(v.owner, minun.LoopOp):
        v = v.owner.inits[v.index]
    op = v.owner
    return op if isinstance(op, minun.InitOp) and STREAM_ID in op.attributes else None


def _in_block(op: Operation, block: Block) -> Operation | None:
    while op is not None and op.parent_block() is not block:
        op = op.parent_op()
    return op


def overlay(stages: list[Stage]) -> tuple[str, int] | None:
    """What the chain's output may overwrite as the sweep goes, and the shift (_shift):
    ("input", shift) for the function input its producer loop reads (the image), or
    (id, shift) for its input map when that is an earlier stream-rows output (stream_rows_id)
    read only by the chain and by loops before it (a residual block's input). None
    otherwise."""
    if stages[0].kind == "producer":
        found = input_rows_read(stages[0].op)
        if found is None:
            return None
        xt, per_step = found
        last = [-1] * shape_of(xt)[1]
        for t, (lo, hi) in enumerate(per_step):
            for j in range(max(lo, 0), min(hi, len(last))):
                last[j] = t
        shift = _shift(stages, xt, last)
        return None if shift is None else ("input", shift)
    w = stages[0].src
    init = _stream_init(w) if w is not None else None
    if init is None:
        return None
    block, first = stages[0].op.parent_block(), stages[0].op
    lags = []
    for u in w.uses:
        st = next((s for s in stages if u.operation in s.ops), None)
        if st is not None:
            lags.append(st.lag)
            continue
        top = _in_block(u.operation, block)
        if not (isinstance(top, minun.LoopOp) and top.is_before_in_block(first)):
            return None  # read after the chain, or by an op lower-to-loops may defer
    shift = _shift(stages, w, [j + max(lags) for j in range(shape_of(w)[1])])
    return None if shift is None else (str(init.attributes[STREAM_ID].value.data), shift)


def overlay_saving(stages: list[Stage], over: tuple[str, int] | None) -> int:
    """Bytes the overlay saves: the output and the map it overwrites held apart, or as
    one buffer (the function input counts only when it is planned in the scratch)."""
    if over is None or stages[0].kind == "producer":
        return 0
    out, src = _bytes(stages[-1].result), _bytes(stages[0].src)
    return out + src - max(out, over[1] + src)


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


def _strided(stages: list[Stage]) -> int:
    """The index of the chain's strided stage (at most one), else the last index."""
    return next((i for i, s in enumerate(stages) if s.stride > 1), len(stages) - 1)


def _out_step(st: Stage, r: int) -> int:
    """The step at which a kxk stage computes its output row r (its last row pushed)."""
    kh = shape_of(st.op.filter)[1]
    return st.lag + st.stride * r + kh - 1 - st.pad


def _write_step(stages: list[Stage], r: int) -> int:
    """The step at which the chain writes its output row r."""
    st = stages[_strided(stages)]
    if st.stride == 1:
        return r + stages[-1].lag + stages[-1].pad
    return _out_step(st, r)


def _height(s: Stage) -> int:
    """The rows of the stage's input (a producer's: of its result)."""
    return shape_of(s.src if s.src is not None else s.result)[1]


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
    for s in stages:
        if s.pad:
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
    for i, s in enumerate(stages):
        height = _height(s)
        r_in = step - s.lag  # this segment's first input row: its steps agree on signs
        has_in = 0 <= r_in < height
        if s.kind == "producer":
            k, n = s.extra
            row = (body.producer(s.op, k, vals, s.slots) if r_in < n else
                   body.zero_row(s.result) if has_in else None)
        elif s.kind == "columns":
            sp, sa = s.ops
            row = body.copy(sp, sa, row, row) if row is not None else None
        elif s.kind == "row_copy":
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
            if has_in:
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
        f"buffers {sum(1 for s in stages if s.pad or s.kind == 'row_copy')} "
        f"ring bytes {ring_bytes(stages)} feature maps replaced {replaced_bytes(stages)} B "
        f"recomputation 0" + ("" if over is None else
                              f" over {'the input' if over[0] == 'input' else 'map ' + over[0]}"
                              f" at {over[1]} B"))
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


def _operand(op: Operation) -> SSAValue | None:
    """The (1, H, W, C) operand an op computes its rows from, if it has exactly one."""
    if isinstance(op, num.Conv2DOp):
        return op.input
    found = [o for o in op.operands if _rows(o) is not None]
    return found[0] if len(found) == 1 else None


def _prefix(v: SSAValue, block: Block) -> list[Operation]:
    """The ops computing `v` pixel by pixel (row windows of one row: element-wise ops,
    normaliseL2, 1x1 convolutions), in order, back to the first value with other
    readers or made otherwise."""
    ops: list[Operation] = []
    x = v
    while isinstance(x.owner, Operation) and x.owner.parent_block() is block:
        op, src = x.owner, _operand(x.owner)
        if src is None or _window(op, src) != 0:
            break
        ops.append(op)
        x = src
        if len(list(x.uses)) != 1:
            break
    return ops[::-1]


def _branch(op: Operation, v: SSAValue, block: Block) -> list[Stage]:
    """The chain from `op` (reading `v`) to where it ends."""
    stages = [Stage(op, pad=_window(op, v), src=v, ops=(op,))]
    while not isinstance(nxt := _next(stages[-1].result, block), str):
        stages.append(nxt)
    return stages


def _pays(op: Operation, v: SSAValue, block: Block, every: bool) -> bool:
    """Whether the chain from `op` reaches a kxk convolution whose rings are smaller than
    `v` and the maps the chain replaces (any kxk convolution when `every`)."""
    stages = _branch(op, v, block)
    if not any(s.pad for s in stages):
        return False
    return every or _bytes(v) + replaced_bytes(stages) > ring_bytes(stages)


def _cost(ops: list[Operation]) -> tuple[int, int]:
    """(MACs of the convolutions, elements of the other ops' results) of `ops`."""
    macs = elements = 0
    for op in ops:
        n = math.prod(shape_of(op.results[0]))
        if isinstance(op, num.Conv2DOp):
            _, kh, kw, cin, _ = shape_of(op.filter)
            macs += n * kh * kw * cin
        else:
            elements += n
    return macs, elements


def duplicate_forks(block: Block, every: bool = False) -> list[str]:
    """A value computed pixel by pixel that several chains read through kxk windows
    (detection heads after a normalisation) would be held whole between them: each
    reader after the first gets its own copy of the ops computing it (the recomputation,
    reported in MACs and elements, and marked on the copies), so that each chain
    streams with its own ring."""
    report = []
    for op in list(block.ops):
        for v in op.results:
            users = [u.operation for u in v.uses]
            if (len(users) < 2 or _rows(v) is None
                    or any(u.parent_block() is not block for u in users)
                    or any(not isinstance(_window(u, v), int) or _operand(u) is not v
                           for u in users)
                    or not all(_pays(u, v, block, every) for u in users)):
                continue
            prefix = _prefix(v, block)
            if not any(isinstance(p, num.Conv2DOp) for p in prefix):
                continue  # not a map replaced_bytes counts: its chains would be refused
            macs, elements = _cost(prefix)
            note = (f"{len(prefix)} ops of {v.name_hint or 'a value'} computed again for "
                    f"each of {len(users) - 1} more readers: recomputation {macs} MACs "
                    f"{elements} elements each")
            for u in users[1:]:
                mapper: dict[SSAValue, SSAValue] = {}
                copies = [p.clone(value_mapper=mapper) for p in prefix]
                for c in copies:
                    Rewriter.insert_op(c, InsertPoint.before(u))
                copies[0].attributes["stream_rows_recomputed"] = StringAttr(note)
                u.operands[list(u.operands).index(v)] = copies[-1].results[0]
            report.append(f"duplicated: {note}")
    return report


def recomputation(report: list[str]) -> tuple[int, int]:
    """(MACs, elements) the decisions in `report` compute again (duplicate_forks' lines;
    line buffering itself computes every row once)."""
    macs = elements = 0
    for line in report:
        if line.startswith("duplicated: "):
            words = line.split()
            readers = int(words[words.index("more") - 1])
            at = words.index("recomputation")
            macs += readers * int(words[at + 1])
            elements += readers * int(words[at + 3])
    return macs, elements


def conv_macs(module: ModuleOp) -> int:
    """The multiply-accumulates of a module's convolutions (for the recomputation's share)."""
    return _cost([op for op in module.walk() if isinstance(op, num.Conv2DOp)])[0]


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
