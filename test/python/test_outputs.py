"""Nothing of the user's is lost (minun_mlir/outputs.py): a compile replaces or removes only
the files it wrote (its manifest says which), never an input of the run, never a symlink,
device or FIFO; file paths reach the passes as they are, whatever characters they hold."""

from __future__ import annotations

import os
import string
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from cli_tools import tool as cli_tool

from minun_mlir.outputs import MANIFEST
from minun_mlir.pipeline import parse_pipeline, pipeline_text, quote

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PROTONN = ROOT / "examples" / "protonn.sd"
TRAIN = ROOT / "benchmarks" / "models" / "protonn-digits10" / "train.npy"
TEST = ROOT / "benchmarks" / "models" / "protonn-digits10" / "test.npy"


def tool(name: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([cli_tool(name), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def compile_cli(*args) -> subprocess.CompletedProcess:
    return tool("minun-compile", *args)


def user_files(out: Path) -> dict[str, bytes]:
    out.mkdir(exist_ok=True)
    files = {"model.c": b"/* my own model.c */\n", "model.h": b"/* my own model.h */\n"}
    for name, data in files.items():
        (out / name).write_bytes(data)
    return files


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.mark.parametrize("train", [TRAIN, "empty"])
def test_the_users_own_c_files_in_out_are_never_replaced_or_removed(tmp_path, train):
    """Item 1: a compile that FAILED removed the user's model.c/model.h ('removed the
    earlier compile's ...'); one that succeeded replaced them."""
    if train == "empty":
        train = tmp_path / "empty.npy"
        np.save(train, np.load(TRAIN)[:0])
    out = tmp_path / "out"
    mine = user_files(out)
    r = compile_cli(PROTONN, "--train", train, "--out", out)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "removed" not in r.stderr
    assert f"{out / 'model'}" in r.stderr and "was not written by minun-mlir" in r.stderr
    assert contents(out) == mine


def test_outputs_the_compile_wrote_are_replaced_and_removed_but_not_once_edited(tmp_path):
    out = tmp_path / "out"
    assert compile_cli(PROTONN, "--train", TRAIN, "--out", out).returncode == 0
    assert (out / MANIFEST).is_file()
    r = compile_cli(PROTONN, "--train", TRAIN, "--bits", "8", "--out", out)
    assert r.returncode == 0, r.stderr  # its own files: replaced
    assert "fixed8" in (out / "model.c").read_text() or "int8_t" in (out / "model.c").read_text()
    with open(out / "model.h", "a") as f:
        f.write("/* the user's edit */\n")
    before = contents(out)
    r = compile_cli(PROTONN, "--train", TRAIN, "--out", out)
    assert r.returncode == 1 and "model.h: error: this file was changed since minun-mlir " \
        "wrote it" in r.stderr
    assert contents(out) == before
    # a failed compile removes the outputs it wrote (the user deleted the edited one)
    empty = tmp_path / "empty.npy"
    np.save(empty, np.load(TRAIN)[:0])
    (out / "model.h").unlink()
    r = compile_cli(PROTONN, "--train", empty, "--out", out)
    assert r.returncode == 1 and "removed the earlier compile's model.c, minun_runtime.h, " \
        "memory_map.png" in r.stderr
    assert list(out.iterdir()) == []


def test_json_naming_an_input_is_refused(tmp_path):
    """Item 2: --json naming the --weights .npz replaced the weights with the report; also
    --assign's file, --train/--test, the model itself, and a symlink to one of them."""
    weights = tmp_path / "w.npz"
    np.savez(weights, **{p.stem: np.load(p) for p in (ROOT / "examples/protonn").glob("*.npy")})
    train = tmp_path / "train.npy"
    train.write_bytes(TRAIN.read_bytes())
    (tmp_path / "link.json").symlink_to(train)
    for target in (weights, train, tmp_path / "link.json", PROTONN):
        before = Path(target).resolve().read_bytes()
        r = compile_cli(PROTONN, "--weights", weights, "--train", train, "--json", target)
        assert r.returncode == 1 and "names an input of this run" in r.stderr, r.stderr
        assert Path(target).resolve().read_bytes() == before
    assert (tmp_path / "link.json").is_symlink()


def test_json_naming_the_assignment_is_refused(tmp_path):
    assign = tmp_path / "assignment.json"
    r = compile_cli(PROTONN, "--train", TRAIN, "--search", "shiftry", "--max-drop", "1",
                    "--jobs", "1", "--search-report", tmp_path / "report")
    assert r.returncode == 0, r.stderr
    assign.write_bytes((tmp_path / "report" / "assignment.json").read_bytes())
    before = assign.read_bytes()
    r = compile_cli(PROTONN, "--train", TRAIN, "--assign", assign, "--json", assign)
    assert r.returncode == 1 and "names an input of this run" in r.stderr
    assert assign.read_bytes() == before


def test_minun_opt_output_naming_its_input_is_refused(tmp_path):
    src = tmp_path / "p.sd"
    src.write_text(PROTONN.read_text())
    (tmp_path / "protonn").symlink_to(ROOT / "examples" / "protonn")
    r = tool("minun-opt", src.name, "-o", src.name, cwd=tmp_path)
    assert r.returncode == 1 and "-o names an input of this run" in r.stderr
    assert src.read_text() == PROTONN.read_text()
    r = tool("minun-opt", src.name, "-p", f'quantize{{data="{TRAIN}"}}', "-o", TRAIN,
             cwd=tmp_path)
    assert r.returncode == 1 and "-o names an input of this run" in r.stderr


def test_json_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path):
    """Item 3: --json through a symlink replaced the symlink with a regular file (as root on
    /dev/stdout: the system's /dev/stdout)."""
    report = tmp_path / "reports" / "r.json"
    report.parent.mkdir()
    report.write_text("old")
    (tmp_path / "r.json").symlink_to(report)
    (tmp_path / "null.json").symlink_to(os.devnull)
    r = compile_cli(PROTONN, "--train", TRAIN, "--json", tmp_path / "r.json")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "r.json").is_symlink() and '"config": "fixed16"' in report.read_text()
    r = compile_cli(PROTONN, "--train", TRAIN, "--json", tmp_path / "null.json")
    assert r.returncode == 0, r.stderr
    assert os.readlink(tmp_path / "null.json") == os.devnull
    assert not Path(os.devnull).is_file() and Path(os.devnull).is_char_device()


def test_json_to_stdout_and_to_a_fifo_is_written_through(tmp_path):
    link = tmp_path / "out.json"
    link.symlink_to("/dev/stdout")
    r = compile_cli(PROTONN, "--train", TRAIN, "--json", link)
    assert r.returncode == 0 and '"config": "fixed16"' in r.stdout
    assert link.is_symlink()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    r = compile_cli(PROTONN, "--train", TRAIN, "--json", fifo)
    reader.join(60)
    assert r.returncode == 0, r.stderr
    assert b'"config": "fixed16"' in got[0] and fifo.is_fifo()
    r = compile_cli(PROTONN, "--train", TRAIN, "--json", fifo)  # nobody reads: no hang
    assert r.returncode == 1 and "a FIFO that no process is reading" in r.stderr


@pytest.mark.parametrize("what", ["folder", "in-file", "long", "search-report-file"])
def test_bad_output_paths_are_refused_before_any_work(tmp_path, what):
    """Item 13: --json naming a folder left a stray .tmp; --json inside a file blamed --out;
    --search-report naming a file and --out with a name over 255 characters were internal
    errors."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    (tmp_path / "adir").mkdir()
    args = {"folder": ["--json", tmp_path / "adir"],
            "in-file": ["--json", afile / "r.json"],
            "long": ["--out", tmp_path / ("o" * 300)],
            "search-report-file": ["--search", "shiftry", "--max-drop", "1", "--jobs", "1",
                                   "--search-report", afile]}[what]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    r = compile_cli(PROTONN, "--train", TRAIN, *args)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "internal" not in r.stderr
    assert r.stderr.startswith(f"{args[-1]}: error: {args[-2]}"), r.stderr
    assert "protonn [fixed16]" not in r.stdout  # refused before the compile
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("ch", [c for c in string.printable if c not in "\r\x0b\x0c"])
def test_every_printable_character_travels_through_pipeline_text(ch):
    """Item 4: xDSL's printer pasted paths into quantize{data="..."} unescaped, so `tr\\".npy`
    came back as `tr".npy`."""
    path = f"tr{ch}\\{ch}\\\"{ch}.npy"
    passes = parse_pipeline(pipeline_text({"quantize": {"data": path}}))
    assert passes[1].data == path


def test_characters_pipeline_text_cannot_carry_are_refused():
    with pytest.raises(Exception, match="holds a carriage return"):
        quote("a\rb")


def test_train_path_with_backslash_quote_profiles_that_file(tmp_path):
    """The case of the report: tr\\".npy and tr".npy side by side, one of them damaged."""
    good, bad = tmp_path / 'tr\\".npy', tmp_path / 'tr".npy'
    good.write_bytes(TRAIN.read_bytes())
    data = np.load(TRAIN)
    data[:, 1:] = 0  # every example identical: a profile on it is useless
    np.save(bad, data)
    plain = tmp_path / "plain.npy"
    plain.write_bytes(TRAIN.read_bytes())
    reports = []
    for train in (good, plain):
        r = compile_cli(PROTONN, "--train", train, "--test", TEST, "--json",
                        tmp_path / "r.json")
        assert r.returncode == 0, r.stderr
        reports.append((tmp_path / "r.json").read_text())
    import json

    a, b = (json.loads(t) for t in reports)
    assert a["accuracy"] == b["accuracy"] > 0.9
    assert parse_pipeline(a["pipeline"])[1].data == str(good)
