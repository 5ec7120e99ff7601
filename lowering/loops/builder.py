"""The IR builder of lower-to-loops: `Gen` appends L3 ops (memref/scf/arith/func) to the
current block and keeps allocations, constants and globals at the top of the function;
`Lin` is an affine index folded in Python so each access emits its ops once.

Separate from the value model and the op handlers because it knows nothing of L2: it
only builds explicit-width integer (or f32) arithmetic, loops and memory accesses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    f32,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from minun_mlir.diagnostics import error
from minun_mlir.formats.fixed import arith as fx

INDEX = IndexType()
NSW = arith.IntegerOverflowAttr([arith.IntegerOverflowFlag.NSW])
NO_OVERFLOW = arith.IntegerOverflowAttr("none")  # what arith's builders default to
# binary ops whose builder sets the `overflowFlags` property (the others set none)
WITH_OVERFLOW = (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.ShLIOp)
PLAIN_BINARY = (arith.AndIOp, arith.OrIOp, arith.XOrIOp, arith.ShRSIOp, arith.ShRUIOp,
                arith.MaxSIOp, arith.MinSIOp, arith.DivSIOp, arith.RemSIOp)


# Why the builder does not call the ops' own constructors on its hot paths: xDSL's
# generic IRDL builder matches every argument against the op definition on each call
# (most of lower-to-loops' time, which the searches pay hundreds of times). `make` hands
# Operation.__init__ the flat lists that builder would give it, so the op is the same;
# attributes and types are immutable, so the ones built again and again are cached.


def make(cls: type[Operation], operands: Sequence[SSAValue] = (),
         result_types: Sequence[Attribute] = (), properties: dict | None = None,
         regions: Sequence[Region] = ()) -> Operation:
    """cls(...) as its IRDL builder makes it, without the builder's argument matching."""
    return cls.create(operands=operands, result_types=result_types,
                      properties=properties or {}, regions=regions, location=UNKNOWN_LOC)


def binary(kind: type, a: SSAValue, b: SSAValue, overflow: Attribute | None = None
           ) -> Operation:
    """kind(a, b) or kind(a, b, overflow=...) for the integer ops above."""
    if kind in WITH_OVERFLOW:
        return make(kind, (a, b), (a.type,), {"overflowFlags": overflow or NO_OVERFLOW})
    if kind in PLAIN_BINARY and overflow is None:
        return make(kind, (a, b), (a.type,))
    return kind(a, b, overflow=overflow) if overflow is not None else kind(a, b)


@cache
def int_type(w: int) -> IntegerType:
    return IntegerType(w)


@cache
def _int_attr(v: int, ty: Attribute) -> IntegerAttr:
    return IntegerAttr(v, ty)


@cache
def memref_type(elem: Attribute, size: int) -> MemRefType:
    return MemRefType(elem, [size])


# what AllocOp's builder adds for its two empty operand groups
_ALLOC_SEGMENTS = DenseArrayBase.from_list(i32, [0, 0])


@cache
def _symbol(name: str) -> SymbolRefAttr:
    return SymbolRefAttr(name)


@cache
def _tensor_type(elem: Attribute, size: int) -> TensorType:
    return TensorType(elem, [size])


PRIVATE = StringAttr("private")  # what memref.GlobalOp.get defaults sym_visibility to


def _const_attr(v: int | float, ty: Attribute) -> Attribute:
    # floats are not cached: 0.0 == -0.0 as a key
    return FloatAttr(v, f32) if isinstance(ty, Float32Type) else _int_attr(v, ty)


def row_major(shape: Sequence[int]) -> tuple[int, ...]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


def width(x: SSAValue) -> int:
    return x.type.width.data


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
        # terms never hold a zero coefficient nor a value twice (of, scale and this keep
        # it so), hence the shortcuts when one side is a constant
        if isinstance(other, int):
            return Lin(self.const + other, self.terms) if other else self
        other = Lin.of(other)
        if not other.terms:
            return Lin(self.const + other.const, self.terms)
        if not self.terms:
            return Lin(self.const + other.const, other.terms)
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


