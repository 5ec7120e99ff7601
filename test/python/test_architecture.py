"""The architecture's structural rules, checked on the source (docs/architecture.md):

- a number format is asked, never named: outside a format's own package
  (minun_mlir/formats/<name>/) no code compares a value with a format's name ("fixed",
  "posit", ...), and a format's package names no other format; code asks the format's
  `Representation` (numerics/formats.py) for its options, bitwidths, searches or label;
- no import circle among the project's modules, counting imports inside functions (a
  lazy import that closes a circle only hides it); imports under `if TYPE_CHECKING:`
  are for annotations only, never executed, and do not count;
- no module-global state: no module keeps an empty container to fill as it runs (state
  lives in objects or ContextVars), but for the bounded caches listed with their reason.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# source folder -> the package it installs as (pyproject.toml's package-dir)
PACKAGES = {"minun_mlir": "minun_mlir", "dialects": "minun_mlir.dialects",
            "passes": "minun_mlir.passes", "lowering": "minun_mlir.lowering"}
# one package per number format (minun_mlir/formats/<package>/): its modules may name
# their own format and no other; the fuzzers, whose job is to write every format's
# options as a user would, may name any
FORMATS_PACKAGE = "minun_mlir.formats"


def own_format(module: str) -> str | None:
    """The format a module of `minun_mlir.formats.<package>` belongs to (its package's
    name, with '-' for '_': zero_skew -> zero-skew), else None."""
    parts = module.split(".")
    if module.startswith(FORMATS_PACKAGE + ".") and len(parts) > 2:
        return parts[2].replace("_", "-")
    return None


def modules() -> dict[str, Path]:
    out = {}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if folder == "minun_mlir" and parts and parts[0] in PACKAGES:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


def format_names() -> set[str]:
    from minun_mlir.numerics import formats

    return set(formats.names())


def _names_compared(node: ast.AST, names: set[str]) -> list[str]:
    """The format names a comparison (==, !=, in, not in) or a match case tests."""
    if isinstance(node, ast.Compare):
        sides = [node.left, *node.comparators]
    elif isinstance(node, ast.match_case):
        sides = [node.pattern]
    else:
        return []
    found = []
    for side in sides:
        for sub in ast.walk(side):
            if isinstance(sub, ast.Constant) and sub.value in names:
                found.append(sub.value)
    return found


def test_no_code_compares_a_format_name_outside_the_format():
    names = format_names()
    assert {"fixed", "posit", "zero-skew", "bfloat16", "float32"} <= names
    offenders = []
    for module, path in modules().items():
        if module.startswith("minun_mlir.fuzz"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for name in _names_compared(node, names - {own_format(module)}):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: '{name}'")
    assert not offenders, "\n".join(offenders)


def test_every_format_is_one_package():
    """Each registered format's Representation is defined in its own package, whose
    name is the format's, and nothing but formats lives in minun_mlir/formats/."""
    from minun_mlir.numerics import formats

    for name, rep in formats.REGISTRY.items():
        assert type(rep).__module__ == f"{FORMATS_PACKAGE}.{name.replace('-', '_')}." \
            "representation", (name, type(rep).__module__)
    packages = {p.name for p in (ROOT / "minun_mlir" / "formats").iterdir()
                if (p / "__init__.py").is_file()}
    weight_formats = {"int4"}  # a storage format of other formats' weights, no element type
    assert packages == {n.replace("-", "_") for n in formats.names()} | weight_formats
    assert own_format("minun_mlir.formats.zero_skew.loops") == "zero-skew"
    assert own_format("minun_mlir.numerics.convert") is None


