"""Compile, link and size programs for a board, and enforce flash/RAM budgets.

Sizes follow Arduino's definitions (Berkeley `size` output): flash = .text + .data (the
initial values of .data live in flash), static RAM = .data + .bss. The stack comes on top
and is measured at run time (simulate.py).

Budget errors say by how much a budget is exceeded and which symbols use the memory. When
the linker itself rejects the program because a memory region overflows (the regions are
the real board's), the program is relinked with oversized regions only to measure it, so
the user gets the same sized, attributed message instead of a raw ld dump.
"""

from __future__ import annotations

import functools
import re
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path

from .boards import Board
from .cache import SOURCE_DIR, cached_build, support_library
from .elf import ElfError, ElfInfo, read_elf
from .errors import BudgetExceeded, CompileError
from .objects import compile_object
from .toolchain import require_tool, run_tool, tail, tool_identity

_OVERFLOW = re.compile(r"overflowed by|will not fit in region|not within region")
_AVR_DATA_OFFSET = 0x800000  # AVR ELF files place data-space addresses at 0x800000


@dataclass(frozen=True)
class Sizes:
    """Berkeley section totals of a linked program, in bytes."""

    text: int
    data: int
    bss: int

    @property
    def flash(self) -> int:
        return self.text + self.data

    @property
    def ram(self) -> int:
        return self.data + self.bss


@dataclass(frozen=True)
class Symbol:
    name: str
    size: int
    kind: str  # nm type letter: t/T code, r/R read-only data, d/D data, b/B bss

    @property
    def in_flash(self) -> bool:
        return self.kind in "tTrRdDwW"

    @property
    def in_ram(self) -> bool:
        return self.kind in "dDbBC"


@dataclass(frozen=True)
class LinkedProgram:
    elf: Path
    sizes: Sizes
    excluded_flash: int  # bytes of flash taken by symbols excluded from the report

    @property
    def flash_bytes(self) -> int:
        return self.sizes.flash - self.excluded_flash

    @property
    def ram_bytes(self) -> int:
        return self.sizes.ram


class BoardOverflow(BudgetExceeded):
    """The program is within its budgets but the real board's memory cannot hold it.

    Happens when the budgets are set above the board's size, or when embedded test
    inputs (excluded from the budget) push the image over the board's flash.
    """

    def __init__(self, message: str, program: LinkedProgram):
        super().__init__(message)
        self.program = program


def compile_sources(board: Board, sources: list[Path], out_dir: Path,
                    include_dirs: list[Path] = (), defines: dict[str, str] | None = None,
                    cflags: list[str] = ()) -> list[Path]:
    """Compile each C file to an object in out_dir (the same object from the build cache
    when one was compiled from the same files: objects.py); CompileError quotes the
    diagnostics."""
    require_tool(board.cc, board.packages, f"the {board.name} target")
    flags = [*board.cflags, *cflags, f"-I{SOURCE_DIR}"]
    flags += [f"-I{d}" for d in include_dirs]
    flags += [f"-D{k}={v}" for k, v in (defines or {}).items()]
    objects = []
    for i, src in enumerate(sources):
        obj = out_dir / f"{i:02d}_{Path(src).stem}.o"
        command = [board.cc, *flags, "-c", str(src), "-o", str(obj)]
        if shipped_runtime(Path(src)):
            shutil.copyfile(runtime_object(command, board.name), obj)
        else:
            compile_object(board.cc, flags, Path(src), obj, f"compiling {src} for {board.name}")
        objects.append(obj)
    return objects


def shipped_runtime(src: Path) -> bool:
    """Whether src is the posit runtime as shipped (posit.c beside a posit model's C, and
    the posit.h it includes from its own folder, byte for byte third_party/softposit's):
    the same object for every model, so it is compiled once per board, compiler and
    flags (about a second each time, for every posit program built)."""
    from minun_mlir.formats.posit.runtime import RUNTIME_SOURCES, SOFTPOSIT_DIR

    if src.name not in RUNTIME_SOURCES or src.suffix != ".c":
        return False
    return all((src.parent / f).is_file() and
               (src.parent / f).read_bytes() == (SOFTPOSIT_DIR / f).read_bytes()
               for f in RUNTIME_SOURCES)


