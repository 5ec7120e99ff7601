"""Section sizes and the symbol table of an ELF file, read in-process.

Every linked program is sized (Berkeley `size -B`) and its symbols listed (`nm -S`) for
the budgets and the simulators' symbol look-ups. Reading the file here gives the same
figures without starting two binutils processes per program. What binutils computes is
reproduced exactly (test_elf_reader.py compares both on every board's programs and
objects):

- `size -B`: every SHF_ALLOC section counts as text when it is executable or read-only,
  as data when it has contents (not SHT_NOBITS), else as bss;
- `nm -S`: the symbols nm lists by default (no section or file symbols, no ARM mapping
  symbols such as `$t`) that have an address (not the undefined ones), sorted by name,
  with nm's type letter (BFD's
  `bfd_decode_symclass` on the section's flags) and size (printed when non-zero).
  Thumb function addresses lose their mode bit, as BFD reads them.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

_SHF_WRITE, _SHF_ALLOC, _SHF_EXECINSTR = 0x1, 0x2, 0x4
_SHT_SYMTAB, _SHT_NOBITS = 2, 8
_SHN_UNDEF, _SHN_LORESERVE, _SHN_ABS, _SHN_COMMON = 0, 0xFF00, 0xFFF1, 0xFFF2
_STB_LOCAL, _STB_GLOBAL, _STB_WEAK, _STB_GNU_UNIQUE = 0, 1, 2, 10
_STT_OBJECT, _STT_FUNC, _STT_SECTION, _STT_FILE, _STT_COMMON = 1, 2, 3, 4, 5
_STT_GNU_IFUNC = 10
_EM_ARM = 40


class ElfError(ValueError):
    """The file is not an ELF file this reader understands."""


@dataclass(frozen=True)
class _Section:
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int
    entsize: int


@dataclass(frozen=True)
class ElfInfo:
    """What the harness reads of a program: Berkeley sizes and nm's symbol list."""

    text: int
    data: int
    bss: int
    # (address, nm type letter, name, size or None when nm prints none), in nm's order
    symbols: tuple[tuple[int, str, str, int | None], ...]


def _section_letter(section: _Section) -> str:
    """decode_section_type of BFD's syms.c, on the flags BFD gives an ELF section."""
    contents = section.type != _SHT_NOBITS
    readonly = not section.flags & _SHF_WRITE
    if section.flags & _SHF_EXECINSTR:
        return "t"
    if contents and section.flags & _SHF_ALLOC:  # SEC_DATA: allocated, loaded
        return "r" if readonly else "d"
    if not contents:
        return "b"
    if section.name.startswith(".debug") or section.name.startswith(".zdebug") \
            or section.name.startswith(".gnu.linkonce.wi.") or section.name == ".stab" \
            or section.name.startswith(".line"):
        return "N"
    return "n" if readonly else "?"


def _arm_special(name: str) -> bool:
    """ARM mapping and tag symbols ($a, $t, $d, $m.foo, ...), which nm leaves out."""
    return (len(name) >= 2 and name[0] == "$" and "a" <= name[1] <= "z"
            and (len(name) == 2 or name[2] == "."))


def _letter(bind: int, typ: int, shndx: int, sections: list[_Section]) -> str | None:
    """nm's type letter (bfd_decode_symclass), or None for a symbol nm does not list."""
    if typ in (_STT_SECTION, _STT_FILE):
        return None  # BSF_DEBUGGING: listed only with -a
    obj = typ in (_STT_OBJECT, _STT_COMMON)
    if shndx == _SHN_COMMON:
        return "C"
    if shndx == _SHN_UNDEF:
        if bind == _STB_WEAK:
            return "v" if obj else "w"
        return "U"
    if typ == _STT_GNU_IFUNC:
        return "i"
    if bind == _STB_WEAK:
        return "V" if obj else "W"
    if bind == _STB_GNU_UNIQUE:
        return "u"
    if bind not in (_STB_LOCAL, _STB_GLOBAL):
        return "?"
    if shndx == _SHN_ABS:
        c = "a"
    elif shndx >= _SHN_LORESERVE or shndx >= len(sections):
        return "?"
    else:
        c = _section_letter(sections[shndx])
    return c.upper() if bind == _STB_GLOBAL else c


