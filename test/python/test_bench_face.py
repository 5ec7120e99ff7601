"""The face-detection section of BENCHMARKS.md: `make bench` rewrites the suite part and
keeps the face section that `tools/bench.py --face` wrote (and the other way round); the
planner comparison it prints orders the planners as their definitions require."""

from __future__ import annotations

from pathlib import Path

from minun_bench import face as bench_face
from minun_mlir.driver import load_model
from minun_mlir.pipeline import lower_to_l2

ROOT = Path(__file__).resolve().parents[2]


def test_the_suite_report_keeps_the_face_section_and_the_face_run_replaces_it():
    face = bench_face.SECTION + "\n\nface numbers\n"
    old = "# Benchmarks\n\nold suite\n\n## Compile time\n\nold times\n\n" + face
    new_suite = "# Benchmarks\n\nnew suite\n\n## Compile time\n\nnew times\n"
    merged = bench_face.keep_section(old, new_suite)
    assert merged == "# Benchmarks\n\nnew suite\n\n## Compile time\n\nnew times\n\n" + face
    assert bench_face.keep_section(None, new_suite) == new_suite
    replaced = bench_face.replace_section(merged, bench_face.SECTION + "\n\nnew face\n")
    assert replaced.endswith("new times\n\n## Face detection\n\nnew face\n")
    assert replaced.count(bench_face.SECTION) == 1


def test_the_face_and_posit_sections_survive_each_others_runs_and_the_suites():
    from minun_bench import posit as bench_posit

    suite = "# Benchmarks\n\nsuite\n\n## Compile time\n\ntimes\n"
    face = bench_face.SECTION + "\n\nface numbers\n"
    posit = bench_posit.SECTION + "\n\nposit numbers\n"
    # the posit run adds its section after the face section
    both = bench_face.replace_section(suite + "\n" + face, posit, bench_posit.SECTION)
    assert both == suite + "\n" + face + "\n" + posit
    # the face run replaces only its own section, the suite run keeps both
    again = bench_face.replace_section(both, bench_face.SECTION + "\n\nnew face\n")
    assert again == suite + "\n" + bench_face.SECTION + "\n\nnew face\n\n" + posit
    new_suite = suite.replace("suite\n", "new suite\n", 1)
    assert bench_face.keep_section(again, new_suite) == again.replace("suite\n",
                                                                       "new suite\n", 1)


def test_planner_comparison_is_ordered_as_the_planners_promise():
    sd = ROOT / "examples" / "rnnpool.sd"
    l2 = lower_to_l2(load_model(sd), bits=16, data=str(ROOT / "examples/rnnpool/test.npy"))
    rows = bench_face.planners(l2)
    bound = rows["naive"]["lower_bound_bytes"]
    assert all(r["lower_bound_bytes"] == bound for r in rows.values())
    assert rows["naive"]["scratch_bytes"] >= rows["greedy"]["scratch_bytes"] >= bound
    assert rows["greedy"]["scratch_bytes"] >= rows["optimal"]["scratch_bytes"] >= bound
    assert rows["shiftry"]["scratch_bytes"] >= bound


def test_posit_runtime_flash_per_operation_counts_only_what_the_operation_needs(tmp_path):
    """The per-operation flash of the posit runtime (Uno, M0+): each operation alone takes
    some flash, less than the program calling all six; at 16 bits sigmoid and tanh, built
    on exp, take more than exp (the linker keeps only the functions an operation reaches),
    at 8 bits each of the three is one 256-entry table and its lookup."""
    from minun_bench import posit as bench_posit

    flash = bench_posit.op_flash(tmp_path)
    for fmt, by_target in flash.items():
        n = int(fmt.split("<")[1].split(",")[0])
        for target, ops in by_target.items():
            every = bench_posit.linked_flash(target, n, 2, None, tmp_path)
            none = bench_posit.linked_flash(target, n, 2, 0, tmp_path)
            assert all(0 < ops[op] < every - none
                       for op in bench_posit.OPS), (fmt, target, ops)
            if n == 8:  # 256-entry tables (tools/posit8_tables.py): a table and its lookup
                assert ops["exp"] == ops["sigmoid"] == ops["tanh"] >= 256, (fmt, target, ops)
            else:  # computed: sigmoid and tanh are built on exp
                assert ops["sigmoid"] > ops["exp"] and ops["tanh"] > ops["exp"], (fmt, target)


