# lit configuration: every test runs `minun-opt` and `filecheck` from the project's venv.
import os
import sys

import lit.formats

config.name = "minun-mlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".sd", ".onnx.txt", ".test"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
root = os.path.dirname(os.path.dirname(config.test_source_root))
bin_dir = os.path.dirname(sys.executable)  # lit runs from the venv
config.environment["PATH"] = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
config.substitutions.append(("%root", root))
config.substitutions.append(("%python", sys.executable))

# minun-opt through a warm server (opt_server.py): each RUN line forks the imported
# compiler instead of starting an interpreter (test/lit/bin/minun-opt is the client; it
# runs the real minun-opt when MINUN_OPT_NO_SERVER is set or the server is missing).
if not os.environ.get("MINUN_OPT_NO_SERVER"):
    import atexit
    import subprocess
    import tempfile
    import time

    _sock_dir = tempfile.mkdtemp(prefix="minun-lit-")
    _sock = os.path.join(_sock_dir, "opt.sock")
    _server = subprocess.Popen([sys.executable, os.path.join(config.test_source_root,
                                                             "opt_server.py"), _sock],
                               stdin=subprocess.DEVNULL)

    def _stop_server() -> None:
        _server.terminate()
        _server.wait()
        import shutil

        shutil.rmtree(_sock_dir, ignore_errors=True)

    atexit.register(_stop_server)
    for _ in range(600):  # the server imports xDSL first: up to a minute on a busy machine
        if os.path.exists(_sock) or _server.poll() is not None:
            break
        time.sleep(0.1)
    if os.path.exists(_sock):
        config.environment["MINUN_OPT_SOCKET"] = _sock
config.environment["MINUN_OPT_REAL"] = os.path.join(bin_dir, "minun-opt")
config.environment["PATH"] = os.pathsep.join([os.path.join(config.test_source_root, "bin"),
                                              config.environment["PATH"]])
