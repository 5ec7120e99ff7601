"""Public API: build a program or a model for a target, run it, and report.

- build_and_run(c_files, target, ...) for any program written against minun_target.h
  (kernels, calibration loops): returns its output, latencies, sizes and stack.
- run_model(model_dir, target, inputs, ...) for a model directory following the model.h
  contract: generates the harness main, runs every input and returns labels, outputs,
  per-input latencies and sizes as a RunResult (one JSON record per model x target x
  configuration via RunResult.to_record()).
"""

from __future__ import annotations

import contextlib
import statistics
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .boards import Board, get_board, opt_cflags
from .build import BoardOverflow, LinkedProgram, compile_sources, link_program
from .errors import ContractError, SimulationError, TargetError
from .harness import INPUT_SYMBOL, check_inputs, harness_source, parse_model_header, parse_results
from .layers import ModelLines, write_layer_map
from .simulate import SimOutput, simulate
from .toolchain import last_output

# Embedded inputs per build are capped so that the generated C compiles in well under a
# second; more inputs are run in several builds of the same model objects.
MAX_INPUT_BYTES_PER_BUILD = 256 * 1024


@dataclass
class ProgramResult:
    """What one build_and_run produced."""

    name: str
    target: str
    output: str  # the program's output without the harness's meta lines
    exit_code: int
    latency_unit: str  # "cycles" (avr), "instructions" (cortex-m) or "ns" (x86)
    latencies: list[int]  # one per start/end marker pair, in program order
    flash_bytes: int
    ram_bytes: int
    stack_bytes: int | None  # high-water mark; None on x86
    build_seconds: float
    run_seconds: float


@dataclass
class RunResult:
    """One model run on one target: a record of the results JSON."""

    model: str
    target: str
    config: str
    board: str
    flash_bytes: int  # .text + .data, without the embedded test inputs
    ram_bytes: int  # .data + .bss (includes the harness's input and output buffers)
    stack_bytes: int | None
    flash_budget: int | None
    ram_budget: int | None
    outputs: np.ndarray  # (N, MINUN_OUTPUT_SIZE), dtype of minun_output_t
    labels: np.ndarray  # (N,) values returned by minun_predict
    expected_labels: np.ndarray | None
    latency_unit: str
    latencies: list[int]  # per input
    build_seconds: float
    run_seconds: float
    builds: int = 1
    # a per-layer profile (run_model's `layers`): per input, its latency split by bucket
    layers: list[list[int]] | None = None

    @property
    def latency_median(self) -> float:
        return float(statistics.median(self.latencies))

    @property
    def accuracy(self) -> float | None:
        if self.expected_labels is None:
            return None
        return float(np.mean(self.labels == self.expected_labels))

    def to_record(self) -> dict:
        """A JSON-serialisable dict (floats exact: float32 widens losslessly to double)."""
        median = self.latency_median
        return {
            "model": self.model,
            "target": self.target,
            "config": self.config,
            "board": self.board,
            "flash_bytes": self.flash_bytes,
            "ram_bytes": self.ram_bytes,
            "stack_bytes": self.stack_bytes,
            "flash_budget": self.flash_budget,
            "ram_budget": self.ram_budget,
            "n_inputs": len(self.labels),
            "labels": self.labels.tolist(),
            "expected_labels": None if self.expected_labels is None
            else self.expected_labels.tolist(),
            "accuracy": self.accuracy,
            "outputs": self.outputs.tolist(),
            "latency": {
                "unit": self.latency_unit,
                "exact": self.latency_unit != "ns",
                "median": int(median) if median.is_integer() else median,
                "per_input": list(self.latencies),
            },
            "build_seconds": round(self.build_seconds, 4),
            "run_seconds": round(self.run_seconds, 4),
            "builds": self.builds,
        }


@contextlib.contextmanager
def _work_dir(work_dir: str | Path | None) -> Iterator[Path]:
    if work_dir is not None:
        path = Path(work_dir)
        try:  # a name over 255 bytes (ENAMETOOLONG), a file in the way, ...
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise TargetError(f"error: cannot create the work directory {path}: "
                              f"{e.strerror}") from None
        yield path
    else:
        with tempfile.TemporaryDirectory(prefix="minun-run-") as tmp:
            yield Path(tmp)


