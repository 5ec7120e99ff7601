"""What programs mean: small programs compiled by the frontend and run by the float
evaluator, against numpy written from the language spec (docs/seedot-language.md)."""

from __future__ import annotations

import numpy as np
import pytest

from minun_mlir.dialects import minun
from minun_mlir.frontends.seedot import compile_source
from minun_mlir.numerics.float_eval import evaluate

RNG = np.random.default_rng(7)
B = 5  # examples per batch


def run(text: str, x: np.ndarray, params: dict | None = None, **kw) -> np.ndarray:
    module = compile_source(text, "t.sd", params or {})
    return evaluate(module, {"X": x}, **kw).outputs[0]


def test_binding_strengths():
    x = RNG.normal(size=(B, 3, 1))
    text = """let X = (3, 1) in [-4.0, 4.0] in
    let g = 0.5 in
    let a = -g * X + X <*> X - 2.0 * X in   // ((-g) * X) + (X <*> X) - (2 * X)
    a + 1"""
    assert np.allclose(run(text, x), -0.5 * x + x * x - 2 * x + 1)


def test_reshape_order_is_numpy_transpose_then_reshape():
    x = RNG.normal(size=(B, 10, 4, 2, 10))
    text = "let X = (10, 4, 2, 10) in [-4.0, 4.0] in reshape(X, (20, 40), (1, 3, 2, 4))"
    want = x.transpose(0, 1, 3, 2, 4).reshape(B, 20, 40)
    assert np.array_equal(run(text, x), want)


def test_transpose_index_splice_and_scalar_results():
    x = RNG.normal(size=(B, 4, 3))
    text = """let X = (4, 3) in [-4.0, 4.0] in
    let C = (4, 1) in [-1.0, 1.0] in
    let s = X[2][1] in               // a 1-element result is a scalar
    let c = C[3] in                  // (1,) -> scalar
    (X^T)[1:+2][0:+3] * (s + c)"""
    c = np.arange(4.0).reshape(4, 1) / 10
    out = run(text, x, {"C": c})
    want = x.transpose(0, 2, 1)[:, 1:3, 0:3] * (x[:, 2, 1] + 0.3).reshape(B, 1, 1)
    assert np.allclose(out, want)


def test_one_by_one_and_scalar_convert():
    x = RNG.normal(size=(B, 3, 1))
    text = """let X = (3, 1) in [-4.0, 4.0] in
    let n = X^T * X in         // 1x1
    let a = n * X in           // 1x1 times a vector: a scalar product
    let b = X * n in           // the other way round (a genuine 3x1 * 1x1 matmul)
    let c = exp(-n) + 1 in     // int literal read as a real
    a + b <*> X + c"""
    n = (x * x).sum(axis=(1, 2)).reshape(B, 1, 1)
    assert np.allclose(run(text, x), n * x + (x * n) * x + (np.exp(-n) + 1))


def test_sum_loop_and_integer_arithmetic():
    x = RNG.normal(size=(B, 8, 1))
    text = """let X = (8, 1) in [-4.0, 4.0] in
    let n = $(i = [0:4]) (2 * i + 1) in                    // 16, an integer sum
    let H = init([2, 1], 0.0) in
    let r = loop(t = [0:4], H) (H + X[2 * t:+2][0:+1]) in  // pairwise sums
    r + X[n - 10:+2][0:+1] - X[6:+2][0:+1]     // n - 10 is 6"""
    assert np.allclose(run(text, x), x.reshape(B, 4, 2, 1).sum(axis=1))


def test_loop_rebinding_is_local_to_the_loop():
    x = RNG.normal(size=(B, 2, 1))
    text = """let X = (2, 1) in [-4.0, 4.0] in
    let H = X in
    let r = loop(t = [0:3], H) (let H = H + H in H) in
    r - H                      // H itself is still X after the loop"""
    assert np.allclose(run(text, x), 8 * x - x)


