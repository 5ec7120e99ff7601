"""Loop and Scan (frontends/onnx/loop.py), built with onnx.helper and checked against
onnxruntime: tf2onnx's form of a Keras recurrent layer (a counter carried beside the
state, the input read from the outer scope with Gather), a condition that ends the loop
early, the iteration number read directly, loops folded at import, Scan's axes and
directions, and one-line diagnostics for what is not unrolled."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from minun_mlir.diagnostics import MinunError
from minun_mlir.frontends.onnx import import_model
from minun_mlir.numerics.float_eval import evaluate

RNG = np.random.default_rng(11)
F, H, T = 3, 4, 5  # features, hidden, time steps


def _t(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _c(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def _model(nodes, inputs, outputs, inits, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _check(model, feeds, outputs=None):
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    want = session.run(outputs, feeds)
    module = import_model(model, outputs=outputs)
    got = evaluate(module, {k: v[None] for k, v in feeds.items()}).outputs
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g[0].shape == w.shape
        np.testing.assert_allclose(g[0], w, rtol=1e-5, atol=1e-6)
    return module


def _cell_body(counter: bool, scan_out: bool, cond_limit: int | None = None):
    """h' = tanh(x[i] W + h R + b); with `counter` a carried int32 i (tf2onnx's form),
    else the iteration number; the condition i + 1 < cond_limit (else passed on)."""
    it = _t("it", TensorProto.INT64, [])
    cond = _t("cond_in", TensorProto.BOOL, [])
    h = _t("h_in", TensorProto.FLOAT, [1, H])
    nodes, inputs, outs = [], [it, cond], []
    if counter:
        inputs.append(_t("i_in", TensorProto.INT32, []))
        index = "i_in"
        nodes.append(helper.make_node("Add", ["i_in", "one"], ["i_out"]))
    else:
        index = "it"
    inputs.append(h)
    nodes += [
        helper.make_node("Gather", ["X_tm", index], ["x_t"], axis=0),
        helper.make_node("MatMul", ["x_t", "W"], ["xw"]),
        helper.make_node("MatMul", ["h_in", "R"], ["hr"]),
        helper.make_node("Add", ["xw", "hr"], ["s"]),
        helper.make_node("Add", ["s", "B"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["h_out"]),
    ]
    if cond_limit is None:
        nodes.append(helper.make_node("Identity", ["cond_in"], ["cond_out"]))
    else:
        nodes += [helper.make_node("Add", ["it", "one64"], ["next"]),
                  helper.make_node("Less", ["next", "limit"], ["cond_out"])]
    outs.append(_t("cond_out", TensorProto.BOOL, []))
    if counter:
        outs.append(_t("i_out", TensorProto.INT32, []))
    outs.append(_t("h_out", TensorProto.FLOAT, [1, H]))
    if scan_out:
        nodes.append(helper.make_node("Identity", ["h_out"], ["h_scan"]))
        outs.append(_t("h_scan", TensorProto.FLOAT, [1, H]))
    inits = [_c("one", np.int32(1)), _c("one64", np.int64(1)),
             _c("limit", np.int64(cond_limit or 0))]
    return helper.make_graph(nodes, "body", inputs, outs, inits)


def _rnn_loop(counter=True, scan_out=True, trip=T, cond_limit=None):
    body = _cell_body(counter, scan_out, cond_limit)
    carried = ["i0", "h0"] if counter else ["h0"]
    outs = (["i_f"] if counter else []) + ["h_f"] + (["Y"] if scan_out else [])
    nodes = [helper.make_node("Transpose", ["X"], ["X_tm"], perm=[1, 0, 2]),
             helper.make_node("Loop", ["M" if trip is not None else "", "c0", *carried],
                              outs, body=body)]
    inits = [_c("c0", np.array(True)), _c("i0", np.int32(0)),
             _c("h0", np.zeros((1, H), np.float32)),
             _c("W", RNG.standard_normal((F, H)).astype(np.float32)),
             _c("R", RNG.standard_normal((H, H)).astype(np.float32) * 0.5),
             _c("B", RNG.standard_normal(H).astype(np.float32))]
    if trip is not None:
        inits.append(_c("M", np.int64(trip)))
    graph_outs = [_t("h_f", TensorProto.FLOAT, None)] + (
        [_t("Y", TensorProto.FLOAT, None)] if scan_out else [])
    return _model(nodes, [_t("X", TensorProto.FLOAT, [1, T, F])], graph_outs, inits)


def _x():
    return RNG.standard_normal((1, T, F)).astype(np.float32)


def test_tf2onnx_recurrent_loop_unrolls_with_one_copy_of_the_weights():
    module = _check(_rnn_loop(), {"X": _x()})
    params = [op for op in module.walk() if op.name == "minun.param"]
    names = [op.sym_name.data for op in params]
    assert len(names) == len(set(names))
    assert sum(n.startswith("R") for n in names) == 1  # not one per step


def test_loop_on_the_iteration_number_without_a_scan_output():
    _check(_rnn_loop(counter=False, scan_out=False), {"X": _x()})


def test_a_condition_ends_the_loop_before_its_trip_count():
    _check(_rnn_loop(counter=False, trip=T, cond_limit=3), {"X": _x()})


def test_a_loop_with_only_a_condition():
    _check(_rnn_loop(counter=False, trip=None, cond_limit=T), {"X": _x()})


def test_choosing_an_output_keeps_what_the_body_reads_from_outside():
    """import_model(outputs=...) keeps only the nodes an output needs: the Transpose that
    only the body reads (by name) is one of them."""
    _check(_rnn_loop(), {"X": _x()}, outputs=["h_f"])


def _sum_loop(trip: int, start: str):
    """acc = start + trip * K, the body reading K from the outer scope."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "K"], ["acc_out"])],
        "body", [_t("it", TensorProto.INT64, []), _t("cond_in", TensorProto.BOOL, []),
                 _t("acc_in", TensorProto.FLOAT, [2])],
        [_t("cond_out", TensorProto.BOOL, []), _t("acc_out", TensorProto.FLOAT, [2])])
    nodes = [helper.make_node("Loop", ["M", "", start], ["acc"], body=body),
             helper.make_node("Add", ["x", "acc"], ["y"])]
    inits = [_c("M", np.int64(trip)), _c("a0", np.zeros(2, np.float32)),
             _c("K", np.array([0.5, -1.0], np.float32))]
    return _model(nodes, [_t("x", TensorProto.FLOAT, [2])],
                  [_t("y", TensorProto.FLOAT, None)], inits)


