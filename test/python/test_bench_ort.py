"""The onnxruntime int8 comparison (minun_bench/ort.py, `tools/bench.py --ort`): its
measures against numpy written here, the digits drawn as MNIST images against the 8x8
originals, and one model end to end (TFLite Micro's sine regressor: seconds), whose
errors are checked against onnxruntime's float run and the true sine."""

from __future__ import annotations

import numpy as np
import pytest

from minun_bench import ort as bench_ort


def test_measures_against_numpy():
    ref = np.array([[3.0, 4.0], [1.0, 0.0], [0.0, 2.0]])
    y = np.array([[3.0, 4.5], [0.0, 1.0], [0.0, 2.0]])
    np.testing.assert_allclose(bench_ort.relative_errors(y, ref),
                               [0.5 / 5.0, np.sqrt(2.0) / 1.0, 0.0])
    # argmax: 1, 0, 1 against 1, 1, 1
    assert bench_ort.top1_agreement(y, ref) == pytest.approx(2 / 3)


def test_digits_drawn_as_mnist_images():
    rows = np.zeros((2, 65), dtype=np.float32)
    rows[:, 0] = [3, 7]
    rows[0, 1 + 8 * 2 + 5] = 1.0  # pixel (2, 5) of the first digit
    rows[1, 1:] = 0.5
    img = bench_ort.digits_as_mnist(rows)
    assert img.shape == (2, 785) and img[:, 0].tolist() == [3, 7]
    a = img[0, 1:].reshape(28, 28)
    # pixel (2, 5) -> the 3x3 block at rows 2 + 6 .. 2 + 8, columns 2 + 15 .. 2 + 17
    assert a.sum() == 9 * 255 and np.all(a[8:11, 17:20] == 255)
    b = img[1, 1:].reshape(28, 28)
    assert np.all(b[2:26, 2:26] == 128) and b.sum() == 24 * 24 * 128  # round(127.5)


def test_sine_end_to_end(tmp_path):
    """ORT's int8 and minun's fixed point on the sine model, against the float model run
    in onnxruntime: every error is small, fixed16 is closer than fixed8, and the float
    model is the sine it claims to be."""
    model = next(m for m in bench_ort.models(tmp_path) if "sine" in m.name)
    row = bench_ort.compare(model, tmp_path, log=lambda *_: None)
    x = np.load(model.test)[:, 1:]
    ref = bench_ort.ort_run(model.onnx, x, model.dims).reshape(-1)
    assert np.abs(ref - np.sin(x[:, 0])).max() < 0.2
    errors = {label: row[label]["median_rel_error"] for label in bench_ort.LABELS}
    assert all(0 < e < 0.2 for e in errors.values()), errors
    assert errors["fixed16"] < errors["fixed8"] / 10
    assert errors["fixed8 per-channel nearest"] < errors["fixed8"]
    text = bench_ort.render([row])
    assert text.startswith(bench_ort.SECTION) and "| onnx-sine (real) | 60 |" in text
    png = bench_ort.plot([row])
    assert png.startswith(b"\x89PNG") and png == bench_ort.plot([row])  # deterministic


def _row(**configs):
    """A result row: ORT at 1% error and 95% top-1, every minun 8-bit program n/a unless
    given as label=(error, top1)."""
    row = {"model": "m", "inputs": 1, bench_ort.ORT: {"median_rel_error": 0.01, "top1": 0.95}}
    for label in bench_ort.MINUN_8BIT:
        error, top1 = configs.get(label.replace(" ", "_").replace("-", "_"), (None, None))
        row[label] = {"median_rel_error": error, "top1": top1}
    return row


