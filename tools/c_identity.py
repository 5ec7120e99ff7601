"""Byte-identity check of the generated C between two checkouts (a refactoring of the
lowering must not change the C of fixed point). The base is a commit
exported to a folder (`git archive BASE | tar -x -C build/ident/src`), imported in place
of this checkout (`--root`):

    .venv/bin/python tools/c_identity.py --root build/ident/src l2 build/ident/l2
    .venv/bin/python tools/c_identity.py --root build/ident/src c build/ident/l2 build/ident/base
    .venv/bin/python tools/c_identity.py c build/ident/l2 build/ident/new
    .venv/bin/python tools/c_identity.py diff build/ident/base build/ident/new

`l2` quantizes every suite model (minun_bench/suite.py) in the chosen configurations
(default: the fixed-point ones of the suite) and writes the L2 text; `c` lowers each L2
file to C for x86, avr and cortex-m4 with the running interpreter's compiler; `diff`
counts the identical configurations and names the others. The L2 is made once, so the
two C sets differ only by what lowers L2 to C."""

from __future__ import annotations

import argparse
import filecmp
import sys
from pathlib import Path

TARGETS = ("x86", "avr", "cortex-m4")
FIXED = {"fixed16": dict(bits=16), "fixed8": dict(bits=8),
         "fixed16-maxscale": dict(bits=16, scales="maxscale"),
         "fixed16-p8": dict(bits=16, param_bits=8),
         "fixed16-pc": dict(bits=16, per_channel=True),
         "fixed8-pc": dict(bits=8, per_channel=True)}
OTHER = {"zs8": dict(representation="zero-skew", bits=8),
         "posit8": dict(representation="posit", bits=8, es=2),
         "posit16": dict(representation="posit", bits=16, es=2),
         "posit8-noquire": dict(representation="posit", bits=8, es=2, quire=False),
         "bf16": dict(representation="bfloat16", bits=16),
         "float32": dict(representation="float32")}


def slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text)


def make_l2(out: Path, configs: list[str], only: str) -> None:
    from minun_bench.suite import suite
    from minun_mlir.driver import Options, load_model
    from minun_mlir.pipeline import run_pipeline

    out.mkdir(parents=True, exist_ok=True)
    for entry in suite():
        if only and only not in entry.name:
            continue
        l1 = load_model(entry.model, entry.weights, entry.dims)
        for name in configs:
            options = Options(**{**FIXED, **OTHER}[name])
            passes = options.passes(entry.train)
            to_l2 = [p.name for p in passes].index("quantize") + 1
            l2 = l1.clone()
            try:
                run_pipeline(l2, passes[:to_l2])
            except Exception as e:  # a configuration the model does not take
                print(f"skip {entry.name} {name}: {' '.join(str(e).split())[:120]}")
                continue
            (out / f"{slug(entry.name)}@{name}.mlir").write_text(str(l2))
            print(f"{entry.name} {name}", flush=True)


def make_c(l2_dir: Path, out: Path) -> None:
    from minun_mlir.codegen import emit_c
    from minun_mlir.ir_text import parse_ir

    for path in sorted(l2_dir.glob("*.mlir")):
        module = parse_ir(path.read_text(), str(path))
        for target in TARGETS:
            files = emit_c(module.clone(), target)
            d = out / path.stem / target
            d.mkdir(parents=True, exist_ok=True)
            for fname, text in files.items():
                (d / fname).write_text(text)
        print(path.stem, flush=True)


def diff(a: Path, b: Path) -> int:
    same = differ = 0
    for d in sorted(p for p in a.glob("*/*") if p.is_dir()):
        other = b / d.relative_to(a)
        names = sorted(f.name for f in d.iterdir())
        ok = other.is_dir() and all(filecmp.cmp(d / n, other / n, shallow=False)
                                    for n in names if (other / n).exists()) and \
            sorted(f.name for f in other.iterdir()) == names
        same += ok
        differ += not ok
        if not ok:
            print(f"differs: {d.relative_to(a)}")
    print(f"{same} identical, {differ} different configurations (model x config x target)")
    return 1 if differ else 0


def use_root(root: Path) -> None:
    """Import minun_mlir (and the folders it maps: dialects, lowering, passes) and
    minun_bench from `root` instead of this checkout: the editable install's mapping,
    pointed there."""
    finder = next(m for n, m in sys.modules.items()
                  if n.startswith("__editable___minun_mlir"))
    here = str(Path(finder.MAPPING["minun_mlir"]).parent)
    for k, v in finder.MAPPING.items():
        finder.MAPPING[k] = str(root.resolve()) + v[len(here):]
    sys.path.insert(0, str(root.resolve()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, help="a checkout to import instead of this one")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("l2")
    p.add_argument("out", type=Path)
    p.add_argument("--configs", default=",".join(FIXED))
    p.add_argument("--only", default="")
    p = sub.add_parser("c")
    p.add_argument("l2", type=Path)
    p.add_argument("out", type=Path)
    p = sub.add_parser("diff")
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.root is not None:
        use_root(args.root)
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    if args.cmd == "l2":
        make_l2(args.out, args.configs.split(","), args.only)
    elif args.cmd == "c":
        make_c(args.l2, args.out)
    else:
        return diff(args.a, args.b)
    return 0


if __name__ == "__main__":
    sys.exit(main())
