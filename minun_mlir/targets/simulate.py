"""Run a linked program on its simulator and collect output, latencies, stack and exit code.

- avr: the libsimavr host program (simavr_host.c): exact cycles between markers.
- cortex-m: qemu-system-arm with semihosting for output/exit and our TCG plugin
  (qemu_count_plugin.c): exact executed-instruction counts between markers. QEMU is not
  cycle-accurate, so no cycle figures are produced for Cortex-M.
- x86: the executable itself; the support code prints wall-clock nanoseconds.

All of them print "@minun <key> <value>" meta lines into the program's output; they are
separated from the program's own text here. Every run has a wall-clock timeout.

With a layer map (a per-layer profile, minun_mlir/profile.py) simavr and the QEMU plugin
also split each marker pair's count into buckets by instruction address (`layers`).
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .boards import Board
from .build import symbol_address
from .cache import qemu_plugin, simavr_host
from .errors import SimulationError, SimulationTimeout
from .simavr_skip import skip_hazards
from .toolchain import last_output, require_tool, tail

META = "@minun "


@dataclass
class SimOutput:
    text: str  # the program's own output, meta lines removed
    latencies: list[int]
    stack_bytes: int | None
    exit_code: int
    seconds: float
    meta: dict[str, list[str]]  # every "@minun key value" line, values in order
    layers: list[list[int]] | None = None  # per marker pair, its count split by bucket


def split_meta(raw: str) -> tuple[str, list[tuple[str, str]]]:
    """Separate "@minun key value" lines from the program's own text."""
    text, meta = [], []
    for line in raw.splitlines(keepends=True):
        if line.startswith(META):
            key, _, value = line[len(META):].strip().partition(" ")
            meta.append((key, value))
        else:
            text.append(line)
    return "".join(text), meta


def _run(cmd: list[str], board: Board, name: str, timeout: float) -> tuple[str, str, int, float]:
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        partial = (exc.stdout or b"").decode(errors="replace")
        raise SimulationTimeout(
            f"error: {name} on {board.name} did not finish within {timeout:g} s and was "
            "stopped (an endless loop, or a workload too large for the time limit: raise it "
            "with --timeout)." + last_output(split_meta(partial)[0])
        ) from None
    seconds = time.perf_counter() - start
    return (proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace"),
            proc.returncode, seconds)


def simulate(board: Board, elf: Path, name: str, timeout: float = 60.0,
             layers: Path | None = None) -> SimOutput:
    """Run `elf` on the board's simulator; raise SimulationError on crashes or bad exits.
    `layers`: a layer map file (simavr and QEMU only), whose buckets the counts are split
    into (SimOutput.layers)."""
    if board.kind == "avr":
        return _simulate_avr(board, elf, name, timeout, layers)
    if board.kind == "cortex-m":
        return _simulate_qemu(board, elf, name, timeout, layers)
    if layers is not None:
        raise SimulationError(f"error: {name}: x86 has no instruction or cycle counts to "
                              "split by layer")
    return _simulate_x86(board, elf, name, timeout)


def _finish(board: Board, name: str, raw: str, stderr: str, returncode: int, seconds: float,
            latency_key: str, plugin_latencies: list[int] | None = None,
            plugin_layers: list[list[int]] | None = None) -> SimOutput:
    """Common checks on a finished run: faults, stack overflow, exit code.

    Latencies come from the meta lines named latency_key, or from the QEMU plugin's file.
    """
    text, meta = split_meta(raw)
    values: dict[str, list[str]] = {}
    for key, value in meta:
        values.setdefault(key, []).append(value)
    if "fault" in values:
        raise SimulationError(f"error: {name} crashed on {board.name}: "
                              f"{_describe_fault(values['fault'][0])}."
                              + last_output(text))
    if "stack-overflow" in values:
        raise SimulationError(
            f"error: {name} overflowed its stack on {board.name} ({board.description}): the "
            "stack grew down into static data, so its results cannot be trusted; reduce "
            "static RAM or stack use.")
    if board.kind == "x86":
        exit_code = returncode
    elif "exit" in values and returncode in ((0,) if board.kind == "avr" else (0, 1)):
        exit_code = int(values["exit"][-1])  # QEMU itself can only say 0 or 1
    else:
        raise SimulationError(f"error: the {board.name} simulator failed on {name} "
                              f"(exit {returncode}):\n" + tail(stderr + text, 10))
    latencies = plugin_latencies
    if latencies is None:
        latencies = [int(v) for v in values.get(latency_key, [])]
    stack = int(values["stack"][-1]) if "stack" in values else None
    layers = plugin_layers
    if layers is None and "layers" in values:
        layers = [[int(n) for n in v.split()] for v in values["layers"]]
    if layers is not None and [sum(c) for c in layers] != latencies:
        raise SimulationError(f"error: the per-layer counts of {name} on {board.name} do not "
                              f"add up to its latencies ({[sum(c) for c in layers][:3]} vs "
                              f"{latencies[:3]}); this is a bug of the profiler")
    return SimOutput(text, latencies, stack, exit_code, seconds, values, layers)


