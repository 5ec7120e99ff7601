"""Every file the tools write goes through here, so that nothing of the user's is lost.

Three rules, one place:
- An output folder (`--out`, a search report, a sketch) holds a manifest,
  `.minun-manifest.json`, of the files a tool wrote there and their SHA-256. A file in
  the folder may be replaced or removed only when the manifest lists it and its bytes are
  still the ones written: the user's own `model.c`, a symlink, or a file edited since is
  refused with its name, never touched.
- A single output file (`--json`, `minun-opt -o`) is never one of the run's inputs, and is
  never a folder. A regular file (or a new name) is written atomically: a temporary file
  beside it, renamed into place. A symlink is followed (its target written, the link
  kept); a device or FIFO (`/dev/stdout`, a pipe) is written through, never replaced.
- Everything is checked before any file is written (`check_folder`, `check_file`, called
  by the tools before the compile starts too), so a refusal writes nothing.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from minun_mlir.diagnostics import error

MANIFEST = ".minun-manifest.json"


def _reason(e: OSError) -> str:
    return e.strerror or str(e)


def _digest(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def _read_manifest(folder: Path) -> dict[str, str]:
    """name -> SHA-256 of the files a tool wrote into `folder` (empty when there is no
    manifest, or it is damaged: then nothing there counts as ours)."""
    path = folder / MANIFEST
    if path.is_symlink() or not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)}


def _write_manifest(folder: Path, files: dict[str, str]) -> None:
    path = folder / MANIFEST
    if not files:
        path.unlink(missing_ok=True)
        return
    text = json.dumps({"written_by": "minun-mlir", "files": dict(sorted(files.items()))},
                      indent=1) + "\n"
    _atomic_write(path, text.encode(), folder)


def owned(folder: Path, name: str, manifest: dict[str, str] | None = None) -> bool:
    """Whether `folder/name` is a regular file a tool wrote and nobody changed since."""
    path = folder / name
    manifest = _read_manifest(folder) if manifest is None else manifest
    if path.is_symlink() or not path.is_file():
        return False
    return manifest.get(name) == _digest(path)


def _check_length(path: Path, what: str) -> None:
    """A name the file system cannot hold is refused before any look at it (Path.exists
    itself raises on one)."""
    if any(len(part.encode()) > 255 for part in path.parts) or len(str(path).encode()) > 4000:
        raise error(f"{what}: a name in this path is too long for the file system", at=path)


def check_folder(folder: str | Path, names: Iterable[str], what: str = "--out") -> Path:
    """`folder` as a directory a tool may write `names` into: created if missing. A file or
    symlink in its place, a name too long, or a file there the tool does not own is an
    error before any work is done."""
    out = Path(folder)
    if str(folder) == "":
        raise error(f"{what} needs a folder name")
    _check_length(out, what)
    if out.is_symlink():
        raise error(f"{what} names a symbolic link; name the directory itself", at=out)
    if out.exists() and not out.is_dir():
        raise error(f"{what} names a file, not a directory" if out.is_file() else
                    f"{what} names something that is not a directory", at=out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            raise error(f"{what}: a name in this path is too long for the file system",
                        at=out) from None
        raise error(f"cannot create the output directory ({what}): {_reason(e)}", at=out
                    ) from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise error(f"cannot write to the output directory ({what}): permission denied",
                    at=out)
    manifest = _read_manifest(out)
    for name in names:
        path = out / name
        if len(name.encode()) > 255:
            raise error(f"the file name {name[:40]}... is too long", at=out)
        if not (path.exists() or path.is_symlink()):
            continue
        if path.is_dir() and not path.is_symlink():
            raise error(f"is a directory; the compile writes a file of this name into "
                        f"{what} {out}", at=path)
        if not owned(out, name, manifest):
            why = ("was changed since minun-mlir wrote it" if name in manifest else
                   "was not written by minun-mlir")
            raise error(f"this file {why}; it is left as it is: move it away or choose "
                        f"another {what} folder", at=path)
    return out


def write_files(files: dict[str, str] | dict[str, str | bytes], folder: str | Path,
                what: str = "--out") -> Path:
    """Write every file or none into `folder` (see `check_folder`): each goes to a
    temporary file beside its target first, and only when all are written are they renamed
    into place and recorded in the manifest. `bytes` contents are written as they are."""
    out = check_folder(folder, files, what)
    manifest = _read_manifest(out)
    temps: list[tuple[Path, Path, str]] = []
    try:
        for fname, text in files.items():
            data = text if isinstance(text, bytes) else text.encode()
            tmp = _temp_beside(out, fname, data)
            temps.append((tmp, out / fname, hashlib.sha256(data).hexdigest()))
    except OSError as e:
        for tmp, _, _ in temps:
            tmp.unlink(missing_ok=True)
        raise error(f"cannot write ({what}): {_reason(e)}", at=out) from None
    for tmp, final, digest in temps:
        os.replace(tmp, final)
        manifest[final.name] = digest
    _write_manifest(out, manifest)
    return out


def remove_written(folder: str | Path, names: Iterable[str]) -> list[str]:
    """Remove those of `names` in `folder` that a tool wrote and nobody changed since (a
    failed compile's stale outputs); returns the names removed. Anything else stays."""
    out = Path(folder)
    if not out.is_dir() or out.is_symlink():
        return []
    manifest = _read_manifest(out)
    removed = []
    for name in names:
        if owned(out, name, manifest):
            (out / name).unlink()
            manifest.pop(name, None)
            removed.append(name)
    gone = [k for k in manifest if not (out / k).exists() and not (out / k).is_symlink()]
    for name in gone:  # deleted by the user since: nothing left to own
        manifest.pop(name)
    if removed or gone:
        _write_manifest(out, manifest)
    return removed


def _temp_beside(folder: Path, name: str, data: bytes) -> Path:
    umask = os.umask(0o022)
    os.umask(umask)
    fd, tmp = tempfile.mkstemp(prefix=f".{name[:200]}.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, 0o666 & ~umask)  # as open() would have made it
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def _atomic_write(path: Path, data: bytes, folder: Path) -> None:
    tmp = _temp_beside(folder, path.name, data)
    os.replace(tmp, path)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists()
                                              and os.path.samefile(a, b))
    except OSError:
        return False


def inputs_under(paths: Iterable[str | Path | None]) -> list[Path]:
    """The files a run reads: each path given, and for a folder the files in it."""
    found: list[Path] = []
    for p in paths:
        if not p:
            continue
        path = Path(p)
        found.append(path)
        if path.is_dir():
            found.extend(q for q in path.iterdir() if q.is_file())
    return found


def check_file(path: str | Path, what: str, inputs: Iterable[str | Path | None] = (),
               refuse_suffixes: tuple[str, ...] = ()) -> Path:
    """`path` as a single output file: not empty, not a folder, not in a missing or
    unwritable folder, not one of `inputs` (files this run reads) and not a name ending in
    one of `refuse_suffixes` (sources and data a report must never replace)."""
    if str(path) == "":
        raise error(f"{what} needs a file name")
    target = Path(path)
    _check_length(target, what)
    if target.is_dir():
        raise error(f"{what} names a directory; name a file", at=target)
    for source in inputs_under(inputs):
        if _same_file(target, source):
            raise error(f"{what} names an input of this run ({source}); it is left as it "
                        "is: name another file", at=target)
    if _is_special(target):
        return target  # written through: a terminal, a pipe, /dev/null
    real = target.resolve() if target.is_symlink() else target
    if real.suffix.lower() in refuse_suffixes:
        raise error(f"{what} would overwrite a model, data or generated source file; name "
                    "a file of its own kind", at=target)
    parent = real.parent
    if not parent.is_dir():
        where = ("is a file, not a directory" if parent.exists() else "does not exist")
        raise error(f"{what}: the folder {parent} {where}", at=target)
    if len(real.name.encode()) > 255:
        raise error(f"{what}: the file name is too long for the file system", at=target)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise error(f"{what}: cannot write to the folder {parent}: permission denied",
                    at=target)
    return target


def _write_through(path: Path, data: bytes) -> None:
    """Write into a device or FIFO as it is. A FIFO nobody reads is an error, not a wait
    without end: it is opened without blocking first."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise error("a FIFO that no process is reading", at=path) from None
        raise
    os.set_blocking(fd, True)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _is_special(path: Path) -> bool:
    """A device, FIFO or socket (following symlinks): written through, never replaced."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def write_file(path: str | Path, text: str | bytes, what: str,
               inputs: Iterable[str | Path | None] = (),
               refuse_suffixes: tuple[str, ...] = ()) -> None:
    """Write one output file under the rules of `check_file`: atomically for a regular
    file (through a symlink to its target), straight through for a device or FIFO."""
    target = check_file(path, what, inputs, refuse_suffixes)
    data = text if isinstance(text, bytes) else text.encode()
    try:
        if _is_special(target):  # open() follows the links: /dev/stdout -> the pipe
            _write_through(target, data)
            return
        real = target.resolve() if target.is_symlink() else target
        _atomic_write(real, data, real.parent)
    except OSError as e:
        raise error(f"cannot write {what}: {_reason(e)}", at=target) from None


@contextmanager
def output_lock(folder: str | Path, names: Iterable[str] = (), what: str = "--out"
                ) -> Iterator[Path]:
    """Hold `folder` for one compile: a second compile into the same folder at the same
    time is an error (it would mix two models' files) instead of a race."""
    out = check_folder(folder, names, what)
    fd = os.open(out, os.O_RDONLY)  # flock on the directory itself: no lock file left behind
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise error(f"another minun-compile is writing to this folder; wait for it or "
                        f"use another {what}", at=out) from None
        yield out
    finally:
        os.close(fd)
