"""`lower-to-loops`: L2 (values typed by a number representation) -> L3 (buffers and loops).

L3 is builtin `memref` + `scf` + `arith` + `func` with every integer width explicit:
loads of the stored integers, `arith.extsi`/`trunci` for widening and narrowing, shifts and
divisions that round as docs/numerics.md says, `cmpi`/`select`/`maxsi` for saturation.
The result is one function

    func.func @minun_predict(%x: memref<Nxi16>, %out: memref<Mxi16>) -> i32

that reads the quantized input, writes the scores (the input of the final argmax/sgn, or
the returned tensor) to `%out` and returns the label: exactly the C entry point of
docs/targets.md, so the later levels only change how it is spelled.

How tensors become memory (why the pass is more than one loop nest per op):

- Every tensor buffer is a flat 1-D memref; views (reshape, transpose, splice, index,
  reverse) are strided index maps over a buffer and cost no memory or copy.
- Parameters become `memref.global` constants (dense integers, never text). A rescale of
  a parameter is folded at compile time into another global with `numerics.fixed` (the
  integers the evaluator computes), so no weight is ever copied into RAM.
- Every other op first becomes a lazy element function (`Val.load(index)`); a value is
  only written to a buffer when its single consumer cannot pull it element by element
  (it has several uses, is read several times per element, or lives in another region).
  So `conv2d -> rescale -> maxpool` computes each convolution output inside the pooling
  window and stores only the pooled tensor, and a `rescale` feeding a matmul or an add is
  applied on the consumer's loads (Shiftry's "fuse the shift into the operation").
- All buffers are `memref.alloc` at the top of the function, apart from the computation,
  so that `memory-plan` can place them in one scratch array afterwards.
- `minun.loop` -> `scf.for`: a carried tensor gets its own buffer, filled from the init
  before the loop and from the yielded value at the end of each iteration (in place when
  that is element-wise safe); left splices into a carried value write in place.
  `minun.if_nonneg` -> `scf.if` (only the taken branch runs). L2's i32 values (loop
  indices, tree nodes, labels) become `index`.
- exp/sigmoid/tanh at Shiftry's scales call runtime helpers (`func.func private
  @minun_exp16_trunc` ...) that minun_runtime.h implements with tables generated from
  numerics/fixed.py; SeeDot's two-table exp is inlined with its tables as globals; TreeSum
  halvings are unrolled level by level (sizes are static); sparse matmul walks a
  compressed-column copy of the parameter (same terms, same order as SeeDot's format).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from minun_mlir.dialects import minun, num
from minun_mlir.dialects.num import FixedType
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from minun_mlir.diagnostics import MinunError
from minun_mlir.ir_text import location_of, replace_module_body
from minun_mlir.numerics import fixed as fx

INDEX = IndexType()
ENTRY = "minun_predict"
NSW = arith.IntegerOverflowAttr([arith.IntegerOverflowFlag.NSW])

# How much it costs to read an element of a lazy value again (decides materialization).
FREE, CHEAP, COMPUTE = 0, 1, 2


def storage(el: Attribute) -> Attribute:
    """The C-level element of an L2 element type: iN for !num.fixed<N, s>, f32 for f32."""
    if isinstance(el, FixedType):
        return IntegerType(el.width)
    if isinstance(el, Float32Type):
        return f32
    raise MinunError(f"error: lower-to-loops: no storage type for element {el}")


def shape_of(value: SSAValue) -> tuple[int, ...]:
    ty = value.type
    return tuple(ty.get_shape()) if isinstance(ty, TensorType) else ()


def element_of(value: SSAValue) -> Attribute:
    return value.type.element_type


def row_major(shape: Sequence[int]) -> tuple[int, ...]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


def width(x: SSAValue) -> int:
    return x.type.width.data


def is_float(el: Attribute) -> bool:
    return isinstance(el, Float32Type)


# --------------------------------------------------------------------------------------
# Affine index expressions: constants folded in Python, ops emitted once per access
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lin:
    """const + sum(coeff * v) over `index` SSA values."""

    const: int = 0
    terms: tuple[tuple[SSAValue, int], ...] = ()

    @staticmethod
    def of(x: int | SSAValue | Lin) -> Lin:
        if isinstance(x, Lin):
            return x
        if isinstance(x, int):
            return Lin(x)
        return Lin(0, ((x, 1),))

    def __add__(self, other: int | Lin) -> Lin:
        other = Lin.of(other)
        terms = dict(self.terms)
        for v, c in other.terms:
            terms[v] = terms.get(v, 0) + c
        return Lin(self.const + other.const, tuple((v, c) for v, c in terms.items() if c))

    def scale(self, k: int) -> Lin:
        if k == 0:
            return Lin(0)
        return Lin(self.const * k, tuple((v, c * k) for v, c in self.terms))

    def same(self, other: Lin) -> bool:
        return self.const == other.const and dict(self.terms) == dict(other.terms)


# --------------------------------------------------------------------------------------
# Builder of L3
# --------------------------------------------------------------------------------------


@dataclass(eq=False)
class Buffer:
    """One allocation (or global, or function argument) of `size` elements."""

    ref: SSAValue
    size: int
    elem: Attribute
    owner: SSAValue | None = None  # the L2 value that may update it in place


class Gen:
    """Appends L3 ops to the current block; allocations, constants and global accesses
    go to the top of the function."""

    def __init__(self):
        self.block: Block | None = None
        self.top: list[Operation] = []  # allocs, constants, get_global: the entry's head
        self.consts: dict[tuple, SSAValue] = {}
        self.module_ops: list[Operation] = []  # globals and helper declarations
        self.names: set[str] = set()
        self.helpers: dict[str, func.FuncOp] = {}

    # -- plumbing ----------------------------------------------------------------------

    def add(self, op: Operation) -> SSAValue:
        assert self.block is not None
        self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def _top(self, op: Operation) -> SSAValue:
        self.top.append(op)
        return op.results[0]

    def unique(self, name: str) -> str:
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name) or "v"
        if base[0].isdigit():
            base = "v" + base
        cand, k = base, 1
        while cand in self.names:
            k += 1
            cand = f"{base}_{k}"
        self.names.add(cand)
        return cand

    # -- constants ---------------------------------------------------------------------

    def index(self, v: int) -> SSAValue:
        return self.const(v, INDEX)

    def const(self, v: int | float, ty: Attribute) -> SSAValue:
        key = (float(v) if isinstance(ty, Float32Type) else int(v), str(ty))
        if key not in self.consts:
            if isinstance(ty, Float32Type):
                attr = FloatAttr(float(v), f32)
            else:
                attr = IntegerAttr(int(v), ty)
            self.consts[key] = self._top(arith.ConstantOp(attr, ty))
        return self.consts[key]

    def iconst(self, v: int, w: int) -> SSAValue:
        return self.const(v, IntegerType(w))

    # -- memory ------------------------------------------------------------------------

    def alloc(self, size: int, elem: Attribute, hint: str | None) -> Buffer:
        ref = self._top(memref.AllocOp.get(elem, shape=[size]))
        if hint:
            ref.name_hint = hint
        return Buffer(ref, size, elem)

    def global_(self, name: str, values: np.ndarray, elem: Attribute) -> Buffer:
        """A constant global holding `values` (flattened), accessed by memref.get_global."""
        name = self.unique(name)
        flat = np.ascontiguousarray(values).reshape(-1)
        ty = MemRefType(elem, [max(flat.size, 1)])
        if isinstance(elem, Float32Type):
            data = flat.astype("<f4")
        else:
            data = flat.astype({8: "<i1", 16: "<i2", 32: "<i4", 64: "<i8"}[elem.width.data])
        if flat.size == 0:
            data = np.zeros(1, dtype=data.dtype)
        dense = DenseIntOrFPElementsAttr(TensorType(elem, [data.size]), BytesAttr(data.tobytes()))
        self.module_ops.append(memref.GlobalOp.get(StringAttr(name), ty, dense,
                                                   constant=UnitAttr()))
        ref = self._top(memref.GetGlobalOp(name, ty))
        ref.name_hint = name
        return Buffer(ref, data.size, elem)

    def load(self, buf: Buffer, at: Lin) -> SSAValue:
        return self.add(memref.LoadOp.get(buf.ref, [self.lin(at)]))

    def store(self, value: SSAValue, buf: Buffer, at: Lin) -> None:
        self.add(memref.StoreOp.get(value, buf.ref, [self.lin(at)]))

    def helper(self, name: str, args: Sequence[SSAValue], result: Attribute) -> SSAValue:
        """Call a runtime helper of minun_runtime.h (declared once, private)."""
        if name not in self.helpers:
            decl = func.FuncOp.external(name, [a.type for a in args], [result])
            self.helpers[name] = decl
            self.module_ops.append(decl)
        return self.add(func.CallOp(name, list(args), [result]))

    # -- index arithmetic --------------------------------------------------------------

    def lin(self, x: Lin | int | SSAValue) -> SSAValue:
        x = Lin.of(x)
        acc: SSAValue | None = None
        for v, c in x.terms:
            term = v if c == 1 else self.add(arith.MuliOp(v, self.index(c), overflow=NSW))
            acc = term if acc is None else self.add(arith.AddiOp(acc, term, overflow=NSW))
        if acc is None:
            return self.index(x.const)
        if x.const:
            acc = self.add(arith.AddiOp(acc, self.index(x.const), overflow=NSW))
        return acc

    # -- structured control flow -------------------------------------------------------

    def for_(self, lo: int | SSAValue, hi: int | SSAValue, inits: Sequence[SSAValue],
             body: Callable[..., Sequence[SSAValue] | None]) -> list[SSAValue]:
        block = Block(arg_types=[INDEX, *[v.type for v in inits]])
        saved, self.block = self.block, block
        try:
            yields = body(block.args[0], *block.args[1:]) or []
            block.add_op(scf.YieldOp(*yields))
        finally:
            self.block = saved
        lo_v = self.index(lo) if isinstance(lo, int) else lo
        hi_v = self.index(hi) if isinstance(hi, int) else hi
        op = scf.ForOp(lo_v, hi_v, self.index(1), list(inits), Region(block))
        self.add(op)
        return list(op.results)

    def if_(self, cond: SSAValue, types: Sequence[Attribute],
            then: Callable[[], Sequence[SSAValue] | None],
            other: Callable[[], Sequence[SSAValue] | None]) -> list[SSAValue]:
        regions = []
        for fn in (then, other):
            block = Block()
            saved, self.block = self.block, block
            try:
                block.add_op(scf.YieldOp(*(fn() or [])))
            finally:
                self.block = saved
            regions.append(Region(block))
        op = scf.IfOp(cond, list(types), regions[0], regions[1])
        self.add(op)
        return list(op.results)

    def nest(self, shape: Sequence[int], body: Callable[[list[Lin]], None]) -> None:
        """Loop nest over `shape` (row-major; unit dimensions get no loop)."""

        def level(d: int, idx: list[Lin]) -> None:
            if d == len(shape):
                body(idx)
            elif shape[d] == 1:
                level(d + 1, idx + [Lin(0)])
            else:
                self.for_(0, shape[d], [], lambda iv: level(d + 1, idx + [Lin.of(iv)]))

        level(0, [])

    # -- integer arithmetic ------------------------------------------------------------

    def resize(self, x: SSAValue, w: int) -> SSAValue:
        cur = width(x)
        if cur < w:
            return self.add(arith.ExtSIOp(x, IntegerType(w)))
        if cur > w:
            return self.add(arith.TruncIOp(x, IntegerType(w)))
        return x

    def binop(self, kind: type, a: SSAValue, b: SSAValue, nsw: bool = False) -> SSAValue:
        return self.add(kind(a, b, overflow=NSW) if nsw else kind(a, b))

    def shrsi(self, x: SSAValue, n: int) -> SSAValue:
        return x if n == 0 else self.add(arith.ShRSIOp(x, self.iconst(n, width(x))))

    def cmp(self, a: SSAValue, b: SSAValue, pred: str) -> SSAValue:
        if isinstance(a.type, Float32Type):
            fpred = {"sgt": "ogt", "sge": "oge", "slt": "olt", "sle": "ole"}[pred]
            return self.add(arith.CmpfOp(a, b, fpred))
        return self.add(arith.CmpiOp(a, b, pred))

    def select(self, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.SelectOp(c, a, b))

    def max(self, a: SSAValue, b: SSAValue) -> SSAValue:
        if isinstance(a.type, Float32Type):
            return self.select(self.cmp(a, b, "sgt"), a, b)
        return self.add(arith.MaxSIOp(a, b))

    def min(self, a: SSAValue, b: SSAValue) -> SSAValue:
        if isinstance(a.type, Float32Type):
            return self.select(self.cmp(a, b, "slt"), a, b)
        return self.add(arith.MinSIOp(a, b))

    def clamp(self, x: SSAValue, lo: int | None, hi: int | None) -> SSAValue:
        """Clamp to [lo, hi]; bounds outside the type's range are dropped."""
        tlo, thi = fx.int_range(width(x))
        if hi is not None and hi < thi:
            x = self.min(x, self.iconst(hi, width(x)))
        if lo is not None and lo > tlo:
            x = self.max(x, self.iconst(lo, width(x)))
        return x

    def shr_round(self, x: SSAValue, n: int, rounding: str) -> SSAValue:
        """x / 2^n (n >= 1) rounded per docs/numerics.md, without any overflow."""
        w = width(x)
        if n >= w:  # |x| < 2^n: the quotient is 0 (or -1 for floor of a negative)
            return self.shrsi(x, w - 1) if rounding == "floor" else self.iconst(0, w)
        if rounding == "floor":
            return self.shrsi(x, n)
        if rounding == "nearest":  # (x + 2^(n-1)) >> n, as (x >> n) + bit n-1 of x
            bit = self.binop(arith.AndIOp, self.shrsi(x, n - 1), self.iconst(1, w))
            return self.binop(arith.AddiOp, self.shrsi(x, n), bit, nsw=True)
        if rounding != "trunc":
            raise MinunError(f"error: unknown rounding mode '{rounding}'")
        # toward zero: (x + ((x >> (w-1)) & (2^n - 1))) >> n, C's x / 2^n without a
        # division (avr-gcc -Os calls its 32-bit division routine for x / 2^n) and without
        # a branch (the skip-over-adiw that avr-gcc emits for `x < 0 ? x + 63 : x` is
        # misexecuted by simavr 1.6, see docs/codegen.md)
        bias = self.binop(arith.AndIOp, self.shrsi(x, w - 1), self.iconst((1 << n) - 1, w))
        return self.shrsi(self.binop(arith.AddiOp, x, bias, nsw=True), n)

    def narrow(self, x: SSAValue, bits: int, overflow: str) -> SSAValue:
        if bits >= width(x):
            return self.resize(x, bits)
        if overflow == "saturate":
            lo, hi = fx.int_range(bits)
            x = self.clamp(x, lo, hi)
        return self.resize(x, bits)

    def rescale(self, x: SSAValue, shift: int, rounding: str, overflow: str, bits: int
                ) -> SSAValue:
        """num.rescale on one element (docs/numerics.md: narrow(round(x / 2^shift)))."""
        if shift > 0:
            return self.narrow(self.shr_round(x, shift, rounding), bits, overflow)
        if shift == 0:
            return self.narrow(x, bits, overflow)
        m, w = -shift, width(x)
        if overflow == "wrap":  # low bits only: shift in the wider of the two widths
            wide = max(w, bits)
            if m >= wide:
                return self.iconst(0, bits)
            y = self.resize(x, wide)
            y = self.add(arith.ShLIOp(y, self.iconst(m, wide)))
            return self.resize(y, bits)
        # saturate: compare with the thresholds, so the shift itself never overflows
        lo, hi = fx.int_range(bits)
        hi_t, lo_t = hi >> m, -((-lo) >> m)
        wide = max(w, bits)
        xc = self.clamp(x, lo_t, hi_t)
        y = self.resize(xc, wide)
        y = self.add(arith.ShLIOp(y, self.iconst(m, wide), overflow=NSW)) if m < wide else \
            self.iconst(0, wide)
        y = self.resize(y, bits)
        tlo, thi = fx.int_range(w)
        if hi_t < thi:
            y = self.select(self.cmp(x, self.iconst(hi_t, w), "sgt"), self.iconst(hi, bits), y)
        if lo_t > tlo:
            y = self.select(self.cmp(x, self.iconst(lo_t, w), "slt"), self.iconst(lo, bits), y)
        return y

    def product(self, a: SSAValue, b: SSAValue, d: int) -> SSAValue:
        """The exact product wrapped to d bits (exact, hence nsw, when d is wide enough)."""
        if isinstance(a.type, Float32Type):
            return self.add(arith.MulfOp(a, b))
        exact = d >= width(a) + width(b)
        return self.binop(arith.MuliOp, self.resize(a, d), self.resize(b, d), nsw=exact)

    def wrap_add(self, a: SSAValue, b: SSAValue, d: int, sub: bool = False) -> SSAValue:
        """a + b (or a - b) wrapped to d bits; exact (nsw) when d is wide enough."""
        if isinstance(a.type, Float32Type):
            return self.add(arith.SubfOp(a, b) if sub else arith.AddfOp(a, b))
        exact = d > max(width(a), width(b))
        kind = arith.SubiOp if sub else arith.AddiOp
        return self.binop(kind, self.resize(a, d), self.resize(b, d), nsw=exact)


