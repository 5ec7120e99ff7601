"""A fixed batch > 1 (an input declared [3, 4]) compiles as a batch of 1, with a warning.

Models exported with an example batch keep its size as a fixed leading dimension of
their inputs and outputs. A microcontroller program classifies one example per call, so
that dimension becomes a symbolic one named `batch` (or `batch_2`, ... if the model has
one of that name): it then compiles as 1, like any symbolic batch, and `--dim batch=3`
compiles all the rows. Only where the leading axis is the examples' by definition: a
graph with ai.onnx.ml operators (their inputs are [N, F]) whose run-time inputs are all
[B, F] with one B > 1 and whose tensor outputs all lead with B. Elsewhere a fixed
leading size may be anything (a sequence's steps, a matrix's rows that a LayerNorm or a
Concat mixes), so a [3, 4] neural network input keeps its shape and the program computes
all of it. A node that spells B out (a Reshape to [3, -1]) is reported at that node.
"""

from __future__ import annotations

import onnx

from minun_mlir.diagnostics import warn


def _dims(info: onnx.ValueInfoProto):
    tt = info.type.tensor_type
    return tt.shape.dim if info.type.HasField("tensor_type") and tt.HasField("shape") else []


def unfix_batch(model: onnx.ModelProto, dims: dict[str, int] | None
                ) -> tuple[onnx.ModelProto, dict[str, int] | None]:
    """The model with its fixed batch made symbolic, and `dims` with that dimension
    (1 unless `dims` names it); the model and dims as given when there is none."""
    graph = model.graph
    initializers = {t.name for t in graph.initializer}
    inputs = [i for i in graph.input if i.name not in initializers]
    if not any(n.domain == "ai.onnx.ml" for n in graph.node):
        return model, dims
    if not inputs or any(len(_dims(i)) != 2 for i in inputs):
        return model, dims
    sizes = {d.dim_value if d.HasField("dim_value") else 0 for i in inputs
             for d in _dims(i)[:1]}
    if len(sizes) != 1 or min(sizes) <= 1:
        return model, dims
    batch = sizes.pop()
    for o in graph.output:
        first = _dims(o)[:1]
        if o.type.HasField("tensor_type") and not (
                first and first[0].HasField("dim_value") and first[0].dim_value == batch):
            return model, dims  # an output without the rows: not a batch
    names = {d.dim_param for v in (*graph.input, *graph.output) for d in _dims(v)}
    name, k = "batch", 1
    while name in names:
        k += 1
        name = f"batch_{k}"
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for v in (*out.graph.input, *out.graph.output):
        if v.name in initializers or not _dims(v):
            continue
        first = _dims(v)[0]
        if first.HasField("dim_value") and first.dim_value == batch:
            first.dim_param = name  # clears dim_value (a oneof)
    del out.graph.value_info[:]  # shapes inferred for batch B; the importer re-infers
    dims = dict(dims or {})
    if name not in dims:
        dims[name] = 1
        shown = ", ".join(f"'{i.name}'" for i in inputs)
        warn(f"graph input {shown}: a fixed batch of {batch}; compiled for a batch of 1 "
             f"(all {batch} rows: `--dim {name}={batch}`)")
    return out, dims
