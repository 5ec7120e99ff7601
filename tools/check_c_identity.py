"""Byte-identity check of the generated C across a refactoring of the C back end.

    python tools/check_c_identity.py l2 CACHE        # once, with the base commit: L2 texts
    python tools/check_c_identity.py c CACHE OUT     # with each tree: the C of every L2
    diff -r OUT_base OUT_new                         # must print nothing

`l2` quantizes every suite model (minun_bench/suite.py) in every representation and the
test/zoo ONNX models at fixed16, and writes each L2 module as text; `c` emits the C of
each for x86, the Uno and the Cortex-M4 (and, for fixed16, with the input in scratch), so
the two trees are compared on the same L2 modules whatever the quantizer does.
"""

from __future__ import annotations

import importlib.util
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPRS = {"fixed16": dict(bits=16), "fixed8": dict(bits=8),
         "fixed16-p8": dict(bits=16, param_bits=8),
         "fixed16-maxscale": dict(bits=16, scales="maxscale"),
         "fixed16-pc": dict(bits=16, per_channel=True), "fixed8-pc": dict(bits=8, per_channel=True),
         "posit8-noquire": dict(repr="posit", bits=8, quire=False),
         "zero-skew": dict(repr="zero-skew", bits=8), "posit16": dict(repr="posit", bits=16),
         "posit8": dict(repr="posit", bits=8, es=0),
         "bfloat16": dict(repr="bfloat16", bits=16), "float": dict(repr="float32")}
TARGETS = ("x86", "avr", "cortex-m4")


def l2_modules(cache: Path) -> None:
    from minun_bench.suite import suite
    from minun_mlir.driver import load_model
    from minun_mlir.pipeline import lower_to_l2

    cache.mkdir(parents=True, exist_ok=True)
    jobs = []
    for e in suite():
        for label, q in REPRS.items():
            jobs.append((f"{e.name.split(' ')[0]}--{label}",
                         lambda e=e: load_model(e.model, e.weights, e.dims),
                         dict(q, data=str(e.train))))
    spec = importlib.util.spec_from_file_location("zoo_manifest", ROOT / "test/zoo/manifest.py")
    manifest = importlib.util.module_from_spec(spec)
    sys.modules["zoo_manifest"] = manifest
    spec.loader.exec_module(manifest)
    for m in manifest.models():
        if "fixed16" in m.known:
            continue
        jobs.append((f"zoo-{m.name.replace('/', '-')}--fixed16",
                     lambda m=m: _zoo_l1(m), dict(bits=16, data=str(m.path.parent.parent /
                                                                 m.train))))
    for name, l1, q in jobs:
        out = cache / f"{name}.mlir"
        if out.exists():
            continue
        t0 = time.process_time()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                l2 = lower_to_l2(l1(), **q)
        except Exception as exc:  # noqa: BLE001 - a configuration the compiler refuses
            print(f"skip {name}: {str(exc).splitlines()[0][:120]}", flush=True)
            continue
        out.write_text(str(l2))
        print(f"{name}: {time.process_time() - t0:.1f} s", flush=True)


def _zoo_l1(m):
    import onnx
    from onnx import TensorProto, helper

    from minun_mlir.frontends.onnx import import_model

    model = onnx.load(str(m.path))
    out = m.output or model.graph.output[-1].name
    if not m.output:
        producer = next((n for n in model.graph.node if out in n.output), None)
        if producer is not None and producer.op_type == "ZipMap":
            out = producer.input[0]
    kept = next((o for o in model.graph.output if o.name == out), None)
    kept = kept or helper.make_tensor_value_info(out, TensorProto.FLOAT, None)
    del model.graph.output[:]
    model.graph.output.append(kept)
    return import_model(model, m.dims or None, outputs=[out])


def c_files(cache: Path, out: Path) -> None:
    from minun_mlir.codegen import emit_c
    from minun_mlir.ir_text import parse_ir

    n = 0
    for path in sorted(cache.glob("*.mlir")):
        l2 = parse_ir(path.read_text(), str(path))
        variants = [(t, False) for t in TARGETS]
        if path.stem.endswith("--fixed16"):
            variants += [(t, True) for t in TARGETS]
        for target, in_place in variants:
            d = out / path.stem / (target + ("-inplace" if in_place else ""))
            try:
                files = emit_c(l2, target, input_in_scratch=in_place)
            except Exception as exc:  # noqa: BLE001 - recorded, compared like the C
                files = {"error.txt": f"{type(exc).__name__}: {exc}\n"}
            d.mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                (d / name).write_text(text)
            n += 1
    print(f"{n} configurations written to {out}")


if __name__ == "__main__":
    if sys.argv[1] == "l2":
        l2_modules(Path(sys.argv[2]))
    else:
        c_files(Path(sys.argv[2]), Path(sys.argv[3]))
