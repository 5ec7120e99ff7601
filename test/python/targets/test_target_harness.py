"""Tests of the target harness (minun_mlir.targets) on every target, with the real
toolchains and simulators: kernel checksums against numpy, exact and stable latency
counts, the model.h contract on hand-written fake models, and the error messages."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from cli_tools import tool as cli_tool

from minun_mlir.targets import (
    TARGET_NAMES,
    BudgetExceeded,
    CompileError,
    ContractError,
    SimulationError,
    SimulationTimeout,
    build_and_run,
    cache,
    run,
    run_model,
)

HERE = Path(__file__).resolve().parent
C_DIR = HERE / "c"
MODELS = HERE / "models"
MCU_TARGETS = [t for t in TARGET_NAMES if t != "x86"]
CORTEX_TARGETS = [t for t in TARGET_NAMES if t.startswith("cortex")]


# ---- 16x16 matrix-vector kernel --------------------------------------------------------

@pytest.fixture(scope="module")
def matvec_data(tmp_path_factory):
    """matvec_data.h from a seeded RNG, and the numpy result it must produce.

    Values in [-100, 100] keep every float partial sum an exact integer (< 2^24), so the
    float build must print exactly the same numbers as the integer build."""
    rng = np.random.default_rng(2024)
    a = rng.integers(-100, 101, (16, 16))
    x = rng.integers(-100, 101, 16)

    def arr(v):
        return "{" + ", ".join(str(int(t)) for t in v) + "}"

    d = tmp_path_factory.mktemp("matvec")
    (d / "matvec_data.h").write_text(
        "static const elem_t mv_a[16][16] = {" + ", ".join(arr(r) for r in a) + "};\n"
        f"static const elem_t mv_x[16] = {arr(x)};\n")
    return d, a @ x


def run_matvec(target, data_dir, use_float=False, work_dir=None):
    return build_and_run([C_DIR / "matvec.c"], target, include_dirs=[data_dir],
                         defines={"MV_FLOAT": "1"} if use_float else None,
                         name="matvec_float" if use_float else "matvec_int16",
                         work_dir=work_dir)


def binutils_view(target: str, path: Path) -> tuple[tuple[int, int, int], list]:
    """(text, data, bss) from `size -B` and the symbols `nm -S` lists (address, type
    letter, name, size or None): the oracle of minun_mlir/targets/elf.py."""
    prefix = {"avr": "avr-", "x86": ""}.get(target, "arm-none-eabi-")
    size = subprocess.run([prefix + "size", "-B", str(path)], capture_output=True,
                          text=True, check=True).stdout
    nm = subprocess.run([prefix + "nm", "-S", str(path)], capture_output=True, text=True,
                        check=True).stdout
    rows = []
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 4:
            rows.append((int(parts[0], 16), parts[2], parts[3], int(parts[1], 16)))
        elif len(parts) == 3:
            rows.append((int(parts[0], 16), parts[1], parts[2], None))
    text, data, bss = (int(v) for v in size.strip().splitlines()[-1].split()[:3])
    return (text, data, bss), rows


@pytest.mark.parametrize("use_float", [False, True], ids=["int16", "float"])
@pytest.mark.parametrize("target", TARGET_NAMES)
def test_matvec_output_matches_numpy(target, use_float, matvec_data, tmp_path):
    """Also: the sizes and symbols read from the program and its objects in-process
    (targets/elf.py) are those binutils' `size -B` and `nm -S` give."""
    from minun_mlir.targets.elf import read_elf

    data_dir, expected = matvec_data
    r = run_matvec(target, data_dir, use_float, work_dir=tmp_path)
    for path in [*tmp_path.glob("*.elf"), *tmp_path.glob("*.o")]:
        info = read_elf(path)
        assert binutils_view(target, path) == ((info.text, info.data, info.bss),
                                               list(info.symbols)), path
    (text, data, bss), _ = binutils_view(target, next(tmp_path.glob("*.elf")))
    assert (r.flash_bytes, r.ram_bytes) == (text + data, data + bss)
    values, checksum = r.output.split("checksum")
    assert [int(v) for v in values.split()] == expected.tolist()
    assert int(checksum) == int(expected.sum())
    assert len(r.latencies) == 1 and r.latencies[0] > 0
    assert r.flash_bytes > 0 and r.ram_bytes > 0
    if target == "x86":
        assert r.stack_bytes is None
    else:
        assert 0 < r.stack_bytes < 512
    print(f"{target} matvec {'float' if use_float else 'int16'}: {r.latencies[0]} "
          f"{r.latency_unit}, flash {r.flash_bytes} B, RAM {r.ram_bytes} B, "
          f"stack {r.stack_bytes} B")


