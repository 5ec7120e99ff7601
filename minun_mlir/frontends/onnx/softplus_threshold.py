"""Drop the threshold PyTorch's dynamo exporter writes around nn.Softplus.

`nn.Softplus(beta, threshold)` returns x where beta x > threshold (default 20), else
softplus(beta x) / beta; the dynamo exporter spells it Where(Greater(s, T), x, b) with
s = x (beta 1) or Mul(x, beta), b = Softplus(s) or Div(Softplus(s), beta). Where beta x > T
the two branches differ by log1p(e^(-beta x)) / beta < e^(-T) / beta, below float32's
resolution of x there once T >= 17 (e^-17 < 2^-24 T), so the Where is b: its output
becomes an Identity of b and the Greater, read by nothing else, is dropped. Any other
Where (or a smaller T) is left alone, and reported as unsupported at import.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import helper

from .fuse import _constants

MIN_THRESHOLD = 17.0


def _scalar(consts: dict, name: str) -> float | None:
    v = consts.get(name)
    return float(np.asarray(v).reshape(())) if v is not None and np.asarray(v).size == 1 \
        else None


def _softplus_of(b: str, writer: dict, consts: dict) -> tuple[str, float] | None:
    """(s, beta) when b is Softplus(s) (beta 1) or Div(Softplus(s), beta)."""
    node = writer.get(b)
    beta = 1.0
    if node is not None and node.op_type == "Div":
        beta = _scalar(consts, node.input[1])
        node = writer.get(node.input[0])
        if beta is None or not beta > 0:
            return None
    if node is None or node.op_type != "Softplus":
        return None
    return node.input[0], beta


def _matches(where: onnx.NodeProto, writer: dict, consts: dict) -> bool:
    cond, x, b = where.input
    greater = writer.get(cond)
    sp = _softplus_of(b, writer, consts)
    if greater is None or greater.op_type != "Greater" or sp is None:
        return False
    s, beta = sp
    t = _scalar(consts, greater.input[1])
    if greater.input[0] != s or t is None or not math.isfinite(t) or t < MIN_THRESHOLD:
        return False
    if s == x:
        return beta == 1.0
    mul = writer.get(s)
    if mul is None or mul.op_type != "Mul" or x not in mul.input:
        return False
    other = mul.input[1] if mul.input[0] == x else mul.input[0]
    return _scalar(consts, other) == beta


def drop_softplus_threshold(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with each thresholded Softplus' Where made an Identity (a copy; the
    model itself when there is none)."""
    graph = model.graph
    if not any(n.op_type == "Where" for n in graph.node):
        return model
    writer = {o: n for n in graph.node for o in n.output}
    consts = _constants(graph)
    hits = [i for i, n in enumerate(graph.node) if n.op_type == "Where"
            and n.domain in ("", "ai.onnx") and len(n.input) == 3 and
            _matches(n, writer, consts)]
    if not hits:
        return model
    out = onnx.ModelProto()
    out.CopyFrom(model)
    nodes = list(out.graph.node)
    for i in hits:
        where = nodes[i]
        nodes[i] = helper.make_node("Identity", [where.input[2]], list(where.output),
                                    name=where.name)
    readers = {name for n in nodes for name in n.input}
    readers |= {o.name for o in out.graph.output}
    kept = [n for n in nodes if not (n.op_type == "Greater" and not any(
        o in readers for o in n.output))]
    del out.graph.node[:]
    out.graph.node.extend(kept)
    return out
