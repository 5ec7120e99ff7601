"""The compiler's pass pipeline, declared once.

    builtin.module(lower-composite-ops, quantize{...}, lower-to-loops, memory-plan{...},
                   lower-to-emitc)

is what turns an L1 module (from a frontend) into L4 (C as IR, printed by the `c` target).
Every tool runs this one text: users type it (or any prefix of it) into `minun-opt
--pass-pipeline=...`; `minun-compile` and the benchmark build it from their options with
`pipeline_text` (`minun-compile --print-pipeline` shows it) and run it here with
`run_pipeline`, on in-memory IR; the tests do the same. No pass runs another pass: a stage
that needs an earlier one says so in a diagnostic.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError

from minun_mlir import registry
from minun_mlir.diagnostics import error, stage

# The stages, in order. Each takes the level the previous one produced.
STAGES: tuple[str, ...] = (
    "lower-composite-ops",  # L1 -> L1 (primitives only)
    "quantize",  # L1 -> L2
    "lower-to-loops",  # L2 -> L3
    "memory-plan",  # L3 -> L3 (buffers placed in one scratch array)
    "lower-to-emitc",  # L3 -> L4
)


def stage_pass(name: str, **options: object) -> ModulePass:
    """The pass of stage `name` with `options` (pass option names, `-` or `_`)."""
    cls = registry.PASSES[name]()
    known = {f.name for f in fields(cls)}
    args = {k.replace("-", "_"): v for k, v in options.items()}
    unknown = sorted(set(args) - known)
    if unknown:
        raise error(f"{name}: unknown option {', '.join(unknown)} (known: "
                         f"{', '.join(sorted(known))})")
    return cls(**args)


def pipeline_passes(options: dict[str, dict[str, object]] | None = None,
                    start: str = STAGES[0], stop: str = STAGES[-1]) -> tuple[ModulePass, ...]:
    """The passes from stage `start` to `stop`; `options` maps a stage name to its pass
    options. Values (file paths too) go into the passes as they are, never through text."""
    options = options or {}
    unknown = sorted(set(options) - set(STAGES))
    if unknown:
        raise error(f"not a pipeline stage: {', '.join(unknown)}")
    names = STAGES[STAGES.index(start):STAGES.index(stop) + 1]
    return tuple(stage_pass(n, **options.get(n, {})) for n in names)


def pipeline_text(options: dict[str, dict[str, object]] | None = None,
                  start: str = STAGES[0], stop: str = STAGES[-1]) -> str:
    """The pipeline from stage `start` to `stop` as `minun-opt --pass-pipeline` takes it;
    `options` maps a stage name to its pass options (defaults are left out)."""
    specs = [spec_text(p) for p in pipeline_passes(options, start, stop)]
    return f"builtin.module({','.join(specs)})"


# What xDSL's pipeline lexer reads in a string option: \\, \", \n and \t escaped, any
# other character as it is except \r, \f and \v, which it cannot carry at all. Its own
# printer (ArgSpec.__str__) quotes a string without escaping, so a path holding `\"`
# would come back as another path.
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}
_UNSAYABLE = {"\r": "a carriage return", "\f": "a form feed", "\v": "a vertical tab"}


def quote(value: str) -> str:
    """`value` as a pipeline string literal that parses back to exactly `value`."""
    for ch, name in _UNSAYABLE.items():
        if ch in value:
            raise error(f"'{value.encode('unicode_escape').decode()}' holds {name}, which a "
                        "pass pipeline cannot carry; rename the file")
    return '"' + "".join(_ESCAPES.get(ch, ch) for ch in value) + '"'


def spec_text(p: ModulePass) -> str:
    """A pass as pipeline text, `name{opt=value ...}`, every string value quoted so that
    it parses back to itself (file paths travel as values, whatever they hold)."""
    parts = []
    for name, values in p.pipeline_pass_spec().parameters.items():
        if not values:
            parts.append(name)
            continue
        text = [quote(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool)
                else str(v) for v in values]
        parts.append(f"{name}={','.join(text)}")
    return f"{p.name}{{{' '.join(parts)}}}" if parts else p.name


def strip_module_anchor(spec: str) -> str:
    """`builtin.module(a,b{x=1})` -> `a,b{x=1}`; anything else is returned unchanged.

    Also accepts the nested `builtin.module(func.func(a))` form for passes we run on the
    whole module anyway.
    """
    spec = spec.strip()
    while True:
        m = re.fullmatch(r"(?:builtin\.module|func\.func|any)\((.*)\)", spec, re.S)
        if not m:
            return spec
        spec = m.group(1).strip()


def parse_pipeline(text: str, available: dict[str, Callable[[], type[ModulePass]]] | None = None
                   ) -> tuple[ModulePass, ...]:
    """Pipeline text (xDSL's `a,b{x=1}` or MLIR's `builtin.module(...)`) -> passes, with a
    diagnostic (not a traceback) for unknown passes and bad options."""
    spec = strip_module_anchor(text)
    try:
        return PassPipeline.parse_spec(available or registry.PASSES, spec).passes
    except (ValueError, TypeError, ArgSpecParseError) as e:
        hint = ("; string values are written in double quotes, e.g. data=\"train.npy\""
                if isinstance(e, ArgSpecParseError) else "")
        raise error(f"bad pass pipeline '{text}': {e}{hint}") from None


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: a pass builds tens of thousands of IR objects
    (all linked in cycles: ops, their results and uses), and each collection the
    allocations trigger scans them all again, for nothing, since a pass frees few. What
    it drops is collected after it. Nothing a pass computes depends on it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def run_pipeline(module: ModuleOp, passes: str | Sequence[ModulePass],
                 keep: Sequence[str] = ()) -> dict[str, ModuleOp]:
    """Run `passes` (text or parsed) on `module` in place. Returns, for each pass named in
    `keep`, a clone of the module right after it ran (e.g. keep=("quantize",) gives the
    L2 module that the bit-exact evaluator runs)."""
    if isinstance(passes, str):
        passes = parse_pipeline(passes)
    kept: dict[str, ModuleOp] = {}
    ctx = Context()
    for p in passes:
        with stage(p.name), gc_paused():
            p.apply(ctx, module)
        if p.name in keep:
            kept[p.name] = module.clone()
    return kept


def lower_to_l2(module: ModuleOp, **quantize: object) -> ModuleOp:
    """L1 -> L2 through the declared stages (lower-composite-ops, quantize{**quantize}):
    a new module; `module` is left as it was."""
    l2 = module.clone()
    run_pipeline(l2, pipeline_text({"quantize": quantize}, stop="quantize"))
    return l2


def lower_l2(module: ModuleOp, stop: str = "lower-to-emitc", requantize_tables: bool = False,
             stream_rows: bool = False, **memory_plan: object) -> ModuleOp:
    """L2 -> L4 through the declared stages after quantize (lower-to-loops
    {requantize-tables stream-rows}, memory-plan{**memory_plan}, lower-to-emitc), or only up
    to stage `stop`: a new module; `module` is left as it was."""
    options: dict[str, dict[str, object]] = {"memory-plan": memory_plan} if memory_plan else {}
    loops = {k: True for k, v in (("requantize_tables", requantize_tables),
                                  ("stream_rows", stream_rows)) if v}
    if loops:
        options["lower-to-loops"] = loops
    first, *rest = pipeline_passes(options, start="lower-to-loops", stop=stop)
    with stage(first.name), gc_paused():  # a new module already: no clone to lower in place
        out = first.lowered(module)
    run_pipeline(out, rest)
    return out
