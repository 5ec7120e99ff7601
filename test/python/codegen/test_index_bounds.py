"""passes/index_bounds.py against the loops it bounds: the C loop nests of convolutions
with clipped windows and fused (padded) max pools, the input and the output in the
scratch, are run index by index (a small interpreter of the `cemit` loops, declarations
and ifs); every index a load or a store reaches must lie in Scope.span's bounds (sound),
and for the window reads and the output stores the bounds must be the exact extremes
(tight: the clamps' offsets cancel; an interval per variable would not prove the
window's reads apart from the output), so that select-target-kernels' legality test
rests on it."""

from __future__ import annotations

import numpy as np
import pytest

from minun_mlir.dialects import cemit
from minun_mlir.frontends.seedot import load_program
from minun_mlir.passes.index_bounds import Scope
from minun_mlir.passes.kernel_match import literal_int
from minun_mlir.pipeline import lower_to_l2, run_pipeline

LOWER = "lower-to-loops,memory-plan{input-in-scratch=true output-in-scratch=true},lower-to-emitc"
# input (h, w, c), filter (kh, kw, cout), pads, max pool (kernel, stride, padding)
CASES = {
    "3x3-pad1-pool2": ((4, 4, 2), (3, 3, 5), 1, (2, 2, 0)),
    "5x5-pad2-pool3-padded": ((7, 7, 1), (5, 5, 8), 2, (3, 2, 1)),
}


def l4(case, tmp_path):
    (h, w, c), (kh, kw, cout), pad, (k, s, p) = CASES[case]
    (tmp_path / "m.sd").write_text(
        f"let X = ({h * w * c}, 1) in [-1.0, 1.0] in\n"
        f"let F = (1, {kh}, {kw}, {c}, {cout}) in [-1.0, 1.0] in\n"
        f"let A = reshape(X, (1, {h}, {w}, {c}), (1, 2)) in\n"
        f"maxpool(conv2d(A, F, {{s 1 1}}, {{p {pad} {pad} {pad} {pad}}}, {{d 1 1}}, {{g 1}}), "
        f"{{k {k} {k}}}, {{p {p} {p} {p} {p}}}, {{s {s} {s}}})\n")
    rng = np.random.default_rng(7)
    np.savez(tmp_path / "w.npz", F=rng.uniform(-1, 1, (1, kh, kw, c, cout)))
    module = lower_to_l2(load_program(tmp_path / "m.sd", tmp_path / "w.npz"), bits=16)
    run_pipeline(module, LOWER)
    return module


OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
       "<": lambda a, b: int(a < b), ">": lambda a, b: int(a > b),
       "<=": lambda a, b: int(a <= b), ">=": lambda a, b: int(a >= b),
       "==": lambda a, b: int(a == b), "&&": lambda a, b: int(bool(a and b)),
       "||": lambda a, b: int(bool(a or b))}


def value(v, env):
    """An index expression's value (None: it reads data, not indices)."""
    c = literal_int(v)
    if c is not None:
        return c
    op = v.owner
    if isinstance(op, cemit.RefOp):
        return env.get(op.var.data)
    if isinstance(op, (cemit.CastOp, cemit.BareOp)):
        return value(op.operands[0], env)
    if isinstance(op, cemit.CondOp):
        t = value(op.cond, env)
        return None if t is None else value(op.lhs if t else op.rhs, env)
    if isinstance(op, cemit.BinaryOp) and op.op.data in OPS:
        a, b = value(op.lhs, env), value(op.rhs, env)
        return None if a is None or b is None else OPS[op.op.data](a, b)
    return None


def loads(v):
    op = v.owner
    found = [op] if isinstance(op, cemit.LoadOp) else []
    for x in op.operands if isinstance(op, cemit.ExpressionOp) else ():
        found += loads(x)
    return found


def run(block, env, seen):
    """Every (load or store op, index) the statements reach, into `seen`."""
    for op in [o for o in block.ops if not isinstance(o, cemit.ExpressionOp)]:
        for operand in op.operands:
            for ld in loads(operand):
                seen.setdefault(ld, set()).add(value(ld.index, env))
        if isinstance(op, cemit.StoreOp):
            seen.setdefault(op, set()).add(value(op.index, env))
        if isinstance(op, cemit.DeclOp):
            env[op.var.data] = value(op.init, env)
        elif isinstance(op, cemit.ForOp):
            lo, hi = value(op.lower, env), value(op.upper, env)
            for i in range(lo, hi):
                run(op.body.block, {**env, op.var.data: i}, seen)
        elif isinstance(op, cemit.IfOp):
            region = op.then if value(op.cond, env) else op.other
            if region.blocks:
                run(region.block, dict(env), seen)


@pytest.mark.parametrize("case", sorted(CASES))
def test_index_bounds_hold_every_index_and_are_tight_on_windows(case, tmp_path):
    module = l4(case, tmp_path)
    func = next(op for op in module.walk() if isinstance(op, cemit.FuncOp)
                and op.sym_name.data == "minun_predict_in_place")
    seen: dict = {}
    run(func.body.block, {}, seen)
    scope = Scope(module)
    scratch = [(op, idx) for op, idx in seen.items() if op.array.data == "minun_scratch.i16"]
    assert scratch
    for op, idx in scratch:
        assert None not in idx
        span = scope.span(op.index)
        assert span is not None, op
        assert span[0] <= min(idx) and max(idx) <= span[1], (op.name, span, min(idx), max(idx))
    (h, w, c), *_ = CASES[case]
    window = [op for op, _ in scratch if isinstance(op, cemit.LoadOp)
              and isinstance(op.parent_op(), cemit.ForOp)
              and isinstance(op.parent_op().parent_op(), cemit.ForOp)]
    stores = [op for op, _ in scratch if isinstance(op, cemit.StoreOp)]
    assert window and stores
    for op in window + stores:
        assert scope.span(op.index) == (min(seen[op]), max(seen[op])), op.name
    for op in window:  # a window reads a whole buffer (the input, or a pool's input)
        assert len(seen[op]) == max(seen[op]) - min(seen[op]) + 1
    assert any(len(seen[op]) == h * w * c for op in window)
