"""What every fuzzer makes: a `Case` (one run of a tool on files it writes), and the
mutations they share (weighted choices, damaged lines and bytes, special files). Its own
module so that the fuzzers and the runner (the package) import it and not each other.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Case:
    """One run of a tool: `argv` names files by their key in `files`, written as
    `{dir}/key` (the placeholder `{dir}` is replaced by the case's folder)."""

    fuzzer: str
    index: int
    tool: str  # "minun-opt" | "minun-compile"
    argv: list[str]
    files: dict[str, bytes] = field(default_factory=dict)
    what: str = ""  # a short description of the mutation
    option_error: bool = False  # a damaged option: the tool's name may stand for the path
    links: dict[str, str] = field(default_factory=dict)  # symlink name -> its target
    expect_accept: bool = False  # every input valid: a rejection is the defect `misread`
    rerun: bool = False  # run the tool twice (the second time on the first one's outputs)
    edit_after_first: str | None = None  # with rerun: this output of --out edited between
    # (options fuzzer) text each given option must put in stdout when accepted, the flags
    # given (a refusal names one), and whether the model of the options says the case must
    # be accepted (True) or refused (False), or does not say (None)
    expect: tuple[str, ...] | None = None
    flags: tuple[str, ...] = ()
    valid: bool | None = None
    # files that are not regular files: key -> "fifo", "zero" (a symbolic link to
    # /dev/zero, a never-ending stream) or "dir"; the tool must refuse them unread
    special: dict[str, str] = field(default_factory=dict)


def choose_weighted(rng: random.Random, table: list[tuple[float, object]]):
    total = sum(w for w, _ in table)
    x = rng.random() * total
    for w, item in table:
        x -= w
        if x <= 0:
            return item
    return table[-1][1]


def damage_lines(rng: random.Random, lines: list[str], i: int, how: str) -> list[str]:
    """Line `i` deleted, duplicated, or swapped with a random line (`how`: delete, dup,
    swap); the callers draw `i` and `how` in their own order, so seeds keep their cases."""
    lines = list(lines)
    if how == "delete":
        del lines[i]
    elif how == "dup":
        lines.insert(i, lines[i])
    else:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    return lines


SPECIAL_FILES = ("fifo", "zero", "dir")


def special_file(rng: random.Random, case: Case, name: str) -> str:
    """Make the case's file `name` a FIFO, a link to /dev/zero or a folder (see
    `Case.special`): the tool must refuse it at once, neither block nor read forever."""
    kind = rng.choice(SPECIAL_FILES)
    case.files.pop(name, None)
    case.special[name] = kind
    return f"{name} is a {kind}"


def damage_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """One random byte-level injury: truncation, flips, a deleted or repeated run."""
    if not data:
        return bytes([rng.randrange(256)]), "one random byte"
    kind = rng.choice(["truncate", "flip", "delete", "repeat", "zero", "garbage-tail"])
    n = len(data)
    at = rng.randrange(n)
    if kind == "truncate":
        return data[:at], f"truncated to {at} of {n} bytes"
    if kind == "flip":
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(n)
            b[i] ^= 1 << rng.randrange(8)
        return bytes(b), "bit flips"
    length = rng.randint(1, max(1, min(64, n - at)))
    if kind == "delete":
        return data[:at] + data[at + length:], f"deleted {length} bytes at {at}"
    if kind == "repeat":
        return data[:at] + data[at:at + length] * 2 + data[at + length:], "repeated bytes"
    if kind == "zero":
        return data[:at] + bytes(length) + data[at + length:], f"zeroed {length} bytes"
    tail = bytes(rng.randrange(256) for _ in range(rng.randint(1, 32)))
    return data + tail, "garbage appended"
