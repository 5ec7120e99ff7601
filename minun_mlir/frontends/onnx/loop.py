"""Loop and Scan with a trip count known at import, unrolled into straight-line L1 ops.

tf2onnx writes a Keras 3 GRU (and any `tf.while_loop`) as a `Loop` whose body reads the
time-major input from the outer scope with `Gather(x, i)` and carries the counter, the
state and the (unchanged) weights. Every iteration's counter, condition and indices are
import-time values, so each iteration's body is imported with the ordinary handlers,
binding the body's inputs to that iteration's values: integer bookkeeping folds away, the
cell arithmetic becomes L1 ops. Body nodes whose inputs are the very same values as in the
previous iteration (loop invariants: the weights, their splits) are imported once, so the
weights are one parameter, not one per step. Scan is unrolled the same way, slicing its
scan inputs per iteration. Loops whose trip count or condition is only known at run time
get a one-line diagnostic naming the node.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.dialects.builtin import IntegerAttr, i64

from minun_mlir.diagnostics import MinunError
from minun_mlir.dialects import minun

from .importer import Importer, Node, Value, node_label, normalize_axis, subgraph_reads

# Unrolling copies the body: a bound keeps a mis-read trip count from exploding the C.
MAX_STEPS = 1024


class _Body:
    """One body graph, imported once per iteration with its inputs bound."""

    def __init__(self, imp: Importer, node: Node, graph: onnx.GraphProto):
        self.imp, self.node, self.graph = imp, node, graph
        self.inits = {t.name: Value.const(onnx.numpy_helper.to_array(t), t.name)
                      for t in graph.initializer}
        # body node index -> (its input values, its outputs) at the last import
        self.memo: dict[int, tuple[list[Value | None], list[Value | None]]] = {}
        self.params: dict[tuple, object] = {}
        imp.used |= _reads(graph)
        imp.used |= {o.name for o in graph.output}

    def run(self, bound: Sequence[Value | None]) -> list[Value]:
        imp, outer = self.imp, self.imp.values
        names = [i.name for i in self.graph.input]
        if len(bound) != len(names):
            raise imp.error(f"the body takes {len(names)} inputs, the node gives "
                            f"{len(bound)}")
        scope = {**outer, **self.inits}
        materialize = imp.materialize
        wrapped = "materialize" in vars(imp)  # an enclosing loop's body shares its params
        scope.update({n: v for n, v in zip(names, bound) if v is not None})
        saved_node = imp.node
        imp.values = scope
        imp.materialize = self._materialize(materialize)
        try:
            for k, proto in enumerate(self.graph.node):
                # what a nested Loop's body reads from here counts as its input too
                ins = [scope.get(n) if n else None
                       for n in (*proto.input, *sorted(subgraph_reads(proto)))]
                hit = self.memo.get(k)
                if hit is not None and all(a is b for a, b in zip(hit[0], ins)):
                    for name, v in zip(proto.output, hit[1]):
                        if name and v is not None:
                            scope[name] = v
                    continue
                imp.node = proto
                try:
                    imp._import_node(proto)
                except MinunError as e:
                    raise MinunError(f"{node_label(self.node.proto)}, in its body: {e}") \
                        from None
                self.memo[k] = (ins, [scope.get(n) if n else None for n in proto.output])
            outs = []
            for o in self.graph.output:
                if o.name not in scope:
                    raise MinunError(f"{node_label(self.node.proto)}: body output "
                                     f"'{o.name}' is not produced")
                outs.append(scope[o.name])
            return outs
        finally:
            imp.values, imp.node = outer, saved_node
            if wrapped:
                imp.materialize = materialize
            else:
                del imp.materialize

    def _materialize(self, materialize):
        """The importer's `materialize`, one parameter per constant array for the whole
        node, so the unrolled steps share it (`sharing`)."""
        return sharing(materialize, self.params)


def sharing(materialize, params: dict):
    """The importer's `materialize`, but one parameter for one constant array (by name and
    contents, in `params`): a loop-invariant bias that an op materializes at each use is
    then shared by all the unrolled steps (also TFLite's unrolled WHILE, tflite/control.py)."""
    def shared(array: np.ndarray, name: str):
        key = (name, array.dtype.str, array.shape, array.tobytes())
        if key not in params:
            params[key] = materialize(array, name)
        return params[key]

    return shared


def _reads(graph: onnx.GraphProto) -> set[str]:
    names: set[str] = set()
    for n in graph.node:
        names.update(x for x in n.input if x)
        for a in n.attribute:
            for g in (*([a.g] if a.HasField("g") else []), *a.graphs):
                names |= _reads(g)
    return names


def _flag(imp: Importer, v: Value, what: str) -> bool:
    if v.array is None:
        raise imp.error(f"the {what} is computed at run time; only loops whose trip count "
                        f"and condition are known at import are supported (they are unrolled)")
    return bool(np.asarray(v.array).reshape(-1)[0])


def _stack(imp: Importer, parts: list[Value], axis: int) -> Value:
    """ONNX's scan-output stacking: a new axis `axis` of len(parts)."""
    expanded = [imp.reshape(p, p.shape[:axis] + (1,) + p.shape[axis:]) for p in parts]
    return imp.concat(expanded, axis)


def _loop(imp: Importer, node: Node) -> list[Value]:
    body = _Body(imp, node, node.attr("body"))
    m, cond = node.input(0), node.input(1)
    carried = list(node.inputs[2:])
    trip = None if m is None else int(np.asarray(imp.const(m, "the trip count M")).reshape(-1)[0])
    if trip is None and cond is None:
        raise imp.error("a Loop with neither a trip count nor a condition never ends")
    going = True if cond is None else _flag(imp, cond, "loop condition")
    n_state = len(carried)
    scans: list[list[Value]] = []
    steps = 0
    while going and (trip is None or steps < trip):
        if steps >= MAX_STEPS:
            raise imp.error(f"the loop runs more than {MAX_STEPS} iterations; unrolling it "
                            f"is not supported")
        i = Value.const(np.array(steps, dtype=np.int64), "iteration")
        c = Value.const(np.array(going), "cond")
        outs = body.run([i, c, *carried])
        going = _flag(imp, outs[0], "loop condition (the body's first output)")
        carried = outs[1:1 + n_state]
        for k, v in enumerate(outs[1 + n_state:]):
            if steps == 0:
                scans.append([])
            scans[k].append(v)
        steps += 1
    n_scan = len(node.proto.output) - n_state
    if steps == 0 and n_scan:
        raise imp.error("the loop runs no iteration: its scan outputs would be empty")
    return [*carried, *(_stack(imp, s, 0) for s in scans[:n_scan])]


def _scan(imp: Importer, node: Node) -> list[Value]:
    """Scan (opset 9 and later; opset 8's batch axis form is refused)."""
    if node.version < 9:
        raise imp.error("Scan-8 (with a batch axis and sequence_lens) is not supported; "
                        "convert the model to opset 9 or later")
    graph = node.attr("body")
    body = _Body(imp, node, graph)
    n_in = int(node.attr("num_scan_inputs"))
    state, xs = list(node.inputs[:len(node.inputs) - n_in]), node.inputs[len(node.inputs) - n_in:]
    n_state = len(state)
    n_out = len(graph.output) - n_state
    in_axes = list(node.attr("scan_input_axes") or [0] * n_in)
    in_dirs = list(node.attr("scan_input_directions") or [0] * n_in)
    out_axes = list(node.attr("scan_output_axes") or [0] * n_out)
    out_dirs = list(node.attr("scan_output_directions") or [0] * n_out)
    if len(in_axes) != n_in or len(in_dirs) != n_in or len(out_axes) != n_out \
            or len(out_dirs) != n_out:
        raise imp.error("scan axes and directions must give one value per scan input/output")
    in_axes = [normalize_axis(int(a), x.rank) for a, x in zip(in_axes, xs)]
    lengths = {x.shape[a] for x, a in zip(xs, in_axes)}
    if len(lengths) != 1:
        raise imp.error(f"the scan inputs have different lengths {sorted(lengths)}")
    steps = lengths.pop()
    if steps > MAX_STEPS:
        raise imp.error(f"the scan runs {steps} iterations; more than {MAX_STEPS} are not "
                        f"unrolled")
    scans: list[list[Value]] = [[] for _ in range(n_out)]
    for t in range(steps):
        row = []
        for x, a, d in zip(xs, in_axes, in_dirs):
            s = imp.slice(x, a, steps - 1 - t if d else t, 1)
            row.append(imp.reshape(s, x.shape[:a] + x.shape[a + 1:]))
        outs = body.run([*state, *row])
        state = outs[:n_state]
        for k, v in enumerate(outs[n_state:]):
            scans[k].append(v)
    results = list(state)
    for parts, a, d in zip(scans, out_axes, out_dirs):
        parts = parts[::-1] if d else parts
        results.append(_stack(imp, parts, normalize_axis(int(a), parts[0].rank + 1)))
    return results


def _reverse(imp: Importer, v: Value, axis: int) -> Value:
    """v reversed along ONNX axis `axis` (`minun.reverse` in v's layout)."""
    if v.shape[axis] == 1:
        return v
    perm = v.perm if v.ssa is not None else tuple(range(v.rank))
    ir = imp.ir(v, perm)
    return Value.of(imp.make(minun.ReverseOp, ir, axis=IntegerAttr(perm.index(axis), i64)),
                    perm)


def _reverse_sequence(imp: Importer, node: Node) -> list[Value]:
    """ReverseSequence with constant sequence_lens (tf2onnx's go_backwards and the
    backward half of a Bidirectional layer): per batch row, the first lens[b] steps
    reversed and the rest kept; one `minun.reverse` when every row is reversed whole."""
    x = node.inputs[0]
    lens = np.asarray(imp.const(node.input(1), "sequence_lens")).reshape(-1)
    batch_axis = normalize_axis(int(node.attr("batch_axis", 1)), x.rank)
    time_axis = normalize_axis(int(node.attr("time_axis", 0)), x.rank)
    if {batch_axis, time_axis} != {0, 1}:
        raise imp.error(f"batch_axis and time_axis must be 0 and 1, got {batch_axis} and "
                        f"{time_axis}")
    steps = x.shape[time_axis]
    if len(lens) != x.shape[batch_axis] or np.any(lens < 0) or np.any(lens > steps):
        raise imp.error(f"sequence_lens {lens.tolist()} must give one length in 0..{steps} "
                        f"per batch row ({x.shape[batch_axis]})")
    if np.all(lens == steps):
        return [_reverse(imp, x, time_axis)]
    rows = []
    for b, n in enumerate(int(k) for k in lens):
        row = imp.slice(x, batch_axis, b, 1)
        pieces = [_reverse(imp, imp.slice(row, time_axis, 0, n), time_axis)] if n else []
        if n < steps:
            pieces.append(imp.slice(row, time_axis, n, steps - n))
        rows.append(imp.concat(pieces, time_axis))
    return [imp.concat(rows, batch_axis)]


HANDLERS = {"Loop": _loop, "Scan": _scan, "ReverseSequence": _reverse_sequence}
