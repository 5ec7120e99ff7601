"""A warm `minun-opt` for lit: one process imports the compiler once, then forks a child
per RUN line, which runs the real `minun_mlir.tools.minun_opt.main` on the caller's
argv, working directory, environment and file descriptors (stdin, stdout, stderr passed
over a Unix socket). A RUN line costs a fork instead of an interpreter start and xDSL's
import (~0.8 s of CPU each, for 200+ lines). The client is `test/lit/bin/minun-opt`;
lit.cfg.py starts this server and stops it when lit exits.

    python test/lit/opt_server.py SOCKET
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys


def warm_up() -> None:
    """Import what a run needs before any fork, so that each child starts warm."""
    from minun_mlir import registry
    from minun_mlir.tools import minun_opt  # noqa: F401

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
        sys.argv = ["minun-opt", *request["argv"]]
        from minun_mlir.tools.minun_opt import main

        try:
            status = main(request["argv"])
        except SystemExit as e:  # argparse
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    except BaseException as e:  # the server's own failure: say so, exit non-zero
        print(f"opt_server: {type(e).__name__}: {e}", file=sys.stderr)
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
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped by the kernel
    while os.getppid() == parent:  # lit gone: stop
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        if os.fork() == 0:
            server.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            child(conn)
        conn.close()


if __name__ == "__main__":
    warm_up()
    serve(sys.argv[1])
