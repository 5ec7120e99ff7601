"""Run a tools/zoo script as a child process, with OpenBLAS's idle threads sleeping
instead of spinning.

The export scripts train small models (scikit-learn's lbfgs and adam): between the many
small matrix products OpenBLAS's worker threads busy-wait, which cost more CPU than the
training itself (make_keras_style.py --check: 12.8 CPU s, 5.0 with the shortest wait).
OPENBLAS_THREAD_TIMEOUT only sets how long an idle thread spins before it sleeps: the
number of threads, how the products are split between them, and so every float the
scripts write stay the same (their files are byte-identical either way).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# 2^4 loops of spinning, OpenBLAS's least (its default: 2^28)
QUIET_BLAS = {"OPENBLAS_THREAD_TIMEOUT": "4"}


def run_script(name: str, *args: str) -> subprocess.CompletedProcess:
    """tools/zoo/<name> with `args`, its output captured as text."""
    return subprocess.run([sys.executable, str(ROOT / "tools" / "zoo" / name), *args],
                          capture_output=True, text=True, env=os.environ | QUIET_BLAS)
