"""The address -> bucket map of a per-layer profile, read from the program's debug lines.

The program is built with `-g` added, which changes no instruction (GCC's -g never changes
code generation; a test compares the code with and without it), so the profiled program is
the deployed one. `addr2line -i` gives each instruction address its chain of source lines,
the innermost inlined call first; the outermost line decides:

- in the model's entry function (`minun_predict`, or `minun_predict_in_place`): a line
  of `model.c` inside one of its statements -> that statement's bucket (the caller's
  `ModelLines.lines`); any other line of `model.c` before the first statement's code or
  after the last one's (its entry and exit) -> bucket 1; between them such a line (GCC
  gives the function's `{` to the spills and reloads of registers in its loops) is not
  listed;
- in the harness's functions: a line of the harness's source -> bucket 0;
- anything else (the support library, libgcc, libc, a runtime helper that was not
  inlined, code of line 0): not listed. The simulator adds such an instruction to the
  bucket of the last listed one executed, so a division routine counts in the layer that
  called it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .boards import Board
from .elf import read_elf
from .toolchain import run_tool

HARNESS, OUTSIDE = 0, 1  # the fixed buckets
ENTRIES = ("minun_predict", "minun_predict_in_place")  # what the harness calls (model.h)


@dataclass(frozen=True)
class ModelLines:
    """Bucket names (0: the harness, 1: the model's C outside its statements, then one per
    layer) and the bucket of each line of model.c that belongs to a layer."""

    names: tuple[str, ...]
    lines: dict[int, int]


def functions(board: Board, path: Path) -> dict[str, tuple[int, int]]:
    """The sized functions of an ELF or object file: name -> (start, size), as
    `nm -S --defined-only` lists them (read in-process: elf.py)."""
    return {name: (address & ~1, size) for address, kind, name, size in read_elf(path).symbols
            if size is not None and kind in "tT"}


def function_addresses(board: Board, elf: Path, names) -> list[int]:
    """Every 2-byte-aligned address inside the named functions (every instruction starts
    at one of them on AVR and Thumb), or parts GCC split off them (`name.part.0`)."""
    return sorted(a for name, (start, size) in functions(board, elf).items()
                  if name.split(".")[0] in names for a in range(start, start + size, 2))


def outermost_lines(board: Board, elf: Path, addrs: list[int]) -> dict[int, tuple[str, int]]:
    """address -> (file name, line) of its outermost source line, where it has one."""
    text = "\n".join(f"{a:#x}" for a in addrs) + "\n"
    out = run_tool([board.prefix + "addr2line", "-i", "-a", "-e", str(elf)],
                   "reading debug lines", input_text=text).stdout
    found: dict[int, tuple[str, int]] = {}
    addr = None
    for line in out.splitlines():
        if line.startswith("0x"):
            addr = int(line, 16)
            continue
        where, _, number = line.split(" ")[0].rpartition(":")
        if addr is not None and where != "??" and number.isdigit():
            found[addr] = (Path(where).name, int(number))  # the last one is outermost
    return found


def write_layer_map(board: Board, elf: Path, model: ModelLines, harness: Path,
                    harness_file: str, out: Path) -> Path:
    """The simulators' layer map (simavr_host.c, qemu_count_plugin.c) for `elf`: the
    addresses of the model's entry function (whose statements the layers are) and of the
    harness object's functions. No other function is listed, so its instructions count in
    the layer that called it: a runtime helper compiled out of line in model.c (addr2line
    may give it a line of model.c, as it gives the library code linked after a file its
    last line) counts in the layer that calls it."""
    names = {*ENTRIES, *functions(board, harness)}
    rows = []
    for addr, (name, line) in sorted(outermost_lines(
            board, elf, function_addresses(board, elf, names)).items()):
        if name == "model.c" and line:  # line 0: code of no line (GCC's), not listed
            rows.append((addr, model.lines.get(line, OUTSIDE)))
        elif name == harness_file and line:
            rows.append((addr, HARNESS))
    layered = [i for i, (_, b) in enumerate(rows) if b > OUTSIDE]
    if layered:  # between the first and last layer's code, a line outside the statements
        # (GCC gives spills and reloads in the loops the function's `{`) is not listed
        rows = [r for i, r in enumerate(rows)
                if r[1] != OUTSIDE or not layered[0] < i < layered[-1]]
    out.write_text(f"{len(model.names)}\n" + "".join(f"{a:x} {b}\n" for a, b in rows))
    return out
