"""Warm command-line tools for the tests: one process imports the compiler once, then
forks a child per call, which runs the real `main` of `minun-opt`, `minun-compile`,
`minun-run` or `filecheck` on the caller's argv, working directory, environment and file
descriptors (stdin, stdout, stderr passed over a Unix socket). A call costs a fork
instead of an interpreter start and xDSL's import (~1 s of CPU each, ~0.13 s for
filecheck; lit runs 330 RUN lines, pytest a few hundred CLI calls, the docs test every
documented command).

The child behaves as the installed script does: `main(argv)`'s return value is the exit
status, argparse's SystemExit its code, and an exception that escapes `main` prints
Python's traceback and exits 1 (so a test that checks for "no traceback" sees the one
the real script would print). The client is `client.py` (test/warm_cli/bin/<tool>);
lit.cfg.py and test/python/cli_tools.py start this server and stop it when they exit.

    python test/warm_cli/server.py SOCKET
"""

from __future__ import annotations

import atexit
import builtins
import gc
import importlib
import io
import json
import marshal
import os
import runpy
import signal
import socket
import struct
import sys
import threading
import time
import traceback
import types

# tool name -> the module whose main() the installed script calls (pyproject.toml)
TOOLS = {
    "minun-opt": "minun_mlir.tools.minun_opt",
    "minun-compile": "minun_mlir.tools.minun_compile",
    "minun-run": "minun_mlir.targets.cli",
    "filecheck": "filecheck.main",  # lit's checker: ~0.13 s of CPU per cold start
    "python": "__main__",  # `python SCRIPT ...` and `python -c CODE ...`: run_python
}
# tools whose main() reads sys.argv (program name included) instead of taking argv
ARGV_MAINS = {"filecheck"}


def warm_up() -> None:
    """Import what a run needs before any fork, so that each child starts warm."""
    from minun_mlir import registry

    for module in TOOLS.values():
        importlib.import_module(module)
    registry.import_all()
    registry.multiverse()  # xDSL's plugins, read from every package's metadata: once
    import filecheck.matcher  # noqa: F401  (what filecheck.main imports when it runs)
    gc.freeze()  # the children never collect these objects: their pages stay shared


def run_python(argv: list[str]) -> int:
    """The interpreter's `python -c CODE [ARG...]` or `python SCRIPT [ARG...]` (client.py
    sends only these forms here): the code runs as `__main__` with the interpreter's
    sys.argv and sys.path[0] ('' for -c, the script's folder)."""
    if argv[0] == "-c":
        sys.argv, sys.path[0] = ["-c", *argv[2:]], ""
        module = types.ModuleType("__main__")
        module.__builtins__ = builtins  # type: ignore[attr-defined]
        sys.modules["__main__"] = module
        exec(compile(argv[1], "<string>", "exec"), module.__dict__)
    else:
        sys.argv, sys.path[0] = list(argv), os.path.dirname(os.path.realpath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


def reopen_stdio() -> None:
    """sys.stdin, stdout and stderr anew on the caller's descriptors, as the interpreter
    makes them (the server's own, on its descriptors, may be seekable files where the
    caller's are pipes: filecheck's `reconfigure` would then fail with ESPIPE): stderr
    line-buffered, stdout too on a terminal, both unbuffered under PYTHONUNBUFFERED."""
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        old = getattr(sys, name)
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        buffered = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        stream = io.TextIOWrapper(buffered, encoding=old.encoding, errors=old.errors,
                                  newline="\n", write_through=unbuffered,
                                  line_buffering=not unbuffered and (fd == 2 or os.isatty(fd)))
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def child(conn: socket.socket) -> None:
    """Run one request in this (forked) process and report its exit status."""
    status, request = 1, {}
    try:
        msg, fds, _, _ = socket.recv_fds(conn, 1 << 22, 3)
        request = marshal.loads(msg)  # what client.py sends
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        reopen_stdio()
        tool = request["tool"]
        sys.argv = [tool, *request["argv"]]
        main = run_python if tool == "python" else importlib.import_module(TOOLS[tool]).main
        try:
            status = main() if tool in ARGV_MAINS else main(request["argv"])
        except SystemExit as e:  # argparse, or sys.exit inside the tool
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if not isinstance(e.code, int) and e.code is not None:
                print(e.code, file=sys.stderr)
        except BaseException:  # what the interpreter prints for an uncaught exception
            traceback.print_exc()
            status = 1
        if tool == "python":  # what the interpreter does before it exits
            threading._shutdown()  # type: ignore[attr-defined]  (joins non-daemon threads)
            atexit._run_exitfuncs()
    except BaseException as e:  # the server's own failure: say so, exit non-zero
        print(f"warm_cli server: {type(e).__name__}: {e}", file=sys.stderr)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        log(request, status)
        try:
            conn.sendall(struct.pack("i", int(status or 0)))
        finally:
            os._exit(0)


def log(request: dict, status) -> None:
    """With MINUN_WARM_CLI_LOG=FILE in the server's environment: append this call's CPU
    seconds (the forked child's, and the processes it waited for) to FILE, one JSON line
    per call, to see what the suite's tool calls cost (the server's children are not
    counted in any test's own CPU time)."""
    path = LOG
    if not path:
        return
    t = os.times()
    cpu = t.user + t.system + t.children_user + t.children_system
    line = {"tool": request.get("tool"), "argv": request.get("argv"), "cpu": round(cpu, 4),
            "status": status if isinstance(status, int) else None}
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")


LOG = os.environ.get("MINUN_WARM_CLI_LOG")


def serve(path: str) -> None:
    parent = os.getppid()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server.bind(path)
    server.listen(64)
    server.settimeout(2.0)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop: reap the children first
    try:
        while os.getppid() == parent:  # the test runner gone: stop
            reap()
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            if os.fork() == 0:
                server.close()
                child(conn)
            conn.close()
    finally:
        deadline = time.monotonic() + 30  # a call still running: wait a while, not forever
        while reap() and time.monotonic() < deadline:
            time.sleep(0.05)


def reap() -> bool:
    """Collect the finished children, so that their CPU time counts as ours (and so as
    the test runner's: `time make test` sees every call). True while some still run."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


if __name__ == "__main__":
    warm_up()
    serve(sys.argv[1])
