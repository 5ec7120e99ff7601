"""SeeDot fuzzer: the real programs (examples/*.sd, benchmarks/models/*/model.sd) with
token- and line-level damage, and random programs of random operators and shapes; weights
are drawn inside each parameter's declared range (and sometimes damaged: a wrong shape, a
missing file, NaN). Most cases run the frontend (`minun-opt model.sd`), some the pipeline's
first stages, and some a whole `minun-compile`.
"""

from __future__ import annotations

import functools
import io
import math
import random
import re

import numpy as np

from minun_mlir.fuzz.cases import ROOT, Case, choose_weighted, damage_lines, special_file

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_']*|\d+\.\d*(?:[eE][-+]?\d+)?|\d+|<\*>|\S")
VOCABULARY = [
    "let", "in", "loop", "sum", "$", "(", ")", "[", "]", ",", "=", "*", "+", "-", "<*>", "^T",
    "relu", "tanh", "sigmoid", "exp", "argmax", "sgn", "init", "reshape", "maxpool", "conv2d",
    "X", "W", "B", "H", "i", "t", "0", "1", "8", "64", "0.5", "-1.0", "1e-3", "1e999",
    "99999999999999999999", "//", "\n", "(64, 1) in [0.0, 1.0]", "init([8, 1], 0.0)",
    "[0:4]", "[0:+8]", "{s 1 1}", "\"", "\t", "\x00", "é", "let X = (0, 1) in [0.0, 1.0] in",
    "(1000000, 1000000)", "in [1.0, -1.0]", "in [nan, 1]",
]


@functools.cache
def real_programs() -> list[tuple[str, str]]:
    """(name, text) of every real program."""
    paths = sorted((ROOT / "examples").glob("*.sd"))
    paths += sorted((ROOT / "benchmarks" / "models").glob("*/model.sd"))
    return [(p.relative_to(ROOT).as_posix(), p.read_text()) for p in paths]


DECL = re.compile(r"let\s+([A-Za-z_]\w*)\s*=\s*\(([\d,\s]+)\)\s*in\s*\[\s*([-+.\deE]+)\s*,"
                  r"\s*([-+.\deE]+)\s*\]")


def declarations(text: str) -> dict[str, tuple[tuple[int, ...], float, float]]:
    """NAME -> (shape, lo, hi) of the `let NAME = (shape) in [lo, hi]` lines (a regular
    expression, so that damaged programs still get weights for what they declare)."""
    found = {}
    for m in DECL.finditer(text):
        try:
            shape = tuple(int(s) for s in m.group(2).split(",") if s.strip())
            lo, hi = float(m.group(3)), float(m.group(4))
        except ValueError:
            continue
        found[m.group(1)] = (shape, lo, hi)
    return found


def npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=array.dtype == object)
    return buf.getvalue()


def weights_for(text: str, rng: random.Random, limit: int = 200_000) -> dict[str, np.ndarray]:
    gen = np.random.default_rng(rng.randrange(2**32))
    out = {}
    for name, (shape, lo, hi) in declarations(text).items():
        if name == "X" or not all(s > 0 for s in shape) or math.prod(shape) > limit:
            continue
        lo, hi = min(lo, hi), max(lo, hi)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            continue
        out[name] = gen.uniform(lo, hi, size=shape).astype(np.float32)
    return out


