"""Shared by the codegen tests: the models and configurations, memoised quantization and
evaluator outputs (per process: with pytest-xdist each worker builds a model/config at
most once), and a host build of generated C that runs a whole batch in one process."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType

from minun_mlir.data import Dataset, load_dataset, predictions
from minun_mlir.dialects import num
from minun_mlir.driver import load_model
from minun_mlir.modules import decision_threshold
from minun_mlir.numerics.float_eval import model_inputs
from minun_mlir.numerics.l2_eval import decode_outputs, encode_input, evaluate_l2
from minun_mlir.pipeline import lower_to_l2

STRICT = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic")

HOST_MAIN = r"""
#include <stdio.h>
#include <stdint.h>
#include "model.h"

/* Reads rows of MINUN_INPUT_SIZE inputs from argv[1] (raw bytes); writes, per row, the
 * label (int32) and the MINUN_OUTPUT_SIZE scores (raw) to stdout. argv[2] = "float" runs
 * minun_predict_float on float rows instead, "uint8" minun_predict_uint8 on its types. */
int main(int argc, char **argv)
{
    FILE *f;
    (void)argc;
    f = fopen(argv[1], "rb");
    if (!f)
        return 2;
#ifdef MINUN_UINT8_IO
    if (argc > 2 && argv[2][0] == 'u') {
        minun_uint8_input_t x[MINUN_INPUT_SIZE];
        minun_uint8_output_t y[MINUN_OUTPUT_SIZE];
        while (fread(x, sizeof x, 1, f) == 1) {
            int32_t label = minun_predict_uint8(x, y);
            fwrite(&label, sizeof label, 1, stdout);
            fwrite(y, sizeof y, 1, stdout);
        }
        fclose(f);
        return 0;
    }
#endif
    if (argc > 2) {
        float x[MINUN_INPUT_SIZE], y[MINUN_OUTPUT_SIZE];
        while (fread(x, sizeof x, 1, f) == 1) {
            int32_t label = minun_predict_float(x, y);
            fwrite(&label, sizeof label, 1, stdout);
            fwrite(y, sizeof y, 1, stdout);
        }
    } else {
        minun_input_t x[MINUN_INPUT_SIZE];
        minun_output_t y[MINUN_OUTPUT_SIZE];
        while (fread(x, sizeof x, 1, f) == 1) {
            int32_t label = minun_predict(x, y);
            fwrite(&label, sizeof label, 1, stdout);
            fwrite(y, sizeof y, 1, stdout);
        }
    }
    fclose(f);
    return 0;
}
"""


def build_host(model_dir: Path, exe: Path, cflags=("-O2",), cc: str = "gcc") -> Path:
    """Build the host program of the C in model_dir into exe. The same C with the same
    flags is built by several tests (a model and configuration that more than one test
    checks), so the program comes from the build cache, keyed by every file the compile
    reads, the flags and the compiler and linker, when that key is complete (as for the
    board objects: targets/objects.py); otherwise (sanitizers and debug information
    record paths) it is built."""
    from minun_mlir.targets.cache import cached_build
    from minun_mlir.targets.objects import cacheable_files
    from minun_mlir.targets.toolchain import tool_identity

    main = model_dir / "host_main.c.txt"
    main.write_text(HOST_MAIN)
    runtime = ([runtime_object(model_dir / "posit.c", tuple(cflags), cc)]
               if (model_dir / "posit.c").is_file() else [])

    def build(out: Path) -> None:
        cmd = [cc, *STRICT, *cflags, f"-I{model_dir}", "-x", "c", str(main), "-x", "c",
               str(model_dir / "model.c"), "-x", "none", *map(str, runtime), "-o", str(out),
               "-lm"]
        subprocess.run(cmd, check=True, capture_output=True, text=True)

    files = cacheable_files([main, model_dir / "model.c"],
                            [*STRICT, *cflags, f"-I{model_dir}"])
    if files is None:
        build(exe)
        return exe
    key = [cc, tool_identity(cc), tool_identity("ld"), *STRICT, *cflags, "-lm"]
    shutil.copy(cached_build("test-host", "", key, files + runtime, build), exe)
    return exe


def _local_sources(src: Path) -> list[Path]:
    """src and the files its `#include "..."` lines name, transitively."""
    seen: list[Path] = []
    todo = [src]
    while todo:
        f = todo.pop()
        if f in seen or not f.is_file():
            continue
        seen.append(f)
        todo += [f.parent / name for name in re.findall(r'#include\s+"([^"]+)"', f.read_text())]
    return seen


def runtime_object(src: Path, cflags: tuple[str, ...], cc: str) -> Path:
    """The posit runtime (posit.c, the same for most models) compiled once per content,
    flags and compiler, with the flags of build_host, into the build cache
    ($MINUN_CACHE_DIR, shared by the pytest-xdist workers); later builds link it."""
    from minun_mlir.targets.cache import cached_build
    from minun_mlir.targets.toolchain import tool_identity

    def build(obj: Path) -> None:
        subprocess.run([cc, *STRICT, *cflags, f"-I{src.parent}", "-c", "-x", "c", str(src),
                        "-o", str(obj)], check=True, capture_output=True, text=True)

    return cached_build(f"test-{src.stem}", ".o", [cc, tool_identity(cc), *STRICT, *cflags],
                        _local_sources(src), build)


def run_host(exe: Path, inputs: np.ndarray, out_dtype: np.dtype, n_out: int,
             as_float: bool = False, env=None, uint8: bool = False
             ) -> tuple[np.ndarray, np.ndarray]:
    """(labels, scores) of the host program on raw input rows: minun_predict's, or
    minun_predict_float's (as_float), or minun_predict_uint8's (uint8)."""
    data = exe.with_suffix(".in")
    np.ascontiguousarray(inputs).tofile(data)
    args = [str(exe), str(data)] + (["float"] if as_float else []) + \
        (["uint8"] if uint8 else [])
    proc = subprocess.run(args, check=True, capture_output=True, env=env)
    rec = np.dtype([("label", "<i4"), ("scores", out_dtype, (n_out,))])
    out = np.frombuffer(proc.stdout, dtype=rec)
    return out["label"].astype(np.int64), out["scores"]


@dataclass
class Expected:
    inputs: np.ndarray  # stored input integers (or float32), (N, n_in)
    labels: np.ndarray  # (N,)
    scores: np.ndarray  # (N, n_out) stored integers


def storage_dtype(el) -> np.dtype:
    if num.integer_stored(el):  # fixed, posit patterns, affine, bfloat16 keys
        return np.dtype(f"<i{num.storage_type(el).width.data // 8}")
    return np.dtype("<f4")


def expected(l2: ModuleOp, features: np.ndarray) -> Expected:
    """The evaluator's integers: the encoded inputs, the labels and the scores."""
    fn = next(op for op in l2.ops if isinstance(op, func.FuncOp))
    inp = next(op for op in fn.walk() if isinstance(op, num.InputOp))
    ret = fn.body.block.last_op
    result = ret.operands[0]
    feats = np.asarray(features, dtype=np.float64).reshape(len(features),
                                                           *inp.result.type.get_shape())
    x = encode_input(l2)(inp, feats)
    # one evaluation gives both: the scores module returns the label (when the program
    # ends in an argmax or sign) and the scores it was computed from
    scores_mod = l2.clone()
    sfn = next(op for op in scores_mod.ops if isinstance(op, func.FuncOp))
    sret = sfn.body.block.last_op
    sres = sret.operands[0]
    if not isinstance(sres.type, TensorType):
        assert isinstance(sres.owner, (num.ArgMaxOp, num.SgnOp))
        label = sres
        sres = sres.owner.input
        sret.operands = [label, sres]
        sfn.function_type = func.FunctionType.from_lists([], [label.type, sres.type])
    outs = evaluate_l2(scores_mod, features).outputs
    scores = outs[-1].reshape(len(features), -1)
    if isinstance(result.type, TensorType) and scores.shape[1] > 1:
        labels = np.argmax(scores, axis=1)
    elif isinstance(result.type, TensorType):  # one value: the decision threshold's label
        labels = predictions(decode_outputs(l2, outs)[0], decision_threshold(l2))
    else:
        labels = outs[0].reshape(-1)
    el = inp.result.type.element_type
    sel = sres.type.element_type
    return Expected(np.asarray(x).reshape(len(features), -1).astype(storage_dtype(el)),
                    labels.astype(np.int64), scores.astype(storage_dtype(sel)))


