"""Defects the fuzzers found (tools/fuzz.py), each as the smallest input that showed it:
the tool now rejects it with a located diagnostic instead of an internal error."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from minun_mlir.tools import minun_compile, minun_opt


def run(main, argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, err.getvalue()


def gemm_model(attrs=None, inputs=("x", "w", "b"), op="Gemm", elem=TensorProto.FLOAT):
    x = helper.make_tensor_value_info("x", elem, [1, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inits = [numpy_helper.from_array(np.ones((2, 3), np.float32), "w"),
             numpy_helper.from_array(np.ones((3,), np.float32), "b")]
    node = helper.make_node(op, list(inputs), ["y"], name="n", **(attrs or {}))
    graph = helper.make_graph([node], "g", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_onnx_attribute_of_the_wrong_type(tmp_path):
    """Conv.pads='garbage' reached the handler: ValueError (internal error)."""
    path = tmp_path / "model.onnx"
    onnx.save(gemm_model({"transB": "yes"}), path)
    rc, err = run(minun_opt.main, [path])
    assert rc == 1 and "node 'n' (Gemm): attribute 'transB' must be INT, got STRING" in err
    assert "internal error" not in err


def test_onnx_unknown_attribute(tmp_path):
    path = tmp_path / "model.onnx"
    onnx.save(gemm_model({"bogus": 1}), path)
    rc, err = run(minun_opt.main, [path])
    assert rc == 1 and "node 'n' (Gemm): unknown attribute 'bogus'" in err


def test_onnx_too_few_inputs(tmp_path):
    """An LSTM with two inputs: IndexError in the handler (internal error)."""
    path = tmp_path / "model.onnx"
    onnx.save(gemm_model(inputs=("x", "w"), op="LSTM"), path)
    rc, err = run(minun_opt.main, [path])
    assert rc == 1 and "node 'n' (LSTM): has 2 inputs, LSTM-7 takes 3 to 8" in err


def test_onnx_input_element_type_not_in_the_enum(tmp_path):
    """elem_type 99: onnx's DataType.Name raised ValueError (internal error)."""
    path = tmp_path / "model.onnx"
    onnx.save(gemm_model(elem=99), path)
    rc, err = run(minun_opt.main, [path])
    assert rc == 1 and "element type 99 (not an ONNX type)" in err
    assert "internal error" not in err


def test_dataset_errors_name_the_file_first(tmp_path):
    sd = tmp_path / "m.sd"
    sd.write_text("let X = (2, 1) in [0.0, 1.0] in\nX\n")
    data = tmp_path / "train.npy"
    np.save(data, np.zeros((0, 3), np.float32))
    rc, err = run(minun_compile.main, [sd, "--train", data])
    assert rc == 1 and err.startswith(f"{data}: error: holds no examples (0 rows)")
    np.savez(tmp_path / "train.npz", a=np.zeros((2, 3)))
    rc, err = run(minun_compile.main, [sd, "--train", tmp_path / "train.npz"])
    assert rc == 1 and err.startswith(f"{tmp_path / 'train.npz'}: error: an .npz dataset "
                                      "holds the inputs as 'x'")


def test_pass_diagnostics_name_the_input(tmp_path):
    """A pass's `error: ...` on the module (no op location) is prefixed with the file."""
    src = tmp_path / "m.mlir"
    src.write_text('func.func @main() -> tensor<2x!num.fixed<16, 14>> {\n'
                   '  %w = num.param "W" dense<[1, 2]> : tensor<2xi16> -> '
                   'tensor<2x!num.fixed<16, 14>>\n'
                   '  func.return %w : tensor<2x!num.fixed<16, 14>>\n}\n')
    rc, err = run(minun_opt.main, [src, "--pass-pipeline=builtin.module(lower-to-loops)"])
    assert rc == 1 and err.startswith(f"{src}: error: lower-to-loops: the model has no "
                                      "num.input"), err


def test_use_before_definition_in_textual_ir(tmp_path):
    """Two lines of L2 swapped: xDSL's verifier accepted it, lower-to-loops raised KeyError
    (internal error)."""
    path = tmp_path / "swapped.mlir"
    path.write_text(
        'builtin.module {\n  func.func @main() -> tensor<2x1xf32> {\n'
        '    %b = minun.add %a, %a : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>\n'
        '    %a = minun.input "X" [-1.0, 1.0] : tensor<2x1xf32>\n'
        '    func.return %b : tensor<2x1xf32>\n  }\n}\n')
    rc, err = run(minun_opt.main, [path])
    assert rc == 1 and err.startswith(
        f"{path}:3:5: error: minun.add: operand %a is used before it is defined")