def damage_text(rng: random.Random, text: str) -> tuple[str, str]:
    kind = rng.choice(["token-replace", "token-delete", "token-insert", "token-swap",
                       "line-delete", "line-dup", "line-swap", "truncate", "number-edit"])
    if kind.startswith("line"):
        lines = text.split("\n")
        i = rng.randrange(len(lines))
        return "\n".join(damage_lines(rng, lines, i, kind.removeprefix("line-"))), \
            f"{kind} {i + 1}"
    if kind == "truncate":
        at = rng.randrange(len(text) + 1)
        return text[:at], f"truncated at {at}"
    tokens = list(TOKEN.finditer(text))
    if not tokens:
        return text + rng.choice(VOCABULARY), "appended a token"
    m = rng.choice(tokens)
    a, b = m.span()
    if kind == "token-replace":
        return text[:a] + rng.choice(VOCABULARY) + text[b:], f"replaced '{m.group()}'"
    if kind == "token-delete":
        return text[:a] + text[b:], f"deleted '{m.group()}'"
    if kind == "token-insert":
        return text[:a] + rng.choice(VOCABULARY) + " " + text[a:], "inserted a token"
    if kind == "number-edit":
        nums = [t for t in tokens if t.group()[0].isdigit()]
        if nums:
            m = rng.choice(nums)
            a, b = m.span()
            new = rng.choice(["0", "1", "-1", "2", "3", "7", "65", "100000", "0.0", "1e30",
                              str(int(float(m.group())) + rng.choice([-1, 1]))
                              if "." not in m.group() else m.group() + "1"])
            return text[:a] + new + text[b:], f"number {m.group()} -> {new}"
    other = rng.choice(tokens)
    (a, b), (c, d) = sorted([m.span(), other.span()])
    if b > c:
        return text, "unchanged"
    return (text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:],
            f"swapped '{m.group()}' and '{other.group()}'")


# --- random programs ----------------------------------------------------------------------

UNARY = ["relu", "tanh", "sigmoid", "exp"]


def random_program(rng: random.Random, max_dim: int = 8, max_ops: int = 6,
                   ops: tuple[str, ...] = ("matmul", "add", "sub", "hadamard", "relu", "tanh",
                                           "sigmoid", "exp", "scale"), zeros: bool = False
                   ) -> tuple[str, dict[str, np.ndarray], tuple[int, ...], float, float, bool]:
    """A well-formed program on a column vector X: (text, weights, X's shape, X's range,
    whether it ends in argmax). Every intermediate stays a column (rows, 1); maxpool
    pools it as a (1, rows, 1, 1) image, with padding (now and then as wide as the window:
    a window wholly in the padding, which the compiler refuses). With `zeros`, some
    weights are exact zeros (products of signed zeros)."""
    gen = np.random.default_rng(rng.randrange(2**32))

    def weight(a: float, shape: tuple[int, int]) -> np.ndarray:
        w = gen.uniform(-a, a, size=shape).astype(np.float32)
        if zeros and rng.random() < 0.3:
            w[gen.random(shape) < 0.5] = 0.0
        return w

    n = rng.randint(1, max_dim)
    lo = round(rng.uniform(-4, 0), 3)
    hi = round(rng.uniform(lo + 0.125, lo + 8), 3)
    lines = [f"let X = ({n}, 1) in [{lo}, {hi}] in"]
    body: list[str] = []
    weights: dict[str, np.ndarray] = {}
    cur, rows = "X", n
    for k in range(rng.randint(1, max_ops)):
        op = rng.choice(ops)
        if op == "exp" and rows > 0:
            # keep exp's argument small so that its result is representable
            w = round(rng.uniform(0.05, 0.5), 3)
            body.append(f"let t{k} = exp({w} * tanh({cur})) in")
        elif op in UNARY:
            body.append(f"let t{k} = {op}({cur}) in")
        elif op == "scale":
            c = 0.0 if zeros and rng.random() < 0.1 else round(rng.uniform(-2, 2), 3)
            body.append(f"let t{k} = {c} * {cur} in")
        elif op == "maxpool":
            kh, sh = rng.randint(1, 3), rng.randint(1, 3)
            most = kh + 1 if rng.random() < 0.1 else kh - 1  # beyond: refused (wholly padding)
            top, bottom = rng.randint(0, most), rng.randint(0, most)
            out = (rows + top + bottom - kh) // sh + 1
            if out < 1:
                continue
            body.append(f"let t{k} = reshape(maxpool(reshape({cur}, (1, {rows}, 1, 1), "
                        f"(1, 2)), {{k {kh} 1}}, {{p {top} {bottom} 0 0}}, {{s {sh} 1}}), "
                        f"({out}, 1), (1, 2, 3, 4)) in")
            rows = out
        elif op == "matmul":
            m = rng.randint(1, max_dim)
            a = round(rng.uniform(0.1, 2.0), 3)
            lines.append(f"let M{k} = ({m}, {rows}) in [{-a}, {a}] in")
            weights[f"M{k}"] = weight(a, (m, rows))
            body.append(f"let t{k} = M{k} * {cur} in")
            rows = m
        else:
            a = round(rng.uniform(0.1, 2.0), 3)
            lines.append(f"let B{k} = ({rows}, 1) in [{-a}, {a}] in")
            weights[f"B{k}"] = weight(a, (rows, 1))
            sym = {"add": "+", "sub": "-", "hadamard": "<*>"}[op]
            body.append(f"let t{k} = {cur} {sym} B{k} in")
        cur = f"t{k}"  # (a maxpool that would be empty appends nothing: `continue`)
    argmax = rows > 1 and rng.random() < 0.7
    tail = f"argmax({cur})" if argmax else cur
    return "\n".join(lines + body + [tail]) + "\n", weights, (n, 1), lo, hi, argmax


