"""The memory plan as a picture: MinUn's canvas (MinUn, section 5.3, Fig. 4-5).

Time (the op position of memory-plan's pre-order numbering) runs along x, the scratch
offset along y; each buffer is a rectangle over its live range and its bytes, labelled
with its name when the label fits. A buffer moved by Shiftry's defragmentation is two
rectangles of one colour joined by an arrow at the copy. Two horizontal lines: the
scratch size the plan uses (its peak) and the lower bound no plan can beat (the most bytes
live at one position; with stream-rows' overlays, where an output overwrites the rows of
a map that die as it is written, the bytes they occupy, counted once).

    from minun_mlir.memory_map import memory_map, render_png
    png = render_png(memory_map(l3), "lenet [fixed16]")   # bytes, deterministic

`memory_map` reads a planned L3 module (after memory-plan): the scratch views (or, with
the naive planner, the allocs, drawn stacked) and the copies between views.
`minun-compile --out DIR` writes it as DIR/memory_map.png beside the C.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import SSAValue

from minun_mlir.passes.memory_plan import element_bytes, live_range, positions

WIDTH, HEIGHT, DPI = 10.0, 5.0, 100  # inches, dots per inch: a 1000 x 500 PNG


@dataclass(frozen=True)
class Piece:
    """One buffer at one place: bytes [offset, offset + size) over positions [first, last]."""

    name: str
    buffer: int  # pieces of one buffer (moved) share this index
    first: int
    last: int
    offset: int
    size: int


@dataclass
class MemoryMap:
    pieces: list[Piece]
    scratch: int  # bytes the plan uses
    lower_bound: int  # the most bytes live at one position
    moves: list[tuple[int, Piece, Piece]] = field(default_factory=list)  # (at, from, to)
    positions: int = 0
    planner: str = ""
    runtime: int = 0  # static RAM of the runtime's state the program uses (posit quires)

    @property
    def static_ram(self) -> int:
        """What the program's C takes of static RAM: the scratch and the runtime's state
        (avr-gcc's .data + .bss of model.c on the Uno)."""
        return self.scratch + self.runtime


def runtime_bytes(l3: ModuleOp) -> int:
    """The runtime's static state an L3 module's helper calls need: the posit quires
    (formats/posit/runtime.py quire_bytes; 0 for every other program)."""
    from minun_mlir.formats.posit.runtime import quire_bytes

    return quire_bytes(op.sym_name.data for op in l3.ops
                       if isinstance(op, func.FuncOp) and op.is_declaration)


def _function(module: ModuleOp) -> func.FuncOp:
    return next(op for op in module.ops
                if isinstance(op, func.FuncOp) and not op.is_declaration)


def _bytes(value: SSAValue) -> int:
    ty = value.type
    assert isinstance(ty, MemRefType)
    return ty.element_count() * element_bytes(ty)


def memory_map(l3: ModuleOp, planner: str = "") -> MemoryMap:
    """The map of a planned L3 module (see the module docstring); `planner` is named in
    the picture's title."""
    fn = _function(l3)
    pos, spans = positions(fn)
    views = [op for op in fn.walk() if isinstance(op, memref.ViewOp)]
    allocs = [op for op in fn.walk() if isinstance(op, memref.AllocOp)]
    copies = [op for op in fn.walk() if isinstance(op, memref.CopyOp)]
    # a moved buffer is a chain of views joined by copies: one buffer index per chain
    moved_to = {c.destination for c in copies}
    buffer_of: dict[SSAValue, int] = {}
    for v in views:  # memory-plan puts a buffer's views together, in the allocs' order
        if v.result not in moved_to:
            buffer_of[v.result] = len(set(buffer_of.values()))
    for c in copies:
        buffer_of[c.destination] = buffer_of[c.source]
    pieces: list[Piece] = []
    if views:
        for v in views:
            shift = v.byte_shift.owner
            assert isinstance(shift, arith.ConstantOp)
            first, last = live_range(v.result, pos, spans)
            b = buffer_of[v.result]
            pieces.append(Piece(v.result.name_hint or f"buffer{b}", b, first, last,
                                shift.value.value.data, _bytes(v.result)))
        attr = fn.attributes.get("minun.scratch_bytes")
        scratch = attr.value.data if attr is not None else max(p.offset + p.size
                                                               for p in pieces)
    else:  # naive: one array each, drawn one above the other
        offset = 0
        for i, a in enumerate(allocs):
            first, last = live_range(a.memref, pos, spans)
            pieces.append(Piece(a.memref.name_hint or f"buffer{i}", i, first, last, offset,
                                _bytes(a.memref)))
            offset += _bytes(a.memref)
        scratch = offset
    by_value = {v.result: p for v, p in zip(views, pieces)}
    moves = [(pos[c], by_value[c.source], by_value[c.destination]) for c in copies]
    # lower bound: per position, each live buffer once (a moved one is one buffer)
    spans_of: dict[int, tuple[int, int, int]] = {}
    for p in pieces:
        lo, hi, size = spans_of.get(p.buffer, (p.first, p.last, p.size))
        spans_of[p.buffer] = (min(lo, p.first), max(hi, p.last), size)
    starts = {lo for lo, _, _ in spans_of.values()}
    lower = max((sum(s for lo, hi, s in spans_of.values() if lo <= t <= hi) for t in starts),
                default=0)
    if _overlaid(pieces):  # stream-rows' overlays: count the bytes they occupy once
        lower = max((_union([(p.offset, p.offset + p.size) for p in pieces
                             if p.first <= t <= p.last]) for t in {p.first for p in pieces}),
                    default=0)
    return MemoryMap(pieces, scratch, lower, moves, len(pos), planner, runtime_bytes(l3))


def _overlaid(pieces: list[Piece]) -> bool:
    """Whether two buffers live at once share bytes (only stream-rows' overlays do)."""
    return any(a.buffer != b.buffer and a.first <= b.last and b.first <= a.last
               and a.offset < b.offset + b.size and b.offset < a.offset + a.size
               for i, a in enumerate(pieces) for b in pieces[i + 1:])


def _union(spans: list[tuple[int, int]]) -> int:
    total, end = 0, None
    for lo, hi in sorted(spans):
        if end is None or lo >= end:
            total, end = total + hi - lo, hi
        elif hi > end:
            total, end = total + hi - end, hi
    return total


def static_ram(l3: ModuleOp, planner: str = "") -> int:
    """`memory_map(l3).static_ram` without building the map: the scratch memory-plan
    recorded and the runtime's state. The precision searches ask it of every candidate."""
    fn = _function(l3)
    attr = fn.attributes.get("minun.scratch_bytes")
    if attr is None or not any(isinstance(op, memref.ViewOp) for op in fn.walk()):
        return memory_map(l3, planner).static_ram
    return attr.value.data + runtime_bytes(l3)


def render_png(m: MemoryMap, title: str = "") -> bytes:
    """The canvas as PNG bytes, WIDTH x HEIGHT inches at DPI; the same map gives the same
    bytes (Agg, bundled fonts, no date or version in the metadata)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    # text.parse_math off: a model named "$x$" is a name, not TeX
    with matplotlib.rc_context({"svg.hashsalt": "minun", "font.size": 9, "text.parse_math": False,
                                "path.simplify": False}):
        fig = Figure(figsize=(WIDTH, HEIGHT), dpi=DPI)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0.07, 0.1, 0.9, 0.74))
        colours = matplotlib.colormaps["tab20"].colors
        x_end = max([p.last + 1 for p in m.pieces] + [m.positions, 1])
        y_end = max(m.scratch, m.lower_bound, 1) * 1.12
        px_x = WIDTH * DPI * 0.9 / x_end  # pixels per position and per byte
        px_y = HEIGHT * DPI * 0.74 / y_end
        for p in m.pieces:
            colour = colours[p.buffer % len(colours)]
            ax.add_patch(Rectangle((p.first, p.offset), p.last + 1 - p.first, p.size,
                                   facecolor=colour, edgecolor="black", linewidth=0.6))
            w, h = (p.last + 1 - p.first) * px_x, p.size * px_y
            if h >= 11 and w >= 6.5 * len(p.name) + 4:
                ax.text(p.first + (p.last + 1 - p.first) / 2, p.offset + p.size / 2, p.name,
                        ha="center", va="center", fontsize=8, clip_on=True)
        for at, src, dst in m.moves:
            ax.annotate("", xy=(at + 0.5, dst.offset + dst.size / 2),
                        xytext=(at + 0.5, src.offset + src.size / 2),
                        arrowprops={"arrowstyle": "->", "color": "black", "linewidth": 1.2})
        ax.axhline(m.scratch, color="tab:red", linestyle="--", linewidth=1.2,
                   label=f"peak (scratch size): {m.scratch:,} B")
        ax.axhline(m.lower_bound, color="tab:green", linestyle=":", linewidth=1.5,
                   label=f"lower bound (most bytes live at once): {m.lower_bound:,} B")
        if m.moves:
            ax.plot([], [], color="black", marker=r"$\rightarrow$", linestyle="none",
                    label=f"defragmentation moves: {len(m.moves)}")
        ax.set_xlim(0, x_end)
        ax.set_ylim(0, y_end)
        ax.set_xlabel("op position (memory-plan's pre-order numbering)")
        ax.set_ylabel("scratch offset (bytes)")
        heading = "memory map" + (f": {title}" if title else "")
        if m.planner:
            heading += f" (planner {m.planner})"
        fig.suptitle(heading, y=0.97)
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=3, fontsize=8,
                  frameon=False)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()