def test_maxscale_out_of_range_is_an_option_error(tmp_path):
    """maxscale=-99 reached the scale rules: 'quantize produced invalid IR (a bug)'."""
    sd = tmp_path / "m.sd"
    sd.write_text("let X = (2, 1) in [0.0, 1.0] in\nlet W = (2, 2) in [-1.0, 1.0] in\n"
                  "W * X\n")
    np.save(tmp_path / "W.npy", np.eye(2, dtype=np.float32))
    rc, err = run(minun_opt.main, [sd, "--pass-pipeline=builtin.module(quantize{bits=16 "
                                       "scales=\"maxscale\" maxscale=-99})"])
    assert rc == 1 and err.startswith(
        f"{sd}: error: quantize: maxscale must be in 0..15 at 16 bits, got -99")


def test_dataset_with_a_damaged_header(tmp_path):
    """A .npy whose header dict is cut short: numpy raised tokenize.TokenError (internal
    error)."""
    sd = tmp_path / "m.sd"
    sd.write_text("let X = (2, 1) in [0.0, 1.0] in\nX\n")
    data = tmp_path / "train.npy"
    np.save(data, np.zeros((2, 3), np.float32))
    blob = bytearray(data.read_bytes())
    blob[20:60] = bytes(40)
    data.write_bytes(bytes(blob))
    rc, err = run(minun_compile.main, [sd, "--train", data])
    assert rc == 1 and err.startswith(f"{data}: error: cannot read the dataset")
    assert "internal error" not in err


def test_value_used_in_a_region_but_never_defined(tmp_path):
    """A nested region using a value defined nowhere: xDSL's parser leaves a forward
    declaration and its verifier raised ValueError (internal error)."""
    path = tmp_path / "fwd.mlir"
    path.write_text(
        'builtin.module {\n  func.func @main() -> tensor<2x1xf32> {\n'
        '    %res = minun.loop (%t = 0 to 2) iter(%h = %nowhere) : tensor<2x1xf32> {\n'
        '      minun.yield %h : tensor<2x1xf32>\n    }\n'
        '    func.return %res : tensor<2x1xf32>\n  }\n}\n')
    rc, err = run(minun_opt.main, [path])
    assert rc == 1 and "internal error" not in err, err
    assert err.startswith(f"{path}:"), err


def test_custom_parser_value_error_is_a_parse_error(tmp_path):
    """An i8 weight of 5353 in L2 text: the num dialect's parser raised xDSL's ValueError
    (internal error); now a parse error at the op."""
    path = tmp_path / "l2.mlir"
    sd = tmp_path / "m.sd"
    sd.write_text("let X = (2, 1) in [0.0, 1.0] in\nlet B = (2, 1) in [-1.0, 1.0] in\nX + B\n")
    np.save(tmp_path / "B.npy", np.full((2, 1), 0.5, np.float32))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert minun_opt.main([str(sd), "--pass-pipeline=builtin.module(quantize{bits=8})"]) == 0
    text = out.getvalue()
    assert "dense<64> : tensor<2x1xi8>" in text, text
    path.write_text(text.replace("dense<64> : tensor<2x1xi8>", "dense<5353> : tensor<2x1xi8>"))
    rc, err = run(minun_opt.main, [path])
    assert rc == 1 and "internal error" not in err, err
    assert err.startswith(f"{path}:") and ": error: " in err.splitlines()[0], err


def test_bad_rounding_attribute_is_a_located_error(tmp_path):
    """num.rounding = "bogus" on the L2 function: the C printer raised KeyError, and
    lower-to-loops ValueError in round_real for models with minun.init (internal errors).
    The model-wide modes are now checked when the text is read."""
    sd = tmp_path / "m.sd"
    sd.write_text("let X = (2, 1) in [0.0, 1.0] in\nlet B = (2, 1) in [-1.0, 1.0] in\n"
                  "let H = init([2, 1], 0.3) in\nX + H + B\n")
    np.save(tmp_path / "B.npy", np.full((2, 1), 0.3, np.float32))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert minun_opt.main([str(sd), "--pass-pipeline=builtin.module(quantize{bits=8})"]) == 0
    path = tmp_path / "l2.mlir"
    path.write_text(out.getvalue().replace('num.rounding = "trunc"', 'num.rounding = "bogus"'))
    for pipeline in ("lower-to-loops", "lower-to-loops,memory-plan,lower-to-emitc"):
        rc, err = run(minun_opt.main, [path, f"--pass-pipeline=builtin.module({pipeline})"])
        assert rc == 1 and "internal error" not in err, err
        assert err.startswith(f"{path}:2:3: error: func.func: num.rounding must be one of "
                              "trunc, floor, nearest (a string), got \"bogus\""), err


