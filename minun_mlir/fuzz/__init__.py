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
    clobbered   a file the tool does not own was changed, replaced or removed (the case's
                folder is compared before and after the run: `changes_outside`)
    misread     a case whose inputs are all valid was rejected (e.g. a path read as
                another one)
    ignored     (options fuzzer) an accepted option that does not show in the output as
                declared, a refusal that names none of the given options, or a lone
                option refused that the model of the options says is valid (or accepted
                that it says is not)
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
from dataclasses import dataclass
from pathlib import Path

from minun_mlir.fuzz.cases import (
    ROOT,
    SPECIAL_FILES,
    Case,
    choose_weighted,
    damage_bytes,
    damage_lines,
    special_file,
)
from minun_mlir.fuzz.data import make_case as data_case
from minun_mlir.fuzz.filesystem import make_case as filesystem_case
from minun_mlir.fuzz.ir import make_case as ir_case
from minun_mlir.fuzz.onnx_fuzz import make_case as onnx_case
from minun_mlir.fuzz.options import make_case as options_case
from minun_mlir.fuzz.seedot import make_case as seedot_case

FUZZERS = ("seedot", "onnx", "ir", "data", "filesystem", "options")
OUTCOMES = ("accepted", "rejected")
DEFECTS = ("unlocated", "internal", "traceback", "hang", "crash", "bad-exit", "clobbered",
           "misread", "ignored")
KNOWN = "known"

# message pattern -> reproducer (test/python/fuzz/reproducers/): defects found by these
# fuzzers whose fix belongs in code being refactored by someone else.
KNOWN_DEFECTS: dict[str, str] = {}  # none open: the three found so far are fixed
TIME_LIMIT = 10.0


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


def classify(case: Case, rc: int | None, stderr: str, folder: str, stdout: str = "") -> str:
    outcome = _classify(case, rc, stderr, folder)
    if case.expect is not None and outcome in OUTCOMES:
        return check_expectations(case, outcome, stdout.replace(folder + "/", ""), stderr,
                                  {a.replace("{dir}", folder) for a in case.argv})
    return outcome


def check_expectations(case: Case, outcome: str, stdout: str, stderr: str,
                       arguments: set[str]) -> str:
    """The options fuzzer's oracle: an accepted option shows in the output as declared; a
    refusal is one line naming one of the given options (or located in a file one names);
    a case the model says is valid is accepted, one it says is not is refused."""
    if outcome == "accepted":
        shown = all(e in stdout for e in case.expect or ())
        return "accepted" if shown and case.valid is not False else "ignored"
    lines = stderr.strip().splitlines()
    names = len(lines) == 1 and (any(f in lines[0] for f in case.flags)
                                 or lines[0].split(": error: ")[0] in arguments)
    return "ignored" if case.valid or not names else "rejected"


def _classify(case: Case, rc: int | None, stderr: str, folder: str) -> str:
    if stderr.startswith("clobbered: "):
        return "clobbered"
    if rc == 0:
        return "accepted"
    if "Traceback (most recent call last)" in stderr:
        return "traceback"
    if "internal error" in stderr or "(a bug" in stderr or "a compiler bug" in stderr:
        return "internal"
    if rc != 1:
        return "bad-exit"
    if case.expect_accept:
        return "misread"
    keys = set(case.files) | set(case.special)
    names = {str(Path(folder, k)) for k in keys} | keys
    names |= {a for a in case.argv if os.path.exists(a)}
    if case.option_error:
        names.add(case.tool)
    if ONNX_NODE.search(stderr):
        return "rejected"
    # an option's diagnostic names the tool and the option: `minun-compile: error: --dim ...`
    option = re.match(rf"{re.escape(case.tool)}: error: (--?[\w-]+)", stderr)
    if option and any(a.split("=")[0] == option.group(1) for a in case.argv):
        return "rejected"
    for pattern in (LOCATED, PATH_ERROR):
        for m in pattern.finditer(stderr):
            path = m.group("path").strip()
            if path in names or Path(path).name in keys:
                return "rejected"
            # a file named by an option (quantize{data="..."}, --weights), or one in a
            # folder an option names (--out DIR: DIR/model.c)
            argv = [a.replace("{dir}", folder) for a in case.argv]
            if len(path) > 1 and any(path in a for a in argv):
                return "rejected"
            full = os.path.normpath(os.path.join(folder, path))
            if any(a and os.path.dirname(full) == os.path.normpath(a) for a in argv):
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


# What the tools import on first use besides the registry's dialects, passes and frontends
# (the memory map's matplotlib, the formats' loop lowerings): imported once in the parent,
# so that each worker forked by run_cases (one per fuzzer, another after a hang) starts
# with them instead of importing them again.
PRELOAD = ("matplotlib.figure", "matplotlib.patches", "matplotlib.backends.backend_agg",
           "minun_mlir.memory_map", "minun_mlir.formats.bfloat16.loops",
           "minun_mlir.formats.int4.packed", "minun_mlir.formats.posit.loops",
           "minun_mlir.formats.zero_skew.loops", "minun_mlir.formats.zero_skew.tables",
           "xdsl.transforms.dead_code_elimination", "xdsl.syntax_printer")