# --------------------------------------------------------------------------------------
# Lazy element functions
# --------------------------------------------------------------------------------------


class Val:
    """An L2 tensor value as a function from an index (one Lin per dimension) to the
    stored scalar; `cost` says what reading it again costs."""

    shape: tuple[int, ...]
    el: Attribute
    cost: int = COMPUTE

    @property
    def elem(self) -> Attribute:
        return storage(self.el)

    def load(self, g: Gen, idx: list[Lin]) -> SSAValue:
        raise NotImplementedError

    def leaves(self, aligned: bool) -> Iterator[tuple[Buf, bool]]:
        """The buffers read, each with whether it is read only at the output's own index
        (element-wise with an identical shape): what in-place updates must know."""
        return iter(())


@dataclass(eq=False)
class Buf(Val):
    buffer: Buffer
    shape: tuple[int, ...]
    el: Attribute
    offset: Lin = field(default_factory=Lin)
    strides: tuple[int, ...] = ()
    cost: int = FREE

    def __post_init__(self):
        if not self.strides and self.shape:
            self.strides = row_major(self.shape)

    def at(self, idx: Sequence[Lin]) -> Lin:
        acc = self.offset
        for i, s, n in zip(idx, self.strides, self.shape):
            if n != 1:
                acc = acc + Lin.of(i).scale(s)
        return acc

    def load(self, g: Gen, idx: list[Lin]) -> SSAValue:
        return g.load(self.buffer, self.at(idx))

    def leaves(self, aligned: bool) -> Iterator[tuple[Buf, bool]]:
        yield self, aligned

    def same_layout(self, other: Buf) -> bool:
        dims = [(n, s) for n, s in zip(self.shape, self.strides) if n != 1]
        other_dims = [(n, s) for n, s in zip(other.shape, other.strides) if n != 1]
        return (self.buffer is other.buffer and self.offset.same(other.offset)
                and dims == other_dims)

    @property
    def contiguous(self) -> bool:
        dims = [(n, s) for n, s in zip(self.shape, self.strides) if n != 1]
        return all(s == math.prod(n for n, _ in dims[i + 1:]) for i, (_, s) in enumerate(dims))

    @property
    def whole(self) -> bool:
        """The whole buffer, row-major from element 0 (may be updated in place)."""
        return self.offset.same(Lin(0)) and self.contiguous and \
            math.prod(self.shape) == self.buffer.size


