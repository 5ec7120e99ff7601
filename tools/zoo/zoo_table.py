"""Write the model zoo's table into docs/onnx-frontend.md (between the `zoo-table`
markers): every model of test/zoo/manifest.py with its source, its ONNX operators (read
from the file) and each stage's result (pass, or the known failure and why, from the
manifest; test/python/onnx/test_zoo.py checks that exactly those fail), then the counts.

    .venv/bin/python tools/zoo/zoo_table.py            # rewrite the table
    .venv/bin/python tools/zoo/zoo_table.py --check    # exit 1 if the docs differ
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "onnx-frontend.md"
BEGIN, END = "<!-- zoo-table: begin -->", "<!-- zoo-table: end -->"


def _manifest():
    spec = importlib.util.spec_from_file_location("zoo_manifest", ROOT / "test/zoo/manifest.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["zoo_manifest"] = module
    spec.loader.exec_module(module)
    return module


def _ops(path: Path) -> str:
    seen: list[str] = []
    for node in onnx.load(str(path)).graph.node:
        op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}:{node.op_type}"
        op = op.replace("ai.onnx.ml:", "")
        if op not in seen:
            seen.append(op)
    return ", ".join(seen)


def table() -> str:
    manifest = _manifest()
    models = manifest.models()
    lines = ["| model | source, exporter | ONNX operators | import, float = onnxruntime | "
             "fixed16 on the M4 = evaluator | fixed8 on the M4 = evaluator | "
             "`minun-compile` |", "|---|---|---|---|---|---|---|"]
    for m in models:
        cells = []
        for stage in manifest.STAGES:
            known = m.known.get(stage)
            cells.append(f"fails: {known[1]}" if known else "yes")
        name = m.name if m.third_party else f"{m.name} (hand-built)"
        lines.append(f"| {name} | {m.source} | {_ops(m.path)} | " + " | ".join(cells) + " |")
    third = [m for m in models if m.third_party]
    families: dict[str, bool] = {}
    for m in third:
        families[m.family] = families.get(m.family, True) and not m.known
    passed = sum(families.values())
    files_ok = sum(not m.known for m in third)
    per_stage = ", ".join(
        f"{stage} {sum(stage not in m.known for m in third)}" for stage in manifest.STAGES)
    hand = [m for m in models if not m.third_party]
    lines += [
        "",
        f"Third-party models: {len(families)} distinct networks in {len(third)} files "
        f"(each PyTorch network is exported by both exporters). {passed} of "
        f"{len(families)} networks ({100 * passed / len(families):.0f}%) pass every stage "
        f"(a network passes when all its files do); by file, {files_ok} of {len(third)} "
        f"({100 * files_ok / len(third):.0f}%); files passing each stage: {per_stage}. "
        f"The {len(hand)} hand-built models: "
        f"{sum(not m.known for m in hand)} pass every stage."]
    quantized = [m for m in models if getattr(m, "prequantized", False)]
    if quantized:
        lines += ["", "Pre-quantized models at zero-skew with the file's own scales and zero "
                  "points (the C on the M4 = the evaluator for each):", "",
                  "| model | the evaluator's integers vs onnxruntime's (40 inputs) |",
                  "|---|---|"]
        for m in quantized:
            bound = m.ort_bound
            lines.append(f"| {m.name} | " + ("equal" if bound is None else
                         f"within {bound[0]}, at least {100 * bound[1]:.0f}% equal") + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    text = DOC.read_text()
    if BEGIN not in text or END not in text:
        print(f"{DOC}: the markers {BEGIN} / {END} are missing", file=sys.stderr)
        return 1
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n{table()}\n{END}{tail}"
    if args.check:
        if new != text:
            print(f"{DOC}: the zoo table is stale: run tools/zoo/zoo_table.py",
                  file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
