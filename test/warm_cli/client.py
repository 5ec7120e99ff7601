#!/usr/bin/env -S python3 -S
"""minun-opt, minun-compile, minun-run, filecheck and python for the tests (this file
under those names in test/warm_cli/bin/): hands the tool's name, argv, the working
directory, the environment and stdin, stdout, stderr to the warm server (server.py) named
by MINUN_CLI_SOCKET, and exits with the real tool's status. Without a server it runs the
real tool from MINUN_CLI_BIN (the virtualenv's bin/)."""

import os
import sys

tool = os.path.basename(sys.argv[0])
path = os.environ.get("MINUN_CLI_SOCKET")
argv = sys.argv[1:]
# python: only an existing script or -c CODE run warm; any other form (-m, options, the
# prompt, a missing script) is the real interpreter's
cold = tool == "python" and not (argv[:1] == ["-c"] and len(argv) > 1
                                 or argv[:1] and not argv[0].startswith("-")
                                 and os.path.isfile(argv[0]))
if cold or not path or not os.path.exists(path):
    real = os.path.join(os.environ["MINUN_CLI_BIN"], tool)
    os.execv(real, [real, *argv])
# _socket and marshal, not socket and json: this runs once per RUN line and per CLI call,
# and those imports (enum, re, collections) would double the client's ~10 ms start
import _socket  # noqa: E402
import marshal  # noqa: E402

conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
conn.connect(path)
request = {"tool": tool, "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}
fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))  # stdin, stdout, stderr
conn.sendmsg([marshal.dumps(request)], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
answer = conn.recv(4)
if len(answer) != 4:
    print(f"{tool} (tests): the warm server died", file=sys.stderr)
    sys.exit(1)
sys.exit(int.from_bytes(answer, sys.byteorder, signed=True))
