"""Malformed programs: each one must fail with a located diagnostic that says what is wrong
(both shapes for a mismatch), never with a Python exception of another kind."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from sd_helpers import random_params

from minun_mlir.diagnostics import CompileError, MinunError
from minun_mlir.frontends.seedot import compile_source, load_program

# Lines 1-4 of most cases; the case's own text starts on line 5.
PRE = """let X = (64, 1) in [0.0, 1.0] in
let W = (10, 64) in [-1.0, 1.0] in
let B = (20, 10, 1) in [-1.0, 1.0] in
let H = init([8, 1], 0.0) in
"""
IMG = """let A = init([1, 8, 8, 1], 0.0) in
let F = (1, 3, 3, 1, 4) in [-1.0, 1.0] in
"""

# (id, program, line, column, a fragment of the message)
CASES = [
    # ---- lexical and syntax errors ----
    ("bad-character", "let a = 1 @ 2 in a", 1, 11, "unexpected character '@'"),
    ("caret-alone", PRE + "W ^ T", 5, 3, "unexpected character '^' (transpose is written e^T)"),
    ("brace-not-glued", IMG + "maxpool(A, { k 2 2}, {p 0 0 0 0}, {s 2 2})", 3, 12,
     "'{' must be glued to an option letter"),
    ("missing-in", "let a = 1\nlet b = 2 in b", 2, 1, "expected 'in' after the value of 'a', got 'let'"),
    ("unclosed-paren", "(1 + 2", 1, 7, "expected ')' to close the parenthesis, got the end of the program"),
    ("empty-program", "// nothing here\n", 2, 1, "the program is empty"),
    ("trailing-tokens", "1 2", 1, 3, "unexpected number '2' after the end of the expression"),
    ("keyword-as-name", "let in = 3 in 4", 1, 5, "expected a variable name after 'let', got 'in' (a reserved word)"),
    ("splice-size-not-constant", PRE + "let n = 8 in X[0:+n][0:+1]", 5, 19,
     "expected an integer for the size of a splice, got name 'n'"),
    ("splice-size-zero", PRE + "X[0:+0][0:+1]", 5, 6, "the size of a splice must be a positive integer, got 0"),
    ("left-splice-needs-size", PRE + "let X[0] = 1.0 in X", 5, 8,
     "expected ':+' and a size in a left splice, got ']'"),
    ("cond-threshold-not-number", "let a = 1 in let b = 2 in a >= b ? 1 : 2", 1, 32,
     "expected a number for the right side of '>=', got name 'b'"),
    ("cond-missing-colon", "1 >= 0 ? 1 2", 1, 12, "expected ':' between the branches of '? :', got number '2'"),
    ("conv2d-missing-group", IMG + "conv2d(A, F, {s 1 1}, {p 0 0 0 0}, {d 1 1})", 3, 43,
     "conv2d: missing option group {g"),
    ("conv2d-group-count", IMG + "conv2d(A, F, {s 1}, {p 0 0 0 0}, {d 1 1}, {g 1})", 3, 14,
     "conv2d: option group '{s' (stride) takes 2 integers, got 1"),
    ("maxpool-dilation", IMG + "maxpool(A, {k 2 2}, {p 0 0 0 0}, {s 2 2}, {d 1 1})", 3, 43,
     "maxpool takes no dilation option group '{d'"),
    ("option-twice", IMG + "maxpool(A, {k 2 2}, {k 2 2}, {s 2 2})", 3, 21,
     "maxpool: option group '{k' given twice"),
    ("option-outside-call", "{s 1 1}", 1, 1, "option group '{s' is only allowed in conv2d, maxpool and mbconv"),
    ("option-not-integer", IMG + "maxpool(A, {k 2 2.0}, {p 0 0 0 0}, {s 2 2})", 3, 17,
     "expected an integer or '}' in option group '{k', got number '2.0'"),
    ("mbconv-layer-size", IMG + "mbconv(A, [F, F, F], [F, F], [F, F, F], {s 1 1}, {p 0 0 0 0})", 3, 1,
     "mbconv: layer 2 must be [F2, W2, B2] (3 tensors), got 2"),
    ("reshape-missing-order", PRE + "reshape(X, (64))", 5, 16, "expected ',' after the shape of reshape, got ')'"),
    ("init-zero-dimension", "init([0, 1], 0.0)", 1, 7, "a dimension must be a positive integer, got 0"),
    ("builtin-two-arguments", PRE + "relu(X, X)", 5, 7, "'relu' takes one argument"),
    ("call-without-arguments", "Foo()", 1, 1, "external function 'Foo' needs at least one argument"),
    ("range-one-bound", "let V = (3) in [1.0] in V", 1, 20, "expected ',' between the bounds of the range, got ']'"),
    ("loop-range-float", PRE + "loop(i = [0:2.5], H) H", 5, 13,
     "expected an integer for the end of the range of loop, got number '2.5'"),
    ("sum-needs-index", PRE + "$(0 = [0:2]) X", 5, 3, "expected the index variable of '$', got number '0'"),
    # ---- names ----
    ("unknown-name", PRE + "let WX = W * X in Wx", 5, 19, "unknown name 'Wx' (did you mean 'WX'?)"),
    ("call-a-variable", PRE + "W(X)", 5, 1, "'W' is a variable (bound at line 2), not a function"),
    ("declared-twice", PRE + "let W = (10, 64) in [-1.0, 1.0] in W", 5, 5,
     "'W' is declared twice (first at line 2, column 5)"),
    ("declaration-not-in-let", PRE + "W * (64, 1) in [0.0, 1.0]", 5, 5,
     "a declaration '(...) in [lo, hi]' is only allowed as the value of a let"),
    ("declaration-empty-range", "let V = (3) in [1.0, -1.0] in V", 1, 9,
     "empty range [1.0, -1.0]: the lower bound is above the upper bound"),
    ("left-splice-unknown", "let Q[0:+1] = 1.0 in Q", 1, 5,
     "unknown name 'Q' (the target of a left splice must exist)"),
    # ---- shapes ----
    ("matmul-inner", PRE + "X * W", 5, 3, "matrix product needs the inner dimensions to agree: left is 64x1, right is 10x64"),
    ("mul-3d", PRE + "B * X", 5, 3, "'*' needs two 2-D matrices or a scalar operand: left is 20x10x1, right is 64x1"),
    ("add-shapes", PRE + "W * X + X", 5, 7, "cannot add tensors of different shapes: left is 10x1, right is 64x1"),
    ("sub-shapes", PRE + "X - H", 5, 3, "cannot subtract tensors of different shapes: left is 64x1, right is 8x1"),
    ("hadamard-shapes", PRE + "X <*> W", 5, 3, "'<*>' needs equal shapes: left is 64x1, right is 10x64"),
    ("bias-shapes", PRE + "W <+> X", 5, 3,
     "'<+>' needs a 1-D right operand as long as the last dimension of the left: left is 10x64, right is 64x1"),
    ("sparse-lhs-not-param", PRE + "(W * X) |*| X", 5, 2, "the left operand of '|*|' must be a model parameter"),
    ("sparse-operand-spliced", PRE + "loop(i = [0:2], H) (\n  let a = W |*| X in\n  let W[0:+1][0:+1] = 1.0 in H)",
     6, 11, "the left operand of '|*|' must be a model parameter as loaded, but 'W' is written by a left splice"),
    ("sparse-shapes", PRE + "W |*| W", 5, 3, "'|*|' needs 2-D operands with matching inner dimensions: left is 10x64, right is 10x64"),
    ("transpose-3d", PRE + "B^T", 5, 1, "the operand of ^T must be a 2-D tensor, got 20x10x1"),
    ("reshape-count", PRE + "reshape(X, (8, 7), (1, 2))", 5, 1,
     "reshape cannot change the number of elements: 64x1 has 64, 8x7 has 56"),
    ("reshape-order", PRE + "reshape(X, (8, 8), (1, 3))", 5, 20,
     "reshape order (1, 3) must be a permutation of 1..2 (the dimensions of 64x1, 1-based)"),
    ("splice-rank", PRE + "X[0:+8]", 5, 2, "splice has 1 bracket [start:+size] but the tensor is 64x1 (2 dimensions)"),
    ("splice-constant-outside", PRE + "X[60:+8][0:+1]", 5, 3, "splice [60:+8] is outside dimension 0 of 64x1"),
    ("splice-too-big", PRE + "X[0:+80][0:+1]", 5, 3, "splice size 80 is larger than dimension 0 of 64x1"),
    ("splice-loop-outside", PRE + "loop(t = [0:9], H) (X[8 * t:+8][0:+1])", 5, 23,
     "splice start ranges over [0, 64]; at 64, [start:+8] is outside dimension 0 of 64x1"),
    ("splice-start-real", PRE + "X[W * X:+8][0:+1]", 5, 3, "a splice start must be an integer, got 10x1"),
    ("index-outside", PRE + "B[20]", 5, 3, "index 20 is outside dimension 0 of 20x10x1"),
    ("index-negative-range", PRE + "$(i = [0:3]) B[i - 1]", 5, 16,
     "index start ranges over [-1, 1]; at -1, it is outside dimension 0 of 20x10x1"),
    ("splice-always-outside", PRE + "$(i = [0:3]) X[i - i + 70:+1][0:+1]", 5, 16,
     "splice start lies in [68, 72], always outside dimension 0 of 64x1"),
    ("index-real", PRE + "B[X]", 5, 3, "an index must be an integer, got 64x1"),
    ("index-scalar", "let a = 1.0 in a[0]", 1, 16, "the indexed value must be a tensor, got scalar"),
    ("left-splice-shape", PRE + "let X[0:+8][0:+1] = W * X in X", 5, 21,
     "left splice writes a value of type 10x1 into a 8x1 slice of 'X' (64x1)"),
    ("left-splice-into-int", "let n = 1 in let n[0:+1] = 1.0 in n", 1, 18, "left splice into 'n' needs a tensor, got Int"),
    ("left-splice-outside", PRE + "let H[7:+2][0:+1] = init([2, 1], 1.0) in H", 5, 7,
     "splice [7:+2] is outside dimension 0 of 8x1"),
    ("maxpool-2d", PRE + "maxpool(X, {k 2 2}, {p 0 0 0 0}, {s 2 2})", 5, 9,
     "the input of maxpool (NHWC) must be a 4-D tensor, got 64x1"),
    ("maxpool-window", IMG + "maxpool(A, {k 9 9}, {p 0 0 0 0}, {s 1 1})", 3, 1,
     "maxpool: the 9x9 window does not fit the input 1x8x8x1 with padding [0, 0, 0, 0]"),
    ("conv2d-channels", "let A = init([1, 8, 8, 1], 0.0) in\nlet F = (1, 3, 3, 2, 4) in [-1.0, 1.0] in\n"
     "conv2d(A, F, {s 1 1}, {p 1 1 1 1}, {d 1 1}, {g 1})", 3, 1,
     "conv2d channels do not match 1 group: input is 1x8x8x1, filter is 1x3x3x2x4"),
    ("conv2d-filter-rank", PRE + IMG + "conv2d(A, W, {s 1 1}, {p 1 1 1 1}, {d 1 1}, {g 1})", 7, 11,
     "the filter of conv2d [G, HF, WF, C/G, Cout] must be a 5-D tensor, got 10x64"),
    ("mbconv-filters", IMG + "let W1 = (4) in [-1.0, 1.0] in\n"
     "mbconv(A, [F, W1, W1], [F, W1, W1], [F, W1, W1], {s 1 1}, {p 1 1 1 1})", 4, 1,
     "mbconv filter shapes must be F1 [1,1,1,C,T], F2 [T,HF,WF,1,1], F3 [1,1,1,T,Cout]: input 1x8x8x1, F1 1x3x3x1x4"),
    ("normalise-2d", PRE + "normaliseL2(X)", 5, 13, "the operand of normaliseL2 (NHWC) must be a 4-D tensor, got 64x1"),
    ("reverse-axis", PRE + "reverse(X, 2)", 5, 12, "reverse axis 2 is out of range for 64x1 (axes 0..1)"),
    # ---- integers, reals, control flow ----
    ("int-times-real", PRE + "let n = 2 in n * X", 5, 16, "'*' cannot mix an integer and a real: left is Int, right is 64x1"),
    ("relu-of-int", "let n = 1 in relu(n)", 1, 19, "the operand of relu must be real, got Int"),
    ("argmax-of-int", "let n = 1 in argmax(n)", 1, 21, "the operand of argmax must be a tensor, got Int"),
    ("sgn-of-vector", PRE + "sgn(X)", 5, 5, "sgn needs a scalar (or 1x1) operand, got 64x1"),
    ("int-too-large", "4294967296 + 1", 1, 1, "integer 4294967296 does not fit in 32 bits"),
    ("cond-on-vector", PRE + "X >= 0 ? 1 : 2", 5, 1, "the condition of '? :' must be a scalar or an integer, got 64x1"),
    ("cond-branches", PRE + "1 >= 0 ? X : W", 5, 3, "the branches of '? :' have different types: 64x1 and 10x64"),
    ("cond-int-and-real", PRE + "1 >= 0 ? argmax(X) : X", 5, 3, "the branches of '? :' have different types: Int and 64x1"),
    ("loop-over-expression", PRE + "loop(i = [0:4], init([8, 1], 0.0)) H", 5, 17,
     "loop carries a variable: the second item of loop(i = [a:b], H) must be a variable name"),
    ("loop-over-unknown", "loop(i = [0:4], G) G", 1, 17, "unknown name 'G'"),
    ("loop-body-type", PRE + "loop(i = [0:4], H) (H^T)", 5, 21,
     "the loop body's value has type 1x8, but the carried variable 'H' is 8x1"),
    ("loop-rebind-type", PRE + "loop(i = [0:4], H) (\n  let H = H^T in H^T)", 6, 7,
     "'H' is carried by the loop at line 5 with type 8x1; rebinding it to 1x8 would change its type"),
    ("loop-empty-range", PRE + "loop(i = [4:4], H) H", 5, 1, "empty range [4:4] of loop (needs start < end)"),
    ("sum-empty-range", PRE + "$(i = [3:1]) X", 5, 1, "empty range [3:1] of '$' (needs start < end)"),
    ("loop-index-is-carried", PRE + "loop(H = [0:2], H) H", 5, 6,
     "the loop index and the carried variable are both named 'H'"),
]


@pytest.mark.parametrize("text,line,col,fragment", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_malformed_program(text, line, col, fragment):
    try:
        params = random_params(text)
    except CompileError:  # a syntax error: no declarations to give weights to
        params = {}
    with pytest.raises(CompileError) as info:
        compile_source(text, "bad.sd", params)
    first = info.value.diagnostics[0]
    assert first.message.find(fragment) >= 0, str(info.value)
    assert (first.loc.line, first.loc.col) == (line, col), str(info.value)
    shown = str(first).splitlines()
    assert shown[0].startswith(f"bad.sd:{line}:{col}: error: ")
    assert shown[1] == text.split("\n")[line - 1]
    assert shown[2].startswith(" " * (col - 1) + "^")


def test_enough_cases():
    assert len(CASES) >= 40
    assert len({c[0] for c in CASES}) == len(CASES)


def test_independent_errors_are_reported_together():
    text = PRE + "let a = X * W in\nlet b = Y + 1.0 in\nlet c = a + X in\nrelu(3) + B^T"
    with pytest.raises(CompileError) as info:
        compile_source(text, "bad.sd", random_params(text))
    got = [(d.loc.line, d.loc.col, d.message.split(":")[0]) for d in info.value.diagnostics]
    assert got == [
        (5, 11, "matrix product needs the inner dimensions to agree"),
        (6, 9, "unknown name 'Y'"),
        (8, 11, "the operand of ^T must be a 2-D tensor, got 20x10x1"),
    ]  # `a` has the error type, so `a + X` adds no follow-up error


# ---- weights ------------------------------------------------------------------------

PROGRAM = "let X = (64, 1) in [0.0, 1.0] in\nlet W = (10, 64) in [-1.0, 1.0] in\n" \
          "let Bias = (10, 1) in [-1.0, 1.0] in\nW * X + Bias\n"


def write(tmp_path, **arrays):
    (tmp_path / "model.sd").write_text(PROGRAM)
    for name, a in arrays.items():
        np.save(tmp_path / f"{name}.npy", a)
    return tmp_path / "model.sd"


def only_error(info) -> tuple[int, int, str]:
    (d,) = info.value.diagnostics
    return d.loc.line, d.loc.col, d.message


def test_missing_weight_file(tmp_path):
    path = write(tmp_path, W=np.zeros((10, 64)))
    with pytest.raises(CompileError) as info:
        load_program(path)
    assert only_error(info) == (3, 5, f"no weights for parameter 'Bias': {tmp_path}/Bias.npy "
                                      f"does not exist")


def test_wrong_size_weight_file(tmp_path):
    path = write(tmp_path, W=np.zeros((10, 63)), Bias=np.zeros(10))
    with pytest.raises(CompileError) as info:
        load_program(path)
    assert only_error(info) == (2, 5, f"{tmp_path}/W.npy has 630 values (shape 10x63) but 'W' "
                                      f"is declared 10x64 (640 values)")


def test_weights_reshaped_when_the_count_matches(tmp_path):
    path = write(tmp_path, W=np.arange(640.0).reshape(64, 10), Bias=np.zeros(10))
    module = load_program(path)
    (w,) = [op for op in module.walk() if getattr(op, "name", "") == "minun.param"
            and op.sym_name.data == "W"]
    assert np.array_equal(w.array(), np.arange(640.0, dtype=np.float32).reshape(10, 64))


def test_unreadable_and_non_finite_weights(tmp_path):
    path = write(tmp_path, W=np.full((10, 64), np.nan), Bias=np.zeros(10))
    (tmp_path / "Bias.npy").write_bytes(b"not a numpy file")
    with pytest.raises(CompileError) as info:
        load_program(path)
    messages = [(d.loc.line, d.message) for d in info.value.diagnostics]
    assert messages[0] == (2, f"{tmp_path}/W.npy contains NaN or infinite values (as float32)")
    assert messages[1][0] == 3 and messages[1][1].startswith(f"cannot read {tmp_path}/Bias.npy")


def test_npz_missing_array(tmp_path):
    path = write(tmp_path)
    np.savez(tmp_path / "w.npz", W=np.zeros((10, 64)))
    with pytest.raises(CompileError) as info:
        load_program(path, tmp_path / "w.npz")
    assert only_error(info) == (3, 5, f"no weights for parameter 'Bias': {tmp_path}/w.npz has "
                                      f"no array 'Bias'")


def test_wrong_weights_directory_is_one_error(tmp_path):
    text = "".join(f"let P{i} = (2) in [0.0, 1.0] in\n" for i in range(5)) + "P0 + P1"
    (tmp_path / "m.sd").write_text(text)
    with pytest.raises(CompileError) as info:
        load_program(tmp_path / "m.sd", tmp_path / "nowhere")
    assert only_error(info) == (1, 5, f"no weights for any of the 5 parameters in "
                                      f"{tmp_path}/nowhere/ (looked for P0.npy, P1.npy, P2.npy, "
                                      f"P3.npy, ...): give the model directory or .npz with "
                                      f"--weights")


def test_weight_errors_come_with_type_errors(tmp_path):
    (tmp_path / "m.sd").write_text("let W = (2, 2) in [0.0, 1.0] in\nW * W^T * W + 1.0 * Q")
    with pytest.raises(CompileError) as info:
        load_program(tmp_path / "m.sd")
    assert [(d.loc.line, d.message.split(":")[0]) for d in info.value.diagnostics] == [
        (1, "no weights for parameter 'W'"), (2, "unknown name 'Q'")]


def test_unreadable_program(tmp_path):
    with pytest.raises(MinunError, match="cannot read"):
        load_program(tmp_path / "missing.sd")
    (tmp_path / "latin1.sd").write_bytes(b"let a = 1 in a // caf\xe9")
    with pytest.raises(MinunError, match="is not UTF-8 text"):
        load_program(tmp_path / "latin1.sd")


# ---- the command line ----------------------------------------------------------------


def test_minun_opt_prints_diagnostics_and_exits_1(tmp_path):
    path = write(tmp_path, W=np.zeros((10, 64)), Bias=np.zeros(10))
    path.write_text(PROGRAM.replace("W * X", "X * W"))
    run = subprocess.run([sys.executable, "-m", "minun_mlir.tools.minun_opt", str(path)],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    assert run.stderr.splitlines() == [
        f"{path}:4:3: error: matrix product needs the inner dimensions to agree: left is 64x1, "
        f"right is 10x64",
        "X * W + Bias",
        "  ^",
    ]
