"""GRU, LSTM and RNN as a `minun.loop` over time steps of L1 ops.

A recurrent ONNX node becomes the same kind of program as a SeeDot FastGRNN: per step,
`minun.index` takes x_t, each gate is `x_t W_g + h R_g` (`minun.matmul`, weights
pre-sliced and pre-transposed per gate at import) plus one pre-summed bias
(`minun.bias_add`), then sigmoid/tanh and `minun.hadamard` updates. The loop carries h
(and c), and the full output sequence Y only when some node or the graph uses it (it
is then built with `minun.splice_assign`). Reverse directions run the same loop on the
time-reversed input (`minun.reverse`); bidirectional nodes run both and concatenate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import SSAValue

from minun_mlir.dialects import minun

from .fuse import FUSED_DOMAIN
from .importer import Importer, Node, Value

# the TFLite frontend's UNIDIRECTIONAL_SEQUENCE_LSTM: an ONNX LSTM whose new cell state
# is clipped to [-cell_clip, cell_clip], as TFLite's (ONNX's `clip` is the activations'
# inputs'), in the importer's own schemaless domain (fuse.py)
CLIPPED_LSTM = f"{FUSED_DOMAIN}:LSTM"
ACTIVATIONS = {"Sigmoid": minun.SigmoidOp, "Tanh": minun.TanhOp, "Relu": minun.ReluOp}


@dataclass(frozen=True)
class Kind:
    name: str
    gates: str  # gate letters in ONNX weight order
    activations: tuple[str, ...]  # defaults for one direction
    states: tuple[str, ...]  # carried state names


KINDS = {
    "GRU": Kind("GRU", "zrh", ("Sigmoid", "Tanh"), ("h",)),
    "LSTM": Kind("LSTM", "iofc", ("Sigmoid", "Tanh", "Tanh"), ("h", "c")),
    "RNN": Kind("RNN", "i", ("Tanh",), ("h",)),
}


@dataclass
class _Spec:
    """The node's attributes, checked once."""

    kind: Kind
    seq: int
    batch: int
    hidden: int
    directions: list[str]
    activations: list[str]
    clip: float | None
    cell_clip: float | None  # the TFLite frontend's: TFLite clips the cell state
    linear_before_reset: bool
    input_forget: bool
    layout: int


def _named(v: Value, name: str) -> Value:
    return Value.const(v.array, name) if v.array is not None else v


def _parse(imp: Importer, node: Node, kind: Kind, x: Value) -> _Spec:
    w, r = node.inputs[1], node.inputs[2]
    if x.rank != 3:
        raise imp.error(f"X must be 3-D, got {minun.shape_str(x.shape)}")
    seq, batch, features = x.shape
    direction = node.attr("direction", "forward")
    dirs = {"forward": ["forward"], "reverse": ["reverse"],
            "bidirectional": ["forward", "reverse"]}.get(direction)
    if dirs is None:
        raise imp.error(f"unknown direction '{direction}'")
    hidden = int(node.attr("hidden_size", r.shape[-1]))
    n, nd = len(kind.gates), len(dirs)
    for what, v, shape in (("W", w, (nd, n * hidden, features)),
                           ("R", r, (nd, n * hidden, hidden)),
                           ("B", node.input(3), (nd, 2 * n * hidden)),
                           ("P", node.input(7) if kind.name == "LSTM" else None,
                            (nd, 3 * hidden))):
        if v is not None and v.shape != shape:
            raise imp.error(f"{what} must be {minun.shape_str(shape)}, got "
                            f"{minun.shape_str(v.shape)}")
    if node.input(4) is not None:
        lens = imp.const(node.input(4), "sequence_lens")
        if np.any(lens != seq):
            raise imp.error(f"sequence_lens {lens.tolist()} differ from the sequence length "
                            f"{seq}; only full-length sequences are supported")
    acts = list(node.attr("activations") or kind.activations * nd)
    if len(acts) != len(kind.activations) * nd:
        raise imp.error(f"needs {len(kind.activations) * nd} activations, got {acts}")
    for a in acts:
        if a not in ACTIVATIONS:
            raise imp.error(f"activation '{a}' is not supported (supported: "
                            f"{', '.join(ACTIVATIONS)})")
    if node.attr("activation_alpha") or node.attr("activation_beta"):
        raise imp.error("activation_alpha/activation_beta are not supported")
    return _Spec(kind, seq, batch, hidden, dirs, acts, node.attr("clip"),
                 node.attr("cell_clip") if node.proto.domain == FUSED_DOMAIN else None,
                 bool(int(node.attr("linear_before_reset", 0))),
                 bool(int(node.attr("input_forget", 0))),
                 int(node.attr("layout", 0)) if node.version >= 14 else 0)


