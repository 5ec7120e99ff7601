"""Native evaluation: the program's own generated C, built for the host and run on batches.

The numpy evaluators (float_eval.py, l2_eval.py) interpret the IR op by op; on a model
like RNNPool face detection (1,200 patches x 4 recurrent passes per image) the Python
overhead per op dominates and one image takes seconds to minutes. The same pipeline that
prints C for the boards prints it for the host, so we build that:

- `NativeProgram(l2)`: the L2 program through lower-to-loops, memory-plan and
  lower-to-emitc, printed for the x86 profile, with a batch driver. Bit-exact with
  `evaluate_l2` by construction (the same C the targets run, which the test suite checks
  against the evaluator); `outputs(features)` returns what `evaluate_l2(...).outputs` does.
  Two host-only speed-ups keep the integers: the driver encodes reals in C
  (`Representation.c_encode`) and reads the runtime's pure 8/16-bit functions from tables
  (`memo_tables`).
- `native_profile(l1, features)`: the float program (quantize{repr=float32}), with every
  L1 value the quantizer reads instrumented: after each value is computed, its elements go
  to `minun_profile(id, v)`, which keeps the statistics of `float_eval.ValueStats` (min,
  max, count, zeros, binary-exponent histogram). Returns a `Profile` keyed by the L1
  values, like `evaluate(..., profile=True)`; the C computes in float32 where numpy uses
  float64, so bounds agree to float32 rounding (the scales derived from them are tested
  to be the same).

Builds are cached by content hash (C text, driver, compiler and flags) in the harness's
cache directory (`$MINUN_CACHE_DIR`, default ~/.cache/minun-mlir/). `evaluator` options
across the tools: "native", "numpy", or "auto": native when a host C compiler exists and
the numpy evaluator's work would be large (`values_per_example` x examples above
AUTO_THRESHOLD); small models stay in numpy, where a run costs less than a C build, and
so do programs the C lowering does not take yet (auto falls back; native says why).
"""

from __future__ import annotations

import copy
import ctypes
import functools
import hashlib
import math
import os
import platform
import re
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, Float32Type, ModuleOp, TensorType, i64
from xdsl.ir import Operation, SSAValue

from minun_mlir.data import examples
from minun_mlir.diagnostics import MinunError, error
from minun_mlir.dialects import minun
from minun_mlir.limits import check_work, work_per_input
from minun_mlir.modules import main_function
from minun_mlir.numerics.float_eval import EXP_HI, EXP_LO, Profile, ValueStats, model_inputs

EVALUATORS = ("auto", "native", "numpy")
HOST_CC = "gcc"
# -ffp-contract=off keeps float32 programs from fusing a*b+c into one rounding. The
# optimisation level is chosen per build (`opt_level`).
CFLAGS = ["-ffp-contract=off", "-std=c99", "-shared", "-fPIC", "-fno-strict-aliasing", "-w"]
BINS = EXP_HI - EXP_LO + 1
# The optimisation level buys run time with build time. On RNNPool face detection at test
# size (0.6 M values per image) -O1 builds in 0.75 s and runs 1.4 ms per image, -O2 1.25 s
# and 1.0 ms, -O3 (which vectorises the element-wise loops; with -march=native, table
# lookups become AVX2 gathers) 3.7 s and 0.9 ms. So a batch gets the level whose run-time
# saving repays its longer build: (numpy work: values_per_example x examples, level).
OPT_LEVELS = ((1_000_000_000, "-O1"), (5_000_000_000, "-O2"))


def opt_level(module: ModuleOp | None = None, examples: int | None = None) -> str:
    """The optimisation level for a batch of `examples` of `module` (OPT_LEVELS; unknown
    batches, as in tests, count as small). Every level computes the same integers."""
    work = values_per_example(module) * examples if module is not None and examples else 0
    return next((level for limit, level in OPT_LEVELS if work <= limit), "-O3")


@functools.cache
def host_flags() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(flags, cache-key parts) for this CPU: on x86-64, -march=native, keyed by the CPU's
    feature flags so that a cached library never runs on a CPU that lacks them."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return (), ()
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("flags"))
    except (OSError, StopIteration):
        return (), ()
    # 256-bit vectors: on AVX-512 cores the 512-bit ones measured slower here (gathers)
    return (("-march=native", "-mprefer-vector-width=256"),
            ("cpu " + hashlib.sha256(flags.encode()).hexdigest()[:16],))


