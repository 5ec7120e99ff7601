"""ReduceMean/ReduceSum/ReduceMax on any axes, LayerNormalization (the operator, and the
decomposed form older exporters write), RMSNormalization, Erf (GELU), Pow and a fixed
input batch > 1, on small onnx.helper models: the float evaluator equals onnxruntime,
and the quantized programs' C equals their bit-exact evaluator in the formats that
implement them (zero-skew has no L2 normalisation: refused with a message)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from minun_mlir import native
from minun_mlir.diagnostics import MinunError
from minun_mlir.frontends.onnx import import_model
from minun_mlir.numerics.float_eval import evaluate
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2
from minun_mlir.passes.lower_composite_ops import lower_composite_ops
from minun_mlir.pipeline import lower_to_l2

RNG = np.random.default_rng(0)


def _model(nodes, shape, opset, inits=(), out_shape=None, extra_opsets=()):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                   *extra_opsets])


def _ort(model, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return np.stack([session.run(None, {"x": row})[0] for row in x])


def _float_equals_ort(model, x: np.ndarray) -> None:
    got = np.asarray(evaluate(import_model(model), x).outputs[0])
    want = _ort(model, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _axes_input(axes):
    return helper.make_tensor("axes", TensorProto.INT64, [len(axes)], axes)


def _reduce(op: str, axes, keepdims: int, opset: int, shape=(2, 3, 5)):
    """op over axes (None: all), as an attribute or, from opset 18 (ReduceSum: 13), an
    input."""
    attrs, inputs, inits = {"keepdims": keepdims}, ["x"], []
    if axes is not None:
        if opset >= (13 if op == "ReduceSum" else 18):
            inputs, inits = ["x", "axes"], [_axes_input(axes)]
        else:
            attrs["axes"] = axes
    return _model([helper.make_node(op, inputs, ["y"], **attrs)], list(shape), opset, inits)


AXES = ([0], [1], [2], [-1], [0, 2], [1, 2], [-3, -2], None)


@pytest.mark.parametrize("opset", (13, 18))
@pytest.mark.parametrize("op", ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
                                "ReduceSumSquare"))
def test_reductions_on_any_axes_equal_onnxruntime(op, opset):
    x = RNG.standard_normal((4, 2, 3, 5)).astype(np.float32)
    for axes in AXES:
        for keepdims in (0, 1):
            _float_equals_ort(_reduce(op, axes, keepdims, opset), x)


@pytest.mark.parametrize("op", ("ReduceMean", "ReduceMax"))
def test_reductions_of_a_conv_output_in_its_nhwc_layout_equal_onnxruntime(op):
    """A Conv's output is held NHWC: every axis set, whichever order it is read in."""
    w = numpy_helper.from_array(RNG.standard_normal((3, 2, 3, 3)).astype(np.float32), "W")
    x = RNG.standard_normal((2, 1, 2, 4, 5)).astype(np.float32)
    for axes in ([1], [2], [3], [1, 2], [1, 3], [2, 3], [1, 2, 3], [0, 2]):
        for keepdims in (0, 1):
            model = _model([helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1]),
                            helper.make_node(op, ["c"], ["y"], axes=axes,
                                             keepdims=keepdims)], [1, 2, 4, 5], 13, [w])
            _float_equals_ort(model, x)


def test_reduction_noop_with_empty_axes_is_the_identity():
    model = _model([helper.make_node("ReduceSum", ["x", "axes"], ["y"], noop_with_empty_axes=1)],
                   [2, 3], 13, [helper.make_tensor("axes", TensorProto.INT64, [0], [])])
    _float_equals_ort(model, RNG.standard_normal((3, 2, 3)).astype(np.float32))


def _conv1d_pool():
    """Conv1d then mean and max over the time axis of its [1, C, T] output (PyTorch's
    `mean(dim=2)`, `amax(dim=2)`), the sum over channels and the minimum over time."""
    w = numpy_helper.from_array(RNG.standard_normal((6, 4, 3)).astype(np.float32) * 0.4, "W")
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("ReduceMean", ["r", "a2"], ["m"], keepdims=0),
             helper.make_node("ReduceMax", ["r", "a2"], ["k"], keepdims=0),
             helper.make_node("ReduceSum", ["r", "a1"], ["s"], keepdims=0),
             helper.make_node("ReduceMin", ["c", "a2"], ["n"], keepdims=0),
             helper.make_node("Concat", ["m", "k", "s", "n"], ["y"], axis=1)]
    inits = [w, helper.make_tensor("a2", TensorProto.INT64, [1], [2]),
             helper.make_tensor("a1", TensorProto.INT64, [1], [1])]
    return _model(nodes, [1, 4, 8], 18, inits)


