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