class _Cell:
    """One direction: its weights as IR values defined before the loop (constants become
    params named after the ONNX tensor and gate, run-time weights are sliced once), and
    the step arithmetic emitted into the loop body.
    """

    def __init__(self, imp: Importer, node: Node, spec: _Spec, d: int):
        self.imp, self.spec = imp, spec
        kind, h = spec.kind, spec.hidden
        suffix = "_reverse" if d == 1 else ""
        per = len(kind.activations)
        self.f = [ACTIVATIONS[a] for a in spec.activations[d * per:(d + 1) * per]]
        w, r, b = node.inputs[1], node.inputs[2], node.input(3)

        def part(m: Value, start: int, size: int) -> Value:
            """m[d, start:start+size, ...] without the direction axis."""
            block = imp.slice(imp.slice(m, 0, d, 1), 1, start, size)
            return imp.reshape(block, block.shape[1:] if block.rank == 3 else (size,))

        def matrix(m: Value, k: int, gate: str) -> SSAValue:
            """Gate k's rows of W or R, transposed for `x_t @ W_g`."""
            t = imp.transpose(part(m, k * h, h), (1, 0))
            return imp.ir(_named(t, f"{m.name}_{gate}{suffix}"), (0, 1))

        self.w = {g: matrix(w, k, g) for k, g in enumerate(kind.gates)}
        self.r = {g: matrix(r, k, g) for k, g in enumerate(kind.gates)}
        # Bias halves are summed once, before the loop; GRU's linear_before_reset keeps
        # the h gate's halves apart (the recurrent half is inside the reset product).
        self.b: dict[str, SSAValue | None] = dict.fromkeys(kind.gates)
        self.wb: SSAValue | None = None
        self.rb: SSAValue | None = None
        for k, g in enumerate(kind.gates):
            if b is None:
                continue
            wb, rb = part(b, k * h, h), part(b, (len(kind.gates) + k) * h, h)
            name = f"{b.name}_{g}{suffix}"
            if spec.linear_before_reset and g == "h":
                self.wb = imp.ir(_named(wb, f"{name}_w"))
                self.rb = imp.ir(_named(rb, f"{name}_r"))
            elif wb.array is not None and rb.array is not None:
                self.b[g] = imp.ir(Value.const(wb.array + rb.array, name))
            else:
                self.b[g] = imp.ir(imp.binary(minun.AddOp, wb, rb))
        p = node.input(7) if kind.name == "LSTM" else None
        self.p = {} if p is None else {
            g: imp.ir(_named(part(p, k * h, h), f"{p.name}_{g}{suffix}"))
            for k, g in enumerate("iof")}

    def op(self, cls: type, *operands: SSAValue, **attrs) -> SSAValue:
        return self.imp.make(cls, *operands, **attrs)

    def act(self, which: int, x: SSAValue) -> SSAValue:
        """Activation `which`, with ONNX's cell clip applied to its input."""
        clip = self.spec.clip
        if clip is not None:
            x = self.op(minun.ClipOp, x, lo=minun.f64_attr(-clip), hi=minun.f64_attr(clip))
        return self.op(self.f[which], x)

    def gate(self, g: str, x: SSAValue, h: SSAValue) -> SSAValue:
        """x W_g + h R_g + (Wb_g + Rb_g), ONNX's order of summation."""
        s = self.op(minun.AddOp, self.op(minun.MatMulOp, x, self.w[g]),
                    self.op(minun.MatMulOp, h, self.r[g]))
        return s if self.b[g] is None else self.op(minun.BiasAddOp, s, self.b[g])

    def one_minus(self, z: SSAValue) -> SSAValue:
        one = self.imp.materialize(np.array(1.0, dtype=np.float32), "one")
        return self.op(minun.SubOp, one, z)

    def step(self, x: SSAValue, state: list[SSAValue]) -> list[SSAValue]:
        """The new states (h, and c for LSTM) from x_t and the carried values."""
        steps = {"GRU": self.gru, "LSTM": self.lstm, "RNN": self.rnn}
        return steps[self.spec.kind.name](x, state)

    def rnn(self, x: SSAValue, state: list[SSAValue]) -> list[SSAValue]:
        return [self.act(0, self.gate("i", x, state[0]))]

    def gru(self, x: SSAValue, state: list[SSAValue]) -> list[SSAValue]:
        h = state[0]
        z = self.act(0, self.gate("z", x, h))
        r = self.act(0, self.gate("r", x, h))
        if self.spec.linear_before_reset:  # x Wh + Wbh + r * (h Rh + Rbh)
            xh = self.op(minun.MatMulOp, x, self.w["h"])
            hr = self.op(minun.MatMulOp, h, self.r["h"])
            if self.wb is not None:
                xh = self.op(minun.BiasAddOp, xh, self.wb)
                hr = self.op(minun.BiasAddOp, hr, self.rb)
            pre = self.op(minun.AddOp, xh, self.op(minun.HadamardOp, r, hr))
        else:  # x Wh + (r * h) Rh + Wbh + Rbh
            pre = self.gate("h", x, self.op(minun.HadamardOp, r, h))
        candidate = self.act(1, pre)
        return [self.op(minun.AddOp,
                        self.op(minun.HadamardOp, self.one_minus(z), candidate),
                        self.op(minun.HadamardOp, z, h))]

    def lstm(self, x: SSAValue, state: list[SSAValue]) -> list[SSAValue]:
        h, c = state[0], state[1]

        def peephole(g: str, pre: SSAValue, cell: SSAValue) -> SSAValue:
            if g not in self.p:
                return pre
            return self.op(minun.AddOp, pre, self.op(minun.HadamardOp, cell, self.p[g]))

        i = self.act(0, peephole("i", self.gate("i", x, h), c))
        if self.spec.input_forget:  # coupled gates: f = 1 - i
            f = self.one_minus(i)
        else:
            f = self.act(0, peephole("f", self.gate("f", x, h), c))
        candidate = self.act(1, self.gate("c", x, h))
        c_new = self.op(minun.AddOp, self.op(minun.HadamardOp, f, c),
                        self.op(minun.HadamardOp, i, candidate))
        if self.spec.cell_clip:
            clip = self.spec.cell_clip
            c_new = self.op(minun.ClipOp, c_new, lo=minun.f64_attr(-clip),
                            hi=minun.f64_attr(clip))
        o = self.act(0, peephole("o", self.gate("o", x, h), c_new))
        return [self.op(minun.HadamardOp, o, self.act(2, c_new)), c_new]


