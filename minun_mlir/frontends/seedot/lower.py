"""Lowering of a checked program to the L1 dialect: one `func.func @main()` whose body
computes the program's value.

Everything here was decided by the type checker (operator meanings, coercions, which
variables a region writes); this module only emits ops, in evaluation order, each with the
`.sd` file:line:col of its source node, so a verifier error points into the program.

Variables live in `env` (binding -> current SSA value). A left splice replaces the value
of its target binding, so every later use sees the write. A loop, sum or conditional
whose body writes variables bound outside it carries them as extra values (`minun.loop`
has several carried values; `minun.sum` and `minun.if_nonneg` have one result, so a sum
that writes becomes a loop with an accumulator, and a conditional that writes becomes one
`minun.if_nonneg` per written variable).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    FileLineColLoc,
    FunctionType,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from minun_mlir.dialects import minun

from . import ast
from .typecheck import SCALAR, Binding, Checked, IntType, RealType, Type

UNARY_OPS = {
    "relu": minun.ReluOp, "relu6": minun.Relu6Op, "exp": minun.ExpOp, "tanh": minun.TanhOp,
    "sigmoid": minun.SigmoidOp, "normaliseL2": minun.NormaliseL2Op,
}
BINARY_OPS = {
    "matmul": minun.MatMulOp, "sparse_matmul": minun.SparseMatMulOp,
    "scalar_mul": minun.ScalarMulOp, "hadamard": minun.HadamardOp, "add": minun.AddOp,
    "sub": minun.SubOp, "bias_add": minun.BiasAddOp, "bias_sub": minun.BiasSubOp,
}
INT_OPS = {"addi": arith.AddiOp, "subi": arith.SubiOp, "muli": arith.MuliOp}


def ir_type(t: Type) -> Attribute:
    if isinstance(t, IntType):
        return i32
    assert isinstance(t, RealType)
    return minun.tensor_of(t.shape)


def _name(text: str) -> str:
    """SSA names for SeeDot variables: `W'` is not a valid MLIR name, `W_` is."""
    return text.replace("'", "_")


class Lowering:
    def __init__(self, checked: Checked, weights: Mapping[Binding, np.ndarray]):
        self.c = checked
        self.weights = weights
        self.env: dict[Binding, SSAValue] = {}
        self.block = Block()
        self.path = StringAttr(checked.source.path)

    # ---- emission ------------------------------------------------------------------

    def emit(self, op: Operation, node: ast.Expr) -> Operation:
        op.location = FileLineColLoc(self.path, IntAttr(node.pos.line), IntAttr(node.pos.col))
        self.block.add_op(op)
        return op

    def value(self, op: Operation, node: ast.Expr) -> SSAValue:
        return self.emit(op, node).results[0]

    @contextmanager
    def into(self, block: Block) -> Iterator[Block]:
        outer, self.block = self.block, block
        try:
            yield block
        finally:
            self.block = outer

    def const_int(self, value: int, node: ast.Expr) -> SSAValue:
        return self.value(arith.ConstantOp(IntegerAttr(value, i32)), node)

    def const_real(self, value: float, node: ast.Expr) -> SSAValue:
        return self.value(minun.ConstantOp(np.float32(value)), node)

    def fit(self, v: SSAValue, t: Type, node: ast.Expr) -> SSAValue:
        """Convert between one-element shapes (scalar <-> 1x1 ...) when `v` is not `t`."""
        want = ir_type(t)
        if v.type == want:
            return v
        assert isinstance(v.type, TensorType) and isinstance(t, RealType) and t.one_element, (
            f"cannot fit {v.type} to {t}")
        return self.value(minun.ReshapeOp(v, t.shape), node)

    # ---- entry ---------------------------------------------------------------------

    def module(self) -> ModuleOp:
        root = self.c.root
        result = self.expr(root)
        self.emit(func.ReturnOp(result), root)
        main = func.FuncOp("main", FunctionType.from_lists([], [result.type]), Region(self.block))
        main.location = FileLineColLoc(self.path, IntAttr(1), IntAttr(1))
        return ModuleOp([main])

    def expr(self, node: ast.Expr, want: Type | None = None) -> SSAValue:
        """The value of `node`, as its checked type or as `want` (a one-element shape)."""
        v = getattr(self, "lower_" + type(node).__name__)(node)
        return self.fit(v, self.c.types[node] if want is None else want, node)

    # ---- leaves --------------------------------------------------------------------

    def lower_IntLit(self, node: ast.IntLit) -> SSAValue:
        if node in self.c.real_literals:
            return self.const_real(float(node.value), node)
        return self.const_int(node.value, node)

    def lower_FloatLit(self, node: ast.FloatLit) -> SSAValue:
        return self.const_real(node.value, node)

    def lower_Var(self, node: ast.Var) -> SSAValue:
        return self.env[self.c.refs[node]]

    def lower_Init(self, node: ast.Init) -> SSAValue:
        return self.value(minun.InitOp(node.shape, node.fill), node)

    def declare(self, node: ast.Let, binding: Binding) -> SSAValue:
        decl = binding.decl
        assert decl is not None
        if binding.kind == "input":
            op: Operation = minun.InputOp(node.name, decl.shape, decl.lo, decl.hi)
        else:
            op = minun.ParamOp(node.name, self.weights[binding], decl.lo, decl.hi,
                               sparse=binding in self.c.sparse)
        return self.value(op, node)

    # ---- shape manipulation ---------------------------------------------------------

    def lower_Transpose(self, node: ast.Transpose) -> SSAValue:
        v = self.expr(node.operand)
        return self.value(minun.TransposeOp.make(v, perm=minun.i64_array([1, 0])), node)

    def lower_Reshape(self, node: ast.Reshape) -> SSAValue:
        v = self.expr(node.operand)
        return self.value(minun.ReshapeOp(v, node.shape, [o - 1 for o in node.order]), node)

    def lower_Splice(self, node: ast.Splice) -> SSAValue:
        v = self.expr(node.operand)
        starts = [self.expr(s) for s in node.starts]
        return self.value(minun.SpliceOp(v, starts, node.sizes), node)

    def lower_Index(self, node: ast.Index) -> SSAValue:
        v = self.expr(node.operand)
        i = self.expr(node.index)
        return self.value(minun.IndexOp(v, i), node)  # expr() fits a one-element result

    def lower_Reverse(self, node: ast.Reverse) -> SSAValue:
        v = self.expr(node.operand)
        return self.value(minun.ReverseOp.make(v, axis=IntegerAttr(node.axis, i64)), node)

    def lower_MaxPool(self, node: ast.MaxPool) -> SSAValue:
        v = self.expr(node.operand)
        op = minun.MaxPoolOp.create(
            operands=[v], result_types=[ir_type(self.c.types[node])],
            attributes={"kernel": minun.i64_array(node.kernel),
                        "strides": minun.i64_array(node.strides),
                        "pads": minun.i64_array(node.pads)})
        return self.value(op, node)

    def lower_Conv2D(self, node: ast.Conv2D) -> SSAValue:
        a, f = self.expr(node.input), self.expr(node.filter)
        op = minun.Conv2DOp.create(
            operands=[a, f], result_types=[ir_type(self.c.types[node])],
            attributes={"strides": minun.i64_array(node.strides),
                        "pads": minun.i64_array(node.pads),
                        "dilations": minun.i64_array(node.dilations),
                        "groups": IntegerAttr(node.groups, i64)})
        return self.value(op, node)

    def lower_MBConv(self, node: ast.MBConv) -> SSAValue:
        operands = [self.expr(node.input)]
        operands += [self.expr(e) for layer in node.layers for e in layer]
        op = minun.MBConvOp.create(
            operands=operands, result_types=[ir_type(self.c.types[node])],
            attributes={"strides": minun.i64_array(node.strides),
                        "pads": minun.i64_array(node.pads)})
        return self.value(op, node)

    # ---- functions and arithmetic ---------------------------------------------------

    def lower_Call(self, node: ast.Call) -> SSAValue:
        args = [self.expr(a) for a in node.args]
        op = minun.CallOp.create(operands=args, result_types=[args[0].type],
                                 attributes={"callee": SymbolRefAttr(node.name)})
        return self.value(op, node)

    def lower_Builtin(self, node: ast.Builtin) -> SSAValue:
        v = self.expr(node.operand)
        if node.name == "argmax":
            return self.value(minun.ArgMaxOp.create(operands=[v], result_types=[i32]), node)
        if node.name == "sgn":
            return self.value(minun.SgnOp.create(operands=[v], result_types=[i32]), node)
        return self.value(UNARY_OPS[node.name].make(v), node)

    def lower_Unary(self, node: ast.Unary) -> SSAValue:
        v = self.expr(node.operand)
        if isinstance(self.c.types[node], IntType):
            return self.value(arith.SubiOp(self.const_int(0, node), v), node)
        return self.value(minun.NegOp.make(v), node)

    def lower_Binary(self, node: ast.Binary) -> SSAValue:
        kind = self.c.ops[node]
        t, ta, tb = self.c.types[node], self.c.types[node.lhs], self.c.types[node.rhs]
        want_a = want_b = None
        if kind == "scalar_mul":
            want_a = SCALAR
        elif kind == "scalar_mul_swap":
            want_b = SCALAR
        elif kind in ("add", "sub") and ta != tb:
            # Broadcast the one-element side as a scalar (rank 0), never by rank extension.
            if tb.one_element and (not ta.one_element or ta.rank >= tb.rank):
                want_b = SCALAR
            else:
                want_a = SCALAR
        elif kind == "hadamard":
            want_a = want_b = t
        a, b = self.expr(node.lhs, want_a), self.expr(node.rhs, want_b)
        if kind in INT_OPS:
            return self.value(INT_OPS[kind](a, b), node)
        if kind == "scalar_mul_swap":
            kind, a, b = "scalar_mul", b, a
        return self.value(BINARY_OPS[kind].make(a, b), node)

    # ---- let -----------------------------------------------------------------------

    def lower_Let(self, node: ast.Let) -> SSAValue:
        if node.is_splice:
            target = self.c.refs[node]
            starts = [self.expr(s) for s in node.starts]
            v = self.expr(node.value, RealType(tuple(node.sizes)))
            self.env[target] = self.value(
                minun.SpliceAssignOp(v, self.env[target], starts), node)
            return self.expr(node.body)
        (binding,) = self.c.binds[node]
        if binding.decl is not None:
            v = self.declare(node, binding)
        else:
            v = self.expr(node.value)
        if v.name_hint is None:
            v.name_hint = _name(node.name)
        self.env[binding] = v
        return self.expr(node.body)

    # ---- regions -------------------------------------------------------------------

    def region_block(self, index: Binding | None, carried: list[Binding]) -> Block:
        """A body block whose arguments are the index (if any) and the carried values;
        while it is being filled, those bindings refer to the arguments."""
        types = ([i32] if index else []) + [self.env[b].type for b in carried]
        block = Block(arg_types=types)
        args = list(block.args)
        if index is not None:
            args[0].name_hint = _name(index.name)
            self.env[index] = args.pop(0)
        for b, arg in zip(carried, args):
            arg.name_hint = _name(b.name)
            self.env[b] = arg
        return block

    def bounds(self, node: ast.Sum | ast.Loop) -> dict[str, Attribute]:
        return {"lower": IntegerAttr(node.lo, i64), "upper": IntegerAttr(node.hi, i64)}

    def lower_Sum(self, node: ast.Sum) -> SSAValue:
        (index,) = self.c.binds[node]
        writes = list(self.c.writes[node])
        t = self.c.types[node]
        if not writes and isinstance(t, RealType):
            block = self.region_block(index, [])
            with self.into(block):
                self.emit(minun.YieldOp(self.expr(node.body)), node)
            op = minun.SumOp.create(attributes=self.bounds(node), result_types=[ir_type(t)],
                                    regions=[Region(block)])
            return self.value(op, node)
        # An integer sum, or one whose body writes outer variables: a loop that carries
        # the running total and the written variables.
        zero = (self.const_int(0, node) if isinstance(t, IntType)
                else self.value(minun.InitOp(t.shape, 0.0), node))
        outer = {b: self.env[b] for b in writes}
        block = self.region_block(index, writes)
        total = block.insert_arg(zero.type, 1)
        total.name_hint = "sum"
        with self.into(block):
            v = self.expr(node.body)
            add = arith.AddiOp(total, v) if isinstance(t, IntType) else minun.AddOp.make(total, v)
            self.emit(minun.YieldOp(self.value(add, node), *(self.env[b] for b in writes)), node)
        op = minun.LoopOp.create(operands=[zero, *outer.values()], attributes=self.bounds(node),
                                 result_types=[zero.type, *(v.type for v in outer.values())],
                                 regions=[Region(block)])
        return self.finish_region(op, node, writes)

    def lower_Loop(self, node: ast.Loop) -> SSAValue:
        index, carried = self.c.binds[node]
        writes = list(self.c.writes[node])
        init = self.expr(node.carried)
        inits = [init, *(self.env[b] for b in writes)]
        self.env[carried] = init
        block = self.region_block(index, [carried, *writes])
        with self.into(block):
            v = self.expr(node.body, self.c.types[node])
            self.emit(minun.YieldOp(v, *(self.env[b] for b in writes)), node)
        op = minun.LoopOp.create(operands=inits, attributes=self.bounds(node),
                                 result_types=[x.type for x in inits], regions=[Region(block)])
        result = self.finish_region(op, node, writes)
        if node in self.c.in_place:  # the carried variable was updated in place
            self.env[self.c.in_place[node]] = result
        return result

    def finish_region(self, op: Operation, node: ast.Expr, writes: list[Binding]) -> SSAValue:
        self.emit(op, node)
        for b, r in zip(writes, op.results[1:]):
            self.env[b] = r
        return op.results[0]

    def lower_Cond(self, node: ast.Cond) -> SSAValue:
        c = self.expr(node.cond)
        if node.threshold != 0:  # `c >= k` is `c - k >= 0`
            if isinstance(self.c.types[node.cond], IntType):
                c = self.value(arith.SubiOp(c, self.const_int(int(node.threshold), node)), node)
            else:
                k = self.const_real(node.threshold, node)
                c = self.value(minun.SubOp.make(c, k), node)
        t = self.c.types[node]
        writes = list(self.c.writes[node])
        before = dict(self.env)
        results = []
        # Output 0 is the value; output k is the k-th written variable. Each output gets
        # its own minun.if_nonneg (the branches are pure, so recomputing them is exact).
        for k in range(1 + len(writes)):
            branches = []
            for branch in (node.then, node.else_):
                self.env = dict(before)
                block = Block()
                with self.into(block):
                    v = self.expr(branch, t)
                    out = v if k == 0 else self.env[writes[k - 1]]
                    self.emit(minun.YieldOp(out), branch)
                branches.append(Region(block))
            self.env = dict(before)
            result_type = ir_type(t) if k == 0 else before[writes[k - 1]].type
            op = minun.IfNonNegOp.create(operands=[c], result_types=[result_type],
                                         regions=branches)
            results.append(self.value(op, node))
        for b, r in zip(writes, results[1:]):
            self.env[b] = r
        return results[0]


def lower_program(checked: Checked, weights: Mapping[Binding, np.ndarray]) -> ModuleOp:
    return Lowering(checked, weights).module()
