"""The lexer and parser: literal forms, glued tokens, comments, binding strengths, and the
places where one bracket or parenthesis could mean two things."""

from __future__ import annotations

import pytest

from minun_mlir.diagnostics import CompileError
from minun_mlir.frontends.seedot import ast, compile_source
from minun_mlir.frontends.seedot.lexer import tokenize
from minun_mlir.frontends.seedot.parser import parse
from minun_mlir.frontends.seedot.source import Source


def show(node: ast.Expr) -> str:
    """A compact s-expression of the tree, for comparing structure."""
    match node:
        case ast.IntLit(value=v) | ast.FloatLit(value=v):
            return repr(v)
        case ast.Var(name=n):
            return n
        case ast.Binary(op=op, lhs=a, rhs=b):
            return f"({op} {show(a)} {show(b)})"
        case ast.Unary(op=op, operand=a):
            return f"(neg {show(a)})"
        case ast.Transpose(operand=a):
            return f"(T {show(a)})"
        case ast.Index(operand=a, index=i):
            return f"(idx {show(a)} {show(i)})"
        case ast.Splice(operand=a, starts=s, sizes=n):
            return f"(splice {show(a)} {' '.join(f'{show(x)}+{k}' for x, k in zip(s, n))})"
        case ast.Cond(cond=c, threshold=k, then=t, else_=e):
            return f"(if {show(c)}>={k} {show(t)} {show(e)})"
        case ast.Let(name=n, value=v, body=b, starts=s, sizes=k):
            where = "".join(f"[{show(x)}+{m}]" for x, m in zip(s, k))
            return f"(let {n}{where} {show(v)} {show(b)})"
        case ast.Sum(var=i, lo=lo, hi=hi, body=b):
            return f"(sum {i} {lo} {hi} {show(b)})"
        case ast.Loop(var=i, carried=c, body=b):
            return f"(loop {i} {show(c)} {show(b)})"
        case ast.Decl(shape=s, lo=lo, hi=hi):
            return f"(decl {s} {lo} {hi})"
        case ast.Builtin(name=n, operand=a):
            return f"({n} {show(a)})"
        case ast.Call(name=n, args=args):
            return f"(call {n} {' '.join(show(a) for a in args)})"
    return type(node).__name__


@pytest.mark.parametrize("text,tree", [
    ("a + b * c", "(+ a (* b c))"),
    ("-g * x", "(* (neg g) x)"),
    ("a - b - c", "(- (- a b) c)"),
    ("a * b |*| c <*> d <+> e <-> f", "(<-> (<+> (<*> (|*| (* a b) c) d) e) f)"),
    ("-A^T", "(neg (T A))"),
    ("+a", "a"),
    ("a + b >= 0 ? c + 1 : d", "(if (+ a b)>=0.0 (+ c 1) d)"),
    ("a >= 0 ? b : c >= 1 ? d : e", "(if a>=0.0 b (if c>=1.0 d e))"),
    ("1 + let a = 2 in a * 3", "(+ 1 (let a 2 (* a 3)))"),
    ("$(i = [0:2]) A[i] + 1", "(sum i 0 2 (+ (idx A i) 1))"),
    ("loop(i = [0:2], H) H * 2", "(loop i H (* H 2))"),
    ("A[i:+2][j:+3]", "(splice A i+2 j+3)"),
    ("A[i : +2][j :+3]", "(splice A i+2 j+3)"),
    ("(A[i:+2])[j:+3]", "(splice (splice A i+2) j+3)"),
    ("A[7][18][2*k:+1]", "(splice (idx (idx A 7) 18) (* 2 k)+1)"),
    ("A[c >= 0 ? 1 : 2:+3]", "(splice A (if c>=0.0 1 2)+3)"),
    ("let A[i:+1][0:+2] = v in A", "(let A[i+1][0+2] v A)"),
    ("let x = (5) in x", "(let x 5 x)"),
    ("let x = (5) in [0.0, 1.0] in x", "(let x (decl (5,) 0.0 1.0) x)"),
    ("let W' = (2, 3) in [-1e-5, .5] in W'", "(let W' (decl (2, 3) -1e-05 0.5) W')"),
    ("relu(x) + Foo(x, y)", "(+ (relu x) (call Foo x y))"),
    ("3. + .5 + 1e3 + 2E+2 + 7", "(+ (+ (+ (+ 3.0 0.5) 1000.0) 200.0) 7)"),
    ("-1e-5 * x", "(* -1e-05 x)"),
    ("x -1.0", "(- x 1.0)"),
])
def test_structure(text, tree):
    assert show(parse(text)) == tree


def test_comments_whitespace_and_positions():
    tokens = tokenize(Source("let a = 1 // one\n\t  in a // done", "t.sd"))
    assert [(t.text, t.pos.line, t.pos.col) for t in tokens] == [
        ("let", 1, 1), ("a", 1, 5), ("=", 1, 7), ("1", 1, 9), ("in", 2, 4), ("a", 2, 7),
        ("", 2, 16)]


def test_glued_tokens():
    kinds = [(t.kind, t.text) for t in tokenize(Source("{s1 1} |*| <+> :+ ^T >=", "t"))][:-1]
    assert kinds == [("OPTION", "{s"), ("INT", "1"), ("INT", "1"), ("PUNCT", "}"),
                     ("PUNCT", "|*|"), ("PUNCT", "<+>"), ("PUNCT", ":+"), ("PUNCT", "^T"),
                     ("PUNCT", ">=")]


def test_option_groups_in_any_order_and_glued_numbers():
    text = """let A = init([1, 4, 4, 2], 0.0) in
    let F = (2, 3, 3, 1, 1) in [-1.0, 1.0] in
    maxpool(conv2d(A, F, {g 2}, {d1 1}, {p 1 1 1 1}, {s 1 1}), {s 2 2}, {k 2 2}, {p 0 0 0 0})"""
    module = compile_source(text, "t.sd", {"F": [0.0] * 18})
    assert "tensor<1x2x2x2xf32>" in str(module)


def test_primed_names_become_valid_ssa_names():
    text = "let X = (2, 1) in [0.0, 1.0] in let X' = X + X in X' <*> X'"
    assert "%X_ = minun.add %X, %X" in str(compile_source(text, "t.sd", {}))


def test_reserved_words_are_not_names():
    with pytest.raises(CompileError, match="expected a variable name after 'let', got 'relu' "
                                           r"\(a reserved word\)"):
        parse("let relu = 1 in relu")
