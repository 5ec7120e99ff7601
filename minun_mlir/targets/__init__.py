"""Target harness: build generated C for a board, simulate it, report size and latency.

Targets: x86 (host gcc, wall time), avr (ATmega328P in simavr, exact cycles) and
cortex-m0plus / cortex-m3 / cortex-m4 / cortex-m4f (QEMU, exact instruction counts).
See docs/targets.md for the model.h contract, the measurement method and the numbers.
"""

from .boards import BOARDS, TARGET_NAMES, Board, get_board
from .errors import (
    BudgetExceeded,
    CompileError,
    ContractError,
    SimulationError,
    SimulationTimeout,
    TargetError,
    ToolchainMissing,
)
from .run import ProgramResult, RunResult, build_and_run, run_model

__all__ = [
    "BOARDS", "TARGET_NAMES", "Board", "get_board",
    "TargetError", "ToolchainMissing", "CompileError", "BudgetExceeded", "SimulationError",
    "SimulationTimeout", "ContractError",
    "ProgramResult", "RunResult", "build_and_run", "run_model",
]