def test_lower_to_emitc_on_l2_names_the_missing_stage(tmp_path):
    """lower-to-emitc on L2 (lower-to-loops skipped) unpacked the entry block's arguments:
    'ValueError: not enough values to unpack' (internal error)."""
    sd = tmp_path / "m.sd"
    sd.write_text("let X = (2, 1) in [0.0, 1.0] in\nrelu(X)\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert minun_opt.main([str(sd), "--pass-pipeline=builtin.module(quantize{bits=16})"]) == 0
    path = tmp_path / "l2.mlir"
    path.write_text(out.getvalue())
    rc, err = run(minun_opt.main, [path, "--pass-pipeline=builtin.module(lower-to-emitc)"])
    assert rc == 1 and "internal error" not in err, err
    assert f"{path}:3:5: error: lower-to-emitc takes L3" in err
    assert "but the module holds 'num.input'" in err


def test_training_data_in_the_wrong_units_is_a_warning(tmp_path):
    """Training data of magnitude 1e30 (finite) made data-driven scales 100 shifts apart:
    'quantize produced invalid IR (a bug, please report)'. A rescale by 100 shifts is
    defined (the bias vanishes next to the product), so it compiles, with a warning at the
    place; the C still equals the evaluator."""
    (tmp_path / "m.sd").write_text(
        "let X = (2, 1) in [0.0, 1.0] in\nlet W = (2, 2) in [-1.0, 1.0] in\n"
        "let B = (2, 1) in [-1.0, 1.0] in\nrelu(W * X + B)\n")
    np.save(tmp_path / "W.npy", np.eye(2, dtype=np.float32))
    np.save(tmp_path / "B.npy", np.ones((2, 1), np.float32))
    np.save(tmp_path / "train.npy", np.array([[0, 1e30, 1e30], [0, -1e30, 2e30]], np.float32))
    rc, err = run(minun_compile.main, [tmp_path / "m.sd", "--train", tmp_path / "train.npy",
                                       "--test", tmp_path / "train.npy", "--run"])
    assert rc == 0 and "a bug" not in err and "internal error" not in err, err
    assert f"{tmp_path / 'm.sd'}:4:12: warning: the profiled values here and at its input " \
        "differ in magnitude by 2^100" in err, err


def test_onnx_float_attribute_nan(tmp_path):
    """Gemm.alpha = nan: the imported parameter's range became [nan, nan] and the module
    failed to verify ('internal error: the imported IR does not verify')."""
    path = tmp_path / "model.onnx"
    onnx.save(gemm_model({"alpha": float("nan")}), path)
    rc, err = run(minun_opt.main, [path])
    assert rc == 1 and "node 'n' (Gemm): attribute 'alpha' must be finite, got nan" in err
    assert "internal error" not in err


MAXPOOL_PADDING_ONLY = """let X = (4, 1) in [-1.0, 1.0] in
let t = reshape(maxpool(reshape(X, (1, 4, 1, 1), (1, 2)), {k 2 1}, {p 0 3 0 0}, {s 1 1}), (6, 1), (1, 2, 3, 4)) in
argmax(t)
"""


def test_maxpool_window_wholly_in_the_padding_is_refused(tmp_path):
    """Issue item 6: a maxpool window wholly in the padding (pad >= kernel) got the
    representation's lowest value: key -32768 in bfloat16, a NaN when decoded (the
    report's accuracy and SQNR computed on NaNs), -inf in the float evaluator, INT_MIN in
    fixed point. ONNX gives such a window no value (onnxruntime refuses pads >= kernel,
    its reference evaluator fails), so every frontend and the IR verifiers refuse it."""
    src = tmp_path / "pool.sd"
    src.write_text(MAXPOOL_PADDING_ONLY)
    for repr in ("fixed", "bfloat16", "posit", "zero-skew"):
        out = tmp_path / repr
        rc, err = run(minun_compile.main, [src, "--synthetic-weights", "1", "--repr", repr,
                                           "--out", out])
        assert rc == 1 and f"{src}:2:17: error: maxpool: a 2x1 window with pads [0, 3, 0, 0]" \
            in err and "lies wholly in the padding" in err, err
        assert not out.exists() or not any(out.iterdir())  # (an empty --out dir: as before)
    # a pad smaller than the kernel is fine
    src.write_text(MAXPOOL_PADDING_ONLY.replace("{p 0 3 0 0}", "{p 0 1 0 0}").replace(
        "(6, 1)", "(4, 1)"))
    rc, err = run(minun_compile.main, [src, "--repr", "bfloat16", "--out", tmp_path / "ok"])
    assert rc == 0, err

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node("MaxPool", ["x"], ["y"], name="n", kernel_shape=[2, 2],
                            pads=[2, 0, 0, 0])
    model = helper.make_model(helper.make_graph([node], "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, tmp_path / "pool.onnx")
    rc, err = run(minun_opt.main, [tmp_path / "pool.onnx"])
    assert rc == 1 and "node 'n' (MaxPool): a 2x2 window" in err and "wholly in the padding" \
        in err, err

    ir = tmp_path / "pool.mlir"
    ir.write_text("""func.func @main(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x3x1xf32> {
  %y = minun.maxpool %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 2, 0, 0>} : (tensor<1x4x4x1xf32>) -> tensor<1x4x3x1xf32>
  func.return %y : tensor<1x4x3x1xf32>
}
""")
    rc, err = run(minun_opt.main, [ir])
    assert rc == 1 and f"{ir}:2:" in err and "wholly in the padding" in err, err
