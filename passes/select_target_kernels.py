"""`select-target-kernels{target=x86|avr|cortex-m4|...}`: loops of the L4 (`cemit`) IR
that a target runs faster as a kernel of the runtime become that kernel, in the IR.

- x86: a row loop of stride-1 int16 dot products splits into a loop of dot products into
  local arrays and a loop of the rest (vectorisable across rows); each int16 dot loop
  becomes `minun_dot16_sse2` under `#if defined(__SSE2__)`, the loop kept for `#else`.
- Cortex-M: stride-1 int16/int8 dot loops become `minun_dot{16,8}_dsp` (SMLAD), the rows of
  a convolution window `minun_dot{16,8}_rows_dsp`, both under `__ARM_FEATURE_DSP` with the
  loop kept for `#else` (whose loops stay portable); a dot loop whose products are all
  guarded by one loop-invariant test (convolution padding) gets the test hoisted.
- AVR: strided int16 and stride-1 int8 dot loops become the asm `minun_dot16_*` /
  `minun_dot8_*`, a sparse column `minun_scatter16`, guarded dot loops are hoisted (and
  then asm), and what remains of `acc + (int32_t)a * (int32_t)b`, 16x16->32 products and
  32-bit shifts become `minun_mac16`, `minun_mul16` and `minun_asr32_n`.

The recognisers are passes/kernel_match.py; the kernels' C is lowering/c_runtime.py; the
printer spells the ops (`cemit.kernel`, `cemit.target_if`, ...). The module is marked with
the target (`cemit.kernels`), so the printer knows the loops were selected for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from minun_mlir.diagnostics import error
from minun_mlir.dialects import cemit
from minun_mlir.lowering.c_printer import spell
from minun_mlir.lowering.c_runtime import (
    AVR_ASR32,
    PROFILE_OF_TARGET,
    avr_dot8_helper,
    avr_dot8_off_helper,
    avr_dot8_z128_helper,
    avr_dot_helper,
)
from minun_mlir.modules import walk_ops
from minun_mlir.passes import index_bounds as ib
from minun_mlir.passes import kernel_match as km

MARK = cemit.KERNELS_MARK  # module attribute: the profile the kernels were selected for


def profile_of(target: str) -> str:
    """The C profile of a target (a profile name or a harness target name)."""
    if target not in PROFILE_OF_TARGET:
        raise error(f"select-target-kernels: unknown target '{target}' (known: "
                    f"{', '.join(PROFILE_OF_TARGET)})")
    return PROFILE_OF_TARGET[target]


# -- building IR ------------------------------------------------------------------------


def tree(op: Operation) -> list[Operation]:
    """The expression ops `op` reads (transitively), in an order that defines before use."""
    out: list[Operation] = []
    for v in op.operands:
        if isinstance(v.owner, cemit.ExpressionOp):
            out += tree(v.owner) + [v.owner]
    return out


def erase_with_tree(op: Operation) -> None:
    """Erase a statement and the expression ops only it read."""
    exprs = tree(op)
    op.detach()
    op.erase()
    for o in reversed(exprs):
        o.detach()
        o.erase()


def move(stmt: Operation, block: Block) -> None:
    """Move a statement with its expressions to the end of `block` (the walk still visits
    what it held)."""
    for o in tree(stmt) + [stmt]:
        o.detach()
        block.add_op(o)


def clone(v: SSAValue, block: Block) -> SSAValue:
    """A copy of the expression tree of `v` at the end of `block`."""
    op = v.owner
    if not isinstance(op, cemit.ExpressionOp):
        raise error(f"select-target-kernels: {op.name} is not an expression")
    operands = [clone(x, block) for x in op.operands]
    new = op.clone(value_mapper=dict(zip(op.operands, operands)))
    block.add_op(new)
    return new.results[0]


def add(block: Block, op: Operation) -> SSAValue:
    block.add_op(op)
    return op.results[0]


def ref(block: Block, var: str, ty: Attribute) -> SSAValue:
    return add(block, cemit.RefOp.create(attributes={"var": StringAttr(var)},
                                         result_types=[ty]))


def lit(block: Block, value: int) -> SSAValue:
    return add(block, cemit.LiteralOp(IntegerAttr(value, IndexType())))


def bare(block: Block, v: SSAValue, ty: Attribute | None = None) -> SSAValue:
    return add(block, cemit.BareOp.create(operands=[v], result_types=[ty or v.type]))


def binary(block: Block, op: str, a: SSAValue, b: SSAValue) -> SSAValue:
    return add(block, cemit.BinaryOp.create(operands=[a, b], result_types=[a.type],
                                            attributes={"op": StringAttr(op)}))


def addr(block: Block, load: cemit.LoadOp | None, array: str, index: SSAValue,
         elem: Attribute) -> SSAValue:
    attrs: dict[str, Attribute] = {"array": StringAttr(array)}
    if load is not None and load.flash is not None:
        attrs["flash"] = UnitAttr()
    return add(block, cemit.AddrOp.create(operands=[index], attributes=attrs,
                                          result_types=[cemit.PointerType(elem)]))


def load_addr(block: Block, load: cemit.LoadOp) -> SSAValue:
    return addr(block, load, load.array.data, clone(load.index, block), load.result.type)


def kernel(block: Block, name: str, args: list[SSAValue], ty: Attribute) -> SSAValue:
    return add(block, cemit.KernelOp.create(operands=args, result_types=[ty],
                                            attributes={"callee": StringAttr(name)}))


def decl(block: Block, var: str, init: SSAValue, const: bool = True) -> None:
    attrs: dict[str, Attribute] = {"var": StringAttr(var)}
    if const:
        attrs["const"] = UnitAttr()
    block.add_op(cemit.DeclOp.create(operands=[init], attributes=attrs))


def assign(block: Block, var: str, value: SSAValue) -> None:
    block.add_op(cemit.AssignOp.create(operands=[value], attributes={"var": StringAttr(var)}))


def start(block: Block, loop: cemit.ForOp) -> None:
    """`const int v = lower;`: the loop variable at its first value (index expressions)."""
    decl(block, loop.var.data, bare(block, clone(loop.lower, block)))


def count(block: Block, loop: cemit.ForOp, bare_upper: bool = False) -> SSAValue:
    """`upper - v`: the loop's trip count, with v at its first value."""
    upper = clone(loop.upper, block)
    if bare_upper:
        upper = bare(block, upper)
    return binary(block, "-", upper, ref(block, loop.var.data, loop.lower.type))