def runtime_object(command: list[str], label: str, key: tuple[str, ...] = ()) -> Path:
    """The shipped runtime's object that `command` ([cc, flags..., "-c", src, "-o", obj])
    builds, from the build cache (cache.cached_build: keyed by the compiler, its flags but
    the folders searched, `key` (what else the object depends on, e.g. the CPU for
    -march=native), and the runtime's sources)."""
    from minun_mlir.formats.posit.runtime import RUNTIME_SOURCES, SOFTPOSIT_DIR

    cc, src, flags = command[0], command[-3], command[1:-4]

    def build(out: Path) -> None:
        run_tool([*command[:-1], str(out)], f"compiling {src} for {label}")

    parts = [cc, tool_identity(cc), *key, *(f for f in flags if not f.startswith("-I"))]
    return cached_build(f"posit-{label.replace(' ', '-')}", ".o", parts,
                        [SOFTPOSIT_DIR / f for f in RUNTIME_SOURCES], build)


def _region_flags(board: Board, relaxed: bool) -> list[str]:
    """Linker flags that set the memory regions: the real board's, or huge ones."""
    if board.kind == "x86":
        return []
    flash = 1 << 28 if relaxed else board.flash_bytes
    ram = 1 << 28 if relaxed else board.ram_bytes
    if board.kind == "avr":
        # Explicit even though avr-libc's device files set the same 32 KB / 2 KB at
        # 0x100..0x8FF, so that the relaxed relink can override them.
        if relaxed:  # the largest the avr5 address space allows
            flash, ram = 128 * 1024, 0x10000 - 0x100
        return [f"-Wl,--defsym=__TEXT_REGION_LENGTH__={flash}",
                f"-Wl,--defsym=__DATA_REGION_ORIGIN__={_AVR_DATA_OFFSET + board.ram_origin:#x}",
                f"-Wl,--defsym=__DATA_REGION_LENGTH__={ram}"]
    return ["-T", str(SOURCE_DIR / "cortexm.ld"),
            f"-Wl,--defsym=__minun_flash_origin={board.flash_origin:#x}",
            f"-Wl,--defsym=__minun_flash_length={flash:#x}",
            f"-Wl,--defsym=__minun_ram_origin={board.ram_origin:#x}",
            f"-Wl,--defsym=__minun_ram_length={ram:#x}"]


def _link(board: Board, objects: list[Path], elf: Path, relaxed: bool = False) -> None:
    cmd = [board.cc, *board.ldflags, *_region_flags(board, relaxed), *map(str, objects),
           "-Wl,--whole-archive", str(support_library(board)), "-Wl,--no-whole-archive",
           *board.libs, "-o", str(elf)]
    run_tool(cmd, f"linking {elf.stem} for {board.name}")


def read_sizes(board: Board, elf: Path) -> Sizes:
    """Berkeley sizes (`size -B`) of a linked program or an object file."""
    info = _elf_info(elf)
    return Sizes(info.text, info.data, info.bss)


def _elf_info(elf: Path) -> ElfInfo:
    """What `size -B` and `nm -S` say of `elf`, read in-process (elf.py), once per linked
    program (sizing, budgets and the simulators' symbol look-ups all read it), memoised
    on the file's identity so that a relinked ELF is read again."""
    stat = elf.stat()
    return _read(str(elf.resolve()), stat.st_mtime_ns, stat.st_size, stat.st_ino)


@functools.lru_cache(maxsize=16)
def _read(elf: str, *_identity: int) -> ElfInfo:
    try:
        return read_elf(Path(elf))
    except (ElfError, struct.error, IndexError, ValueError) as e:
        raise CompileError(f"error: cannot read {elf} as an ELF file ({e})") from None


def _symbol_table(board: Board, elf: Path) -> tuple[tuple[int, str, str, int | None], ...]:
    """Every symbol of `elf` as (address, type, name, size or None), as `nm -S` lists
    them (in name order, Thumb function addresses without their mode bit)."""
    return _elf_info(elf).symbols


def read_symbols(board: Board, elf: Path) -> list[Symbol]:
    """Sized symbols, largest first (what `nm --size-sort -S` lists)."""
    symbols = [Symbol(name, size, kind)
               for _, kind, name, size in _symbol_table(board, elf) if size is not None]
    return sorted(symbols, key=lambda s: -s.size)


def symbol_address(board: Board, elf: Path, names: list[str]) -> dict[str, int]:
    """Addresses of the given symbols (missing ones are absent from the result).

    AVR data-space addresses are returned without the ELF's 0x800000 offset; Thumb
    function addresses without their mode bit.
    """
    found = {}
    for address, kind, name, _ in _symbol_table(board, elf):
        if name in names:
            addr = address
            if board.kind == "avr" and addr >= _AVR_DATA_OFFSET:
                addr -= _AVR_DATA_OFFSET
            if board.kind == "cortex-m" and kind in "tT":
                addr &= ~1
            found[name] = addr
    return found


