"""Where the test suite's CPU goes, per test and per tool, with repeated work marked.

A pytest plugin (not loaded by `make test`): with it, every test appends one JSON line
with its CPU seconds (setup, call and teardown, its process and the children it waited
for), and every compile_model call, toolchain run (gcc, avr-gcc, arm-none-eabi-gcc, ...)
and simulator run appends one with its own CPU and a content key (the model's bytes and
options; the command with each input file replaced by a hash of its bytes), so that work
done twice with identical inputs shows. CPU, unlike wall time, does not grow when the
machine is shared. Then summarise:

    MINUN_PROFILE=build/profile.jsonl PYTHONPATH=tools PYTEST_ADDOPTS="-p profile_suite" \\
        make test
    python tools/profile_suite.py build/profile.jsonl
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import resource
import sys
from pathlib import Path

_CURRENT: dict[str, str | None] = {"test": None}


def _digest(path: str) -> str:
    try:
        return hashlib.sha1(Path(path).read_bytes()).hexdigest()[:12]
    except OSError:
        return "?"


def _command_key(cmd) -> str:
    """The command with input files as hashes of their bytes, outputs and temporary
    folders blanked: the same key means the same work."""
    parts, after_o = [], False
    for arg in map(str, cmd):
        if after_o:
            parts.append("<out>")
        elif os.path.isfile(arg):
            parts.append(Path(arg).suffix + ":" + _digest(arg))
        elif arg.startswith(("/tmp", "/var/tmp")):
            parts.append("<tmp>")
        else:
            parts.append(arg)
        after_o = arg == "-o"
    return hashlib.sha1(" ".join(parts).encode()).hexdigest()[:16]


def _log(kind: str, key: str, cpu: float) -> None:
    with open(os.environ["MINUN_PROFILE"], "a") as f:
        f.write(json.dumps({"test": _CURRENT["test"], "kind": kind, "key": key,
                            "cpu": round(cpu, 3)}) + "\n")


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _wrap_children(module, name: str, kind_of) -> None:
    """Wrap module.name (which runs a child process) to log its children's CPU."""
    original = getattr(module, name)

    def wrapped(cmd, *args, **kwargs):
        before = _cpu(resource.RUSAGE_CHILDREN)
        try:
            return original(cmd, *args, **kwargs)
        finally:
            _log(kind_of(cmd), _command_key(cmd), _cpu(resource.RUSAGE_CHILDREN) - before)

    setattr(module, name, wrapped)


def _install() -> None:
    import minun_mlir.driver as driver
    import minun_mlir.targets.build as build
    import minun_mlir.targets.cache as cache
    import minun_mlir.targets.layers as layers
    import minun_mlir.targets.simulate as simulate
    import minun_mlir.targets.toolchain as toolchain

    def tool(cmd) -> str:
        return "tool:" + Path(str(cmd[0])).name

    for module in (toolchain, build, cache, layers):  # each bound run_tool at import
        if hasattr(module, "run_tool"):
            _wrap_children(module, "run_tool", tool)
    _wrap_children(simulate, "_run", lambda cmd: "sim:" + Path(str(cmd[0])).name)

    original = driver.compile_model

    def compile_model(model, options=None, **kwargs):
        options = driver.Options() if options is None else options
        parts = [_digest(str(model)), repr(options)]
        parts += [f"{k}={_digest(str(v)) if os.path.isfile(str(v)) else v!r}"
                  for k, v in sorted(kwargs.items()) if k != "out_dir"]
        before = _cpu(resource.RUSAGE_SELF)
        try:
            return original(model, options, **kwargs)
        finally:
            _log("compile_model", hashlib.sha1("|".join(parts).encode()).hexdigest()[:16],
                 _cpu(resource.RUSAGE_SELF) - before)

    driver.compile_model = compile_model


if "MINUN_PROFILE" in os.environ and "pytest" in sys.modules:
    import pytest

    _install()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        _CURRENT["test"] = item.nodeid
        before = _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN)
        yield
        _log("test", item.nodeid,
             _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN) - before)


def summarise(path: str, top: int = 30) -> None:
    """Per kind of work: count, CPU, and the part repeated with identical inputs; then the
    costliest test files."""
    rows = [json.loads(line) for line in open(path)]
    tests = [r for r in rows if r["kind"] == "test"]
    print(f"{len(tests)} tests, {sum(r['cpu'] for r in tests):.0f} CPU s")
    kinds: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0, 0.0])
    seen = set()
    for r in rows:
        if r["kind"] == "test":
            continue
        k = kinds[r["kind"]]
        k[0] += 1
        k[1] += r["cpu"]
        if (r["kind"], r["key"]) in seen:
            k[2] += 1
            k[3] += r["cpu"]
        seen.add((r["kind"], r["key"]))
    print(f"{'kind':34s} {'runs':>6s} {'CPU s':>8s} {'repeats':>8s} {'their CPU':>10s}")
    for kind, (n, cpu, rn, rcpu) in sorted(kinds.items(), key=lambda kv: -kv[1][1]):
        print(f"{kind:34s} {n:6d} {cpu:8.1f} {rn:8d} {rcpu:10.1f}")
    files = collections.Counter()
    for r in tests:
        files[r["key"].split("::")[0]] += r["cpu"]
    print()
    for name, cpu in files.most_common(top):
        print(f"{cpu:8.1f}  {name}")


if __name__ == "__main__":
    summarise(sys.argv[1])
