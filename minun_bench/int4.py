"""The 4-bit weights section of BENCHMARKS.md (`tools/bench.py --int4`): the suite's
matmul/conv models with their weights at 8 bits and packed at 4 (`--weight-bits 4`), at
fixed8 and zero-skew8 per channel, on the Uno and the Cortex-M4: the weights' bytes, the
linked image's flash, one inference's cycles or instructions (a few test inputs, the C
checked against the evaluator), and the test accuracy (the bit-exact evaluator's, so the
C's). docs/numerics.md, "4-bit weights", says what is packed and how.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from minun_bench.suite import MODELS
from minun_mlir.data import first
from minun_mlir.driver import Options, compile_model
from minun_mlir.numerics.l2_eval import evaluate_l2, storage_inputs
from minun_mlir.targets import run_model

SECTION = "## 4-bit weights"
MODELS_W4 = ("lenet-digits10", "fastgrnn-digits10", "protonn-digits10")
CONFIGS = (  # label, options
    ("fixed8", dict(bits=8)),
    ("fixed8 w4", dict(bits=8, weight_bits=4)),
    ("zero-skew8 per-channel", dict(repr="zero-skew", bits=8, per_channel=True)),
    ("zero-skew8 w4", dict(repr="zero-skew", bits=8, weight_bits=4)),
)
TARGETS = ("avr", "cortex-m4")
INPUTS = 3


def packed_bytes(l2) -> int:
    """The bytes the packed weights of an L2 module take (two codes a byte)."""
    from minun_mlir.dialects import num

    return sum((op.array().size + 1) // 2 for op in l2.walk()
               if isinstance(op, num.ParamOp) and "packed_bits" in op.attributes)


def measure(work: Path) -> list[dict]:
    rows = []
    for model in MODELS_W4:
        folder = MODELS / model
        for label, options in CONFIGS:
            row: dict = {"model": model, "config": label}
            for target in TARGETS:
                out = work / f"{model}-{label.replace(' ', '-')}-{target}"
                result = compile_model(folder / "model.sd", Options(target=target, **options),
                                       train=folder / "train.npy", test=folder / "test.npy",
                                       out_dir=out)
                features = first(result.test.features, INPUTS)
                run = run_model(out, target, storage_inputs(result.l2, features), name=model,
                                config=label)
                expected = np.asarray(evaluate_l2(result.l2, features).outputs[0])
                if not np.array_equal(np.asarray(run.labels).ravel(), expected.ravel()):
                    raise RuntimeError(f"{model} {label} on {target}: the C's labels differ "
                                       "from the evaluator's")
                row[target] = {"flash": run.flash_bytes, "latency": int(run.latency_median)}
                row["accuracy"] = round(100 * result.accuracy, 2)
                row["packed_bytes"] = packed_bytes(result.l2)
            rows.append(row)
            print(f"{model} {label}: done", flush=True)
    return rows


def render(rows: list[dict]) -> str:
    lines = [SECTION, "",
             "`tools/bench.py --int4`. The suite's LeNet, FastGRNN and ProtoNN (10 digits) with "
             "the weights of their matmuls and convolutions at 8 bits and packed at 4 bits "
             "(`--weight-bits 4`, two codes a byte, a scale per output channel; docs/numerics.md, "
             "\"4-bit weights\"). Flash of the linked image (-Os) and one inference (median of "
             f"{INPUTS} test inputs, each label equal to the evaluator's): cycles on the Uno, "
             "instructions on the Cortex-M4. Accuracy: the whole test split, bit-exact "
             "evaluator.", "",
             "| model | configuration | packed weights | Uno flash | Uno cycles | M4 flash | "
             "M4 instructions | accuracy |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        packed = f"{r['packed_bytes']:,} B" if r["packed_bytes"] else "-"
        lines.append(f"| {r['model']} | {r['config']} | {packed} | "
                     f"{r['avr']['flash']:,} | {r['avr']['latency']:,} | "
                     f"{r['cortex-m4']['flash']:,} | {r['cortex-m4']['latency']:,} | "
                     f"{r['accuracy']:.2f}% |")
    lines += ["", "Packed weights are read through an unpack at each load, which no target "
              "kernel (SMLAD pairs, the AVR asm dot product) takes: 4 bits trade time for "
              "flash. The image shrinks by less than half the weights where the unpacking "
              "code and the per-channel tables weigh against small weights.", ""]
    return "\n".join(lines)
