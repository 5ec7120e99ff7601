"""What stream-rows (passes/stream_rows.py) streams: a chain's stages, the row window each
op reads of its operand, how chains are found, their rings' bytes and the maps they
replace, and the step at which each stage has each row. Apart from the rewriting, so
that the overlay analysis (stream_overlay.py) and the forks (stream_forks.py) read it
too."""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.ir import Block, Operation, SSAValue

from minun_mlir.dialects import minun, num
from minun_mlir.dialects.num import FixedType
from minun_mlir.modules import shape_of

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


def _columns_of(op: Operation, c: int) -> tuple[int, int, bool] | None:
    """(first column, columns, every channel) a fix-up splice or splice_assign `op` of a
    (1, H, W, c) map touches, or None when its starts are not constants."""
    starts = [_const(v) for v in op.starts]
    sizes = minun.ints(op.sizes) if isinstance(op, minun.SpliceOp) else shape_of(op.value)
    if None in starts[2:]:
        return None
    return starts[2], sizes[2], starts[3] == 0 and sizes[3] == c


def repeats_row(stages: list[Stage], i: int) -> bool:
    """Whether row copy stage i (row a into row b = a + 1) needs no buffer: when every
    stage after it up to the first ring is row-local (no map read beside the chain, the
    same lag) and, after the column fix-ups between, row b equals row a in every column,
    the row the ring would get at step b is the one it got at step a, its newest row; the
    ring then pushes that row again (its rows moved down, the last one kept) and the copy,
    the kept row and the ops computing row b are left out (less RAM and less work)."""
    s = stages[i]
    if (s.kind != "row_copy" or s.extra[1] != s.extra[0] + 1
            or any(t.pad or t.lag != s.lag for t in stages[:i])):
        return False
    _, _, w, c = shape_of(s.src)
    sp, sa = s.ops
    src, dst = _columns_of(sp, c), _columns_of(sa, c)
    if src is None or src != dst or not src[2]:
        return False
    equal = set(range(src[0], src[0] + src[1]))
    for t in stages[i + 1:]:
        if t.lag != s.lag or t.side or t.kind not in ("op", "columns"):
            return False
        if t.pad:
            return t.stride == 1 and len(equal) == w
        if t.kind == "columns":
            frm, to = (_columns_of(o, c) for o in t.ops)
            if frm is None or to is None or not frm[2] or not to[2]:
                return False
            cols = set(range(to[0], to[0] + to[1]))
            equal = (equal | cols if set(range(frm[0], frm[0] + frm[1])) <= equal
                     else equal - cols)
    return False


def ring_bytes(stages: list[Stage]) -> int:
    """The rings' bytes and the row buffers' of row copies (none for a row the ring
    repeats: repeats_row)."""
    return sum((2 * s.pad + 1) * _row_bytes(s.src) if s.pad else
               _row_bytes(s.src) if s.kind == "row_copy" and not repeats_row(stages, i)
               else 0 for i, s in enumerate(stages))


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
