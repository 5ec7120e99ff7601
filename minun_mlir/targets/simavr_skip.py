"""A guard against a simavr 1.6 bug that silently changes program results.

When a skip instruction (CPSE, SBRC, SBRS, SBIC, SBIS) skips the next instruction, simavr
decides whether that instruction is one or two words with `(opcode & 0xfc0f)` compared to
the LDS/STS/JMP/CALL patterns. That mask also matches ADIW and SBIW with immediates whose
low nibble is 12..15 (e.g. `adiw r24, 63`, which avr-gcc emits for `x / 64` after
`sbrc r25, 7`), so simavr skips two words instead of one and the program computes
something the real ATmega328P does not. Real silicon is fine.

The AVR profile compiles with `-fno-peephole2`, which keeps avr-gcc from turning such
branches into skips; this scan of every function of the linked ELF makes sure no such pair
is left, so a simulated result is never silently wrong.
"""

from __future__ import annotations

import struct
from pathlib import Path

from .elf import text_and_functions


def _is_skip(w: int) -> bool:
    return ((w & 0xFC00) == 0x1000 or (w & 0xFE08) in (0xFC00, 0xFE00)
            or (w & 0xFF00) in (0x9900, 0x9B00))


def _simavr_two_words(w: int) -> bool:
    return (w & 0xFC0F) in (0x9200, 0x9000, 0x940C, 0x940D, 0x940E, 0x940F)


def _really_two_words(w: int) -> bool:
    return (w & 0xFE0F) in (0x9000, 0x9200) or (w & 0xFE0E) in (0x940C, 0x940E)


def skip_hazards(elf: Path) -> list[tuple[str, int]]:
    """(function, byte address) of every skip whose next instruction simavr mis-sizes.

    Only functions are scanned: data kept in flash (the harness's input table, PROGMEM
    arrays) sits in .text too, and its bytes would otherwise be read as instructions.
    .text and the function symbols are read in-process (elf.py)."""
    image, functions = text_and_functions(elf)
    found = []
    for name, start, size in functions:
        end = min(start + size, len(image)) - 2
        # instruction by instruction: the second word of a CALL, JMP, LDS or STS is an
        # operand, which may look like a skip (`call 0x2750` ends in 0x13a8, a CPSE)
        a = start
        while a < end:
            w, nxt = struct.unpack_from("<HH", image, a)
            if _is_skip(w) and _simavr_two_words(nxt) != _really_two_words(nxt):
                found.append((name, a))
            a += 4 if _really_two_words(w) else 2
    return found