def test_conditional_per_example_and_threshold():
    x = RNG.normal(size=(B, 2, 1))
    x[:, 0, 0] = [-1.0, 0.0, 0.4, 0.6, 2.0]
    text = """let X = (2, 1) in [-4.0, 4.0] in
    let c = X[0] in
    let k = c >= 0.5 ? 2 : 3 in          // compares c - 0.5 with 0
    (k >= 3 ? X : -X) + 0.0 * c"""
    want = np.where(x[:, :1, :1] >= 0.5, -x, x)
    assert np.allclose(run(text, x), want)


def test_bonsai_tree_walk_as_an_integer_loop():
    x = RNG.normal(size=(B, 4, 1))
    text = """let X = (4, 1) in [-4.0, 4.0] in
    let T = (7, 1, 4) in [-1.0, 1.0] in
    let n = 0 in
    let leaf = loop(d = [0:2], n) ((T[n] * X) >= 0 ? 2 * n + 1 : 2 * n + 2) in
    leaf"""
    t = RNG.normal(size=(7, 1, 4))
    node = np.zeros(B, dtype=int)
    for _ in range(2):
        go = np.einsum("nd,nd->n", t[node, 0], x[:, :, 0]) >= 0
        node = np.where(go, 2 * node + 1, 2 * node + 2)
    assert np.array_equal(run(text, x, {"T": t}).reshape(B), node)


def test_left_splices_from_nested_loops_stay_visible():
    """RNNPool's pattern: the loops carry dummies, the output is filled by left splices."""
    x = RNG.normal(size=(B, 4, 6))
    text = """let X = (4, 6) in [-4.0, 4.0] in
    let Out = init([2, 3], 0.0) in
    let d = init([1, 1], 0.0) in
    let r = loop(i = [0:2], d) (
      loop(j = [0:3], d) (
        let Out[i:+1][j:+1] = $(k = [0:2]) X[2 * i + k][2 * j:+1] in
        d
      )
    ) in
    Out"""
    want = x.reshape(B, 2, 2, 3, 2)[:, :, :, :, 0].sum(axis=2)
    assert np.allclose(run(text, x), want)


def test_left_splice_inside_a_sum_and_a_conditional():
    x = RNG.normal(size=(B, 3, 1))
    x[:, 0, 0] = [-1.0, 1.0, -2.0, 2.0, 0.5]
    text = """let X = (3, 1) in [-4.0, 4.0] in
    let A = init([3, 1], 0.0) in
    let s = $(i = [0:3]) (let A[i:+1][0:+1] = X[i] * X[i] in X[i]) in
    let t = X[0] >= 0 ? (let A[0:+1][0:+1] = 7.0 in 1.0) : 2.0 in
    A * (s + t)"""
    a = x * x
    a[:, 0, 0] = np.where(x[:, 0, 0] >= 0, 7.0, a[:, 0, 0])
    s = x.sum(axis=(1, 2)) + np.where(x[:, 0, 0] >= 0, 1.0, 2.0)
    assert np.allclose(run(text, x), a * s.reshape(B, 1, 1))


def test_carried_variable_written_by_a_left_splice():
    x = RNG.normal(size=(B, 3, 1))
    text = """let X = (3, 1) in [-4.0, 4.0] in
    let A = init([3, 1], 0.0) in
    loop(i = [0:3], A) (let A[i:+1][0:+1] = X[i] + 1.0 in A)"""
    assert np.allclose(run(text, x), x + 1)


def test_carried_variable_spliced_in_place_is_its_value_after_the_loop():
    """EdgeML's face programs: a loop left-splices into the variable it carries and the
    program reads that variable (not the loop's value) after the loop, also through an
    enclosing loop; SeeDot updates its buffer in place. A plain rebinding stays local."""
    x = RNG.normal(size=(B, 2, 3))
    text = """let X = (2, 3) in [-4.0, 4.0] in
    let out = init([2, 3], 0.0) in
    let d = init([1, 1], 0.0) in
    let done = loop(i = [0:2], d) (
      let acc = init([3, 1], 0.0) in
      let ignored = loop(j = [0:3], acc) (
        let acc[j:+1][0:+1] = X[i][j] * 2.0 in acc
      ) in
      let out[i:+1][0:+3] = reshape(acc, (1, 3), (1, 2)) in
      d
    ) in
    let H = X in
    let r = loop(t = [0:2], H) (let H = H + H in H) in
    out + H                    // H is still X: its loop never spliced into it"""
    assert np.allclose(run(text, x), 2 * x + x)