def test_avr_cycles_are_exact_and_stable(matvec_data):
    data_dir, _ = matvec_data
    first = run_matvec("avr", data_dir).latencies
    assert run_matvec("avr", data_dir).latencies == first
    # Same order of magnitude as targets.md's reference kernel (17,207 cycles).
    assert 10_000 < first[0] < 25_000


@pytest.mark.parametrize("target", MCU_TARGETS)
def test_nop_calibration(target):
    """N and 2N nops differ by exactly N: 1 cycle per nop on AVR (datasheet), 1
    instruction per nop on Cortex-M; the constant overhead is a few call instructions."""
    r = build_and_run([C_DIR / "nops.c"], target, defines={"NOPS": "1000"})
    once, twice = r.latencies
    assert twice - once == 1000
    assert 0 <= once - 1000 < 20
    assert r.output == "done\n"


@pytest.mark.parametrize("target", ["cortex-m0plus", "cortex-m3"])
def test_cortex_m_counts_are_stable(target, matvec_data):
    data_dir, _ = matvec_data
    assert run_matvec(target, data_dir).latencies == run_matvec(target, data_dir).latencies


# ---- fake models following the model.h contract ----------------------------------------

def linear_reference(x: np.ndarray) -> np.ndarray:
    """Scores of the fake linear models, from the weights in their C source."""
    text = (MODELS / "linear_int16" / "weights.h").read_text()

    def table(name: str) -> np.ndarray:
        init = re.search(name + r"[^=]*=\s*(\{.*?\});", text, re.S).group(1)
        return np.array([int(v) for v in re.findall(r"-?\d+", init)])

    w, b = table(r"\bW\[4\]\[16\]").reshape(4, 16), table(r"\bB\[4\]")
    return x.astype(np.int64) @ w.T + b


@pytest.fixture(scope="module")
def linear_inputs():
    x = np.random.default_rng(7).integers(-1000, 1001, (24, 16)).astype(np.int16)
    return x, linear_reference(x)


@pytest.mark.parametrize("target", TARGET_NAMES)
def test_fake_models_fixed_and_float(target, linear_inputs):
    x, scores = linear_inputs
    expected = scores.argmax(axis=1)
    fixed = run_model(MODELS / "linear_int16", target, x, labels=expected, config="int16")
    flt = run_model(MODELS / "linear_float", target, x.astype(np.float32), labels=expected,
                    config="float")
    assert fixed.outputs.dtype == np.int32 and flt.outputs.dtype == np.float32
    np.testing.assert_array_equal(fixed.labels, expected)
    np.testing.assert_array_equal(fixed.outputs, scores)
    np.testing.assert_array_equal(flt.labels, expected)
    np.testing.assert_array_equal(flt.outputs, scores.astype(np.float32))
    assert fixed.accuracy == 1.0 and flt.accuracy == 1.0
    assert len(fixed.latencies) == len(x) and min(fixed.latencies) > 0
    speedup = flt.latency_median / fixed.latency_median
    if target in ("avr", "cortex-m0plus", "cortex-m3", "cortex-m4"):
        assert speedup > 2  # soft float
    elif target == "cortex-m4f":
        assert 0.7 < speedup < 1.5  # hardware float
    record = fixed.to_record()
    json.dumps(record)
    assert record["latency"]["unit"] == fixed.latency_unit
    assert record["latency"]["per_input"] == fixed.latencies
    assert record["labels"] == expected.tolist() and record["n_inputs"] == len(x)
    print(f"{target}: fixed {fixed.latency_median:.0f} vs float {flt.latency_median:.0f} "
          f"{fixed.latency_unit}, speedup {speedup:.2f}")


def test_many_inputs_run_in_several_builds(linear_inputs, monkeypatch):
    """Inputs beyond the per-build cap are split over builds; results are unchanged."""
    x, scores = linear_inputs
    monkeypatch.setattr(run, "MAX_INPUT_BYTES_PER_BUILD", 5 * 32)
    r = run_model(MODELS / "linear_int16", "avr", x)
    assert r.builds == 5  # 24 inputs of 32 bytes, 5 per build
    np.testing.assert_array_equal(r.outputs, scores)
    assert len(r.latencies) == len(x)


def flash_table_model(tmp_path: Path, n_tables: int, size: int) -> tuple[Path, np.ndarray]:
    """A model reading n_tables int16 __flash tables of `size` entries on AVR."""
    tables = [(np.arange(size) * (37 + 4 * t)) % 200 - 100 for t in range(n_tables)]
    decls = "".join(f"static const __flash int16_t table{t}[{size}] = "
                    f"{{{','.join(map(str, tab))}}};\n" for t, tab in enumerate(tables))
    terms = " + ".join(f"table{t}[(k * 16 + j) * 40 + {t}]" for t in range(n_tables))
    model = fake_model(tmp_path, decls + f"""
int minun_predict(const minun_input_t *x, minun_output_t *out)
{{
    for (int k = 0; k < MINUN_OUTPUT_SIZE; k++) {{
        int32_t s = 0;
        for (int j = 0; j < MINUN_INPUT_SIZE; j++)
            s += (int32_t)({terms}) * x[j];
        out[k] = s;
    }}
    return 0;
}}
""")
    idx = (np.arange(4)[:, None] * 16 + np.arange(16)[None, :]) * 40
    w = sum(tab[idx + t] for t, tab in enumerate(tables))
    return model, w


def test_inputs_that_overflow_flash_run_in_several_builds(tmp_path):
    """A 26 KB model plus 300 embedded inputs (9.6 KB) exceed the Uno's 32 KB: the harness
    retries with one input, then fills the remaining flash per build."""
    model, w = flash_table_model(tmp_path, 1, 13_000)
    x = np.random.default_rng(3).integers(-100, 101, (300, 16)).astype(np.int16)
    r = run_model(model, "avr", x)
    assert r.builds >= 3  # one input, then two builds of the ~180 that fit each
    assert 26_000 < r.flash_bytes < 32 * 1024
    np.testing.assert_array_equal(r.outputs, x.astype(np.int64) @ w.T)


# ---- errors ------------------------------------------------------------------------------

def fake_model(tmp_path: Path, body: str) -> Path:
    d = tmp_path / "model"
    d.mkdir(parents=True)
    shutil.copy(MODELS / "linear_int16" / "model.h", d / "model.h")
    (d / "model.c").write_text('#include "model.h"\n' + body)
    return d


BIG_RAM = """
static int16_t scratch[SCRATCH];
int minun_predict(const minun_input_t *x, minun_output_t *out)
{
    for (int i = 0; i < SCRATCH; i++)
        scratch[i] = x[i % MINUN_INPUT_SIZE];
    for (int k = 0; k < MINUN_OUTPUT_SIZE; k++)
        out[k] = scratch[k * 7];
    return 0;
}
"""


def test_ram_budget_message(tmp_path):
    model = fake_model(tmp_path, BIG_RAM)
    x = np.zeros((2, 16), np.int16)
    with pytest.raises(BudgetExceeded) as err:
        run_model(model, "avr", x, ram_budget=1000, cflags=["-DSCRATCH=600"])
    msg = str(err.value)
    assert msg.startswith("error: model does not fit avr")
    assert re.search(r"is [\d,]+ bytes, [\d,]+ bytes over the RAM budget of 1,000 bytes", msg)
    assert "scratch 1,200 B" in msg


def test_avr_linker_overflow_becomes_budget_message(tmp_path):
    """3,000 int16 do not fit the Uno: the linker fails, the user gets sizes and culprits."""
    model = fake_model(tmp_path, BIG_RAM)
    with pytest.raises(BudgetExceeded) as err:
        run_model(model, "avr", np.zeros((2, 16), np.int16), cflags=["-DSCRATCH=3000"])
    msg = str(err.value)
    assert re.search(r"static RAM \(.data \+ .bss\) is [\d,]+ bytes, [\d,]+ bytes over the RAM "
                     r"budget of 2,048 bytes", msg)
    assert "scratch 6,000 B" in msg
    assert "not within region" not in msg and "ld:" not in msg