@dataclass(eq=False)
class Const(Val):
    value: int | float
    shape: tuple[int, ...]
    el: Attribute
    cost: int = FREE

    def load(self, g: Gen, idx: list[Lin]) -> SSAValue:
        return g.const(self.value, self.elem)


@dataclass(eq=False)
class Mapped(Val):
    """A view of a lazy value: source dimension e reads off[e] + coeff[e] * idx[dim[e]]."""

    src: Val
    shape: tuple[int, ...]
    dims: list[tuple[int | None, int, Lin]]

    @property
    def el(self) -> Attribute:  # type: ignore[override]
        return self.src.el

    @property
    def cost(self) -> int:  # type: ignore[override]
        return self.src.cost

    def load(self, g: Gen, idx: list[Lin]) -> SSAValue:
        return self.src.load(g, [off if d is None else off + idx[d].scale(c)
                                 for d, c, off in self.dims])

    def leaves(self, aligned: bool) -> Iterator[tuple[Buf, bool]]:
        return self.src.leaves(False)


def view(src: Val, shape: tuple[int, ...], dims: list[tuple[int | None, int, Lin]]) -> Val:
    """Compose an index map with a value (buffers stay strided buffers)."""
    if isinstance(src, Const):
        return Const(src.value, shape, src.el)
    if isinstance(src, Buf):
        offset = src.offset
        strides = [0] * len(shape)
        for (d, c, off), s, n in zip(dims, src.strides, src.shape):
            if n == 1:
                continue
            offset = offset + off.scale(s)
            if d is not None:
                strides[d] += c * s
        return Buf(src.buffer, shape, src.el, offset, tuple(strides))
    return Mapped(src, shape, dims)


def broadcast_index(idx: list[Lin], shape: tuple[int, ...], out: tuple[int, ...]) -> list[Lin]:
    """numpy broadcasting: operand dims align to the right; size-1 dims read index 0."""
    lead = len(out) - len(shape)
    return [Lin(0) if n == 1 else idx[lead + e] for e, n in enumerate(shape)]


@dataclass(eq=False)
class Elementwise(Val):
    """fn(g, *operand scalars) applied element by element, with broadcasting."""

    fn: Callable[..., SSAValue]
    operands: list[Val]
    shape: tuple[int, ...]
    el: Attribute
    cost_: int = COMPUTE

    @property
    def cost(self) -> int:  # type: ignore[override]
        return self.cost_

    def load(self, g: Gen, idx: list[Lin]) -> SSAValue:
        return self.fn(g, *[v.load(g, broadcast_index(idx, v.shape, self.shape))
                            for v in self.operands])

    def leaves(self, aligned: bool) -> Iterator[tuple[Buf, bool]]:
        for v in self.operands:
            yield from v.leaves(aligned and v.shape == self.shape)


@dataclass(eq=False)
class Reduction(Val):
    """An element computed by a loop over other values (matmul, conv, maxpool)."""

    fn: Callable[[Gen, list[Lin]], SSAValue]
    operands: list[Val]
    shape: tuple[int, ...]
    el: Attribute

    def load(self, g: Gen, idx: list[Lin]) -> SSAValue:
        return self.fn(g, idx)

    def leaves(self, aligned: bool) -> Iterator[tuple[Buf, bool]]:
        for v in self.operands:
            yield from v.leaves(False)


# --------------------------------------------------------------------------------------
# The lowering
# --------------------------------------------------------------------------------------

ELEMENTWISE = ("num.add", "num.sub", "num.mul", "num.rescale", "num.exp", "num.sigmoid",
               "num.tanh", "minun.relu", "minun.relu6", "minun.clip", "minun.neg",
               "minun.max", "minun.min",
               "num.relu", "num.relu6", "num.clip", "num.neg", "num.max", "num.min")  # wt-convert
VIEWS = ("minun.reshape", "minun.transpose", "minun.splice", "minun.index", "minun.reverse")


def _error(op: Operation, message: str) -> MinunError:
    where = location_of(op)
    return MinunError(f"{where + ': ' if where else ''}error: {op.name}: {message}")


