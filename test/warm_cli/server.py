"""Warm command-line tools for the tests: one process imports the compiler once, then
forks a child per call, which runs the real `main` of `minun-opt`, `minun-compile` or
`minun-run` on the caller's argv, working directory, environment and file descriptors
(stdin, stdout, stderr passed over a Unix socket). A call costs a fork instead of an
interpreter start and xDSL's import (~1 s of CPU each; lit runs 280 RUN lines, pytest a
few hundred CLI calls, the docs test every documented command).

The child behaves as the installed script does: `main(argv)`'s return value is the exit
status, argparse's SystemExit its code, and an exception that escapes `main` prints
Python's traceback and exits 1 (so a test that checks for "no traceback" sees the one
the real script would print). The client is `client.py` (test/warm_cli/bin/<tool>);
lit.cfg.py and test/python/cli_tools.py start this server and stop it when they exit.

    python test/warm_cli/server.py SOCKET
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import socket
import struct
import sys
import time
import traceback

# tool name -> the module whose main() the installed script calls (pyproject.toml)
TOOLS = {
    "minun-opt": "minun_mlir.tools.minun_opt",
    "minun-compile": "minun_mlir.tools.minun_compile",
    "minun-run": "minun_mlir.targets.cli",
}


def warm_up() -> None:
    """Import what a run needs before any fork, so that each child starts warm."""
    from minun_mlir import registry

    for module in TOOLS.values():
        importlib.import_module(module)
    for factory in (*registry.DIALECTS.values(), *registry.PASSES.values()):
        factory()


def child(conn: socket.socket) -> None:
    """Run one request in this (forked) process and report its exit status."""
    status = 1
    try:
        msg, fds, _, _ = socket.recv_fds(conn, 1 << 22, 3)
        request = json.loads(msg)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        tool = request["tool"]
        sys.argv = [tool, *request["argv"]]
        main = importlib.import_module(TOOLS[tool]).main
        try:
            status = main(request["argv"])
        except SystemExit as e:  # argparse, or sys.exit inside the tool
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if not isinstance(e.code, int) and e.code is not None:
                print(e.code, file=sys.stderr)
        except BaseException:  # what the interpreter prints for an uncaught exception
            traceback.print_exc()
            status = 1
    except BaseException as e:  # the server's own failure: say so, exit non-zero
        print(f"warm_cli server: {type(e).__name__}: {e}", file=sys.stderr)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        try:
            conn.sendall(struct.pack("i", int(status or 0)))
        finally:
            os._exit(0)


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