def _transformer_ops():
    """LayerNorm (the operator), GELU with Erf, a decomposed LayerNorm, a mean over tokens."""
    d = 8
    g, b = (numpy_helper.from_array(RNG.standard_normal(d).astype(np.float32), n)
            for n in ("g", "b"))
    w = numpy_helper.from_array(RNG.standard_normal((d, d)).astype(np.float32) * 0.5, "W")
    consts = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in
              (("r2", math.sqrt(2)), ("one", 1.0), ("half", 0.5), ("two", 2.0), ("eps", 1e-5))]
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["n"], axis=-1),
             helper.make_node("MatMul", ["n", "W"], ["h"]),
             helper.make_node("Div", ["h", "r2"], ["h2"]),
             helper.make_node("Erf", ["h2"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["e1"]),
             helper.make_node("Mul", ["h", "e1"], ["he"]),
             helper.make_node("Mul", ["he", "half"], ["gelu"]),
             helper.make_node("ReduceMean", ["gelu", "am"], ["m"]),
             helper.make_node("Sub", ["gelu", "m"], ["dv"]),
             helper.make_node("Pow", ["dv", "two"], ["p"]),
             helper.make_node("ReduceMean", ["p", "am"], ["v"]),
             helper.make_node("Add", ["v", "eps"], ["ve"]),
             helper.make_node("Sqrt", ["ve"], ["sd"]),
             helper.make_node("Div", ["dv", "sd"], ["z"]),
             helper.make_node("Mul", ["z", "g"], ["zg"]),
             helper.make_node("Add", ["zg", "b"], ["ln"]),
             helper.make_node("ReduceMean", ["ln", "a1"], ["y"], keepdims=0)]
    inits = [g, b, w, *consts, helper.make_tensor("am", TensorProto.INT64, [1], [-1]),
             helper.make_tensor("a1", TensorProto.INT64, [1], [1])]
    return _model(nodes, [1, 4, d], 18, inits)


