"""Which of the ONNX backend node tests (shipped with the onnx package) are ours to pass,
which are excluded and why, and how to run one through the importer and the float
evaluator. Shared by test_onnx_node_tests.py and the summary printed by conftest.py.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

NODE_DIR = Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data" / "node"

# Test-name token (after `test_`) -> the operator those tests are about. A test is
# relevant when its name is `test_<token>` or `test_<token>_...` and its graph uses that
# operator, or it is the `_expanded` form of such a test (the operator's function body).
OP_TOKENS = {
    "gemm": "Gemm", "matmul": "MatMul", "add": "Add", "sub": "Sub", "mul": "Mul",
    "div": "Div", "relu": "Relu", "leakyrelu": "LeakyRelu", "clip": "Clip",
    "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "softmax": "Softmax",
    "hardsigmoid": "HardSigmoid", "hardswish": "HardSwish", "prelu": "PRelu", "elu": "Elu",
    "gather": "Gather", "split": "Split", "slice": "Slice", "reduce_mean": "ReduceMean",
    "logsoftmax": "LogSoftmax", "argmax": "ArgMax", "conv": "Conv", "basic_conv": "Conv",
    "maxpool": "MaxPool", "averagepool": "AveragePool",
    "globalaveragepool": "GlobalAveragePool", "reshape": "Reshape", "flatten": "Flatten",
    "transpose": "Transpose", "concat": "Concat", "squeeze": "Squeeze",
    "unsqueeze": "Unsqueeze", "batchnorm": "BatchNormalization", "identity": "Identity",
    "dropout": "Dropout", "training_dropout": "Dropout", "constant": "Constant",
    "shape": "Shape", "gru": "GRU", "lstm": "LSTM", "rnn": "RNN", "simple_rnn": "RNN",
    "reduce_sum": "ReduceSum", "reduce_max": "ReduceMax", "reduce_min": "ReduceMin",
    "reduce_sum_square": "ReduceSumSquare", "gelu": "Gelu", "erf": "Erf", "pow": "Pow",
    "layer_normalization": "LayerNormalization", "rms_normalization": "RMSNormalization",
    "loop11": "Loop", "loop13_seq": "Loop", "loop16_seq_none": "Loop", "scan": "Scan",
    "scan9": "Scan",
    "convtranspose": "ConvTranspose", "resize": "Resize", "upsample": "Upsample",
    "instancenorm": "InstanceNormalization", "softplus": "Softplus", "mish": "Mish",
    "constant_pad": "Pad", "edge_pad": "Pad", "reflect_pad": "Pad", "wrap_pad": "Pad",
    # domain ai.onnx.ml
    "ai_onnx_ml_array_feature_extractor": "ArrayFeatureExtractor",
    "ai_onnx_ml_binarizer": "Binarizer", "ai_onnx_ml_tree_ensemble": "TreeEnsemble",
}

# Inputs that real models carry as initializers (shapes, axes, bounds, lengths): the
# node tests feed them as graph inputs, so the runner freezes them with the test's own
# data. (operator, input index) pairs; everything else stays a run-time input.
STATIC_INPUTS = {
    "Reshape": {1}, "Squeeze": {1}, "Unsqueeze": {1}, "Clip": {1, 2}, "Dropout": {1, 2},
    "PRelu": {1}, "Gather": {1}, "Split": {1}, "ReduceMean": {1}, "Slice": {1, 2, 3, 4},
    "ReduceSum": {1}, "ReduceMax": {1}, "Pow": {1}, "ReduceMin": {1}, "ReduceSumSquare": {1},
    "GRU": {4}, "LSTM": {4}, "RNN": {4}, "ArrayFeatureExtractor": {1}, "Loop": {0, 1},
    "ConvTranspose": {1}, "Resize": {1, 2, 3}, "Upsample": {1}, "Pad": {1, 2, 3},
}

# Stored expected outputs that are rounded: the absolute tolerance their rounding needs.
LOOSE_ATOL = {
    # expected values are stored with 4 decimals (0.1511); onnx.reference agrees with us
    # to 1e-7
    "test_averagepool_2d_ceil_last_window_starts_on_pad": 1e-4,
}

_INT = "integer tensors: the L1 dialect computes in float32"
_ARGMAX = ("ArgMax computing several indices: minun.argmax returns one flat i32 index "
           "(supported when every dimension but the axis is 1)")
_LAST = "ArgMax select_last_index=1: minun.argmax returns the first maximum"
_POOL3D = "3-D pooling: the L1 pooling ops are 2-D (1-D runs as 2-D with H=1)"
_DIL = "pooling dilations: minun.maxpool/avgpool have no dilations attribute"
_TRAIN = "training mode: the importer is for inference"
_REDUCE = "expanded function body uses Log, which is not supported"
_NORM_EXPANDED = ("the function body divides by a Sqrt of axes computed from Shape/Range: the "
                  "fusion into an L2 normalisation (fuse.py) needs constant axes")
_WHERE = "expanded function body uses Less/Where, which are not supported"

_LOG = "expanded function body uses Log, which is not supported"

EXCLUDED: dict[str, str] = {
    "test_convtranspose_3d": "3-D convolution: the L1 conv2d is 2-D (1-D runs as 2-D)",
    "test_resize_tf_crop_and_resize_extrapolation_value": (
        "an extrapolation value outside the crop: not a weighted sum per axis (refused)"),
    "test_softplus_expanded_ver18": _LOG, "test_softplus_example_expanded_ver18": _LOG,
    **{f"test_{op}_{t}": _INT for op in ("add", "sub", "mul", "div")
       for t in ("int8", "int16", "uint8", "uint16", "uint32", "uint64")},
    "test_div_int32_trunc": _INT,
    **{f"test_clip_default_int8_{t}": _INT
       for t in ("inbounds", "inbounds_expanded", "max", "max_expanded", "min",
                 "min_expanded")},
    "test_maxpool_2d_uint8": _INT,
    "test_loop13_seq": "a sequence graph input (the L1 dialect has tensors only)",
    "test_loop16_seq_none": "an optional sequence graph input (tensors only)",
    "test_scan_sum": "Scan-8 (a batch axis and sequence_lens) is refused; Scan-9+ is unrolled",
    **{f"test_argmax_{case}": _ARGMAX
       for case in ("default_axis_example", "default_axis_random", "keepdims_example",
                    "keepdims_random", "negative_axis_keepdims_example",
                    "negative_axis_keepdims_random", "no_keepdims_example",
                    "no_keepdims_random")},
    **{f"test_argmax_{case}_select_last_index": _LAST
       for case in ("default_axis_example", "default_axis_random", "keepdims_example",
                    "keepdims_random", "negative_axis_keepdims_example",
                    "negative_axis_keepdims_random", "no_keepdims_example",
                    "no_keepdims_random")},
    "test_averagepool_2d_dilations": _DIL,
    "test_maxpool_2d_dilations": _DIL,
    "test_averagepool_3d_default": _POOL3D,
    "test_averagepool_3d_dilations_small": _POOL3D,
    **{f"test_averagepool_3d_dilations_large_count_include_pad_is_{c}_ceil_mode_is_{m}":
       _POOL3D for c in (0, 1) for m in ("False", "True")},
    "test_maxpool_3d_default": _POOL3D,
    "test_maxpool_3d_dilations": _POOL3D,
    "test_maxpool_3d_dilations_use_ref_impl": _POOL3D,
    "test_maxpool_3d_dilations_use_ref_impl_large": _POOL3D,
    "test_maxpool_with_argmax_2d_precomputed_pads":
        "MaxPool Indices output: there is no L1 op for it",
    "test_maxpool_with_argmax_2d_precomputed_strides":
        "MaxPool Indices output: there is no L1 op for it",
    "test_batchnorm_epsilon_training_mode": _TRAIN,
    "test_batchnorm_example_training_mode": _TRAIN,
    **{f"test_training_dropout{s}": _TRAIN
       for s in ("", "_default", "_default_mask", "_mask", "_zero_ratio",
                 "_zero_ratio_mask")},
    "test_dropout_default_mask": "Dropout mask output: the L1 dialect has no boolean tensors",
    "test_dropout_default_mask_ratio":
        "Dropout mask output: the L1 dialect has no boolean tensors",
    **{f"test_{m}_pad": "an INT32 tensor padded: the L1 dialect computes in float32 "
       "(test_onnx_pad.py checks every mode on floats)" for m in ("edge", "reflect", "wrap")},
    "test_identity_opt": "optional-typed input: only tensor inputs are supported",
    "test_identity_sequence": "sequence-typed input: only tensor inputs are supported",
    "test_reshape_allowzero_reordered":
        "zero-size tensor (an input dimension is 0): not supported",
    "test_shape_start_greater_than_end": "the output is an empty tensor: not supported",
    "test_slice_start_out_of_bounds": "the output is an empty tensor: not supported",
    **{f"test_clip_{case}_expanded": _WHERE
       for case in ("default_max", "default_min", "example", "inbounds",
                    "min_greater_than_max", "outbounds", "splitbounds")},
    "test_clip_expanded": _WHERE,
    "test_leakyrelu_expanded": _WHERE,
    "test_leakyrelu_default_expanded": _WHERE,
    **{f"test_elu{case}_expanded_ver18": _WHERE for case in ("", "_default", "_example")},
    **{f"test_prelu_{case}_expanded": _WHERE for case in ("broadcast", "example")},
    **{f"test_split_zero_size_splits_opset{v}": "zero-size outputs: L1 has no empty tensors"
       for v in (13, 18)},
    "test_leakyrelu_example_expanded": _WHERE,
    **{f"test_{op}_{case}_expanded{v}": _REDUCE
       for op in ("logsoftmax",) for v in ("", "_ver18")
       for case in ("axis_0", "axis_1", "axis_2", "default_axis", "large_number",
                    "negative_axis")},
    **{f"test_logsoftmax_example_1_expanded{v}": _REDUCE for v in ("", "_ver18")},
    **{f"test_{op}_{case}_expanded{v}": _NORM_EXPANDED
       for op, v in (("layer_normalization", ""), ("layer_normalization", "_ver18"),
                     ("rms_normalization", ""))
       for case in ("2d_axis0", "2d_axis1", "2d_axis_negative_1", "2d_axis_negative_2",
                    "3d_axis0_epsilon", "3d_axis1_epsilon", "3d_axis2_epsilon",
                    "3d_axis_negative_1_epsilon", "3d_axis_negative_2_epsilon",
                    "3d_axis_negative_3_epsilon", "4d_axis0", "4d_axis1", "4d_axis2",
                    "4d_axis3", "4d_axis_negative_1", "4d_axis_negative_2",
                    "4d_axis_negative_3", "4d_axis_negative_4", "default_axis")},
    **{f"test_pow_types_{t}": _INT for t in ("float32_int32", "float32_int64",
                                             "float32_uint32", "float32_uint64",
                                             "int32_float32", "int32_int32",
                                             "int64_float32", "int64_int64")},
    **{t: "Pow exponents other than one integer 1 to 4 (a square root, a mix): no integer "
          "form" for t in ("test_pow", "test_pow_example", "test_pow_bcast_array")},
    "test_reduce_max_bool_inputs": _INT,
    "test_reduce_min_bool_inputs": _INT,
    **{t: "zero-size tensor (an input dimension is 0): not supported"
       for t in ("test_reduce_max_empty_set", "test_reduce_sum_empty_set",
                 "test_reduce_min_empty_set", "test_reduce_sum_square_empty_set",
                 "test_reduce_sum_empty_set_non_reduced_axis_zero",
                 "test_reduce_sum_square_empty_set_expanded")},
    "test_ai_onnx_ml_tree_ensemble_single_tree":
        "double input and splits: the L1 dialect computes in float32 (its float32 copy "
        "is tested in test_sklearn_zoo.py)",
    "test_ai_onnx_ml_tree_ensemble_set_membership":
        "BRANCH_MEMBER nodes (set membership, with NaN members) are not supported",
}


def op_of(test: str) -> str | None:
    """The operator a test name is about (longest matching token), or None."""
    name = test.removeprefix("test_")
    tokens = [t for t in OP_TOKENS if name == t or name.startswith(t + "_")]
    return OP_TOKENS[max(tokens, key=len)] if tokens else None


@functools.cache
def relevant_tests() -> dict[str, str]:
    """test name -> operator, for every relevant node test in the installed onnx."""
    found = {}
    for folder in sorted(NODE_DIR.iterdir()):
        op = op_of(folder.name)
        if op is None:
            continue
        model = onnx.load(str(folder / "model.onnx"), load_external_data=False)
        if op in {n.op_type for n in model.graph.node} or "_expanded" in folder.name:
            found[folder.name] = op
    return found


def load_case(test: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray], list[np.ndarray]]:
    """The model (static inputs frozen as initializers), run-time feeds and outputs of
    the test's first data set."""
    folder = NODE_DIR / test
    model = onnx.load(str(folder / "model.onnx"))
    data = folder / "test_data_set_0"

    def read(kind: str, infos) -> list[np.ndarray | None]:
        arrays: list[np.ndarray | None] = []
        for i, info in enumerate(infos):
            if not info.type.HasField("tensor_type"):  # sequences, optionals: refused
                arrays.append(None)
                continue
            tensor = onnx.TensorProto()
            tensor.ParseFromString((data / f"{kind}_{i}.pb").read_bytes())
            arrays.append(numpy_helper.to_array(tensor))
        return arrays

    inputs = read("input", model.graph.input)
    outputs = read("output", model.graph.output)
    if relevant_tests().get(test) == "LayerNormalization" and len(outputs) > 1:
        # Mean and InvStdDev are training statistics (the importer refuses them if used):
        # the test checks Y
        del model.graph.output[1:]
        outputs = outputs[:1]
    uses: dict[str, list[tuple[str, int]]] = {}
    for node in model.graph.node:
        for i, name in enumerate(node.input):
            uses.setdefault(name, []).append((node.op_type, i))
    feeds = {}
    for info, array in zip(model.graph.input, inputs):
        slots = uses.get(info.name, [])
        if array is None:
            continue
        if slots and all(i in STATIC_INPUTS.get(op, ()) for op, i in slots):
            model.graph.initializer.append(numpy_helper.from_array(array, info.name))
        else:
            feeds[info.name] = array
    return model, feeds, outputs
