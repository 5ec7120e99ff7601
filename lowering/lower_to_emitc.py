"""`lower-to-emitc`: L3 (memref + scf + arith + func) -> L4 (`cemit`, C as IR).

What changes on the way, and why:

- Buffers get names. `memref.alloc` -> a static array at file scope (its size is then
  visible as static RAM in the linker's map); `memref.view` of the planned scratch global
  -> an element offset into one member of the scratch union (`minun_scratch.i16[...]`);
  constant `memref.global`s -> `const` arrays flagged `flash` (program memory on AVR).
- The input: the `x` parameter of `minun_predict`, or, when memory-plan planned it
  (`minun.input_in_scratch`), the buffer marked `minun.input`: the function is then
  `minun_predict_in_place(out)` and `minun.input_buffer` says where the caller writes the
  input (`minun_input_buffer`, beside a copying `minun_predict`). Likewise the output
  (`minun.output_in_scratch`, the buffer marked `minun.output`): `out` leaves the
  parameters and `minun.output_buffer` says where the caller reads it
  (`minun_output_buffer`).
- The C interface beside the model's function (lowering/c_abi.py): `minun_predict_float`
  (reals quantized as the evaluator encodes them, scores dequantized) and the in-place
  API, appended as `cemit.func`s.
- Scalars become expressions. An SSA value used once, in its own block, with no store or
  loop between its definition and its use, is printed inside its user's expression; any
  other value gets a `const` local variable (`cemit.decl`). So the C reads like
  `t_z[i0] = minun_sigmoid16_trunc((int16_t)((unsigned)t_pre[i0] + (unsigned)p_Bg[i0]));`.
- Integer semantics are made C-proof (docs/numerics.md: no signed overflow in C): an
  `arith` op with the `nsw` flag is exact and prints as plain C arithmetic; without it the
  op wraps, and prints in an unsigned type of at least int's width, cast back
  (`(int16_t)((unsigned)a + (unsigned)b)`), which is modular on every target. Left shifts
  that are exact print as multiplications (C leaves `<<` of negatives undefined).
- `scf.for` -> `cemit.for`, its iteration values become variables assigned at the end of
  the body; `scf.if` results become variables assigned in each branch.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    UnitAttr,
    UnknownLoc,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from minun_mlir.diagnostics import error
from minun_mlir.dialects import cemit
from minun_mlir.lowering.c_abi import abi_functions
from minun_mlir.modules import locate_after, replace_module_body, require_level

CMPI_BY_NUMBER = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">="}
CMPF_BY_NUMBER = {1: "==", 2: ">", 3: ">=", 4: "<", 5: "<=", 6: "!="}
INT_BINARY = {arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*", arith.DivSIOp: "/",
              arith.RemSIOp: "%", arith.ShRSIOp: ">>"}
WRAPPING = (arith.AddiOp, arith.SubiOp, arith.MuliOp)  # modular unless nsw (module docstring)
FLOAT_BINARY = {arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/"}
MIN_MAX = {arith.MaxSIOp: ">", arith.MinSIOp: "<"}
CASTS = (arith.ExtSIOp, arith.TruncIOp, arith.IndexCastOp)
C_RESERVED = (
    "auto break case char const continue default do double else enum extern float for goto "
    "if inline int long register restrict return short signed sizeof static struct switch "
    "typedef union unsigned void volatile while main"
).split()
SCRATCH_MEMBER = {"i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "f32": "f32"}


def unsigned_for(ty: Attribute) -> Attribute:
    """The unsigned type wrapping arithmetic of `ty` is done in: never narrower than int,
    so that C's promotions cannot turn it back into signed arithmetic."""
    w = ty.width.data
    if w <= 16:
        return cemit.OpaqueType("unsigned")
    return IntegerType(w, Signedness.UNSIGNED)


def _bits(ty: Attribute) -> int:
    return 32 if isinstance(ty, Float32Type) else ty.width.data


@dataclass
class ArrayRef:
    name: str
    offset: int  # in elements
    flash: bool