_EXCEPTIONS = {2: "NMI", 3: "HardFault", 4: "MemManage fault", 5: "BusFault",
               6: "UsageFault", 11: "SVCall", 12: "DebugMonitor", 14: "PendSV", 15: "SysTick"}


def _describe_fault(value: str) -> str:
    """'exception=3 pc=0x00000108' -> 'HardFault (exception 3) at pc=0x00000108'."""
    fields = dict(f.split("=", 1) for f in value.split() if "=" in f)
    number = int(fields.get("exception", "0"))
    kind = _EXCEPTIONS.get(number, "unexpected exception")
    return f"{kind} (exception {number}) at pc={fields.get('pc', '?')}"


def _simulate_avr(board: Board, elf: Path, name: str, timeout: float,
                  layers: Path | None = None) -> SimOutput:
    hazards = skip_hazards(elf)
    if hazards:
        where = ", ".join(f"{fn}+0x{addr:x}" for fn, addr in hazards[:5])
        raise SimulationError(
            f"error: {name}: simavr 1.6 would mis-execute this program (a skip over ADIW/SBIW, "
            f"see minun_mlir/targets/simavr_skip.py) at {where}; build it with the avr "
            "profile's flags (-fno-peephole2) so that its results can be trusted")
    host = simavr_host()
    syms = symbol_address(board, elf, ["__heap_start", "_end"])
    stack_low = syms.get("__heap_start", syms.get("_end"))
    if stack_low is None:
        raise SimulationError(f"error: {elf} has no _end symbol; is it an avr-gcc ELF?")
    cmd = [str(host), str(elf), hex(stack_low), *([str(layers)] if layers else [])]
    raw, err, rc, secs = _run(cmd, board, name, timeout)
    if rc == 3:
        raise SimulationError(f"error: {name} crashed in simavr: {err.strip()}."
                              + last_output(split_meta(raw)[0]))
    return _finish(board, name, raw, err, rc, secs, "cycles")


def _simulate_qemu(board: Board, elf: Path, name: str, timeout: float,
                   layers: Path | None = None) -> SimOutput:
    qemu = require_tool("qemu-system-arm", board.packages, f"the {board.name} target")
    plugin = qemu_plugin()
    marks = symbol_address(board, elf, ["minun_marker_start", "minun_marker_end"])
    counts = elf.with_suffix(".counts")
    counts.unlink(missing_ok=True)
    # QEMU option syntax: a literal comma inside a value is written as two commas.
    plugin_arg = _escape(str(plugin)) + ",out=" + _escape(str(counts))
    for key, sym in (("start", "minun_marker_start"), ("end", "minun_marker_end")):
        if sym in marks:
            plugin_arg += f",{key}={marks[sym]:#x}"
    if layers is not None:
        plugin_arg += ",layers=" + _escape(str(layers))
    cmd = [qemu, "-M", board.qemu_machine, *board.qemu_args, "-display", "none",
           "-serial", "none", "-monitor", "none", "-chardev", "stdio,id=minun0",
           "-semihosting-config", "enable=on,target=native,chardev=minun0",
           "-kernel", str(elf), "-plugin", plugin_arg]
    raw, err, rc, secs = _run(cmd, board, name, timeout)
    latencies, split = [], []
    if counts.exists():
        for line in counts.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "error":
                raise SimulationError(f"error: instruction counting failed on {name}: {value}")
            if key == "layers":
                split.append([int(n) for n in value.split()])
            else:
                latencies.append(int(value))
    return _finish(board, name, raw, err, rc, secs, "count", latencies,
                   split if layers is not None else None)


def _escape(value: str) -> str:
    return value.replace(",", ",,")


def _simulate_x86(board: Board, elf: Path, name: str, timeout: float) -> SimOutput:
    raw, err, rc, secs = _run([str(elf)], board, name, timeout)
    if rc < 0:
        raise SimulationError(f"error: {name} was killed by signal {-rc} on x86."
                              + last_output(split_meta(raw)[0]))
    return _finish(board, name, raw, err, rc, secs, "ns")