def _gelu():
    """GELU as exporters write it, 0.5 x (1 + erf(x / sqrt 2)), then a mean over tokens."""
    consts = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in
              (("r2", math.sqrt(2)), ("one", 1.0), ("half", 0.5))]
    nodes = [helper.make_node("Div", ["x", "r2"], ["h2"]),
             helper.make_node("Erf", ["h2"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["e1"]),
             helper.make_node("Mul", ["x", "e1"], ["he"]),
             helper.make_node("Mul", ["he", "half"], ["g"]),
             helper.make_node("ReduceMean", ["g"], ["y"], axes=[1], keepdims=0)]
    return _model(nodes, [1, 4, 8], 13, consts)


MODELS = {"conv1d_pool": _conv1d_pool, "transformer_ops": _transformer_ops, "gelu": _gelu}


def _train(x: np.ndarray, tmp_path) -> str:
    path = tmp_path / "train.npy"
    np.save(path, np.concatenate([np.zeros((len(x), 1)), x.reshape(len(x), -1)], 1))
    return str(path)


@pytest.mark.parametrize("repr_bits", [("fixed", 16), ("fixed", 8), ("posit", 16),
                                       ("bfloat16", 16), ("zero-skew", 8)])
@pytest.mark.parametrize("which", tuple(MODELS))
def test_quantized_c_equals_the_evaluator(which, repr_bits, tmp_path):
    """Each format's C (built for the host) gives its evaluator's stored outputs, which
    stay close to onnxruntime at 16 bits."""
    rep, bits = repr_bits
    model = MODELS[which]()
    x = RNG.standard_normal((24, 1, 4, 8)).astype(np.float32) * 2
    want = _ort(model, x)
    l1 = import_model(model)
    np.testing.assert_allclose(np.asarray(evaluate(l1, x).outputs[0]), want, rtol=1e-5,
                               atol=1e-5)
    if rep == "zero-skew" and which == "transformer_ops":
        with pytest.raises(MinunError, match="normalise_l2: not supported by the zero-skew"):
            lower_to_l2(l1, repr=rep, bits=bits, data=_train(x, tmp_path))
        return
    l2 = lower_to_l2(l1, repr=rep, bits=bits, data=_train(x, tmp_path), evaluator="numpy")
    stored = evaluate_l2(l2, x).outputs[0]
    assert np.array_equal(native.NativeProgram(l2).outputs(x)[0], stored)
    if bits == 16:
        err = np.abs(decode_outputs(l2, [stored])[0].reshape(want.shape) - want).max()
        assert err < 0.02 * max(1.0, float(np.abs(want).max()))


@pytest.mark.parametrize("approximate", ("none", "tanh"))
def test_gelu_operator_equals_onnxruntime(approximate):
    model = _model([helper.make_node("Gelu", ["x"], ["y"], approximate=approximate)], [2, 5],
                   20)
    _float_equals_ort(model, RNG.standard_normal((4, 2, 5)).astype(np.float32) * 3)


def test_erf_expansion_is_within_its_bound():
    """lower-composite-ops' erf (tanh of an odd quintic) against math.erf."""
    model = _model([helper.make_node("Erf", ["x"], ["y"])], [1, 4001], 13)
    l1 = import_model(model)
    x = np.linspace(-8, 8, 4001).reshape(1, 1, -1)
    lower_composite_ops(l1)
    got = np.asarray(evaluate(l1, x).outputs[0]).reshape(-1)
    err = np.abs(got - np.array([math.erf(v) for v in x.reshape(-1)]))
    assert err.max() < 5.3e-5
    assert got.max() == 1.0 and got.min() == -1.0  # reached, as a fixed-point tanh does


@pytest.mark.parametrize("opset", (13, 18))
def test_decomposed_layer_norm_is_fused_and_equals_onnxruntime(opset):
    am = [] if opset < 18 else ["am"]
    rm_attrs = {"axes": [-1]} if opset < 18 else {}
    nodes = [helper.make_node("ReduceMean", ["x", *am], ["m"], **rm_attrs),
             helper.make_node("Sub", ["x", "m"], ["d"]),
             helper.make_node("Mul", ["d", "d"], ["p"]),  # the square as Mul(d, d)
             helper.make_node("ReduceMean", ["p", *am], ["v"], **rm_attrs),
             helper.make_node("Add", ["v", "eps"], ["ve"]),
             helper.make_node("Sqrt", ["ve"], ["s"]),
             helper.make_node("Div", ["d", "s"], ["y"])]
    inits = [numpy_helper.from_array(np.array(0.3, np.float32), "eps")]
    if opset >= 18:
        inits.append(helper.make_tensor("am", TensorProto.INT64, [1], [-1]))
    model = _model(nodes, [2, 6], opset, inits)
    _float_equals_ort(model, RNG.standard_normal((5, 2, 6)).astype(np.float32) * 0.3)


def test_decomposed_norm_with_a_reciprocal_is_fused_and_equals_onnxruntime():
    """d * Reciprocal(Sqrt(ReduceMean(Pow(d, 2)) + eps)), the product in either order."""
    for order in (["r", "x"], ["x", "r"]):
        nodes = [helper.make_node("Pow", ["x", "two"], ["p"]),
                 helper.make_node("ReduceMean", ["p"], ["v"], axes=[-2, -1]),
                 helper.make_node("Add", ["eps", "v"], ["ve"]),
                 helper.make_node("Sqrt", ["ve"], ["s"]),
                 helper.make_node("Reciprocal", ["s"], ["r"]),
                 helper.make_node("Mul", order, ["y"])]
        inits = [numpy_helper.from_array(np.array(v, np.float32), n)
                 for n, v in (("eps", 0.01), ("two", 2.0))]
        model = _model(nodes, [2, 3, 4], 13, inits)
        _float_equals_ort(model, RNG.standard_normal((3, 2, 3, 4)).astype(np.float32))


def test_a_sqrt_read_elsewhere_is_not_fused_and_is_refused_at_the_sqrt():
    nodes = [helper.make_node("Mul", ["x", "x"], ["p"]),
             helper.make_node("ReduceMean", ["p"], ["v"], axes=[-1]),
             helper.make_node("Sqrt", ["v"], ["s"]),
             helper.make_node("Div", ["x", "s"], ["q"]),
             helper.make_node("Add", ["q", "s"], ["y"])]
    with pytest.raises(MinunError, match=r"node 's' \(Sqrt\): unsupported operator Sqrt"):
        import_model(_model(nodes, [2, 6], 13))


@pytest.mark.parametrize("axis", (-1, 1, 2))
def test_layer_normalization_over_trailing_axes_equals_onnxruntime(axis):
    shape = (2, 3, 4)
    tail = shape[axis:]
    g, b = (numpy_helper.from_array(RNG.standard_normal(tail).astype(np.float32), n)
            for n in ("g", "b"))
    model = _model([helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=axis,
                                     epsilon=0.01)], list(shape), 17, [g, b])
    _float_equals_ort(model, RNG.standard_normal((3, *shape)).astype(np.float32))


