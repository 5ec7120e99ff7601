"""The fuzzers (minun_mlir/fuzz/) with fixed seeds: every case is accepted or
rejected with a located diagnostic that names the input; no internal error, traceback,
hang or crash. The nightly marker runs thousands of cases (`pytest -m nightly`)."""

from __future__ import annotations

import pytest

from minun_mlir.fuzz import FUZZERS, make_cases, run_cases, summarize

CASES = {"seedot": 100, "onnx": 100, "ir": 80, "data": 100, "filesystem": 120,
         "options": 300}


def check(fuzzer: str, count: int, seed: int) -> None:
    results = run_cases(make_cases(fuzzer, count, seed))
    table = summarize(results)[fuzzer]
    assert table["cases"] == count
    defects = [r for r in results if r.defect]
    assert not defects, "\n".join(
        f"{r.fuzzer}#{r.index} (seed {seed}) {r.outcome}: {r.what}: {r.message[:400]}"
        for r in defects[:10])
    assert table["accepted"] > 0 and table["rejected"] > 0, table


@pytest.mark.parametrize("fuzzer", FUZZERS)
def test_fuzzer(fuzzer):
    check(fuzzer, CASES[fuzzer], seed=20261123)


@pytest.mark.nightly
@pytest.mark.parametrize("fuzzer", FUZZERS)
def test_fuzzer_nightly(fuzzer):
    check(fuzzer, 2500, seed=7)


def test_same_seed_same_cases():
    a = [(c.argv, c.files, c.what) for c in make_cases("seedot", 20, 3)]
    b = [(c.argv, c.files, c.what) for c in make_cases("seedot", 20, 3)]
    assert a == b


def test_hang_and_crash_are_defects():
    """A case over the time limit is a hang; the worker is replaced and the next runs."""
    from minun_mlir.fuzz import Case

    slow = Case("seedot", 0, "minun-opt", ["{dir}/model.sd"], {"model.sd": b"let X = "},
                "slow")
    import minun_mlir.fuzz as fuzz

    results = fuzz.run_cases([slow, slow], limit=0.0)
    assert [r.outcome for r in results] in (["hang", "hang"], ["hang", "rejected"],
                                            ["rejected", "rejected"], ["rejected", "hang"])


def test_rejection_must_name_the_file():
    from minun_mlir.fuzz import Case, classify

    case = Case("data", 0, "minun-compile", [], {"train.npy": b""})
    assert classify(case, 1, "/tmp/x/train.npy: error: holds no examples", "/tmp/x") == \
        "rejected"
    assert classify(case, 1, "model.sd:3:4: error: bad", "/tmp/x") == "unlocated"
    assert classify(case, 1, "error: holds no examples", "/tmp/x") == "unlocated"
    assert classify(case, 1, "minun-compile: internal error in quantize: KeyError", "/x") \
        == "internal"
    assert classify(case, 1, "Traceback (most recent call last):\n", "/x") == "traceback"
    assert classify(case, 0, "", "/x") == "accepted"


def test_a_clobbered_file_is_a_defect(tmp_path):
    """The file-system check itself: a run that replaces a user's file, turns a symlink
    into a file or leaves a stray file beside --json is caught; the files the tool owns
    (a manifest-listed output, --json's own file) are not."""
    import json
    import os

    from minun_mlir.fuzz import changes_outside, snapshot
    from minun_mlir.outputs import write_files

    out = tmp_path / "out"
    write_files({"model.c": "ours"}, out)
    (tmp_path / "mine.txt").write_text("the user's")
    (tmp_path / "link").symlink_to(tmp_path / "mine.txt")
    argv = ["m.sd", "--out", str(out), "--json", str(tmp_path / "r.json")]
    before = snapshot(str(tmp_path))
    write_files({"model.c": "ours again", "model.h": "new"}, out)  # owned: fine
    (tmp_path / "r.json").write_text("{}")  # --json's own target: fine
    assert changes_outside(argv, str(tmp_path), before, snapshot(str(tmp_path))) == []
    before = snapshot(str(tmp_path))
    (tmp_path / "mine.txt").write_text("replaced")
    (tmp_path / "link").unlink()
    (tmp_path / "link").write_text("a file now")
    (tmp_path / ".r.json.tmp").write_text("stray")
    (out / "model.c").write_text("not through the manifest")
    manifest = json.loads((out / ".minun-manifest.json").read_text())
    assert "model.c" in manifest["files"]
    assert changes_outside(argv, str(tmp_path), before, snapshot(str(tmp_path))) == [
        ".r.json.tmp", "link", "mine.txt", os.path.join("out", "model.c")]


def test_options_oracle_flags_an_option_without_effect():
    """An accepted option must show in the output as declared; a refusal names one of the
    options; a lone option the model calls valid is accepted, one it calls invalid refused
    (old main accepted `--es 1` on fixed point and `--maxscale 3` without maxscale)."""
    from minun_mlir.fuzz import Case, classify

    def case(valid, expect=("es=1",)):
        return Case("options", 0, "minun-compile", ["m.sd", "--es", "1"], expect=expect,
                    flags=("--es",), valid=valid, option_error=True)

    assert classify(case(None), 0, "", "/x", "quantize{es=1}") == "accepted"
    assert classify(case(None), 0, "", "/x", "quantize{bits=16}") == "ignored"
    assert classify(case(False, ()), 0, "", "/x", "quantize{}") == "ignored"
    refusal = "minun-compile: error: --es is for --repr posit\n"
    assert classify(case(None), 1, refusal, "/x") == "rejected"
    assert classify(case(True), 1, refusal, "/x") == "ignored"
    assert classify(case(None), 1, "minun-compile: error: --bits is bad\n", "/x") == "ignored"