def available() -> bool:
    """Whether a host C compiler is there to build native programs."""
    return shutil.which(HOST_CC) is not None


# `auto` runs natively when the numpy evaluator would process more values than this
# (about a second of numpy work; building the C takes about that long).
AUTO_THRESHOLD = 20_000_000


def values_per_example(module: ModuleOp) -> int:
    """How many tensor elements one example computes (each op's result size times the
    trips of its enclosing loops): the numpy evaluator's work, known before running."""
    return work_per_input(module).values


def use_native(evaluator: str, module: ModuleOp | None = None, examples: int = 1) -> bool:
    """The choice behind an `evaluator` option: native, numpy, or auto (native when a host
    compiler exists and the numpy work, `values_per_example x examples`, is large)."""
    if evaluator not in EVALUATORS:
        raise error(f"evaluator must be one of {', '.join(EVALUATORS)}, got '{evaluator}'")
    if evaluator == "numpy":
        return False
    if evaluator == "native":
        if not available():
            raise error(f"the native evaluator needs a host C compiler ('{HOST_CC}' is not "
                        "on PATH): install gcc, or use --evaluator numpy")
        return True
    if not available() or module is None:
        return False
    return values_per_example(module) * examples > AUTO_THRESHOLD


# --------------------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------------------


def build_library(files: dict[str, str], driver: str, name: str, opt: str = "-O1") -> Path:
    """Compile `files` (model.c, headers) with `driver` (which #includes model.c) into a
    shared library at optimisation level `opt`, once per content: the cache key is every
    file's text, the compiler and the flags (cached_build: processes asking for the same
    library at once build it once). Returns its path."""
    from minun_mlir.targets.build import runtime_object, shipped_runtime
    from minun_mlir.targets.cache import cached_build
    from minun_mlir.targets.toolchain import require_tool, run_tool, tool_identity

    cc = require_tool(HOST_CC, packages="gcc", needed_for="the native evaluator")
    with tempfile.TemporaryDirectory(prefix="minun-native-") as tmp:
        src = Path(tmp)
        for fname, text in {**files, "driver.c": driver}.items():
            (src / fname).write_text(text)
        sources = sorted(p for p in src.iterdir() if p.suffix in (".c", ".h"))
        arch, key = host_flags()

        def build(out: Path) -> None:
            # the driver #includes model.c; other C files (the posit runtime) build beside it,
            # the shipped runtime from the build cache (compiled once per flags)
            extra = [str(p) for p in sources if p.suffix == ".c"
                     and p.name not in ("driver.c", "model.c")]
            extra = [str(runtime_object([cc, *CFLAGS, *arch, "-c", f, "-o", f + ".o"],
                                        "the native evaluator", key))
                     if shipped_runtime(Path(f)) else f for f in extra]
            run_tool([cc, opt, *CFLAGS, *arch, "-I", str(src), "-o", str(out),
                      str(src / "driver.c"), *extra, "-lm"], f"building the native {name}")

        return cached_build(f"native-{name}", ".so",
                            [tool_identity(HOST_CC), opt, *CFLAGS, *arch, *key], sources, build)