def _largest(symbols: list[Symbol], pick, skip: set[str], count: int = 5) -> str:
    chosen = [s for s in symbols if pick(s) and s.name not in skip][:count]
    return ", ".join(f"{s.name} {s.size:,} B" for s in chosen) or "(no sized symbols)"


def _over(what: str, used: int, limit: int, label: str) -> str:
    return f"{what} is {used:,} bytes, {used - limit:,} bytes over the {label} of {limit:,} bytes"


def check_budgets(board: Board, program: LinkedProgram, name: str, flash_budget: int | None,
                  ram_budget: int | None, exclude: set[str]) -> None:
    """Raise BudgetExceeded naming the overshoot and the largest users of the memory."""
    problems, users = [], []
    symbols = None
    if flash_budget is not None and program.flash_bytes > flash_budget:
        symbols = read_symbols(board, program.elf)
        problems.append(_over("flash (.text + .data)", program.flash_bytes, flash_budget,
                              "flash budget"))
        users.append("Largest in flash: " + _largest(symbols, lambda s: s.in_flash, exclude))
    if ram_budget is not None and program.ram_bytes > ram_budget:
        symbols = symbols or read_symbols(board, program.elf)
        problems.append(_over("static RAM (.data + .bss)", program.ram_bytes, ram_budget,
                              "RAM budget"))
        users.append("Largest in RAM: " + _largest(symbols, lambda s: s.in_ram, exclude))
        top = next((s for s in symbols if s.in_ram and s.name not in exclude), None)
        if board.kind == "avr" and top is not None and top.kind in "dD":
            users.append(f"Hint: on AVR, const arrays such as {top.name} are copied to RAM at "
                         "start-up unless declared __flash or PROGMEM")
    if problems:
        raise BudgetExceeded(f"error: {name} does not fit {board.name} ({board.description}): "
                             + "; ".join(problems) + ". " + ". ".join(users) + ".")


def link_program(board: Board, objects: list[Path], elf: Path, name: str,
                 flash_budget: int | None = None, ram_budget: int | None = None,
                 exclude_from_flash: tuple[str, ...] = ()) -> LinkedProgram:
    """Link, size and check a program; budgets default to the board's memory.

    `exclude_from_flash` names symbols (e.g. embedded test inputs) that occupy flash on
    the test image but are not part of the program being measured.
    """
    flash_budget = board.flash_bytes if flash_budget is None else flash_budget
    ram_budget = board.ram_bytes if ram_budget is None else ram_budget
    exclude = set(exclude_from_flash)
    try:
        _link(board, objects, elf)
        linker_error = None
    except CompileError as err:
        if board.kind == "x86" or not _OVERFLOW.search(getattr(err, "output", str(err))):
            raise
        linker_error = err
        elf = elf.with_name(elf.stem + ".oversize.elf")
        try:
            _link(board, objects, elf, relaxed=True)
        except CompileError:
            raise BudgetExceeded(
                f"error: {name} does not fit {board.name} ({board.description}) and is too "
                "large even to measure; the linker reports:\n"
                + tail("\n".join(_overflow_lines(getattr(err, "output", str(err)))))
            ) from None
    symbols = read_symbols(board, elf)
    excluded = sum(s.size for s in symbols if s.name in exclude)
    program = LinkedProgram(elf, read_sizes(board, elf), excluded)
    check_budgets(board, program, name, flash_budget, ram_budget, exclude)
    if linker_error is not None:
        raise BoardOverflow(_board_message(board, program, name, exclude, symbols), program)
    return program


def _overflow_lines(message: str) -> list[str]:
    return [ln.strip() for ln in message.splitlines() if _OVERFLOW.search(ln)]


def _board_message(board: Board, program: LinkedProgram, name: str, exclude: set[str],
                   symbols: list[Symbol]) -> str:
    parts = []
    if program.sizes.flash > board.flash_bytes:
        extra = (f" (program {program.flash_bytes:,} B + embedded test data "
                 f"{program.excluded_flash:,} B)" if program.excluded_flash else "")
        parts.append(_over("flash", program.sizes.flash, board.flash_bytes, "board's flash")
                     + extra + "; largest in flash: "
                     + _largest(symbols, lambda s: s.in_flash, set()))
    if program.sizes.ram > board.ram_bytes:
        parts.append(_over("static RAM", program.sizes.ram, board.ram_bytes, "board's RAM")
                     + "; largest in RAM: " + _largest(symbols, lambda s: s.in_ram, exclude))
    detail = "; ".join(parts) or "the linker reports a memory region overflow"
    return (f"error: {name} is within its budgets but does not fit the memory of "
            f"{board.name} ({board.description}): {detail}.")
