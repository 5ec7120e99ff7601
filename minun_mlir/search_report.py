"""The report of a precision search (minun_mlir/bitwidth_search.py): Markdown, JSON, a PNG
of accuracy (or loss) against RAM for every program evaluated, and the assignment itself.

    search.md        what was chosen and why, the per-tensor table, every cumulative step
    search.json      the same as data, with every evaluated program
    search.png       accuracy vs RAM: all programs, the Pareto front, the chosen one and the
                     uniform baselines (fixedB, fixedB/2)
    assignment.json  name -> bits and scale (quantize{assign=...}, minun-compile --assign)
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

from minun_mlir.bitwidth_search import Point, Search
from minun_mlir.outputs import write_files


def pareto(points: list[Point]) -> list[int]:
    """Indices of the programs no other beats in both RAM and loss (lower is better in
    both), ordered by RAM."""
    usable = [i for i, p in enumerate(points) if p.result.ram is not None]
    front = []
    for i in usable:
        a = points[i].result
        dominated = any(
            (b.ram <= a.ram and b.loss <= a.loss) and (b.ram < a.ram or b.loss < a.loss)
            for b in (points[j].result for j in usable if j != i))
        if not dominated:
            front.append(i)
    # one point per (ram, loss)
    seen, unique = set(), []
    for i in sorted(front, key=lambda i: (points[i].result.ram, points[i].result.loss, i)):
        key = (points[i].result.ram, points[i].result.loss)
        if key not in seen:
            seen.add(key)
            unique.append(i)
    return unique


def _num(x):
    """JSON-safe: an infinite loss (a candidate the compiler rejected) as null."""
    return None if isinstance(x, float) and not math.isfinite(x) else x


def _bytes(n) -> str:
    return "-" if n is None else f"{n:,}"


def _demoted(p: Point) -> list[str]:
    bits, tensors = p.candidate
    return [n for n, b, _ in tensors if b != bits]


def _y(search: Search, r) -> float:
    return 100 * r.accuracy if search.metric == "accuracy" and r.accuracy is not None \
        else r.loss


def choice_text(search: Search) -> str:
    """The chosen assignment in words, counted from its tensors' bitwidths
    (`Search.bits_count`): what minun-compile prints and the report's "Chosen:" line say,
    e.g. "uniform fixed8-nearest: 19 of 19 tensors at 8 bits, rounding nearest" or "14 of
    19 tensors at 8 bits, 5 at 16 bits"."""
    a = search.assignment
    counts = search.bits_count
    total = sum(counts.values())
    parts = [f"{n} at {b} bits" for b, n in counts.items()]
    text = (f"{parts[0].replace(' at', f' of {total} tensors at', 1)}"
            + "".join(f", {p}" for p in parts[1:])) if parts else "no tensors"
    if search.uniform is not None:
        text = f"uniform {search.uniform}: {text}"
    if a.rounding is not None:
        text += f", rounding {a.rounding}"
    if not a.quire:  # only a representation with a quire can be searched without one
        text += " without a quire (every product and partial sum rounded)"
    return text


def report_data(search: Search, name: str = "") -> dict:
    chosen = search.chosen_result
    front = pareto(search.points)
    return {
        "model": name, "strategy": search.strategy, "metric": search.metric,
        "bits": search.bits, "ram_budget": search.ram_budget, "max_loss": search.max_loss,
        "algorithm": search.algorithm, "order": search.order, "chosen": search.chosen,
        "changed": search.changed,
        "uniform": search.uniform, "rounding": search.assignment.rounding,
        "bits_count": {str(b): n for b, n in search.bits_count.items()},
        "summary": choice_text(search),
        "chosen_result": {"ram": chosen.ram, "loss": _num(chosen.loss),
                          "accuracy": chosen.accuracy,
                          "flash": chosen.flash, "sqnr_db": _num(chosen.sqnr_db)},
        "tensors": [tensor_row(search, v) for v in search.variables],
        **({"stage_one": {"es": {str(b): e for b, e in sorted(search.assignment.es.items())},
                          "programs": {k: {"loss": _num(r.loss), "accuracy": r.accuracy,
                                           "ram": r.ram}
                                       for k, r in search.stage_one.items()}}}
           if search.stage_one else {}),
        "points": [{"kind": p.kind, "label": p.label, "changed": _demoted(p),
                    "bits": p.candidate[0], "ram": p.result.ram, "loss": _num(p.result.loss),
                    "accuracy": p.result.accuracy, "flash": p.result.flash,
                    "sqnr_db": _num(p.result.sqnr_db),
                    "error": p.result.error, "pareto": i in front}
                   for i, p in enumerate(search.points)],
    }