ROOT = Path(__file__).resolve().parents[3]
SUITE_DIR = ROOT / "benchmarks" / "models"


@dataclass(frozen=True)
class Model:
    program: Path  # .sd or .onnx
    weights: Path
    train: Path  # profiling data
    test: Path
    dims: tuple[tuple[str, int], ...] = ()  # ONNX symbolic dimensions


def _example(name: str, suite: str | None) -> Model:
    weights = ROOT / "examples" / name
    train = SUITE_DIR / suite / "train.npy" if suite else weights / "test.npy"
    return Model(ROOT / "examples" / f"{name}.sd", weights, train, weights / "test.npy")


# examples/README.md: four examples are copies of suite models (whose train split we use)
EXAMPLES = {
    "protonn": _example("protonn", "protonn-digits10"),
    "bonsai": _example("bonsai", "bonsai-digits-binary"),
    "fastgrnn": _example("fastgrnn", "fastgrnn-digits10"),
    "fastgrnn_lr_usps": _example("fastgrnn_lr_usps", None),
    "lenet": _example("lenet", "lenet-digits10"),
    "rnnpool": _example("rnnpool", None),
}
SUITE = {d.name: Model(d / "model.sd", d, d / "train.npy", d / "test.npy")
         for d in sorted(SUITE_DIR.iterdir()) if (d / "model.sd").is_file()}
