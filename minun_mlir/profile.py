"""A per-layer profile: the simulated cycles (Uno) or instructions (Cortex-M) of each
layer of the program, with the bytes the memory plan keeps live during it
(`minun-compile --run --profile`, docs/profile.md).

The profiled program is the deployed one: the same C, compiled with the same flags and
`-g` (debug lines change no instruction). A layer is what one op of the source became:
a SeeDot line, an ONNX node. The frontends give each op its location (the .sd file's
line, the node's name as a NameLoc); lower-to-loops and lower-to-emitc hand it on to the
statements the op became (modules.locate_after), and the C printer says which lines of
model.c each statement of `minun_predict` took (CPrinter.statement_lines). The simulator
then adds every instruction between the latency markers to the bucket of its address's
line (minun_mlir/targets/layers.py), so the buckets add up to the latency exactly.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from xdsl.dialects.builtin import FileLineColLoc, FusedLoc, ModuleOp, NameLoc

from minun_mlir.targets.layers import ModelLines

HARNESS_NAME = "(harness: call and return)"
OUTSIDE_NAME = "(minun_predict: entry, exit)"
SOURCE_TEXT = 44  # characters of a SeeDot line kept in its layer's name
PNG_FILE = "profile.png"
WIDTH, DPI = 10.0, 100  # inches, dots per inch


def location_name(location, sources: dict[str, list[str]]) -> str | None:
    """A layer's name: `file.sd:LINE text of the line` for a SeeDot line, the node's name
    for an ONNX node (a NameLoc); None for no location. A FusedLoc (code that also computes
    the values of earlier ops, lower-to-loops' fused_into) names them all in program order:
    `model.sd:15-17 text of line 17`, `conv1 + relu1`, `conv1 .. pool1 (4 nodes)`."""
    if isinstance(location, FusedLoc):
        first, *rest = location.locations.data
        name = location_name(first, sources)
        if name is None:
            return None
        if isinstance(first, FileLineColLoc):
            head, _, text = name.partition(" ")
            lines = sorted({loc.line.data for loc in [first, *rest]
                            if isinstance(loc, FileLineColLoc)})
            span = (str(lines[0]) if len(lines) == 1 else f"{lines[0]}-{lines[-1]}"
                    if lines == list(range(lines[0], lines[-1] + 1))
                    else ",".join(map(str, lines)))
            return f"{head.rpartition(':')[0]}:{span} {text}".rstrip()
        names = list(dict.fromkeys(n for n in (location_name(loc, sources)
                                               for loc in [*rest, first]) if n))
        if len(names) <= 2:
            return " + ".join(names)
        return f"{names[0]} .. {names[-1]} ({len(names)} nodes)"
    if isinstance(location, NameLoc):
        return location.desc.data
    if isinstance(location, FileLineColLoc):
        path, line = location.filename.data, location.line.data
        if path not in sources:
            try:
                sources[path] = Path(path).read_text().splitlines()
            except (OSError, UnicodeDecodeError):
                sources[path] = []
        text = sources[path][line - 1].strip() if line <= len(sources[path]) else ""
        if len(text) > SOURCE_TEXT:
            text = text[:SOURCE_TEXT - 3] + "..."
        return f"{Path(path).name}:{line} {text}".rstrip()
    return None


def model_lines(l4: ModuleOp, target: str, model_c: str) -> ModelLines:
    """The buckets of model.c's lines: the C printer prints the module again (the same
    text, checked against `model_c`) and says which lines each statement took."""
    from minun_mlir.codegen import profile_for
    from minun_mlir.diagnostics import error
    from minun_mlir.lowering.c_printer import PROFILES, CPrinter

    printer = CPrinter(PROFILES[profile_for(target)])
    files = printer.module(l4, "model")
    if files["model.c"].split("\n", 1)[1] != model_c.split("\n", 1)[1]:
        raise error("--profile: model.c differs from the C printer's text; cannot name its "
                    "lines")
    names = [HARNESS_NAME, OUTSIDE_NAME]
    lines: dict[int, int] = {}
    sources: dict[str, list[str]] = {}
    for first, last, location in printer.statement_lines:
        name = location_name(location, sources)
        if name is None:
            continue
        if name not in names:
            names.append(name)
        lines.update(dict.fromkeys(range(first, last + 1), names.index(name)))
    return ModelLines(tuple(names), lines)


def live_bytes(l3: ModuleOp, names: tuple[str, ...]) -> dict[str, int]:
    """Per layer, the most bytes of planned buffers live at once while its statements run
    (the memory plan's live ranges over memory-plan's op positions; a buffer moved by
    defragmentation counts once)."""
    from minun_mlir.memory_map import _function, memory_map
    from minun_mlir.passes.memory_plan import positions

    plan = memory_map(l3)
    fn = _function(l3)
    pos, _ = positions(fn)
    sources: dict[str, list[str]] = {}
    result: dict[str, int] = {}
    for op in fn.body.block.ops:
        name = location_name(op.location, sources)
        if name not in names:
            continue
        last = max((pos[o] for o in op.walk()), default=pos[op])
        for t in range(pos[op], last + 1):
            live = {p.buffer: p.size for p in plan.pieces if p.first <= t <= p.last}
            result[name] = max(result.get(name, 0), sum(live.values()))
    return result


@dataclass(frozen=True)
class Profile:
    """One input's latency split by layer (`counts` add up to `total`), in `unit`."""

    names: tuple[str, ...]
    counts: tuple[int, ...]
    live: dict[str, int]
    total: int
    unit: str
    input_index: int
    inputs: int

    @classmethod
    def of_run(cls, lines: ModelLines, run, live: dict[str, int]) -> Profile:
        """The profile of the input whose latency is the (lower) median of the run's."""
        order = sorted(range(len(run.latencies)), key=lambda i: (run.latencies[i], i))
        k = order[(len(order) - 1) // 2]
        return cls(lines.names, tuple(run.layers[k]), live, run.latencies[k],
                   run.latency_unit, k, len(run.latencies))

    def rows(self) -> list[tuple[str, int, float, int | None]]:
        """(name, count, share of the total, live bytes or None), in program order; the
        harness's and the entry's rows last, and only when they count anything."""
        layers = list(range(2, len(self.names))) + [1, 0]
        return [(self.names[i], self.counts[i], self.counts[i] / max(self.total, 1),
                 self.live.get(self.names[i])) for i in layers
                if i >= 2 or self.counts[i]]

    def text(self) -> str:
        head = (f"  per-layer profile ({self.unit}, input {self.input_index} of "
                f"{self.inputs}, the median latency):")
        width = max(len(r[0]) for r in self.rows())
        lines = [head, f"    {'layer':<{width}}  {self.unit:>12}  share  live bytes"]
        for name, count, share, live in self.rows():
            shown = f"{live:,}" if live is not None else "-"
            lines.append(f"    {name:<{width}}  {count:>12,}  {share:>5.1%}  {shown:>10}")
        lines.append(f"    {'total':<{width}}  {self.total:>12,}  100.0%")
        return "\n".join(lines)

    def record(self) -> dict:
        return {"unit": self.unit, "input": self.input_index, "inputs": self.inputs,
                "total": self.total,
                "layers": [{"name": n, "count": c, "share": round(s, 6), "live_bytes": b}
                           for n, c, s, b in self.rows()]}


def render_png(p: Profile, title: str = "") -> bytes:
    """A horizontal bar per layer (its count, its share and live bytes written beside);
    the same profile gives the same bytes (Agg, bundled fonts, no date in the metadata)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    rows = p.rows()
    height = 1.2 + 0.3 * len(rows)
    with matplotlib.rc_context({"svg.hashsalt": "minun", "font.size": 9,
                                "font.family": "DejaVu Sans", "text.parse_math": False,
                                "path.simplify": False}):
        fig = Figure(figsize=(WIDTH, height), dpi=DPI)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0.36, 0.9 / height, 0.5, 1 - 1.5 / height))
        y = list(range(len(rows)))[::-1]
        ax.barh(y, [r[1] for r in rows], color="tab:blue", height=0.7)
        ax.set_yticks(y, [r[0] for r in rows], fontsize=8)
        top = max([r[1] for r in rows] + [1])
        for yi, (_, count, share, live) in zip(y, rows):
            note = f" {count:,} ({share:.1%})" + (f", {live:,} B live" if live else "")
            ax.text(count + top * 0.01, yi, note, va="center", fontsize=7)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.set_xlim(0, top * 1.45)
        ax.set_ylim(-0.6, len(rows) - 0.4)
        ax.set_xlabel(f"{p.unit} (input {p.input_index}, total {p.total:,})")
        fig.suptitle("per-layer profile" + (f": {title}" if title else ""),
                     y=1 - 0.25 / height)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()