def tensor_row(search: Search, v: str) -> dict:
    bits, scale = search.chosen_result.types.get(v, (None, None))
    row = {"name": v, "shape": list(search.shapes.get(v, ())), "bits": bits, "scale": scale}
    if search.algorithm == "haunter":
        row["promotability"] = search.scores.get(v)
    else:
        row["loss"] = _num(search.partial[v][1].loss)
    return row | {"changed": v in search.assignment.tensors}


def _fmt_loss(search: Search, loss: float | None) -> str:
    if loss is None or not math.isfinite(loss):
        return "rejected"
    return f"{loss:.2f} points" if search.metric != "mae" else f"{loss:.4g}"


def stage_one_text(search: Search) -> str:
    """MinUn's Algorithm 4 as the report says it: each uniform program's loss and the es
    kept per bitwidth."""
    tried = ", ".join(f"{k} {_fmt_loss(search, r.loss)}" for k, r in search.stage_one.items())
    kept = ", ".join(f"posit<{b}, {e}>" for b, e in sorted(search.assignment.es.items()))
    return (f"Stage I (es per bitwidth, MinUn's Algorithm 4): uniform programs {tried}; "
            f"kept {kept}.")


def markdown(search: Search, name: str = "") -> str:
    r = search.chosen_result
    limit = []
    if search.ram_budget is not None:
        limit.append(f"RAM budget {search.ram_budget:,} B")
        if search.algorithm == "haunter" and search.soft_limit != 1.0:
            limit.append(f"soft limit factor {search.soft_limit:g}")
    if search.max_loss is not None:
        limit.append(f"loss limit {_fmt_loss(search, search.max_loss)}")
    loss_name = {"accuracy": "accuracy lost vs float (points)", "disagreement":
                 "disagreement with float (points)", "mae": "mean abs error vs float"}
    if search.algorithm == "haunter":
        what = (f"MinUn's Haunter ({', '.join(limit)}), from {search.bits} bits up; loss = "
                f"{loss_name[search.metric]} on the search data.")
        base_label = f"{search.representation}{search.bits}"
        if search.stage_one:
            what += " " + stage_one_text(search)
    else:
        what = (f"Shiftry's demotion ({search.strategy} strategy; {', '.join(limit)}); loss "
                f"= {loss_name[search.metric]} on the search data.")
        base_label = f"{search.representation}{search.bits}"
    chosen = f"Chosen: {choice_text(search)}"
    if search.uniform is not None:  # a uniform program beat every one the search built
        chosen += (" (it fits and loses less than every program the search built that "
                   "fits)")
    lines = [f"# Precision search: {name}", "", what, "",
             f"{chosen}, RAM {r.ram:,} B, loss {_fmt_loss(search, r.loss)}"
             + (f", accuracy {r.accuracy:.2%}" if r.accuracy is not None else "")
             + (f", output SQNR vs float {r.sqnr_db:.2f} dB" if r.sqnr_db is not None
                else "") + ".", "",
             "![accuracy vs RAM](search.png)", "", "## Baselines", "",
             "| program | RAM (B) | parameters (B) | loss | accuracy |", "|---|---|---|---|---|"]
    rows = {base_label: search.base} | search.baselines
    for label, res in [*rows.items(), ("chosen", r)]:
        acc = f"{res.accuracy:.2%}" if res.accuracy is not None else "-"
        lines.append(f"| {label} | {_bytes(res.ram)} | {_bytes(res.flash)} | "
                     f"{_fmt_loss(search, res.loss)} | {acc} |")
    haunter = search.algorithm == "haunter"
    column = "promotability" if haunter else "loss"
    lines += ["", "## Per-tensor assignment", "",
              ("Promotability: the 95th percentile of |16-bit - 8-bit value| over the search "
               "data, divided by the tensor's size." if haunter else
               "Loss: the program with only this tensor demoted (PartialDemote)."), "",
              f"| name | shape | bits | scale | {column} |", "|---|---|---|---|---|"]
    for v in search.variables:
        row = tensor_row(search, v)
        shape = "x".join(str(d) for d in row["shape"]) or "scalar"
        value = (f"{row['promotability']:.4g}" if haunter
                 else _fmt_loss(search, row["loss"]))
        lines.append(f"| {v} | {shape} | {row['bits']} | {row['scale']} | {value} |")
    if haunter:
        lines += ["", "## Explorations", "", f"Promotion order: {', '.join(search.order)}.",
                  "", "| start | promoted at the end | RAM (B) |", "|---|---|---|"]
        shown = set()
        for inst in search.instances:
            if (inst.start, inst.final) in shown:
                continue
            shown.add((inst.start, inst.final))
            lines.append(f"| {', '.join(inst.start) or 'none'} | "
                         f"{', '.join(inst.final) or 'none'} | {_bytes(inst.ram)} |")
        return "\n".join(lines) + "\n"
    lines += ["", "## Cumulative demotion", "",
              "| k | demoted last | RAM (B) | loss | accuracy |", "|---|---|---|---|---|"]
    for i, (v, res) in enumerate(zip(search.order, search.cumulative, strict=True)):
        acc = f"{res.accuracy:.2%}" if res.accuracy is not None else "-"
        mark = (" (chosen)" if i + 1 == search.chosen and search.chosen_override is None
                else "")
        lines.append(f"| {i + 1}{mark} | {v} | {_bytes(res.ram)} | {_fmt_loss(search, res.loss)} "
                     f"| {acc} |")
    return "\n".join(lines) + "\n"


