"""Every command the documentation shows runs, and prints what the documentation says.

Collected from README.md, CONTRIBUTING.md and docs/*.md:

- fenced ```sh / ```bash blocks: each line is a command (`#` lines are comments, a line
  ending in `\\` continues on the next);
- fenced ```console blocks: lines starting with `$ ` are commands; the lines under a
  command, up to the next `$ `, are its expected output. Each expected line must appear in
  the command's output (stdout then stderr), in order; `...` inside a line matches anything
  (timings). A command whose expected output shows a diagnostic (`error:`) must exit 1;
  every other command must exit 0;
- fenced ```python blocks: run as a script in a subprocess;
- fenced ```seedot blocks: SeeDot programs; each must compile to L1 IR with `minun-opt`
  (declared parameters get seeded random weights of the declared shape).

One test per chain of commands or per block, named `file:line` (its first command).
Everything runs with bash from a copy of the repository root: every top-level entry is a
symlink to the real one except `build/`, a fresh directory, so documented commands write
their outputs (always under `build/`, which is gitignored) into a temporary place and
never see another test's files, and `.venv/`, whose minun-opt, minun-compile, minun-run,
filecheck and python (a script or -c) run warm (cli_tools.py: the real main in a fork of
an imported compiler, not an interpreter start per command; python blocks too). The virtualenv's `bin/` comes first on PATH. A command
may use what the commands before it in the same block wrote (compile, then run): the
commands of a block that share a `build/` path (transitively) form a chain, run in order
in one test, each checked as it runs; so no command runs twice.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cli_tools import tool as cli_tool

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_LANGS = {"sh", "bash", "console"}
TIMEOUT = 120  # seconds per command; every documented command takes a few seconds

# Commands the docs show that this test does not run, and why. Each must still occur in
# the docs (checked below), so the list cannot go stale silently.
EXCLUDED = {
    "make test": "it is the command that runs this test (it would run itself)",
    "make bench": "test_benchmarks_fresh.py already runs the benchmark and compares its "
                  "report with the committed BENCHMARKS.md",
}
# Run, but marked slow (`pytest -m "not slow"` skips them): they set up the environment
# and run a whole job; no other test runs them. (`make demo` writes into the real
# checkout's build/demo/, which tools/demo.py locates from its own path; build/ is
# gitignored.)
SLOW = {"make demo"}
# the scripts cli_tools.py runs warm (python: `python SCRIPT`, `python -c CODE`)
WARM = {"minun-opt", "minun-compile", "minun-run", "filecheck", "python"}


@dataclass
class Command:
    doc: str  # path relative to the root
    line: int  # 1-based line of the command in the doc
    text: str
    expected: list[str] = field(default_factory=list)
    before: list[Command] = field(default_factory=list)  # earlier ones in the same block

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"

    @property
    def status(self) -> int:
        """1 when the doc shows it printing a diagnostic, else 0."""
        return 1 if any("error:" in line for line in self.expected) else 0


@dataclass
class Block:
    doc: str
    line: int  # 1-based line of the opening fence
    lang: str
    text: str

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def fenced_blocks(path: Path) -> list[Block]:
    blocks, lang, start, body = [], None, 0, []
    doc = str(path.relative_to(ROOT))
    for n, line in enumerate(path.read_text().splitlines(), 1):
        fence = re.match(r"^\s*```(\S*)\s*$", line)
        if lang is None:
            if fence:
                lang, start, body = fence.group(1) or "text", n, []
        elif fence and not fence.group(1):
            blocks.append(Block(doc, start, lang, "\n".join(body)))
            lang = None
        else:
            body.append(line)
    return blocks


def block_commands(block: Block) -> list[Command]:
    lines = block.text.splitlines()
    commands: list[Command] = []
    i = 0
    while i < len(lines):
        line, n = lines[i], block.line + 1 + i
        i += 1
        if block.lang == "console":
            if not line.startswith("$ "):
                if commands:
                    commands[-1].expected.append(line)
                continue
            line = line[2:]
        elif not line.strip() or line.lstrip().startswith("#"):
            continue
        text = line
        while text.endswith("\\") and i < len(lines):
            text = text + "\n" + lines[i]
            i += 1
        commands.append(Command(block.doc, n, text.strip()))
    for k, cmd in enumerate(commands):
        cmd.before = commands[:k]
        while cmd.expected and not cmd.expected[-1].strip():
            cmd.expected.pop()
    return commands


def all_blocks() -> list[Block]:
    return [b for doc in DOCS for b in fenced_blocks(doc)]


def all_commands() -> list[Command]:
    return [c for b in all_blocks() if b.lang in SHELL_LANGS for c in block_commands(b)]


def command_name(text: str) -> str:
    return re.sub(r"\s+#.*$", "", text).strip()


def block_params(lang: str):
    return [pytest.param(b, id=b.id) for b in all_blocks() if b.lang == lang]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The repository root with a private, empty `build/`."""
    root = tmp_path / "repo"
    root.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in ("build", ".git", ".venv"):
            (root / entry.name).symlink_to(entry)
    (root / "build").mkdir()
    warm_venv(ROOT / ".venv", root / ".venv")
    return root


def warm_venv(real: Path, copy: Path) -> None:
    """`copy` is the virtualenv `real` with its minun-* scripts run by the warm server
    (cli_tools.py: the real script's main in a fork, no interpreter start per command);
    everything else is a link to the real entry."""
    copy.mkdir()
    for entry in real.iterdir():
        if entry.name != "bin":
            (copy / entry.name).symlink_to(entry)
    (copy / "bin").mkdir()
    for entry in (real / "bin").iterdir():
        target = cli_tool(entry.name) if entry.name in WARM else entry
        (copy / "bin" / entry.name).symlink_to(target)


