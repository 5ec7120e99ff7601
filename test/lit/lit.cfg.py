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

# minun-opt and filecheck through a warm server (test/warm_cli/): each command of a RUN
# line forks the imported compiler instead of starting an interpreter (~0.5 s of CPU for
# minun-opt, 0.13 s for filecheck; test/warm_cli/bin/<tool> is the client; it runs the
# real tool when MINUN_WARM_CLI=0 or the server is missing).
sys.path.insert(0, os.path.join(root, "test", "warm_cli"))
import start as warm_cli  # noqa: E402

config.environment.update(warm_cli.start())
config.environment["PATH"] = os.pathsep.join([warm_cli.BIN, config.environment["PATH"]])