def for_(block: Block, var: str, lower: SSAValue, upper: SSAValue) -> Block:
    body = Block()
    block.add_op(cemit.ForOp.create(operands=[lower, upper], attributes={"var": StringAttr(var)},
                                    regions=[Region(body)]))
    return body


def dot_call(block: Block, loop: cemit.ForOp, stmt: cemit.AssignOp, name: str,
             loads: list[cemit.LoadOp], cast: bool = False, bare_upper: bool = False,
             offset: int | None = None) -> None:
    """`acc = [(T)]name(acc, &a[..], &b[..], upper - v[, offset]);` (sse2 takes acc
    last; the zero-skew kernels take the offset added to each a[i])."""
    acc, ty = stmt.var.data, stmt.value.type
    acc_ref = ref(block, acc, ty)
    ptrs = [load_addr(block, ld) for ld in loads]
    n = count(block, loop, bare_upper)
    args = [*ptrs, n, acc_ref] if name == "minun_dot16_sse2" else [acc_ref, *ptrs, n]
    if offset is not None:
        args.append(lit(block, offset))
    value = kernel(block, name, args, i32)
    if cast and km.ctype(ty) != "int32_t":
        value = add(block, cemit.CastOp.create(operands=[value], result_types=[ty]))
    assign(block, acc, value)


def block_op(body: Block) -> cemit.BlockOp:
    return cemit.BlockOp.create(regions=[Region(body)])


def replace_loop(rewriter: PatternRewriter, loop: cemit.ForOp, new: Operation,
                 keep: Block | None = None) -> None:
    """Put `new` where `loop` was; the loop goes to `keep` (a #else branch, still walked)
    or is erased with its bound expressions."""
    rewriter.insert(new, InsertPoint.before(loop))
    new.location = loop.location  # a per-layer profile names the statement by it
    if keep is not None:
        move(loop, keep)
        return
    exprs = tree(loop)
    rewriter.erase(loop)
    for o in reversed(exprs):
        rewriter.erase(o)


def portable(op: Operation) -> bool:
    """Inside the #else branch of a kernel: the loops there stay as they are."""
    while (parent := op.parent_op()) is not None:
        if isinstance(parent, cemit.TargetIfOp) and op.parent_region() is parent.other:
            return True
        op = parent
    return False


def target_if(feature: str, then: Block) -> tuple[cemit.TargetIfOp, Block]:
    other = Block()
    return cemit.TargetIfOp.create(attributes={"feature": StringAttr(feature)},
                                   regions=[Region(then), Region(other)]), other


# -- loop patterns ----------------------------------------------------------------------