def test_rms_normalization_equals_onnxruntime():
    g = numpy_helper.from_array(RNG.standard_normal(5).astype(np.float32), "g")
    model = _model([helper.make_node("RMSNormalization", ["x", "g"], ["y"], epsilon=0.1)],
                   [3, 5], 23, [g])
    _float_equals_ort(model, RNG.standard_normal((3, 3, 5)).astype(np.float32))


@pytest.mark.parametrize("exponent", (2.0, 3.0))
def test_pow_by_a_small_integer_equals_onnxruntime(exponent):
    e = numpy_helper.from_array(np.array(exponent, np.float32), "e")
    model = _model([helper.make_node("Pow", ["x", "e"], ["y"])], [2, 3], 15, [e])
    _float_equals_ort(model, RNG.standard_normal((3, 2, 3)).astype(np.float32))


def test_pow_by_a_half_is_refused_naming_the_node():
    e = numpy_helper.from_array(np.array(0.5, np.float32), "e")
    model = _model([helper.make_node("Pow", ["x", "e"], ["y"], name="root")], [2, 3], 15, [e])
    with pytest.raises(MinunError, match=r"node 'root' \(Pow\): Pow with exponent \[0.5\]"):
        import_model(model)


def _batch3(ml: bool):
    """x [3, 4] -> MatMul -> Softmax [3, 2], after an ai.onnx.ml Scaler when `ml`."""
    w = numpy_helper.from_array(RNG.standard_normal((4, 2)).astype(np.float32), "W")
    nodes = [helper.make_node("MatMul", ["s" if ml else "x", "W"], ["h"]),
             helper.make_node("Softmax", ["h"], ["y"], axis=-1)]
    if ml:
        nodes.insert(0, helper.make_node("Scaler", ["x"], ["s"], domain="ai.onnx.ml",
                                         offset=[0.5, 0.0, -0.5, 1.0], scale=[2.0] * 4))
    return _model(nodes, [3, 4], 13, [w], out_shape=[3, 2],
                  extra_opsets=[helper.make_opsetid("ai.onnx.ml", 1)] if ml else [])


def _rows(model, x):
    return ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def test_a_fixed_batch_of_an_ml_model_compiles_one_row_with_a_warning():
    model = _batch3(ml=True)
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        l1 = import_model(model)
    assert [str(w.message) for w in caught] == [
        "warning: graph input 'x': a fixed batch of 3; compiled for a batch of 1 (all 3 rows: "
        "`--dim batch=3`)"]
    rows = np.asarray(evaluate(l1, x[:, None]).outputs[0]).reshape(3, 2)
    np.testing.assert_allclose(rows, _rows(model, x), rtol=1e-6, atol=1e-6)


def test_a_fixed_leading_size_of_a_network_keeps_its_shape():
    """Without ai.onnx.ml operators the leading axis need not be examples: all 3 rows are
    computed, with no warning."""
    model = _batch3(ml=False)
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        l1 = import_model(model)
    np.testing.assert_allclose(np.asarray(evaluate(l1, x[None]).outputs[0])[0],
                               _rows(model, x), rtol=1e-6, atol=1e-6)
