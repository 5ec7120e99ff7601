"""Build-once cache for the harness's own helpers.

The simavr host program, the QEMU counting plugin and the per-board support object
(start-up code, output, markers) are shipped as C sources in this package and compiled on
first use into a cache directory: `$MINUN_CACHE_DIR` if set, else `~/.cache/minun-mlir/`.
Each file name carries a hash of its sources, flags and compiler, so an edited source or
an upgraded compiler yields a new file rather than a stale one.

Several processes may ask for the same file at once (pytest-xdist): the first takes a lock
named after it and builds, the others wait and find it built. The build goes to a private
temporary name renamed into place (os.replace is atomic), so readers that do not lock see
either no file or a complete one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from .boards import Board
from .errors import ToolchainMissing
from .toolchain import require_tool, run_tool, tool_identity

SOURCE_DIR = Path(__file__).resolve().parent
SIMAVR_INCLUDE = Path("/usr/include/simavr")


def cache_dir() -> Path:
    root = os.environ.get("MINUN_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "minun-mlir"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def cached_build(name: str, suffix: str, key: list[str], sources: list[Path],
                 build: Callable[[Path], None]) -> Path:
    """Return `<cache>/<name>-<hash><suffix>`, running `build(tmp_path)` if it is missing."""
    digest = hashlib.sha256()
    for part in key:
        digest.update(part.encode() + b"\0")
    for src in sources:
        digest.update(src.name.encode() + b"\0" + src.read_bytes() + b"\0")
    final = cache_dir() / f"{name}-{digest.hexdigest()[:16]}{suffix}"
    if final.exists():
        return final
    with _lock(final.with_name(f".{final.name}.lock")):
        if final.exists():  # built by the process that held the lock before us
            return final
        fd, tmp_name = tempfile.mkstemp(prefix=f".{name}-", suffix=suffix + ".tmp",
                                        dir=final.parent)
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            build(tmp)
            os.replace(tmp, final)
        finally:
            tmp.unlink(missing_ok=True)
    return final


@contextlib.contextmanager
def _lock(path: Path):
    """An exclusive lock (fcntl.flock) on `path`: processes (and threads) building the
    same file take turns, so it is built once."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def simavr_host() -> Path:
    """The host program that runs AVR firmware in libsimavr and reports exact cycles."""
    if not (SIMAVR_INCLUDE / "sim_avr.h").exists():
        raise ToolchainMissing(
            f"error: the simavr headers ({SIMAVR_INCLUDE}/sim_avr.h) are missing; the avr "
            "target builds a small host program against libsimavr. Install them with "
            "`sudo apt-get install -y --no-install-recommends simavr libsimavr-dev`."
        )
    src = SOURCE_DIR / "simavr_host.c"
    cmd = ["gcc", "-O2", f"-I{SIMAVR_INCLUDE}", str(src), "-lsimavr"]

    def build(out: Path) -> None:
        # Debian's `pkg-config --libs simavr` is broken: link -lsimavr directly.
        run_tool(cmd + ["-o", str(out)], "building the simavr host program")

    return cached_build("minun-simavr", "", cmd + [tool_identity("gcc")], [src], build)


def qemu_plugin() -> Path:
    """The TCG plugin that counts instructions between the two marker functions."""
    srcs = [SOURCE_DIR / "qemu_count_plugin.c", SOURCE_DIR / "qemu_plugin_api.h"]
    cmd = ["gcc", "-O2", "-shared", "-fPIC", "-fvisibility=hidden", str(srcs[0])]

    def build(out: Path) -> None:
        run_tool(cmd + ["-o", str(out)], "building the QEMU counting plugin")

    return cached_build("minun-count-plugin", ".so", cmd + [tool_identity("gcc")], srcs, build)


def support_library(board: Board) -> Path:
    """minun_target.h implemented for one board, as a static library.

    Link it inside --whole-archive: nothing references the vector table or the .fini8
    exit hook by name, and --gc-sections still drops what the program does not use. (A
    relocatable `-r` object would be one file too, but avr-ld then bakes its default
    memory-region symbols into it, overriding the device's.)
    """
    require_tool(board.cc, board.packages, f"the {board.name} target")
    srcs = [SOURCE_DIR / "minun_target.h", SOURCE_DIR / "target_print.c",
            SOURCE_DIR / board.support_source]
    cflags = [*board.cflags, f"-I{SOURCE_DIR}"]
    ar = require_tool(board.prefix + "ar", board.packages, f"the {board.name} target")

    def build(out: Path) -> None:
        with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
            objs = []
            for src in srcs[1:]:
                obj = Path(tmp) / (src.stem + ".o")
                run_tool([board.cc, *cflags, "-c", str(src), "-o", str(obj)],
                         f"compiling the {board.name} support file {src.name}")
                objs.append(str(obj))
            out.unlink()  # ar would try to update the empty placeholder file
            run_tool([ar, "rcs", str(out), *objs], f"archiving the {board.name} support objects")

    key = [board.cc, *cflags, tool_identity(board.cc)]
    return cached_build(f"libminun-support-{board.name}", ".a", key, srcs, build)