class AvrDot(RewritePattern):
    """AVR: `acc = acc + (int32_t)a[e + k*i] * (int32_t)b[f + l*i]` over int16_t arrays
    (at most one in program memory) -> minun_dot16_{fr,rr}_k_l; the same over int8_t with
    stride 1 and a modular int32_t sum -> minun_dot8_{fr,rr}; the zero-skew terms
    `a * (b + 128)` (kernel_match.offset_dot, b in RAM) -> minun_dot8_z128_{fr,rr}, with
    any other offset k -> minun_dot8_off_{fr,rr}(..., k)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cemit.ForOp, rewriter: PatternRewriter) -> None:
        dot = km.dot_loop(op)
        if dot is not None:
            stmt, strided = dot
            if strided[0][0].flash is None and strided[1][0].flash is not None:
                strided = strided[::-1]
            if strided[1][0].flash is not None:
                return
            (la, ka), (lb, kb) = strided
            name = avr_dot_helper(la.flash is not None, ka, kb)
        elif (off := km.offset_dot(op)) is not None:
            stmt, (lb, la), k = off  # b + k, b in RAM (X); k = 128: zero point -128
            if lb.flash is not None:
                return
            if k != 128:
                body = Block()
                start(body, op)
                dot_call(body, op, stmt, avr_dot8_off_helper(la.flash is not None),
                         [la, lb], offset=k)
                replace_loop(rewriter, op, block_op(body))
                return
            name = avr_dot8_z128_helper(la.flash is not None)
        else:
            dot8 = km.dsp_dot(op)
            if dot8 is None or dot8[2] != "minun_dot8_dsp" or \
                    km.ctype(dot8[0].value.type) != "int32_t":
                return
            stmt, (la, lb), _ = dot8
            if la.flash is None and lb.flash is not None:
                la, lb = lb, la
            if lb.flash is not None:
                return
            name = avr_dot8_helper(la.flash is not None)
        body = Block()
        start(body, op)
        dot_call(body, op, stmt, name, [la, lb])
        replace_loop(rewriter, op, block_op(body))


class AvrScatter(RewritePattern):
    """AVR: a sparse column times one input (kernel_match.scatter) -> minun_scatter16."""

    def __init__(self, spell):
        self.spell = spell

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cemit.ForOp, rewriter: PatternRewriter) -> None:
        found = km.scatter(op, self.spell)
        if found is None:
            return
        store, rows, vals, xv, free = found
        body = Block()
        start(body, op)
        y = addr(body, None, store.array.data,
                 lit(body, 0) if free is None else clone(free, body), store.value.type)
        args = [y, load_addr(body, rows), load_addr(body, vals), clone(xv, body),
                count(body, op)]
        body.add_op(cemit.KernelStmtOp.create(
            operands=args, attributes={"callee": StringAttr("minun_scatter16")}))
        replace_loop(rewriter, op, block_op(body))


class GuardedLoop(RewritePattern):
    """A dot loop whose products share one loop-invariant guard (kernel_match.guarded_dot)
    -> the guard tested once before the loop; on AVR, with int16_t loads (at most one in
    flash), the loop is then a minun_dot16_* call."""

    def __init__(self, avr: bool):
        self.avr = avr

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cemit.ForOp, rewriter: PatternRewriter) -> None:
        found = km.guarded_dot(op)
        if found is None:
            return
        decls, guard, r_decl, product, acc_stmt, loads = found
        if loads is not None and loads[0][0].flash is None and loads[1][0].flash is not None:
            loads = loads[::-1]
        asm = self.avr and loads is not None and loads[1][0].flash is None
        outer = Block()
        for d in decls:
            decl(outer, d.var.data, clone(d.init, outer), const=d.is_const is not None)
        then = Block()
        if asm:
            (la, ka), (lb, kb) = loads
            start(then, op)
            dot_call(then, op, acc_stmt, avr_dot_helper(la.flash is not None, ka, kb),
                     [la, lb])
        else:
            body = for_(then, op.var.data, bare(then, clone(op.lower, then)),
                        bare(then, clone(op.upper, then)))
            decl(body, r_decl.var.data, bare(body, clone(product, body), r_decl.init.type))
            assign(body, acc_stmt.var.data, bare(body, clone(acc_stmt.value, body)))
        cond = clone(guard.cond, outer)
        outer.add_op(cemit.IfOp.create(operands=[cond], regions=[Region(then), Region()]))
        replace_loop(rewriter, op, block_op(outer))


class DspDot(RewritePattern):
    """Cortex-M: a stride-1 int16 (int32_t sum) or int8 (int32_t or int16_t sum) dot loop
    -> minun_dot{16,8}_dsp (SMLAD), an int16 one whose input is divided by 2^s toward
    zero term by term (kernel_match.shifted_dot) -> minun_dot16_shr{s}_dsp, under
    __ARM_FEATURE_DSP; the loop for #else."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cemit.ForOp, rewriter: PatternRewriter) -> None:
        found = None if portable(op) else (km.dsp_dot(op) or km.shifted_dot(op))
        k = None
        if found is None and not portable(op):
            off = km.offset_dot(op)
            if off is not None:
                found, k = (off[0], off[1], "minun_dot8_off_dsp"), off[2]
        if found is None:
            return
        stmt, loads, name = found
        body = Block()
        start(body, op)
        dot_call(body, op, stmt, name, loads, cast=True, offset=k)
        new, other = target_if("__ARM_FEATURE_DSP", Block([block_op(body)]))
        replace_loop(rewriter, op, new, keep=other)


