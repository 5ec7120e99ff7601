"""Board profiles: one record per target name, holding everything that differs per target.

The rest of the harness (build, simulate, harness) reads these fields and never tests the
target name, so adding a board means adding one entry here. Memory sizes are those of the
boards the papers used (see docs/targets.md); they are the default budgets and the
linker's memory regions, so a program that links here also fits the real chip.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import TargetError

KB = 1024

APT_PACKAGES = (
    "gcc-avr avr-libc binutils-avr simavr libsimavr-dev "
    "gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm"
)


@dataclass(frozen=True)
class Board:
    """How to compile, link, size and simulate programs for one target."""

    name: str
    description: str
    kind: str  # "avr" | "cortex-m" | "x86": selects the simulator and support file
    cc: str
    cflags: tuple[str, ...]
    ldflags: tuple[str, ...] = ()
    flash_bytes: int | None = None  # real board memory: default budget and linker region
    ram_bytes: int | None = None
    latency_unit: str = "ns"  # "cycles" (exact), "instructions" (exact) or "ns" (wall)
    clock_hz: int | None = None
    qemu_machine: str | None = None
    qemu_args: tuple[str, ...] = ()
    flash_origin: int = 0
    ram_origin: int = 0x20000000
    packages: str = ""  # Debian packages that provide the toolchain and simulator
    libs: tuple[str, ...] = ("-lm",)  # generated code may call expf/tanhf

    @property
    def prefix(self) -> str:
        """Binutils prefix matching the compiler (avr-, arm-none-eabi- or none)."""
        return self.cc[: -len("gcc")]

    @property
    def size_tool(self) -> str:
        return self.prefix + "size"

    @property
    def nm_tool(self) -> str:
        return self.prefix + "nm"

    @property
    def support_source(self) -> str:
        """The per-kind C file implementing minun_target.h (start-up, output, markers)."""
        return {"avr": "target_avr.c", "cortex-m": "target_cortexm.c", "x86": "target_x86.c"}[
            self.kind
        ]


_COMMON = ("-std=gnu99", "-ffunction-sections", "-fdata-sections")
_ARM = ("-mthumb",) + _COMMON
_ARM_LD = ("-nostartfiles", "--specs=nano.specs", "-Wl,--gc-sections")
_QEMU_PKGS = "gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm"

BOARDS: dict[str, Board] = {
    b.name: b
    for b in [
        Board(
            name="x86",
            description="host x86-64 (gcc -O2, wall-clock time)",
            kind="x86",
            cc="gcc",
            cflags=("-O2",) + _COMMON,
            ldflags=("-Wl,--gc-sections",),
            latency_unit="ns",
            packages="gcc",
        ),
        Board(
            name="avr",
            description="Arduino Uno (ATmega328P, 16 MHz) in simavr",
            kind="avr",
            cc="avr-gcc",
            # -fno-peephole2: see simavr_skip.py (a simavr bug, checked on every ELF)
            cflags=("-mmcu=atmega328p", "-Os", "-fno-peephole2", "-DF_CPU=16000000UL")
            + _COMMON,
            ldflags=("-mmcu=atmega328p", "-Wl,--gc-sections"),
            flash_bytes=32 * KB,
            ram_bytes=2 * KB,
            latency_unit="cycles",
            clock_hz=16_000_000,
            ram_origin=0x100,  # SRAM starts after the 256 bytes of registers and I/O
            packages="gcc-avr avr-libc binutils-avr simavr libsimavr-dev",
        ),
        Board(
            name="cortex-m0plus",
            description="Arduino MKR1000 class (Cortex-M0+, 48 MHz) in QEMU microbit",
            kind="cortex-m",
            cc="arm-none-eabi-gcc",
            cflags=("-mcpu=cortex-m0plus", "-mfloat-abi=soft", "-Os") + _ARM,
            ldflags=("-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft") + _ARM_LD,
            flash_bytes=256 * KB,
            ram_bytes=32 * KB,
            latency_unit="instructions",
            clock_hz=48_000_000,
            qemu_machine="microbit",
            # The nRF51 of the micro:bit has 16 KB of SRAM; the MKR1000 has 32 KB.
            qemu_args=("-global", "nrf51-soc.sram-size=32768"),
            packages=_QEMU_PKGS,
        ),
        Board(
            name="cortex-m3",
            description="Arduino Due class (Cortex-M3, 84 MHz) in QEMU mps2-an385",
            kind="cortex-m",
            cc="arm-none-eabi-gcc",
            cflags=("-mcpu=cortex-m3", "-Os") + _ARM,
            ldflags=("-mcpu=cortex-m3", "-mthumb") + _ARM_LD,
            flash_bytes=512 * KB,
            ram_bytes=96 * KB,
            latency_unit="instructions",
            clock_hz=84_000_000,
            qemu_machine="mps2-an385",
            packages=_QEMU_PKGS,
        ),
        Board(
            name="cortex-m4",
            description="STM32F4 class (Cortex-M4, soft float) in QEMU mps2-an386",
            kind="cortex-m",
            cc="arm-none-eabi-gcc",
            cflags=("-mcpu=cortex-m4", "-mfloat-abi=soft", "-Os") + _ARM,
            ldflags=("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=soft") + _ARM_LD,
            flash_bytes=1024 * KB,
            ram_bytes=256 * KB,
            latency_unit="instructions",
            clock_hz=168_000_000,
            qemu_machine="mps2-an386",
            packages=_QEMU_PKGS,
        ),
        Board(
            name="cortex-m4f",
            description="STM32F4 class (Cortex-M4F, FPv4 hard float) in QEMU mps2-an386",
            kind="cortex-m",
            cc="arm-none-eabi-gcc",
            cflags=("-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-Os") + _ARM,
            ldflags=("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16")
            + _ARM_LD,
            flash_bytes=1024 * KB,
            ram_bytes=256 * KB,
            latency_unit="instructions",
            clock_hz=168_000_000,
            qemu_machine="mps2-an386",
            packages=_QEMU_PKGS,
        ),
        Board(
            name="cortex-m4-mps2",
            description="Cortex-M4 (soft float) with QEMU mps2-an386's full 4 MB SRAM: NOT "
            "a real part's memory, for models that do not fit a 256 KB board yet",
            kind="cortex-m",
            cc="arm-none-eabi-gcc",
            cflags=("-mcpu=cortex-m4", "-mfloat-abi=soft", "-Os") + _ARM,
            ldflags=("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=soft") + _ARM_LD,
            flash_bytes=4096 * KB,  # the machine's SSRAM1 at 0x0, used as flash
            ram_bytes=4096 * KB,  # SSRAM2/3 at 0x20000000
            latency_unit="instructions",
            clock_hz=168_000_000,
            qemu_machine="mps2-an386",
            packages=_QEMU_PKGS,
        ),
    ]
}

TARGET_NAMES = tuple(BOARDS)

# `--opt` (minun-compile, minun-run, run_model): size keeps each board's flags (-Os on the
# microcontrollers, -O2 on x86); speed compiles with -O2 everywhere (faster inner loops,
# more flash: the benchmark reports both).
OPT_LEVELS = ("size", "speed")


def opt_cflags(opt: str) -> tuple[str, ...]:
    """Flags added after the board's for an optimisation goal."""
    if opt not in OPT_LEVELS:
        raise TargetError(f"error: unknown --opt '{opt}'; choose one of: "
                          f"{', '.join(OPT_LEVELS)}")
    return ("-O2",) if opt == "speed" else ()


def get_board(name: str) -> Board:
    """Look a target up by name, with an error that lists the valid names."""
    try:
        return BOARDS[name]
    except KeyError:
        raise TargetError(
            f"error: unknown target '{name}'; choose one of: {', '.join(TARGET_NAMES)}"
        ) from None