def dataset_bytes(rng: random.Random, shape: tuple[int, ...], lo: float, hi: float,
                  rows: int, classes: int = 1) -> bytes:
    gen = np.random.default_rng(rng.randrange(2**32))
    x = gen.uniform(lo, hi, size=(rows, math.prod(shape)))
    y = gen.integers(0, max(1, classes), size=(rows, 1))
    return npy(np.concatenate([y, x], axis=1).astype(np.float32))


def make_case(rng: random.Random, index: int) -> Case:
    mode = choose_weighted(rng, [(5, "damaged"), (2, "random"), (1, "random-damaged"),
                                 (1, "weights"), (1, "pipeline"), (0.5, "compile"),
                                 (0.7, "resources")])
    if mode == "resources":
        return resource_case(rng, index)
    if mode in ("random", "random-damaged", "compile"):
        text, weights, shape, lo, hi, argmax = random_program(rng)
        name, what = "random", "random program"
    else:
        name, text = rng.choice(real_programs())
        weights = weights_for(text, rng)
        what = name
    if mode in ("damaged", "random-damaged"):
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            text, how = damage_text(rng, text)
            what += f"; {how}"
        weights.update(weights_for(text, rng))
    files = {"model.sd": text.encode()}
    if mode == "weights" and weights:
        victim = rng.choice(sorted(weights))
        w = weights[victim]
        kind = rng.choice(["missing", "shape", "nan", "inf", "dtype", "object", "garbage",
                           "scalar", "empty", "out-of-range"])
        what += f"; weight {victim}: {kind}"
        if kind == "missing":
            del weights[victim]
        elif kind == "shape":
            weights[victim] = np.zeros((w.size + 1,), np.float32)
        elif kind in ("nan", "inf"):
            w = w.copy()
            w.flat[rng.randrange(w.size)] = np.nan if kind == "nan" else -np.inf
            weights[victim] = w
        elif kind == "dtype":
            weights[victim] = w.astype(rng.choice(["<U3", "complex64", "bool", "int8"]))
        elif kind == "object":
            weights[victim] = np.array([None, "x"], dtype=object)
        elif kind == "scalar":
            weights[victim] = np.float32(1.5).reshape(())
        elif kind == "empty":
            weights[victim] = np.zeros((0,) + w.shape[1:], np.float32)
        elif kind == "out-of-range":
            weights[victim] = w * 1000
        if kind == "garbage":
            del weights[victim]
            files[f"{victim}.npy"] = bytes(rng.randrange(256) for _ in range(rng.randint(0, 80)))
    for k, w in weights.items():
        files.setdefault(f"{k}.npy", npy(w))
    argv = ["{dir}/model.sd"]
    tool = "minun-opt"
    if mode == "pipeline":
        bits = rng.choice([8, 16, 32])
        stop = rng.choice(["lower-composite-ops", "quantize", "lower-to-loops",
                           "lower-to-emitc"])
        stages = ["lower-composite-ops", f"quantize{{bits={bits}}}", "lower-to-loops",
                  "memory-plan", "lower-to-emitc"]
        upto = [s for s in stages][:[s.split("{")[0] for s in stages].index(stop) + 1]
        argv.append(f"--pass-pipeline=builtin.module({','.join(upto)})")
        what += f"; pipeline to {stop} at {bits} bits"
    elif mode == "compile":
        tool = "minun-compile"
        classes = 2
        files["train.npy"] = dataset_bytes(rng, shape, lo, hi, rng.randint(2, 20), classes)
        argv += ["--train", "{dir}/train.npy", "--test", "{dir}/train.npy",
                 "--bits", str(rng.choice([8, 16])),
                 "--rounding", rng.choice(["trunc", "floor", "nearest"]),
                 "--overflow", rng.choice(["wrap", "saturate"]),
                 "--target", rng.choice(["x86", "avr", "cortex-m4"]),
                 "--out", "{dir}/out"]
        what += "; minun-compile"
    return Case("seedot", index, tool, argv, files, what)