@dataclass(frozen=True, eq=False)
class _Global:
    """A constant global not built yet: built when something reads the module's ops, and
    never when its reads were all folded away (a parameter stored rescaled or re-ordered
    instead), which run() drops by name."""

    name: str
    type: MemRefType
    data: np.ndarray  # the elements, little-endian, never empty

    def build(self) -> memref.GlobalOp:
        # memref.GlobalOp.get(StringAttr(name), type, dense, constant=UnitAttr())
        dense = DenseIntOrFPElementsAttr(_tensor_type(self.type.element_type, self.data.size),
                                         BytesAttr(self.data.tobytes()))
        return make(memref.GlobalOp, properties={
            "sym_name": StringAttr(self.name), "type": self.type, "initial_value": dense,
            "sym_visibility": PRIVATE, "constant": UnitAttr()})


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
        self._module_ops: list[Operation | _Global] = []  # see module_ops
        self.names: set[str] = set()
        self.helpers: dict[str, func.FuncOp] = {}
        self.shared: dict[str, Buffer] = {}  # global_once's tables, by name
        self.quire_depth = 0  # posit dot products being built, nested (posit/loops.py)

    # -- plumbing ----------------------------------------------------------------------

    @property
    def module_ops(self) -> list[Operation]:
        """The globals and helper declarations, in the order they were made (every
        global built: the list returned is the builder's own, to update in place)."""
        ops = self._module_ops
        for k, op in enumerate(ops):
            if isinstance(op, _Global):
                ops[k] = op.build()
        return ops  # type: ignore[return-value]

    def drop_globals(self, names: set[str]) -> None:
        """Forget the globals called `names` (built or not)."""
        self._module_ops = [op for op in self._module_ops if not (
            (isinstance(op, memref.GlobalOp) and op.sym_name.data in names)
            or (isinstance(op, _Global) and op.name in names))]

    def global_bytes(self, name: str) -> bytes | None:
        """The contents of the global called `name`, or None when there is none."""
        for op in self._module_ops:
            if isinstance(op, _Global) and op.name == name:
                return op.data.tobytes()
            if isinstance(op, memref.GlobalOp) and op.sym_name.data == name:
                return op.initial_value.data.data
        return None

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
        key = (float(v) if type(ty) is Float32Type else int(v), ty)
        found = self.consts.get(key)
        if found is None:  # (a type is equal to another exactly when it prints the same)
            op = make(arith.ConstantOp, (), (ty,), {"value": _const_attr(key[0], ty)})
            found = self.consts[key] = self._top(op)
        return found

    def iconst(self, v: int, w: int) -> SSAValue:
        return self.const(v, int_type(w))

    # -- memory ------------------------------------------------------------------------

    def alloc(self, size: int, elem: Attribute, hint: str | None) -> Buffer:
        ref = self._top(make(memref.AllocOp, (), (memref_type(elem, size),),
                             {"operandSegmentSizes": _ALLOC_SEGMENTS}))
        if hint:
            ref.name_hint = hint
        return Buffer(ref, size, elem)

    def global_(self, name: str, values: np.ndarray, elem: Attribute) -> Buffer:
        """A constant global holding `values` (flattened), accessed by memref.get_global."""
        name = self.unique(name)
        flat = np.ascontiguousarray(values).reshape(-1)
        ty = memref_type(elem, max(flat.size, 1))
        if isinstance(elem, Float32Type):
            data = flat.astype("<f4")
        else:
            data = flat.astype({8: "<i1", 16: "<i2", 32: "<i4", 64: "<i8"}[elem.width.data])
        if flat.size == 0:
            data = np.zeros(1, dtype=data.dtype)
        self._module_ops.append(_Global(name, ty, data))
        ref = self._top(make(memref.GetGlobalOp, (), (ty,), {"name": _symbol(name)}))
        ref.name_hint = name
        return Buffer(ref, data.size, elem)

    def global_once(self, name: str, values: np.ndarray, elem: Attribute) -> Buffer:
        """global_ for a table that never changes under `name` (one copy per program)."""
        if name not in self.shared:
            self.shared[name] = self.global_(name, values, elem)
        return self.shared[name]

    def load(self, buf: Buffer, at: Lin) -> SSAValue:
        return self.add(make(memref.LoadOp, (buf.ref, self.lin(at)),
                             (buf.ref.type.element_type,)))

    def store(self, value: SSAValue, buf: Buffer, at: Lin) -> None:
        self.add(make(memref.StoreOp, (value, buf.ref, self.lin(at))))

    def helper(self, name: str, args: Sequence[SSAValue], result: Attribute) -> SSAValue:
        """Call a runtime helper of minun_runtime.h (declared once, private)."""
        if name not in self.helpers:
            decl = func.FuncOp.external(name, [a.type for a in args], [result])
            self.helpers[name] = decl
            self._module_ops.append(decl)
        return self.add(make(func.CallOp, tuple(args), (result,), {"callee": _symbol(name)}))

    def probe(self, name: str, args: Sequence[SSAValue]) -> None:
        """Call `name(args)` for its effect (no result), declared once, private."""
        if name not in self.helpers:
            decl = func.FuncOp.external(name, [a.type for a in args], [])
            self.helpers[name] = decl
            self._module_ops.append(decl)
        self.add(make(func.CallOp, tuple(args), (), {"callee": _symbol(name)}))

    # -- index arithmetic --------------------------------------------------------------

    def lin(self, x: Lin | int | SSAValue) -> SSAValue:
        x = Lin.of(x)
        acc: SSAValue | None = None
        for v, c in x.terms:
            term = v if c == 1 else self.add(binary(arith.MuliOp, v, self.index(c), NSW))
            acc = term if acc is None else self.add(binary(arith.AddiOp, acc, term, NSW))
        if acc is None:
            return self.index(x.const)
        if x.const:
            acc = self.add(binary(arith.AddiOp, acc, self.index(x.const), NSW))
        return acc

    # -- structured control flow -------------------------------------------------------

    def for_(self, lo: int | SSAValue, hi: int | SSAValue, inits: Sequence[SSAValue],
             body: Callable[..., Sequence[SSAValue] | None]) -> list[SSAValue]:
        block = Block(arg_types=[INDEX, *[v.type for v in inits]])
        saved, self.block = self.block, block
        try:
            yields = body(block.args[0], *block.args[1:]) or []
            block.add_op(make(scf.YieldOp, tuple(yields)))
        finally:
            self.block = saved
        lo_v = self.index(lo) if isinstance(lo, int) else lo
        hi_v = self.index(hi) if isinstance(hi, int) else hi
        op = make(scf.ForOp, (lo_v, hi_v, self.index(1), *inits), [v.type for v in inits],
                  regions=(Region(block),))
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

    def loop(self, n: int, inits: Sequence[SSAValue], body) -> list[SSAValue]:
        """scf.for over 0..n (no loop for n == 1); body(Lin index, *carried) -> carried."""
        if n == 1:
            return list(body(Lin(0), *inits) or [])
        return self.for_(0, n, list(inits), lambda iv, *acc: body(Lin.of(iv), *acc))

    def guarded(self, checks: list[tuple[Lin, int]], inside: Callable[[], list[SSAValue]],
                outside: SSAValue) -> SSAValue:
        """inside() when every index of `checks` is within [0, size), else `outside`."""
        if not checks:
            return inside()[0]
        cond = None
        for lin, size in checks:
            v = self.lin(lin)
            ok = self.binop(arith.AndIOp, self.cmp(v, self.index(0), "sge"),
                            self.cmp(v, self.index(size), "slt"))
            cond = ok if cond is None else self.binop(arith.AndIOp, cond, ok)
        return self.if_(cond, [outside.type], inside, lambda: [outside])[0]

    # -- integer arithmetic ------------------------------------------------------------

    def resize(self, x: SSAValue, w: int) -> SSAValue:
        cur = width(x)
        if cur < w:
            return self.add(make(arith.ExtSIOp, (x,), (int_type(w),)))
        if cur > w:
            return self.add(make(arith.TruncIOp, (x,), (int_type(w),)))
        return x

    def binop(self, kind: type, a: SSAValue, b: SSAValue, nsw: bool = False) -> SSAValue:
        return self.add(binary(kind, a, b, NSW if nsw else None))

    def shrsi(self, x: SSAValue, n: int) -> SSAValue:
        return x if n == 0 else self.add(binary(arith.ShRSIOp, x, self.iconst(n, width(x))))

    def cmp(self, a: SSAValue, b: SSAValue, pred: str) -> SSAValue:
        if isinstance(a.type, Float32Type):
            fpred = {"sgt": "ogt", "sge": "oge", "slt": "olt", "sle": "ole"}[pred]
            return self.add(arith.CmpfOp(a, b, fpred))
        return self.add(arith.CmpiOp(a, b, pred))

    def select(self, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(make(arith.SelectOp, (c, a, b), (a.type,)))

    def max(self, a: SSAValue, b: SSAValue) -> SSAValue:
        if isinstance(a.type, Float32Type):
            return self.select(self.cmp(a, b, "sgt"), a, b)
        return self.add(binary(arith.MaxSIOp, a, b))

    def min(self, a: SSAValue, b: SSAValue) -> SSAValue:
        if isinstance(a.type, Float32Type):
            return self.select(self.cmp(a, b, "slt"), a, b)
        return self.add(binary(arith.MinSIOp, a, b))

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
            raise error(f"unknown rounding mode '{rounding}'")
        # toward zero: (x + ((x >> (w-1)) & (2^n - 1))) >> n, C's x / 2^n without a
        # division (avr-gcc -Os calls its 32-bit division routine for x / 2^n) and without
        # a branch (the skip-over-adiw that avr-gcc emits for `x < 0 ? x + 63 : x` is
        # misexecuted by simavr 1.6, see docs/codegen.md)
        bias = self.binop(arith.AndIOp, self.shrsi(x, w - 1), self.iconst((1 << n) - 1, w))
        return self.shrsi(self.binop(arith.AddiOp, x, bias, nsw=True), n)

    def shr_round_by(self, x: SSAValue, n: SSAValue, rounding: str) -> SSAValue:
        """x / 2^n for a shift read at run time (0 <= n < the width of x, a per-channel
        shift), rounded as `shr_round`."""
        w = width(x)
        n = self.resize(n, w)
        if rounding == "floor":
            return self.binop(arith.ShRSIOp, x, n)
        pow2 = self.binop(arith.ShLIOp, self.iconst(1, w), n)
        if rounding == "nearest":  # (x >> n) + (bit n-1 of x), that bit being 0 for n = 0
            half = self.binop(arith.ShRSIOp, pow2, self.iconst(1, w))
            low = self.binop(arith.AndIOp, x, half)
            bit = self.select(self.cmp(low, self.iconst(0, w), "ne"), self.iconst(1, w),
                              self.iconst(0, w))
            return self.binop(arith.AddiOp, self.binop(arith.ShRSIOp, x, n), bit, nsw=True)
        if rounding != "trunc":
            raise error(f"unknown rounding mode '{rounding}'")
        mask = self.binop(arith.SubiOp, pow2, self.iconst(1, w))
        bias = self.binop(arith.AndIOp, self.shrsi(x, w - 1), mask)
        return self.binop(arith.ShRSIOp, self.binop(arith.AddiOp, x, bias, nsw=True), n)

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