def build_and_run(c_files: list[str | Path], target: str, *, include_dirs=(),
                  defines: dict[str, str] | None = None, cflags=(), name: str | None = None,
                  flash_budget: int | None = None, ram_budget: int | None = None,
                  timeout: float = 60.0, work_dir: str | Path | None = None,
                  check_exit: bool = True) -> ProgramResult:
    """Compile c_files (plus the target support code), link, check budgets and simulate.

    Programs include "minun_target.h" for output and latency markers. Budgets default to
    the board's memory. With check_exit, a non-zero exit code raises SimulationError.
    """
    board = get_board(target)
    c_files = [Path(f) for f in c_files]
    name = name or c_files[0].stem
    with _work_dir(work_dir) as wd:
        start = time.perf_counter()
        objects = compile_sources(board, c_files, wd, [Path(d) for d in include_dirs],
                                  defines, list(cflags))
        program = link_program(board, objects, wd / f"{name}.elf", name, flash_budget,
                               ram_budget)
        build_seconds = time.perf_counter() - start
        sim = simulate(board, program.elf, name, timeout)
    if check_exit and sim.exit_code != 0:
        raise SimulationError(f"error: {name} exited with code {sim.exit_code} on {target}."
                              + last_output(sim.text))
    return ProgramResult(name, target, sim.text, sim.exit_code, board.latency_unit,
                         sim.latencies, program.flash_bytes, program.ram_bytes,
                         sim.stack_bytes, build_seconds, sim.seconds)


def _model_sources(model_dir: Path) -> list[Path]:
    if not (model_dir / "model.h").is_file() or not (model_dir / "model.c").is_file():
        raise ContractError(f"error: {model_dir} is not a model directory: it must contain "
                            "model.h and model.c (see docs/targets.md for the contract).")
    return sorted(model_dir.glob("*.c"))


class _ModelBuild:
    """Compiles the model once, then links and runs it with batches of embedded inputs."""

    def __init__(self, board: Board, model_dir: Path, name: str, wd: Path, cflags,
                 flash_budget, ram_budget, timeout: float, repeat: int,
                 layers: ModelLines | None = None):
        self.board, self.name, self.wd, self.timeout = board, name, wd, timeout
        self.layers = layers
        if layers is not None:  # debug lines only: -g changes no instruction (layers.py)
            cflags = [*cflags, "-gdwarf-4"]  # avr-gcc 5.4: -g alone is STABS
        self.budgets = (flash_budget, ram_budget)
        self.repeat = repeat
        self.cflags = list(cflags)
        self.builds = 0  # successful links (a link that overflowed the board is retried)
        self.attempts = 0
        start = time.perf_counter()
        self.model_objects = compile_sources(board, _model_sources(model_dir), wd,
                                             [model_dir], None, self.cflags)
        self.model_dir = model_dir
        self.build_seconds = time.perf_counter() - start
        self.run_seconds = 0.0

    def run_batch(self, inputs: np.ndarray) -> tuple[LinkedProgram, SimOutput]:
        start = time.perf_counter()
        self.attempts += 1
        k = self.attempts
        src = self.wd / f"harness_{k}.c"
        src.write_text(harness_source(inputs, self.repeat))
        harness_dir = self.wd / f"harness_{k}"
        harness_dir.mkdir(exist_ok=True)
        objs = compile_sources(self.board, [src], harness_dir, [self.model_dir], None,
                               self.cflags)
        program = link_program(self.board, objs + self.model_objects,
                               self.wd / f"{self.name}_{k}.elf", self.name, *self.budgets,
                               exclude_from_flash=(INPUT_SYMBOL,))
        self.builds += 1
        layer_map = None
        if self.layers is not None:
            layer_map = write_layer_map(self.board, program.elf, self.layers, objs[0],
                                        src.name, self.wd / f"layers_{k}.txt")
        self.build_seconds += time.perf_counter() - start
        sim = simulate(self.board, program.elf, self.name, self.timeout, layer_map)
        self.run_seconds += sim.seconds
        return program, sim


