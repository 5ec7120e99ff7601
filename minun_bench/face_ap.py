"""Detection quality of the trained face-4 (benchmarks/real/edgeml-rnnpool-face-4/trained):
AP at IoU 0.5 and COCO's mAP (IoU 0.5:0.95) on held-out generated head scenes, the float
program beside its fixed16, fixed8 and posit16 programs (our evaluators, bit-exact with
the C), as MinUn's Table 3 reports mAP per representation.

`tools/bench.py --face-ap` writes the section "## Face detection quality" of BENCHMARKS.md
and benchmarks/face_ap.json. The scenes come from tools/face/generate.py (test set seed 1,
scales profiled on training scenes seed 0), the boxes from tools/face/detect.py.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from minun_bench.suite import REAL
from minun_mlir.driver import Options, load_model

FACE_DIR = REAL / "edgeml-rnnpool-face-4"
FACE = FACE_DIR / "input.sd"
WEIGHTS = FACE_DIR / "trained" / "weights"
TOOLS = Path(__file__).resolve().parents[1] / "tools" / "face"
SECTION = "## Face detection quality"
TEST_SEED, PROFILE_SEED = 1, 0
# MinUn (Table 3): mAP of the face models Face-A / B / C per representation
MINUN = {"float": (0.643, 0.336, 0.575), "fixed16": (0.628, 0.301, 0.562),
         "posit (searched)": (0.647, 0.333, 0.573)}
CONFIGS = {
    "fixed16": Options(bits=16, evaluator="native"),
    # the face benchmark's build (--input-bits 8): the image held as 8-bit camera bytes
    "fixed16, 8-bit image": Options(bits=16, input_bits=8, evaluator="native"),
    "fixed8": Options(bits=8, evaluator="native"),
    "posit16": Options(repr="posit", bits=16, evaluator="native"),
}


def face_tools():
    """tools/face's generate and detect modules (numpy only)."""
    if str(TOOLS) not in sys.path:
        sys.path.insert(0, str(TOOLS))
    import detect
    import generate

    return generate, detect


