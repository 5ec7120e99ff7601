"""What a model may ask of the compiler, checked before the work is done.

A declared size or a loop bound can ask for more memory or time than any real use: a
10000x10000 input, a dimension of 2^31, a loop of 10^8 iterations. Without a check the
compiler allocates until the machine runs out (an internal MemoryError, gigabytes of
RAM) or profiles for hours. The limits here are set by the boards the compiler targets,
not by this machine: a model one of whose tensors could never fit the RAM of the largest
supported board (minun_mlir/targets/boards.py) even at 8 bits (one byte a value), or
whose parameters no target takes, is refused at once, with the numbers; and so is
profiling or evaluation work far beyond the largest realistic model (the RNNPool
face detector, benchmarks/real/edgeml-rnnpool-face-4: 3.4 million op executions and 148
million values per input; profiled on 405 images, 6e10 values in two minutes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation

from minun_mlir.diagnostics import error
from minun_mlir.targets.boards import BOARDS

_LARGEST = max((b for b in BOARDS.values() if b.flash_bytes), key=lambda b: b.flash_bytes)
BOARD = _LARGEST.name
FLASH_BYTES: int = _LARGEST.flash_bytes  # type: ignore[assignment]
RAM_BYTES: int = _LARGEST.ram_bytes  # type: ignore[assignment]

# one byte a value (8 bits) is the least any representation stores
MAX_TENSOR_VALUES = RAM_BYTES  # a run-time tensor (the input, an intermediate)
# All parameters together. Beyond the largest board's flash the board check warns
# (codegen.check_fits_board), since the host (x86) build takes more: the benchmark
# compiles ONNX's ResNet-50 (25.6 million parameters, 2.4 million values in its largest
# tensor) for it. Above this, no target takes the model.
MAX_PARAM_VALUES = 1 << 26

# work of the float profile and the evaluators (see the module's docstring)
MAX_STEPS_PER_INPUT = 10**8  # op executions per input, loops unrolled (face-4: 3.4e6)
MAX_VALUES = 10**12  # values computed over all inputs (face-4 on 405 images: 6e10)
# the evaluators hold each tensor for all inputs at once, in float64 at most
MAX_BATCH_BYTES = 4 << 30  # the largest tensor x inputs x 8 (face-4, 405 inputs: 0.23 GiB)


def _largest(memory: str, size: int) -> str:
    return (f"the {memory} of the largest supported board, {BOARD}, holds {size:,} bytes: "
            "one value a byte at 8 bits")


def tensor_size_problem(shape, what: str = "a tensor") -> str | None:
    """Why a run-time tensor of `shape` can never be compiled, or None."""
    n = math.prod(int(d) for d in shape)
    if n <= MAX_TENSOR_VALUES:
        return None
    shown = "x".join(str(int(d)) for d in shape)
    return (f"{what} of shape {shown} has {n:,} values, more than fit any supported board "
            f"({_largest('RAM', RAM_BYTES)})")


def params_size_problem(count: int, what: str = "the parameters") -> str | None:
    """Why `count` parameter values can never be compiled, or None."""
    if count <= MAX_PARAM_VALUES:
        return None
    return (f"{what}: {count:,} values, more than any supported target takes (the flash "
            f"of the largest board, {BOARD}, holds {FLASH_BYTES:,} bytes; the host build "
            f"takes at most {MAX_PARAM_VALUES:,} values)")


def check_sizes(module: ModuleOp) -> None:
    """Every run-time tensor of the module fits the largest board's RAM, and its
    parameters are within MAX_PARAM_VALUES (an error names the op, with its location
    where it has one)."""
    from minun_mlir.dialects import minun

    params = 0
    for op in module.walk():
        if isinstance(op, minun.ParamOp):
            params += math.prod(op.result.type.get_shape())
            why = params_size_problem(params, "the parameters up to this one")
        else:
            why = next((tensor_size_problem(r.type.get_shape(), f"the result of {op.name}")
                        for r in op.results if isinstance(r.type, TensorType)
                        and tensor_size_problem(r.type.get_shape())), None)
        if why:
            raise error(why, at=op)


@dataclass
class Work:
    """One input's work: op executions (loops unrolled) and tensor values computed, the
    largest tensor, and the loop or sum whose body runs most often."""

    steps: int = 0
    values: int = 0
    largest: int = 0  # the values of the largest tensor
    loop: Operation | None = None
    trips: int = 0


def work_per_input(module: ModuleOp) -> Work:
    from minun_mlir.dialects import minun
    from minun_mlir.modules import main_function

    w = Work()

    def walk(block, trips: int) -> None:
        for op in block.ops:
            w.steps += trips
            for r in op.results:
                if isinstance(r.type, TensorType):
                    size = math.prod(r.type.get_shape())
                    w.values += trips * size
                    w.largest = max(w.largest, size)
            inner = trips
            if isinstance(op, (minun.LoopOp, minun.SumOp)):
                inner *= max(op.upper.value.data - op.lower.value.data, 0)
                if inner > w.trips:
                    w.loop, w.trips = op, inner
            for region in op.regions:
                for b in region.blocks:
                    walk(b, inner)

    walk(main_function(module).body.block, 1)
    return w


def check_work(module: ModuleOp, inputs: int, what: str = "profiling") -> None:
    """Refuse evaluating `module` on `inputs` inputs when the work is far beyond any
    realistic model (the limits above), before any of it is done; the sizes first."""
    check_sizes(module)
    w = work_per_input(module)
    if w.steps > MAX_STEPS_PER_INPUT:
        where = (f"; the body of this {w.loop.name} runs {w.trips:,} times per input"
                 if w.loop is not None else "")
        raise error(f"{what} would execute {w.steps:,} operations per input (limit "
                    f"{MAX_STEPS_PER_INPUT:,}, about 30 times the largest realistic model)"
                    f"{where}", at=w.loop)
    batch = w.largest * inputs * 8
    if batch > MAX_BATCH_BYTES:
        raise error(f"{what} on {inputs:,} inputs would hold {batch / 2**30:.1f} GiB in one "
                    f"tensor ({w.largest:,} values x {inputs:,} inputs x 8 bytes; limit "
                    f"{MAX_BATCH_BYTES / 2**30:g} GiB): use fewer inputs")
    total = w.values * inputs
    if total > MAX_VALUES:
        raise error(f"{what} would compute {total:,} values ({w.values:,} per input x "
                    f"{inputs:,} inputs; limit {MAX_VALUES:,}): use fewer inputs")
