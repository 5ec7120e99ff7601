"""The importer beyond the node tests: attribute-vs-input changes across opsets, layout
handling on conv/pool variants, recurrent variants (reverse, bidirectional, batch-first,
peepholes, clip, coupled gates), and constant/shape folding. Everything is checked
numerically against onnx.reference (or a direct numpy definition where the reference
lacks the feature) on the float evaluator.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import ModuleOp

from minun_mlir.diagnostics import MinunError
from minun_mlir.frontends.onnx import import_model
from minun_mlir.numerics.float_eval import evaluate

RNG = np.random.default_rng(7)
INPUTS = Path(__file__).resolve().parents[2] / "lit" / "onnx" / "Inputs"


def make(nodes, inputs: dict[str, list[int]], outputs: list[str], inits=None,
         opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def rand(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], expected=None,
          rtol: float = 1e-4, atol: float = 1e-5) -> ModuleOp:
    """Import, evaluate (batch of one) and compare every output."""
    if expected is None:
        expected = ReferenceEvaluator(model).run(None, feeds)
    module = import_model(model)
    got = evaluate(module, {k: v[None] for k, v in feeds.items()}).outputs
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g[0].shape == e.shape
        np.testing.assert_allclose(g[0], e, rtol=rtol, atol=atol)
    return module


def op_names(module) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("minun.")]


# -- opset-dependent operators --------------------------------------------------------


@pytest.mark.parametrize("opset", [7, 11, 12, 13, 21])
def test_clip_bounds_attribute_or_input(opset: int) -> None:
    x = rand(3, 4) * 3
    if opset < 11:
        node = helper.make_node("Clip", ["x"], ["y"], min=-1.0, max=0.5)
        inits = {}
    else:
        node = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])
        inits = {"lo": np.float32(-1.0), "hi": np.float32(0.5)}
    module = check(make([node], {"x": [3, 4]}, ["y"], inits, opset), {"x": x})
    assert op_names(module)[-1] == "minun.clip"


def test_clip_one_sided_and_inverted_bounds() -> None:
    x = rand(5) * 3
    only_min = helper.make_node("Clip", ["x", "lo"], ["y"])
    check(make([only_min], {"x": [5]}, ["y"], {"lo": np.float32(0.2)}, 13), {"x": x})
    inverted = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])  # min > max -> max
    check(make([inverted], {"x": [5]}, ["y"], {"lo": np.float32(1.0), "hi": np.float32(-1.0)},
               13), {"x": x})


@pytest.mark.parametrize("opset", [11, 13])
def test_squeeze_unsqueeze_axes_attribute_or_input(opset: int) -> None:
    if opset < 13:
        nodes = [helper.make_node("Squeeze", ["x"], ["s"], axes=[1]),
                 helper.make_node("Unsqueeze", ["s"], ["y"], axes=[0, -1])]
        inits = {}
    else:
        nodes = [helper.make_node("Squeeze", ["x", "a1"], ["s"]),
                 helper.make_node("Unsqueeze", ["s", "a2"], ["y"])]
        inits = {"a1": np.array([1]), "a2": np.array([0, -1])}
    check(make(nodes, {"x": [2, 1, 3]}, ["y"], inits, opset), {"x": rand(2, 1, 3)})


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("opset,axis", [(11, 1), (11, None), (11, 2), (13, 1), (13, None),
                                        (13, 0)])
def test_softmax_axis_semantics_change_at_opset_13(op: str, opset: int, axis) -> None:
    """Before 13: coerced to 2-D at axis (default 1); from 13: one axis (default -1).
    (onnx.reference applies the opset-13 rule to every opset, so the expected values are
    computed here from the specification.)"""
    attrs = {} if axis is None else {"axis": axis}
    model = make([helper.make_node(op, ["x"], ["y"], **attrs)], {"x": [2, 3, 4]}, ["y"],
                 opset=opset)
    x = rand(2, 3, 4)
    if opset < 13:
        k = 1 if axis is None else axis
        rows = x.reshape(int(np.prod(x.shape[:k])), -1).astype(np.float64)
        axes, keep = 1, rows
    else:
        axes, keep = (-1 if axis is None else axis), x.astype(np.float64)
    shifted = keep - keep.max(axis=axes, keepdims=True)
    log_y = shifted - np.log(np.exp(shifted).sum(axis=axes, keepdims=True))
    y = (log_y if op == "LogSoftmax" else np.exp(log_y)).reshape(x.shape)
    check(model, {"x": x}, [y.astype(np.float32)])


def test_old_opset_is_refused() -> None:
    model = make([helper.make_node("Relu", ["x"], ["y"])], {"x": [2]}, ["y"], opset=6)
    with pytest.raises(MinunError, match="opset 6"):
        import_model(model)


# -- layouts: conv and pooling variants -------------------------------------------------


# onnx.reference gets a few auto_pad cases wrong (VALID convolution pads like SAME; SAME
# pooling with stride > 1 loses an output row) where ONNX shape inference and the spec
# agree with the importer. For those the reference runs the same node with the explicit
# pads the spec implies (worked out by hand here).
EXPLICIT = {
    "{'auto_pad': 'VALID', 'strides': [1, 2]}": dict(strides=[1, 2]),
    # in 7x8, kernel 3, stride 2 -> out 4x4; total pad 2 (H) and 1 (W), extra at the start
    "{'kernel_shape': [3, 3], 'auto_pad': 'SAME_LOWER', 'strides': [2, 2]}":
        dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 0]),
}


def reference(attrs: dict, model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    explicit = EXPLICIT.get(str(attrs))
    if explicit is not None:  # same node, explicit pads instead of auto_pad
        model = onnx.ModelProto.FromString(model.SerializeToString())
        node = model.graph.node[0]
        node.ClearField("attribute")
        node.attribute.extend(helper.make_attribute(k, v) for k, v in explicit.items())
    return ReferenceEvaluator(model).run(None, feeds)


CONVS = [
    dict(),
    dict(strides=[2, 2]),
    dict(pads=[1, 0, 2, 1]),
    dict(dilations=[2, 1], pads=[2, 1, 2, 1]),
    dict(group=2),
    dict(group=4),  # depthwise
    dict(auto_pad="SAME_LOWER", strides=[2, 2]),
    dict(auto_pad="SAME_UPPER", strides=[2, 1]),
    dict(auto_pad="VALID", strides=[1, 2]),
]


@pytest.mark.parametrize("attrs", CONVS, ids=[str(c) for c in CONVS])
@pytest.mark.parametrize("weights", ["constant", "input"])
def test_conv_variants(attrs: dict, weights: str) -> None:
    g = attrs.get("group", 1)
    x, w, b = rand(1, 4, 7, 6), rand(8, 4 // g, 3, 3), rand(8)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)
    if weights == "constant":
        model = make([node], {"x": [1, 4, 7, 6]}, ["y"], {"w": w, "b": b})
        feeds = {"x": x}
    else:  # filters computed at run time are permuted by IR ops
        model = make([node], {"x": [1, 4, 7, 6], "w": list(w.shape), "b": [8]}, ["y"])
        feeds = {"x": x, "w": w, "b": b}
    check(model, feeds, reference(attrs, model, feeds))


def test_conv_1d() -> None:
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 2], strides=[2])
    model = make([node], {"x": [2, 3, 9]}, ["y"], {"w": rand(5, 3, 3), "b": rand(5)})
    check(model, {"x": rand(2, 3, 9)})


POOLS = [
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("MaxPool", dict(kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1)),
    ("MaxPool", dict(kernel_shape=[3, 3], auto_pad="SAME_LOWER", strides=[2, 2])),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                         count_include_pad=1)),
    ("AveragePool", dict(kernel_shape=[2, 3], strides=[2, 2], ceil_mode=1)),
]


@pytest.mark.parametrize("op,attrs", POOLS, ids=[f"{o}-{a}" for o, a in POOLS])
def test_pool_variants(op: str, attrs: dict) -> None:
    model = make([helper.make_node(op, ["x"], ["y"], **attrs)], {"x": [1, 3, 7, 8]}, ["y"])
    feeds = {"x": rand(1, 3, 7, 8)}
    check(model, feeds, reference(attrs, model, feeds))


def test_conv_bn_pool_flatten_chain_has_one_transpose() -> None:
    """NCHW ops between the input and Flatten run in NHWC: one transpose, at the input."""
    c = 4
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"]),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node("Add", ["r", "k"], ["a"]),  # broadcast constant [C,1,1]
        helper.make_node("GlobalAveragePool", ["a"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1, alpha=0.5),
    ]
    inits = {"w": rand(c, 2, 3, 3), "s": rand(c), "b": rand(c),
             "m": rand(c), "v": np.abs(rand(c)) + 0.1, "k": rand(c, 1, 1), "fc": rand(3, c)}
    module = check(make(nodes, {"x": [1, 2, 5, 5]}, ["y"], inits), {"x": rand(1, 2, 5, 5)})
    assert op_names(module).count("minun.transpose") == 1


def test_matmul_nd_by_matrix_is_one_matmul() -> None:
    model = make([helper.make_node("MatMul", ["x", "w"], ["y"])], {"x": [2, 3, 4]}, ["y"],
                 {"w": rand(4, 5)})
    module = check(model, {"x": rand(2, 3, 4)})
    assert op_names(module).count("minun.matmul") == 1


def test_gemm_with_runtime_operands_scales_at_run_time() -> None:
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=0.5, beta=2.0, transA=1)
    model = make([node], {"a": [4, 3], "b": [4, 5], "c": [3, 5]}, ["y"])
    module = check(model, {"a": rand(4, 3), "b": rand(4, 5), "c": rand(3, 5)})
    assert op_names(module).count("minun.scalar_mul") == 2


def test_elementwise_broadcast_with_mixed_layouts() -> None:
    """A run-time NHWC value (after a conv) plus a run-time NCHW value (an input)."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("Mul", ["c", "z"], ["m"]),
             helper.make_node("Sub", ["k", "m"], ["y"])]
    model = make(nodes, {"x": [1, 2, 4, 4], "z": [3, 1, 4]}, ["y"],
                 {"w": rand(3, 2, 1, 1), "k": rand(4)})
    check(model, {"x": rand(1, 2, 4, 4), "z": rand(3, 1, 4)})