def test_the_verdict_takes_a_program_as_good_on_both_measures():
    """Of minun's 8-bit programs at least as good as ORT on both measures, the one with the
    lowest error (not the lowest error overall when its top-1 is lower); if none is, the
    lowest error, with what is missing."""
    tie = _row(zero_skew8=(0.005, 0.90), fixed8_per_channel=(0.01, 0.95))
    assert "1 of 1 models: yes" in bench_ort.verdict([tie])
    assert "m: yes (fixed8 per-channel: error 1.00x ORT's" in bench_ort.verdict([tie])
    worse = _row(zero_skew8=(0.005, 0.90), fixed8_per_channel=(0.02, 0.95))
    text = bench_ort.verdict([worse])
    assert "0 of 1 models: yes" in text
    assert "m: no, top-1 (zero-skew8: error 0.50x ORT's, top-1 90.00% vs 95.00%)" in text
    none = bench_ort.verdict([_row()])  # no 8-bit program compiled: said, not a crash
    assert "0 of 1 models: yes" in none and "m: no (no 8-bit program compiled)" in none


def test_ort_int8_runs_its_qdq_graph_as_written(tmp_path):
    """quantize_static's per-channel QDQ model of x @ W + b run as written equals numpy's
    evaluation of that graph: x quantized and dequantized, the weights and bias dequantized
    per channel, the float sum, the output quantized and dequantized (float32 steps; equal
    except where the sum is within float32 rounding of a half step)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1)
    w = rng.normal(0, 0.3, (16, 4)).astype(np.float32) * np.array([1, 5, 0.2, 2], np.float32)
    b = rng.normal(0, 0.2, 4).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["XW"]),
         helper.make_node("Add", ["XW", "B"], ["Y"])], "dense",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, (1, 16))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, (1, 4))],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    path = tmp_path / "dense.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    x = rng.normal(0, 1, (200, 16)).astype(np.float32)
    q = bench_ort.ort_int8(path, x[:100], None, tmp_path / "dense.int8.onnx")
    got = bench_ort.ort_run(q, x[100:], None, as_written=True).reshape(100, 4)

    inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(q).graph.initializer}
    nodes = onnx.load(q).graph.node

    def qdq_of(name):  # the (scale, zero point) a QuantizeLinear of `name` uses
        node = next(n for n in nodes if n.op_type == "QuantizeLinear" and n.input[0] == name)
        return np.float32(inits[node.input[1]]), int(inits[node.input[2]])

    def fake(v, s, z):
        return ((np.clip(np.rint(v / s) + z, -128, 127) - z) * s).astype(np.float32)

    sx, zx = qdq_of("X")
    deq = {n.output[0]: ((inits[n.input[0]].astype(np.float32)
                          - inits[n.input[2]].astype(np.float32)) * inits[n.input[1]])
           for n in nodes if n.op_type == "DequantizeLinear" and n.input[0] in inits}
    (w_dq,) = [v for v in deq.values() if v.shape == (16, 4)]
    (b_dq,) = [v for v in deq.values() if v.shape == (4,)]
    sy, zy = qdq_of(next(n.input[0] for n in nodes if n.op_type == "QuantizeLinear"
                         and n.input[0] != "X"))
    y = (fake(x[100:], sx, zx) @ w_dq + b_dq).astype(np.float32)
    want = fake(y, sy, zy)
    differ = np.abs(got - want) > 1e-6
    assert np.sum(differ) <= 2, np.sum(differ)
    assert np.all(np.abs(got - want) <= sy * 1.0001)
    # and the weights really are per channel: four scales, the 0.2x channel's the smallest
    (w_scale,) = [inits[n.input[1]] for n in nodes if n.op_type == "DequantizeLinear"
                  and inits.get(n.input[0]) is not None and inits[n.input[0]].shape == (16, 4)]
    assert w_scale.shape == (4,) and int(np.argmin(w_scale)) == 2


def test_recurrent_rows_at_onnxruntime_precisions(tmp_path):
    """The zoo's GRU at onnxruntime's precisions: the assignment puts at 8 bits exactly
    what onnxruntime's QDQ model makes int8 (the Gemm's weight and input, and its output
    only when asked), so the program's cell parameters are 16-bit and its head weight
    8-bit; its stored parameters take fewer bytes than onnxruntime's float32 cell; its
    16-bit-output program is closer to the float model than its 8-bit-output one."""
    import onnx

    from minun_mlir.frontends.onnx import import_model

    (m,) = [m for m in bench_ort.zoo_models(tmp_path) if m.name.endswith("/gru_ts")]
    graph = onnx.load(str(m.onnx)).graph
    (gemm,) = [n for n in graph.node if n.op_type == "Gemm"]
    l1 = import_model(m.onnx)
    assert bench_ort.ort_precisions(l1, 16) == {gemm.input[1]: 8, "_Gather_output": 8}
    assert bench_ort.ort_precisions(l1, 8) == {gemm.input[1]: 8, "_Gather_output": 8,
                                                graph.output[0].name: 8}
    row = {"model": m.name, "inputs": 40, **{label: {"median_rel_error": 0.01, "top1": 1.0}
                                             for label in bench_ort.LABELS}}
    (rec,) = bench_ort.recurrent([row], tmp_path, log=lambda *_: None)
    assert rec[bench_ort.ORT] == row[bench_ort.ORT]
    eight, sixteen = (rec[label] for label, _ in bench_ort.RECURRENT_CONFIGS)
    cell = sum(onnx.numpy_helper.to_array(t).size for t in graph.initializer
               if t.name != gemm.input[1] and t.name != gemm.input[2])
    head = onnx.numpy_helper.to_array(next(t for t in graph.initializer
                                           if t.name == gemm.input[1])).size
    assert eight["weight_bytes"] >= 2 * cell + head  # int16 cell, int8 head (+ biases)
    assert eight["weight_bytes"] < rec["ort_weight_bytes"]
    assert rec["ort_weight_bytes"] >= 4 * cell + head  # float32 cell, int8 head
    assert sixteen["median_rel_error"] < eight["median_rel_error"]
    # onnxruntime's error split at its output rounding: its QDQ model's outputs are its
    # unrounded model's rounded to the int8 grid of the pair removed (onnxruntime's
    # QuantizeLinear against numpy's), and each part loses less than the whole
    train, calibration, test, reference = bench_ort.prepare(m, tmp_path)
    qdq = bench_ort._ort_int8_of(m, train, calibration)
    unrounded, scale, zero = bench_ort.output_unrounded(qdq, tmp_path / "unrounded.onnx")
    whole = bench_ort.ort_run(qdq, test, m.dims, as_written=True)
    y = bench_ort.ort_run(unrounded, test, m.dims, as_written=True)
    assert 0 < scale < 1 and -128 <= zero <= 127 and not np.array_equal(y, whole)
    np.testing.assert_allclose(bench_ort.on_int8_grid(y, scale, zero), whole, rtol=1e-6)
    for part in (bench_ort.ORT_UNROUNDED, bench_ort.OUTPUT_ROUNDING):
        assert 0 < rec[part]["median_rel_error"] < 0.01, (part, rec[part])
    # the int8 cell: the GRU's W and R rows each on their own grid of 255 steps (the
    # largest at +-127), within half a step of the trained weights; nothing else moved
    cell = onnx.load(str(bench_ort.cell_weights_int8(m.onnx, tmp_path / "cell.onnx"))).graph
    (gru,) = [n for n in graph.node if n.op_type == "GRU"]
    before = {t.name: onnx.numpy_helper.to_array(t) for t in graph.initializer}
    for t in cell.initializer:
        w, was = onnx.numpy_helper.to_array(t), before[t.name]
        if t.name not in gru.input[1:3]:
            assert np.array_equal(w, was), t.name
            continue
        step = np.abs(was).max(axis=-1, keepdims=True) / 127
        codes = w / step
        np.testing.assert_allclose(codes, np.round(codes), atol=1e-3)
        assert np.all(np.abs(np.round(codes)).max(axis=-1) == 127)
        assert np.all(np.abs(w - was) <= step / 2 * 1.0001) and not np.array_equal(w, was)
    assert rec[bench_ort.CELL_WEIGHTS_INT8]["median_rel_error"] > rec[
        bench_ort.OUTPUT_ROUNDING]["median_rel_error"]
    text = bench_ort.render([row], recurrent_rows=[rec])
    assert "| zoo torch/gru_ts | 1.00% (100.00%) |" in text
