"""TFLite's WHILE with a trip count known at import, unrolled; GATHER, SPLIT and SLICE,
which its bodies use.

TensorFlow converts a Keras 3 recurrent layer (and a Keras 2 one it cannot fuse) to a
WHILE whose condition subgraph compares counters with constants and whose body subgraph
is one time step: it GATHERs x_t from the time-major input, runs the cell, adds 1 to the
counters. As the ONNX frontend does with tf2onnx's Loop (frontends/onnx/loop.py), each
iteration's condition is computed here from the counters (Converter.run_ops folds the
integer bookkeeping), and each iteration's body is converted with the ordinary handlers,
its inputs bound to that iteration's values: the loop becomes straight-line ONNX nodes.
A `return_sequences` layer writes each step's row into its output with SLICEs of the rows
before and after it and a CONCATENATION (TensorFlow's lowered TensorListSetItem); the
slices of no row (the first and last steps) are left out. A body's constants (the
weights) are converted once, not once per step. A condition that reads run-time values,
or more than MAX_STEPS iterations, is refused in one line.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import tflite

from .convert import Converter

MAX_STEPS = 1024  # unrolling copies the body: a bound keeps a bad count from exploding
BODY = ", body step "  # in the names of an unrolled WHILE body's nodes


@contextmanager
def _subgraph(c: Converter, k: int, bound: list):
    """Convert inside subgraph k, its inputs bound to `bound` (constants as arrays, run-time
    tensors as ONNX names); the subgraph's constants keep their ONNX names across calls."""
    saved = (c.graph, c.names, c.folded, c.padded, c.label, c.views, c.empty)
    if not 0 <= k < c.model.SubgraphsLength():
        raise c.unsupported(f"subgraph {k} does not exist")
    g = c.model.Subgraphs(k)
    cache = c.subgraph_names.setdefault(k, {})
    c.graph, c.names, c.folded, c.padded, c.empty = g, dict(cache), {}, {}, set()
    c.views = c.subgraph_views.setdefault(k, {})
    inputs = [int(i) for i in g.InputsAsNumpy()]
    if len(inputs) != len(bound):
        raise c.unsupported(f"subgraph {k} takes {len(inputs)} inputs, given {len(bound)}")
    for i, v in zip(inputs, bound, strict=True):
        if isinstance(v, np.ndarray):
            c.folded[i] = v
        else:
            c.names[i] = v
    try:
        yield g
        cache.update({i: n for i, n in c.names.items()
                      if i not in inputs and c.buffer(i) is not None})
    finally:
        c.graph, c.names, c.folded, c.padded, c.label, c.views, c.empty = saved


def _results(c: Converter, g) -> list:
    out = []
    for i in (int(x) for x in g.OutputsAsNumpy()):
        if i in c.folded:
            out.append(c.folded[i])
        elif i in c.padded or i in c.names or c.buffer(i) is not None:
            out.append(c.value(i))
        else:
            raise c.unsupported(f"subgraph output '{c.tname(i)}' is not computed")
    return out


def _while(c: Converter, op, ins: list[int], outs: list[int]) -> None:
    opts = c.options(op, tflite.WhileOptions)
    label = c.label
    values = [c.buffer(i) if c.buffer(i) is not None and c.buffer(i).dtype.kind in "iub"
              else c.value(i) for i in ins]
    for step in range(MAX_STEPS + 1):
        with _subgraph(c, opts.CondSubgraphIndex(), values) as g:
            c.run_ops(g, f"{label}, condition: ")
            (cond,) = _results(c, g)
        if not isinstance(cond, np.ndarray):
            c.label = label
            raise c.unsupported("the loop's condition reads run-time values; only a trip "
                                "count known at import (counters and constants) is supported")
        if not bool(np.all(cond)):
            break
        if step == MAX_STEPS:
            c.label = label
            raise c.unsupported(f"more than {MAX_STEPS} iterations")
        with _subgraph(c, opts.BodySubgraphIndex(), values) as g:
            c.run_ops(g, f"{label}{BODY}{step}: ")
            values = _results(c, g)
    c.label = label
    for i, v in zip(outs, values, strict=True):
        if isinstance(v, np.ndarray):
            c.folded[i] = v
        else:
            c.names[i] = v


def _gather(c: Converter, op, ins, outs) -> None:
    opts = c.options(op, tflite.GatherOptions)
    if opts is not None and opts.BatchDims():
        raise c.unsupported("batch_dims is not supported")
    index = c.buffer(ins[1])
    if index is None:
        raise c.unsupported("the indices must be constants (known at import)")
    axis = opts.Axis() if opts is not None else 0
    c.define(outs[0], c.node("Gather", [c.value(ins[0]), c.const(index.astype(np.int64),
                                                                   "indices")], axis=axis))


def _split(c: Converter, op, ins, outs) -> None:
    axis = c.buffer(ins[0])
    if axis is None:
        raise c.unsupported("the axis must be a constant")
    names = [c.fresh(f"{c.label}/Split") for _ in outs]
    c.node("Split", [c.value(ins[1])], names, axis=int(np.ravel(axis)[0]))
    for i, name in zip(outs, names, strict=True):
        c.define(i, name)


def _slice(c: Converter, op, ins, outs) -> None:
    """SLICE with constant begin and size (-1: to the end), as ONNX Slice; a slice of no
    element (a loop's first or last step writing its output row) is marked empty."""
    begin, size = c.buffer(ins[1]), c.buffer(ins[2])
    if begin is None or size is None:
        raise c.unsupported("begin and size must be constants (known at import)")
    shape = c.shape(ins[0])
    begin = [int(b) for b in np.ravel(begin)]
    ends = [n if int(k) < 0 else b + int(k)
            for n, b, k in zip(shape, begin, np.ravel(size), strict=True)]
    if any(e <= b for b, e in zip(begin, ends, strict=True)):
        c.empty.add(outs[0])
        return
    arr = lambda v: c.const(np.array(v, np.int64), "slice")  # noqa: E731
    c.define(outs[0], c.node("Slice", [c.value(ins[0]), arr(begin), arr(ends),
                                       arr(list(range(len(shape))))]))


HANDLERS = {"WHILE": _while, "GATHER": _gather, "SPLIT": _split, "SLICE": _slice}
