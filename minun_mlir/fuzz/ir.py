"""Textual-IR fuzzer: the L1 and L2 text `minun-opt` prints for the examples, damaged
(truncation, byte flips, lines deleted, duplicated or swapped, types, shapes, SSA names and
attributes edited) and run through `minun-opt` with a pipeline that fits the level, a
pipeline that does not, or a damaged pipeline string."""

from __future__ import annotations

import contextlib
import functools
import io
import random
import re

from minun_mlir.fuzz.cases import ROOT, Case, choose_weighted, damage_bytes, damage_lines

EXAMPLES = {"protonn": "protonn-digits10", "bonsai": "bonsai-digits-binary",
            "fastgrnn": "fastgrnn-digits10", "lenet": "lenet-digits10",
            "rnnpool": None, "fastgrnn_lr_usps": None}
L1_STAGES = ["lower-composite-ops", "quantize{bits=16}", "lower-to-loops", "memory-plan",
             "lower-to-emitc"]


def _opt(argv: list[str]) -> str:
    from minun_mlir.tools.minun_opt import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    if rc:
        raise RuntimeError(f"minun-opt {' '.join(argv)}: {err.getvalue()}")
    return out.getvalue()


@functools.cache
def texts() -> list[tuple[str, str, str]]:
    """(name, level, text): L1 of every example, L2 at 16 and 8 bits of the profiled ones."""
    found = []
    for name, suite in EXAMPLES.items():
        sd = str(ROOT / "examples" / f"{name}.sd")
        found.append((name, "L1", _opt([sd])))
        if suite:
            data = ROOT / "benchmarks" / "models" / suite / "train.npy"
            for bits in (16, 8):
                found.append((f"{name}@{bits}", "L2", _opt([sd, (
                    f'--pass-pipeline=builtin.module(lower-composite-ops,'
                    f'quantize{{bits={bits} data="{data}"}})')])))
    return found