def run_model(model_dir: str | Path, target: str, inputs: np.ndarray, *,
              labels: np.ndarray | None = None, name: str | None = None,
              config: str = "default", flash_budget: int | None = None,
              ram_budget: int | None = None, timeout: float = 60.0, x86_repeat: int = 5,
              cflags=(), work_dir: str | Path | None = None, opt: str = "size",
              layers: ModelLines | None = None) -> RunResult:
    """Run minun_predict of the model in model_dir on every row of inputs on a target.

    opt is "size" (the board's flags: -Os on the microcontrollers) or "speed" (-O2).
    layers (simulated targets only): split each input's latency by the lines of model.c
    (targets/layers.py; RunResult.layers), the program built with -g and unchanged.

    inputs holds raw minun_input_t values, shape (N, MINUN_INPUT_SIZE). labels, if given,
    are the expected labels (reported as accuracy, not an error). On x86 every input is
    timed x86_repeat times and the minimum is kept, to reduce wall-clock noise.
    """
    board = get_board(target)
    cflags = [*opt_cflags(opt), *cflags]
    model_dir = Path(model_dir)
    inputs = check_inputs(inputs)
    if labels is not None:
        labels = np.asarray(labels).reshape(-1).astype(np.int64)
        if len(labels) != len(inputs):
            raise ContractError(f"error: {len(labels)} labels for {len(inputs)} inputs.")
    name = name or model_dir.resolve().name
    repeat = x86_repeat if board.kind == "x86" else 1
    flash_budget = board.flash_bytes if flash_budget is None else flash_budget
    ram_budget = board.ram_bytes if ram_budget is None else ram_budget
    row_bytes = inputs.shape[1] * inputs.dtype.itemsize
    results = []  # (labels, outputs, latencies, stack) per build
    with _work_dir(work_dir) as wd:
        mb = _ModelBuild(board, model_dir, name, wd, cflags, flash_budget, ram_budget,
                         timeout, repeat, layers)
        first = _first_batch_size(board, len(inputs), row_bytes)
        try:
            program, sim = mb.run_batch(inputs[:first])
        except BoardOverflow:
            if first == 1:
                raise
            first = 1  # the test inputs, not the model, overflowed the board's flash
            program, sim = mb.run_batch(inputs[:first])
        results.append(_collect(sim, inputs[:first], name, target, repeat))
        per_build = _later_batch_size(board, program, row_bytes)
        for lo in range(first, len(inputs), per_build):
            batch = inputs[lo:lo + per_build]
            results.append(_collect(mb.run_batch(batch)[1], batch, name, target, repeat))
    stacks = [r[3] for r in results if r[3] is not None]
    return RunResult(
        model=name, target=target, config=config, board=board.description,
        flash_bytes=program.flash_bytes, ram_bytes=program.ram_bytes,
        stack_bytes=max(stacks) if stacks else None,
        flash_budget=flash_budget, ram_budget=ram_budget,
        outputs=np.concatenate([r[1] for r in results]),
        labels=np.concatenate([r[0] for r in results]), expected_labels=labels,
        latency_unit=board.latency_unit, latencies=[x for r in results for x in r[2]],
        build_seconds=mb.build_seconds, run_seconds=mb.run_seconds, builds=mb.builds,
        layers=None if layers is None else [x for r in results for x in r[4]],
    )


def _collect(sim: SimOutput, batch: np.ndarray, name: str, target: str, repeat: int):
    """Check one build's run and decode its labels, outputs and per-input latencies."""
    out_dtype = parse_model_header(sim.meta, batch)
    if sim.exit_code != 0:
        raise SimulationError(f"error: {name} exited with code {sim.exit_code} on {target}."
                              + last_output(sim.text))
    labels, outputs = parse_results(sim.text, len(batch), out_dtype)
    if len(sim.latencies) != len(batch) * repeat:
        raise SimulationError(f"error: expected {len(batch) * repeat} latency measurements "
                              f"from {name} on {target}, got {len(sim.latencies)}.")
    latencies = [min(sim.latencies[i * repeat:(i + 1) * repeat]) for i in range(len(batch))]
    return labels, outputs, latencies, sim.stack_bytes, sim.layers or []


def _first_batch_size(board: Board, n: int, row_bytes: int) -> int:
    """Inputs for the first build: all of them if they surely fit next to the model."""
    limit = MAX_INPUT_BYTES_PER_BUILD
    if board.flash_bytes is not None:
        limit = min(limit, board.flash_bytes // 4)
    return max(1, min(n, limit // row_bytes))


def _later_batch_size(board: Board, program: LinkedProgram, row_bytes: int) -> int:
    """Inputs per further build: as many as fit in the flash the program leaves free."""
    room = MAX_INPUT_BYTES_PER_BUILD
    if board.flash_bytes is not None:
        room = min(room, board.flash_bytes - program.sizes.flash + program.excluded_flash - 64)
    return max(1, room // row_bytes)