def test_a_loop_on_constants_alone_becomes_a_constant():
    """Every input and every outer value the body reads is constant (and the optional
    condition absent): the unrolled loop is a constant, no run-time op."""
    module = _check(_sum_loop(4, "a0"), {"x": RNG.standard_normal(2).astype(np.float32)})
    assert [op.name for op in module.walk() if op.name.startswith("minun.")
            and op.name not in ("minun.input", "minun.param")] == ["minun.bias_add"]


def test_a_loop_carrying_a_graph_input():
    _check(_sum_loop(3, "x"), {"x": RNG.standard_normal(2).astype(np.float32)})


@pytest.mark.parametrize("in_dir,out_dir,in_axis,out_axis", [
    (0, 0, 1, 0), (1, 0, 1, 1), (0, 1, 0, 0), (1, 1, 0, 1)])
def test_scan_axes_and_directions(in_dir, out_dir, in_axis, out_axis):
    """A running sum with an RNN cell over the scan axis of one input, a second scan
    input added per step; reverse directions and other axes, as onnxruntime."""
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "W"], ["xw"]),
         helper.make_node("Add", ["xw", "z_t"], ["xz"]),
         helper.make_node("MatMul", ["h_in", "R"], ["hr"]),
         helper.make_node("Add", ["xz", "hr"], ["s"]),
         helper.make_node("Tanh", ["s"], ["h_out"]),
         helper.make_node("Mul", ["h_out", "two"], ["y_t"])],
        "body", [_t("h_in", TensorProto.FLOAT, [H]), _t("x_t", TensorProto.FLOAT, [F]),
                 _t("z_t", TensorProto.FLOAT, [H])],
        [_t("h_out", TensorProto.FLOAT, [H]), _t("y_t", TensorProto.FLOAT, [H])],
        [_c("two", np.float32(2.0))])
    x_shape = [T, F] if in_axis == 0 else [F, T]
    node = helper.make_node("Scan", ["h0", "X", "Z"], ["h_f", "Y"], body=body,
                            num_scan_inputs=2, scan_input_axes=[in_axis, 0],
                            scan_input_directions=[in_dir, 1 - in_dir],
                            scan_output_axes=[out_axis], scan_output_directions=[out_dir])
    inits = [_c("h0", np.zeros(H, np.float32)),
             _c("W", RNG.standard_normal((F, H)).astype(np.float32)),
             _c("R", RNG.standard_normal((H, H)).astype(np.float32) * 0.5)]
    model = _model([node], [_t("X", TensorProto.FLOAT, x_shape),
                            _t("Z", TensorProto.FLOAT, [T, H])],
                   [_t("h_f", TensorProto.FLOAT, None), _t("Y", TensorProto.FLOAT, None)],
                   inits)
    feeds = {"X": RNG.standard_normal(x_shape).astype(np.float32),
             "Z": RNG.standard_normal((T, H)).astype(np.float32)}
    _check(model, feeds)


