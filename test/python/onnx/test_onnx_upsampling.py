"""ConvTranspose, Resize / Upsample, InstanceNormalization, Softplus (also with the
threshold PyTorch's dynamo exporter writes) and Mish on small onnx.helper models: the
float evaluator equals onnxruntime for every attribute form the importer takes, the
refused forms get one-line messages naming the node, and the quantized programs' C
equals their bit-exact evaluator in each format."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from minun_mlir import native
from minun_mlir.diagnostics import MinunError
from minun_mlir.frontends.onnx import import_model
from minun_mlir.frontends.onnx.softplus_threshold import drop_softplus_threshold
from minun_mlir.numerics.float_eval import evaluate
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2
from minun_mlir.pipeline import lower_to_l2

RNG = np.random.default_rng(0)


def _model(nodes, shape, opset, inits=()):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def _ort(model, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return np.stack([session.run(None, {"x": row})[0] for row in x])


def _float_equals_ort(model, shape, scale=2.0) -> None:
    x = (RNG.standard_normal((3, *shape)) * scale).astype(np.float32)
    want = _ort(model, x)
    got = np.asarray(evaluate(import_model(model), x).outputs[0])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _conv_t(shape, w_shape, **attrs):
    w = RNG.standard_normal(w_shape).astype(np.float32)
    b = RNG.standard_normal(w_shape[1] * attrs.get("group", 1)).astype(np.float32)
    node = helper.make_node("ConvTranspose", ["x", "W", "B"], ["y"], **attrs)
    return _model([node], shape, 17, [_init("W", w), _init("B", b)])


CONV_T = {
    "stride2_k2": ((1, 3, 4, 4), (3, 2, 2, 2), {"strides": [2, 2]}),  # pixel blocks
    "blocks_pads": ((2, 3, 3, 4), (3, 2, 2, 3), {"strides": [2, 3], "pads": [1, 0, 0, 2]}),
    "blocks_1d": ((1, 2, 5), (2, 3, 3), {"strides": [3]}),
    "one_wide": ((1, 1, 3, 1), (1, 1, 3, 2), {"strides": [2, 2]}),  # a 1-element zero block
    "one_pixel": ((1, 1, 1, 1), (1, 2, 3, 3), {"strides": [2, 2]}),
    "stride1_k3": ((1, 2, 5, 5), (2, 3, 3, 3), {}),
    "stride2_k3_pads": ((1, 2, 4, 5), (2, 3, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "output_padding": ((1, 2, 4, 4), (2, 2, 3, 3),
                       {"strides": [2, 3], "pads": [1, 0, 1, 2], "output_padding": [1, 2]}),
    "crop_pads": ((1, 2, 5, 5), (2, 2, 2, 2), {"strides": [2, 2], "pads": [2, 0, 1, 3]}),
    "dilations": ((1, 2, 4, 4), (2, 2, 3, 2), {"strides": [2, 1], "dilations": [2, 3]}),
    "group": ((1, 4, 3, 3), (4, 3, 3, 3), {"strides": [2, 2], "group": 2}),
    "depthwise": ((1, 3, 3, 4), (3, 1, 2, 2), {"strides": [2, 2], "group": 3}),
    "conv1d": ((1, 3, 6), (3, 4, 4), {"strides": [2], "pads": [1, 1]}),
    "same_upper": ((1, 2, 3, 4), (2, 2, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    "same_lower": ((1, 2, 3, 4), (2, 2, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    "valid": ((1, 2, 3, 4), (2, 2, 3, 3), {"strides": [2, 2], "auto_pad": "VALID"}),
    "output_shape": ((1, 2, 3, 3), (2, 2, 3, 3), {"strides": [2, 2], "output_shape": [6, 7]}),
    "output_shape_larger": ((1, 2, 3, 3), (2, 2, 3, 3), {"strides": [3, 2],
                                                         "output_shape": [10, 8]}),
    "blocks_output_shape": ((1, 2, 3, 3), (2, 2, 2, 2), {"strides": [2, 2],
                                                         "output_shape": [5, 7]}),
}


@pytest.mark.parametrize("form", tuple(CONV_T))
def test_conv_transpose_equals_onnxruntime(form):
    shape, w_shape, attrs = CONV_T[form]
    _float_equals_ort(_conv_t(shape, w_shape, **attrs), shape)


def test_conv_transpose_of_a_conv_output_in_nhwc_layout_equals_onnxruntime():
    w = RNG.standard_normal((4, 1, 3, 3)).astype(np.float32)
    wt = RNG.standard_normal((4, 2, 2, 2)).astype(np.float32)
    model = _model([helper.make_node("Conv", ["x", "W"], ["c"]),
                    helper.make_node("ConvTranspose", ["c", "Wt"], ["y"], strides=[2, 2])],
                   (1, 1, 6, 6), 17, [_init("W", w), _init("Wt", wt)])
    _float_equals_ort(model, (1, 1, 6, 6))


def test_conv_transpose_with_a_run_time_filter_is_refused_naming_the_node():
    graph = helper.make_graph(
        [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [2, 2, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(MinunError, match=r"node 'up' \(ConvTranspose\): the filter W must be "
                                         r"a constant") as e:
        import_model(model)
    assert "\n" not in str(e.value)


def _resize(opset, shape, scales=None, sizes=None, **attrs):
    if opset <= 9:
        if opset == 7:
            node = helper.make_node("Upsample", ["x"], ["y"], scales=[float(v) for v in scales],
                                    **attrs)
            return _model([node], shape, opset)
        node = helper.make_node("Upsample", ["x", "scales"], ["y"], **attrs)
        return _model([node], shape, opset, [_init("scales", np.float32(scales))])
    if opset == 10:
        node = helper.make_node("Resize", ["x", "scales"], ["y"], **attrs)
        return _model([node], shape, opset, [_init("scales", np.float32(scales))])
    inits = [_init("roi", np.zeros(0, np.float32))]
    if sizes is not None:  # opset 11 wants an empty scales tensor, later ones none
        inputs = ["x", "roi", "none" if opset == 11 else "", "sizes"]
        inits += [_init("sizes", np.int64(sizes)), _init("none", np.zeros(0, np.float32))]
    else:
        inputs = ["x", "roi", "scales"]
        inits.append(_init("scales", np.float32(scales)))
    return _model([helper.make_node("Resize", inputs, ["y"], name="rs", **attrs)], shape,
                  opset, inits)


MODES = ("asymmetric", "half_pixel", "align_corners", "pytorch_half_pixel")
ROUNDING = ("floor", "ceil", "round_prefer_floor", "round_prefer_ceil")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rounding", ROUNDING)
def test_resize_nearest_by_two_equals_onnxruntime(mode, rounding):
    model = _resize(13, (1, 2, 3, 4), [1, 1, 2, 2], coordinate_transformation_mode=mode,
                    nearest_mode=rounding)
    _float_equals_ort(model, (1, 2, 3, 4))


@pytest.mark.parametrize("scales,sizes", [([1, 1, 3, 2], None), ([1, 1, 1.5, 2.5], None),
                                          ([1, 1, 0.5, 0.5], None), (None, [1, 2, 7, 3]),
                                          ([1, 2, 2, 1], None)])
@pytest.mark.parametrize("opset", (11, 13, 19))
def test_resize_nearest_by_other_factors_equals_onnxruntime(scales, sizes, opset):
    model = _resize(opset, (1, 2, 4, 6), scales, sizes,
                    coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    _float_equals_ort(model, (1, 2, 4, 6))


@pytest.mark.parametrize("scales", ([1, 1, 2, 3], [1, 1, 0.5, 2], [1, 1, 0.6, 1.5]))
@pytest.mark.parametrize("opset", (7, 9, 10))
def test_upsample_and_resize_10_equal_onnxruntime(opset, scales):
    model = _resize(opset, (1, 2, 5, 3), scales)
    if opset < 10 and min(scales) < 1:  # the spec and onnxruntime refuse it
        with pytest.raises(MinunError, match=r"\(Upsample\): scales .*: Upsample scales "
                                             r"must be at least 1$"):
            import_model(model)
        return
    _float_equals_ort(model, (1, 2, 5, 3))


def test_resize_tf_half_pixel_for_nn_is_refused_in_one_line():
    """A mode onnx.reference does not implement (deprecated since opset 13)."""
    model = _resize(11, (1, 2, 3, 4), [1, 1, 2, 2],
                    coordinate_transformation_mode="tf_half_pixel_for_nn")
    with pytest.raises(MinunError, match=r"node 'rs' \(Resize\): cannot compute the index "
                                         r"map: .*tf_half_pixel_for_nn") as e:
        import_model(model)
    assert "\n" not in str(e.value)


def test_resize_of_a_conv_output_in_nhwc_layout_equals_onnxruntime():
    w = RNG.standard_normal((3, 1, 3, 3)).astype(np.float32)
    model = _model([helper.make_node("Conv", ["x", "W"], ["c"]),
                    helper.make_node("Resize", ["c", "", "scales"], ["y"],
                                     coordinate_transformation_mode="asymmetric",
                                     nearest_mode="floor")],
                   (1, 1, 5, 5), 13, [_init("W", w),
                                      _init("scales", np.float32([1, 1, 2, 2]))])
    _float_equals_ort(model, (1, 1, 5, 5))


@pytest.mark.parametrize("mode,coords", [
    ("linear", "half_pixel"), ("linear", "align_corners"), ("linear", "pytorch_half_pixel"),
    ("linear", "asymmetric"), ("cubic", "half_pixel"), ("cubic", "align_corners")])
@pytest.mark.parametrize("scales", ([1, 1, 2, 2], [1, 1, 1.5, 0.5]))
def test_resize_linear_and_cubic_equal_onnxruntime(mode, coords, scales):
    """nn.Upsample(mode="bilinear" / "bicubic", align_corners=False / True) and others:
    a constant matrix per resized axis."""
    model = _resize(13, (1, 2, 4, 6), scales, mode=mode, coordinate_transformation_mode=coords)
    _float_equals_ort(model, (1, 2, 4, 6))


def test_bilinear_resize_of_a_conv_output_reads_each_axis_with_one_matmul():
    w = RNG.standard_normal((3, 1, 3, 3)).astype(np.float32)
    model = _model([helper.make_node("Conv", ["x", "W"], ["c"]),
                    helper.make_node("Resize", ["c", "", "scales"], ["y"], mode="linear")],
                   (1, 1, 5, 5), 13, [_init("W", w),
                                      _init("scales", np.float32([1, 1, 2, 2]))])
    _float_equals_ort(model, (1, 1, 5, 5))
    ops = [op.name for op in import_model(model).walk()]
    assert ops.count("minun.matmul") == 2


@pytest.mark.parametrize("opset", (7, 9, 10))
def test_upsample_and_resize_10_linear_equal_onnxruntime(opset):
    """Before opset 11 linear is asymmetric (the Resize-11 mode of that name)."""
    _float_equals_ort(_resize(opset, (1, 2, 3, 4), [1, 1, 2, 2.5], mode="linear"),
                      (1, 2, 3, 4))


def test_upsample_cubic_is_refused_naming_the_node():
    model = _resize(10, (1, 2, 3, 4), [1, 1, 2, 2], mode="cubic")
    with pytest.raises(MinunError, match=r"\(Resize\): mode 'cubic' is not supported") as e:
        import_model(model)
    assert "\n" not in str(e.value)


def _instance_norm(shape, eps=1e-5):
    c = shape[1]
    scale = RNG.uniform(0.5, 2, c).astype(np.float32)
    bias = RNG.standard_normal(c).astype(np.float32)
    node = helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=eps)
    return _model([node], shape, 6 + 11, [_init("s", scale), _init("b", bias)])


@pytest.mark.parametrize("shape", [(1, 3, 4, 5), (2, 4, 6), (1, 2, 2, 3, 2)])
def test_instance_normalization_equals_onnxruntime(shape):
    _float_equals_ort(_instance_norm(shape), shape)


def test_instance_normalization_of_a_conv_output_equals_onnxruntime():
    w = RNG.standard_normal((4, 1, 3, 3)).astype(np.float32)
    model = _model([helper.make_node("Conv", ["x", "W"], ["c"]),
                    helper.make_node("InstanceNormalization", ["c", "s", "b"], ["y"],
                                     epsilon=0.01)],
                   (1, 1, 6, 6), 17, [_init("W", w), _init("s", np.float32([1, 2, 3, 4])),
                                      _init("b", np.float32([0, 1, -1, 0.5]))])
    _float_equals_ort(model, (1, 1, 6, 6))


@pytest.mark.parametrize("op,opset", [("Softplus", 1), ("Softplus", 17), ("Mish", 18)])
@pytest.mark.parametrize("shape", [(2, 7), (1, 3, 2, 4)])
def test_softplus_and_mish_equal_onnxruntime(op, opset, shape):
    model = _model([helper.make_node(op, ["x"], ["y"])], shape, max(opset, 7))
    _float_equals_ort(model, shape, scale=6.0)


def _pipeline(norm: bool = True):
    """Conv, ConvTranspose, Mish, InstanceNormalization (if `norm`), Resize by 2
    (nearest), Softplus and a bilinear Resize."""
    w = (RNG.standard_normal((4, 1, 3, 3)) * 0.5).astype(np.float32)
    wt = (RNG.standard_normal((4, 2, 2, 2)) * 0.5).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], strides=[2, 2]),
             helper.make_node("ConvTranspose", ["c", "Wt", "Bt"], ["t"], strides=[2, 2]),
             helper.make_node("Mish", ["t"], ["m"]),
             helper.make_node("InstanceNormalization", ["m", "s", "b"], ["n"]) if norm else
             helper.make_node("Identity", ["m"], ["n"]),
             helper.make_node("Resize", ["n", "", "scales"], ["r"],
                              coordinate_transformation_mode="asymmetric",
                              nearest_mode="floor"),
             helper.make_node("Softplus", ["r"], ["p"]),
             helper.make_node("Resize", ["p", "", "half"], ["y"], mode="linear")]
    return _model(nodes, (1, 1, 5, 5), 18, [
        _init("W", w), _init("Wt", wt), _init("Bt", np.float32([0.1, -0.2])),
        _init("s", np.float32([1.5, 0.5])), _init("b", np.float32([0.2, -0.1])),
        _init("scales", np.float32([1, 1, 2, 2])), _init("half", np.float32([1, 1, 0.5, 1.5]))])


@pytest.mark.parametrize("repr_bits", [("fixed", 16), ("fixed", 8), ("float32", 32),
                                       ("posit", 16), ("bfloat16", 16), ("zero-skew", 8)])
def test_quantized_c_equals_the_evaluator(repr_bits, tmp_path):
    """Each format's C (built for the host) gives its evaluator's stored outputs, which
    stay close to onnxruntime at 16 bits and more. zero-skew has no normalise_l2, so its
    model leaves the InstanceNormalization out (refused: the next test)."""
    rep, bits = repr_bits
    model = _pipeline(norm=rep != "zero-skew")
    x = RNG.standard_normal((16, 1, 1, 5, 5)).astype(np.float32)
    want = _ort(model, x)
    l1 = import_model(model)
    np.testing.assert_allclose(np.asarray(evaluate(l1, x).outputs[0]), want, rtol=1e-5,
                               atol=1e-5)
    train = tmp_path / "train.npy"
    np.save(train, np.concatenate([np.zeros((len(x), 1)), x.reshape(len(x), -1)], 1))
    l2 = lower_to_l2(l1, repr=rep, bits=bits, data=str(train), evaluator="numpy")
    stored = evaluate_l2(l2, x).outputs[0]
    c_out = native.NativeProgram(l2).outputs(x)[0]
    if rep == "float32":  # libm's expf/logf may differ from numpy's in the last place
        np.testing.assert_allclose(c_out, stored, rtol=1e-5, atol=1e-6)
    else:
        assert np.array_equal(c_out, stored)
    if bits >= 16:
        err = np.abs(decode_outputs(l2, [stored])[0].reshape(want.shape) - want).max()
        assert err < (0.05 if rep == "bfloat16" else 0.02) * max(1.0, float(np.abs(want).max()))


def test_instance_normalization_at_zero_skew_is_refused_in_one_line(tmp_path):
    model = _pipeline()
    x = RNG.standard_normal((8, 1, 1, 5, 5)).astype(np.float32)
    train = tmp_path / "train.npy"
    np.save(train, np.concatenate([np.zeros((len(x), 1)), x.reshape(len(x), -1)], 1))
    with pytest.raises(MinunError, match="normalise_l2: not supported by the zero-skew") as e:
        lower_to_l2(import_model(model), repr="zero-skew", bits=8, data=str(train))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("repr_bits", [("fixed", 16), ("posit", 16), ("zero-skew", 8)])
@pytest.mark.parametrize("lo,hi", [(-4, 4), (-6, 1), (-1, 6)])
def test_softplus_stays_within_a_few_output_steps_of_log1p_exp(repr_bits, lo, hi, tmp_path):
    """On one-sided input ranges too (a neg keeping its operand's zero-skew type
    saturated there: the pair uses relu(x) - x, the result a product by -1)."""
    rep, bits = repr_bits
    model = _model([helper.make_node("Softplus", ["x"], ["y"])], (1, 64), 17)
    x = np.linspace(lo, hi, 64, dtype=np.float32).reshape(1, 1, 64)
    want = np.log1p(np.exp(x.astype(np.float64)))
    train = tmp_path / "train.npy"
    np.save(train, np.concatenate([np.zeros((1, 1)), x.reshape(1, -1)], 1))
    l2 = lower_to_l2(import_model(model), repr=rep, bits=bits, data=str(train),
                     evaluator="numpy")
    got = decode_outputs(l2, evaluate_l2(l2, x).outputs)[0].reshape(want.shape)
    # 4 output steps at 8 bits; at 16 the exp table inside log_softmax (about 2^-9) rules
    step = want.max() / 2 ** (bits - 1)
    assert np.abs(got - want).max() < max(4 * step, 2e-3)


def _thresholded_softplus(beta: float, threshold: float, true_branch: str = "x"):
    """nn.Softplus(beta, threshold) as PyTorch's dynamo exporter writes it."""
    nodes, s, b = [], "x", "sp"
    if beta != 1.0:
        nodes.append(helper.make_node("Mul", ["x", "beta"], ["s"]))
        s, b = "s", "spd"
    nodes.append(helper.make_node("Softplus", [s], ["sp"]))
    if beta != 1.0:
        nodes.append(helper.make_node("Div", ["sp", "beta"], ["spd"]))
    nodes += [helper.make_node("Greater", [s, "t"], ["c"]),
              helper.make_node("Where", ["c", true_branch, b], ["y"], name="w")]
    inits = [_init("beta", np.float32(beta)), _init("t", np.float32(threshold)),
             _init("other", np.float32(0.5))]
    return _model(nodes, (2, 6), 18, inits)


@pytest.mark.parametrize("beta", (1.0, 2.0))
def test_dynamo_thresholded_softplus_equals_onnxruntime(beta):
    """The Where of nn.Softplus' threshold (20) is dropped: both branches agree there."""
    model = _thresholded_softplus(beta, 20.0)
    _float_equals_ort(model, (2, 6), scale=15.0)
    assert "Where" not in {n.op_type for n in drop_softplus_threshold(model).graph.node}


@pytest.mark.parametrize("threshold,true_branch", [(5.0, "x"), (20.0, "other")])
def test_other_wheres_stay_and_are_refused_naming_the_node(threshold, true_branch):
    """A threshold where the branches differ (5), or another true branch, is a real Where
    (its Greater, first in the graph, is the node refused)."""
    with pytest.raises(MinunError, match=r"node 'c' \(Greater\): unsupported operator") as e:
        import_model(_thresholded_softplus(2.0, threshold, true_branch))
    assert "\n" not in str(e.value)