EDITS = [
    (r"tensor<(\d+)x", lambda r, m: f"tensor<{r.choice([0, 1, 3, 99999])}x"),
    (r"!num\.fixed<(\d+), (-?\d+)>",
     lambda r, m: f"!num.fixed<{r.choice([0, 1, 7, 8, 16, 32, 64, -4])}, "
                  f"{r.choice([-40, -1, 0, 15, 70])}>"),
    (r"\bf32\b", lambda r, m: r.choice(["i32", "f64", "i1", "index", "f16"])),
    (r"\bi32\b", lambda r, m: r.choice(["f32", "i8", "i64"])),
    (r"%[A-Za-z_0-9]+", lambda r, m: r.choice(["%undefined", "%0", "%X", "%"])),
    (r"num\.rounding = \"\w+\"", lambda r, m: r.choice(
        ['num.rounding = "bogus"', "num.rounding = 3", 'num.rounding = ""'])),
    (r"num\.overflow = \"\w+\"", lambda r, m: 'num.overflow = "maybe"'),
    (r"dense<\"0x[0-9A-F]+", lambda r, m: m.group()[:max(9, len(m.group()) // 2)]),
    (r"dense<\"0x[0-9A-F]{4}", lambda r, m: m.group()[:-4] + r.choice(["ZZZZ", "", "0"])),
    (r"-?\d+\.\d+(?:e[-+]?\d+)?", lambda r, m: r.choice(["nan", "inf", "1e400", "-0.0",
                                                         "0x7FC00000", "1.0"])),
    (r"\"[A-Za-z]\w*\"", lambda r, m: r.choice(['"', '"\\', '"\\q"', '""', '"X\n"'])),
    (r"minun\.\w+|num\.\w+", lambda r, m: r.choice(["minun.frob", "num.frob", "func.call",
                                                   "arith.addi", "minun.add"])),
    (r"\(", lambda r, m: ""),
    (r"\{", lambda r, m: ""),
    (r"\}", lambda r, m: "}}"),
]


def damage_ir(rng: random.Random, text: str) -> tuple[str, str]:
    kind = choose_weighted(rng, [(3, "edit"), (1, "bytes"), (1, "lines"), (1, "truncate")])
    if kind == "truncate":
        at = rng.randrange(len(text))
        return text[:at], f"truncated at {at}"
    if kind == "bytes":
        data, how = damage_bytes(rng, text.encode("utf-8", "surrogateescape"))
        return data.decode("utf-8", "surrogateescape"), how
    if kind == "lines":
        lines = text.split("\n")
        i = rng.randrange(len(lines))
        how = rng.choice(["delete", "dup", "swap"])
        return "\n".join(damage_lines(rng, lines, i, how)), f"line {i + 1} {how}"
    pattern, replace = rng.choice(EDITS)
    matches = list(re.finditer(pattern, text))
    if not matches:
        return text, f"no match for {pattern}"
    m = rng.choice(matches)
    new = replace(rng, m)
    return text[:m.start()] + new + text[m.end():], f"{m.group()[:30]!r} -> {new[:30]!r}"


BAD_PIPELINES = [
    "builtin.module(frobnicate)", "builtin.module(quantize{bits=7})",
    "builtin.module(quantize{bits=sixteen})", "builtin.module(quantize{bits=16 bits=8})",
    "builtin.module(quantize{data=\"/nonexistent/train.npy\"})",
    "builtin.module(quantize{data=nope})", "builtin.module(quantize{rounding=\"up\"})",
    "builtin.module(quantize{bits=16)", "builtin.module(lower-to-loops",
    "builtin.module()", "", ",,,", "builtin.module(lower-composite-ops,,quantize)",
    "func.func(quantize)", "builtin.module(memory-plan{planner=\"magic\"})",
    "builtin.module(quantize{bits=16 scales=\"maxscale\" maxscale=-99})",
    "builtin.module(quantize{bits=99999999999999999999})", "builtin.module(quantize{})",
    "builtin.module(lower-to-emitc)", "builtin.module(lower-to-loops,lower-to-loops)",
    "builtin.module(quantize{bits=16},quantize{bits=8})", "{}", "((((", "quantize{bits=\"",
]


def pipeline_for(rng: random.Random, level: str) -> tuple[list[str], str, bool]:
    kind = choose_weighted(rng, [(2, "none"), (4, "fits"), (2, "wrong-level"), (2, "bad")])
    if kind == "none":
        return [], "parse only", False
    if kind == "bad":
        p = rng.choice(BAD_PIPELINES)
        return [f"--pass-pipeline={p}"], f"pipeline {p!r}", True
    stages = L1_STAGES if level == "L1" else L1_STAGES[2:]
    if kind == "wrong-level":
        stages = L1_STAGES[2:] if level == "L1" else L1_STAGES[:2]
    upto = stages[:rng.randint(1, len(stages))]
    if "quantize{bits=16}" in upto:
        upto[upto.index("quantize{bits=16}")] = f"quantize{{bits={rng.choice([8, 16, 32])}}}"
    argv = [f"--pass-pipeline=builtin.module({','.join(upto)})"]
    if upto[-1] == "lower-to-emitc" and rng.random() < 0.5:
        argv += ["-t", "c"]
    return argv, f"pipeline {','.join(upto)}", False


def make_case(rng: random.Random, index: int) -> Case:
    name, level, text = rng.choice(texts())
    what = f"{name} {level}"
    for _ in range(choose_weighted(rng, [(2, 0), (6, 1), (2, 2), (1, 4)])):
        text, how = damage_ir(rng, text)
        what += f"; {how}"
    argv, how, option_error = pipeline_for(rng, level)
    what += f"; {how}"
    extra = rng.choice([[], [], [], ["--print-op-generic"], ["--split-input-file"],
                        ["--verify-diagnostics"]])
    files = {"model.mlir": text.encode("utf-8", "surrogateescape")}
    return Case("ir", index, "minun-opt", ["{dir}/model.mlir", *argv, *extra], files,
                what + ("; " + extra[0] if extra else ""), option_error=option_error)