def test_the_checker_sees_a_comparison():
    """The check above is not vacuous: it finds each form of comparison it looks for."""
    names = format_names()
    code = ("if rep == 'posit': pass\nif r in ('fixed', 'x'): pass\n"
            "match r:\n    case 'zero-skew': pass\nx = {'fixed': 1}['fixed']\n")
    found = [n for node in ast.walk(ast.parse(code)) for n in _names_compared(node, names)]
    assert sorted(found) == ["fixed", "posit", "zero-skew"]


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(), str(path))
        typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(node.test)
                       for stmt in node.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                names = [f"{base}.{a.name}" for a in node.names]
                # `from package import module, ...` imports the modules (and, first, the
                # package, which is imported anyway before any module in it)
                targets = names if all(n in mods for n in names) else [base, *names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            graph[name] |= {t for t in targets if t in mods and t != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle():
    graph = import_graph()
    assert len(graph) > 50
    assert not circles(graph), circles(graph)


def test_type_checking_imports_do_not_count():
    """The graph leaves out `if TYPE_CHECKING:` imports and keeps every other kind."""
    graph = import_graph()
    # lowering/loops' modules name the pass's Lowering class in annotations only
    assert "minun_mlir.lowering.lower_to_loops" not in graph["minun_mlir.lowering.loops.linear"]
    # a lazy import inside a function counts (here: the pass importing a family)
    assert graph["minun_mlir.lowering.lower_to_loops"] & {
        "minun_mlir.lowering.loops.linear", "minun_mlir.lowering.loops"}


def test_the_circle_finder_finds_one():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


# -- no module-global state ----------------------------------------------------------------

# Module-level mutable containers allowed, and why: each is a bounded cache of values that
# are a pure function of their key, so no result depends on what ran before.
MUTABLE_GLOBALS_ALLOWED = {
    ("minun_mlir.native", "_PROGRAMS"): "built host programs keyed by their IR text "
                                        "(cleared past 32)",
    ("minun_mlir.native", "_PROFILES"): "profile statistics keyed by the program's text, "
                                        "the features and the evaluator (cleared past 64; "
                                        "callers get copies)",
    ("minun_mlir.fuzz", "KNOWN_DEFECTS"): "a constant table (empty: no defect open)",
}
_MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter"}


def _mutable_globals(tree: ast.Module) -> list[str]:
    """Names bound at module level to an empty mutable container (to be filled as the
    program runs)."""
    found = []
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if not isinstance(target, ast.Name) or value is None:
            continue
        # an empty container is there to be filled later; a filled literal is a table
        mutable = (isinstance(value, ast.List) and not value.elts) or (
            isinstance(value, ast.Dict) and not value.keys) or (
            isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id in _MUTABLE_CALLS and not value.args[1:]
            and (not value.args or value.func.id == "defaultdict"))
        if mutable:
            found.append(target.id)
    return found


def test_no_module_global_state():
    """State that outlives a call lives in an object (a pass, an Evaluator, a worker) or
    a ContextVar, not in a module: the same compile gives the same result whatever ran
    before it in the process (a search's workers, the tests)."""
    found = []
    for module, path in modules().items():
        for name in _mutable_globals(ast.parse(path.read_text())):
            if (module, name) not in MUTABLE_GLOBALS_ALLOWED:
                found.append(f"{path.relative_to(ROOT)}: {name}")
    assert not found, "module-level mutable state:\n" + "\n".join(found)


def test_the_state_checker_sees_a_global():
    tree = ast.parse("A: dict[str, int] = {}\nB = []\nC = (1, 2)\nD = {'k': 1}\n"
                     "E = defaultdict(list)\nF = set()\nG = [1]\n")
    assert _mutable_globals(tree) == ["A", "B", "E", "F"]


def test_pyproject_installs_every_package():
    """A regular (non-editable) install gets every package: pyproject.toml lists them
    one by one, so a new folder left out would import from a checkout and not from a
    wheel (the TFLite frontend once was)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = set()
    for folder, package in PACKAGES.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            if folder == "minun_mlir" and parts and parts[0] in PACKAGES:
                continue
            found.add(".".join([package, *parts]))
    assert found == listed, (sorted(found - listed), sorted(listed - found))
