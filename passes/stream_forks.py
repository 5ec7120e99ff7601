"""stream-rows' forks: a map computed pixel by pixel that several chains read through
kxk windows (detection heads after a normalisation) is computed again for each reader
after the first, when each reader's chain then pays, so that each streams with its own
ring; the recomputation is reported (MACs and elements) and marked on the copies."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from minun_mlir.dialects import num
from minun_mlir.modules import shape_of
from minun_mlir.passes.stream_chains import (
    Stage,
    _bytes,
    _next,
    _operand,
    _prefix,
    _rows,
    _window,
    replaced_bytes,
    ring_bytes,
)


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