def test_the_face_search_section_sits_between_face_and_posits_and_matches_its_json():
    """`tools/bench.py --face-search` writes its own section after the face section; the
    face run and the posit run keep it; the committed section is what its committed JSON
    renders to (the numbers in the report are the measured ones)."""
    import json

    from minun_bench import face_search as bench_face_search
    from minun_bench import posit as bench_posit

    suite = "# Benchmarks\n\nsuite\n\n## Compile time\n\ntimes\n"
    face = bench_face.SECTION + "\n\nface numbers\n"
    posit = bench_posit.SECTION + "\n\nposit numbers\n"
    search = bench_face_search.SECTION + "\n\nsearch numbers\n"
    doc = bench_face.replace_section(suite + "\n" + face + "\n" + posit, search,
                                     bench_face_search.SECTION)
    assert doc == suite + "\n" + face + "\n" + search + "\n" + posit
    again = bench_face.replace_section(doc, bench_face.SECTION + "\n\nnew face\n")
    assert search in again and again.count(bench_face_search.SECTION) == 1
    record = json.loads((ROOT / "benchmarks" / "face_search.json").read_text())
    _, parts = bench_face.split_sections((ROOT / "BENCHMARKS.md").read_text())
    assert parts[bench_face_search.SECTION] == bench_face_search.render(record)
    for row in record["rows"].values():  # the budget the section states holds
        assert row["ram_bytes"] <= record["budget_bytes"] == 180_000
        assert row["scratch_bytes"] + row["runtime_bytes"] == row["ram_bytes"]


def test_the_face_quality_section_follows_the_face_section_and_matches_its_json():
    """`tools/bench.py --face-ap` writes its section right after the face section; the
    committed section is what benchmarks/face_ap.json (and the training record) render to,
    and fixed16 loses no more mAP than MinUn's FIXED16 does on Face-A (issue 33)."""
    import json

    from minun_bench import face_ap as bench_face_ap
    from minun_bench import face_search as bench_face_search

    suite = "# Benchmarks\n\nsuite\n\n## Compile time\n\ntimes\n"
    face = bench_face.SECTION + "\n\nface numbers\n"
    search = bench_face_search.SECTION + "\n\nsearch numbers\n"
    quality = bench_face_ap.SECTION + "\n\nquality numbers\n"
    doc = bench_face.replace_section(suite + "\n" + face + "\n" + search, quality,
                                     bench_face_ap.SECTION)
    assert doc == suite + "\n" + face + "\n" + quality + "\n" + search
    record = json.loads((ROOT / "benchmarks" / "face_ap.json").read_text())
    info = json.loads((bench_face_ap.WEIGHTS.parent / "info.json").read_text())
    _, parts = bench_face.split_sections((ROOT / "BENCHMARKS.md").read_text())
    assert parts[bench_face_ap.SECTION] == bench_face_ap.render(record, info)
    minun_drop = bench_face_ap.MINUN["float"][0] - bench_face_ap.MINUN["fixed16"][0]
    assert record["float"]["map"] - record["fixed16"]["map"] <= minun_drop
    # the searched programs (issue 33): each budget and representation has its row; a
    # program that fits plans within the budget (the search's RAM is what its replayed
    # assignment plans) and its AP is in the table; a refusal is one the smallest program
    # (every tensor at 8 bits) confirms
    searched = {bench_face_ap.search_key(r): r for r in record["searched"]}
    assert set(searched) == set(bench_face_ap.SEARCHES)
    for (budget, _, _), r in searched.items():
        name = bench_face_ap.searched_name(r)
        if r["fits"]:
            assert r["replayed_ram_bytes"] == r["ram_bytes"] <= budget, name
            assert r["ram_with_outputs_bytes"] >= r["ram_bytes"], name
            assert f"| {name} | {r['ap50']:.3f} | {r['map']:.3f} |" in parts[
                bench_face_ap.SECTION], name
        else:
            assert r["low_ram_with_outputs_bytes"] >= r["low_ram_bytes"] > budget, name
    assert searched[180_000, "fixed", False]["fits"] and searched[180_000, "posit", False]["fits"]
    # streamed, everything counted (image, scratch, outputs): the search's RAM is the plan
    streamed = searched[96_000, "fixed", True]
    if streamed["fits"]:
        assert streamed["ram_with_outputs_bytes"] == streamed["ram_bytes"] <= 96_000
        if "outputs_equal" in streamed:
            assert streamed["outputs_equal"] == streamed["outputs_compared"] > 0
