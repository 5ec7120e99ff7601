"""Fold an inference BatchNormalization into the Conv, Gemm or MatMul(+Add) before it.

BatchNormalization computes `y = a (x - mean) + bias` per channel (axis 1), with
`a = scale / sqrt(var + epsilon)`. When `x` is the output of a Conv, a Gemm or a MatMul
(optionally followed by an Add of a constant) whose weights are initializers, and nothing
else reads `x`, the product folds into that op: the weights of output channel `c` are
multiplied by `a[c]` and the bias becomes `a (b - mean) + bias` (b: the op's bias, 0 when
it has none). The graph then computes the same function with one operator less, and every
representation quantizes one weight and one bias instead of a separate batch norm (the
scale of each channel is exact in float, not rounded to the activations' grid twice).
This is what onnxruntime's graph optimizer (and PyTorch's dynamo export) does; the folding
runs in float64 and stores float32, as the model's initializers.

A batch norm that does not follow such an op (a run-time weight, an `x` read by another
node or a graph output, training mode, a Gemm bias of more than one row) is left alone and
imported as `minun.batchnorm`.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper


def _attr(node: onnx.NodeProto, name: str, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _subgraph_names(node: onnx.NodeProto) -> set[str]:
    """Every name the node's subgraphs (If, Loop, Scan bodies) read, at any depth: an
    outer value they read by name counts as a reader of it."""
    names: set[str] = set()
    for a in node.attribute:
        for g in (*([a.g] if a.HasField("g") else []), *a.graphs):
            for n in g.node:
                names.update(n.input)
                names.update(_subgraph_names(n))
    return names


def fold_batchnorm(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` with every foldable BatchNormalization folded (the model itself
    is returned unchanged when there is none)."""
    graph = model.graph
    if not any(n.op_type == "BatchNormalization" and n.domain in ("", "ai.onnx")
               for n in graph.node):
        return model
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    inits = {t.name: t for t in graph.initializer}
    try:
        inferred = onnx.shape_inference.infer_shapes(model).graph
    except Exception:  # noqa: BLE001 - no ranks: Gemm and MatMul are not folded
        inferred = onnx.GraphProto()
    rank = {v.name: len(v.type.tensor_type.shape.dim)
            for v in (*inferred.value_info, *inferred.input, *inferred.output)
            if v.type.tensor_type.HasField("shape")}
    producer = {o: n for n in graph.node for o in n.output}
    readers: dict[str, int] = {}
    for n in graph.node:
        for i in (*n.input, *_subgraph_names(n)):
            readers[i] = readers.get(i, 0) + 1
    outputs = {o.name for o in graph.output}
    fresh = iter(range(1 << 30))

    def const(name: str) -> np.ndarray | None:
        t = inits.get(name)
        return None if t is None else numpy_helper.to_array(t).astype(np.float64)

    def single_use(name: str) -> bool:
        return readers.get(name, 0) == 1 and name not in outputs

    def new_init(base: str, value: np.ndarray, like: str | None) -> str:
        dtype = numpy_helper.to_array(inits[like]).dtype if like in inits else np.float32
        name = f"{base}_bnfold{next(fresh)}"
        while name in inits or name in producer:
            name = f"{base}_bnfold{next(fresh)}"
        t = numpy_helper.from_array(value.astype(dtype), name)
        graph.initializer.append(t)
        inits[name] = t
        return name

    removed: set[int] = set()
    for bn in list(graph.node):
        if bn.op_type != "BatchNormalization" or bn.domain not in ("", "ai.onnx"):
            continue
        if int(_attr(bn, "training_mode", 0)) or len(bn.output) > 1 and any(bn.output[1:]):
            continue
        if opset < 9 and not int(_attr(bn, "spatial", 1)):
            continue
        stats = [const(n) for n in bn.input[1:5]]
        if len(bn.input) < 5 or any(s is None or s.ndim != 1 for s in stats):
            continue
        scale, bias, mean, var = stats
        a = scale / np.sqrt(var + float(_attr(bn, "epsilon", 1e-5)))
        x = bn.input[0]
        op = producer.get(x)
        if op is None or not single_use(x) or op.domain not in ("", "ai.onnx"):
            continue
        add = None
        if op.op_type == "Add" and len(op.input) == 2:  # MatMul + Add(constant)
            mm = None
            for i in (0, 1):
                cand = producer.get(op.input[i])
                if (cand is not None and cand.op_type == "MatMul" and single_use(op.input[i])
                        and const(op.input[1 - i]) is not None):
                    mm = cand
            if mm is None:
                continue
            add, op = op, mm
        if op.op_type in ("Gemm", "MatMul") and rank.get(x) != 2:
            continue  # BatchNormalization's channel axis 1 is the op's last only in 2-D
        folded = _fold(op, add, a, mean, bias, const, new_init)
        if folded is None:
            continue
        last = add or op
        # the BN's consumers read the folded op's output under the BN's name
        last.output[0] = bn.output[0]
        removed.add(id(bn))
    if not removed:
        return model
    keep = [n for n in graph.node if id(n) not in removed]
    del graph.node[:]
    graph.node.extend(keep)
    used = {i for n in graph.node for i in n.input}
    keep_inits = [t for t in graph.initializer if t.name in used
                  or t.name in {i.name for i in graph.input}]
    del graph.initializer[:]
    graph.initializer.extend(keep_inits)
    return model