def _run_direction(imp: Importer, node: Node, spec: _Spec, d: int, x_ir: SSAValue,
                   initial: list[Value | None], want_y: bool) -> list[SSAValue]:
    """One direction's loop; returns its final states (and Y [seq, 1, batch, hidden])."""
    cell = _Cell(imp, node, spec, d)
    batch, hidden = spec.batch, spec.hidden
    reverse = spec.directions[d] == "reverse"
    xs = imp.make(minun.ReverseOp, x_ir, axis=IntegerAttr(0, i64)) if reverse else x_ir
    carried = []
    for v in initial:
        if v is None:
            carried.append(imp.leaf(minun.InitOp((batch, hidden), 0.0), "zeros"))
        else:
            carried.append(imp.ir(imp.reshape(imp.slice(v, 0, d, 1), (batch, hidden)), (0, 1)))
    if want_y:
        carried.append(imp.leaf(minun.InitOp((spec.seq, 1, batch, hidden), 0.0), "y0"))

    def body(t: SSAValue, state: list[SSAValue]) -> list[SSAValue]:
        xt = imp.emit(minun.IndexOp(xs, t), "x_t")
        new = cell.step(xt, state)
        for value, name in zip(new, spec.kind.states):
            value.name_hint = f"{name}_next"
        if want_y:
            row = imp.emit(minun.ReshapeOp(new[0], (1, 1, batch, hidden)))
            zero = imp.index(0)
            new.append(imp.emit(minun.SpliceAssignOp(row, state[-1], [t, zero, zero, zero])))
        return new

    names = [*spec.kind.states, "y"] if want_y else list(spec.kind.states)
    final = imp.loop(spec.seq, carried, body, names)
    if want_y and reverse:
        final[-1] = imp.make(minun.ReverseOp, final[-1], axis=IntegerAttr(0, i64))
    return final


def _import(imp: Importer, node: Node, kind: Kind) -> list[Value | None]:
    x = node.inputs[0]
    layout = int(node.attr("layout", 0)) if node.version >= 14 else 0
    if layout:
        x = imp.transpose(x, (1, 0, 2))  # -> [seq, batch, input]
    spec = _parse(imp, node, kind, x)
    nd = len(spec.directions)
    initial = []
    for index, what in ((5, "initial_h"), (6, "initial_c"))[:len(kind.states)]:
        v = node.input(index)
        if v is not None:
            v = imp.transpose(v, (1, 0, 2)) if layout else v
            if v.shape != (nd, spec.batch, spec.hidden):
                raise imp.error(f"{what} must be {nd}x{spec.batch}x{spec.hidden} "
                                f"([directions, batch, hidden])")
        initial.append(v)
    outputs = list(node.proto.output)
    want_y = bool(outputs[0]) and outputs[0] in imp.used
    x_ir = imp.ir(x, (0, 1, 2))
    finals = [_run_direction(imp, node, spec, d, x_ir, initial, want_y) for d in range(nd)]

    def gather(k: int, axis: int, perm: tuple[int, ...]) -> Value:
        parts = []
        for final in finals:
            v = Value.of(final[k])
            parts.append(imp.reshape(v, (1, *v.shape)) if axis == 0 else v)
        v = imp.concat(parts, axis)
        return imp.transpose(v, perm) if layout else v

    results: list[Value | None] = [None] * 3
    if want_y:  # [seq, dirs, batch, hidden]; layout 1: [batch, seq, dirs, hidden]
        results[0] = gather(len(kind.states), 1, (2, 0, 1, 3))
    for k in range(len(kind.states)):  # [dirs, batch, hidden]; layout 1: [batch, dirs, hidden]
        results[1 + k] = gather(k, 0, (1, 0, 2))
    return results[:len(outputs)]


def _handler(kind: Kind):
    def handler(imp: Importer, node: Node) -> list[Value | None]:
        return _import(imp, node, kind)

    return handler


HANDLERS = {name: _handler(kind) for name, kind in KINDS.items()}
HANDLERS[CLIPPED_LSTM] = _handler(KINDS["LSTM"])
