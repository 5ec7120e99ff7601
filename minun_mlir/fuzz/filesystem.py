"""File-system fuzzer: `minun-compile` and `minun-opt -o` writing where the user keeps
things. The output folder already holds the user's files, symlinks (to a file of theirs,
to /dev/null), FIFOs and folders under the names a compile writes; `--json` / `-o` names
an input of the run, a symlink, a FIFO, a folder, a path inside a file or a name too long;
file names hold any printable character (`"`, `\\`, braces, commas, spaces, non-ASCII),
with decoy files under the names a careless unescape would make of them.

Besides the usual outcomes, the runner compares the case's folder before and after
(`fuzz.changes_outside`): any file changed or removed that the tool does not own (its
manifest, `--json`'s own target) is the defect `clobbered`, and a case whose inputs are
all valid (`expect_accept`) must be accepted: reading a decoy is the defect `misread`.
"""

from __future__ import annotations

import random
import string

from minun_mlir.fuzz.cases import Case, choose_weighted
from minun_mlir.fuzz.seedot import dataset_bytes, npy, random_program

GENERATED = ("model.h", "model.c", "minun_runtime.h", "memory_map.png", "posit.c",
             "posit.h")
PRINTABLE = string.ascii_letters + string.digits + string.punctuation + " " + "éü€ß"
GARBAGE = b"\x93NUMPY this is a decoy, not the file the user named\n"


def random_name(rng: random.Random, stem_len: int = 8) -> str:
    """A file name of printable characters (no `/`, not `.` or `..`), often with the ones
    a pipeline text or shell treats specially."""
    special = '"\\{},= \'$`;*?[]#'
    chars = [rng.choice(special if rng.random() < 0.4 else PRINTABLE)
             for _ in range(rng.randint(1, stem_len))]
    name = "".join(chars).replace("/", "_")
    return name if name not in (".", "..") else name + "_"


def decoys(name: str) -> set[str]:
    """What a path could turn into when pipeline text unescapes it without escaping."""
    out = {name.replace('\\"', '"'), name.replace("\\\\", "\\"),
           name.replace("\\n", "\n"), name.replace("\\t", "\t"), name.replace('"', "")}
    return {d for d in out if d != name and "/" not in d and d not in (".", "..", "")}


def make_case(rng: random.Random, index: int) -> Case:
    text, weights, shape, lo, hi, argmax = random_program(rng, max_dim=5, max_ops=2)
    classes = 3 if argmax else 1
    files = {"model.sd": text.encode()}
    files.update({f"{k}.npy": npy(w) for k, w in weights.items()})
    files["train.npy"] = dataset_bytes(rng, shape, lo, hi, classes)
    files["test.npy"] = dataset_bytes(rng, shape, lo, hi, classes)
    argv = ["{dir}/model.sd", "--train", "{dir}/train.npy", "--test", "{dir}/test.npy",
            "--bits", str(rng.choice([8, 16]))]
    kind = choose_weighted(rng, [(3, "out"), (3, "json"), (2, "names"), (1, "opt"),
                                 (1, "rerun")])
    case = Case("filesystem", index, "minun-compile", argv, files, kind)
    if kind == "out":
        _out_folder(rng, case)
    elif kind == "json":
        _json_target(rng, case)
    elif kind == "names":
        _printable_names(rng, case)
    elif kind == "opt":
        _opt_output(rng, case)
    else:
        _rerun(rng, case)
    return case


def _out_folder(rng: random.Random, case: Case) -> None:
    """--out holding the user's things under the names a compile writes, or --out itself
    not a folder."""
    what = choose_weighted(rng, [(3, "user-file"), (2, "symlink"), (1, "fifo"), (1, "dir"),
                                 (1, "forged-manifest"), (1, "out-is-file"),
                                 (1, "out-is-symlink"), (1, "out-is-fifo"),
                                 (1, "out-in-file"), (1, "long-name")])
    case.argv += ["--out", "{dir}/out"]
    name = rng.choice(GENERATED)
    if what == "user-file":
        case.files[f"out/{name}"] = b"/* the user's own file */\n"
    elif what == "symlink":
        case.files["victim.txt"] = b"the user's file\n"
        case.links[f"out/{name}"] = rng.choice(["{dir}/victim.txt", "/dev/null"])
    elif what == "fifo":
        case.files["out/keep.txt"] = b"x"
        case.special[f"out/{name}"] = "fifo"
    elif what == "dir":
        case.files[f"out/{name}/inside.txt"] = b"the user's folder\n"
    elif what == "forged-manifest":  # lists the user's file with another digest
        case.files[f"out/{name}"] = b"/* the user's own file */\n"
        case.files["out/.minun-manifest.json"] = (
            b'{"files": {"' + name.encode() + b'": "' + b"0" * 64 + b'"}}')
    elif what == "out-is-file":
        case.files["out"] = b"a file of the user's"
    elif what == "out-is-symlink":
        case.files["real/keep.txt"] = b"x"
        case.links["out"] = "{dir}/real"
    elif what == "out-is-fifo":
        case.special["out"] = "fifo"
    elif what == "out-in-file":
        case.files["afile"] = b"x"
        case.argv[-1] = "{dir}/afile/out"
    else:
        case.argv[-1] = "{dir}/" + "o" * rng.choice([256, 300, 1000])
    case.what = f"--out: {what} ({name})"


