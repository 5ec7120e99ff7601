"""Start the warm tool server (server.py) for this process's lifetime: used by
test/lit/lit.cfg.py and test/python/cli_tools.py. MINUN_WARM_CLI=0 turns it off (every
call then starts the real script)."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "bin")  # the clients, one per tool name


def start(python: str = sys.executable) -> dict[str, str]:
    """The environment the clients need: MINUN_CLI_BIN (the real scripts, a fallback)
    and, when the server is up, MINUN_CLI_SOCKET. The server stops when we exit."""
    env = {"MINUN_CLI_BIN": os.path.dirname(python)}
    if os.environ.get("MINUN_WARM_CLI") == "0":
        return env
    folder = tempfile.mkdtemp(prefix="minun-cli-")
    sock = os.path.join(folder, "cli.sock")
    server = subprocess.Popen([python, os.path.join(HERE, "server.py"), sock],
                              stdin=subprocess.DEVNULL)

    def stop() -> None:
        server.terminate()
        server.wait()
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(stop)
    for _ in range(1200):  # the server imports xDSL first: up to two minutes when busy
        if os.path.exists(sock) or server.poll() is not None:
            break
        time.sleep(0.1)
    if os.path.exists(sock):
        env["MINUN_CLI_SOCKET"] = sock
    return env