def _main(module: ModuleOp) -> func.FuncOp:
    fns = [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]
    if len(fns) != 1:
        raise MinunError("error: lower-to-loops expects a module with one func.func (L2)")
    return fns[0]


def _same_block(value: SSAValue, user: Operation) -> bool:
    block = value.owner if isinstance(value.owner, Block) else value.owner.parent_block()
    return user.parent_block() is block


class Lowering:
    def __init__(self, fn: func.FuncOp):
        self.fn = fn
        rounding = fn.attributes.get("num.rounding")
        self.rounding = rounding.data if isinstance(rounding, StringAttr) else "trunc"
        self.g = Gen()
        self.vals: dict[SSAValue, Val] = {}
        self.ints: dict[SSAValue, SSAValue] = {}
        self.folded: dict[tuple[SSAValue, str], Val] = {}

    # -- entry ---------------------------------------------------------------------------

    def run(self) -> ModuleOp:
        fn, g = self.fn, self.g
        inputs = [op for op in fn.walk() if isinstance(op, num.InputOp)]
        if len(inputs) != 1:
            raise MinunError(f"error: lower-to-loops: the model needs exactly one num.input, "
                             f"found {len(inputs)}")
        ret = fn.body.block.last_op
        if not isinstance(ret, func.ReturnOp) or len(ret.operands) != 1:
            raise MinunError("error: lower-to-loops: the model must return one value (a label "
                             "from argmax/sgn or a score tensor)")
        result = ret.operands[0]
        self.label_op: Operation | None = None
        if isinstance(result.type, TensorType):
            self.scores = result
        elif isinstance(result.owner, (minun.ArgMaxOp, minun.SgnOp, num.ArgMaxOp,
                                       num.SgnOp)):  # wt-convert: num.argmax, num.sgn
            self.label_op = result.owner
            self.scores = result.owner.input
        else:
            raise MinunError("error: lower-to-loops: an integer result must come from "
                             "num.argmax or num.sgn (its input gives the scores)")
        x_el, s_el = element_of(inputs[0].result), element_of(self.scores)
        for el in (x_el, s_el):
            storage(el)
        n_in, n_out = math.prod(shape_of(inputs[0].result)), math.prod(shape_of(self.scores))
        body = Block(arg_types=[MemRefType(storage(x_el), [n_in]),
                                MemRefType(storage(s_el), [n_out])])
        body.args[0].name_hint, body.args[1].name_hint = "x", "out"
        self.x = Buffer(body.args[0], n_in, storage(x_el))
        self.out = Buffer(body.args[1], n_out, storage(s_el))
        g.names.update({"x", "out"})
        g.block = body
        self.lower_block(fn.body.block)
        label = self.label(result)
        g.add(func.ReturnOp(self.g.add(arith.IndexCastOp(label, i32))))
        unused = {op for op in g.top if not op.results[0].uses}
        dropped = {op.name_.root_reference.data for op in unused
                   if isinstance(op, memref.GetGlobalOp)}
        g.top = [op for op in g.top if op not in unused]
        g.module_ops = [op for op in g.module_ops if not (
            isinstance(op, memref.GlobalOp) and op.sym_name.data in dropped)]
        for op in reversed(g.top):
            if body.first_op is None:
                body.add_op(op)
            else:
                body.insert_op_before(op, body.first_op)
        new = func.FuncOp(ENTRY, ((body.args[0].type, body.args[1].type), (i32,)),
                          Region(body))
        attrs = {"num.rounding": StringAttr(self.rounding)}
        for key, el in (("minun.input_scale", x_el), ("minun.output_scale", s_el)):
            if isinstance(el, FixedType):
                attrs[key] = IntegerAttr(el.frac, 64)
        attrs["minun.input_shape"] = StringAttr("x".join(map(str, shape_of(inputs[0].result))))
        attrs["minun.input_name"] = inputs[0].sym_name
        new.attributes.update(attrs)
        return ModuleOp([*g.module_ops, new])

    def label(self, result: SSAValue) -> SSAValue:
        """The returned label: the argmax/sgn of the program, or the first maximum of a
        returned score tensor."""
        if self.label_op is not None:
            return self.ints[result]
        return self.argmax(Buf(self.out, shape_of(self.scores), element_of(self.scores)))

    # -- blocks ----------------------------------------------------------------------------

    def lower_block(self, block: Block) -> list[Val | SSAValue]:
        for op in block.ops:
            if isinstance(op, (minun.YieldOp, func.ReturnOp)):
                return [self.value(v) for v in op.operands]
            self.lower_op(op)
        return []

    def value(self, v: SSAValue) -> Val | SSAValue:
        return self.vals[v] if isinstance(v.type, TensorType) else self.ints[v]

    def lower_op(self, op: Operation) -> None:
        name = op.name
        handler = getattr(self, "op_" + name.replace(".", "_"), None)
        if handler is not None:
            result = handler(op)
        elif name in ("arith.addi", "arith.subi", "arith.muli"):
            a, b = (self.ints[v] for v in op.operands)
            result = self.g.binop(type(op), a, b, nsw=True)
        else:
            raise _error(op, "not supported by lower-to-loops")
        if not op.results:
            return
        results = result if isinstance(result, list) else [result]
        for old, new in zip(op.results, results, strict=True):
            if isinstance(old.type, TensorType):
                self.vals[old] = self.settle(old, new)
            else:
                if old.name_hint and isinstance(new, SSAValue) and new.name_hint is None:
                    new.name_hint = old.name_hint
                self.ints[old] = new

    # -- materialization -------------------------------------------------------------------

    def consumed_once(self, v: SSAValue) -> bool:
        """Whether `v` is read at most once per element, by one consumer in its block."""
        uses = list(v.uses)
        if len(uses) != 1 or not _same_block(v, uses[0].operation):
            return False
        user, index = uses[0].operation, uses[0].index
        name = user.name
        if isinstance(user, (minun.YieldOp, func.ReturnOp, minun.LoopOp, minun.IfNonNegOp)):
            return True
        if name in ELEMENTWISE:
            return math.prod(shape_of(v)) == math.prod(shape_of(user.results[0]))
        if name in VIEWS:
            return index == 0 and self.consumed_once(user.results[0])
        if isinstance(user, minun.SpliceAssignOp):
            return index == 0
        if isinstance(user, num.MatMulOp):
            m, _ = shape_of(user.lhs)
            _, n = shape_of(user.rhs)
            return n == 1 if index == 0 else m == 1
        if isinstance(user, (minun.MaxPoolOp, num.MaxPoolOp)):  # wt-convert: num.maxpool
            kernel, strides = minun.ints(user.kernel), minun.ints(user.strides)
            return all(s >= k for s, k in zip(strides, kernel))
        return False

    def settle(self, v: SSAValue, val: Val) -> Val:
        """Keep `val` lazy, or write it to a buffer now (see the module docstring)."""
        if v is self.scores:
            if isinstance(val, Buf) and val.buffer is self.out:
                return val
            target = Buf(self.out, val.shape, val.el)
            self.store_into(target, val)
            return target
        if val.cost == FREE or not v.uses:
            return val
        if val.cost == CHEAP or self.consumed_once(v):
            return val
        return self.materialize(val, v)

    def materialize(self, val: Val, owner: SSAValue | None = None, hint: str | None = None
                    ) -> Buf:
        hint = hint or (owner.name_hint if owner is not None else None)
        buf = self.g.alloc(max(math.prod(val.shape), 1), val.elem, hint)
        buf.owner = owner
        target = Buf(buf, val.shape, val.el)
        self.store_into(target, val)
        return target

    def store_into(self, target: Buf, val: Val) -> None:
        """target[i] = val[i] for every index; through a temporary when val reads the
        target's buffer anywhere but at the written element."""
        for leaf, aligned in val.leaves(True):
            if leaf.buffer is target.buffer and not (aligned and leaf.same_layout(target)):
                val = self.materialize(val)
                break
        if isinstance(val, Buf) and val.same_layout(target):
            return
        g = self.g
        g.nest(val.shape, lambda idx: g.store(val.load(g, idx), target.buffer, target.at(idx)))

    def buffer_of(self, v: SSAValue) -> Buf:
        """The value as a buffer (materialized if it is lazy)."""
        val = self.vals[v]
        return val if isinstance(val, Buf) else self.materialize(val)

    def owned(self, v: SSAValue) -> Buf | None:
        """The value's buffer if the value may be updated in place: it owns the whole
        buffer and this is its only use, in its own block."""
        val = self.vals[v]
        uses = list(v.uses)
        if (isinstance(val, Buf) and val.whole and val.buffer.owner is v and len(uses) == 1
                and _same_block(v, uses[0].operation)):
            return val
        return None

    # -- leaves ----------------------------------------------------------------------------

    def op_num_input(self, op: num.InputOp) -> Val:
        return Buf(self.x, shape_of(op.result), element_of(op.result))

    def op_num_param(self, op: num.ParamOp) -> Val:
        values = op.array()
        el = element_of(op.result)
        shape = shape_of(op.result)
        if op.sparse is not None and all(isinstance(u.operation, num.SparseMatMulOp)
                                         and u.index == 0 for u in op.result.uses):
            return Const(0, shape, el)  # only the compressed copy is stored (sparse_matmul)
        flat = values.reshape(-1)
        if flat.size and np.all(flat == flat[0]):
            return Const(flat[0].item(), shape, el)
        buf = self.g.global_("p_" + op.sym_name.data, values, storage(el))
        return Buf(buf, shape, el)

    def op_minun_init(self, op: minun.InitOp) -> Val:
        el = element_of(op.result)
        fill = float(op.fill.value.data)
        if isinstance(el, FixedType):
            q = int(fx.quantize(np.array(fill), el.width, el.frac, self.rounding))
            return Const(q, shape_of(op.result), el)
        return Const(float(np.float32(fill)), shape_of(op.result), el)

    def op_arith_constant(self, op: arith.ConstantOp) -> SSAValue:
        return self.g.index(op.value.value.data)

    # -- element-wise ----------------------------------------------------------------------

    def elementwise(self, op: Operation, fn, *operands: SSAValue) -> Val:
        vals = [self.vals[v] for v in operands]
        return Elementwise(fn, vals, shape_of(op.results[0]), element_of(op.results[0]))

    def op_num_rescale(self, op: num.RescaleOp) -> Val:
        src = self.vals[op.input]
        out = fx_type(op.result)
        shift, rounding, overflow = op.shift, op.rounding.data, op.overflow.data
        if isinstance(src, Const):
            q = fx.narrow(fx.shift_right(np.array(int(src.value)), shift, rounding),
                          out.width, overflow)
            return Const(int(q), src.shape, out)
        owner = op.input.owner
        if isinstance(owner, num.ParamOp) and isinstance(src, Buf):
            key = (op.input, f"{out.width},{out.frac},{rounding},{overflow}")
            if key not in self.folded:
                q = fx.narrow(fx.shift_right(owner.array().astype(np.int64), shift, rounding),
                              out.width, overflow)
                name = f"p_{owner.sym_name.data}_q{out.width}s{out.frac}".replace("-", "m")
                self.folded[key] = Buf(self.g.global_(name, q, storage(out)), src.shape, out)
            return self.folded[key]
        narrow16 = self.narrow_sum(op, src, out)
        if narrow16 is not None:
            return narrow16

        def fn(g: Gen, x: SSAValue) -> SSAValue:
            return g.rescale(x, shift, rounding, overflow, out.width)

        return Elementwise(fn, [src], src.shape, out, CHEAP if src.cost == FREE else COMPUTE)

    def narrow_sum(self, op: num.RescaleOp, src: Val, out: FixedType) -> Val | None:
        """rescale(a + b) with no shift and wrap: the low bits of the exact sum are the
        wrapped sum in the narrow type (16-bit adds on AVR instead of 32-bit ones)."""
        owner = op.input.owner
        if (op.shift != 0 or op.overflow.data != "wrap" or not isinstance(src, Elementwise)
                or not isinstance(owner, (num.AddOp, num.SubOp))):
            return None
        a, b = (fx_type(v) for v in (owner.lhs, owner.rhs))
        if max(a.width, b.width) > out.width:
            return None
        sub = isinstance(owner, num.SubOp)

        def fn(g: Gen, x: SSAValue, y: SSAValue) -> SSAValue:
            return g.wrap_add(x, y, out.width, sub)

        return Elementwise(fn, src.operands, src.shape, out)

    def op_num_add(self, op: Operation, sub: bool = False) -> Val:
        res = element_of(op.results[0])
        d = res.width if isinstance(res, FixedType) else 32
        return self.elementwise(op, lambda g, a, b: g.wrap_add(a, b, d, sub), op.lhs, op.rhs)

    def op_num_sub(self, op: Operation) -> Val:
        return self.op_num_add(op, sub=True)

    def op_num_mul(self, op: num.MulOp) -> Val:
        res = element_of(op.result)
        d = res.width if isinstance(res, FixedType) else 32
        return self.elementwise(op, lambda g, a, b: g.product(a, b, d), op.lhs, op.rhs)

    def op_minun_max(self, op: Operation) -> Val:
        return self.elementwise(op, lambda g, a, b: g.max(a, b), op.lhs, op.rhs)

    def op_minun_min(self, op: Operation) -> Val:
        return self.elementwise(op, lambda g, a, b: g.min(a, b), op.lhs, op.rhs)

    def op_minun_relu(self, op: Operation) -> Val:
        el = element_of(op.input)
        return self.elementwise(op, lambda g, x: g.max(x, g.const(0, storage(el))), op.input)

    def _clip(self, op: Operation, lo: float, hi: float, six: bool = False) -> Val:
        el = element_of(op.input)
        if is_float(el):
            def ffn(g: Gen, x: SSAValue) -> SSAValue:
                return g.min(g.max(x, g.const(lo, f32)), g.const(hi, f32))

            return self.elementwise(op, ffn, op.input)
        tlo, thi = fx.int_range(el.width)
        if six:  # as the evaluator: 6 at the operand's scale
            qlo, qhi = 0, 6 << el.frac if el.frac >= 0 else 6 >> -el.frac
        else:
            qlo = int(fx.quantize(np.array(lo), 64, el.frac, self.rounding))
            qhi = int(fx.quantize(np.array(hi), 64, el.frac, self.rounding))
        qlo, qhi = max(qlo, tlo), min(qhi, thi)

        def fn(g: Gen, x: SSAValue) -> SSAValue:  # np.clip: min(max(x, lo), hi)
            x = g.max(x, g.iconst(qlo, el.width)) if qlo > tlo else x
            return g.min(x, g.iconst(qhi, el.width)) if qhi < thi else x

        return self.elementwise(op, fn, op.input)

    def op_minun_relu6(self, op: Operation) -> Val:
        return self._clip(op, 0.0, 6.0, six=True)

    def op_minun_clip(self, op: minun.ClipOp) -> Val:
        return self._clip(op, float(op.lo.value.data), float(op.hi.value.data))

    def op_minun_neg(self, op: Operation) -> Val:
        el = element_of(op.input)
        if is_float(el):
            return self.elementwise(op, lambda g, x: g.add(arith.NegfOp(x)), op.input)
        return self.elementwise(
            op, lambda g, x: g.binop(arith.SubiOp, g.iconst(0, el.width), x), op.input)

    def op_num_exp(self, op: num.ExpOp) -> Val:
        el = element_of(op.input)
        if is_float(el):
            return self.elementwise(op, lambda g, x: g.helper("expf", [x], f32), op.input)
        if op.method.data == "seedot":
            return self.seedot_exp(op)
        name = f"minun_exp{el.width}" + (f"_{self.rounding}" if el.width == 16 else "")
        return self.elementwise(op, lambda g, x: g.helper(name, [x], x.type), op.input)

    def _table_fn(self, op: Operation, kind: str) -> Val:
        el = element_of(op.input)
        if is_float(el):
            name = {"sigmoid": "minun_sigmoidf", "tanh": "tanhf"}[kind]
            return self.elementwise(op, lambda g, x: g.helper(name, [x], f32), op.input)
        name = f"minun_{kind}{el.width}" + (f"_{self.rounding}" if el.width == 16 else "")
        return self.elementwise(op, lambda g, x: g.helper(name, [x], x.type), op.input)

    def op_num_sigmoid(self, op: Operation) -> Val:
        return self._table_fn(op, "sigmoid")

    def op_num_tanh(self, op: Operation) -> Val:
        return self._table_fn(op, "tanh")

    def seedot_exp(self, op: num.ExpOp) -> Val:
        """SeeDot's two-table exp, inlined; the tables are stored pre-shifted by S_mul/2."""
        se = op.seedot()
        tf, tg, _, _ = se.tables()
        _, s_mul = se.out_scale()
        bits = se.bits
        ta = fx.shift_right(tf, s_mul // 2, self.rounding)
        tb = fx.shift_right(tg, s_mul // 2, self.rounding)
        g = self.g
        buf_a = g.global_("exp_tf", ta, IntegerType(bits))
        buf_b = g.global_("exp_tg", tb, IntegerType(bits))
        k, t = se.k, se.t

        def fn(g: Gen, x: SSAValue) -> SSAValue:
            wide = max(32, width(x))
            xi = g.resize(x, wide)
            d = g.binop(arith.SubiOp, g.clamp(xi, se.lo, se.hi), g.iconst(se.lo, wide),
                        nsw=True)
            mask = g.iconst((1 << t) - 1, wide)
            i = g.binop(arith.AndIOp, g.shrsi(d, k - t), mask)
            if k >= 2 * t:
                j = g.shrsi(d, k - 2 * t)
            else:
                j = g.add(arith.ShLIOp(d, g.iconst(2 * t - k, wide), overflow=NSW))
            j = g.binop(arith.AndIOp, j, mask)
            a = g.load(buf_a, Lin.of(g.add(arith.IndexCastOp(i, INDEX))))
            b = g.load(buf_b, Lin.of(g.add(arith.IndexCastOp(j, INDEX))))
            return g.product(a, b, bits)

        return self.elementwise(op, fn, op.input)

    # -- views ---------------------------------------------------------------------------

    def start(self, v: SSAValue) -> Lin:
        return Lin.of(self.ints[v])

    def op_minun_transpose(self, op: minun.TransposeOp) -> Val:
        perm = minun.ints(op.perm)
        return self.transposed(self.vals[op.input], perm)

    def transposed(self, src: Val, perm: Sequence[int]) -> Val:
        shape = tuple(src.shape[p] for p in perm)
        dims = [(perm.index(e), 1, Lin(0)) for e in range(len(src.shape))]
        return view(src, shape, dims)

    def op_minun_splice(self, op: minun.SpliceOp) -> Val:
        src = self.vals[op.input]
        dims = [(e, 1, self.start(s)) for e, s in enumerate(op.starts)]
        return view(src, minun.ints(op.sizes), dims)

    def op_minun_index(self, op: minun.IndexOp) -> Val:
        src = self.vals[op.input]
        dims = [(None, 1, self.start(op.index))] + [(e - 1, 1, Lin(0))
                                                    for e in range(1, len(src.shape))]
        return view(src, shape_of(op.result), dims)

    def op_minun_reverse(self, op: minun.ReverseOp) -> Val:
        src = self.vals[op.input]
        axis = op.axis.value.data
        dims = [(e, -1, Lin(n - 1)) if e == axis else (e, 1, Lin(0))
                for e, n in enumerate(src.shape)]
        return view(src, src.shape, dims)

    def op_minun_reshape(self, op: minun.ReshapeOp) -> Val:
        src = self.vals[op.input]
        order = minun.ints(op.order)
        if list(order) != list(range(len(order))):
            src = self.transposed(src, order)
        shape = shape_of(op.result)
        # only unit dimensions inserted or removed: an index map on any value
        if [n for n in src.shape if n != 1] == [n for n in shape if n != 1]:
            dims, ds = [], [d for d, n in enumerate(shape) if n != 1]
            k = 0
            for n in src.shape:
                if n == 1:
                    dims.append((None, 1, Lin(0)))
                else:
                    dims.append((ds[k], 1, Lin(0)))
                    k += 1
            return view(src, shape, dims)
        if isinstance(src, Const):
            return Const(src.value, shape, src.el)
        if not (isinstance(src, Buf) and src.contiguous):
            src = self.materialize(src)
        return Buf(src.buffer, shape, src.el, src.offset)

    def op_minun_concat(self, op: minun.ConcatOp) -> Val:
        axis = op.axis.value.data
        out = self.g.alloc(math.prod(shape_of(op.result)), storage(element_of(op.result)),
                           op.result.name_hint)
        out.owner = op.result
        whole = Buf(out, shape_of(op.result), element_of(op.result))
        pos = 0
        for v in op.inputs:
            val = self.vals[v]
            dims = [(e, 1, Lin(pos if e == axis else 0)) for e in range(len(val.shape))]
            part = view(whole, val.shape, dims)
            self.store_into(part, val)
            pos += val.shape[axis]
        return whole

    def op_minun_splice_assign(self, op: minun.SpliceAssignOp) -> Val:
        dest = self.owned(op.dest)
        if dest is None:
            dest = self.materialize(self.vals[op.dest], op.result,
                                    hint=op.result.name_hint or op.dest.name_hint)
        dest.buffer.owner = op.result
        value = self.vals[op.value]
        dims = [(e, 1, self.start(s)) for e, s in enumerate(op.starts)]
        self.store_into(view(dest, value.shape, dims), value)
        return dest

    # -- reductions ------------------------------------------------------------------------

    def op_num_matmul(self, op: num.MatMulOp) -> Val:
        a, b = self.operand(op.lhs), self.operand(op.rhs)
        res = element_of(op.result)
        fixed_ = isinstance(res, FixedType)
        d = res.width if fixed_ else 32
        halvings = op.halvings.value.data if fixed_ else 0
        k = shape_of(op.lhs)[1]

        def fn(g: Gen, idx: list[Lin]) -> SSAValue:
            i, j = idx

            def term(kk: list[Lin]) -> SSAValue:
                return g.product(a.load(g, [i, kk[0]]), b.load(g, [kk[0], j]), d)

            return self.sum_terms((k,), halvings, op.rounding.data, storage(res), d, term)

        return Reduction(fn, [a, b], shape_of(op.result), res)

    def operand(self, v: SSAValue) -> Val:
        """An operand of a reduction: lazy when rereading it is cheap or it is read once."""
        val = self.vals[v]
        return val if val.cost <= CHEAP or self.consumed_once(v) else self.buffer_of(v)

    def loop(self, n: int, inits: Sequence[SSAValue], body) -> list[SSAValue]:
        """scf.for over 0..n (no loop for n == 1); body(Lin index, *carried) -> carried."""
        if n == 1:
            return list(body(Lin(0), *inits) or [])
        return self.g.for_(0, n, list(inits), lambda iv, *acc: body(Lin.of(iv), *acc))

    def sum_terms(self, dims: tuple[int, ...], halvings: int, rounding: str, elem: Attribute,
                  d: int, term: Callable[[list[Lin]], SSAValue]) -> SSAValue:
        """The sum of the terms indexed row-major by `dims`: a wrapping (or float)
        accumulation, or SeeDot's TreeSum with `halvings` halving levels over a temporary
        array of the terms."""
        g = self.g
        k = math.prod(dims)
        if halvings <= 0 or k == 1:
            def level(e: int, idx: list[Lin], acc: SSAValue) -> list[SSAValue]:
                if e == len(dims):
                    return [g.wrap_add(acc, term(idx), d)]
                return self.loop(dims[e], [acc], lambda i, a: level(e + 1, idx + [i], a))

            if k == 1:
                return term([Lin(0)] * len(dims))
            return level(0, [], g.const(0, elem))[0]
        tmp = g.alloc(k, elem, "treesum")
        strides = row_major(dims)

        def fill(e: int, idx: list[Lin]) -> None:
            if e == len(dims):
                at = Lin(0)
                for i, s in zip(idx, strides):
                    at = at + i.scale(s)
                g.store(term(idx), tmp, at)
                return
            self.loop(dims[e], [], lambda i: fill(e + 1, idx + [i]))

        fill(0, [])
        n, lvl = k, 0
        while n > 1:
            half, s = n // 2, 1 if lvl < halvings else 0

            def pair(q: Lin, s: int = s) -> list:
                x = g.load(tmp, q.scale(2))
                y = g.load(tmp, q.scale(2) + 1)
                if s:
                    x, y = g.shr_round(x, 1, rounding), g.shr_round(y, 1, rounding)
                g.store(g.wrap_add(x, y, d), tmp, q)
                return []

            self.loop(half, [], pair)
            if n % 2:
                last = g.load(tmp, Lin(n - 1))
                g.store(g.shr_round(last, 1, rounding) if s else last, tmp, Lin(half))
            n, lvl = half + n % 2, lvl + 1
        return g.load(tmp, Lin(0))

    def op_num_conv2d(self, op: num.Conv2DOp) -> Val:
        x, f = self.operand(op.input), self.operand(op.filter)
        res = element_of(op.result)
        fixed_ = isinstance(res, FixedType)
        d = res.width if fixed_ else 32
        halvings = op.halvings.value.data if fixed_ else 0
        _, h, w, _ = shape_of(op.input)
        groups, kh, kw, cg, cout = shape_of(op.filter)
        sh, sw = minun.ints(op.strides)
        pt, pb, pl, pr = minun.ints(op.pads)
        dh, dw = minun.ints(op.dilations)
        zero = self.g.const(0, storage(res))

        def fn(g: Gen, idx: list[Lin]) -> SSAValue:
            n, ho, wo, oc = idx
            if groups == 1:
                grp, co = Lin(0), oc
            elif cout == 1:
                grp, co = oc, Lin(0)
            else:
                ocv = g.lin(oc)
                grp = Lin.of(g.add(arith.DivSIOp(ocv, g.index(cout))))
                co = Lin.of(g.add(arith.RemSIOp(ocv, g.index(cout))))

            def term(t: list[Lin]) -> SSAValue:
                i, j, c = t
                hi = ho.scale(sh) + i.scale(dh) + (-pt)
                wi = wo.scale(sw) + j.scale(dw) + (-pl)
                checks = ([(hi, h)] if pt or pb else []) + ([(wi, w)] if pl or pr else [])

                def inside() -> list[SSAValue]:
                    xv = x.load(g, [n, hi, wi, grp.scale(cg) + c])
                    fv = f.load(g, [grp, i, j, c, co])
                    return [g.product(xv, fv, d)]

                return self.guarded(checks, inside, zero)

            return self.sum_terms((kh, kw, cg), halvings, op.rounding.data, storage(res), d,
                                  term)

        return Reduction(fn, [x, f], shape_of(op.result), res)

    def guarded(self, checks: list[tuple[Lin, int]], inside: Callable[[], list[SSAValue]],
                outside: SSAValue) -> SSAValue:
        """inside() when every index of `checks` is within [0, size), else `outside`."""
        g = self.g
        if not checks:
            return inside()[0]
        cond = None
        for lin, size in checks:
            v = g.lin(lin)
            ok = g.binop(arith.AndIOp, g.cmp(v, g.index(0), "sge"),
                         g.cmp(v, g.index(size), "slt"))
            cond = ok if cond is None else g.binop(arith.AndIOp, cond, ok)
        return g.if_(cond, [outside.type], inside, lambda: [outside])[0]

    def op_minun_maxpool(self, op: minun.MaxPoolOp) -> Val:
        x = self.vals[op.input]
        if not self.consumed_once(op.input):
            x = self.operand(op.input)
        el = element_of(op.input)
        _, h, w, _ = shape_of(op.input)
        kh, kw = minun.ints(op.kernel)
        sh, sw = minun.ints(op.strides)
        pt, pb, pl, pr = minun.ints(op.pads)
        lowest = -math.inf if is_float(el) else fx.int_range(el.width)[0]

        def fn(g: Gen, idx: list[Lin]) -> SSAValue:
            n, ho, wo, c = idx

            def over_i(i: Lin, m: SSAValue):
                def over_j(j: Lin, m2: SSAValue):
                    hi, wi = ho.scale(sh) + i + (-pt), wo.scale(sw) + j + (-pl)
                    checks = ([(hi, h)] if pt or pb else []) + ([(wi, w)] if pl or pr else [])
                    return [self.guarded(checks, lambda: [g.max(m2, x.load(g, [n, hi, wi, c]))],
                                         m2)]

                return self.loop(kw, [m], over_j)

            return self.loop(kh, [g.const(lowest, storage(el))], over_i)[0]

        return Reduction(fn, [x], shape_of(op.result), el)

    # -- ops written straight to a buffer ------------------------------------------------------

    def op_num_sparse_matmul(self, op: num.SparseMatMulOp) -> Val:
        """Column by column over the stored entries (the compressed-column arrays hold the
        same entries in the same order as SeeDot's 0-terminated format)."""
        g = self.g
        a = self.const_array(op.lhs)
        res = element_of(op.result)
        fixed_ = isinstance(res, FixedType)
        d = res.width if fixed_ else 32
        shift = op.shift.value.data if fixed_ else 0
        m, k = a.shape
        ncols = shape_of(op.rhs)[1]
        xval = self.operand(op.rhs)
        cols = [np.nonzero(a[:, c])[0] for c in range(k)]
        vals = np.concatenate([a[r, c] for c, r in enumerate(cols)]) if k else np.zeros(0)
        rows = np.concatenate(cols) if k else np.zeros(0, dtype=np.int64)
        colptr = np.concatenate([[0], np.cumsum([len(r) for r in cols])])
        owner = op.lhs.owner
        while isinstance(owner, num.RescaleOp):
            owner = owner.input.owner
        name = owner.sym_name.data
        vbuf = g.global_(f"p_{name}_val", vals, storage(element_of(op.lhs)))
        rbuf = g.global_(f"p_{name}_row", rows, IntegerType(_fit_bits(m)))
        pbuf = g.global_(f"p_{name}_col", colptr, IntegerType(_fit_bits(len(rows))))
        out = g.alloc(m * ncols, storage(res), op.result.name_hint)
        out.owner = op.result
        whole = Buf(out, (m, ncols), res)
        self.store_into(whole, Const(0 if fixed_ else 0.0, (m, ncols), res))

        def to_index(v: SSAValue) -> SSAValue:
            return g.add(arith.IndexCastOp(g.resize(v, 32), INDEX))

        def column(kk: SSAValue) -> None:
            lo = to_index(g.load(pbuf, Lin.of(kk)))
            hi = to_index(g.load(pbuf, Lin.of(kk) + 1))

            def entry(p: SSAValue) -> None:
                row = Lin.of(to_index(g.load(rbuf, Lin.of(p))))
                v = g.load(vbuf, Lin.of(p))

                def col(c: Lin) -> list:
                    term = g.product(v, xval.load(g, [Lin.of(kk), c]), d)
                    if shift > 0:
                        term = g.shr_round(term, shift, op.rounding.data)
                    at = whole.at([row, c])
                    g.store(g.wrap_add(g.load(out, at), term, d), out, at)
                    return []

                self.loop(ncols, [], col)

            g.for_(lo, hi, [], entry)

        g.for_(0, k, [], column)
        return whole

    def const_array(self, v: SSAValue) -> np.ndarray:
        """The stored integers of a parameter, or of rescales of one (quantize may pre-shift
        the sparse operand), computed as the evaluator does."""
        owner = v.owner
        if isinstance(owner, num.ParamOp):
            arr = owner.array()
            return arr if arr.dtype.kind == "f" else arr.astype(np.int64)
        if isinstance(owner, num.RescaleOp):
            out = fx_type(owner.result)
            x = self.const_array(owner.input)
            return fx.narrow(fx.shift_right(x, owner.shift, owner.rounding.data), out.width,
                             owner.overflow.data)
        raise _error(owner, "the sparse operand must be a parameter")

    def op_num_normalise_l2(self, op: num.NormaliseL2Op) -> Val:
        g = self.g
        x = self.buffer_of(op.input)
        el, res = element_of(op.input), element_of(op.result)
        shape = shape_of(op.input)
        c = shape[-1]
        out = g.alloc(math.prod(shape), storage(res), op.result.name_hint)
        out.owner = op.result
        whole = Buf(out, shape, res)

        def position(idx: list[Lin]) -> None:
            def at(ch: Lin) -> list[Lin]:
                return idx[:-1] + [ch]

            if is_float(el):
                def sq(ch: SSAValue, acc: SSAValue) -> list[SSAValue]:
                    v = x.load(g, at(Lin.of(ch)))
                    return [g.add(arith.AddfOp(acc, g.add(arith.MulfOp(v, v))))]

                total = g.for_(0, c, [g.const(0.0, f32)], sq)[0]
                norm = g.helper("sqrtf", [total], f32)
                pos = g.cmp(norm, g.const(0.0, f32), "sgt")

                def write(ch: SSAValue) -> None:
                    v = x.load(g, at(Lin.of(ch)))
                    q = g.select(pos, g.add(arith.DivfOp(v, norm)), g.const(0.0, f32))
                    g.store(q, out, whole.at(at(Lin.of(ch))))

                g.for_(0, c, [], write)
                return
            wide = 64 if 2 * el.width + max(c - 1, 0).bit_length() > 31 else 32

            def sq(ch: SSAValue, acc: SSAValue) -> list[SSAValue]:
                v = g.resize(x.load(g, at(Lin.of(ch))), wide)
                return [g.binop(arith.AddiOp, acc, g.binop(arith.MuliOp, v, v, nsw=True),
                                nsw=True)]

            total = g.for_(0, c, [g.iconst(0, wide)], sq)[0]
            norm = g.helper(f"minun_isqrt{wide}", [total], IntegerType(wide))
            s_out = res.frac
            top = 1 << (el.width - 1)
            norm_bits = math.isqrt(c * top * top).bit_length() + 1
            qw = 32 if max(norm_bits, el.width + s_out) <= 31 else 64
            nz = g.cmp(norm, g.iconst(0, wide), "sgt")
            safe = g.resize(g.select(nz, norm, g.iconst(1, wide)), qw)

            def write(ch: SSAValue) -> None:
                v = g.resize(x.load(g, at(Lin.of(ch))), qw)
                shifted = g.add(arith.MuliOp(v, g.iconst(1 << s_out, qw), overflow=NSW))
                q = g.add(arith.DivSIOp(shifted, safe))
                q = g.select(nz, q, g.iconst(0, qw))
                g.store(g.narrow(q, res.width, "wrap"), out, whole.at(at(Lin.of(ch))))

            g.for_(0, c, [], write)

        g.nest(shape[:-1], lambda idx: position(idx + [Lin(0)]))
        return whole

    # -- labels ----------------------------------------------------------------------------

    def argmax(self, src: Val) -> SSAValue:
        """Flat index of the first maximum."""
        g = self.g
        if not (isinstance(src, Buf) and src.contiguous):
            src = self.materialize(src)
        n = math.prod(src.shape)
        flat = Buf(src.buffer, (n,), src.el, src.offset, (1,))
        first = flat.load(g, [Lin(0)])
        if n == 1:
            return g.index(0)

        def body(i: SSAValue, best: SSAValue, best_v: SSAValue) -> list[SSAValue]:
            v = flat.load(g, [Lin.of(i)])
            gt = g.cmp(v, best_v, "sgt")
            return [g.select(gt, i, best), g.select(gt, v, best_v)]

        return g.for_(1, n, [g.index(0), first], body)[0]

    def op_minun_argmax(self, op: minun.ArgMaxOp) -> SSAValue:
        return self.argmax(self.vals[op.input])

    def op_minun_sgn(self, op: minun.SgnOp) -> SSAValue:
        g = self.g
        src = self.vals[op.input]
        v = src.load(g, [Lin(0)] * len(src.shape))
        pos = g.cmp(v, g.const(0, v.type), "sgt")
        return g.select(pos, g.index(1), g.index(0))

    # -- regions -------------------------------------------------------------------------

    def op_minun_loop(self, op: minun.LoopOp) -> list:
        g = self.g
        body = op.body.block
        carried: list[Buf | None] = []
        inits: list[SSAValue] = []
        for init, res in zip(op.inits, op.results):
            if not isinstance(init.type, TensorType):
                carried.append(None)
                inits.append(self.ints[init])
                continue
            buf = self.owned(init)
            if buf is None:
                buf = self.materialize(self.vals[init], hint=res.name_hint or init.name_hint)
            carried.append(buf)

        def run(iv: SSAValue, *scalars: SSAValue) -> list[SSAValue]:
            it = iter(scalars)
            self.ints[body.args[0]] = iv
            for arg, buf in zip(body.args[1:], carried):
                if buf is None:
                    self.ints[arg] = next(it)
                else:
                    buf.buffer.owner = arg
                    self.vals[arg] = buf
            yields = self.lower_block(body)
            out = []
            for val, buf in zip(yields, carried):
                if buf is None:
                    out.append(val)
                else:
                    self.store_into(buf, val)
            return out

        results = iter(g.for_(op.lower.value.data, op.upper.value.data, inits, run))
        values = []
        for res, buf in zip(op.results, carried):
            if buf is None:
                values.append(next(results))
            else:
                buf.buffer.owner = res
                values.append(buf)
        return values

    def op_minun_if_nonneg(self, op: minun.IfNonNegOp) -> Val | SSAValue:
        g = self.g
        if isinstance(op.cond.type, TensorType):
            c = self.vals[op.cond]
            v = c.load(g, [Lin(0)] * len(c.shape))
            cond = g.cmp(v, g.const(0, v.type), "sge")
        else:
            cond = g.cmp(self.ints[op.cond], g.index(0), "sge")
        if not isinstance(op.result.type, TensorType):
            return g.if_(cond, [INDEX], lambda: self.lower_block(op.then_region.block),
                         lambda: self.lower_block(op.else_region.block))[0]
        el = element_of(op.result)
        out = g.alloc(math.prod(shape_of(op.result)), storage(el), op.result.name_hint)
        out.owner = op.result
        target = Buf(out, shape_of(op.result), el)

        def branch(region: Region) -> Callable[[], None]:
            def run() -> None:
                (val,) = self.lower_block(region.block)
                self.store_into(target, val)

            return run

        g.if_(cond, [], branch(op.then_region), branch(op.else_region))
        return target

    # L2 ops (wt-convert): the num ops quantize now emits for the L1 comparisons,
    # selections and negation, lowered by the handlers of their minun counterparts.
    op_num_relu = op_minun_relu
    op_num_relu6 = op_minun_relu6
    op_num_clip = op_minun_clip
    op_num_neg = op_minun_neg
    op_num_max = op_minun_max
    op_num_min = op_minun_min
    op_num_maxpool = op_minun_maxpool
    op_num_argmax = op_minun_argmax
    op_num_sgn = op_minun_sgn


def fx_type(v: SSAValue) -> FixedType:
    el = element_of(v)
    assert isinstance(el, FixedType), el
    return el


def _fit_bits(max_value: int) -> int:
    """The narrowest of i8/i16/i32 holding 0..max_value as a signed value."""
    return next(b for b in (8, 16, 32) if max_value < (1 << (b - 1)))


def lower_to_loops(module: ModuleOp) -> ModuleOp:
    """The pass as a function: returns the L3 module (the input is left unchanged)."""
    return Lowering(_main(module)).run()


@dataclass(frozen=True)
class LowerToLoops(ModulePass):
    """L2 -> L3: buffers (memref), loops (scf) and explicit integer arithmetic (arith)."""

    name = "lower-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        replace_module_body(op, lower_to_loops(op))