def _error(model) -> str:
    with pytest.raises(MinunError) as info:
        import_model(model)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_too_many_iterations_is_a_located_error():
    message = _error(_sum_loop(5000, "x"))
    assert "(Loop)" in message and "more than 1024 iterations" in message


def test_a_run_time_condition_is_a_located_error():
    """A condition computed from run-time values: not unrolled, and said so."""
    body = helper.make_graph(
        [helper.make_node("ReduceSum", ["h_in"], ["s"], keepdims=0),
         helper.make_node("Less", ["s", "ten"], ["cond_out"]),
         helper.make_node("Add", ["h_in", "h_in"], ["h_out"])],
        "body", [_t("it", TensorProto.INT64, []), _t("cond_in", TensorProto.BOOL, []),
                 _t("h_in", TensorProto.FLOAT, [2])],
        [_t("cond_out", TensorProto.BOOL, []), _t("h_out", TensorProto.FLOAT, [2])],
        [_c("ten", np.float32(10.0))])
    model = _model([helper.make_node("Loop", ["M", "", "x"], ["h"], body=body)],
                   [_t("x", TensorProto.FLOAT, [2])], [_t("h", TensorProto.FLOAT, None)],
                   [_c("M", np.int64(8))])
    message = _error(model)
    assert "(Loop)" in message


@pytest.mark.parametrize("time_axis,lens", [(0, [4, 4]), (0, [4, 2]), (1, [3, 0, 1])])
def test_reverse_sequence(time_axis, lens):
    """tf2onnx's go_backwards / Bidirectional: whole rows reversed (one minun.reverse),
    or each row's first lens[b] steps, in either axis order, as onnxruntime."""
    batch_axis = 1 - time_axis
    shape = [4, len(lens), 3] if time_axis == 0 else [len(lens), 4, 3]
    node = helper.make_node("ReverseSequence", ["x", "lens"], ["r"], batch_axis=batch_axis,
                            time_axis=time_axis)
    tanh = helper.make_node("Tanh", ["r"], ["y"])
    model = _model([node, tanh], [_t("x", TensorProto.FLOAT, shape)],
                   [_t("y", TensorProto.FLOAT, None)], [_c("lens", np.array(lens, np.int64))])
    _check(model, {"x": RNG.standard_normal(shape).astype(np.float32)})


def test_a_loop_inside_a_loop_body_reads_the_outer_body_values():
    """The inner Loop's inputs are the same every outer iteration, but its body reads x_t,
    a value of the outer body that changes: it is imported again each time, not reused
    as a loop invariant."""
    inner = helper.make_graph(
        [helper.make_node("Identity", ["c2"], ["c2_out"]),
         helper.make_node("MatMul", ["x_t", "W"], ["xw"]),
         helper.make_node("MatMul", ["g_in", "R"], ["gr"]),
         helper.make_node("Add", ["xw", "gr"], ["s"]),
         helper.make_node("Tanh", ["s"], ["g_out"])],
        "inner", [_t("j", TensorProto.INT64, []), _t("c2", TensorProto.BOOL, []),
                  _t("g_in", TensorProto.FLOAT, [1, H])],
        [_t("c2_out", TensorProto.BOOL, []), _t("g_out", TensorProto.FLOAT, [1, H])])
    outer = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Gather", ["X_tm", "it"], ["x_t"], axis=0),
         helper.make_node("Loop", ["two", "", "h0"], ["g"], body=inner),
         helper.make_node("Add", ["g", "h_in"], ["h_out"])],
        "outer", [_t("it", TensorProto.INT64, []), _t("cond_in", TensorProto.BOOL, []),
                  _t("h_in", TensorProto.FLOAT, [1, H])],
        [_t("cond_out", TensorProto.BOOL, []), _t("h_out", TensorProto.FLOAT, [1, H])])
    nodes = [helper.make_node("Transpose", ["X"], ["X_tm"], perm=[1, 0, 2]),
             helper.make_node("Loop", ["M", "", "h0"], ["h_f"], body=outer)]
    inits = [_c("M", np.int64(T)), _c("two", np.int64(2)),
             _c("h0", np.zeros((1, H), np.float32)),
             _c("W", RNG.standard_normal((F, H)).astype(np.float32)),
             _c("R", RNG.standard_normal((H, H)).astype(np.float32) * 0.5)]
    model = _model(nodes, [_t("X", TensorProto.FLOAT, [1, T, F])],
                   [_t("h_f", TensorProto.FLOAT, None)], inits)
    _check(model, {"X": _x()})
