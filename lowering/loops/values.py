"""The value model of lower-to-loops: an L2 tensor is lowered to a `Val`, a function from
an index to a stored scalar. `Buf` reads a (strided view of a) buffer, `Const` a splat,
`Mapped` re-indexes another value, `Elementwise` and `Reduction` compute each element on
demand. Views compose into index maps (`view`), so reshape/transpose/splice cost nothing,
and the driver decides from `cost` and `leaves` when a value must be written to memory.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith
from xdsl.dialects.builtin import BFloat16Type, Float32Type, f32
from xdsl.ir import Attribute, Operation, SSAValue

from minun_mlir.diagnostics import MinunError, error
from minun_mlir.dialects.num import AffineType, FixedType, PositType
from minun_mlir.lowering.loops.builder import Buffer, Gen, Lin, int_type, row_major
from minun_mlir.modules import shape_of  # noqa: F401  (the family modules use it)

# How much it costs to read an element of a lazy value again (decides materialization).
FREE, CHEAP, COMPUTE = 0, 1, 2


def storage(el: Attribute) -> Attribute:
    """The C-level element of an L2 element type: iN for !num.fixed<N, s> and for
    !num.posit<N, es> (the pattern), f32 for f32."""
    if isinstance(el, PositType):  # sign-extended from n bits
        return int_type(el.storage_width)
    if isinstance(el, (FixedType, AffineType)):
        return int_type(el.width)
    if isinstance(el, BFloat16Type):  # an order-preserving key (formats/bfloat16/representation.py)
        return int_type(16)
    if isinstance(el, Float32Type):
        return f32
    raise error(f"lower-to-loops: no storage type for element {el}")


def element_of(value: SSAValue) -> Attribute:
    return value.type.element_type


def is_float(el: Attribute) -> bool:
    return isinstance(el, Float32Type)


def op_error(op: Operation, message: str) -> MinunError:
    """The diagnostic for `op`, with its source location when it has one."""
    return error(f"{op.name}: {message}", at=op)


def fx_type(v: SSAValue) -> FixedType:
    el = element_of(v)
    assert isinstance(el, FixedType), el
    return el


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
        """offset + sum(idx[e] * strides[e]) over the non-unit dimensions, summed in
        one pass with the terms in the order (and without the zeros) that adding them
        one at a time gives (Lin.__add__): every load and store asks for it."""
        const, terms = self.offset.const, None
        for i, s, n in zip(idx, self.strides, self.shape):
            if n == 1 or s == 0:
                continue
            if isinstance(i, Lin):
                const, more = const + i.const * s, i.terms
            elif isinstance(i, int):
                const, more = const + i * s, ()
            else:
                more = ((i, 1),)
            for v, c in more:
                if terms is None:
                    terms = dict(self.offset.terms)
                c = terms.get(v, 0) + c * s
                if c:
                    terms[v] = c
                else:
                    del terms[v]
        return Lin(const, self.offset.terms if terms is None else tuple(terms.items()))

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
    """An element computed by a loop over other values (matmul, conv, maxpool);
    `windows` are the row windows (`Rows`) of its operands that its output row needs."""

    fn: Callable[[Gen, list[Lin]], SSAValue]
    operands: list[Val]
    shape: tuple[int, ...]
    el: Attribute
    windows: list[Rows | Pixel] = field(default_factory=list)
    pointwise: bool = False  # operand 0 read only at the output's own index

    def load(self, g: Gen, idx: list[Lin]) -> SSAValue:
        return self.fn(g, idx)

    def leaves(self, aligned: bool) -> Iterator[tuple[Buf, bool]]:
        for e, v in enumerate(self.operands):
            yield from v.leaves(aligned and self.pointwise and e == 0
                                and v.shape == self.shape)


@dataclass(eq=False)
class Rows(Val):
    """The rows of a lazy (1, H, W, C) value that one output row of its consumer (a
    convolution computing its output rows in order 0, 1, ...) reads: output row `o` reads
    source rows `o * stride - pad + [0, rows)`, which `prepare(g, o)` writes into a buffer
    of `rows` rows before the elements of output row `o` are computed. Rows shared with
    the previous output row are moved down (`rows - stride` rows copied), never computed
    twice; rows outside [0, H) are skipped (the consumer's padding checks read none).
    So a depthwise convolution over an expanding 1x1 convolution needs `rows` rows of the
    expanded tensor instead of all of it (MBConv)."""

    src: Val
    buffer: Buffer
    rows: int
    stride: int
    pad: int
    out_rows: int  # the consumer's output rows
    base: Lin | None = None  # first source row held (the row being computed's)
    cost: int = FREE

    @property
    def shape(self) -> tuple[int, ...]:  # type: ignore[override]
        return self.src.shape

    @property
    def el(self) -> Attribute:  # type: ignore[override]
        return self.src.el

    def load(self, g: Gen, idx: list[Lin]) -> SSAValue:
        assert self.base is not None, "a row window is read before its rows are computed"
        _, h, w, c = idx
        _, _, nw, nc = self.shape
        at = (h + self.base.scale(-1)).scale(nw * nc) + w.scale(nc) + c
        return g.load(self.buffer, at)

    def leaves(self, aligned: bool) -> Iterator[tuple[Buf, bool]]:
        return self.src.leaves(False)

    def prepare(self, g: Gen, o: Lin) -> None:
        """Make the source rows of output row `o` available; `o` runs 0, 1, ... (one
        call per output row, in order), which the move of the kept rows relies on."""
        _, nh, nw, nc = self.shape
        row_size = nw * nc
        self.base = o.scale(self.stride) + (-self.pad)
        keep = self.rows - self.stride
        lo: int | SSAValue = 0
        if keep > 0:
            if not o.terms:
                lo = 0 if o.const == 0 else keep
            else:  # the first output row computes every row, the others `stride` rows
                first = g.cmp(g.lin(o), g.index(0), "eq")
                lo = g.select(first, g.index(0), g.index(keep))
                moved = g.select(first, g.index(0), g.index(keep * row_size))

                def move(e: SSAValue) -> None:
                    v = g.load(self.buffer, Lin.of(e) + self.stride * row_size)
                    g.store(v, self.buffer, Lin.of(e))

                g.for_(0, moved, [], move)
        last = (self.out_rows - 1) * self.stride - self.pad + self.rows - 1
        guard = self.pad > 0 or last >= nh

        def compute(t: Lin) -> list:
            row = self.base + t

            def fill() -> None:
                row_elements(g, self.src, row, lambda idx: g.store(
                    self.src.load(g, [Lin(0), row, idx[0], idx[1]]), self.buffer,
                    t.scale(row_size) + idx[0].scale(nc) + idx[1]))

            if guard:
                r = g.lin(row)
                ok = g.binop(arith.AndIOp, g.cmp(r, g.index(0), "sge"),
                             g.cmp(r, g.index(nh), "slt"))
                g.if_(ok, [], fill, lambda: None)
            else:
                fill()
            return []

        if isinstance(lo, int):
            g.loop(self.rows - lo, [], lambda t: compute(t + lo))
        else:
            g.for_(lo, self.rows, [], lambda t: compute(Lin.of(t)))


@dataclass(eq=False)
class Pixel(Val):
    """The channels of one pixel of a value computed row by row, read by a 1x1 convolution
    (stride 1, no padding) computing its output pixels row by row: `prepare(g, o, w)`
    writes source pixel (o, w) into a buffer of C elements (the source's own windows for
    row o are prepared by the caller, see row_elements). MBConv's project convolution
    over the depthwise output: C elements live instead of a row of them."""

    src: Val
    buffer: Buffer
    cost: int = FREE

    @property
    def shape(self) -> tuple[int, ...]:  # type: ignore[override]
        return self.src.shape

    @property
    def el(self) -> Attribute:  # type: ignore[override]
        return self.src.el

    def load(self, g: Gen, idx: list[Lin]) -> SSAValue:
        return g.load(self.buffer, idx[3])

    def leaves(self, aligned: bool) -> Iterator[tuple[Buf, bool]]:
        return self.src.leaves(False)

    def prepare(self, g: Gen, o: Lin, w: Lin) -> None:
        g.loop(self.shape[3], [], lambda c: g.store(
            self.src.load(g, [Lin(0), o, w, c]), self.buffer, c) or [])


def row_elements(g: Gen, val: Val, o: Lin, body: Callable[[list[Lin]], None]) -> None:
    """body([w, c...]) for every element of row `o` of `val` (a (1, H, W, ...) value),
    its row windows prepared first and its pixel windows before each pixel. Rows must be
    visited in order 0, 1, ... (the windows move the rows they keep)."""
    wins = windows(val)
    for w in wins:
        if isinstance(w, Rows):
            w.prepare(g, o)
    # a pixel window's source may read another pixel window (listed after it): sources first
    pixels = [w for w in reversed(wins) if isinstance(w, Pixel)]
    if not pixels:
        g.nest(val.shape[2:], body)
        return

    def pixel(w: Lin) -> list:
        for p in pixels:
            p.prepare(g, o, w)
        g.nest(val.shape[3:], lambda idx: body([w, *idx]))
        return []

    g.loop(val.shape[2], [], pixel)


def windows(val: Val) -> list[Rows | Pixel]:
    """The windows to prepare for row `o` of `val` (dimension 1 of a (1, H, W, C)
    value): its own, and those of the operands read at the same row; a pixel window's
    source is read at the same row, so its windows too."""
    if isinstance(val, Rows):
        return [val]
    if isinstance(val, Pixel):
        return [val, *windows(val.src)]
    if isinstance(val, Elementwise):
        out = []
        for v in val.operands:
            if v.shape == val.shape:
                out += windows(v)
            else:
                assert not has_rows(v), "a row window read at another shape"
        return out
    if isinstance(val, Reduction):
        return list(val.windows)
    assert not has_rows(val), "a row window read through a view"
    return []


def has_rows(val: Val) -> bool:
    """Whether computing `val` reads a row window (then it must be computed row by row,
    with `windows(val)` prepared for each row). Remembered on the value: the driver asks
    for every op, and lazy chains can be thousands of ops deep."""
    known = val.__dict__.get("_has_rows")
    if known is None:
        if isinstance(val, (Rows, Pixel)):
            known = True
        elif isinstance(val, (Elementwise, Reduction)):
            known = any(has_rows(v) for v in val.operands)
        elif isinstance(val, Mapped):
            known = has_rows(val.src)
        else:
            known = False
        val.__dict__["_has_rows"] = known
    return known
