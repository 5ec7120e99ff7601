"""Compiled objects from the build cache, keyed by everything they are made of.

The same C file is often compiled again with the same flags: the harness of a model for
the same test inputs, the same model C built by several tests (or test workers). An
object depends only on the compiler, its flags, the source's text and file name (GCC
writes the base name into the object; without -g nothing else of its path) and the text
of the headers it includes. So the object is looked up in the cache (cache.cached_build)
under a hash of exactly those, and compiled only when it is missing.

The headers are found as GCC finds them: `#include "x.h"` in the including file's own
folder, then in the -I folders in order; `#include <x.h>` in the -I folders. One that is
in none of them is a system header, covered by the compiler's identity. A source whose
object could depend on anything else is compiled directly, never cached: debug
information (-g records paths), flags outside a known list, a computed `#include MACRO`,
`#include_next`, `__has_include`, or `__FILE__`, `__DATE__`, `__TIME__` (also assert.h's
assert, which expands __FILE__), or header folders set in the environment (CPATH...).

Objects not used for PRUNE_DAYS are deleted (once per process, when it first stores
one), so the cache does not grow without bound as the compiled C changes.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import time
from pathlib import Path

from . import toolchain
from .cache import cached_build

_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
_ANY_INCLUDE = re.compile(rb"^[ \t]*#[ \t]*(?:include|import)", re.M)
_PATH_DEPENDENT = re.compile(rb"__FILE__|__BASE_FILE__|__DATE__|__TIME__|__TIMESTAMP__|"
                             rb"__has_include|__COUNTER__")
# flags whose effect on the object is the flag itself (no file, no path)
_KEYED_FLAG = re.compile(r"-(m|O|f|std=|D|U|W|w$|pipe$|pedantic$)")
# ... except these, which record paths (debug and profile data, sanitizers' module names)
# or name files (assembler, preprocessor and linker options)
_UNKEYED = ("-fdebug", "-fprofile", "-ftest-coverage", "-fstack-usage", "-fdump",
            "-fcallgraph-info", "-fmacro-prefix-map", "-ffile-prefix-map", "-fsanitize",
            "-Wa,", "-Wp,", "-Wl,")
_SYSTEM_HEADERS_WITH_PATHS = {"assert.h"}
_SEARCH_ENV = ("CPATH", "C_INCLUDE_PATH", "GCC_EXEC_PREFIX", "COMPILER_PATH")
PRUNE_DAYS = 14


def _headers(src: Path, search: list[Path]) -> list[Path] | None:
    """src and every header it includes from the search folders (recursively), or None
    when the object could depend on more than these files' text."""
    found: list[Path] = []
    todo = [src]
    seen = {src.resolve()}
    while todo:
        path = todo.pop()
        found.append(path)
        text = path.read_bytes()
        includes = _INCLUDE.findall(text)
        if _PATH_DEPENDENT.search(text) or len(includes) != len(_ANY_INCLUDE.findall(text)):
            return None
        for kind, name in includes:
            name = name.decode(errors="replace")
            folders = ([path.parent] if kind == b'"' else []) + search
            hit = next((f / name for f in folders if (f / name).is_file()), None)
            if hit is None:
                if Path(name).name in _SYSTEM_HEADERS_WITH_PATHS:
                    return None
                continue  # a system header: the compiler's identity keys it
            if hit.resolve() not in seen:
                seen.add(hit.resolve())
                todo.append(hit)
    return found


def cacheable_files(sources: list[Path], flags: list[str]) -> list[Path] | None:
    """The sources and every header they include, found as GCC finds them under `flags`'
    -I folders: all the files a compile with `flags` reads besides system headers. None
    when its output could depend on more than their text and the flags (see above)."""
    search = [Path(f[2:]) for f in flags if f.startswith("-I") and len(f) > 2]
    keyed = [f for f in flags if not f.startswith("-I")]
    if (len(search) != sum(f.startswith("-I") for f in flags)
            or not all(_KEYED_FLAG.match(f) and not f.startswith(_UNKEYED) for f in keyed)
            or any(os.environ.get(v) for v in _SEARCH_ENV)):
        return None
    files: list[Path] = []
    for src in sources:
        found = _headers(src, search)
        if found is None:
            return None
        files += found
    return files


def compile_object(cc: str, flags: list[str], src: Path, obj: Path, what: str) -> None:
    """`cc flags -c src -o obj`, or a copy of the same object from the build cache."""
    keyed = [f for f in flags if not f.startswith("-I")]
    files = cacheable_files([src], flags)
    if files is None:
        toolchain.run_tool([cc, *flags, "-c", str(src), "-o", str(obj)], what)
        return

    def build(out: Path) -> None:
        toolchain.run_tool([cc, *flags, "-c", str(src), "-o", str(out)], what)
        _prune(out.parent)

    # the source's own name (the object's file symbol) is the first file hashed
    key = [cc, toolchain.tool_identity(cc), *keyed]
    cached = cached_build(f"obj-{Path(cc).name}-{src.stem}"[:60], ".o", key, files, build)
    try:
        shutil.copyfile(cached, obj)
        os.utime(cached)  # used now: kept by _prune
    except FileNotFoundError:  # pruned by another process in between
        toolchain.run_tool([cc, *flags, "-c", str(src), "-o", str(obj)], what)


@functools.cache
def _prune(folder: Path) -> None:
    """Delete the cached objects of `folder` unused for PRUNE_DAYS, once per process
    (functools.cache: a later call for the same folder does nothing)."""
    cutoff = time.time() - PRUNE_DAYS * 86400
    for path in folder.glob("obj-*.o"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
        except OSError:  # deleted by another process meanwhile
            pass