class DspRows(RewritePattern):
    """Cortex-M: the rows of a convolution window, each one SMLAD dot product at a
    constant stride per row (kernel_match.dot_rows) -> minun_dot{16,8,16_shr1..3}_rows_dsp under
    __ARM_FEATURE_DSP; the loop for #else, its inner loops portable."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cemit.ForOp, rewriter: PatternRewriter) -> None:
        found = None if portable(op) else km.dot_rows(op)
        if found is None:
            return
        first, decls, inner, stmt, loads, name, strides, offset = found
        outer_var, ty = first.init.owner.var.data, stmt.value.type
        body = Block()
        for d in decls:
            decl(body, d.var.data, clone(d.init, body))
        start(body, op)
        start(body, inner)
        args = [ref(body, outer_var, first.init.type)]
        for load, k in zip(loads, strides):
            args += [load_addr(body, load), lit(body, k)]
        args += [count(body, inner), count(body, op)]
        if offset is not None:
            args.append(lit(body, offset))
        value = kernel(body, name, args, i32)
        if km.ctype(ty) != "int32_t":
            value = add(body, cemit.CastOp.create(operands=[value], result_types=[ty]))
        assign(body, outer_var, value)
        new, other = target_if("__ARM_FEATURE_DSP", Block([block_op(body)]))
        replace_loop(rewriter, op, new, keep=other)


def copy_stmt(stmt: Operation, block: Block) -> None:
    """A copy of a flat statement (declaration, store, assignment) and its expressions at
    the end of `block`."""
    operands = [clone(x, block) for x in stmt.operands]
    block.add_op(stmt.clone(value_mapper=dict(zip(stmt.operands, operands))))


class DspMatVec(RewritePattern):
    """Cortex-M: a loop over the rows of a matrix times a vector (kernel_match.mat_vec)
    -> under __ARM_FEATURE_DSP, minun_dot{16,8,8_off}_mv_dsp (two rows at a time, the
    vector's words loaded once for both) into a local `acc_rows` array, then the row
    loop of the other statements reading it; the loop for #else."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cemit.ForOp, rewriter: PatternRewriter) -> None:
        found = None if portable(op) else km.mat_vec(op)
        if found is None:
            return
        lo, hi, d, loop, stmt, mat, stride, vec, name, k, rest = found
        acc, v = d.var.data, op.var.data
        rows = acc + "_rows"
        outer = Block()
        outer.add_op(cemit.LocalArrayOp.create(attributes={
            "var": StringAttr(rows), "elem": i32, "size": IntAttr(hi - lo)}))
        call = Block()
        start(call, op)
        start(call, loop)
        args = [addr(call, None, rows, lit(call, 0), i32), load_addr(call, mat),
                lit(call, stride), load_addr(call, vec), count(call, loop),
                lit(call, hi - lo)]
        if k is not None:
            args.append(lit(call, k))
        call.add_op(cemit.KernelStmtOp.create(operands=args,
                                              attributes={"callee": StringAttr(name)}))
        outer.add_op(block_op(call))
        uses = for_(outer, v, lit(outer, lo), lit(outer, hi))
        i = ref(uses, v, IndexType())
        row = i if lo == 0 else bare(uses, binary(uses, "-", i, lit(uses, lo)))
        value = add(uses, cemit.LoadOp.create(operands=[row], attributes={
            "array": StringAttr(rows)}, result_types=[i32]))
        if km.ctype(d.init.type) != "int32_t":
            value = add(uses, cemit.CastOp.create(operands=[value], result_types=[d.init.type]))
        decl(uses, acc, value, const=False)
        for s in rest:
            copy_stmt(s, uses)
        new, other = target_if("__ARM_FEATURE_DSP", Block([block_op(outer)]))
        replace_loop(rewriter, op, new, keep=other)


def clone_expr(v: SSAValue, block: Block, leaf) -> SSAValue:
    """A copy of the expression tree of `v` at the end of `block`, each value for which
    `leaf(value)` gives a replacement read as that replacement."""
    replaced = leaf(v)
    if replaced is not None:
        return replaced
    op = v.owner
    if not isinstance(op, cemit.ExpressionOp):
        raise error(f"select-target-kernels: {op.name} is not an expression")
    operands = [clone_expr(x, block, leaf) for x in op.operands]
    copy = op.clone(value_mapper=dict(zip(op.operands, operands)))
    block.add_op(copy)
    return copy.results[0]


def clone_sub(v: SSAValue, block: Block, old: SSAValue, new: SSAValue) -> SSAValue:
    """`v`'s expression copied into `block` with `old` read as `new`."""
    return clone_expr(v, block, lambda x: new if x is old else None)


class DspSparseMatVec(RewritePattern):
    """Cortex-M: a compressed sparse matrix times a vector (kernel_match.sparse_columns)
    -> under __ARM_FEATURE_DSP, minun_dot16_mv_dsp over a dense row-major copy of the
    matrix (a new flash global `<val>_dense`, x gathered into a local array when its
    stride is not 1) into y when the statement before zeroed it, else into a local
    array whose sums are then added to y modulo 2^32; the loop for #else."""

    def __init__(self, spell):
        self.spell = spell
        self.scope = None

    def _globals(self, root: Operation) -> dict[str, cemit.GlobalOp]:
        return {g.sym_name.data: g for g in walk_ops(root) if isinstance(g, cemit.GlobalOp)}

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cemit.ForOp, rewriter: PatternRewriter) -> None:
        if portable(op):
            return
        root = op.get_toplevel_object()
        if self.scope is None or self.scope[0] is not root:  # once a module, not a loop
            self.scope = (root, ib.Scope(root), self._globals(root))
        globs = self.scope[2]

        def values(name: str) -> list[int] | None:
            g = globs.get(name)
            if g is None or g.value is None or g.flash is None:
                return None
            return [int(x) for x in g.value.get_values()]

        found = km.sparse_columns(op, self.spell, self.scope[1], values)
        if found is None:
            return
        lo, hi, dense, store, product, x, r, stride = found
        val = next(o for o in km._tree_ops(product) if isinstance(o, cemit.LoadOp)
                   and o.flash is not None)
        source = globs[val.array.data]
        name, flat = source.sym_name.data + "_dense", [w for row in dense for w in row]
        n = 2
        while name in globs and values(name) != flat:
            name, n = f"{source.sym_name.data}_dense_{n}", n + 1
        if name not in globs:
            data = np.asarray(flat, dtype="<i2")
            dense_attr = DenseIntOrFPElementsAttr(TensorType(source.elem, [data.size]),
                                                  BytesAttr(data.tobytes()))
            made = cemit.GlobalOp.create(attributes={
                "sym_name": StringAttr(name), "elem": source.elem, "size": IntAttr(data.size),
                "value": dense_attr, "const": UnitAttr(), "flash": UnitAttr(),
                "feature": StringAttr("__ARM_FEATURE_DSP")})  # only the kernel reads it
            rewriter.insert(made, InsertPoint.after(source))
            globs[name] = made
        for load in walk_ops(op):  # col, row, val: read now by the #else loop only
            if isinstance(load, cemit.LoadOp) and load.array.data in globs:
                globs[load.array.data].attributes["maybe_unused"] = UnitAttr()
        nrows, k = len(dense), hi - lo
        free = km.sparse_free(store, r)
        direct = km.zeroed_before(op, store.array.data, free, nrows)
        sums = r + "_sums"
        outer = Block()
        if not direct:
            outer.add_op(cemit.LocalArrayOp.create(attributes={
                "var": StringAttr(sums), "elem": i32, "size": IntAttr(nrows)}))
        call = Block()
        if stride == 1:
            start(call, op)
            vec = load_addr(call, x)
        else:  # x gathered into a local array: the kernel reads it at stride 1
            xs = r + "_x"
            outer.add_op(cemit.LocalArrayOp.create(attributes={
                "var": StringAttr(xs), "elem": x.result.type, "size": IntAttr(k)}))
            copy = for_(outer, op.var.data, lit(outer, lo), lit(outer, hi))
            i = ref(copy, op.var.data, IndexType())
            at = i if lo == 0 else bare(copy, binary(copy, "-", i, lit(copy, lo)))
            copy.add_op(cemit.StoreOp.create(operands=[clone(x.result, copy), at],
                                             attributes={"array": StringAttr(xs)}))
            vec = addr(call, None, xs, lit(call, 0), x.result.type)
        mat = add(call, cemit.AddrOp.create(
            operands=[lit(call, 0)], attributes={"array": StringAttr(name), "flash": UnitAttr()},
            result_types=[cemit.PointerType(source.elem)]))
        out = addr(call, None, sums, lit(call, 0), i32) if not direct else \
            addr(call, None, store.array.data,
                 lit(call, 0) if free is None else clone(free, call), i32)
        args = [out, mat, lit(call, k), vec, lit(call, k), lit(call, nrows)]
        call.add_op(cemit.KernelStmtOp.create(
            operands=args, attributes={"callee": StringAttr("minun_dot16_mv_dsp")}))
        outer.add_op(block_op(call))
        if direct:  # y was all zeros: its sums are the kernel's
            new, other = target_if("__ARM_FEATURE_DSP", Block([block_op(outer)]))
            zero, exact = direct
            if not exact:
                replace_loop(rewriter, op, new, keep=other)
                return
            # the kernel writes every element the zeroing loop did: both go to #else
            rewriter.insert(new, InsertPoint.before(zero))
            new.location = op.location
            move(zero, other)
            move(op, other)
            return
        uses = for_(outer, r, lit(outer, 0), lit(outer, nrows))
        s = add(uses, cemit.LoadOp.create(operands=[ref(uses, r, IndexType())], attributes={
            "array": StringAttr(sums)}, result_types=[i32]))
        index = clone(store.index, uses)
        value = clone_sub(store.value, uses, product, s)
        attrs = {"array": store.array}
        uses.add_op(cemit.StoreOp.create(operands=[value, index], attributes=attrs))
        new, other = target_if("__ARM_FEATURE_DSP", Block([block_op(outer)]))
        replace_loop(rewriter, op, new, keep=other)


