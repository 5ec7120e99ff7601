"""Packed 4-bit weights at L3 (formats/int4/weights.py): the constant globals of
`packed_bits = 4` parameters hold two codes per byte, and every read of one becomes
explicit arith ops, so the C printer and the target kernels need no case of their own.

The globals are written unpacked while the function is lowered (the skeleton's
re-layouts, transposed matmul operands and [g][co][ky][kx][c] filters, read them as
codes) and packed once at the end (`pack_globals`): a read of code i becomes

    %b  = memref.load %w[i >> 1]                     byte i / 2
    %lo = arith.shrsi (arith.shli %b, 4), 4          (int8_t)(b << 4) >> 4
    %hi = arith.shrsi %b, 4                          (int8_t)b >> 4
    %v  = arith.select ((i & 1) != 0), %hi, %lo

folded to one of %lo / %hi when i is a constant.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Block, Operation, SSAValue

from minun_mlir.diagnostics import error
from minun_mlir.formats.int4 import weights as int4

I8 = IntegerType(8)


def pack_globals(module_ops: list[Operation], body: Block, names: set[str]) -> None:
    """Pack the globals named in `names` (in place in `module_ops`) and rewrite their
    reads in `body`."""
    if not names:  # nothing to pack: no walk over the body
        return
    types: dict[str, MemRefType] = {}
    for k, op in enumerate(module_ops):
        if isinstance(op, memref.GlobalOp) and op.sym_name.data in names:
            codes = np.frombuffer(op.initial_value.data.data, dtype="<i1")
            data = np.frombuffer(int4.pack(codes.tolist()), dtype="<i1")
            ty = MemRefType(I8, [data.size])
            dense = DenseIntOrFPElementsAttr(TensorType(I8, [data.size]),
                                             BytesAttr(data.tobytes()))
            module_ops[k] = memref.GlobalOp.get(StringAttr(op.sym_name.data), ty, dense,
                                                constant=UnitAttr())
            types[op.sym_name.data] = ty
    for get in [op for op in body.walk() if isinstance(op, memref.GetGlobalOp)]:
        name = get.name_.root_reference.data
        if name not in types:
            continue
        new = memref.GetGlobalOp(name, types[name])
        new.results[0].name_hint = get.results[0].name_hint
        body.insert_op_before(new, get)
        for use in list(get.results[0].uses):
            if not isinstance(use.operation, memref.LoadOp):
                raise error(f"lower-to-loops: packed weights {name} read by "
                            f"{use.operation.name}, not memref.load")
            _unpack(use.operation, new.results[0])
        get.detach()
        get.erase()


def _unpack(load: memref.LoadOp, ref: SSAValue) -> None:
    """Replace `load` (code i of a packed global) by the byte read and the nibble's sign
    extension."""
    block = load.parent_block()
    ops: list[Operation] = []

    def add(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    def const(v: int, ty) -> SSAValue:
        return add(arith.ConstantOp(IntegerAttr(v, ty), ty))

    (index,) = load.indices
    four = const(4, I8)
    known = index.owner.value.value.data if isinstance(index.owner, arith.ConstantOp) \
        else None
    if known is not None:
        byte = add(memref.LoadOp.get(ref, [const(known >> 1, IndexType())]))
    else:
        byte = add(memref.LoadOp.get(ref, [add(arith.ShRSIOp(index, const(1, IndexType())))]))
    if known is None or known % 2:
        hi = add(arith.ShRSIOp(byte, four))
    if known is None or not known % 2:
        lo = add(arith.ShRSIOp(add(arith.ShLIOp(byte, four)), four))
    if known is None:
        odd = add(arith.AndIOp(index, const(1, IndexType())))
        value = add(arith.SelectOp(add(arith.CmpiOp(odd, const(0, IndexType()), "ne")),
                                   hi, lo))
    else:
        value = hi if known % 2 else lo
    for op in ops:
        block.insert_op_before(op, load)
    load.results[0].replace_all_uses_with(value)
    load.detach()
    load.erase()