class EmitC:
    def __init__(self, module: ModuleOp):
        self.module = module
        self.top: list[Operation] = []
        self.arrays: dict[SSAValue, ArrayRef] = {}
        self.vars: dict[SSAValue, str] = {}
        self.names: set[str] = set()
        self.block: Block | None = None
        self.body: Block | None = None  # the function's body (its top-level statements)
        self.scratch: tuple[str, int] | None = None
        self.scratch_members: dict[str, Attribute] = {}
        self.flash_globals: set[str] = set()
        self.input_ref: ArrayRef | None = None  # the input's buffer (memory-plan's
        # input-in-scratch): where minun_input_buffer() points
        self.output_ref: ArrayRef | None = None  # likewise minun_output_buffer()
        self.counters: dict[str, int] = {}
        self.strings: dict[str, StringAttr] = {}

    def text(self, s: str) -> StringAttr:
        """`s` as a StringAttr, one shared by every op naming it (attributes are
        immutable; building one costs a dataclass and a verification, and the ops name
        few distinct variables, arrays and operators many times)."""
        attr = self.strings.get(s)
        if attr is None:
            attr = self.strings[s] = StringAttr(s)
        return attr

    def unique(self, base: str) -> str:
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in base)
        if base in self.names or not base or base[0].isdigit():
            k = self.counters.get(base, 0)
            while f"{base}{k}" in self.names:
                k += 1
            self.counters[base] = k + 1
            base = f"{base}{k}"
        self.names.add(base)
        return base

    def add(self, op: Operation) -> SSAValue:
        assert self.block is not None
        self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    # -- module ------------------------------------------------------------------------

    def run(self) -> ModuleOp:
        entry = None
        self.names.update({"x", "out", "minun_predict", "minun_predict_float",
                           "minun_predict_in_place", "minun_input_buffer",
                           "minun_output_buffer", *C_RESERVED})
        for op in self.module.ops:
            if isinstance(op, memref.GlobalOp):
                self.global_(op)
            elif isinstance(op, func.FuncOp):
                if op.is_declaration:
                    continue
                if entry is not None:
                    raise error("lower-to-emitc expects one function (L3)")
                entry = op
            else:
                raise error(f"lower-to-emitc: unexpected {op.name} at module level")
        if entry is None:
            raise error("lower-to-emitc: no function to lower")
        fn = self.function(entry)
        ops: list[Operation] = [cemit.IncludeOp.create(attributes={"header": StringAttr(h)})
                                for h in ("model.h", "minun_runtime.h")]
        ops += self.top
        if self.scratch is not None:
            name, size = self.scratch
            members = sorted(self.scratch_members.values(), key=lambda t: (_bits(t), str(t)))
            ops.append(cemit.ScratchOp.create(attributes={
                "sym_name": StringAttr(name), "size": IntAttr(size),
                "members": ArrayAttr(members)}))
        ops.append(fn)
        ops += abi_functions(fn)  # minun_predict_float, the in-place API (c_abi.py)
        return ModuleOp(ops)

    def global_(self, op: memref.GlobalOp) -> None:
        ty = op.type
        name = op.sym_name.data
        self.names.add(name)
        if op.constant is not None and isinstance(op.initial_value, DenseIntOrFPElementsAttr):
            attrs = {"sym_name": StringAttr(name), "elem": ty.element_type,
                     "size": IntAttr(ty.get_shape()[0]), "value": op.initial_value,
                     "const": UnitAttr(), "flash": UnitAttr()}
            self.flash_globals.add(name)
            self.top.append(cemit.GlobalOp.create(attributes=attrs))
        elif ty.element_type == IntegerType(8) and ty.get_num_dims() == 1:
            self.scratch = (name, ty.get_shape()[0])
        else:
            raise error(f"lower-to-emitc: global @{name} is neither a constant "
                             "array nor an i8 scratch array")

    def function(self, fn: func.FuncOp) -> cemit.FuncOp:
        block = fn.body.block
        x, out = block.args
        self.arrays[x] = ArrayRef("x", 0, False)
        self.arrays[out] = ArrayRef("out", 0, False)
        body = Block()
        self.block = self.body = body
        self.lower_block(block, None)
        in_scratch = "minun.input_in_scratch" in fn.attributes
        out_scratch = "minun.output_in_scratch" in fn.attributes
        if in_scratch and self.input_ref is None:  # memory-plan{input-in-scratch}
            raise error("lower-to-emitc: minun.input_in_scratch but no buffer is "
                        "marked minun.input")
        if out_scratch and self.output_ref is None:  # memory-plan{output-in-scratch}
            raise error("lower-to-emitc: minun.output_in_scratch but no buffer is "
                        "marked minun.output")
        params = ([] if in_scratch else [StringAttr("const minun_input_t *x")]) + \
            ([] if out_scratch else [StringAttr("minun_output_t *out")])
        attrs: dict[str, Attribute] = {
            "sym_name": StringAttr("minun_predict_in_place" if in_scratch or out_scratch
                                   else "minun_predict"),
            "params": ArrayAttr(params),
            "result": cemit.OpaqueType("int"),
            "minun.input_type": x.type.element_type,
            "minun.output_type": out.type.element_type,
            "minun.input_size": IntAttr(x.type.get_shape()[0]),
            "minun.output_size": IntAttr(out.type.get_shape()[0]),
        }
        for key, value in fn.attributes.items():
            if key.startswith(("minun.", "num.")):
                attrs[key] = value
        if in_scratch:
            ref = self.input_ref
            attrs["minun.input_buffer"] = StringAttr(f"&{ref.name}[{ref.offset}]")
        if out_scratch:
            ref = self.output_ref
            attrs["minun.output_buffer"] = StringAttr(f"&{ref.name}[{ref.offset}]")
        return cemit.FuncOp.create(attributes=attrs, regions=[Region(body)])

    # -- blocks and statements -----------------------------------------------------------

    def lower_block(self, block: Block, on_yield) -> None:
        ops = list(block.ops)
        pos = {op: i for i, op in enumerate(ops)}
        effects = [i for i, op in enumerate(ops) if not is_expression(op) and
                   not isinstance(op, (memref.AllocOp, memref.GetGlobalOp, memref.ViewOp,
                                       scf.YieldOp))]
        top = self.block is self.body  # the function's statements keep their op's location
        for op in ops:
            last = self.block.last_op if top else None
            self.lower_op(op, block, pos, effects, on_yield)
            if top and not isinstance(op.location, UnknownLoc):
                locate_after(self.block, last, op.location)

    def lower_op(self, op: Operation, block: Block, pos, effects, on_yield) -> None:
        if is_expression(op):
            if op.results[0].uses and not self.inline(op, block, pos, effects):
                self.bind(op)
        elif isinstance(op, scf.YieldOp):
            on_yield(list(op.operands))
        else:
            self.statement(op)

    def inline(self, op: Operation, block: Block, pos, effects) -> bool:
        """Whether op's result is printed inside its single user (see module docstring)."""
        if isinstance(op, arith.ConstantOp):
            return True
        uses = list(op.results[0].uses)
        if len(uses) != 1:
            return False
        user = uses[0].operation
        if user.parent_block() is not block or type(user) in MIN_MAX:
            return False
        lo, hi = pos[op], pos[user]
        after = bisect_right(effects, lo)  # the first effect after op (effects ascend)
        return after == len(effects) or effects[after] >= hi

    def bind(self, op: Operation) -> None:
        result = op.results[0]
        value = self.build(op)
        name = self.unique(result.name_hint or "v")
        self.add(cemit.DeclOp.create(operands=[value], attributes={
            "var": self.text(name), "const": UnitAttr()}))
        self.vars[result] = name

    def statement(self, op: Operation) -> None:
        if isinstance(op, func.CallOp):  # no result: a call for its effect (a probe)
            self.add(cemit.CallStmtOp.create(operands=[self.expr(a) for a in op.arguments],
                                             attributes={"callee": self.text(
                                                 op.callee.root_reference.data)}))
            return
        lower = STATEMENTS.get(type(op))
        if lower is None:
            raise error(f"lower-to-emitc: {op.name} is not supported")
        lower(self, op)

    def alloc(self, op: memref.AllocOp) -> None:
        ty = op.memref.type
        name = self.unique("t_" + (op.memref.name_hint or "buf"))
        self.top.append(cemit.GlobalOp.create(attributes={
            "sym_name": self.text(name), "elem": ty.element_type,
            "size": IntAttr(ty.get_shape()[0])}))
        self.arrays[op.memref] = ArrayRef(name, 0, False)
        if "minun.input" in op.attributes:
            self.input_ref = self.arrays[op.memref]
        if "minun.output" in op.attributes:
            self.output_ref = self.arrays[op.memref]

    def get_global(self, op: memref.GetGlobalOp) -> None:
        name = op.name_.root_reference.data
        self.arrays[op.memref] = ArrayRef(name, 0, name in self.flash_globals)

    def store(self, op: memref.StoreOp) -> None:
        value = self.expr(op.value)
        index = self.index(op.memref, op.indices)
        ref = self.arrays[op.memref]
        if ref.flash:
            raise error(f"lower-to-emitc: store into the constant {ref.name}")
        self.add(cemit.StoreOp.create(operands=[value, index],
                                      attributes={"array": self.text(ref.name)}))

    def return_(self, op: func.ReturnOp) -> None:
        self.add(cemit.ReturnOp.create(operands=[self.expr(v) for v in op.operands]))

    def view(self, op: memref.ViewOp) -> None:
        src = op.source.owner
        if self.scratch is None or not isinstance(src, memref.GetGlobalOp) or \
                src.name_.root_reference.data != self.scratch[0]:
            raise error("lower-to-emitc: memref.view must view the scratch global")
        shift = op.byte_shift.owner
        if not isinstance(shift, arith.ConstantOp):
            raise error("lower-to-emitc: memref.view needs a constant byte shift")
        elem = op.result.type.element_type
        size = _bits(elem) // 8
        offset = shift.value.value.data
        if offset % size:
            raise error(f"lower-to-emitc: view at byte {offset} is not aligned "
                             f"for {elem}")
        member = SCRATCH_MEMBER[str(elem)]
        self.scratch_members[member] = elem
        self.arrays[op.result] = ArrayRef(f"{self.scratch[0]}.{member}", offset // size, False)
        if "minun.input" in op.attributes:
            self.input_ref = self.arrays[op.result]
        if "minun.output" in op.attributes:
            self.output_ref = self.arrays[op.result]

    def copy(self, op: memref.CopyOp) -> None:
        """A buffer moved by memory-plan (Shiftry's defragmentation): an element loop in
        ascending order, which is also right when the two places overlap as long as the
        data moves down (memory-plan's moves always do)."""
        src, dst = self.arrays[op.source], self.arrays[op.destination]
        ty = op.source.type
        if ty != op.destination.type or dst.flash:
            raise error("lower-to-emitc: memref.copy needs two RAM buffers of one type")
        if src.name == dst.name and dst.offset > src.offset:
            raise error("lower-to-emitc: memref.copy within one array must move data down")
        var = self.unique("i")
        outer = self.block
        self.block = Block()
        ref = IndexType()

        def at(r: ArrayRef) -> SSAValue:
            idx = self.add(cemit.RefOp.create(attributes={"var": self.text(var)},
                                              result_types=[ref]))
            if r.offset:
                idx = self.binary("+", idx, self.literal(IntegerAttr(r.offset, ref)), ref)
            return idx

        value = self.add(cemit.LoadOp.create(operands=[at(src)], attributes={
            "array": self.text(src.name)}, result_types=[ty.element_type]))
        self.add(cemit.StoreOp.create(operands=[value, at(dst)],
                                      attributes={"array": self.text(dst.name)}))
        body, self.block = self.block, outer
        lower = self.literal(IntegerAttr(0, ref))
        upper = self.literal(IntegerAttr(ty.get_shape()[0], ref))
        self.add(cemit.ForOp.create(operands=[lower, upper], attributes={
            "var": self.text(var)}, regions=[Region(body)]))

    def for_(self, op: scf.ForOp) -> None:
        step = op.step.owner
        if not (isinstance(step, arith.ConstantOp) and step.value.value.data == 1):
            raise error("lower-to-emitc: scf.for must have step 1")
        body = op.body.block
        acc_names = []
        for arg, init in zip(body.args[1:], op.iter_args):
            name = self.unique(arg.name_hint or "acc")
            self.add(cemit.DeclOp.create(operands=[self.expr(init)],
                                         attributes={"var": self.text(name)}))
            acc_names.append(name)
            self.vars[arg] = name
        lower, upper = self.bound(op.lb), self.bound(op.ub)
        var = self.unique(body.args[0].name_hint or "i")
        self.vars[body.args[0]] = var
        inner = Block()
        outer, self.block = self.block, inner

        def on_yield(values: list[SSAValue]) -> None:
            self.assign_all(acc_names, values, body.args[1:])

        self.lower_block(body, on_yield)
        self.block = outer
        self.add(cemit.ForOp.create(operands=[lower, upper], attributes={
            "var": self.text(var)}, regions=[Region(inner)]))
        for res, name in zip(op.results, acc_names):
            self.vars[res] = name

    def bound(self, v: SSAValue) -> SSAValue:
        """A loop bound evaluated once (C re-evaluates the condition every iteration)."""
        if v not in self.vars and not isinstance(v.owner, arith.ConstantOp):
            self.bind(v.owner)
        return self.expr(v)

    def assign_all(self, names: Sequence[str], values: Sequence[SSAValue],
                   current: Sequence[SSAValue]) -> None:
        """Assign loop-carried variables; through temporaries when there are several, so
        that each new value is computed from the old ones."""
        pairs = [(n, v) for n, v, c in zip(names, values, current) if v is not c]
        if len(pairs) > 1:
            temps = []
            for n, v in pairs:
                t = self.unique(n + "_next")
                self.add(cemit.DeclOp.create(operands=[self.expr(v)], attributes={
                    "var": self.text(t), "const": UnitAttr()}))
                temps.append((n, t, v.type))
            for n, t, ty in temps:
                ref = self.add(cemit.RefOp.create(attributes={"var": self.text(t)},
                                                  result_types=[ty]))
                self.add(cemit.AssignOp.create(operands=[ref], attributes={"var": self.text(n)}))
            return
        for n, v in pairs:
            self.add(cemit.AssignOp.create(operands=[self.expr(v)],
                                           attributes={"var": self.text(n)}))

    def if_(self, op: scf.IfOp) -> None:
        names = []
        for res in op.results:
            name = self.unique(res.name_hint or "r")
            zero = self.literal(FloatAttr(0.0, res.type) if isinstance(res.type, Float32Type)
                                else IntegerAttr(0, res.type))
            self.add(cemit.DeclOp.create(operands=[zero], attributes={"var": self.text(name)}))
            names.append(name)
        cond = self.expr(op.cond)
        regions = []
        outer = self.block
        for region in (op.true_region, op.false_region):
            inner = Block()
            self.block = inner
            if region.blocks:
                self.lower_block(region.block, lambda values: self.assign_all(
                    names, values, [None] * len(values)))
            regions.append(Region(inner))
        self.block = outer
        self.add(cemit.IfOp.create(operands=[cond], regions=regions))
        for res, name in zip(op.results, names):
            self.vars[res] = name

    # -- expressions -----------------------------------------------------------------------

    def literal(self, attr: IntegerAttr | FloatAttr) -> SSAValue:
        return self.add(cemit.LiteralOp(attr))

    def expr(self, v: SSAValue) -> SSAValue:
        if v in self.vars:
            return self.add(cemit.RefOp.create(attributes={"var": self.text(self.vars[v])},
                                               result_types=[v.type]))
        owner = v.owner
        if isinstance(owner, Operation) and type(owner) in EXPRESSIONS:
            return self.build(owner)
        raise error(f"lower-to-emitc: no C expression for {v} ({owner})")

    def index(self, ref_value: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        if len(indices) != 1:
            raise error("lower-to-emitc: memrefs must be 1-D (L3 buffers are flat)")
        idx = self.expr(indices[0])
        offset = self.arrays[ref_value].offset
        if offset:
            off = self.literal(IntegerAttr(offset, IndexType()))
            idx = self.add(cemit.BinaryOp.create(operands=[idx, off], attributes={
                "op": self.text("+")}, result_types=[IndexType()]))
        return idx

    def binary(self, op: str, a: SSAValue, b: SSAValue, ty: Attribute) -> SSAValue:
        return self.add(cemit.BinaryOp.create(operands=[a, b], attributes={"op": self.text(op)},
                                              result_types=[ty]))

    def cast(self, a: SSAValue, ty: Attribute) -> SSAValue:
        return self.add(cemit.CastOp.create(operands=[a], result_types=[ty]))

    def nsw(self, op: Operation) -> bool:
        flags = op.properties.get("overflowFlags")
        if isinstance(flags, arith.IntegerOverflowAttr):  # its flags, without printing it
            return arith.IntegerOverflowFlag.NSW in flags.data
        return flags is not None and "nsw" in str(flags)

    def build(self, op: Operation) -> SSAValue:
        build = EXPRESSIONS.get(type(op))
        if build is None:
            raise error(f"lower-to-emitc: {op.name} is not supported")
        return build(self, op)

    def constant(self, op: arith.ConstantOp) -> SSAValue:
        return self.literal(op.value)

    def load(self, op: memref.LoadOp) -> SSAValue:
        ref = self.arrays[op.memref]
        index = self.index(op.memref, op.indices)
        attrs: dict[str, Attribute] = {"array": self.text(ref.name)}
        if ref.flash:
            attrs["flash"] = UnitAttr()
        return self.add(cemit.LoadOp.create(operands=[index], attributes=attrs,
                                            result_types=[op.results[0].type]))

    def call(self, op: func.CallOp) -> SSAValue:
        args = [self.expr(a) for a in op.arguments]
        return self.add(cemit.CallOp.create(operands=args, attributes={
            "callee": self.text(op.callee.root_reference.data)},
            result_types=[op.results[0].type]))

    def float_binary(self, op: Operation) -> SSAValue:
        return self.binary(FLOAT_BINARY[type(op)], self.expr(op.lhs), self.expr(op.rhs),
                           op.results[0].type)

    def negf(self, op: arith.NegfOp) -> SSAValue:
        return self.add(cemit.UnaryOp.create(operands=[self.expr(op.operand)], attributes={
            "op": self.text("-")}, result_types=[op.results[0].type]))

    def wrapping(self, op: Operation) -> SSAValue:
        """+, -, *: modular arithmetic in an unsigned type unless the op is exact (nsw)."""
        ty = op.results[0].type
        if self.nsw(op) or isinstance(ty, IndexType):
            return self.int_binary(op)
        u = unsigned_for(ty)
        a, b = self.cast(self.expr(op.lhs), u), self.cast(self.expr(op.rhs), u)
        return self.cast(self.binary(INT_BINARY[type(op)], a, b, u), ty)

    def int_binary(self, op: Operation) -> SSAValue:
        return self.binary(INT_BINARY[type(op)], self.expr(op.lhs), self.expr(op.rhs),
                           op.results[0].type)

    def shift_left(self, op: arith.ShLIOp) -> SSAValue:
        ty = op.results[0].type
        shift = op.rhs.owner
        if not isinstance(shift, arith.ConstantOp):
            if self.nsw(op):
                raise error("lower-to-emitc: exact (nsw) shifts must be by constants")
            # a shift read at run time (per-channel shifts): in the unsigned type
            u = unsigned_for(ty)
            return self.cast(self.binary("<<", self.cast(self.expr(op.lhs), u),
                                         self.expr(op.rhs), u), ty)
        n = shift.value.value.data
        if self.nsw(op):  # exact: a multiplication (<< of a negative is undefined in C)
            return self.binary("*", self.expr(op.lhs), self.literal(IntegerAttr(1 << n, ty)), ty)
        u = unsigned_for(ty)
        shifted = self.binary("<<", self.cast(self.expr(op.lhs), u),
                              self.literal(IntegerAttr(n, IndexType())), u)
        return self.cast(shifted, ty)

    def and_(self, op: arith.AndIOp) -> SSAValue:
        logical = op.lhs.type == i1
        return self.binary("&&" if logical else "&", self.expr(op.lhs), self.expr(op.rhs),
                           op.results[0].type)

    def cmpi(self, op: arith.CmpiOp) -> SSAValue:
        return self.binary(CMPI_BY_NUMBER[op.predicate.value.data], self.expr(op.lhs),
                           self.expr(op.rhs), i1)

    def cmpf(self, op: arith.CmpfOp) -> SSAValue:
        pred = op.predicate.value.data
        if pred not in CMPF_BY_NUMBER:
            raise error(f"lower-to-emitc: cmpf predicate {pred} not supported")
        return self.binary(CMPF_BY_NUMBER[pred], self.expr(op.lhs), self.expr(op.rhs), i1)

    def select(self, op: arith.SelectOp) -> SSAValue:
        return self.add(cemit.CondOp.create(operands=[
            self.expr(op.cond), self.expr(op.lhs), self.expr(op.rhs)],
            result_types=[op.results[0].type]))

    def min_max(self, op: Operation) -> SSAValue:
        test = self.binary(MIN_MAX[type(op)], self.expr(op.lhs), self.expr(op.rhs), i1)
        return self.add(cemit.CondOp.create(operands=[
            test, self.expr(op.lhs), self.expr(op.rhs)], result_types=[op.results[0].type]))

    def convert(self, op: Operation) -> SSAValue:
        return self.cast(self.expr(op.input), op.results[0].type)


def is_expression(op: Operation) -> bool:
    """Whether op becomes a cemit value (a call without result is a statement)."""
    return type(op) in EXPRESSIONS and bool(op.results)


# What each L3 op becomes: a statement (added to the current block), or an expression
# (a cemit value, printed inside its user or bound to a variable by lower_block).
STATEMENTS: dict[type[Operation], Callable[[EmitC, Operation], None]] = {
    memref.AllocOp: EmitC.alloc,
    memref.GetGlobalOp: EmitC.get_global,
    memref.ViewOp: EmitC.view,
    memref.StoreOp: EmitC.store,
    memref.CopyOp: EmitC.copy,
    scf.ForOp: EmitC.for_,
    scf.IfOp: EmitC.if_,
    func.ReturnOp: EmitC.return_,
}
EXPRESSIONS: dict[type[Operation], Callable[[EmitC, Operation], SSAValue]] = {
    arith.ConstantOp: EmitC.constant,
    memref.LoadOp: EmitC.load,
    func.CallOp: EmitC.call,
    **{kind: EmitC.float_binary for kind in FLOAT_BINARY},
    arith.NegfOp: EmitC.negf,
    **{kind: EmitC.int_binary for kind in INT_BINARY},
    **{kind: EmitC.wrapping for kind in WRAPPING},
    arith.ShLIOp: EmitC.shift_left,
    arith.AndIOp: EmitC.and_,
    arith.CmpiOp: EmitC.cmpi,
    arith.CmpfOp: EmitC.cmpf,
    arith.SelectOp: EmitC.select,
    **{kind: EmitC.min_max for kind in MIN_MAX},
    **{kind: EmitC.convert for kind in CASTS},
}


def lower_to_emitc(module: ModuleOp) -> ModuleOp:
    """The pass as a function: returns the L4 module."""
    require_level(module, "lower-to-emitc", 3)
    return EmitC(module).run()


@dataclass(frozen=True)
class LowerToEmitC(ModulePass):
    """L3 -> L4: C as IR (cemit): named arrays, expressions, statements."""

    name = "lower-to-emitc"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        replace_module_body(op, lower_to_emitc(op))