def workers(n: int) -> int:
    """Threads for a batch of n examples: one per core, each with its own library copy
    (the model's buffers are globals), and at least 4 examples each."""
    return max(1, min(os.cpu_count() or 1, n // 4))


def load_copies(lib: Path, k: int) -> list[ctypes.CDLL]:
    """k independent instances of a shared library (own globals): the loader shares a
    file loaded twice, so copies 1.. are loaded from hard links (or copies) beside it."""
    handles = [ctypes.CDLL(str(lib))]
    for i in range(1, k):
        twin = lib.with_name(f"{lib.stem}.{i}{lib.suffix}")
        if not twin.exists():
            tmp = twin.with_name(f".{twin.name}.{os.getpid()}.tmp")
            shutil.copyfile(lib, tmp)
            os.replace(tmp, twin)
        handles.append(ctypes.CDLL(str(twin)))
    return handles


def in_parallel(handles: list[ctypes.CDLL], n: int, run) -> None:
    """run(handle, start, stop) on contiguous chunks of range(n), one thread per handle
    (ctypes releases the GIL during the call)."""
    bounds = np.linspace(0, n, len(handles) + 1).astype(int)
    if len(handles) == 1:
        run(handles[0], 0, n)
        return
    for f in [_pool(len(handles)).submit(run, h, int(a), int(b))
              for h, a, b in zip(handles, bounds[:-1], bounds[1:], strict=True)]:
        f.result()


@functools.cache
def _pool(k: int) -> ThreadPoolExecutor:
    """A thread pool of k threads kept for the process (threads start once, not per batch)."""
    return ThreadPoolExecutor(k, thread_name_prefix="minun-native")


def _c_files(l2: ModuleOp) -> dict[str, str]:
    from minun_mlir.codegen import emit_c

    return dict(emit_c(l2, "x86"))


def _storage_dtype(element) -> np.dtype:
    from minun_mlir.dialects import num

    if isinstance(element, Float32Type):
        return np.dtype(np.float32)
    width = num.storage_type(element).width.data
    return np.dtype({8: np.int8, 16: np.int16, 32: np.int32}[width])


# The runtime's exp/sigmoid/tanh of one 8- or 16-bit argument are pure functions of it:
# the batch driver evaluates each once per argument when the library loads and the model
# reads the table instead (the same integers; a division saved per call, and -O3 can
# vectorise the loops around them). int32 entries, so that AVX2 can gather them.
_PURE = re.compile(r"static inline (int8_t|int16_t|int32_t) "
                   r"(minun_(?:exp|sigmoid|tanh)\w*)\((int8_t|int16_t) x\)")


def memo_tables(runtime: str, model: str) -> str:
    """C that replaces the pure runtime functions `model` calls by tables (see _PURE)."""
    tables, fills, macros = [], [], []
    for ret, fn, arg in _PURE.findall(runtime):
        if fn + "(" not in model:
            continue
        n, index = (256, "uint8_t") if arg == "int8_t" else (65536, "uint16_t")
        tables.append(f"static int32_t {fn}_table[{n}];")
        fills.append(f"    for (int32_t i = 0; i < {n}; i++)\n"
                     f"        {fn}_table[i] = {fn}(({arg})({index})i);")
        macros.append(f"#define {fn}(x) (({ret}){fn}_table[({index})({arg})(x)])")
    if not tables:
        return ""
    return "\n".join(['#include "minun_runtime.h"', *tables,
                      "__attribute__((constructor)) static void minun_fill_tables(void)",
                      "{", *fills, "}", *macros, ""])


BATCH_DRIVER = """#include <stdint.h>
#include <math.h>
%(tables)s#include "model.c"

void minun_batch(const minun_input_t *x, int32_t n, minun_output_t *out, int32_t *labels)
{
    for (int32_t i = 0; i < n; i++)
        labels[i] = minun_predict(x + (long)i * MINUN_INPUT_SIZE,
                                  out + (long)i * MINUN_OUTPUT_SIZE);
}
%(reals)s"""

# Reals in: each example encoded into one buffer (a library copy runs on one thread).
REALS_DRIVER = """
static minun_input_t minun_encode_real(double v)
{
%(encode)s
}

void minun_batch_reals(const double *x, int32_t n, minun_output_t *out, int32_t *labels)
{
    static minun_input_t q[MINUN_INPUT_SIZE];
    for (int32_t i = 0; i < n; i++) {
        const double *xi = x + (long)i * MINUN_INPUT_SIZE;
        for (long k = 0; k < MINUN_INPUT_SIZE; k++)
            q[k] = minun_encode_real(xi[k]);
        labels[i] = minun_predict(q, out + (long)i * MINUN_OUTPUT_SIZE);
    }
}
"""


class NativeProgram:
    """An L2 program built for the host: `outputs(features)` gives the stored outputs
    `evaluate_l2(l2, features).outputs` gives (several inputs: `features` a dict by input
    name, stored one after another in the C's input buffer)."""

    def __init__(self, l2: ModuleOp, name: str = "model", extra_driver: str = "",
                 examples: int | None = None):
        fn = main_function(l2)
        inputs = model_inputs(fn)
        inp = inputs[0]
        self.l2 = l2
        self.single = len(inputs) == 1
        self.in_dtype = _storage_dtype(inp.results[0].type.element_type)
        ret = fn.body.block.last_op.operands[0]
        self.result_type = ret.type
        scores = ret if isinstance(ret.type, TensorType) else ret.owner.operands[0]
        self.out_shape = tuple(scores.type.get_shape())
        self.out_dtype = _storage_dtype(scores.type.element_type)
        from minun_mlir.numerics import formats
        from minun_mlir.numerics.input_scales import ATTR as FEATURE_SCALES

        element = inp.results[0].type.element_type
        rep = formats.of_element(element)
        # several inputs, or per-feature input scales: encoded by numpy
        encode = rep.c_encode(element, rep.input_rounding(fn)) \
            if self.single and FEATURE_SCALES not in inp.attributes else None
        self.encodes_reals = encode is not None
        reals = REALS_DRIVER % {"encode": "    " + encode.replace("\n", "\n    ")} \
            if encode is not None else ""
        files = _c_files(l2)
        driver = BATCH_DRIVER % {"tables": memo_tables(files["minun_runtime.h"],
                                                       files["model.c"]), "reals": reals}
        self.lib = build_library(files, driver + extra_driver, name, opt_level(l2, examples))
        self.handles: list[ctypes.CDLL] = []
        self.threads = 0  # at most this many threads (0: `workers`)

    def run(self, stored: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(scores (N, *shape), labels (N,)) for inputs already in storage form."""
        return self._run(len(stored), lambda a, b: stored[a:b])

    def run_features(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The same for reals, encoded exactly as the evaluator encodes them: by the C
        driver where the representation gives its encoding in C, else by numpy."""
        from minun_mlir.numerics.l2_eval import storage_inputs

        if self.encodes_reals and not isinstance(features, dict):
            x = np.ascontiguousarray(features, dtype=np.float64).reshape(len(features), -1)
            return self._run(len(x), lambda a, b: x[a:b], "minun_batch_reals")
        return self.run(storage_inputs(self.l2, features))

    def _run(self, n: int, chunk, entry: str = "minun_batch"
             ) -> tuple[np.ndarray, np.ndarray]:
        out = np.empty((n, math.prod(self.out_shape)), dtype=self.out_dtype)
        labels = np.empty(n, dtype=np.int32)
        k = min(workers(n), self.threads or n)
        if len(self.handles) < k:
            self.handles = load_copies(self.lib, k)
        dtype = np.float64 if entry == "minun_batch_reals" else self.in_dtype

        def run(lib: ctypes.CDLL, a: int, b: int) -> None:
            x = np.ascontiguousarray(chunk(a, b), dtype=dtype).reshape(b - a, -1)
            getattr(lib, entry)(x.ctypes.data_as(ctypes.c_void_p), ctypes.c_int32(b - a),
                                out[a:].ctypes.data_as(ctypes.c_void_p),
                                labels[a:].ctypes.data_as(ctypes.c_void_p))

        in_parallel(self.handles[:k], n, run)
        return out.reshape(n, *self.out_shape), labels.astype(np.int64)

    def outputs(self, features: np.ndarray) -> list[np.ndarray]:
        """Reals in -> the program's stored outputs (a batch), as evaluate_l2 returns them."""
        scores, labels = self.run_features(features)
        if isinstance(self.result_type, TensorType):
            return [scores.astype(np.float64 if self.out_dtype.kind == "f" else np.int64)]
        return [labels]


_PROGRAMS: dict[str, NativeProgram] = {}


def program(l2: ModuleOp, examples: int | None = None) -> NativeProgram:
    """The NativeProgram of `l2`, reused while this process lives (keyed by its text);
    `examples`, the batch it is built for, sets its optimisation level (`opt_level`)."""
    key = str(l2)
    if key not in _PROGRAMS:
        if len(_PROGRAMS) > 32:
            _PROGRAMS.clear()
        _PROGRAMS[key] = NativeProgram(l2, examples=examples)
    return _PROGRAMS[key]


def evaluate_outputs(l2: ModuleOp, features: np.ndarray, evaluator: str = "auto"
                     ) -> list[np.ndarray]:
    """The stored outputs of `l2` on `features`, natively or with the numpy evaluator."""
    check_work(l2, examples(features), "the bit-exact evaluation")
    if use_native(evaluator, l2, examples(features)):
        try:
            return program(l2, examples(features)).outputs(features)
        except MinunError:
            if evaluator != "auto":
                raise  # auto: a program the C lowering does not take runs in numpy
    from minun_mlir.numerics.l2_eval import evaluate_l2

    return evaluate_l2(l2, features).outputs


def scores_module(l2: ModuleOp) -> ModuleOp:
    """A copy of `l2` returning its final argmax's or sgn's operand (the scores the C
    writes to `out`), or a copy of `l2` itself when it returns a tensor."""
    from xdsl.dialects import func

    from minun_mlir.dialects import num

    module = l2.clone()
    fn = main_function(module)
    ret = fn.body.block.last_op
    res = ret.operands[0]
    if not isinstance(res.type, TensorType) and isinstance(res.owner, (num.ArgMaxOp,
                                                                      num.SgnOp)):
        ret.operands = [res.owner.operands[0]]
        fn.function_type = func.FunctionType.from_lists([], [res.owner.operands[0].type])
    return module


def evaluate_scores(l2: ModuleOp, features: np.ndarray, evaluator: str = "auto"
                    ) -> np.ndarray:
    """The stored scores (N, MINUN_OUTPUT_SIZE) the C writes to `out`: natively, or with
    the numpy evaluator on `scores_module(l2)`."""
    n = examples(features)
    if use_native(evaluator, l2, n):
        try:
            scores, _ = program(l2, n).run_features(features)
            return scores.reshape(n, -1)
        except MinunError:
            if evaluator != "auto":
                raise
    from minun_mlir.numerics.l2_eval import evaluate_l2

    return np.asarray(evaluate_l2(scores_module(l2), features).outputs[0]).reshape(n, -1)


def float_outputs(l1: ModuleOp, features: np.ndarray, evaluator: str = "auto"
                  ) -> list[np.ndarray]:
    """The float program's outputs on `features` (reals, or labels): natively through
    quantize{repr=float32} and the host C, or with the numpy float evaluator."""
    check_work(l1, examples(features), "the float evaluation")
    if use_native(evaluator, l1, examples(features)) and len(model_inputs(l1)) == 1:
        from minun_mlir.pipeline import lower_to_l2

        try:
            return program(lower_to_l2(l1, repr="float32"),
                           examples(features)).outputs(features)
        except MinunError:
            if evaluator != "auto":
                raise
    from minun_mlir.numerics.float_eval import evaluate

    return evaluate(l1, features).outputs


# --------------------------------------------------------------------------------------
# Value maps (a precision search's view of a quantized program)
# --------------------------------------------------------------------------------------

RECORD_DRIVER = """#include <stdlib.h>
#include <string.h>

#define RECORDS %(records)d
static int32_t *minun_rec[RECORDS];
static int64_t minun_rec_len[RECORDS], minun_rec_cap[RECORDS];

/* every stored value of a recorded tensor, in the order the program computes them */
void minun_record(int32_t id, int32_t v)
{
    if (minun_rec_len[id] == minun_rec_cap[id]) {
        int64_t cap = minun_rec_cap[id] ? 2 * minun_rec_cap[id] : 1024;
        int32_t *grown = (int32_t *)realloc(minun_rec[id], (size_t)cap * sizeof *grown);
        if (!grown) abort();
        minun_rec[id] = grown;
        minun_rec_cap[id] = cap;
    }
    minun_rec[id][minun_rec_len[id]++] = v;
}

int64_t minun_record_count(int32_t id) { return minun_rec_len[id]; }

void minun_record_copy(int32_t id, int32_t *dst)
{
    memcpy(dst, minun_rec[id], (size_t)minun_rec_len[id] * sizeof *dst);
}

void minun_record_reset(void)
{
    for (int i = 0; i < RECORDS; i++) {
        free(minun_rec[i]);
        minun_rec[i] = 0;
        minun_rec_len[i] = minun_rec_cap[i] = 0;
    }
}
"""


def recorded_values(l2: ModuleOp) -> dict[SSAValue, str]:
    """The tensors a value map holds: parameters and inputs by symbol, op results by name
    hint, whose element is a fixed-point or posit number."""
    from minun_mlir.dialects import num

    names: dict[SSAValue, str] = {}
    for op in main_function(l2).walk():
        for v in op.results:
            name = (op.sym_name.data if isinstance(op, (num.ParamOp, num.InputOp))
                    else v.name_hint)
            el = v.type.element_type if isinstance(v.type, TensorType) else v.type
            if name and isinstance(el, (num.FixedType, num.PositType)):
                names[v] = name
    return names


def is_constant(v: SSAValue) -> bool:
    """A parameter or fill: the same values on every input and iteration."""
    from minun_mlir.dialects import num

    return not v.owner.operands and not isinstance(v.owner, num.InputOp)


def constant_values(names: dict[SSAValue, str]) -> dict[str, np.ndarray]:
    """The reals of the constants among `names`, once each (their evaluator kernels)."""
    from minun_mlir.numerics import formats
    from minun_mlir.numerics.l2_eval import l2_lookup

    out: dict[str, np.ndarray] = {}
    for v, name in names.items():
        if is_constant(v):
            el = v.type.element_type if isinstance(v.type, TensorType) else v.type
            stored = np.asarray(l2_lookup(v.owner)(v.owner))
            out[name] = np.ravel(formats.of_element(el).decode(stored, el))
    return out


def value_maps(l2: ModuleOp, features: np.ndarray) -> dict[str, np.ndarray]:
    """MinUn's value map of `l2` on `features`, natively: the reals every named tensor
    (`recorded_values`) holds, each loop iteration's values appended, example after
    example (a constant once). The program's own C with each named tensor's stored
    values passed to `minun_record` as it is computed (lower-to-loops' probe), decoded
    here; the same integers as the numpy evaluator's (checked by the tests)."""
    from minun_mlir.numerics import formats

    module = l2.clone()
    names = recorded_values(module)
    from minun_mlir.lowering.lower_to_loops import PROBE

    out = constant_values(names)
    marks: dict[Operation, list[int]] = {}
    values = [v for v in names if not is_constant(v)]
    for ident, v in enumerate(values):
        marks.setdefault(v.owner, []).extend([v.index, ident])
    for op, pairs in marks.items():
        op.attributes[PROBE] = DenseArrayBase.from_list(i64, pairs)
    prog = NativeProgram(module, "values", RECORD_DRIVER % {"records": max(len(values), 1)},
                         examples(features))
    prog.threads = 1  # the examples in order, into one library's records
    (lib,) = prog.handles = load_copies(prog.lib, 1)
    lib.minun_record_count.restype = ctypes.c_int64
    lib.minun_record_reset()
    prog.run_features(features)
    for ident, v in enumerate(values):
        raw = np.empty(int(lib.minun_record_count(ident)), dtype=np.int32)
        lib.minun_record_copy(ctypes.c_int32(ident), raw.ctypes.data_as(ctypes.c_void_p))
        el = v.type.element_type if isinstance(v.type, TensorType) else v.type
        stored = raw.astype(_storage_dtype(el))
        chunk = np.ravel(formats.of_element(el).decode(stored, el))
        name = names[v]  # several values may share a name (an RNN state): in program order
        out[name] = np.concatenate([out[name], chunk]) if name in out else chunk
    lib.minun_record_reset()
    return out


# --------------------------------------------------------------------------------------
# Float profiling
# --------------------------------------------------------------------------------------

PROFILE_DRIVER = """#include <stdint.h>
#include <string.h>
#include "model.c"  /* one translation unit, so the probes inline into the model */

#define PROBES %(probes)d
#define BINS %(bins)d  /* exponents EXP_LO..EXP_HI; bin BINS counts the zeros */
#define EXP_LO (%(exp_lo)d)
#define EXP_HI %(exp_hi)d

float minun_min[PROBES], minun_max[PROBES];
int64_t minun_hist[PROBES][BINS + 1];
static uint8_t minun_bin[256];  /* float exponent field -> bin of floor(log2 |v|) */

void minun_profile_reset(void)
{
    for (int i = 0; i < PROBES; i++) {
        minun_min[i] = 3.0e38f * 10.0f;  /* +inf */
        minun_max[i] = -minun_min[i];
        for (int k = 0; k <= BINS; k++) minun_hist[i][k] = 0;
    }
    for (int f = 0; f < 256; f++) {
        int e = f - 127;  /* floor(log2 |v|) of a normal float; subnormals land in EXP_LO */
        minun_bin[f] = (uint8_t)((e < EXP_LO ? EXP_LO : e > EXP_HI ? EXP_HI : e) - EXP_LO);
    }
}

/* The statistics of float_eval.ValueStats.add, one value at a time (the count is the
   sum of the bins). */
void minun_profile(int32_t id, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    if (v < minun_min[id]) minun_min[id] = v;
    if (v > minun_max[id]) minun_max[id] = v;
    minun_hist[id][(bits << 1) ? minun_bin[(bits >> 23) & 0xffu] : BINS]++;
}

void minun_profile_batch(const float *x, int32_t n, float *out)
{
    for (int32_t i = 0; i < n; i++)
        (void)minun_predict(x + (long)i * MINUN_INPUT_SIZE, out);
}
"""


def _probe_float_program(l1: ModuleOp) -> tuple[ModuleOp, list[SSAValue]]:
    """The float32 L2 program of `l1`, each profiled value's op marked with `minun.probe`
    (result index, id); returns it and the L1 values in id order."""
    from minun_mlir.formats.float32.representation import Float32Converter
    from minun_mlir.numerics.repr import QuantizeConfig

    converter = Float32Converter(QuantizeConfig(), None)
    l2 = converter.run(l1)
    values: list[SSAValue] = []
    marks: dict[Operation, list[int]] = {}
    for op in l1.walk():
        if isinstance(op, (minun.ParamOp, minun.ConstantOp)):
            continue  # known at compile time: profiled from the array (`_constant_stats`)
        if same_values_as(op) is not None:
            continue  # its statistics are its operand's (`native_profile` copies them)
        for old in op.results:
            new = converter.map.get(old)
            if not isinstance(old.type, TensorType) or new is None:
                continue
            if not isinstance(new.owner, Operation) or not isinstance(new.type, TensorType):
                continue
            marks.setdefault(new.owner, []).extend([new.index, len(values)])
            values.append(old)
    from minun_mlir.lowering.lower_to_loops import PROBE

    for op, pairs in marks.items():
        op.attributes[PROBE] = DenseArrayBase.from_list(i64, pairs)
    return l2, values


PERMUTATIONS = (minun.ReshapeOp, minun.TransposeOp, minun.ReverseOp)


def same_values_as(op: Operation) -> SSAValue | None:
    """The operand whose values `op`'s result holds, rearranged, each time it is computed
    (a reshape, transpose or reverse of a value of the same block): the same statistics."""
    if not isinstance(op, PERMUTATIONS):
        return None
    source = op.operands[0]
    block = source.owner if not isinstance(source.owner, Operation) else (
        source.owner.parent_block())
    return source if block is op.parent_block() else None


def native_profile(l1: ModuleOp, features: np.ndarray) -> Profile:
    """Profile every L1 value (tensors) on `features` (N, *input shape) with the
    instrumented float C (see the module docstring)."""
    l2, values = _probe_float_program(l1)
    probes = max(len(values), 1)
    driver = PROFILE_DRIVER % {"probes": probes, "bins": BINS, "exp_lo": EXP_LO,
                               "exp_hi": EXP_HI}
    x = np.ascontiguousarray(features, dtype=np.float32).reshape(len(features), -1)
    lib = build_library(_c_files(l2), driver, "profile", opt_level(l2, len(x)))
    handles = load_copies(lib, workers(len(x)))
    fn = main_function(l2)
    ret = fn.body.block.last_op.operands[0]
    scores = ret if isinstance(ret.type, TensorType) else ret.owner.operands[0]
    size = max(math.prod(scores.type.get_shape()), 1)

    def run(lib: ctypes.CDLL, a: int, b: int) -> None:
        out = np.zeros(size, dtype=np.float32)
        lib.minun_profile_batch(x[a:].ctypes.data_as(ctypes.c_void_p), ctypes.c_int32(b - a),
                                out.ctypes.data_as(ctypes.c_void_p))

    for lib in handles:
        lib.minun_profile_reset()
    in_parallel(handles, len(x), run)
    lo = np.min([_read(lib, "minun_min", ctypes.c_float, probes) for lib in handles], axis=0)
    hi = np.max([_read(lib, "minun_max", ctypes.c_float, probes) for lib in handles], axis=0)
    bins = np.sum([_read(lib, "minun_hist", ctypes.c_int64, probes * (BINS + 1))
                   for lib in handles], axis=0).reshape(probes, BINS + 1)
    hist, zeros = bins[:, :BINS], bins[:, BINS]
    count = hist.sum(axis=1) + zeros
    profile: Profile = _constant_stats(l1)
    for ident, value in enumerate(values):
        stats = ValueStats()
        if count[ident]:
            stats.min, stats.max = float(lo[ident]), float(hi[ident])
            stats.count, stats.zeros = int(count[ident]), int(zeros[ident])
            stats.exp_hist = hist[ident].astype(np.int64)
        profile[value] = stats
    for op in l1.walk():  # in program order, so a chain of reshapes resolves
        source = same_values_as(op)
        if source is not None and source in profile:
            profile[op.results[0]] = profile[source]
    return profile


def _constant_stats(l1: ModuleOp) -> Profile:
    """The statistics of parameters and constants, from their arrays (as numpy sees them:
    one copy per batch)."""
    stats: Profile = {}
    for op in l1.walk():
        if isinstance(op, (minun.ParamOp, minun.ConstantOp)):
            values = np.asarray(op.array(), dtype=np.float64)
            stats[op.results[0]] = ValueStats()
            stats[op.results[0]].add(values.reshape(1, *values.shape))
    return stats


def _read(lib: ctypes.CDLL, name: str, ctype, count: int) -> np.ndarray:
    return np.ctypeslib.as_array((ctype * count).in_dll(lib, name)).copy()


def _all_values(module: ModuleOp) -> list[SSAValue]:
    """Every SSA value of `module` (block arguments, op results) in program order: the
    same positions in modules that print the same."""
    out: list[SSAValue] = []
    for op in module.walk():
        out.extend(op.results)
        for region in op.regions:
            for block in region.blocks:
                out.extend(block.args)
    return out


def _profile_key(l1: ModuleOp, features, evaluator: str) -> bytes:
    """What a profile depends on: the program's text (weights included), the features'
    bytes, shapes and types, and the evaluator asked for."""
    digest = hashlib.sha256(str(l1).encode() + b"\0" + evaluator.encode())
    items = sorted(features.items()) if isinstance(features, dict) else [("", features)]
    for name, x in items:
        x = np.ascontiguousarray(x)
        digest.update(f"\0{name}\0{x.dtype.str}{x.shape}\0".encode() + x.tobytes())
    return digest.digest()


# (profile key) -> {position in _all_values: statistics}: the precisions of one model
# (quantize at 16 and 8 bits, maxscale, per-channel, ...) profile the same program on the
# same data; the statistics are computed once per process and copied for each caller.
_PROFILES: dict[bytes, dict[int, ValueStats]] = {}


def profile(l1: ModuleOp, features: np.ndarray, evaluator: str = "auto") -> Profile:
    """Profile `l1` on `features`, natively or with the numpy evaluator (once per program
    text, features and evaluator in this process: see _PROFILES)."""
    key = _profile_key(l1, features, evaluator)
    values = _all_values(l1)
    if key not in _PROFILES:
        computed = _profile(l1, features, evaluator)
        kept = {i: computed[v] for i, v in enumerate(values) if v in computed}
        if len(kept) != len(computed):  # statistics of values outside l1: not memoised
            return computed
        if len(_PROFILES) > 64:
            _PROFILES.clear()
        _PROFILES[key] = kept
    return {values[i]: copy.deepcopy(stats) for i, stats in _PROFILES[key].items()}


def _profile(l1: ModuleOp, features: np.ndarray, evaluator: str) -> Profile:
    check_work(l1, examples(features))
    if use_native(evaluator, l1, examples(features)) and len(model_inputs(l1)) == 1:
        try:
            return native_profile(l1, features)
        except MinunError as e:
            if evaluator != "auto":
                raise MinunError(f"{e} (the native evaluator profiles the float32 program in "
                                 "C; --evaluator numpy profiles this model)") from None
    from minun_mlir.numerics.float_eval import evaluate

    return evaluate(l1, features, profile=True).profile