def test_bias_reverse_argmax_sgn_and_externals():
    x = RNG.normal(size=(B, 2, 3))
    text = """let X = (2, 3) in [-4.0, 4.0] in
    let b = (3) in [-1.0, 1.0] in
    let Y = reverse(X <+> b, 1) <-> b in
    argmax(Twice(Y, X)) + sgn(Y[0][0])"""
    b = np.array([1.0, -2.0, 0.5])
    module = compile_source(text, "t.sd", {"b": b})
    out = evaluate(module, {"X": x}, externals={"Twice": lambda y, _: 2 * y}).outputs[0]
    y = (x + b)[:, :, ::-1] - b
    want = np.argmax(y.reshape(B, -1), axis=1) + (y[:, 0, 0] > 0)
    assert np.array_equal(out.reshape(B), want)


def test_sparse_matmul_marks_only_its_parameter():
    text = """let X = (4, 1) in [0.0, 1.0] in
    let Z = (2, 4) in [-1.0, 1.0] in
    let W = (2, 2) in [-1.0, 1.0] in
    W * (Z |*| X)"""
    z = np.array([[1.0, 0, 0, 2], [0, 3, 0, 0]])
    module = compile_source(text, "t.sd", {"Z": z, "W": np.eye(2)})
    sparse = {op.sym_name.data: op.sparse is not None
              for op in module.walk() if isinstance(op, minun.ParamOp)}
    assert sparse == {"Z": True, "W": False}
    x = RNG.uniform(size=(B, 4, 1))
    assert np.allclose(evaluate(module, {"X": x}).outputs[0], z @ x)


def test_declared_ranges_are_kept():
    text = "let X = (2, 1) in [-3.5, 13.0] in let W = (1, 2) in [-1e-5, .5] in W * X"
    module = compile_source(text, "t.sd", {"W": np.zeros(2)})
    ranges = {op.sym_name.data: (op.range_lo.value.data, op.range_hi.value.data)
              for op in module.walk() if isinstance(op, minun.InputOp | minun.ParamOp)}
    assert ranges == {"X": (-3.5, 13.0), "W": (-1e-5, 0.5)}


@pytest.mark.parametrize("program", [
    "let X = (4, 1) in [0.0, 1.0] in X[argmax(X)]",
    "let X = (4, 1) in [0.0, 1.0] in let n = argmax(X) in $(i = [0:2]) X[n:+1][0:+1]",
    # [0, 4] over-approximates the start (always 2): not an error
    "let X = (4, 1) in [0.0, 1.0] in $(i = [0:3]) X[i - i + 2:+2][0:+1]",
])
def test_data_dependent_starts_are_not_rejected(program):
    """Starts whose range is unknown at compile time are left to run time."""
    x = RNG.uniform(size=(B, 4, 1))
    out = run(program, x)
    assert out.shape[0] == B


def test_inner_loop_writes_the_outer_loops_carried_value():
    x = RNG.normal(size=(B, 3, 4))
    text = """let X = (3, 4) in [-4.0, 4.0] in
    let A = init([3, 4], 0.0) in
    loop(i = [0:3], A) (
      let d = init([1, 1], 0.0) in
      let r = loop(j = [0:4], d) (
        let A[i:+1][j:+1] = (X[i][j:+1] >= 0 ? X[i][j:+1] * 2.0 : 0.0) in d
      ) in
      A
    )"""
    assert np.allclose(run(text, x), np.maximum(2 * x, 0))