def clone_at(v: SSAValue, block: Block, var: str, value) -> SSAValue:
    """`v`'s expression copied into `block` with `var` read as `value(block)` (a new
    expression there)."""
    return clone_expr(v, block, lambda x: value(block) if isinstance(x.owner, cemit.RefOp)
                      and x.owner.var.data == var else None)


def window_index(block: Block, chain: list[cemit.ForOp], scale: int) -> SSAValue | None:
    """`((w1 - lo1) * n2 + (w2 - lo2)) * scale`: the window's place in the sums array
    (None: no window loops, place 0)."""
    index = None
    for w in chain:
        lo, hi = km.literal_int(w.lower), km.literal_int(w.upper)
        at = ref(block, w.var.data, IndexType())
        if lo:
            at = binary(block, "-", at, lit(block, lo))
        index = at if index is None else \
            binary(block, "+", binary(block, "*", index, lit(block, hi - lo)), at)
    if index is None or scale == 1:
        return index
    return binary(block, "*", index, lit(block, scale))


def drop_unread(op: Operation) -> None:
    """Erase the const declarations inside `op` that nothing reads (the window's bounds
    once its loop is gone: C compilers warn about unused variables)."""
    while True:
        read = {r.var.data for r in walk_ops(op) if isinstance(r, cemit.RefOp)}
        dead = [d for d in walk_ops(op) if isinstance(d, cemit.DeclOp) and
                d.is_const is not None and d.var.data not in read]
        if not dead:
            return
        for d in dead:
            erase_with_tree(d)


