"""Canonicalization patterns of the L1 dialect, registered on the ops' traits so that
xDSL's `canonicalize` pass applies them. Each removes work the frontends leave behind
(ONNX layout transposes that cancel, SeeDot double negation, no-op reshapes).
"""

from __future__ import annotations

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minun_mlir.dialects import minun


class ComposeTransposes(RewritePattern):
    """transpose(transpose(x, p), q) -> transpose(x, p∘q), or x when that is the identity."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: minun.TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, minun.TransposeOp):
            return
        p, q = minun.ints(inner.perm), minun.ints(op.perm)
        composed = [p[i] for i in q]
        if composed == list(range(len(composed))):
            rewriter.replace(op, [], [inner.input])
        else:
            rewriter.replace(op, minun.TransposeOp.make(
                inner.input, perm=minun.i64_array(composed)))


class NegNeg(RewritePattern):
    """-(-x) -> x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: minun.NegOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if isinstance(inner, minun.NegOp):
            rewriter.replace(op, [], [inner.input])


class IdentityReshape(RewritePattern):
    """A reshape to the same type with the identity order does nothing."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: minun.ReshapeOp, rewriter: PatternRewriter) -> None:
        order = minun.ints(op.order)
        if op.input.type == op.result.type and order == tuple(range(len(order))):
            rewriter.replace(op, [], [op.input])
