"""Loop-invariant requantizations moved out of `minun.loop` bodies (zero-skew).

TFLite's ADD/SUB requantizes both operands to int32 before the sum; in ProtoNN's
`WX - B[i]` the `WX` side does not depend on the prototype, yet it sat inside the loop
over prototypes and was requantized again each iteration (a 32x32-bit multiply an
element, 40 times over on the Uno). A `num.requantize` whose operand is defined outside
the loop computes the same integers before it: it is moved there, out of every
enclosing loop it does not depend on, so lower-to-loops computes it once (into a
buffer). Pure code motion: the evaluators compute the same integers. Only values of at
most MAX_BYTES are moved (the buffer is live across the loop: RAM on the Uno).
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation

from minun_mlir.dialects import minun, num

MAX_BYTES = 256


def _defined_in(value, block: Block) -> bool:
    """Whether `value` is defined in `block` or in a region nested in it."""
    owner = value.owner
    b = owner if isinstance(owner, Block) else owner.parent_block()
    while b is not None:
        if b is block:
            return True
        parent = b.parent_op()
        b = parent.parent_block() if parent is not None else None
    return False


def _small(op: Operation) -> bool:
    t = op.results[0].type
    if not isinstance(t, TensorType):
        return True
    el = t.element_type
    return math.prod(t.get_shape()) * max(1, el.width // 8) <= MAX_BYTES


def hoist_requantizes(module: ModuleOp) -> None:
    """Move each loop-invariant num.requantize in front of the outermost minun.loop
    whose body does not define its operand."""
    for op in list(module.walk()):
        if not isinstance(op, num.RequantizeOp) or not _small(op):
            continue
        target = None
        loop = op.parent_op()
        while isinstance(loop, minun.LoopOp) and not _defined_in(op.input,
                                                                 loop.body.block):
            target = loop
            loop = loop.parent_op()
        if target is not None:
            op.detach()
            target.parent_block().insert_op_before(op, target)