@dataclass(frozen=True)
class ChannelGroup:
    """The output channels one pass over the windows computes: all of [lo, hi) (var
    None), or `size` from `var_lo` inside a loop over the groups, the last group ending
    at `var_hi` when `size` does not divide the channel count."""

    var: str | None
    lo: int
    hi: int
    size: int

    def first(self, b: Block) -> SSAValue:
        return lit(b, self.lo) if self.var is None else ref(b, self.var + "_lo", IndexType())

    def upper(self, b: Block) -> SSAValue:
        if self.var is None:
            return lit(b, self.hi)
        if (self.hi - self.lo) % self.size:
            return ref(b, self.var + "_hi", IndexType())
        return binary(b, "+", self.first(b), lit(b, self.size))

    def width(self, b: Block) -> SSAValue:
        if self.var is None:
            return lit(b, self.hi - self.lo)
        if (self.hi - self.lo) % self.size:
            return binary(b, "-", self.upper(b), self.first(b))
        return lit(b, self.size)


def channel_groups(outer: Block, c: str, lo: int, hi: int) -> tuple[ChannelGroup, Block]:
    """The group of channels (at most CONV_GROUP, so the sums array does not grow with the
    channel count) and the block that computes and uses one group's sums: `outer`, or
    the body of `for (c_group ...) { const int c_lo = ...; [const int c_hi = ...;] }`."""
    chans = hi - lo
    if chans <= km.CONV_GROUP:
        return ChannelGroup(None, lo, hi, chans), outer
    group = ChannelGroup(c, lo, hi, km.CONV_GROUP)
    body = for_(outer, c + "_group", lit(outer, 0), lit(outer, -(-chans // group.size)))
    start_at = binary(body, "*", ref(body, c + "_group", IndexType()), lit(body, group.size))
    decl(body, c + "_lo", binary(body, "+", start_at, lit(body, lo)) if lo else start_at)
    if chans % group.size:
        def end(b: Block) -> SSAValue:
            return binary(b, "+", group.first(b), lit(b, group.size))
        test = add(body, cemit.BinaryOp.create(operands=[end(body), lit(body, hi)],
                                               result_types=[i1],
                                               attributes={"op": StringAttr("<")}))
        decl(body, c + "_hi", add(body, cemit.CondOp.create(
            operands=[test, end(body), lit(body, hi)], result_types=[IndexType()])))
    return group, body


class DspConvChannels(RewritePattern):
    """Cortex-M: a convolution's output-channel loop around its window (and a fused
    pool's) loops (kernel_match.conv_channels) -> under __ARM_FEATURE_DSP, per group of
    channels, the windows' sums first, minun_dot{16,8,8_off}_rows_mc_dsp (four or two
    channels a pass, each input word loaded once for them) into a local `acc_mc` array,
    then the channel loop over the group reading it; the loop for #else."""

    def __init__(self):
        self.scope = None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cemit.ForOp, rewriter: PatternRewriter) -> None:
        if portable(op):
            return
        root = op.get_toplevel_object()
        if self.scope is None or self.scope[0] is not root:
            self.scope = (root, ib.Scope(root))
        found = km.conv_channels(op, self.scope[1])
        if found is None:
            return
        lo, hi, chain, rows, dot, acc_decl, x_load, w_load, stride, copies = found
        outer = Block()
        group, body = channel_groups(outer, op.var.data, lo, hi)
        sums = acc_decl.var.data + "_mc"
        size = group.size
        for w in chain:
            size *= km.literal_int(w.upper) - km.literal_int(w.lower)
        body.add_op(cemit.LocalArrayOp.create(attributes={
            "var": StringAttr(sums), "elem": i32, "size": IntAttr(size)}))
        block = body
        for w in chain:
            block = for_(block, w.var.data, lit(block, km.literal_int(w.lower)),
                         lit(block, km.literal_int(w.upper)))
        block.add_op(block_op(window_sums(op.var.data, group, found, sums)))
        bounds = ({v: clone(v, body) for v in (op.lower, op.upper)} if group.var is None
                  else {op.lower: group.first(body), op.upper: group.upper(body)})
        channels = op.clone(value_mapper=bounds)
        body.add_op(channels)
        read_sums(channels, rows, acc_decl, group, chain, sums)
        new, other = target_if("__ARM_FEATURE_DSP", Block([block_op(outer)]))
        replace_loop(rewriter, op, new, keep=other)


def window_sums(c: str, group: ChannelGroup, found, sums: str) -> Block:
    """The statements computing one window's sums of the group's channels: the window's
    declarations, then `minun_dot*_rows_mc_dsp(&sums[..], &x[..], sx, &w[..], sw,
    stride, n, rows, width[, k])` with w at the group's first channel."""
    _, _, chain, rows, dot, _, x_load, w_load, stride, copies = found
    _, decls, inner, _, loads, name, strides, k = dot
    call = Block()
    for d in [*copies, *decls]:
        decl(call, d.var.data, clone(d.init, call))
    start(call, rows)
    start(call, inner)
    sx, sw = (strides[loads.index(ld)] for ld in (x_load, w_load))
    w_addr = addr(call, w_load, w_load.array.data,
                  clone_at(w_load.index, call, c, group.first), w_load.result.type)
    place = window_index(call, chain, group.size)
    args = [addr(call, None, sums, lit(call, 0) if place is None else place, i32),
            load_addr(call, x_load), lit(call, sx), w_addr, lit(call, sw),
            lit(call, stride), count(call, inner), count(call, rows), group.width(call)]
    if k is not None:  # the zero-skew offset added to the input
        args.append(lit(call, k))
    call.add_op(cemit.KernelStmtOp.create(operands=args, attributes={
        "callee": StringAttr(name.replace("_rows_dsp", "_rows_mc_dsp"))}))
    return call


def read_sums(channels: cemit.ForOp, rows: cemit.ForOp, acc_decl: cemit.DeclOp,
              group: ChannelGroup, chain: list[cemit.ForOp], sums: str) -> None:
    """In the copy of the channel loop, the window's rows loop -> `acc = sums[..]` (an
    int16_t sum its low half), and the declarations nothing reads any more dropped."""
    twin = next(f for f in walk_ops(channels)
                if isinstance(f, cemit.ForOp) and f.var.data == rows.var.data)
    use = Block()
    i = ref(use, channels.var.data, IndexType())
    if group.var is not None:
        i = binary(use, "-", i, group.first(use))
    elif group.lo:
        i = binary(use, "-", i, lit(use, group.lo))
    index = window_index(use, chain, group.size)
    index = i if index is None else binary(use, "+", index, i)
    value = add(use, cemit.LoadOp.create(operands=[index], attributes={
        "array": StringAttr(sums)}, result_types=[i32]))
    if km.ctype(acc_decl.init.type) != "int32_t":
        value = add(use, cemit.CastOp.create(operands=[value],
                                             result_types=[acc_decl.init.type]))
    assign(use, acc_decl.var.data, value)
    for o in list(use.ops):
        o.detach()
        twin.parent_block().insert_op_before(o, twin)
    erase_with_tree(twin)
    drop_unread(channels)


class Sse2Dot(RewritePattern):
    """x86: a stride-1 int16 dot loop -> minun_dot16_sse2 (PMADDWD) under __SSE2__, the
    loop for #else."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cemit.ForOp, rewriter: PatternRewriter) -> None:
        dot = None if portable(op) else km.dot_loop(op)
        if dot is None or any(k != 1 for _, k in dot[1]):
            return
        body = Block()
        start(body, op)
        dot_call(body, op, dot[0], "minun_dot16_sse2", [ld for ld, _ in dot[1]],
                 bare_upper=True)
        new, other = target_if("__SSE2__", Block([block_op(body)]))
        replace_loop(rewriter, op, new, keep=other)


class SplitRows(RewritePattern):
    """x86: a row loop of dot products and their uses (kernel_match.split_rows) -> one loop
    of the dot products into `acc_rows` arrays, then one of the rest."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cemit.ForOp, rewriter: PatternRewriter) -> None:
        found = km.split_rows(op)
        if found is None:
            return
        lo, hi, pairs, rest = found
        v = op.var.data
        outer = Block()
        for d, _ in pairs:
            outer.add_op(cemit.LocalArrayOp.create(attributes={
                "var": StringAttr(d.var.data + "_rows"), "elem": d.init.type,
                "size": IntAttr(hi - lo)}))

        def row(block: Block) -> SSAValue:
            i = ref(block, v, IndexType())
            return i if lo == 0 else bare(block, binary(block, "-", i, lit(block, lo)))

        dots = for_(outer, v, lit(outer, lo), lit(outer, hi))
        for d, loop in pairs:
            move(d, dots)
            move(loop, dots)
            value = ref(dots, d.var.data, d.init.type)
            dots.add_op(cemit.StoreOp.create(
                operands=[value, row(dots)], attributes={"array": StringAttr(d.var.data +
                                                                             "_rows")}))
        uses = for_(outer, v, lit(outer, lo), lit(outer, hi))
        for d, _ in pairs:
            i = row(uses)
            decl(uses, d.var.data, add(uses, cemit.LoadOp.create(
                operands=[i], attributes={"array": StringAttr(d.var.data + "_rows")},
                result_types=[d.init.type])))
        for s in rest:
            move(s, uses)
        replace_loop(rewriter, op, block_op(outer))


# -- AVR expressions --------------------------------------------------------------------


def erase_tree(rewriter: PatternRewriter, v: SSAValue, keep: tuple[SSAValue, ...]) -> None:
    """Erase the expression computing `v` (now unused), except the subtrees in `keep`."""
    if v in keep:
        return
    op = v.owner
    operands = list(op.operands)
    rewriter.erase(op)
    for x in operands:
        erase_tree(rewriter, x, keep)


class Mac16(RewritePattern):
    """AVR: `acc = acc + (int32_t)a * (int32_t)b` -> `acc = minun_mac16(acc, a, b)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cemit.AssignOp, rewriter: PatternRewriter) -> None:
        mac = km.mac_operands(op)
        if mac is None:
            return
        old = op.value
        acc = cemit.RefOp.create(attributes={"var": op.var}, result_types=[old.type])
        call = cemit.KernelOp.create(operands=[acc.result, *mac], result_types=[old.type],
                                     attributes={"callee": StringAttr("minun_mac16")})
        rewriter.insert([acc, call], InsertPoint.before(op))
        op.operands = [call.result]
        erase_tree(rewriter, old, mac)


class Mul16Asr32(RewritePattern):
    """AVR: `(int32_t)a * (int32_t)b` of 16-bit a, b -> minun_mul16(a, b); an int32_t
    `x >> n` (n not a multiple of 8) -> minun_asr32_n(x)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cemit.BinaryOp, rewriter: PatternRewriter) -> None:
        factors = km.product16(op.result)
        n = km.shift_count(op)
        if factors is not None:
            name, args = "minun_mul16", factors
        elif km.ctype(op.result.type) == "int32_t" and n in AVR_ASR32:
            name, args = f"minun_asr32_{n}", (op.lhs,)
        else:
            return
        call = cemit.KernelOp.create(operands=list(args), result_types=[op.result.type],
                                     attributes={"callee": StringAttr(name)})
        rewriter.insert(call, InsertPoint.before(op))
        op.result.replace_all_uses_with(call.result)
        erase_tree(rewriter, op.result, args)


@dataclass(eq=False)
class OnOpType(RewritePattern):
    """The patterns of an op's class, tried in order until one rewrites
    (GreedyRewritePatternApplier's rule), found by the class in a dict: the walk visits
    every op and nearly all are expressions no pattern takes, so an op costs one lookup,
    not a type test per pattern. No dead-code check (the applier's): lower-to-emitc builds
    no unused expression and the patterns erase what they leave unused."""

    patterns: dict[type[Operation], tuple[RewritePattern, ...]]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        for pattern in self.patterns.get(type(op), ()):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


def walk(module: ModuleOp, patterns: dict[type[Operation], tuple[RewritePattern, ...]]
         ) -> None:
    """One pre-order walk (outer loops first, as a loop's kernel decides for its body)
    that does not revisit what the patterns made; `patterns` by the op class they match."""
    PatternRewriteWalker(OnOpType(patterns), apply_recursively=False).rewrite_module(module)


SHARED_SIGMOID = re.compile(r"minun_sigmoid16_[a-z]+")


def share_sigmoid(module: ModuleOp) -> None:
    """Cortex-M: Shiftry's sigmoid called from two or more places in the C every core
    compiles (with and without __ARM_FEATURE_DSP: a call in a kernel's #if and its copy
    in the #else count once for each) -> its _shared copy (c_runtime._sigmoid16: the
    same integers, with exp inlined into it). gcc -Os keeps such a sigmoid out of line;
    called from one place it is inlined into the model's loop and stays as it is."""
    calls: dict[str, list[tuple[cemit.CallOp, set[bool]]]] = {}
    for op in walk_ops(module):
        if isinstance(op, cemit.CallOp) and SHARED_SIGMOID.fullmatch(op.callee.data):
            calls.setdefault(op.callee.data, []).append((op, compiled_with(op)))
    for name, sites in calls.items():
        if all(sum(dsp in views for _, views in sites) > 1 for dsp in (True, False)):
            for op, _ in sites:
                op.callee = StringAttr(name + "_shared")


def compiled_with(op: Operation) -> set[bool]:
    """Whether op is compiled with __ARM_FEATURE_DSP (True), without (False), or both:
    the branches of the `#if defined(__ARM_FEATURE_DSP)` it lies in."""
    views = {True, False}
    child, parent = op, op.parent_op()
    while parent is not None:
        if isinstance(parent, cemit.TargetIfOp) and parent.feature.data == "__ARM_FEATURE_DSP":
            region = child.parent_region()
            views &= {region is parent.then}
        child, parent = parent, parent.parent_op()
    return views


def select_target_kernels(module: ModuleOp, target: str) -> ModuleOp:
    """The pass on in-memory IR: `module` rewritten in place for `target` and returned."""
    profile = profile_of(target)
    done = module.attributes.get(MARK)
    if done is not None:
        if done.data != profile:
            raise error(f"select-target-kernels: the kernels were selected for "
                        f"{done.data}, not {profile}")
        return module
    if profile == "x86":
        walk(module, {cemit.ForOp: (SplitRows(), Sse2Dot())})
    elif profile == "cortex-m":
        walk(module, {cemit.ForOp: (DspConvChannels(), DspSparseMatVec(spell(profile)),
                                    DspMatVec(), DspRows(), DspDot(),
                                    GuardedLoop(avr=False))})
        share_sigmoid(module)
    elif profile == "avr":
        # one walk for the loops and Mac16: a loop's recognisers read only the loop, which
        # the walk reaches before the statements in it, and no statement a loop kernel
        # makes is an accumulation Mac16 takes
        walk(module, {cemit.ForOp: (AvrDot(), AvrScatter(spell(profile)),
                                    GuardedLoop(avr=True)),
                      cemit.AssignOp: (Mac16(),)})
        # Mul16Asr32 after Mac16: it would take the product Mac16 takes (the walk reaches
        # an expression before its statement)
        walk(module, {cemit.BinaryOp: (Mul16Asr32(),)})
    module.attributes[MARK] = StringAttr(profile)
    return module


@dataclass(frozen=True)
class SelectTargetKernels(ModulePass):
    """Replace loops by the target's kernels (SSE2, SMLAD, AVR asm) as cemit ops."""

    name = "select-target-kernels"

    target: str = "x86"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        select_target_kernels(op, self.target)