REAL = ROOT / "benchmarks" / "real"
ONNX = {name: Model(REAL / name / "model.onnx", REAL / name, REAL / name / "test.npy",
                    REAL / name / "test.npy", dims)
        for name, dims in (("onnx-sine", (("N", 1),)), ("onnx-mnist-8", ()))}
ALL_MODELS = {**EXAMPLES, **{f"suite/{k}": v for k, v in SUITE.items()},
              **{f"real/{k}": v for k, v in ONNX.items()}}

# posit8's exponent bits: the es of posit<8, es> with the best accuracy over the suite
# (docs/numerics.md, "The posit representation")
POSIT8_ES = 2

# configuration name -> options of the pipeline's quantize stage (minun_mlir/pipeline.py)
CONFIGS: dict[str, dict[str, object]] = {
    "fixed16": dict(bits=16),
    "fixed8": dict(bits=8),
    "fixed32": dict(bits=32),
    "mixed16-8": dict(bits=16, param_bits=8),  # every parameter 8-bit
    # SeeDot's rules: B-bit products that wrap, TreeSum with halvings, two-table exp
    "maxscale16": dict(bits=16, scales="maxscale", maxscale=5),
    "maxscale8-nearest": dict(bits=8, scales="maxscale", maxscale=2, rounding="nearest"),
    "fixed16-nearest-sat": dict(bits=16, rounding="nearest", overflow="saturate"),
    "fixed8-floor-sat": dict(bits=8, rounding="floor", overflow="saturate"),
    # a scale per output channel for the weights of matmuls and convolutions
    "fixed8-pc": dict(bits=8, per_channel=True),
    "fixed8-pc-nearest": dict(bits=8, per_channel=True, rounding="nearest"),
    "fixed8-pc-floor-sat": dict(bits=8, per_channel=True, rounding="floor",
                                overflow="saturate"),
    "fixed16-pc": dict(bits=16, per_channel=True),
    "float32": {"repr": "float32"},
    "posit16": dict(repr="posit", bits=16, es=2),
    "posit8": dict(repr="posit", bits=8, es=POSIT8_ES),
    "bfloat16": {"repr": "bfloat16"},
    # per-tensor posit formats: weights in posit8, the computation in posit16 (each op
    # converting its posit8 operand up, exactly), and the reverse (each op computing in
    # posit16 and rounding its result to posit8)
    "posit16-params8": dict(repr="posit", bits=16, es=2, param_bits=8),
    "posit8-params16": dict(repr="posit", bits=8, es=2, param_bits=16),
    # es per bitwidth, as Haunter's stage I chooses it (an assignment's "es"): posit<8, 0>
    # values, posit<16, 1> parameters; every num.convert changes n and es
    "posit8e0-params16e1": dict(repr="posit", bits=8, param_bits=16, assign=str(
        Path(__file__).parent / "posit_es_per_width.json")),
    # posit<12, 2>: n between the storage widths (patterns sign-extended in int16_t)
    "posit12": dict(repr="posit", bits=12, es=2),
    # no quire: every product and partial sum of a dot product rounded (quire=false)
    "posit8-noquire": dict(repr="posit", bits=8, es=2, quire=False),
    "posit16-noquire": dict(repr="posit", bits=16, es=2, quire=False),
    "zero-skew8": {"repr": "zero-skew", "bits": 8},
    # TFLite's per-channel weights: a scale and a requantization multiplier per channel
    "zero-skew8-pc": {"repr": "zero-skew", "bits": 8, "per_channel": True},
    # packed 4-bit weights (formats/int4/weights.py)
    "fixed8-w4": dict(bits=8, weight_bits=4),
    "fixed16-w4": dict(bits=16, weight_bits=4),
    "mixed16-8-w4": dict(bits=16, param_bits=8, weight_bits=4),
    "zero-skew8-w4": {"repr": "zero-skew", "bits": 8, "weight_bits": 4},
}


