"""stream-rows' overlays (MCUNetV2's in-place update with a lag): which map a streamed
chain's output may overwrite as its sweep consumes it (the function input a producer loop
reads, or an earlier stream's output), and by how many bytes the overwritten map must
start above the output (passes/stream_rows.py marks it; memory-plan places the pair)."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import Block, Operation, SSAValue

from minun_mlir.dialects import minun, num
from minun_mlir.modules import shape_of
from minun_mlir.passes.stream_chains import (
    ELEMENTWISE,
    STREAM_ID,
    Stage,
    _bytes,
    _const,
    _row_bytes,
    _rows,
    _window,
    _write_step,
)


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
