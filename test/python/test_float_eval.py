"""The float evaluator against independent references: naive loop implementations of
the windowed ops, the language spec's own examples, and per-example control flow."""

from __future__ import annotations

import numpy as np
import pytest

from minun_mlir.diagnostics import MinunError
from minun_mlir.ir_text import parse_ir
from minun_mlir.numerics.float_eval import evaluate

RNG = np.random.default_rng(1234)


def naive_conv(x, f, strides, pads, dilations, groups):
    """x (H,W,C), f (G,kh,kw,C/G,Cout): direct definition with zero padding."""
    h, w, c = x.shape
    g_, kh, kw, cg, co = f.shape
    t, b, left, r = pads
    xp = np.zeros((h + t + b, w + left + r, c))
    xp[t:t + h, left:left + w] = x
    ho = (h + t + b - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    wo = (w + left + r - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((ho, wo, groups * co))
    for i in range(ho):
        for j in range(wo):
            for g in range(groups):
                for o in range(co):
                    acc = 0.0
                    for a in range(kh):
                        for bb in range(kw):
                            for ci in range(cg):
                                acc += (xp[i * strides[0] + a * dilations[0],
                                           j * strides[1] + bb * dilations[1], g * cg + ci]
                                        * f[g, a, bb, ci, o])
                    out[i, j, g * co + o] = acc
    return out


def arr(values) -> str:
    return "array<i64: " + ", ".join(str(v) for v in values) + ">"


@pytest.mark.parametrize("strides,pads,dilations,groups", [
    ((1, 1), (0, 0, 0, 0), (1, 1), 1),
    ((2, 1), (1, 0, 2, 1), (1, 1), 2),
    ((1, 2), (1, 1, 1, 1), (2, 1), 1),
    ((1, 1), (1, 1, 1, 1), (1, 1), 4),
])
def test_conv2d_matches_direct_definition(strides, pads, dilations, groups):
    h, w, c, co, kh, kw = 7, 6, 4, 3, 3, 2
    f = RNG.normal(size=(groups, kh, kw, c // groups, co)).astype(np.float32)
    x = RNG.normal(size=(3, 1, h, w, c))
    expect = np.stack([naive_conv(xi[0], f.astype(np.float64), strides, pads, dilations,
                                  groups) for xi in x])
    ho, wo = expect.shape[1:3]
    hexf = f.tobytes().hex().upper()
    text = f"""
    func.func @main() -> tensor<1x{ho}x{wo}x{groups * co}xf32> {{
      %x = minun.input "X" [-4.0, 4.0] : tensor<1x{h}x{w}x{c}xf32>
      %f = minun.param "F" [-4.0, 4.0] dense<"0x{hexf}"> : tensor<{groups}x{kh}x{kw}x{c // groups}x{co}xf32>
      %y = minun.conv2d %x, %f {{strides = {arr(strides)}, pads = {arr(pads)}, dilations = {arr(dilations)}, groups = {groups} : i64}} : (tensor<1x{h}x{w}x{c}xf32>, tensor<{groups}x{kh}x{kw}x{c // groups}x{co}xf32>) -> tensor<1x{ho}x{wo}x{groups * co}xf32>
      func.return %y : tensor<1x{ho}x{wo}x{groups * co}xf32>
    }}"""
    got = evaluate(parse_ir(text), x).outputs[0]
    np.testing.assert_allclose(got[:, 0], expect, rtol=1e-6, atol=1e-9)


def test_pooling_matches_direct_definition():
    x = RNG.normal(size=(2, 1, 5, 6, 3))
    text = """
    func.func @main() -> (tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>) {
      %x = minun.input "X" [-4.0, 4.0] : tensor<1x5x6x3xf32>
      %m = minun.maxpool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 1, 0, 0>} : (tensor<1x5x6x3xf32>) -> tensor<1x3x3x3xf32>
      %a = minun.avgpool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x5x6x3xf32>) -> tensor<1x3x3x3xf32>
      %c = minun.avgpool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad} : (tensor<1x5x6x3xf32>) -> tensor<1x3x3x3xf32>
      func.return %m, %a, %c : tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>
    }"""
    m, a, c = evaluate(parse_ir(text), x).outputs
    for b in range(2):
        img = x[b, 0]
        for i in range(3):
            for j in range(3):
                win = img[2 * i:min(2 * i + 2, 5), 2 * j:2 * j + 2]
                np.testing.assert_allclose(m[b, 0, i, j], win.max(axis=(0, 1)))
        padded = np.pad(img, ((1, 1), (1, 1), (0, 0)))
        valid = np.pad(np.ones((5, 6)), 1)
        for i in range(3):
            for j in range(3):
                s = padded[2 * i:2 * i + 3, 2 * j:2 * j + 3].sum(axis=(0, 1))
                n = valid[2 * i:2 * i + 3, 2 * j:2 * j + 3].sum()
                np.testing.assert_allclose(a[b, 0, i, j], s / n)
                np.testing.assert_allclose(c[b, 0, i, j], s / 9)


def test_reshape_order_is_the_spec_example():
    # seedot-language.md: reshape(A, (20,40), (1,3,2,4)) == A.transpose(0,2,1,3).reshape(20,40)
    a = RNG.normal(size=(2, 2, 4, 10, 10))
    text = """
    func.func @main() -> tensor<20x40xf32> {
      %a = minun.input "A" [-4.0, 4.0] : tensor<2x4x10x10xf32>
      %r = minun.reshape %a {order = array<i64: 0, 2, 1, 3>} : tensor<2x4x10x10xf32> -> tensor<20x40xf32>
      func.return %r : tensor<20x40xf32>
    }"""
    got = evaluate(parse_ir(text), a).outputs[0]
    for b in range(2):
        np.testing.assert_array_equal(got[b], a[b].transpose(0, 2, 1, 3).reshape(20, 40))


BONSAI_LIKE = """
func.func @main() -> tensor<2x1xf32> {
  %x = minun.input "X" [-1.0, 1.0] : tensor<1x1xf32>
  %w = minun.param "W" [0.0, 3.0] dense<[[[0.0], [0.0]], [[1.0], [1.0]], [[2.0], [2.0]], [[3.0], [3.0]]]> : tensor<4x2x1xf32>
  %s = minun.reshape %x {order = array<i64: 0, 1>} : tensor<1x1xf32> -> tensor<f32>
  %zero = arith.constant 0 : i32
  %node = minun.if_nonneg %s : tensor<f32> -> i32 {
    %one = arith.constant 1 : i32
    minun.yield %one : i32
  } else {
    %three = arith.constant 3 : i32
    minun.yield %three : i32
  }
  %row = minun.index %w[%node] : tensor<4x2x1xf32> -> tensor<2x1xf32>
  %sc = minun.scalar_mul %s, %row : (tensor<f32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  func.return %sc : tensor<2x1xf32>
}
"""


def test_data_dependent_condition_and_index_are_per_example():
    x = np.array([[[0.5]], [[-0.25]], [[0.0]], [[-1.0]]])
    got = evaluate(parse_ir(BONSAI_LIKE), x).outputs[0]
    node = np.where(x[:, 0, 0] >= 0, 1, 3)
    np.testing.assert_array_equal(got[:, :, 0], (x[:, 0, 0] * node)[:, None].repeat(2, 1))


def test_branch_runs_only_on_its_examples():
    # The else branch would index out of range for the examples that take the then branch.
    text = """
    func.func @main() -> tensor<1xf32> {
      %x = minun.input "X" [-1.0, 1.0] : tensor<f32>
      %v = minun.param "V" [0.0, 1.0] dense<[10.0, 20.0]> : tensor<2xf32>
      %a = arith.constant 1 : i32
      %y = minun.if_nonneg %x : tensor<f32> -> tensor<1xf32> {
        %z = arith.constant 0 : i32
        %s = minun.splice %v[%z] {sizes = array<i64: 1>} : tensor<2xf32> -> tensor<1xf32>
        minun.yield %s : tensor<1xf32>
      } else {
        %s = minun.splice %v[%a] {sizes = array<i64: 1>} : tensor<2xf32> -> tensor<1xf32>
        minun.yield %s : tensor<1xf32>
      }
      func.return %y : tensor<1xf32>
    }"""
    got = evaluate(parse_ir(text), np.array([1.0, -1.0, 0.5])).outputs[0]
    np.testing.assert_array_equal(got[:, 0], [10.0, 20.0, 10.0])


def test_loop_with_left_splice_and_data_dependent_start():
    # Fill out[i] = x[(i + k) mod 4] where k = argmax(x) differs per example.
    text = """
    func.func @main() -> tensor<4xf32> {
      %x = minun.input "X" [-1.0, 1.0] : tensor<8xf32>
      %init = minun.init 0.0 : tensor<4xf32>
      %k = minun.argmax %x : tensor<8xf32>
      %r = minun.loop (%i = 0 to 4) iter(%o = %init) : tensor<4xf32> {
        %st = arith.addi %i, %k : i32
        %s = minun.splice %x[%st] {sizes = array<i64: 1>} : tensor<8xf32> -> tensor<1xf32>
        %o2 = minun.splice_assign %s into %o[%i] : tensor<1xf32> into tensor<4xf32>
        minun.yield %o2 : tensor<4xf32>
      }
      func.return %r : tensor<4xf32>
    }"""
    x = RNG.normal(size=(6, 8))
    x[:, 5:] = -10  # keeps i + argmax inside the 8 elements
    got = evaluate(parse_ir(text), x).outputs[0]
    k = x.argmax(axis=1)
    expect = np.stack([x[b, k[b]:k[b] + 4] for b in range(6)])
    np.testing.assert_array_equal(got, expect)


def test_out_of_range_slice_is_a_diagnostic():
    text = """
    func.func @main() -> tensor<4xf32> {
      %x = minun.input "X" [-1.0, 1.0] : tensor<8xf32>
      %k = minun.argmax %x : tensor<8xf32>
      %s = minun.splice %x[%k] {sizes = array<i64: 4>} : tensor<8xf32> -> tensor<4xf32>
      func.return %s : tensor<4xf32>
    }"""
    x = np.zeros((2, 8))
    x[1, 6] = 1.0
    with pytest.raises(MinunError, match=r"t.mlir:5:7: error: minun.splice: slice \[6:\+4\]"):
        evaluate(parse_ir(text, "t.mlir"), x)


def test_profile_ranges_and_chunking():
    text = """
    func.func @main() -> tensor<3xf32> {
      %x = minun.input "X" [-1.0, 1.0] : tensor<3xf32>
      %h = minun.loop (%i = 0 to 3) iter(%c = %x) : tensor<3xf32> {
        %d = minun.add %c, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
        minun.yield %d : tensor<3xf32>
      }
      %e = minun.exp %h : (tensor<3xf32>) -> tensor<3xf32>
      func.return %e : tensor<3xf32>
    }"""
    module = parse_ir(text)
    x = RNG.uniform(-1, 1, size=(1000, 3))
    whole = evaluate(module, x, profile=True)
    parts = evaluate(module, x, profile=True, batch_size=64)
    np.testing.assert_array_equal(whole.outputs[0], parts.outputs[0])
    np.testing.assert_allclose(whole.outputs[0], np.exp(8 * x))
    add = next(op for op in module.walk() if op.name == "minun.add").results[0]
    stats = whole.profile[add]
    # over iterations the doubled values are 2x, 4x, 8x
    assert stats.max == pytest.approx(8 * x.max())
    assert stats.min == pytest.approx(8 * x.min())
    assert stats.count == 3 * x.size
    assert parts.profile[add].count == stats.count
    np.testing.assert_array_equal(parts.profile[add].exp_hist, stats.exp_hist)
    assert stats.fraction_at_or_above(3) == pytest.approx(np.mean(np.abs(8 * x) >= 8) / 3)


def test_softmax_batchnorm_normalise():
    x = RNG.normal(size=(4, 1, 2, 2, 3))
    text = """
    func.func @main() -> (tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) {
      %x = minun.input "X" [-4.0, 4.0] : tensor<1x2x2x3xf32>
      %s = minun.param "S" [0.0, 3.0] dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
      %v = minun.param "V" [0.0, 3.0] dense<[0.5, 1.0, 2.0]> : tensor<3xf32>
      %sm = minun.softmax %x {axis = 3 : i64} : (tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
      %bn = minun.batchnorm %x, %s, %v, %v, %s {epsilon = 0.001 : f64} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
      %nl = minun.normalise_l2 %x : (tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
      func.return %sm, %bn, %nl : tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>
    }"""
    sm, bn, nl = evaluate(parse_ir(text), x).outputs
    e = np.exp(x)
    np.testing.assert_allclose(sm, e / e.sum(-1, keepdims=True))
    s, v = np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(bn, (x - v) / np.sqrt(s + 0.001) * s + v)
    np.testing.assert_allclose(nl, x / np.linalg.norm(x, axis=-1, keepdims=True))


def test_recorded_values_span_every_batch_chunk():
    """`record=` returns a value for every input, also when the batch is evaluated in
    chunks (here 3 chunks of at most 4 rows): y = 2 x row by row, as numpy computes it."""
    from minun_mlir.ir_text import parse_ir
    from minun_mlir.numerics.float_eval import evaluate

    module = parse_ir(
        'func.func @main() -> tensor<1x3xf32> {\n'
        '  %x = minun.input "X" [-1.0, 1.0] : tensor<1x3xf32>\n'
        '  %y = minun.add %x, %x : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>\n'
        '  func.return %y : tensor<1x3xf32>\n}\n')
    x = np.arange(30, dtype=np.float64).reshape(10, 1, 3) / 30
    (y,) = [v for op in module.walk() for v in op.results if v.name_hint == "y"]
    result = evaluate(module, x, batch_size=4, record=[y])
    np.testing.assert_array_equal(result.recorded[y], x + x)
    np.testing.assert_array_equal(result.outputs[0], x + x)