class _Elf:
    """The section headers of an ELF file, and its bytes."""

    def __init__(self, path: Path):
        raw = self.raw = Path(path).read_bytes()
        if raw[:4] != b"\x7fELF" or raw[4] not in (1, 2) or raw[5] not in (1, 2):
            raise ElfError(f"{path} is not an ELF file")
        self.wide = raw[4] == 2
        self.order = order = "<" if raw[5] == 1 else ">"
        self.machine, = struct.unpack_from(order + "H", raw, 18)
        if self.wide:
            shoff, = struct.unpack_from(order + "Q", raw, 40)
            shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", raw, 58)
            sh_fmt = order + "IIQQQQIIQQ"
        else:
            shoff, = struct.unpack_from(order + "I", raw, 32)
            shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", raw, 46)
            sh_fmt = order + "IIIIIIIIII"
        headers = [struct.unpack_from(sh_fmt, raw, shoff + i * shentsize)
                   for i in range(shnum)]
        # name, type, flags, addr, offset, size, link, info, align, entsize
        rows = [(h[0], h[1], h[2], h[4], h[5], h[6], h[9]) for h in headers]
        names_at = rows[shstrndx][3] if shnum else 0
        self.sections = [_Section(self.cstr(names_at + r[0]), *r[1:]) for r in rows]

    def cstr(self, at: int) -> str:
        return self.raw[at:self.raw.index(b"\0", at)].decode(errors="replace")

    def symbols(self):
        """(name, value, size, bind, type, section index) of every entry of .symtab but
        the null one, in table order."""
        fmt = self.order + ("IBBHQQ" if self.wide else "IIIBBH")
        for tab in self.sections:
            if tab.type != _SHT_SYMTAB:
                continue
            strings = self.sections[tab.link].offset
            entsize = tab.entsize or struct.calcsize(fmt)
            for i in range(1, tab.size // entsize):
                fields = struct.unpack_from(fmt, self.raw, tab.offset + i * entsize)
                if self.wide:
                    name_at, info, _other, shndx, value, size = fields
                else:
                    name_at, value, size, info, _other, shndx = fields
                yield self.cstr(strings + name_at), value, size, info >> 4, info & 0xF, shndx


def read_elf(path: Path) -> ElfInfo:
    """Berkeley sizes and nm's symbols of an ELF executable or object file."""
    elf = _Elf(path)
    text = data = bss = 0
    for s in elf.sections[1:]:
        if not s.flags & _SHF_ALLOC:
            continue
        if s.flags & _SHF_EXECINSTR or not s.flags & _SHF_WRITE:
            text += s.size
        elif s.type != _SHT_NOBITS:
            data += s.size
        else:
            bss += s.size
    symbols = []
    arm = elf.machine == _EM_ARM
    for name, value, size, bind, typ, shndx in elf.symbols():
        letter = _letter(bind, typ, shndx, elf.sections)
        if letter is None or letter in "Uwv":  # nm prints no address for these
            continue
        if arm and _arm_special(name):
            continue
        if arm and typ in (_STT_FUNC, _STT_GNU_IFUNC):
            value &= ~1
        if shndx == _SHN_COMMON:
            value = size  # BFD keeps a common symbol's size as its value
        symbols.append((value, letter, name, size or None))
    symbols.sort(key=lambda s: s[2].encode())
    return ElfInfo(text, data, bss, tuple(symbols))


def text_and_functions(path: Path) -> tuple[bytes, list[tuple[str, int, int]]]:
    """The contents of .text (what `objcopy -O binary -j .text` writes when .text is the
    lowest section) and (name, value, size) of every named function defined in a
    section, in symbol-table order (what `readelf -s -W` lists as FUNC)."""
    elf = _Elf(path)
    text = next((s for s in elf.sections if s.name == ".text"), None)
    image = b"" if text is None or text.type == _SHT_NOBITS else \
        elf.raw[text.offset:text.offset + text.size]
    functions = [(name, value, size) for name, value, size, _, typ, shndx in elf.symbols()
                 if typ == _STT_FUNC and name and _SHN_UNDEF < shndx < _SHN_LORESERVE]
    return image, functions
