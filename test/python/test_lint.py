"""`make lint` is clean: ruff (pinned in the test extra) over the whole tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_is_clean():
    ruff = Path(sys.executable).parent / "ruff"
    proc = subprocess.run([str(ruff), "check", "--output-format", "concise", "."],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_the_compiler_never_imports_the_benchmark():
    """minun_bench/ is `make bench`'s code, outside the installed package: no module of
    the compiler may import it (an installed minun-mlir would fail there)."""
    import ast

    sources = [p for d in ("minun_mlir", "dialects", "passes", "lowering")
               for p in (ROOT / d).rglob("*.py")]
    assert len(sources) > 50
    offenders = []
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "minun_bench" or n.startswith("minun_bench.") for n in names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders
