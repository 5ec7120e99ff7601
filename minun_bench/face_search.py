"""Face detection under a RAM budget: MinUn's Haunter on EdgeML's RNNPool face-4 program.

`tools/bench.py --face-search` runs it (after `--face` in `make bench`) and writes the
section "## RNNPool face-4 under a RAM budget" of BENCHMARKS.md and
benchmarks/face_search.json. For each representation (posits, fixed point) Haunter starts
from every tensor at 8 bits and promotes tensors to 16 bits while the planned RAM, the
image included (`--input-in-scratch`), stays within the budget; value maps and candidates
run on the native evaluator. The chosen assignment is then compiled for cortex-m4 by the
normal pipeline (`--assign`), its output SQNR measured on held-out images, and its C run
in QEMU against the evaluator (both representations: the posit runtime's ~150 M4
instructions per operation make a face image about 3e10 instructions, half a minute of
QEMU). Times are wall clock (not compared byte for byte).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from minun_bench.face import FACE, MINUN_FIXED16_KB, PIXELS, TRAINED, images

SECTION = "## RNNPool face-4 under a RAM budget"
BUDGET = 180_000  # bytes of RAM, the image included
SEARCH_IMAGES = 4  # Haunter's search data (value maps and candidates)
TEST_IMAGES = 2  # held out: the chosen program's SQNR and the QEMU run
MINUN_POSIT_KB = (192, 203)  # MinUn §7.3: the face models' RAM with posits
REPRESENTATIONS = ("posit", "fixed")
# Records written before the posit program ran in QEMU (the runtime then took ~400 M4
# instructions per operation, about 1e11 per image) show this instead.
QEMU_POSITS = "not run (software posits: ~400 M4 instructions per op, ~1e11 per image)"


def _data(x: np.ndarray):
    """A SeeDot-style image array (label first) as a Dataset of (76,800, 1) inputs."""
    from minun_mlir.data import Dataset

    return Dataset(x[:, 1:].reshape(len(x), PIXELS, 1), np.zeros(len(x), np.int64), 0)


def face_search(work: Path, budget: int = BUDGET, run_target: str | None = "cortex-m4-mps2"
                ) -> dict:
    """Haunter on face-4 under `budget` for each representation, then the chosen program
    compiled for cortex-m4 and checked in QEMU."""
    from minun_mlir.bitwidth_search import haunter_model
    from minun_mlir.driver import Options, compile_model, load_model
    from minun_mlir.numerics.l2_eval import storage_inputs
    from minun_mlir.targets import run_model

    train, test = images(SEARCH_IMAGES, seed=0), images(TEST_IMAGES, seed=1)
    np.save(work / "train.npy", train)
    np.save(work / "test.npy", test)
    l1 = load_model(FACE, TRAINED)
    spread = float_spread(l1, train, test)
    rows = {}
    for rep in REPRESENTATIONS:
        t0 = time.perf_counter()
        # posits: with a quire (33 B at these sizes: the search without one is left out)
        search = haunter_model(l1, _data(train), budget, representation=rep, jobs=2,
                               progress=False, input_in_scratch=True,
                               quire=True if rep == "posit" else None)
        seconds = time.perf_counter() - t0
        r = search.chosen_result
        (assign := work / f"{rep}.json").write_text(search.assignment.to_json())
        options = Options(repr=rep, bits=search.assignment.bits,
                          assign=str(assign), input_in_scratch=True, budget=budget,
                          target="cortex-m4", evaluator="native")
        result = compile_model(FACE, options, weights=TRAINED, train=work / "train.npy",
                               test=work / "test.npy", out_dir=work / rep, name="face-4")
        # all 8 and all 16 bits (the baselines also list the other uniform programs tried)
        low, high = search.base, search.baselines[f"{rep}16"]
        row = {
            "seconds": round(seconds, 1),
            "planned": len({p for i in search.instances for p, _, _ in i.steps}),
            "evaluated": len({p.candidate for p in search.points}),
            "tensors": len(search.variables), "promoted": len(search.changed),
            "es": {str(b): e for b, e in sorted(search.assignment.es.items())},
            "ram_bytes": r.ram, "sqnr_search_db": r.sqnr_db,
            "low_ram_bytes": low.ram, "low_sqnr_db": low.sqnr_db,
            "high_ram_bytes": high.ram, "high_sqnr_db": high.sqnr_db,
            "scratch_bytes": result.memory["scratch_bytes"],
            "runtime_bytes": result.memory.get("runtime_bytes", 0),  # posit quires
            "sqnr_test_db": result.error["sqnr_db"],
            "largest_low": sorted(
                (v for v in search.variables if v not in search.assignment.tensors),
                key=lambda v: -int(np.prod(search.shapes[v])))[:4],
        }
        if run_target is not None:
            inputs = storage_inputs(result.l2, result.test.features)
            run = run_model(result.c_dir, run_target, inputs, name="face-4", config=rep,
                            timeout=900)
            got = np.asarray(run.outputs).reshape(len(inputs), -1).astype(np.int64)
            want = np.asarray(result.stored_outputs).reshape(len(inputs), -1).astype(np.int64)
            row |= {"target": run_target, "outputs_compared": int(want.size),
                    "outputs_equal": int(np.sum(got == want)),
                    "target_ram_bytes": run.ram_bytes,
                    "instructions_per_image": int(np.median(run.latencies))}
        rows[rep] = row
        print(f"face-4 haunter {rep}: {row}", flush=True)
    return {"budget_bytes": budget, "search_images": SEARCH_IMAGES,
            "test_images": TEST_IMAGES, "float_output_spread": spread, "rows": rows,
            "weights": "trained"}


def float_spread(l1, *datasets: np.ndarray) -> float:
    """The largest difference between the float program's outputs on any two of the
    images (0: the output does not depend on the image)."""
    from minun_mlir import native
    from minun_mlir.pipeline import pipeline_text, run_pipeline

    prepared = l1.clone()
    run_pipeline(prepared, pipeline_text(stop="lower-composite-ops"))
    out = np.concatenate([np.asarray(native.float_outputs(prepared, _data(d).features)[0])
                          for d in datasets]).reshape(sum(len(d) for d in datasets), -1)
    return float(np.max(out.max(axis=0) - out.min(axis=0)))


def _formats(row: dict) -> str:
    """The posit formats stage I chose (nothing for fixed point)."""
    es = row.get("es")
    return f" (posit<8, {es['8']}>, posit<16, {es['16']}>)" if es else ""


# what the program ran with: records written before the trained weights have no "weights"
WEIGHTS = {
    "trained": "its trained weights on generated head scenes, as in the section above",
    None: "measured with weights drawn in the declared ranges and images uniform in X's "
          "range, before the SeeDot loop fix that made face-4's outputs depend on its image; "
          "not re-run on the trained program yet",
}


def render(record: dict) -> str:
    b = record["budget_bytes"]
    lines = [
        SECTION, "",
        f"MinUn's Haunter on EdgeML's RNNPool face-4 program ({WEIGHTS[record.get('weights')]})"
        f" with `--ram-budget "
        f"{b}` on cortex-m4: every tensor starts at 8 bits and tensors are promoted to 16 "
        "bits in order of promotability while the planned RAM, the 76,800-pixel image "
        f"included (`--input-in-scratch`), stays within {b:,} B. Search data "
        f"{record['search_images']} images (value maps and candidates on the native "
        f"evaluator, 2 processes); the chosen assignment compiled by the normal pipeline "
        f"(`--assign`), its SQNR vs float measured on {record['test_images']} held-out "
        "images, and its C run in QEMU on them. MinUn reports "
        f"{MINUN_POSIT_KB[0]}-{MINUN_POSIT_KB[1]} KB for its face models with posits "
        f"(fixed16: {MINUN_FIXED16_KB} KB).", "",
        "| representation | all 8-bit: RAM / SQNR | all 16-bit: RAM / SQNR | chosen: "
        "promoted / RAM | SQNR (search / held out) | C in QEMU == evaluator | M4 "
        "instructions per image | M4 .data+.bss | configurations planned / programs run | "
        "search time |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rows = sorted(record["rows"].items())  # as the JSON keeps them (sort_keys)
    for rep, r in rows:
        qemu = (f"{r['outputs_equal']:,} / {r['outputs_compared']:,}"
                if "outputs_equal" in r else QEMU_POSITS)
        ram = f"{r['target_ram_bytes']:,} B" if "target_ram_bytes" in r else "-"
        per_image = (f"{r['instructions_per_image']:,}" if "instructions_per_image" in r
                     else "-")
        lines.append(
            f"| {rep}{_formats(r)} | {r['low_ram_bytes']:,} B / {r['low_sqnr_db']:.1f} dB | "
            f"{r['high_ram_bytes']:,} B / {r['high_sqnr_db']:.1f} dB | "
            f"{r['promoted']} of {r['tensors']} / {r['ram_bytes']:,} B | "
            f"{r['sqnr_search_db']:.1f} / {r['sqnr_test_db']:.1f} dB | {qemu} | {per_image} | "
            f"{ram} | "
            f"{r['planned']} / {r['evaluated']} | {r['seconds']:.0f} s |")
    fits = all(r["ram_bytes"] <= b and r["scratch_bytes"] + r["runtime_bytes"] == r["ram_bytes"]
               for r in record["rows"].values())
    lines += ["", f"Every chosen program {'fits' if fits else 'does NOT fit'} the budget by "
              "the planner (with the posit runtime's quire), and minun-compile plans the "
              "same bytes when it replays the assignment. The largest tensors left at 8 "
              "bits: " + "; ".join(f"{rep}: {', '.join(r['largest_low'])}"
                                   for rep, r in rows) + "."]
    if any(r.get("es") for r in record["rows"].values()):
        lines += ["", "The posit search first runs stage I (MinUn's Algorithm 4): the uniform "
                  "posit<8, 0> and posit<8, 2> programs, then posit<16, 1> and posit<16, 2>, "
                  "on the search images; es = 0 (8 bits) or 1 (16 bits) is kept only if it "
                  "loses less. Those four programs are not in the count of programs run."]
    lines += ["", "M4 .data+.bss is the QEMU harness's whole program: the scratch, plus the "
              "caller's output buffer (18,000 stored outputs) and the harness's own "
              "variables, which the budget (the model's RAM, as MinUn counts it) leaves out."]
    if record["float_output_spread"] == 0:
        lines += ["", "Caveat: the float program's 18,000 outputs are the same on every image "
                  "(largest difference between images: 0), so the SQNR measures how closely "
                  "each program computes that one output."]
    return "\n".join(lines) + "\n"
