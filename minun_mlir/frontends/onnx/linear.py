"""MatMul and Gemm on the 2-D `minun.matmul`.

N-D MatMul against a 2-D matrix (the common `[batch, time, features] x W`) flattens the
leading dimensions into rows: one matmul. Batched MatMul of two N-D operands is unrolled
over the (broadcast) batch, which is right for the small batches of MCU models.
Constant scale factors (Gemm's alpha and beta) are folded into constant operands at
import, so the program has no extra multiplications.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from minun_mlir.dialects import minun

from .importer import Importer, Node, Value

MAX_UNROLLED_BATCH = 256


def matmul2d(imp: Importer, a: Value, b: Value) -> Value:
    return Value.of(imp.make(minun.MatMulOp, imp.ir(a, (0, 1)), imp.ir(b, (0, 1))))


def _batch_item(imp: Importer, v: Value, index: tuple[int, ...]) -> Value:
    """The 2-D matrix at batch position `index` (broadcast: size-1 batch dims repeat)."""
    lead = v.rank - 2
    index = index[len(index) - lead:] if lead else ()
    for axis, i in enumerate(index):
        if v.shape[axis] != 1:
            v = imp.slice(v, axis, i, 1)
    return imp.reshape(v, v.shape[-2:])


def _matmul(imp: Importer, node: Node) -> list[Value]:
    a, b = node.inputs[0], node.inputs[1]
    if a.rank == 0 or b.rank == 0:
        raise imp.error("MatMul operands must have rank >= 1")
    # numpy semantics: a 1-D lhs is a row, a 1-D rhs a column; the added dim is dropped.
    a2 = imp.reshape(a, (1, a.shape[0])) if a.rank == 1 else a
    b2 = imp.reshape(b, (b.shape[0], 1)) if b.rank == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise imp.error(f"inner dimensions differ: {minun.shape_str(a.shape)} x "
                        f"{minun.shape_str(b.shape)}")
    try:
        batch = tuple(np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]))
    except ValueError:
        raise imp.error(f"batch dimensions of {minun.shape_str(a.shape)} and "
                        f"{minun.shape_str(b.shape)} do not broadcast") from None
    m, n = a2.shape[-2], b2.shape[-1]
    if b2.rank == 2:
        rows = imp.reshape(a2, (math.prod(a2.shape[:-1]), a2.shape[-1]))
        out = imp.reshape(matmul2d(imp, rows, b2), (*batch, m, n))
    else:
        count = math.prod(batch)
        if count > MAX_UNROLLED_BATCH:
            raise imp.error(f"batched MatMul over {count} matrices would be unrolled; at most "
                            f"{MAX_UNROLLED_BATCH} are supported")
        parts = []
        for index in itertools.product(*(range(d) for d in batch)):
            y = matmul2d(imp, _batch_item(imp, a2, index), _batch_item(imp, b2, index))
            parts.append(imp.reshape(y, (1, m, n)))
        out = imp.reshape(imp.concat(parts, 0), (*batch, m, n))
    shape = out.shape
    if a.rank == 1:
        shape = shape[:-2] + shape[-1:]
    if b.rank == 1:
        shape = shape[:-1]
    return [imp.reshape(out, shape)]


def _scaled(v: Value, factor: float) -> Value | None:
    """v * factor folded at import when v is constant (the name is kept: it is still that
    parameter, pre-scaled)."""
    if factor == 1.0:
        return v
    if v.array is None:
        return None
    return Value.const((v.array * np.float32(factor)).astype(v.array.dtype), v.name)


def _gemm(imp: Importer, node: Node) -> list[Value]:
    a, b, c = node.inputs[0], node.inputs[1], node.input(2)
    if a.rank != 2 or b.rank != 2:
        raise imp.error(f"Gemm needs 2-D A and B, got {minun.shape_str(a.shape)} and "
                        f"{minun.shape_str(b.shape)}")
    if int(node.attr("transA", 0)):
        a = imp.transpose(a, (1, 0))
    if int(node.attr("transB", 0)):
        b = imp.transpose(b, (1, 0))
    alpha, beta = float(node.attr("alpha", 1.0)), float(node.attr("beta", 1.0))
    scaled_b, scaled_a = _scaled(b, alpha), _scaled(a, alpha)
    if scaled_b is not None:
        y = matmul2d(imp, a, scaled_b)
    elif scaled_a is not None:
        y = matmul2d(imp, scaled_a, b)
    else:
        y = matmul2d(imp, a, b)
        factor = imp.materialize(np.array(alpha, dtype=np.float32), "alpha")
        y = Value.of(imp.make(minun.ScalarMulOp, factor, imp.ir(y)))
    if c is None or beta == 0.0:
        return [y]
    scaled_c = _scaled(c, beta)
    if scaled_c is None:
        factor = imp.materialize(np.array(beta, dtype=np.float32), "beta")
        scaled_c = Value.of(imp.make(minun.ScalarMulOp, factor, imp.ir(c)))
    return [imp.binary(minun.AddOp, y, scaled_c, bias=minun.BiasAddOp)]


HANDLERS = {
    "MatMul": _matmul,
    "Gemm": _gemm,
}
