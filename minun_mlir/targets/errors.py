"""Errors of the target harness.

Every error carries a complete, one-paragraph message meant for the user (the CLI prints
it as is, without a traceback). Subclasses let callers and tests tell the causes apart.
"""

from __future__ import annotations

from minun_mlir.diagnostics import MinunError


class TargetError(MinunError):
    """Base class: building or running a program for a target failed."""


class ToolchainMissing(TargetError):
    """A compiler, binutils tool, simulator or header is not installed."""


class CompileError(TargetError):
    """The C compiler or the linker rejected the program."""


class BudgetExceeded(TargetError):
    """The program needs more flash or static RAM than the budget (or the board) allows."""


class SimulationError(TargetError):
    """The program crashed, overflowed its stack, exited non-zero or printed garbage."""


class SimulationTimeout(SimulationError):
    """The simulator did not finish within the time limit."""


class ContractError(TargetError):
    """The model directory or the inputs do not follow the model.h contract."""
