"""Leaves of the dataflow: the input, parameters (globals, or splats when constant) and
`minun.init` fills, plus L2's i32 scalars (loop indices, tree nodes), which become
`index` arithmetic. Kept apart because they read no other tensor value."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from minun_mlir.dialects import minun, num
from minun_mlir.dialects.num import FixedType
from minun_mlir.formats.fixed import arith as fx
from minun_mlir.lowering.loops.builder import Lin
from minun_mlir.lowering.loops.values import Buf, Const, Val, element_of, shape_of, storage

if TYPE_CHECKING:
    from minun_mlir.lowering.lower_to_loops import Lowering


def lower_input(lw: Lowering, op: num.InputOp) -> Val:
    """A view of the entry's input buffer (several inputs lie one after another in it)."""
    return Buf(lw.x, shape_of(op.result), element_of(op.result),
               Lin(lw.input_offsets.get(op, 0)))


def lower_param(lw: Lowering, op: num.ParamOp) -> Val:
    values = op.array()
    el = element_of(op.result)
    shape = shape_of(op.result)
    if op.sparse is not None and all(isinstance(u.operation, num.SparseMatMulOp)
                                     and u.index == 0 for u in op.result.uses):
        return Const(0, shape, el)  # only the compressed copy is stored (sparse_matmul)
    flat = values.reshape(-1)
    if flat.size and np.all(flat == flat[0]):
        return Const(flat[0].item(), shape, el)
    buf = lw.g.global_("p_" + op.sym_name.data, values, storage(el))
    if op.packed_bits is not None:  # stored two codes per byte (packed.py)
        lw.packed.add(buf.ref.owner.name_.root_reference.data)
    return Buf(buf, shape, el)


def lower_init(lw: Lowering, op: minun.InitOp) -> Val:
    el = element_of(op.result)
    fill = float(op.fill.value.data)
    if isinstance(el, FixedType):
        q = int(fx.quantize(np.array(fill), el.width, el.frac, lw.rounding))
        return Const(q, shape_of(op.result), el)
    return Const(float(np.float32(fill)), shape_of(op.result), el)


def lower_constant(lw: Lowering, op: arith.ConstantOp) -> SSAValue:
    return lw.g.index(op.value.value.data)


def lower_index_arith(lw: Lowering, op: arith.AddiOp | arith.SubiOp | arith.MuliOp
                      ) -> SSAValue:
    a, b = (lw.ints[v] for v in op.operands)
    return lw.g.binop(type(op), a, b, nsw=True)


HANDLERS: dict[type[Operation], Callable[[Lowering, Any], Any]] = {
    num.InputOp: lower_input,
    num.ParamOp: lower_param,
    minun.InitOp: lower_init,
    arith.ConstantOp: lower_constant,
    arith.AddiOp: lower_index_arith,
    arith.SubiOp: lower_index_arith,
    arith.MuliOp: lower_index_arith,
}