# -- folding -------------------------------------------------------------------------


def test_constant_subgraph_and_shapes_fold() -> None:
    """W = Transpose(A) * 2 is computed at import; the Reshape target comes from Shape."""
    nodes = [
        helper.make_node("Constant", [], ["two"], value_float=2.0),
        helper.make_node("Transpose", ["A"], ["At"]),
        helper.make_node("Mul", ["At", "two"], ["W"]),
        helper.make_node("Shape", ["x"], ["s"], start=0, end=1),
        helper.make_node("Concat", ["s", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["r"]),
        helper.make_node("MatMul", ["r", "W"], ["y"]),
    ]
    model = make(nodes, {"x": [2, 3, 2]}, ["y"], {"A": rand(5, 6),
                                                    "minus1": np.array([-1])})
    module = check(model, {"x": rand(2, 3, 2)})
    assert op_names(module) == ["minun.input", "minun.param", "minun.reshape", "minun.matmul"]


def test_params_record_their_range_and_inputs_their_declared_range() -> None:
    w = np.array([[-0.5, 2.0]], dtype=np.float32)
    model = make([helper.make_node("MatMul", ["x", "w"], ["y"])], {"x": [1, 1]}, ["y"],
                 {"w": w})
    module = import_model(model, input_ranges={"x": (0.0, 16.0)})
    ops = {op.name: op for op in module.walk()}
    param, inp = ops["minun.param"], ops["minun.input"]
    assert (param.range_lo.value.data, param.range_hi.value.data) == (-0.5, 2.0)
    assert param.sym_name.data == "w"
    assert (inp.range_lo.value.data, inp.range_hi.value.data) == (0.0, 16.0)


# -- recurrent variants ----------------------------------------------------------------


def _rnn_model(op: str, hidden: int, features: int, seq: int, batch: int, dirs: int,
               *, bias: bool = True, peepholes: bool = False, initial: bool = False,
               layout: int = 0, **attrs) -> tuple[onnx.ModelProto, dict]:
    gates = {"GRU": 3, "LSTM": 4, "RNN": 1}[op]
    inits = {"W": rand(dirs, gates * hidden, features, scale=0.5),
             "R": rand(dirs, gates * hidden, hidden, scale=0.5)}
    names = ["X", "W", "R", "B" if bias else "", "", "", "", ""]
    if bias:
        inits["B"] = rand(dirs, 2 * gates * hidden, scale=0.3)
    state_shape = [batch, dirs, hidden] if layout else [dirs, batch, hidden]
    if initial:
        names[5] = "h0"
        inits["h0"] = rand(*state_shape, scale=0.5)
        if op == "LSTM":
            names[6] = "c0"
            inits["c0"] = rand(*state_shape, scale=0.5)
    if peepholes:
        names[7] = "P"
        inits["P"] = rand(dirs, 3 * hidden, scale=0.3)
    while names and not names[-1]:
        names.pop()
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    if layout:
        attrs["layout"] = 1
    node = helper.make_node(op, names, outputs, hidden_size=hidden, **attrs)
    x_shape = [batch, seq, features] if layout else [seq, batch, features]
    return make([node], {"X": x_shape}, outputs, inits, opset=14), inits


def _np_direction(op: str, x, w, r, b, h, c, p, clip, lbr, input_forget):
    """Direct definition of one forward direction of the ONNX operators (default
    activations). x [seq, batch, in], w [G*H, in], r [G*H, H], b [2*G*H], p [3*H]."""
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)  # noqa: E731
    hidden = r.shape[-1]
    gates = w.shape[0] // hidden
    wb, rb = b[:gates * hidden], b[gates * hidden:]

    def split(v):
        return [v[..., k * hidden:(k + 1) * hidden] for k in range(v.shape[-1] // hidden)]

    ys = []
    for xt in x:
        gx, gh = xt @ w.T + wb, h @ r.T + rb
        if op == "RNN":
            h = np.tanh(cl(gx + gh))
        elif op == "GRU":
            (xz, xr, xh), (hz, hr, hh) = split(gx), split(gh)
            z, rr = sig(cl(xz + hz)), sig(cl(xr + hr))
            if lbr:
                cand = np.tanh(cl(xh + rr * hh))
            else:
                cand = np.tanh(cl(xh + (rr * h) @ r[2 * hidden:].T + rb[2 * hidden:]))
            h = (1 - z) * cand + z * h
        else:
            i, o, f, cc = split(gx + gh)
            pi, po, pf = split(p) if p is not None else (0, 0, 0)
            i = sig(cl(i + pi * c))
            f = 1 - i if input_forget else sig(cl(f + pf * c))
            c = f * c + i * np.tanh(cl(cc))
            h = sig(cl(o + po * c)) * np.tanh(cl(c))
        ys.append(h)
    return np.stack(ys), h, c


def _np_recurrent(op: str, inits: dict, x: np.ndarray, direction: str = "forward",
                  layout: int = 0, clip=None, linear_before_reset=0, input_forget=0):
    """Expected (Y, Y_h[, Y_c]) for a node built by _rnn_model: directions and layout
    handled here by moving data, the cell by _np_direction."""
    if layout:
        x = x.transpose(1, 0, 2)
    w, r = inits["W"].astype(np.float64), inits["R"].astype(np.float64)
    dirs, hidden, batch = w.shape[0], r.shape[-1], x.shape[1]
    gates = w.shape[1] // hidden
    b = inits.get("B", np.zeros((dirs, 2 * gates * hidden)))
    state = {}
    for k in ("h0", "c0"):
        v = inits.get(k, np.zeros((dirs, batch, hidden)))
        state[k] = v.transpose(1, 0, 2) if layout and k in inits else v
    outs = []
    for d in range(dirs):
        reverse = direction == "reverse" or d == 1
        xs = x[::-1] if reverse else x
        p = inits["P"][d] if "P" in inits else None
        y, h, c = _np_direction(op, xs, w[d], r[d], b[d], state["h0"][d], state["c0"][d], p,
                                clip, linear_before_reset, input_forget)
        outs.append((y[::-1] if reverse else y, h, c))
    y = np.stack([o[0] for o in outs], axis=1)
    finals = [np.stack([o[k] for o in outs]) for k in (1, 2)][:2 if op == "LSTM" else 1]
    if layout:
        y = y.transpose(2, 0, 1, 3)
        finals = [f.transpose(1, 0, 2) for f in finals]
    return [a.astype(np.float32) for a in (y, *finals)]


@pytest.mark.parametrize("op", ["GRU", "RNN", "LSTM"])
def test_numpy_recurrence_agrees_with_onnx_reference(op: str) -> None:
    """The direct definition used below matches onnx.reference where the reference
    works (one forward direction, sequence-first layout)."""
    model, inits = _rnn_model(op, hidden=4, features=3, seq=5, batch=2, dirs=1, initial=True)
    if op == "LSTM":  # the reference LSTM returns no Y_c
        model.graph.node[0].output.pop()
        model.graph.output.pop()
    x = rand(5, 2, 3)
    want = ReferenceEvaluator(model).run(None, {"X": x})
    for got, ref in zip(_np_recurrent(op, inits, x), want):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["GRU", "LSTM", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_recurrent_directions(op: str, direction: str) -> None:
    dirs = 2 if direction == "bidirectional" else 1
    model, inits = _rnn_model(op, hidden=4, features=3, seq=5, batch=2, dirs=dirs,
                              initial=True, direction=direction)
    x = rand(5, 2, 3)
    module = check(model, {"X": x}, _np_recurrent(op, inits, x, direction))
    assert op_names(module).count("minun.loop") == dirs


@pytest.mark.parametrize("op", ["GRU", "LSTM", "RNN"])
def test_recurrent_batch_first_layout(op: str) -> None:
    model, inits = _rnn_model(op, hidden=3, features=2, seq=4, batch=2, dirs=2, initial=True,
                              layout=1, direction="bidirectional")
    x = rand(2, 4, 2)
    check(model, {"X": x}, _np_recurrent(op, inits, x, "bidirectional", layout=1))


def test_gru_linear_before_reset_and_lstm_peepholes() -> None:
    model, inits = _rnn_model("GRU", hidden=3, features=2, seq=4, batch=1, dirs=1,
                              linear_before_reset=1)
    x = rand(4, 1, 2)
    check(model, {"X": x}, _np_recurrent("GRU", inits, x, linear_before_reset=1))
    model, inits = _rnn_model("LSTM", hidden=3, features=2, seq=4, batch=1, dirs=1,
                              peepholes=True, initial=True)
    check(model, {"X": x}, _np_recurrent("LSTM", inits, x))


@pytest.mark.parametrize("op", ["GRU", "LSTM", "RNN"])
def test_recurrent_cell_clip(op: str) -> None:
    model, inits = _rnn_model(op, hidden=3, features=2, seq=5, batch=2, dirs=1, clip=0.7)
    x = rand(5, 2, 2, scale=2.0)
    check(model, {"X": x}, _np_recurrent(op, inits, x, clip=0.7))


def test_lstm_coupled_input_forget() -> None:
    model, inits = _rnn_model("LSTM", hidden=3, features=2, seq=5, batch=2, dirs=1,
                              input_forget=1)
    x = rand(5, 2, 2)
    check(model, {"X": x}, _np_recurrent("LSTM", inits, x, input_forget=1))


def test_unused_sequence_output_is_not_built() -> None:
    model, _ = _rnn_model("GRU", hidden=3, features=2, seq=4, batch=1, dirs=1)
    model.graph.output.pop(0)  # only Y_h is a graph output
    module = check(model, {"X": rand(4, 1, 2)})
    assert "minun.splice_assign" not in op_names(module)


# -- the committed lit inputs ------------------------------------------------------------


def test_lit_inputs_are_what_the_generator_writes(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_models", INPUTS / "make_models.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    for path in generator.write_all(str(tmp_path)):
        name = Path(path).name
        assert Path(path).read_bytes() == (INPUTS / name).read_bytes(), name


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([1], [3], [1], [1]),  # channels of a value held in NHWC after the conv
    ([0, 1], [4, -1], [2, 3], [2, 1]),  # H with step 2, W to -1
    ([-1], [-100], [3], [-2]),  # W reversed with step -2, end clamped
    ([0], [2 ** 62], [-3], [1]),  # a negative axis, an end past the dimension
])
def test_slice_of_a_value_held_in_another_layout(starts, ends, axes, steps):
    """Slice with constant starts/ends/axes/steps after a Conv (whose result the importer
    holds in NHWC) and after its opset-9 attribute form, against onnx.reference."""
    w = rand(4, 2, 3, 3)
    inits = {"w": w, "s": np.array(starts, np.int64), "e": np.array(ends, np.int64),
             "a": np.array(axes, np.int64), "k": np.array(steps, np.int64)}
    model = make([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                  helper.make_node("Slice", ["c", "s", "e", "a", "k"], ["y"])],
                 {"x": [1, 2, 5, 6]}, ["y"], inits)
    check(model, {"x": rand(1, 2, 5, 6)})
    if all(k == 1 for k in steps):
        old = make([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                    helper.make_node("Slice", ["c"], ["y"], starts=starts, ends=ends,
                                     axes=[a % 4 for a in axes])],
                   {"x": [1, 2, 5, 6]}, ["y"], {"w": w}, opset=9)
        check(old, {"x": rand(1, 2, 5, 6)})