# each beyond MAX_PARAM_VALUES (2^26) and MAX_TENSOR_VALUES: refused at once, as a
# parameter or as a run-time tensor
HUGE_SHAPES = ["(10000, 10000)", "(2147483648, 4)", "(40000000, 2)", "(100000, 100000)"]


def resource_case(rng: random.Random, index: int) -> Case:
    """What asks for more than any board or any realistic model: a huge declared shape, a
    loop or sum of 10^8 iterations, a reversed range (all with --synthetic-weights, which
    draws every parameter), or a program or weights file that is a FIFO, a link to
    /dev/zero or a folder. Each must be refused at once, before any allocation."""
    name, text = rng.choice(real_programs())
    weights = weights_for(text, rng)
    kind = rng.choice(["huge-decl", "loop", "reversed", "file", "weights-file"])
    what = f"{name}; {kind}"
    argv = ["{dir}/model.sd"]
    if kind == "huge-decl":
        decls = list(DECL.finditer(text))
        m = rng.choice(decls)
        shape = rng.choice(HUGE_SHAPES)
        text = text[:m.start(2) - 1] + shape + text[m.end(2) + 1:]
        what += f" {m.group(1)} = {shape}"
    elif kind == "loop":
        n = rng.choice([10**8, 10**9, 2**31 - 1])
        text, weights = ("let X = (4, 1) in [-1.0, 1.0] in\nlet W = (4, 4) in [-0.5, 0.5] "
                         "in\n" + rng.choice([f"$(i = [0:{n}]) (W * X)\n",
                                              "let H = init([4, 1], 0.0) in\n"
                                              f"loop(i = [0:{n}], H) (H + W * X)\n"]), {})
        what += f" of {n:,} iterations"
    elif kind == "reversed":
        decls = list(DECL.finditer(text))
        m = rng.choice(decls)
        text = text[:m.start(3)] + m.group(4) + text[m.end(3):m.start(4)] + m.group(3) + \
            text[m.end(4):]
        what += f" {m.group(1)}"
    if kind in ("huge-decl", "loop", "reversed"):
        argv += ["--synthetic-weights", str(rng.randrange(100))]
    files = {"model.sd": text.encode()}
    files.update({f"{k}.npy": npy(w) for k, w in weights.items()})
    case = Case("seedot", index, "minun-compile" if rng.random() < 0.8 else "minun-opt",
                argv, files, what)
    if case.tool == "minun-opt" and "--synthetic-weights" in argv:
        case.argv = ["{dir}/model.sd", "--pass-pipeline=builtin.module(lower-composite-ops,"
                     "quantize{synthetic=16})"]
    if case.tool == "minun-compile" and "--synthetic-weights" not in argv:
        case.argv += ["--scales", "maxscale", "--maxscale", "4"]
    if kind == "file":
        case.what += "; " + special_file(rng, case, "model.sd")
    elif kind == "weights-file" and weights:
        case.what += "; " + special_file(rng, case, f"{rng.choice(sorted(weights))}.npy")
    return case