def _json_target(rng: random.Random, case: Case) -> None:
    """--json naming something that is not a report of its own."""
    what = choose_weighted(rng, [(2, "model"), (2, "train"), (1, "test"), (2, "weights"),
                                 (1, "symlink-to-input"), (2, "symlink-to-user-file"),
                                 (2, "symlink-to-dev-null"), (1, "fifo"), (1, "dir"),
                                 (1, "in-file"), (1, "missing-folder"), (1, "empty"),
                                 (1, "long-name"), (1, "generated"), (2, "fine")])
    weights = sorted(k for k in case.files if k.endswith(".npy") and k[0] == "M")
    target = {"model": "{dir}/model.sd", "train": "{dir}/train.npy",
              "test": "{dir}/test.npy", "empty": "", "fine": "{dir}/report.json",
              "weights": "{dir}/" + (weights[0] if weights else "model.sd"),
              "missing-folder": "{dir}/nowhere/r.json", "in-file": "{dir}/model.sd/r.json",
              "dir": "{dir}/adir", "long-name": "{dir}/" + "r" * 300 + ".json",
              "generated": "{dir}/out/model.c"}.get(what, "{dir}/r.json")
    if what == "symlink-to-input":
        case.links["r.json"] = "{dir}/train.npy"
    elif what == "symlink-to-user-file":
        case.files["mine.json"] = b'{"the": "user\'s"}'
        case.links["r.json"] = "{dir}/mine.json"
    elif what == "symlink-to-dev-null":
        case.links["r.json"] = "/dev/null"
    elif what == "fifo":  # nobody reads it: refused, never a wait without end
        case.special["r.json"] = "fifo"
    elif what == "dir":
        case.files["adir/keep.txt"] = b"x"
    if what in ("generated",) or rng.random() < 0.3:
        case.argv += ["--out", "{dir}/out"]
    case.argv += ["--json", target]
    case.option_error = what == "empty"  # no path to name: the tool's name stands for it
    case.what = f"--json: {what}"


def _printable_names(rng: random.Random, case: Case) -> None:
    """Every file named with printable characters that pipeline text and shells treat
    specially; decoys under the names a careless unescape would make of them. All the
    inputs are valid, so the compile must succeed on exactly the files named."""
    renamed = {}
    for old in ("model.sd", "train.npy", "test.npy"):
        stem = random_name(rng)
        new = stem + old[old.index("."):]  # the suffix says the format
        while new in renamed.values() or new in case.files:
            new += "_"
        renamed[old] = new
    weights = {k: v for k, v in case.files.items() if k not in renamed}
    folder = random_name(rng) if rng.random() < 0.5 else ""
    prefix = f"{folder}/" if folder else ""
    files = {prefix + renamed[k]: case.files[k] for k in renamed}
    files.update({prefix + k: v for k, v in weights.items()})  # weights beside the program
    for k in ("train.npy", "test.npy"):
        for d in decoys(renamed[k]):
            if prefix + d not in files:
                files[prefix + d] = GARBAGE
    case.files = files
    case.argv = ["{dir}/" + prefix + renamed["model.sd"], "--train",
                 "{dir}/" + prefix + renamed["train.npy"], "--test",
                 "{dir}/" + prefix + renamed["test.npy"], *case.argv[5:]]
    if rng.random() < 0.5:
        case.argv += ["--out", "{dir}/" + random_name(rng)]
    if rng.random() < 0.5:
        case.argv += ["--json", "{dir}/" + random_name(rng) + ".json"]
    case.expect_accept = True
    case.what = f"names: {sorted(renamed.values())!r}"


def _opt_output(rng: random.Random, case: Case) -> None:
    """minun-opt -o naming its own input, a data file of its pipeline, or a symlink."""
    what = rng.choice(["input", "data", "symlink-to-input", "symlink-to-dev-null", "fine"])
    target = {"input": "{dir}/model.sd", "data": "{dir}/train.npy"}.get(what, "{dir}/o.mlir")
    if what == "symlink-to-input":
        case.links["o.mlir"] = "{dir}/model.sd"
    elif what == "symlink-to-dev-null":
        case.links["o.mlir"] = "/dev/null"
    case.tool = "minun-opt"
    case.argv = ["{dir}/model.sd", "-p",
                 'lower-composite-ops,quantize{data="{dir}/train.npy"}', "-o", target]
    case.what = f"-o: {what}"


def _rerun(rng: random.Random, case: Case) -> None:
    """A folder a compile wrote before (its manifest says so), one file edited since or
    not: the edited one is the user's now."""
    case.argv += ["--out", "{dir}/out"]
    case.rerun = True
    case.edit_after_first = rng.choice([None, *GENERATED[:4]])
    case.what = f"rerun, edited: {case.edit_after_first}"
