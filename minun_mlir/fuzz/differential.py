"""Differential testing: random small SeeDot programs (matmul, add, sub, hadamard, scaling,
relu, tanh, sigmoid, exp, argmax; random shapes and ranges), quantized at 8 or 16 bits
with random rounding, overflow and scale options (per-channel weight scales among them),
compiled to C for a target, built and
run there on a batch of inputs; the C's label and every output integer must equal the
bit-exact evaluator's (`evaluate_l2`).

`check_program(rng, target, work)` draws one program and returns a `Verdict`: "same",
"differs" (a defect), "rejected" (a clean MinunError from the compiler, e.g. a scale the
representation cannot hold) or "error" (anything else: a defect)."""

from __future__ import annotations

import random
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minun_mlir.fuzz.seedot import random_program

TARGET_OPS = ("matmul", "add", "sub", "hadamard", "relu", "tanh", "sigmoid", "exp", "scale")


@dataclass
class Verdict:
    outcome: str  # same | differs | rejected | error
    program: str
    config: dict
    detail: str = ""


def random_config(rng: random.Random) -> dict:
    config: dict = {"bits": rng.choice([8, 16]),
                    "rounding": rng.choice(["trunc", "floor", "nearest"]),
                    "overflow": rng.choice(["wrap", "saturate"])}
    if rng.random() < 0.25:
        config.update(scales="maxscale", maxscale=rng.randint(0, config["bits"] // 2))
    elif rng.random() < 0.4:  # a scale per output channel of the matmuls' weights
        config["per_channel"] = True
    return config


def expected(l2, features: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(stored inputs (N, n_in), labels (N,), scores (N, n_out)) of the evaluator."""
    from xdsl.dialects import func

    from minun_mlir.data import predictions
    from minun_mlir.dialects import num
    from minun_mlir.modules import decision_threshold
    from minun_mlir.native import scores_module
    from minun_mlir.numerics.l2_eval import decode_outputs, encode_input, evaluate_l2

    fn = next(op for op in l2.ops if isinstance(op, func.FuncOp))
    inp = next(op for op in fn.walk() if isinstance(op, num.InputOp))
    x = np.asarray(encode_input(l2)(inp, features)).reshape(len(features), -1)
    scores = np.asarray(evaluate_l2(scores_module(l2), features).outputs[0])
    scores = scores.reshape(len(features), -1)
    out = np.asarray(evaluate_l2(l2, features).outputs[0]).reshape(len(features), -1)
    if out.shape[1] == 1 and scores.shape[1] > 1:  # the program's argmax
        labels = out[:, 0]
    elif scores.shape[1] == 1:  # one score: its real against the decision threshold
        labels = predictions(decode_outputs(l2, [out])[0], decision_threshold(l2))
    else:
        labels = np.argmax(scores, 1)
    return x, labels.astype(np.int64), scores


def check_program(rng: random.Random, target: str = "x86", work: str | Path | None = None,
                  inputs: int = 16) -> Verdict:
    from minun_mlir.codegen import emit_c
    from minun_mlir.diagnostics import MinunError
    from minun_mlir.frontends.seedot import compile_source
    from minun_mlir.pipeline import lower_to_l2
    from minun_mlir.targets import run_model

    text, weights, shape, lo, hi, _ = random_program(rng, ops=TARGET_OPS)
    config = random_config(rng)
    gen = np.random.default_rng(rng.randrange(2**32))
    feats = gen.uniform(lo, hi, size=(inputs, *shape))
    feats[0], feats[1] = lo, hi  # the edges of the declared range
    train = gen.uniform(lo, hi, size=(32, *shape))
    work = Path(work or tempfile.mkdtemp(prefix="minun-diff-"))
    work.mkdir(parents=True, exist_ok=True)
    data = np.concatenate([np.zeros((len(train), 1)), train.reshape(len(train), -1)], axis=1)
    np.save(work / "train.npy", data.astype(np.float32))
    try:
        l1 = compile_source(text, "diff.sd", weights)
        l2 = lower_to_l2(l1, data=str(work / "train.npy"), **config)
        x, labels, scores = expected(l2, feats)
        emit_c(l2, target, work / "c")
    except MinunError as e:
        return Verdict("rejected", text, config, str(e).splitlines()[0])
    except Exception:
        return Verdict("error", text, config, traceback.format_exc(limit=-4))
    dtype = np.dtype(f"<i{4 if config['bits'] == 32 else config['bits'] // 8}")
    try:
        result = run_model(work / "c", target, x.astype(dtype), x86_repeat=1,
                           work_dir=work / "run", timeout=120)
    except Exception as e:  # a C that does not build or run: a defect
        return Verdict("error", text, config, f"{type(e).__name__}: {e}"[:2000])
    got_labels = np.asarray(result.labels).reshape(-1)
    got = np.asarray(result.outputs).reshape(len(feats), -1)
    bad = got_labels != labels
    if got.shape == scores.shape:
        bad |= np.any(got.astype(np.int64) != scores.astype(np.int64), axis=1)
    else:
        return Verdict("differs", text, config,
                       f"C output shape {got.shape}, evaluator {scores.shape}")
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        return Verdict("differs", text, config,
                       f"{int(bad.sum())} of {len(feats)} inputs differ; input {i} "
                       f"{feats[i].reshape(-1).tolist()}: C label {got_labels[i]} outputs "
                       f"{got[i].tolist()}, evaluator label {labels[i]} outputs "
                       f"{scores[i].tolist()}")
    return Verdict("same", text, config)


def run_many(count: int, seed: int, target: str = "x86", start: int = 0,
             progress=None) -> list[Verdict]:
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="minun-diff-") as tmp:
        for i in range(start, start + count):
            v = check_program(random.Random(f"{seed}:diff:{i}"), target, Path(tmp, str(i)))
            verdicts.append(v)
            if progress:
                progress(i, v)
    return verdicts