@functools.cache
def quantized(model: str, config: str):
    """L2 of a model through the declared pipeline's first stages, and its test set."""
    m = ALL_MODELS[model]
    l1 = load_model(m.program, m.weights, dict(m.dims) or None)
    l2 = lower_to_l2(l1, data=str(m.train), **CONFIGS[config])
    return l2, test_set(model)


@functools.cache
def test_set(model: str) -> Dataset:
    m = ALL_MODELS[model]
    l1 = load_model(m.program, m.weights, dict(m.dims) or None)
    shape = tuple(model_inputs(l1)[0].results[0].type.get_shape())
    return load_dataset(m.test, shape, num_classes=None if "rnnpool" not in model else 10)


_EXPECTED: dict[tuple[str, str, int | None], Expected] = {}


def expected_for(model: str, config: str, limit: int | None = None) -> Expected:
    """The evaluator's integers on the test set, or on its first `limit` inputs (the
    boards run a few). Memoised; the evaluator computes each input independently (it
    already splits batches into chunks), so the first inputs of a whole-set result that
    this process has are the same integers, and are taken from it."""
    full = _EXPECTED.get((model, config, None))
    if limit is not None and full is not None:
        return Expected(full.inputs[:limit], full.labels[:limit], full.scores[:limit])
    key = (model, config, limit)
    if key not in _EXPECTED:
        l2, test = quantized(model, config)
        feats = test.features if limit is None else test.features[:limit]
        _EXPECTED[key] = expected(l2, feats)
    return _EXPECTED[key]


def have(*tools: str) -> bool:
    return all(shutil.which(t) for t in tools)




def as_rows(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x.reshape(len(x), -1))
