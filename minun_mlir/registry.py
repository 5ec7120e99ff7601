"""What `minun-opt` knows: our dialects, passes, frontends and targets, imported lazily
so that `minun-opt --help` stays fast.

To add a pass: write `passes/<name>.py` (or `lowering/<name>.py`) with one ModulePass
dataclass whose `name` is the file name with dashes, and add one line here.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any


def _attr(module: str, name: str) -> Callable[[], Any]:
    return lambda: getattr(importlib.import_module(module), name)


DIALECTS: dict[str, Callable[[], Any]] = {
    "minun": _attr("minun_mlir.dialects.minun", "Minun"),
    "num": _attr("minun_mlir.dialects.num", "Num"),
    "cemit": _attr("minun_mlir.dialects.cemit", "Cemit"),
}

PASSES: dict[str, Callable[[], type]] = {
    "lower-composite-ops": _attr("minun_mlir.passes.lower_composite_ops", "LowerCompositeOps"),
    "bitwidth-assign": _attr("minun_mlir.passes.bitwidth_assign", "BitwidthAssign"),
    "quantize": _attr("minun_mlir.passes.quantize", "Quantize"),
    "stream-rows": _attr("minun_mlir.passes.stream_rows", "StreamRows"),
    "lower-to-loops": _attr("minun_mlir.lowering.lower_to_loops", "LowerToLoops"),
    "memory-plan": _attr("minun_mlir.passes.memory_plan", "MemoryPlan"),
    "lower-to-emitc": _attr("minun_mlir.lowering.lower_to_emitc", "LowerToEmitC"),
    "select-target-kernels": _attr("minun_mlir.passes.select_target_kernels",
                                   "SelectTargetKernels"),
}

# file extension -> factory of `frontend(stream: IO[bytes], args: argparse.Namespace) -> ModuleOp`
FRONTENDS: dict[str, Callable[[], Callable[..., Any]]] = {
    "sd": _attr("minun_mlir.frontends.seedot", "frontend"),
    "onnx": _attr("minun_mlir.frontends.onnx", "frontend"),
    "tflite": _attr("minun_mlir.frontends.tflite", "frontend"),
}

TARGETS: dict[str, Callable[[], type]] = {
    "c": _attr("minun_mlir.lowering.c_target", "CTarget"),
}


@functools.cache
def multiverse() -> Any:
    """xDSL's dialects, passes and targets of every installed plugin, read once per
    process: each read opens every installed package's metadata (a few ms; minun-opt
    asks three times per run, the tests' warm server once for all its calls)."""
    from xdsl.universe import Universe

    return Universe.get_multiverse()


def import_all() -> None:
    """Import every dialect, pass, frontend and target listed here: what a process that
    forks workers (the tests' warm tool server, the fuzzers) loads once before the fork."""
    for table in (DIALECTS, PASSES, FRONTENDS, TARGETS):
        for factory in table.values():
            factory()


def pass_help() -> str:
    """One line per pass with its options and defaults in pipeline syntax, for
    `minun-opt --help`."""
    lines = []
    for name in sorted(PASSES):
        cls = PASSES[name]()
        spec = str(cls().pipeline_pass_spec(include_default=True))
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        lines.append(f"  {spec}: {doc}")
    return "\n" + "\n".join(lines) if lines else ""
