"""The SeeDot-language frontend: `.sd` program + weights -> L1 (`minun`) IR.

    load_program(path, weights=None) -> ModuleOp      # weights: model dir or .npz
    compile_source(text, filename, params) -> ModuleOp  # params: NAME -> ndarray
    check_source(text, filename) -> Checked             # parse + type-check only
    frontend(stream, args)                              # the minun-opt hook for `.sd`

Stages, one module each: `lexer` -> `parser` (AST in `ast`) -> `typecheck` -> `weights`
-> `lower`. Every user error is a `CompileError` of located diagnostics; an invalid IR
produced from a checked program would be a frontend bug and is reported as an internal error
(still a `MinunError`, never a traceback). See docs/seedot-frontend.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException

from minun_mlir.diagnostics import CompileError, MinunError, error
from minun_mlir.inputs import read_input
from minun_mlir.ir_text import verify_located

from .lower import lower_program
from .parser import parse_source
from .source import Source
from .typecheck import Checked, RealType, check_collect, check_program
from .weights import WeightError, Weights

__all__ = ["check_source", "compile_source", "compile_with_weights", "frontend",
           "load_program", "Weights"]


def check_source(text: str, filename: str = "<string>") -> Checked:
    """Parse and type-check; raises CompileError with every error found."""
    source = Source(text, filename)
    with _deep_recursion():
        return check_program(source, parse_source(source))


@contextmanager
def _deep_recursion() -> Iterator[None]:
    """Each stage walks the tree recursively, and a program is one expression nested once per
    `let`: a few hundred lets would pass Python's default limit of 1000 frames."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, RECURSION_LIMIT))
    try:
        yield
    except RecursionError:
        raise error("the program is nested too deeply to compile (more than about "
                         f"{RECURSION_LIMIT // 10} levels of let/parentheses)") from None
    finally:
        sys.setrecursionlimit(old)


RECURSION_LIMIT = 20000


def compile_with_weights(text: str, filename: str, weights: Weights) -> ModuleOp:
    """Parse, check, load every declared parameter and lower. Type errors and weight errors
    are reported together (both are known once the declarations are)."""
    with _deep_recursion():
        return _compile(text, filename, weights)


def _compile(text: str, filename: str, weights: Weights) -> ModuleOp:
    source = Source(text, filename)
    root = parse_source(source)
    checked, diagnostics = check_collect(source, root)
    arrays = {}
    missing = []
    for binding in checked.params:
        if not isinstance(binding.type, RealType):
            continue  # its declaration is in error (already reported): nothing to load
        try:
            arrays[binding] = weights.load(binding.name, binding.decl.shape,
                                           (binding.decl.lo, binding.decl.hi))
        except WeightError as e:
            diagnostics.append(source.diag(binding.pos, str(e)))
            missing.append(binding)
    if len(missing) > 2 and not arrays and weights.directory is not None:
        # Nothing found at all: the directory is wrong, one message says so.
        diagnostics = [d for d in diagnostics if "no weights for parameter" not in d.message]
        names = ", ".join(f"{b.name}.npy" for b in missing[:4])
        diagnostics.append(source.diag(missing[0].pos, (
            f"no weights for any of the {len(missing)} parameters in {weights.directory}/ "
            f"(looked for {names}, ...): give the model directory or .npz with --weights")))
    if diagnostics:
        raise CompileError(sorted(diagnostics, key=lambda d: (d.loc.line, d.loc.col)))
    try:
        module = lower_program(checked, arrays)
        verify_located(module)
    except VerifyException as e:
        raise MinunError(f"{filename}: internal error in the SeeDot frontend, please report: "
                         f"{e}") from None
    return module


def compile_source(text: str, filename: str = "<string>",
                   params: Mapping[str, np.ndarray] | None = None) -> ModuleOp:
    """Compile program text with its parameters given as arrays (any shape with the declared
    number of elements)."""
    return compile_with_weights(text, filename, Weights(arrays=params or {}))


def load_program(path: str | os.PathLike, weights: str | os.PathLike | None = None,
                 synthetic: int | None = None) -> ModuleOp:
    """Compile a `.sd` file; weights from `weights` (a model directory or an `.npz`),
    by default the program's own directory, or drawn inside each parameter's declared
    range with seed `synthetic` (to size a model before it is trained)."""
    path = Path(path)
    try:
        text = read_input(path, "the program").decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(f"the program is not UTF-8 text ({e.reason} at byte "
                         f"{e.start})", at=path) from None
    if synthetic is not None:
        store = Weights(synthetic=synthetic)
    else:
        store = Weights.from_path(weights if weights is not None else default_weights(path))
    return compile_with_weights(text, str(path), store)


def default_weights(program: Path) -> Path:
    """The program's directory, or `<dir>/<stem>/` beside it when that exists (the layout of
    examples/: `protonn.sd` with its weights in `protonn/`)."""
    beside = program.parent / program.stem
    return beside if beside.is_dir() else program.parent


def frontend(stream: IO[bytes], args: argparse.Namespace) -> ModuleOp:
    """minun-opt's `.sd` reader: `--weights` or the program's directory."""
    name = getattr(args, "input_file", None) or "<stdin>"
    data = stream.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(f"the program is not UTF-8 text ({e.reason} at byte "
                         f"{e.start})", at=name) from None
    weights = getattr(args, "weights", None)
    if weights is None:
        weights = default_weights(Path(name)) if name != "<stdin>" else Path(".")
    return compile_with_weights(text, name, Weights.from_path(weights))
