"""Fuse the decomposed layer normalisation of older exporters into one node.

Exporters before opset 17 (and models that write their own LayerNorm or RMSNorm) spell
the normalisation as `d / Sqrt(ReduceMean(Pow(d, 2)) + eps)` (or as `d` times
`Reciprocal(Sqrt(...))`), with `d = x - mean(x)` for a LayerNorm. A division by a run-time
square root has no integer form, but the whole expression is an L2 normalisation
(reduce.py), so the Div (or Mul) becomes one `minun:RmsNorm(d)` node (axes, epsilon) and
the Pow, ReduceMean, Add, Sqrt (and Reciprocal) that nothing else reads are dropped. The
Sub, the scale Mul and the bias Add stay ordinary nodes. A chain node read elsewhere stays
(a Sqrt then is reported as unsupported); axes other than the trailing ones are refused by
the RmsNorm handler.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

FUSED_DOMAIN = "minun"  # the importer's own fused nodes (no ONNX schema)


def _attr(node: onnx.NodeProto, name: str, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _array(t: onnx.TensorProto) -> np.ndarray | None:
    """The tensor's values, or None for a damaged one (its data does not fit its shape):
    left for the importer, which reports it at its name."""
    try:
        return numpy_helper.to_array(t)
    except Exception:  # numpy_helper raises ValueError, TypeError, ... on damaged data
        return None


def _constants(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    out = {t.name: a for t in graph.initializer if (a := _array(t)) is not None}
    for n in graph.node:
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and n.output:
            value = _attr(n, "value", None)
            array = _array(value) if isinstance(value, onnx.TensorProto) else None
            if array is not None:
                out[n.output[0]] = array
    return out


def _match(div: onnx.NodeProto, writer: dict, consts: dict, opset: int):
    """(chain nodes, axes, eps) when `div` is d / Sqrt(ReduceMean(d^2) + eps), or a Mul
    of d by Reciprocal(Sqrt(...)) (either order), else None."""
    d, den = div.input[0], div.input[1]
    recip = None
    if div.op_type == "Mul":
        for a, b in ((div.input[0], div.input[1]), (div.input[1], div.input[0])):
            w = writer.get(b)
            if w is not None and w.op_type == "Reciprocal":
                d, den, recip = a, w.input[0], w
                break
        else:
            return None
    sqrt = writer.get(den)
    if sqrt is None or sqrt.op_type != "Sqrt":
        return None
    add = writer.get(sqrt.input[0])
    if add is None or add.op_type != "Add":
        return None
    eps_name = next((i for i in add.input if i in consts and consts[i].size == 1), None)
    if eps_name is None:
        return None
    mean = writer.get(next(i for i in add.input if i != eps_name))
    if mean is None or mean.op_type != "ReduceMean" or not _attr(mean, "keepdims", 1):
        return None
    if opset >= 18:
        axes = consts.get(mean.input[1]) if len(mean.input) > 1 and mean.input[1] else None
    else:
        axes = _attr(mean, "axes", None)
    if axes is None:
        return None
    square = writer.get(mean.input[0])
    if square is None:
        return None
    if square.op_type == "Pow":
        exponent = consts.get(square.input[1])
        if square.input[0] != d or exponent is None or exponent.size != 1 or \
                float(exponent.reshape(-1)[0]) != 2.0:
            return None
    elif square.op_type != "Mul" or list(square.input) != [d, d]:
        return None
    eps = float(consts[eps_name].reshape(-1)[0])
    chain = [sqrt, add, mean, square] + ([recip] if recip is not None else [])
    return chain, [int(a) for a in np.asarray(axes).reshape(-1)], eps


def fuse_rms_norm(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with each decomposed normalisation fused (the input when there is none)."""
    graph = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    writer = {o: n for n in graph.node for o in n.output}
    consts = _constants(graph)
    fused: dict[int, onnx.NodeProto] = {}
    chains: list[list[onnx.NodeProto]] = []
    for k, node in enumerate(graph.node):
        if node.op_type not in ("Div", "Mul") or node.domain not in ("", "ai.onnx"):
            continue
        found = _match(node, writer, consts, opset)
        if found is None:
            continue
        chain, axes, eps = found
        d = node.input[0] if node.op_type == "Div" else next(
            i for i in node.input if i != chain[-1].output[0])
        fused[k] = helper.make_node("RmsNorm", [d], list(node.output),
                                    name=node.name, domain=FUSED_DOMAIN, axes=axes,
                                    epsilon=eps)
        chains.append(chain)
    if not fused:
        return model
    out = onnx.ModelProto()
    out.CopyFrom(model)
    nodes = [fused.get(k, n) for k, n in enumerate(graph.node)]
    # drop the chain nodes nothing reads any more (repeat: each one frees the next)
    dead = {n.output[0] for chain in chains for n in chain}
    while True:
        read = {i for n in nodes for i in n.input} | {o.name for o in graph.output}
        drop = {n.output[0] for n in nodes if n.output[0] in dead and n.output[0] not in read}
        if not drop:
            break
        nodes = [n for n in nodes if n.output[0] not in drop]
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    out.opset_import.append(helper.make_opsetid(FUSED_DOMAIN, 1))
    return out
