"""`bitwidth-assign`: search per-tensor bitwidths on data and record them for quantize.

    bitwidth-assign{data="train.npy" ram-budget=2048}                 (Shiftry, fewest demotions)
    bitwidth-assign{data="train.npy" max-drop=1.0}                    (Shiftry, most demotions)
    bitwidth-assign{search=haunter data="train.npy" ram-budget=2048 soft-limit=1.1}
    bitwidth-assign{... out="build/assignment.json"}                  (also write the JSON)

An L1 -> L1 pass: it runs the search of minun_mlir/bitwidth_search.py (each candidate is
quantized, evaluated and memory-planned through functions; the module is not changed) and
puts the chosen assignment on the module as the attribute `minun.assignment` (the JSON
text), which the next quantize applies and removes. The search needs the same quantize
options as the quantize that follows (default bitwidth 16 for shiftry; haunter's is 8);
the rounding is the search's (it compares trunc and nearest, docs/precision-search.md;
`rounding=trunc` searches with that one only): the assignment records it and quantize
applies it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from minun_mlir.diagnostics import error
from minun_mlir.modules import require_level
from minun_mlir.outputs import write_file

ATTRIBUTE = "minun.assignment"


@dataclass(frozen=True)
class BitwidthAssign(ModulePass):
    """Choose per-tensor bitwidths on data (Shiftry's demotion or MinUn's Haunter)."""

    name = "bitwidth-assign"

    search: str = "shiftry"
    data: str = ""
    bits: int = 16
    ram_budget: int = 0
    max_drop: float | None = None
    soft_limit: float = 1.0
    metric: str = ""
    rounding: str = ""  # fixed point: the one rounding to search with ("": trunc and nearest)
    planner: str = "greedy"
    evaluator: str = "auto"
    jobs: int = 1
    out: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from minun_mlir.bitwidth_search import haunter_model, search_model
        from minun_mlir.passes.quantize import load_training_data

        require_level(op, "bitwidth-assign", 1)
        if not self.data:
            raise error("bitwidth-assign: data= (a training set) is required")
        train = load_training_data(op, self.data)
        metric = self.metric or None
        from minun_mlir.bitwidth_search import ROUNDINGS

        if self.rounding not in ("", "trunc", "floor", "nearest"):
            raise error(f"bitwidth-assign: rounding must be trunc, floor or nearest, got "
                        f"'{self.rounding}'")
        roundings = (self.rounding,) if self.rounding else ROUNDINGS
        if self.search == "haunter":
            if not self.ram_budget:
                raise error("bitwidth-assign: search=haunter needs ram-budget=BYTES")
            found = haunter_model(op, train, self.ram_budget, soft_limit=self.soft_limit,
                                  metric=metric, planner=self.planner,
                                  evaluator=self.evaluator, jobs=self.jobs, progress=False,
                                  roundings=roundings)
        elif self.search == "shiftry":
            if not self.ram_budget and self.max_drop is None:
                raise error("bitwidth-assign: ram-budget=BYTES, max-drop=LOSS or both are "
                            "required")
            found = search_model(op, train, bits=self.bits,
                                 ram_budget=self.ram_budget or None, max_drop=self.max_drop,
                                 metric=metric, planner=self.planner,
                                 evaluator=self.evaluator, jobs=self.jobs, progress=False,
                                 roundings=roundings)
        else:
            raise error(f"bitwidth-assign: search must be shiftry or haunter, got "
                        f"'{self.search}'")
        text = found.assignment.to_json()
        if self.out:
            Path(self.out).parent.mkdir(parents=True, exist_ok=True)
            write_file(self.out, text, "bitwidth-assign out=", [self.data],
                       (".c", ".h", ".sd", ".onnx", ".npy", ".npz"))
        op.attributes[ATTRIBUTE] = StringAttr(text)
