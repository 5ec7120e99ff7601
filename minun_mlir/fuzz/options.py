"""Options fuzzer: pairs and triples of `minun-compile` options on a small SeeDot program
and a small ONNX model, checked against a declared model of what each option does.

Each option value declares the text it must put in `--print-pipeline`'s output when the
combination is accepted (`quantize{bits=8}`, `memory-plan{planner="shiftry"}`; nothing
for a default or for an option the pipeline does not carry, such as --target), and
whether it is valid on its own. A case is accepted with every declared text in the
output, or refused with one line that names one of its options; an option that is
accepted and changes nothing, a refusal that names none, or a lone valid option refused
is a defect (`ignored`). `--print-pipeline` stops before any model is read, so a case
costs milliseconds: the option rules must hold without the model (minun_mlir/tools/
compile_options.py checks them before any work).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

import numpy as np

from minun_mlir.fuzz.cases import ROOT, Case
from minun_mlir.fuzz.seedot import npy

SEEDOT = ROOT / "examples" / "fastgrnn_lr_usps.sd"  # read only by --assign's check below
ONNX = ROOT / "benchmarks" / "models" / "lenet-digits10" / "model.onnx"


@dataclass(frozen=True)
class Value:
    """One value of an option: its argv, the text an accepted compile shows, and whether
    the option alone (on the default configuration) must be accepted."""

    argv: tuple[str, ...]
    shows: str = ""  # "" : nothing to see in the pipeline (a default, or not a pass option)
    alone: bool = True


def values(flag: str, template: str, *items, default=None, invalid=()) -> list[Value]:
    return [Value((flag, str(v)), "" if v == default else template.format(v=v),
                  v not in invalid) for v in items]


def switch(flag: str, shows: str, alone: bool = True) -> list[Value]:
    return [Value((flag,), shows, alone)]


# flag -> its values. `alone=False`: refused on the default configuration (fixed16,
# data-driven, SeeDot, no --search or --run).
OPTIONS: dict[str, list[Value]] = {
    "--repr": values("--repr", 'repr="{v}"', "fixed", "float32", "posit", "bfloat16",
                     "zero-skew", default="fixed"),
    "--bits": values("--bits", "bits={v}", 8, 12, 16, 32, default=16, invalid=(12,)),
    "--es": values("--es", "es={v}", 0, 1, 2, default=2, invalid=(0, 1, 2)),
    "--scales": values("--scales", 'scales="{v}"', "maxscale", "data-driven",
                       default="data-driven"),
    "--maxscale": values("--maxscale", "maxscale={v}", 3, 20, -1, invalid=(3, 20, -1)),
    "--rounding": values("--rounding", 'rounding="{v}"', "floor", "nearest", "trunc",
                         default="trunc"),
    "--overflow": values("--overflow", 'overflow="{v}"', "saturate", "wrap", default="wrap"),
    "--input-scale": values("--input-scale", "input_scale={v}", 5, 99, -3, invalid=(99,)),
    "--demote": [Value(("--demote", "W1"), 'demote="W1"'),
                 Value(("--demote", "W1,U1"), 'demote="W1","U1"'),
                 Value(("--demote", "W1,,U1"), "", False)],
    "--input-bits": values("--input-bits", "input_bits={v}", 8, 16, 32),
    "--input-scales": values("--input-scales", 'input_scales="{v}"', "auto", "tensor",
                             "feature", default="auto", invalid=("feature",)),  # needs --train
    "--param-bits": values("--param-bits", "param_bits={v}", 8, 16, 32),
    "--weight-bits": values("--weight-bits", "weight_bits={v}", 4),
    "--per-channel": switch("--per-channel", "per_channel=true"),
    "--no-quire": switch("--no-quire", "quire=false", False),
    "--bias-correction": switch("--bias-correction", "bias_correction=true", False),
    "--weight-rounding": values("--weight-rounding", 'weight_rounding="{v}"', "gptq",
                                "nearest", default="nearest", invalid=("gptq",)),
    "--planner": values("--planner", 'planner="{v}"', "naive", "shiftry", "optimal",
                        "greedy", default="greedy"),
    "--input-in-scratch": switch("--input-in-scratch", "input_in_scratch=true"),
    "--output-in-scratch": switch("--output-in-scratch", "output_in_scratch=true"),
    "--stream-rows": switch("--stream-rows", "stream_rows=true"),
    "--ram-budget": values("--ram-budget", "budget={v}", 0, 4096, -1, default=0,
                           invalid=(-1,)),
    "--evaluator": values("--evaluator", 'evaluator="{v}"', "numpy", "native", "auto",
                          default="auto"),
    "--train": [Value(("--train", "{dir}/train.npy"), 'data="train.npy"')],
    "--test": [Value(("--test", "{dir}/train.npy"))],
    "--target": values("--target", "", "avr", "cortex-m4", "x86"),
    "--dim": [Value(("--dim", "N=1"), "", False), Value(("--dim", "N=0"), "", False)],
    "--input-range": [Value(("--input-range", "0,1"), "", False)],
    "--synthetic-weights": [Value(("--synthetic-weights", "3"))],
    "--soft-limit": [Value(("--soft-limit", "2"), "", False)],
    "--explore-input-scale": switch("--explore-input-scale", "", False),
    "--search-report": [Value(("--search-report", "{dir}/report"), "", False)],
    "--max-drop": [Value(("--max-drop", "1"), "", False)],
    "--max-inputs": [Value(("--max-inputs", "5"), "", False),
                     Value(("--max-inputs", "0"), "", False)],
    "--timeout": [Value(("--timeout", "30"), "", False)],
    "--opt": [Value(("--opt", "speed"), "", False)],
    "--run": switch("--run", "", False),
    "--profile": switch("--profile", "", False),
    "--format": values("--format", "", "c", "arduino", "cmake", invalid=("arduino", "cmake")),
    "--regression": switch("--regression", ""),
    "--json": [Value(("--json", "{dir}/report.json")), Value(("--json", ""), "", False)],
    "--assign": [Value(("--assign", "{dir}/assignment.json"), 'assign="assignment.json"'),
                 Value(("--assign", "{dir}/damaged.json"), "", False)],
}
# On the ONNX model these are the other way round.
ONNX_ALONE = {("--dim", "N=1"): True, ("--input-range", "0,1"): True,
              ("--synthetic-weights", "3"): False}


def assignment_files(rng: random.Random) -> dict[str, bytes]:
    """A valid assignment for the SeeDot program (16 bits, W1 at 8) and a damaged one."""
    good = {"format": "minun-bitwidth-assignment", "version": 1, "bits": 16,
            "tensors": {"W1": {"bits": 8, "scale": None}}}
    damaged = rng.choice([
        b"\xff\xfe not json", b"{", json.dumps(good | {"bits": "abc"}).encode(),
        json.dumps(good | {"tensors": [1]}).encode(),
        json.dumps(good | {"tensors": {"W1": {"bits": 8, "scale": -1000}}}).encode(),
        json.dumps(good | {"format": "other"}).encode()])
    return {"assignment.json": json.dumps(good).encode(), "damaged.json": damaged}


def make_case(rng: random.Random, index: int) -> Case:
    onnx = rng.random() < 0.25
    model = ONNX if onnx else SEEDOT
    flags = rng.sample(sorted(OPTIONS), rng.choice([1, 2, 2, 3, 3]))
    argv, expect, chosen = [str(model), "--print-pipeline"], [], []
    valid = True
    for flag in flags:
        value = rng.choice(OPTIONS[flag])
        argv += list(value.argv)
        chosen.append(" ".join(value.argv) or flag)
        if value.shows:
            expect.append(value.shows)
        alone = ONNX_ALONE.get(value.argv, value.alone) if onnx else value.alone
        valid = valid and alone
    # the assignment's names are the SeeDot program's: on the ONNX model they are refused
    # when the model is read, which --print-pipeline does not do
    known = len(flags) == 1 and not (onnx and "--assign" in flags)
    files = {"train.npy": npy(np.zeros((2, 3), np.float32))} | assignment_files(rng)
    return Case("options", index, "minun-compile", argv, files,
                f"{model.suffix} " + " ".join(chosen), option_error=True,
                expect=tuple(expect), flags=tuple(flags), valid=valid if known else None)