def test_avr_linker_overflow_with_a_long_work_path(tmp_path):
    """The linker's overflow line names the ELF's full path; when that makes the line long
    the message is still recognised (it used to surface as a raw link failure)."""
    model = fake_model(tmp_path, BIG_RAM)
    work = tmp_path / ("a long directory name with spaces " * 3).strip()
    with pytest.raises(BudgetExceeded, match="over the RAM budget of 2,048 bytes"):
        run_model(model, "avr", np.zeros((2, 16), np.int16), cflags=["-DSCRATCH=3000"],
                  name="a model name (real)", work_dir=work)


def test_avr_flash_overflow_message(tmp_path):
    model, _ = flash_table_model(tmp_path, 2, 10_000)
    with pytest.raises(BudgetExceeded) as err:
        run_model(model, "avr", np.zeros((1, 16), np.int16))
    msg = str(err.value)
    assert re.search(r"flash \(.text \+ .data\) is [\d,]+ bytes, [\d,]+ bytes over the flash "
                     r"budget of 32,768 bytes", msg)
    assert "table0 20,000 B" in msg and "table1 20,000 B" in msg
    assert "overflowed" not in msg and "ld:" not in msg


def test_avr_const_table_hint(tmp_path):
    model = fake_model(tmp_path, """
static const int16_t table[1500] = {1, 2, 3};
int minun_predict(const minun_input_t *x, minun_output_t *out)
{
    for (int k = 0; k < MINUN_OUTPUT_SIZE; k++)
        out[k] = table[x[k] & 1023];
    return 0;
}
""")
    with pytest.raises(BudgetExceeded, match=r"table 3,000 B.*__flash or PROGMEM"):
        run_model(model, "avr", np.zeros((1, 16), np.int16))


def test_flash_budget_message():
    with pytest.raises(BudgetExceeded) as err:
        run_model(MODELS / "linear_int16", "cortex-m3", np.zeros((1, 16), np.int16),
                  flash_budget=1000)
    msg = str(err.value)
    assert re.search(r"flash \(.text \+ .data\) is [\d,]+ bytes, [\d,]+ bytes over the flash "
                     r"budget of 1,000 bytes", msg)
    assert "Largest in flash:" in msg
    assert "minun_harness_inputs" not in msg  # test inputs are not part of the program


def test_compile_error_message(tmp_path):
    model = fake_model(tmp_path, "int minun_predict(const minun_input_t *x, minun_output_t *o)"
                                 " { return undefined_thing + x[0]; }\n")
    with pytest.raises(CompileError) as err:
        run_model(model, "cortex-m0plus", np.zeros((1, 16), np.int16))
    msg = str(err.value)
    assert msg.startswith("error: compiling") and "model.c" in msg
    assert "undefined_thing" in msg


def test_contract_errors(tmp_path):
    x = np.zeros((2, 16), np.int16)
    with pytest.raises(ContractError, match="dtype int64"):
        run_model(MODELS / "linear_int16", "x86", x.astype(np.int64))
    with pytest.raises(ContractError, match=r"declares 16 inputs of type int16.*15 values"):
        run_model(MODELS / "linear_int16", "x86", x[:, :15])
    with pytest.raises(ContractError, match=r"type float32.*int16"):
        run_model(MODELS / "linear_float", "avr", x)
    with pytest.raises(ContractError, match="model.h and model.c"):
        run_model(tmp_path, "x86", x)


def test_simulator_timeout(tmp_path):
    model = fake_model(tmp_path, "int minun_predict(const minun_input_t *x, minun_output_t *o)"
                                 " { volatile int s = 1; while (s) {} return 0; }\n")
    with pytest.raises(SimulationTimeout, match="did not finish within 1 s"):
        run_model(model, "cortex-m3", np.zeros((1, 16), np.int16), timeout=1)


