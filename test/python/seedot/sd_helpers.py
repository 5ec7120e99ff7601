"""Shared pieces of the SeeDot frontend tests: paths, random weights for a program's
declarations, and a way to read a classifier's scores instead of its label."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp

from minun_mlir.dialects import minun
from minun_mlir.frontends.seedot import ast
from minun_mlir.frontends.seedot.parser import parse

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
BENCHMARKS = ROOT / "benchmarks" / "models"
USPS = ROOT / "benchmarks" / "real" / "fastgrnn-lr-usps"  # copy of ../shared/data


def declarations(text: str) -> dict[str, tuple[tuple[int, ...], float, float]]:
    """NAME -> (shape, lo, hi) of every `let NAME = (...) in [lo, hi]` in the program."""
    found = {}
    stack = [parse(text)]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Let) and isinstance(node.value, ast.Decl):
            found[node.name] = (node.value.shape, node.value.lo, node.value.hi)
        stack.extend(ast.children(node))
    return found


def random_params(text: str, seed: int = 0, limit: int = 100_000) -> dict[str, np.ndarray]:
    """Random weights for every declared parameter (not X) of at most `limit` values."""
    rng = np.random.default_rng(seed)
    return {name: rng.uniform(min(lo, hi), max(lo, hi), size=shape).astype(np.float32)
            for name, (shape, lo, hi) in declarations(text).items()
            if name != "X" and math.prod(shape) <= limit}


def random_inputs(text: str, batch: int, seed: int = 1) -> np.ndarray:
    """A batch (batch, *shape) of inputs uniform in X's declared range."""
    shape, lo, hi = declarations(text)["X"]
    return np.random.default_rng(seed).uniform(lo, hi, size=(batch, *shape))


def scores_module(module: ModuleOp) -> ModuleOp:
    """The same program returning the operand of its final argmax/sgn (its real scores)."""
    module = module.clone()
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    ret = main.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    producer = ret.operands[0].owner
    if isinstance(producer, minun.ArgMaxOp | minun.SgnOp):
        ret.operands = [producer.input]
        main.function_type = FunctionType.from_lists([], [producer.input.type])
    return module
