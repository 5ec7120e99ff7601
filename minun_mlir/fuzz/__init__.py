"""Fuzzers for the command-line tools: damaged SeeDot programs, ONNX models, textual IR
and data sets are handed to the real `minun-opt` / `minun-compile` entry points, and each
outcome is classified.

A fuzz case is a list of files (name -> bytes) and a command line that names them. Cases
are made by one module per fuzzer (`seedot`, `onnx_fuzz`, `ir`, `data`), each a function
`make_case(rng, index) -> Case` that depends only on its `random.Random`, so a seed gives
the same cases on every machine. `run_cases` runs them in a worker process (the tools are
called in-process there, with stdout/stderr captured) that is killed and replaced when a
case takes longer than the time limit: a hang is a defect, not a stuck fuzzer.

Outcomes:
    accepted    exit status 0
    rejected    exit status 1 and a located diagnostic: `path:line:col: error:`,
                `path: error: ...` (path one of the case's files, or the tool's name for a
                bad command-line option), or `node 'name' (OpType): ...` for ONNX
and the defects:
    unlocated   exit status 1 with a clean message that names no file or location
    internal    `<tool>: internal error in <stage>: ...`
    traceback   a Python exception escaped the tool's main()
    hang        no answer within the time limit
    crash       the worker process died (a segfault, an abort, memory exhausted)
    bad-exit    any other exit status
A defect whose message matches `KNOWN_DEFECTS` (found earlier, its fix left to the owner
of the code, a reproducer in test/python/fuzz/reproducers/) is counted as `known`.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import random
import re
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FUZZERS = ("seedot", "onnx", "ir", "data")
OUTCOMES = ("accepted", "rejected")
DEFECTS = ("unlocated", "internal", "traceback", "hang", "crash", "bad-exit")
KNOWN = "known"

# message pattern -> reproducer (test/python/fuzz/reproducers/): defects found by these
# fuzzers whose fix belongs in code being refactored by someone else.
KNOWN_DEFECTS: dict[str, str] = {}  # none open: the three found so far are fixed
TIME_LIMIT = 10.0


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
    # files that are not regular files: key -> "fifo", "zero" (a symbolic link to
    # /dev/zero, a never-ending stream) or "dir"; the tool must refuse them unread
    special: dict[str, str] = field(default_factory=dict)


@dataclass
class Result:
    fuzzer: str
    index: int
    outcome: str
    what: str
    message: str  # first lines of stderr (or the traceback)
    seconds: float
    argv: list[str]
    known: str | None = None  # the reproducer of the known defect this is an instance of

    @property
    def defect(self) -> bool:
        return self.outcome in DEFECTS


def known_defect(outcome: str, message: str) -> str | None:
    if outcome in ("internal", "unlocated"):
        for pattern, script in KNOWN_DEFECTS.items():
            if re.search(pattern, message):
                return script
    return None


# --- classification -----------------------------------------------------------------------

LOCATED = re.compile(r"^(?P<path>[^\n]+?):\d+:\d+: error: ", re.M)
PATH_ERROR = re.compile(r"^(?P<path>[^\n:]+(?::[^\n: ]+)*?): error: ", re.M)
ONNX_NODE = re.compile(r"node '[^']*' \([A-Za-z0-9_.]+\)")


def classify(case: Case, rc: int | None, stderr: str, folder: str) -> str:
    if rc == 0:
        return "accepted"
    if "Traceback (most recent call last)" in stderr:
        return "traceback"
    if "internal error" in stderr or "(a bug" in stderr or "a compiler bug" in stderr:
        return "internal"
    if rc != 1:
        return "bad-exit"
    keys = set(case.files) | set(case.special)
    names = {str(Path(folder, k)) for k in keys} | keys
    names |= {a for a in case.argv if os.path.exists(a)}
    if case.option_error:
        names.add(case.tool)
    if ONNX_NODE.search(stderr):
        return "rejected"
    for pattern in (LOCATED, PATH_ERROR):
        for m in pattern.finditer(stderr):
            path = m.group("path").strip()
            if path in names or Path(path).name in keys:
                return "rejected"
            # a file named by an option (quantize{data="..."}, --weights)
            if len(path) > 1 and any(path in a.replace("{dir}", folder) for a in case.argv):
                return "rejected"
    return "unlocated"


# --- running ------------------------------------------------------------------------------

def _tool_main(tool: str) -> Callable[[list[str]], int]:
    if tool == "minun-opt":
        from minun_mlir.tools.minun_opt import main
    elif tool == "minun-compile":
        from minun_mlir.tools.minun_compile import main
    else:
        raise ValueError(tool)
    return main


def run_in_process(case: Case, folder: str) -> tuple[int | None, str]:
    """Write the case's files into `folder`, run its tool; (exit status, stderr)."""
    for name, data in case.files.items():
        path = Path(folder, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for name, kind in case.special.items():
        path = Path(folder, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() or path.is_symlink():
            path.unlink()
        {"fifo": os.mkfifo, "dir": os.mkdir,
         "zero": lambda p: os.symlink("/dev/zero", p)}[kind](path)
    argv = [a.replace("{dir}", folder) for a in case.argv]
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = _tool_main(case.tool)(argv)
    except SystemExit as e:  # argparse
        rc = e.code if isinstance(e.code, int) else 2
    except BaseException:
        return 1, err.getvalue() + traceback.format_exc()
    return rc, err.getvalue()


def _worker(conn, base: str) -> None:
    import shutil
    import warnings

    warnings.simplefilter("ignore")  # MinunWarnings print on stderr through run_tool anyway
    while True:
        try:
            case = conn.recv()
        except EOFError:
            return
        if case is None:
            return
        folder = tempfile.mkdtemp(dir=base)
        start = time.perf_counter()
        rc, err = run_in_process(case, folder)
        conn.send((rc, err, folder, time.perf_counter() - start))
        shutil.rmtree(folder, ignore_errors=True)


class Worker:
    """A process that runs cases one at a time; replaced after a hang or a crash."""

    def __init__(self, base: str) -> None:
        ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, base), daemon=True)
        self.proc.start()
        child.close()

    def run(self, case: Case, limit: float) -> Result:
        start = time.perf_counter()
        self.conn.send(case)
        try:
            ready = self.conn.poll(limit)
            answer = self.conn.recv() if ready else None
        except (EOFError, ConnectionError):
            answer, ready = None, True
        seconds = time.perf_counter() - start
        if answer is None:
            outcome = "hang" if not ready else "crash"
            self.stop()
            return Result(case.fuzzer, case.index, outcome, case.what,
                          f"no answer within {limit:.0f} s" if outcome == "hang"
                          else f"worker died (exit {self.proc.exitcode})", seconds, case.argv)
        rc, err, folder, seconds = answer
        result = Result(case.fuzzer, case.index, classify(case, rc, err, folder), case.what,
                        err.replace(folder + "/", "")[:2000], seconds, case.argv)
        result.known = known_defect(result.outcome, result.message)
        if result.known:
            result.outcome = KNOWN
        return result

    def stop(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.conn.close()


def make_cases(fuzzer: str, count: int, seed: int, start: int = 0) -> Iterator[Case]:
    make = maker(fuzzer)
    for i in range(start, start + count):
        yield make(random.Random(f"{seed}:{fuzzer}:{i}"), i)


def maker(fuzzer: str) -> Callable[[random.Random, int], Case]:
    if fuzzer == "seedot":
        from minun_mlir.fuzz.seedot import make_case
    elif fuzzer == "onnx":
        from minun_mlir.fuzz.onnx_fuzz import make_case
    elif fuzzer == "ir":
        from minun_mlir.fuzz.ir import make_case
    elif fuzzer == "data":
        from minun_mlir.fuzz.data import make_case
    else:
        raise ValueError(f"unknown fuzzer {fuzzer!r} (known: {', '.join(FUZZERS)})")
    return make_case


def run_cases(cases: Iterable[Case], limit: float = TIME_LIMIT,
              progress: Callable[[Result], None] | None = None) -> list[Result]:
    """Run every case in one worker process (a fresh one after a hang or crash)."""
    results = []
    _tool_main("minun-opt"), _tool_main("minun-compile")  # imported once, before the fork
    with tempfile.TemporaryDirectory(prefix="minun-fuzz-") as base:
        worker = Worker(base)
        try:
            for case in cases:
                result = worker.run(case, limit)
                if result.outcome in ("hang", "crash"):
                    worker = Worker(base)
                results.append(result)
                if progress:
                    progress(result)
        finally:
            if worker.proc.is_alive():
                worker.conn.send(None)
            worker.stop()
    return results


def summarize(results: Iterable[Result]) -> dict[str, dict[str, int]]:
    """fuzzer -> {"cases": n, outcome: count, ...} (every outcome listed, zeros included)."""
    table: dict[str, Counter] = {}
    for r in results:
        table.setdefault(r.fuzzer, Counter())[r.outcome] += 1
    return {f: {"cases": sum(c.values()), **{o: c[o] for o in OUTCOMES + (KNOWN,) + DEFECTS}}
            for f, c in table.items()}


def format_table(summary: dict[str, dict[str, int]]) -> str:
    cols = ["cases", *OUTCOMES, KNOWN, *DEFECTS]
    rows = [["fuzzer", *cols]]
    total = Counter()
    for f, row in summary.items():
        rows.append([f, *(str(row[c]) for c in cols)])
        total.update(row)
    if len(summary) > 1:
        rows.append(["total", *(str(total[c]) for c in cols)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(cols) + 1)]
    lines = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in
                       enumerate(zip(r, widths))) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def one_line(message: str) -> str:
    return " ".join(message.split())[:240]


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


__all__ = ["Case", "Result", "FUZZERS", "OUTCOMES", "DEFECTS", "classify", "run_cases",
           "make_cases", "summarize", "format_table", "ROOT", "damage_bytes", "one_line",
           "special_file"]
