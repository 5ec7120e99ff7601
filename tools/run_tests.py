#!/usr/bin/env python3
"""Run the whole test suite (pytest, then lit) and print one summary line.

Both runners always run, so a pytest failure does not hide a lit failure. lit runs
on one worker beside pytest's (its output is printed after pytest's), so that the
cores pytest leaves idle near its end (a worker with nothing left to steal) run lit's
tests instead of waiting; pytest's workers steal queued tests from each other
(`--dist worksteal`). The last line is `tests: N passed, N failed`; the exit code is
non-zero when anything failed or nothing ran. `--fast` leaves out the tests marked slow.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def environment() -> dict[str, str]:
    """The suite starts hundreds of Python processes (each documented command, each CLI
    test, each pytest worker). With PYTHONDONTWRITEBYTECODE set, every one of them compiles
    the package (and pytest rewrites every test module) from source again: about 0.3 s of
    CPU per process, 3 s per worker. Bytecode goes to build/pycache instead (gitignored),
    written by the first process that imports a module and read by the rest."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("PYTHONPYCACHEPREFIX", str(ROOT / "build" / "pycache"))
    return env


def run(cmd: list[str]) -> tuple[int, str]:
    print("$", " ".join(cmd), flush=True)
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=environment(),
    )
    out = []
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stdout.write(line)
        out.append(line)
    return proc.wait(), "".join(out)


class Quiet:
    """`cmd` running with its output collected (not printed) as it comes."""

    def __init__(self, cmd: list[str]):
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=environment())
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self.lines.extend, args=(self.proc.stdout,),
                                       daemon=True)
        self.reader.start()

    def wait(self) -> tuple[int, str]:
        rc = self.proc.wait()
        self.reader.join()
        return rc, "".join(self.lines)


def count(pattern: str, text: str) -> int:
    return sum(int(m) for m in re.findall(pattern, text))


def main() -> int:
    fast = "--fast" in sys.argv[1:]
    env_jobs = os.environ.get("MINUN_TEST_JOBS", str(os.cpu_count() or 1))
    start = time.time()
    print(f"tests: pytest on {env_jobs} workers{' (slow tests left out)' if fast else ''}, "
          "lit on one beside them", flush=True)
    lit = Quiet([str(BIN / "lit"), "-sv", "-j", "1", "test/lit"])
    rc_py, out_py = run(
        [str(BIN / "python"), "-m", "pytest", "-n", env_jobs, "--dist", "worksteal", "-p",
         "no:cacheprovider", "--durations=5", *(["-m", "not slow"] if fast else [])]
    )
    tail = out_py.strip().splitlines()[-1] if out_py.strip() else ""
    py_passed = count(r"(\d+) passed", tail)
    py_failed = count(r"(\d+) failed", tail) + count(r"(\d+) errors?", tail)

    print("$", " ".join(lit.cmd), flush=True)
    rc_lit, out_lit = lit.wait()
    sys.stdout.write(out_lit)
    lit_passed = count(r"Passed\s*:\s*(\d+)", out_lit)
    lit_failed = count(r"(?:Failed|Unresolved|Timed Out|Unexpectedly Passed)\s*:\s*(\d+)", out_lit)

    passed, failed = py_passed + lit_passed, py_failed + lit_failed
    if rc_py != 0 and py_failed == 0:
        failed += 1  # pytest died without a count (collection error, crash)
    if rc_lit != 0 and lit_failed == 0:
        failed += 1
    print(f"pytest: {py_passed} passed, {py_failed} failed; lit: {lit_passed} passed, "
          f"{lit_failed} failed; {time.time() - start:.0f} s")
    print(f"tests: {passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
