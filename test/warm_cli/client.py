#!/usr/bin/env -S python3 -S
"""minun-opt, minun-compile, minun-run, filecheck and python for the tests (this file
under those names in test/warm_cli/bin/): hands the tool's name, argv, the working directory, the environment
and stdin, stdout, stderr to the warm server (server.py) named by MINUN_CLI_SOCKET, and
exits with the real tool's status. Without a server it runs the real tool from
MINUN_CLI_BIN (the virtualenv's bin/)."""

import json
import os
import socket
import struct
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
conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
conn.connect(path)
request = {"tool": tool, "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}
socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
answer = conn.recv(4)
if len(answer) != 4:
    print(f"{tool} (tests): the warm server died", file=sys.stderr)
    sys.exit(1)
sys.exit(struct.unpack("i", answer)[0])