def render_png(search: Search, name: str = "") -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ylabel = ("accuracy on the search data (%)" if search.metric == "accuracy"
              else f"loss ({search.metric}, lower is better)")
    with matplotlib.rc_context({"svg.hashsalt": "minun", "font.size": 9,
                                "text.parse_math": False}):  # model names are not TeX
        fig = Figure(figsize=(7, 4.5), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        pts = [p for p in search.points if p.result.ram is not None]
        for kind, marker, colour in (("partial", ".", "tab:gray"),
                                     ("cumulative", "o", "tab:blue"),
                                     ("exploration", "o", "tab:purple")):
            sel = [p for p in pts if p.kind == kind]
            if not sel:
                continue
            ax.scatter([p.result.ram for p in sel], [_y(search, p.result) for p in sel],
                       marker=marker, color=colour, label=f"{kind} demotion", alpha=0.7)
        front = [search.points[i] for i in pareto(search.points)]
        ax.plot([p.result.ram for p in front], [_y(search, p.result) for p in front],
                color="tab:green", drawstyle="steps-post", label="Pareto front")
        base = f"{search.representation}{search.bits}"
        for label, res, marker in [(base, search.base, "s"),
                                   *[(k, v, "D") for k, v in search.baselines.items()]]:
            ax.scatter([res.ram], [_y(search, res)], marker=marker, s=60, color="tab:orange",
                       zorder=3)
            ax.annotate(label, (res.ram, _y(search, res)), textcoords="offset points",
                        xytext=(5, 5))
        chosen = search.chosen_result
        ax.scatter([chosen.ram], [_y(search, chosen)], marker="*", s=200, color="tab:red",
                   zorder=4, label="chosen")
        if search.ram_budget is not None:
            ax.axvline(search.ram_budget, color="tab:red", linestyle="--", linewidth=1,
                       label="RAM budget")
        ax.set_xlabel("RAM for buffers (bytes, memory planner)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"precision search: {name}" if name else "precision search")
        ax.legend(loc="best", fontsize=8)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


REPORT_FILES = ("search.md", "search.json", "search.png", "assignment.json")


def write_report(search: Search, folder: str | Path, name: str = "") -> dict[str, Path]:
    """The report's four files, written together (outputs.write_files: only into a folder
    holding no file of the user's under these names)."""
    texts = {"search.md": markdown(search, name),
             "search.json": json.dumps(report_data(search, name), indent=2) + "\n",
             "search.png": render_png(search, name),
             "assignment.json": search.assignment.to_json(
                 {"model": name, "strategy": search.strategy})}
    out = write_files(texts, folder, "--search-report")
    return {key: out / fname for key, fname in zip(("md", "json", "png", "assignment"),
                                                   REPORT_FILES, strict=True)}