def environment() -> dict[str, str]:
    env = dict(os.environ)
    warm = Path(cli_tool("minun-compile")).parent  # the warm clients, then the real venv
    env["PATH"] = f"{warm}{os.pathsep}{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    return env


def bash(text: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-o", "pipefail", "-c", text], cwd=cwd, env=environment(),
                          capture_output=True, text=True, timeout=TIMEOUT)


def expected_pattern(line: str) -> re.Pattern:
    parts = [re.escape(p.strip()) for p in line.strip().split("...")]
    return re.compile(r".*?".join(parts))


def assert_shows(output: str, expected: list[str], what: str) -> None:
    """Each non-blank expected line occurs in `output`, in order."""
    lines = output.splitlines()
    k = 0
    for want in (e for e in expected if e.strip()):
        pattern = expected_pattern(want)
        while k < len(lines) and not pattern.search(lines[k]):
            k += 1
        assert k < len(lines), f"{what}: expected output line not found (in order): {want!r}"
        k += 1


def build_paths(text: str) -> set[str]:
    return set(re.findall(r"build/[\w./-]*\w", text))


def chains(commands: list[Command]) -> list[list[Command]]:
    """The commands of one block in chains: a command joins the chain of every earlier
    command that shares a `build/` path with it (what one writes, the next reads)."""
    groups: list[tuple[set[str], list[Command]]] = []
    for cmd in commands:
        paths = build_paths(cmd.text)
        joined = [g for g in groups if g[0] & paths]
        merged = (set(paths), [])
        for g in joined:
            merged[0].update(g[0])
            merged[1].extend(g[1])
            groups.remove(g)
        merged[1].append(cmd)
        merged[1].sort(key=lambda c: c.line)
        groups.append(merged)
    return sorted((g[1] for g in groups), key=lambda chain: chain[0].line)


def chain_params():
    params = []
    for block in all_blocks():
        if block.lang not in SHELL_LANGS:
            continue
        commands = [c for c in block_commands(block)
                    if command_name(c.text) not in EXCLUDED]
        for chain in chains(commands):
            slow = any(command_name(c.text) in SLOW for c in chain)
            params.append(pytest.param(chain, id=chain[0].id,
                                       marks=[pytest.mark.slow] if slow else []))
    return params


def check_setup_is_current() -> None:
    """A documented `make` target runs `make setup` first, and the copy's `.venv` is the
    real one: with a virtualenv older than pyproject.toml it would reinstall the package
    from this test's temporary copy (every script's `#!` then names a folder that is
    removed). Say so instead."""
    stamp = ROOT / ".venv" / ".installed-stamp"
    if stamp.exists() and stamp.stat().st_mtime < (ROOT / "pyproject.toml").stat().st_mtime:
        pytest.fail("the virtualenv is older than pyproject.toml: run `make setup` first")


@pytest.mark.parametrize("chain", chain_params())
def test_documented_commands(chain: list[Command], workdir: Path):
    if any(command_name(c.text).startswith("make ") for c in chain):
        check_setup_is_current()
    for cmd in chain:
        proc = bash(cmd.text, workdir)
        output = proc.stdout + proc.stderr
        assert proc.returncode == cmd.status, (
            f"{cmd.id}: `{cmd.text}` exited {proc.returncode}, expected {cmd.status}\n"
            f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}")
        assert_shows(output, cmd.expected, cmd.id)


@pytest.mark.parametrize("block", block_params("python"))
def test_documented_python(block: Block, workdir: Path):
    proc = subprocess.run([cli_tool("python"), "-c", block.text], cwd=workdir, env=environment(),
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, f"{block.id}:\n{proc.stderr[-3000:]}"


@pytest.mark.parametrize("block", block_params("seedot"))
def test_documented_seedot_program(block: Block, tmp_path: Path):
    import numpy as np

    from minun_mlir.frontends.seedot import check_source

    checked = check_source(block.text, block.id)  # a clear message if it does not check
    rng = np.random.default_rng(0)
    arrays = {b.name: rng.uniform(b.decl.lo, b.decl.hi, b.decl.shape).astype(np.float32)
              for b in checked.params}
    program, weights = tmp_path / "program.sd", tmp_path / "weights.npz"
    program.write_text(block.text + "\n")
    np.savez(weights, **arrays)
    proc = subprocess.run([cli_tool("minun-opt"), str(program), "--weights", str(weights)],
                          capture_output=True, text=True, timeout=TIMEOUT, env=environment())
    assert proc.returncode == 0, f"{block.id}:\n{proc.stderr}"
    assert "func.func @main" in proc.stdout


def test_the_docs_have_commands_to_test():
    commands = all_commands()
    assert len(commands) >= 10
    assert any(command_name(c.text).startswith(".venv/bin/minun-compile") for c in commands)
    assert len(block_params("python")) >= 3
    assert len(block_params("seedot")) >= 10


def test_exclusions_are_documented_commands():
    names = {command_name(c.text) for c in all_commands()}
    for name in (*EXCLUDED, *SLOW):
        assert name in names, f"{name!r} is listed here but no doc shows it any more"


def test_docs_do_not_point_outside_the_repository():
    for doc in DOCS:
        text = doc.read_text()
        for bad in ("../shared", "/work/"):
            assert bad not in text, f"{doc.relative_to(ROOT)} mentions {bad}"