def test_fault_and_stack_overflow_are_reported(tmp_path):
    model = fake_model(tmp_path, "int minun_predict(const minun_input_t *x, minun_output_t *o)"
                                 " { if (x[0] == 0) __builtin_trap(); return 0; }\n")
    with pytest.raises(SimulationError, match=r"HardFault \(exception 3\) at pc=0x"):
        run_model(model, "cortex-m0plus", np.zeros((1, 16), np.int16))
    deep = fake_model(tmp_path / "deep", """
int minun_predict(const minun_input_t *x, minun_output_t *out)
{
    volatile int16_t buf[1000];
    for (int i = 0; i < 1000; i++)
        buf[i] = x[i % 16];
    for (int k = 0; k < MINUN_OUTPUT_SIZE; k++)
        out[k] = buf[k * 100];
    return 0;
}
""")
    with pytest.raises(SimulationError, match="overflowed its stack on avr"):
        run_model(deep, "avr", np.zeros((1, 16), np.int16))
    assert run_model(deep, "cortex-m0plus", np.zeros((1, 16), np.int16)).stack_bytes > 2000


# ---- helper cache --------------------------------------------------------------------------

def test_cache_rebuilds_on_source_change_and_tolerates_races(tmp_path, monkeypatch):
    monkeypatch.setenv("MINUN_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "helper.c"
    src.write_text("int v = 1;\n")
    builds = []

    def build(out: Path) -> None:
        builds.append(out)
        time.sleep(0.05)  # long enough for the other threads to ask meanwhile
        out.write_text(src.read_text())

    paths = []
    threads = [threading.Thread(target=lambda: paths.append(
        cache.cached_build("helper", ".txt", ["k"], [src], build))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(paths)) == 1 and paths[0].read_text() == "int v = 1;\n"
    assert len(builds) == 1  # the others waited on the lock and found it built
    assert cache.cached_build("helper", ".txt", ["k"], [src], build) == paths[0]
    n = len(builds)
    src.write_text("int v = 2;\n")
    changed = cache.cached_build("helper", ".txt", ["k"], [src], build)
    assert changed != paths[0] and changed.read_text() == "int v = 2;\n"
    assert len(builds) == n + 1
    assert not list((tmp_path / "cache").glob(".*tmp"))  # no temporary files left behind
    # compiled objects (targets/objects.py): keyed by the source and the headers it
    # includes from its folder and the -I folders, not by where they are
    from minun_mlir.targets.boards import get_board
    from minun_mlir.targets.build import compile_sources

    def compiled(folder: str, value: int) -> bytes:
        (tmp_path / folder / "inc").mkdir(parents=True)
        (tmp_path / folder / "inc" / "value.h").write_text(f"#define VALUE {value}\n")
        (tmp_path / folder / "prog.c").write_text('#include "value.h"\nint v = VALUE;\n')
        (obj,) = compile_sources(get_board("avr"), [tmp_path / folder / "prog.c"],
                                 tmp_path / folder, [tmp_path / folder / "inc"])
        return obj.read_bytes()

    assert compiled("a", 1) == compiled("b", 1) != compiled("c", 2)
    assert len(list((tmp_path / "cache").glob("obj-*prog-*.o"))) == 2


def test_the_shipped_posit_runtime_is_compiled_once_and_an_edited_one_again(tmp_path,
                                                                          monkeypatch):
    """posit.c beside a model's C is compiled once per board and flags while it and its
    posit.h are third_party/softposit's; an edited copy (either file) is compiled from
    itself, never answered from the cache."""
    from minun_mlir.formats.posit.runtime import RUNTIME_SOURCES, SOFTPOSIT_DIR
    from minun_mlir.targets.boards import get_board
    from minun_mlir.targets.build import compile_sources

    monkeypatch.setenv("MINUN_CACHE_DIR", str(tmp_path / "cache"))
    board = get_board("avr")

    def built(name: str, edit: tuple[str, str] | None = None) -> set[str]:
        folder = tmp_path / name
        folder.mkdir()
        for f in RUNTIME_SOURCES:
            shutil.copy(SOFTPOSIT_DIR / f, folder / f)
        if edit:
            with open(folder / edit[0], "a") as out:
                out.write(edit[1])
        (obj,) = compile_sources(board, [folder / "posit.c"], folder)
        nm = subprocess.run(["avr-nm", str(obj)], capture_output=True, text=True, check=True)
        return {line.split()[-1] for line in nm.stdout.splitlines()}

    shipped = built("a")
    assert "posit_p16e2_add" in shipped and built("b") == shipped
    assert len(list((tmp_path / "cache").glob("posit-avr-*.o"))) == 1
    assert "minun_probe" in built("c", ("posit.c", "\nint minun_probe(void) { return 7; }\n"))
    assert "minun_probe_h" in built("d", ("posit.h", "\nstatic inline int minun_probe_h(void)"
                                            " { return 7; }\nint (*minun_keep)(void) = "
                                            "minun_probe_h;\n"))
    assert len(list((tmp_path / "cache").glob("posit-avr-*.o"))) == 1


def test_helpers_are_built_into_the_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MINUN_CACHE_DIR", str(tmp_path))
    host = cache.simavr_host()
    plugin = cache.qemu_plugin()
    assert host.parent == tmp_path and os.access(host, os.X_OK)
    assert plugin.parent == tmp_path and plugin.suffix == ".so"


# ---- command line -------------------------------------------------------------------------

def minun_run(*args, env=None):
    """minun-run; with an environment of its own (no tools on PATH) the installed script,
    whose `#!` names the interpreter (the warm client's looks python3 up on PATH)."""
    script = Path(cli_tool("minun-run")) if env is None else Path(sys.executable).with_name(
        "minun-run")
    cmd = [str(script)]
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True, env=env)


def test_cli_runs_and_writes_json(tmp_path, linear_inputs):
    x, scores = linear_inputs
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", scores.argmax(axis=1))
    out = tmp_path / "out.json"
    p = minun_run(MODELS / "linear_int16", "--target", "avr,cortex-m3", "--inputs",
                  tmp_path / "x.npy", "--labels", tmp_path / "y.npy", "--json", out,
                  "--config", "q16", "--min-accuracy", "1.0")
    assert p.returncode == 0, p.stderr
    assert "24/24 match" in p.stdout and "cycles" in p.stdout and "instructions" in p.stdout
    records = json.loads(out.read_text())
    assert [r["target"] for r in records] == ["avr", "cortex-m3"]
    for r in records:
        assert r["model"] == "linear_int16" and r["config"] == "q16"
        assert r["labels"] == scores.argmax(axis=1).tolist() and r["accuracy"] == 1.0
        assert r["outputs"] == scores.tolist()
        assert r["flash_bytes"] > 0 and r["ram_bytes"] > 0 and r["stack_bytes"] > 0
        assert r["latency"]["exact"] and len(r["latency"]["per_input"]) == len(x)
        assert r["build_seconds"] > 0
    assert records[0]["latency"]["unit"] == "cycles"
    assert records[1]["latency"]["unit"] == "instructions"


def test_cli_errors_are_one_paragraph(tmp_path, linear_inputs):
    x, scores = linear_inputs
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "wrong.npy", (scores.argmax(axis=1) + 1) % 4)
    p = minun_run(MODELS / "linear_int16", "--target", "avr", "--inputs", tmp_path / "x.npy",
                  "--flash-budget", "1K")
    assert p.returncode == 1
    assert p.stderr.startswith("error: linear_int16 does not fit avr")
    assert "Traceback" not in p.stderr
    p = minun_run(MODELS / "linear_int16", "--target", "x86", "--inputs", tmp_path / "x.npy",
                  "--labels", tmp_path / "wrong.npy", "--min-accuracy", "1.0")
    assert p.returncode == 1 and "0/24 match" in p.stdout and "below --min-accuracy" in p.stderr
    p = minun_run(MODELS / "linear_int16", "--target", "pdp11", "--inputs", tmp_path / "x.npy")
    assert p.returncode == 2 and "unknown target 'pdp11'" in p.stderr
    p = minun_run(MODELS / "linear_int16", "--target", "x86", "--inputs", tmp_path / "no.npy")
    assert p.returncode == 1 and p.stderr.startswith("error: cannot read inputs file")
    no_tools = dict(os.environ, PATH=str(tmp_path))
    p = minun_run(MODELS / "linear_int16", "--target", "avr", "--inputs", tmp_path / "x.npy",
                  env=no_tools)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.startswith("error: 'avr-gcc' was not found on PATH")
    assert "apt-get install" in p.stderr and "gcc-avr" in p.stderr