def _preload() -> None:
    import importlib

    from minun_mlir import registry

    with contextlib.suppress(ImportError):  # the tool itself reports a missing one
        registry.import_all()
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _make_files(case: Case, folder: str) -> None:
    for name, data in case.files.items():
        path = Path(folder, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for name, target in case.links.items():
        Path(folder, name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target.replace("{dir}", folder), Path(folder, name))
    for name, kind in case.special.items():
        path = Path(folder, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() or path.is_symlink():
            path.unlink()
        {"fifo": os.mkfifo, "dir": os.mkdir,
         "zero": lambda p: os.symlink("/dev/zero", p)}[kind](path)


def _call(case: Case, argv: list[str]) -> tuple[int | None, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = _tool_main(case.tool)(argv)
    except SystemExit as e:  # argparse
        rc = e.code if isinstance(e.code, int) else 2
    except BaseException:
        return 1, err.getvalue() + traceback.format_exc(), out.getvalue()
    return rc, err.getvalue(), out.getvalue()


def run_in_process(case: Case, folder: str) -> tuple[int | None, str, str]:
    """Write the case's files into `folder`, run its tool; (exit status, stderr, stdout).
    A file of the folder that the run changed without owning it makes stderr
    `clobbered: ...`."""
    _make_files(case, folder)
    argv = [a.replace("{dir}", folder) for a in case.argv]
    if case.rerun:
        rc, err, out = _call(case, argv)
        if rc != 0:
            return rc, err, out
        if case.edit_after_first:
            edited = Path(argv[argv.index("--out") + 1], case.edit_after_first)
            with open(edited, "ab") as f:
                f.write(b"\n/* edited by the user */\n")
    before = snapshot(folder)
    rc, err, out = _call(case, argv)
    changed = changes_outside(argv, folder, before, snapshot(folder))
    if changed:
        return 1, f"clobbered: {', '.join(changed)}\n{err}", out
    return rc, err, out


def snapshot(folder: str) -> dict[str, tuple]:
    """Every entry under `folder` (symlinks not followed): path -> (kind, digest or link
    target, the manifest's text for a manifest)."""
    import hashlib
    import stat

    from minun_mlir.outputs import MANIFEST

    found: dict[str, tuple] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                found[path] = ("link", os.readlink(path), None)
            elif stat.S_ISREG(mode):
                data = Path(path).read_bytes()
                found[path] = ("file", hashlib.sha256(data).hexdigest(),
                               data if name == MANIFEST else None)
            else:
                found[path] = ("dir" if stat.S_ISDIR(mode) else "special", None, None)
    return found


def _owned(state: dict[str, tuple], path: str) -> bool:
    """Whether `path` is, in `state`, a file its folder's manifest lists with its digest."""
    import json

    from minun_mlir.outputs import MANIFEST

    entry = state.get(path)
    manifest = state.get(os.path.join(os.path.dirname(path), MANIFEST))
    if entry is None or entry[0] != "file" or manifest is None or manifest[2] is None:
        return False
    try:
        files = json.loads(manifest[2])["files"]
        return files.get(os.path.basename(path)) == entry[1]
    except (ValueError, KeyError, TypeError, AttributeError):
        return False


def changes_outside(argv: list[str], folder: str, before: dict[str, tuple],
                    after: dict[str, tuple]) -> list[str]:
    """The paths under `folder` that the run changed (created, replaced, removed, turned
    into another kind) although it owned neither the old nor the new entry. Owned: a file
    its folder's manifest lists (an output folder's), the manifest itself, the output
    folders, and the file `--json` / `-o` names (a symlink's target, never the link)."""
    from minun_mlir.outputs import MANIFEST

    def value(flag: str) -> list[str]:
        return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == flag]

    outs = {os.path.normpath(p) for f in ("--out", "--search-report") for p in value(f) if p}
    reports = {os.path.normpath(p) for f in ("--json", "-o") for p in value(f) if p}
    reports |= {os.path.realpath(p) for p in reports if os.path.islink(p)}
    made_dirs = {d for o in outs for d in [o, *map(str, Path(o).parents)]}
    bad = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        if os.path.dirname(path) in outs:
            manifest = os.path.basename(path) == MANIFEST
            if ((old is None or manifest or _owned(before, path))
                    and (new is None or manifest or _owned(after, path))):
                continue
        if path in reports and (old is None or old[0] == "file") and (
                new is None or new[0] == "file"):
            continue
        if old is None and new is not None and new[0] == "dir" and path in made_dirs:
            continue
        bad.append(os.path.relpath(path, folder))
    return bad


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
        rc, err, out = run_in_process(case, folder)
        conn.send((rc, err, out, folder, time.perf_counter() - start))
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
        rc, err, out, folder, seconds = answer
        result = Result(case.fuzzer, case.index, classify(case, rc, err, folder, out), case.what,
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


MAKERS: dict[str, Callable[[random.Random, int], Case]] = {
    "seedot": seedot_case, "onnx": onnx_case, "ir": ir_case, "data": data_case,
    "filesystem": filesystem_case, "options": options_case,
}


def maker(fuzzer: str) -> Callable[[random.Random, int], Case]:
    if fuzzer not in MAKERS:
        raise ValueError(f"unknown fuzzer {fuzzer!r} (known: {', '.join(FUZZERS)})")
    return MAKERS[fuzzer]


def run_cases(cases: Iterable[Case], limit: float = TIME_LIMIT,
              progress: Callable[[Result], None] | None = None) -> list[Result]:
    """Run every case in one worker process (a fresh one after a hang or crash)."""
    results = []
    _tool_main("minun-opt"), _tool_main("minun-compile")  # imported once, before the fork
    _preload()
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


__all__ = ["Case", "Result", "FUZZERS", "OUTCOMES", "DEFECTS", "classify", "run_cases",
           "make_cases", "summarize", "format_table", "ROOT", "damage_bytes", "one_line",
           "special_file", "SPECIAL_FILES", "choose_weighted", "damage_lines"]