def scenes(seed: int, n: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """n generated scenes as the program's input [n, 76800, 1] and their boxes."""
    generate, _ = face_tools()
    pixels, boxes = generate.dataset(seed, n)
    return generate.program_inputs(pixels).reshape(n, -1, 1), boxes


def quantized(l1, options: Options, train: Path):
    """L2 of `l1` under `options`, scales profiled on `train`."""
    from minun_mlir.pipeline import run_pipeline

    passes = options.passes(train)
    l2 = l1.clone()
    run_pipeline(l2, passes[:[p.name for p in passes].index("quantize") + 1])
    return l2


def profile_file(work: Path, n: int) -> Path:
    """`n` generated scenes (PROFILE_SEED) as a SeeDot-style data file in `work`, label 0
    first: the data the quantizer profiles the face program's scales on."""
    px, _ = scenes(PROFILE_SEED, n)
    train = work / "profile.npy"
    np.save(train, np.concatenate([np.zeros((n, 1), np.float32), px.reshape(n, -1)], 1))
    return train


def face_ap(work: Path, test_images: int = 50, profile_images: int = 32,
            configs: tuple[str, ...] = tuple(CONFIGS), weights: Path = WEIGHTS) -> dict:
    """AP50 / mAP of the float program and of each configuration on `test_images` scenes."""
    from minun_mlir.native import evaluate_outputs, float_outputs
    from minun_mlir.numerics.l2_eval import decode_outputs

    _, detect = face_tools()
    x, boxes = scenes(TEST_SEED, test_images)
    train = profile_file(work, profile_images)
    l1 = load_model(FACE, weights)
    t0 = time.perf_counter()
    ref = np.asarray(float_outputs(l1, x, "native")[0]).reshape(test_images, -1)
    record = {"test_images": test_images, "heads": int(sum(len(b) for b in boxes)),
              "profile_images": profile_images,
              "float": {**detect.ap_scores(ref, boxes),
                        "seconds": round(time.perf_counter() - t0, 1)}}
    for name in configs:
        t0 = time.perf_counter()
        l2 = quantized(l1, CONFIGS[name], train)
        stored = evaluate_outputs(l2, x, "native")
        got = np.asarray(decode_outputs(l2, stored)[0], np.float64).reshape(test_images, -1)
        err = got - ref
        record[name] = {**detect.ap_scores(got, boxes),
                        "sqnr_db": round(float(10 * np.log10(np.sum(ref ** 2)
                                                             / max(np.sum(err ** 2), 1e-30))), 1),
                        "seconds": round(time.perf_counter() - t0, 1)}
        print(f"  {name}: {record[name]}", flush=True)
    return record


def render(record: dict, info: dict | None = None) -> str:
    rows = [SECTION, "",
            "The RNNPool face-4 program with trained weights "
            "(`benchmarks/real/edgeml-rnnpool-face-4/trained/`, `make train-face`: "
            "tools/face/train.py on generated head scenes, every parameter kept in its "
            "declared range), on "
            f"{record['test_images']} held-out generated scenes ({record['heads']} heads, "
            "tools/face/generate.py seed 1). Boxes decoded from the 18,000 outputs as "
            "tools/face/detect.py documents (S3FD's anchors, softmax face score > 0.05, NMS "
            "at IoU 0.3); AP at IoU 0.5 and COCO's mAP (mean AP at IoU 0.50:0.05:0.95). "
            "Float: the program's float32 evaluation; the others: our bit-exact evaluators "
            "(what the generated C computes), data-driven scales profiled on "
            f"{record['profile_images']} training scenes (seed 0); posit16 is posit<16, 2>. "
            "MinUn's Table 3 is beside it: its face models were trained on WIDER FACE, so "
            "only the drops from float compare (MinUn's FIXED16 loses 0.015 / 0.035 / 0.013 "
            "mAP on Face-A / B / C).", "",
            "| program | AP50 | mAP 0.5:0.95 | mAP drop from float | SQNR vs float "
            "| MinUn Table 3 mAP (Face-A / B / C) |",
            "|---|---:|---:|---:|---:|---|"]
    for name in ("float", *CONFIGS):
        if name not in record:
            continue
        r = record[name]
        minun = MINUN.get(name)
        sq = f"{r['sqnr_db']} dB" if "sqnr_db" in r else ""
        drop = f"{record['float']['map'] - r['map']:.3f}" if name != "float" else ""
        rows.append(f"| {name} | {r['ap50']:.3f} | {r['map']:.3f} | {drop} | {sq} | "
                    f"{' / '.join(f'{v:.3f}' for v in minun) if minun else ''} |")
    for r in record.get("searched", []):
        if r["fits"]:
            minun = MINUN["posit (searched)"] if r["representation"] == "posit" else None
            rows.append(f"| {searched_name(r)} | {r['ap50']:.3f} | {r['map']:.3f} | "
                        f"{r['float']['map'] - r['map']:.3f} | {r['sqnr_db']} dB | "
                        f"{' / '.join(f'{v:.3f}' for v in minun) if minun else ''} |")
    if record.get("searched"):
        rows += render_searched(record["searched"], record)
    if info:
        rows += ["", f"Training: {info['images']} scenes x {info['epochs']} epochs, batch "
                 f"{info['batch']}, {info['seconds']} s wall on the shared 2-core machine "
                 f"(torch {info['torch']}, {info['threads']} threads)."]
    return "\n".join(rows) + "\n"


# The searched programs (issue 33): MinUn's Haunter on face-4 (minun_bench/face_search.py's
# call: the image counted, posits with a quire) under each budget, its assignment replayed by
# the quantize pass (--assign) with the scales of the rows above, AP on the test scenes.
# Posits run on the numpy evaluator (~14 s a scene), so they are measured on fewer scenes.
SEARCH_BUDGETS = (180_000, 96_000)
# (budget, representation, streamed): streamed, the search plans each candidate as
# `--stream-rows --input-in-scratch --output-in-scratch` compiles it (everything counted)
SEARCHES = tuple((budget, rep, False) for budget in SEARCH_BUDGETS
                 for rep in ("fixed", "posit")) + ((96_000, "fixed", True),)
SEARCH_TEST_IMAGES = {"fixed": 50, "posit": 10}
QEMU_SCENES = 2  # a streamed program's C run in QEMU on the 256 KB cortex-m4


def search_key(r: dict) -> tuple[int, str, bool]:
    return r["budget_bytes"], r["representation"], r.get("stream_rows", False)


def planned_ram(l2, output_in_scratch: bool, stream_rows: bool = False) -> int:
    """The program's static RAM (scratch + quires) with the image in the scratch and, with
    `output_in_scratch`, the 18,000 outputs too (everything the model holds while it runs);
    with `stream_rows`, streamed (--stream-rows)."""
    from minun_mlir.memory_map import memory_map
    from minun_mlir.pipeline import lower_l2

    l3 = lower_l2(l2, stop="memory-plan", planner="greedy", input_in_scratch=True,
                  output_in_scratch=output_in_scratch, stream_rows=stream_rows)
    return int(memory_map(l3, "greedy").static_ram)


def searched(work: Path, budget: int, rep: str, test_images: int | None = None,
             profile_images: int = 32, weights: Path = WEIGHTS, stream_rows: bool = False,
             qemu: bool = True) -> dict:
    """Haunter on face-4 under `budget` for `rep`; the chosen program's RAM and its AP50 / mAP
    (and float's, on the same scenes) on `test_images` scenes, or why nothing fits. With
    `stream_rows` every candidate is planned streamed with the image and the outputs in the
    scratch, and (`qemu`) the chosen program's C runs on the 256 KB cortex-m4 in QEMU."""
    from minun_bench.face import images
    from minun_bench.face_search import SEARCH_IMAGES, _data
    from minun_mlir.bitwidth_search import haunter_model
    from minun_mlir.diagnostics import MinunError
    from minun_mlir.native import evaluate_outputs, float_outputs
    from minun_mlir.numerics.l2_eval import decode_outputs

    _, detect = face_tools()
    n = test_images or SEARCH_TEST_IMAGES[rep]
    x, boxes = scenes(TEST_SEED, n)
    train = profile_file(work, profile_images)
    l1 = load_model(FACE, weights)
    row: dict = {"budget_bytes": budget, "representation": rep}
    if stream_rows:  # a streamed plan per candidate: the first exploration alone
        row |= {"stream_rows": True, "explorations": "first"}
    t0 = time.perf_counter()
    try:
        search = haunter_model(l1, _data(images(SEARCH_IMAGES, seed=0)), budget,
                               representation=rep, jobs=2, progress=False,
                               input_in_scratch=True, quire=True if rep == "posit" else None,
                               output_in_scratch=stream_rows, stream_rows=stream_rows,
                               first_only=stream_rows)
    except MinunError as e:  # nothing fits: the smallest program's RAM says by how much
        smallest = quantized(l1, Options(repr=rep, bits=8, evaluator="native"), train)
        return row | {"fits": False, "reason": str(e).splitlines()[0],
                      "search_seconds": round(time.perf_counter() - t0, 1),
                      "low_ram_bytes": planned_ram(smallest, stream_rows, stream_rows),
                      "low_ram_with_outputs_bytes": planned_ram(smallest, True, stream_rows)}
    row["search_seconds"] = round(time.perf_counter() - t0, 1)
    (assign := work / f"{rep}-{budget}.json").write_text(search.assignment.to_json())
    l2 = quantized(l1, Options(repr=rep, bits=search.assignment.bits, assign=str(assign),
                               input_in_scratch=True, evaluator="native"), train)
    t0 = time.perf_counter()
    ref = np.asarray(float_outputs(l1, x, "native")[0], np.float64).reshape(n, -1)
    stored = evaluate_outputs(l2, x, "native")
    got = np.asarray(decode_outputs(l2, stored)[0], np.float64).reshape(n, -1)
    err = got - ref
    row |= {"fits": True, "test_images": n, "heads": int(sum(len(b) for b in boxes)),
            "promoted": len(search.changed), "tensors": len(search.variables),
            "ram_bytes": search.chosen_result.ram,
            "replayed_ram_bytes": planned_ram(l2, stream_rows, stream_rows),
            "ram_with_outputs_bytes": planned_ram(l2, True, stream_rows),
            **detect.ap_scores(got, boxes),
            "float": detect.ap_scores(ref, boxes),
            "sqnr_db": round(float(10 * np.log10(np.sum(ref ** 2)
                                                 / max(np.sum(err ** 2), 1e-30))), 1),
            "eval_seconds": round(time.perf_counter() - t0, 1)}
    if stream_rows:
        row["recomputation"] = recomputation(l2)
    if stream_rows and qemu:
        row |= qemu_run(work, assign, rep, search.assignment.bits)
    return row


def recomputation(l2) -> dict:
    """What the streamed program computes twice (stream_rows_recomputed: the heads'
    shared maps), per image, and its share of the convolutions' MACs."""
    from minun_mlir.passes.stream_rows import conv_macs, stream_rows
    from minun_mlir.passes.stream_rows import recomputation as recomputed

    macs, elements = recomputed(stream_rows(l2.clone()))
    return {"macs": macs, "elements": elements, "conv_macs": conv_macs(l2)}


def qemu_run(work: Path, assign: Path, rep: str, bits: int) -> dict:
    """The assignment compiled streamed for the 256 KB cortex-m4 (image and outputs in
    the scratch) and run in QEMU on QEMU_SCENES held-out scenes against the evaluator."""
    from minun_bench.face import images
    from minun_mlir.driver import compile_model
    from minun_mlir.numerics.l2_eval import storage_inputs
    from minun_mlir.targets import run_model

    np.save(work / "qemu-test.npy", images(QEMU_SCENES, seed=TEST_SEED))
    options = Options(repr=rep, bits=bits, assign=str(assign), input_in_scratch=True,
                      output_in_scratch=True, stream_rows=True, target="cortex-m4",
                      evaluator="native")
    result = compile_model(FACE, options, weights=WEIGHTS, train=work / "profile.npy",
                           test=work / "qemu-test.npy", out_dir=work / "qemu", name="face-4")
    inputs = storage_inputs(result.l2, result.test.features)
    run = run_model(result.c_dir, "cortex-m4", inputs, name="face-4", config=rep,
                    timeout=1800)
    got = np.asarray(run.outputs).reshape(len(inputs), -1).astype(np.int64)
    want = np.asarray(result.stored_outputs).reshape(len(inputs), -1).astype(np.int64)
    return {"qemu_target": "cortex-m4", "qemu_scenes": len(inputs),
            "outputs_compared": int(want.size), "outputs_equal": int(np.sum(got == want)),
            "target_ram_bytes": run.ram_bytes,
            "instructions_per_image": int(np.median(run.latencies))}


def searched_name(r: dict) -> str:
    streamed = ", streamed" if r.get("stream_rows") else ""
    return f"searched {r['representation']} (Haunter, {r['budget_bytes']:,} B{streamed})"


def render_searched(searched_rows: list[dict], record: dict) -> list[str]:
    """The searched programs' paragraph and RAM table (the rows above give their AP)."""
    fewer = {r["test_images"] for r in searched_rows if r["fits"]} - {record["test_images"]}
    posit16 = record.get("posit16", {}).get("seconds")
    lines = ["", "Searched: MinUn's Haunter on face-4 as `tools/bench.py --face-search` runs it "
             "(search data: 4 training scenes; every tensor starts at 8 bits and tensors are "
             "promoted to 16 bits while the planned RAM, the 76,800-pixel image included "
             "(`--input-in-scratch`), stays within the budget; posits with a quire; the "
             "candidates ranked by Haunter's default loss, disagreement with float on the "
             "search scenes, which knows nothing of boxes or AP), the "
             "chosen assignment replayed by the quantize pass (`--assign`) with the scales "
             "above. Its mAP drop is from float on the same scenes."
             + (f" Posit programs run on the numpy evaluator (posit16 above: "
                f"{posit16:.0f} s for {record['test_images']} scenes), so they are measured on "
                f"the first {', '.join(map(str, sorted(fewer)))} test scenes only."
                if fewer and posit16 else ""), "",
             "| program | test scenes (heads) | float AP50 / mAP on them | tensors promoted "
             "| RAM, image counted | RAM, image and 18,000 outputs counted | fits | "
             "search time |",
             "|---|---:|---:|---:|---:|---:|---|---:|"]
    for r in searched_rows:
        if r["fits"]:
            lines.append(
                f"| {searched_name(r)} | {r['test_images']} ({r['heads']}) | "
                f"{r['float']['ap50']:.3f} / {r['float']['map']:.3f} | "
                f"{r['promoted']} of {r['tensors']} | {r['ram_bytes']:,} B | "
                f"{r['ram_with_outputs_bytes']:,} B | yes | {r['search_seconds']:.0f} s |")
        else:
            lines.append(
                f"| {searched_name(r)} | - | - | - | every tensor at 8 bits: "
                f"{r['low_ram_bytes']:,} B | {r['low_ram_with_outputs_bytes']:,} B | no: "
                f"nothing fits | {r['search_seconds']:.0f} s |")
    if any(not r["fits"] for r in searched_rows):
        lines += ["", "Under a budget below the smallest program's RAM Haunter refuses "
                  "(\"no configuration fits\"): every stage still holds whole feature maps, "
                  "so even the program with every tensor at 8 bits is over the budget; a "
                  "budget that small needs patch-based inference (issue 33, item 3: "
                  "the streamed row) or "
                  "narrower formats than Haunter's 8 and 16 bits, not this search. The "
                  "search plans the image but not the outputs (its RAM is the planner's "
                  "scratch with `--input-in-scratch`); the column with the outputs plans them "
                  "too (`--output-in-scratch`)."]
    for r in (r for r in searched_rows if r.get("stream_rows") and r["fits"]):
        lines += ["", f"{searched_name(r)}: `--search haunter --ram-budget "
                  f"{r['budget_bytes']} --stream-rows --input-in-scratch --output-in-scratch`: "
                  "each candidate's RAM is the plan minun-compile makes for it with stream-rows "
                  "(docs/codegen.md), the image, the scratch and the 18,000 outputs counted; "
                  "Haunter's first exploration alone (promote in promotability order while "
                  "the plan fits: each streamed plan takes seconds at 320x240, and the full "
                  "Algorithm 8 plans one per tensor for each overshooting tensor, hours "
                  "here); "
                  f"{r['ram_bytes']:,} B chosen, and the replayed assignment plans "
                  f"{r['replayed_ram_bytes']:,} B."]
        if "recomputation" in r:
            rc = r["recomputation"]
            lines[-1] += (f" Recomputation (the heads' shared maps once more each): "
                          f"{rc['macs']:,} MACs, {rc['elements']:,} element operations per "
                          f"image, {100 * rc['macs'] / rc['conv_macs']:.2f}% of the "
                          "convolutions' MACs.")
        if "instructions_per_image" in r:
            lines[-1] += (f" Its C on the 256 KB {r['qemu_target']} in QEMU, "
                          f"{r['qemu_scenes']} test scenes: {r['outputs_equal']:,} of "
                          f"{r['outputs_compared']:,} outputs equal to the evaluator's, "
                          f"{r['instructions_per_image']:,} instructions per image, "
                          f".data+.bss {r['target_ram_bytes']:,} B (the scratch and the "
                          "harness).")
    return lines