def _fold(op, add, a, mean, bias, const, new_init) -> bool | None:
    """Rewrite `op` (and `add`) in place to include the per-channel affine map
    `a (y - mean) + bias`; None when its shape does not allow it."""
    c = a.shape[0]
    if op.op_type == "Conv":
        w = const(op.input[1]) if len(op.input) > 1 else None
        if w is None or w.ndim < 3 or w.shape[0] != c:
            return None
        b = const(op.input[2]) if len(op.input) > 2 and op.input[2] else np.zeros(c)
        if b is None or b.shape != (c,):
            return None
        w = w * a.reshape((c,) + (1,) * (w.ndim - 1))
        names = [new_init(op.input[1], w, op.input[1]),
                 new_init(op.input[1] + "_bias", a * (b - mean) + bias, op.input[1])]
        del op.input[1:]
        op.input.extend(names)
        return True
    if op.op_type == "Gemm":
        w = const(op.input[1])
        if w is None or w.ndim != 2:
            return None
        trans_b = int(_attr(op, "transB", 0))
        if (w.shape[0] if trans_b else w.shape[1]) != c:
            return None
        beta = float(_attr(op, "beta", 1.0))
        if len(op.input) > 2 and op.input[2]:
            b = const(op.input[2])
            if b is None or b.size not in (1, c) or (b.ndim == 2 and b.shape[0] != 1):
                return None
            b = beta * np.broadcast_to(b.reshape(-1), (c,))
        else:
            b = np.zeros(c)
        w = w * (a[:, None] if trans_b else a[None, :])
        names = [new_init(op.input[1], w, op.input[1]),
                 new_init(op.input[1] + "_bias", a * (b - mean) + bias, op.input[1])]
        del op.input[1:]
        op.input.extend(names)
        for at in list(op.attribute):
            if at.name == "beta":
                op.attribute.remove(at)
        return True
    if op.op_type == "MatMul":
        w = const(op.input[1])
        if w is None or w.ndim != 2 or w.shape[1] != c:
            return None
        if add is None:
            return None  # would need a new Add node; left to minun.batchnorm
        bias_name = add.input[1] if add.input[0] == op.output[0] else add.input[0]
        b = const(bias_name)
        if b.size not in (1, c):
            return None
        b = np.broadcast_to(b.reshape(-1), (c,))
        w = w * a[None, :]
        op.input[1] = new_init(op.input[1], w, op.input[1])
        new_b = new_init(bias_name, a * (b - mean) + bias, bias_name)
        if add.input[0] == op.output[0]:
            add.input[1] = new_b
        else:
            add.input[0] = new_b
        return True
    return None
