"""`minun-compile --format arduino|cmake` (minun_mlir/deploy.py): the packages build with
the real tools and compute the bit-exact evaluator's labels.

- arduino: the .zip, unpacked as "Add .ZIP Library" does, builds its example sketch with
  Debian's arduino-builder and Arduino AVR core for the Uno; the .elf runs in simavr and
  prints (on Serial, UART0) the label the evaluator gives the stored test input.
- arduino on a Cortex-M target: no Arduino ARM core is packaged in Debian, so the same
  library layout (src/ and the example's stored input) is built with arm-none-eabi-gcc
  for the M4 and run in QEMU.
- cmake: a small application add_subdirectory()s the package, is configured and built
  with cmake and an arm-none-eabi toolchain file, linked as the Cortex-M harness links
  (cortexm.ld, target_cortexm.c), and runs in QEMU; the model is built with the M4's DSP
  flags.
"""

from __future__ import annotations

import re
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

from minun_mlir.data import first
from minun_mlir.driver import Options, compile_model
from minun_mlir.numerics.l2_eval import storage_inputs
from minun_mlir.targets.boards import get_board
from minun_mlir.targets.build import _region_flags, compile_sources, link_program
from minun_mlir.targets.cache import SOURCE_DIR, support_library
from minun_mlir.targets.harness import harness_source, parse_model_header, parse_results
from minun_mlir.targets.simulate import simulate
from minun_mlir.targets.toolchain import require_tool
from minun_mlir.tools.minun_compile import main

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "benchmarks/models/protonn-digits10"
DATA = ["--train", str(MODEL / "train.npy"), "--test", str(MODEL / "test.npy")]
LIB = "minun_protonn_digits10"
SKETCH = "protonn_digits10"
# Debian 12's Arduino AVR core (1.8.7) with its avr-gcc 5.4: WString.cpp needs
# DECIMAL_DIG, which that compiler's float.h defines for C only (docs/deploy.md).
ARDUINO_BUILDER = ["arduino-builder", "-hardware", "/usr/share/arduino/hardware",
                   "-hardware", "/usr/share/arduino-builder", "-tools",
                   "/usr/share/arduino-builder", "-fqbn", "arduino:avr:uno",
                   "-prefs=compiler.cpp.extra_flags=-DDECIMAL_DIG=__DECIMAL_DIG__"]


def evaluator_labels(target: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The bit-exact evaluator's labels of the first n test inputs, and those inputs as
    the C takes them: a compile of its own, without the package."""
    result = compile_model(MODEL / "model.sd", Options(target=target),
                           train=MODEL / "train.npy", test=MODEL / "test.npy")
    return result.predictions[:n], storage_inputs(result.l2, first(result.test.features, n))


def printed(text: str, key: str) -> int:
    found = re.findall(rf"^{key} (-?\d+)\s*$", text, re.M)
    assert len(found) == 1, f"no single '{key} N' line in the output:\n{text}"
    return int(found[0])


def test_arduino_library_example_builds_for_the_uno_and_prints_the_evaluators_label(
        tmp_path):
    out = tmp_path / "protonn-arduino"
    assert main([str(MODEL / "model.sd"), *DATA, "--target", "avr", "--format", "arduino",
                 "--out", str(out)]) == 0
    zipped = out / f"{LIB}.zip"
    with zipfile.ZipFile(zipped) as z:
        names = sorted(z.namelist())
        z.extractall(tmp_path / "libraries")
    installed = tmp_path / "libraries" / LIB
    # the zip holds the folder's library: the same files, the same bytes
    for name in names:
        assert (out / name.removeprefix(f"{LIB}/")).read_bytes() == \
            (tmp_path / "libraries" / name).read_bytes()
    assert f"{LIB}/src/model.c" in names and f"{LIB}/library.properties" in names
    assert f"name={LIB}\n" in (installed / "library.properties").read_text()

    require_tool("arduino-builder", "arduino-builder arduino-core-avr", "--format arduino")
    build = tmp_path / "build"
    build.mkdir()
    sketch = installed / "examples" / SKETCH / f"{SKETCH}.ino"
    proc = subprocess.run([*ARDUINO_BUILDER, "-libraries", str(tmp_path / "libraries"),
                           "-build-path", str(build), str(sketch)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = simulate(get_board("avr"), build / f"{SKETCH}.ino.elf", SKETCH, timeout=60)
    labels, _ = evaluator_labels("avr", 1)
    assert printed(run.text, "label") == labels[0]
    assert printed(run.text, "expected") == labels[0]
    # micros() on the simulated 16 MHz Uno: the prediction takes milliseconds
    assert 1_000 < printed(run.text, "time_us") < 100_000


def run_layout(out: Path, target: str, tmp_path: Path) -> int:
    """The library's src/ and its example's stored input, built with arm-none-eabi-gcc as
    the Cortex-M harness builds and links programs, run in QEMU: the label printed."""
    main_c = tmp_path / "main.c"
    main_c.write_text('#include "minun_target.h"\n#include "model.h"\n#include "test_input.h"\n'
                      "static minun_input_t x[MINUN_INPUT_SIZE];\n"
                      "static minun_output_t y[MINUN_OUTPUT_SIZE];\n"
                      "int main(void)\n{\n"
                      "    memcpy(x, minun_test_input, sizeof x);\n"
                      '    minun_puts("label ");\n    minun_print_i32(minun_predict(x, y));\n'
                      "    minun_putc('\\n');\n    minun_flush();\n    return 0;\n}\n")
    board = get_board(target)
    objects = compile_sources(board, [main_c, out / "src" / "model.c"], tmp_path,
                              include_dirs=[out / "src", out / "examples" / SKETCH])
    program = link_program(board, objects, tmp_path / "app.elf", "app")
    return printed(simulate(board, program.elf, "app").text, "label")


def test_arduino_layout_for_a_cortex_m4_runs_in_qemu(tmp_path):
    out = tmp_path / "pkg"
    assert main([str(MODEL / "model.sd"), *DATA, "--target", "cortex-m4", "--format",
                 "arduino", "--out", str(out)]) == 0
    assert "architectures=*\n" in (out / "library.properties").read_text()
    labels, _ = evaluator_labels("cortex-m4", 1)
    assert run_layout(out, "cortex-m4", tmp_path) == labels[0]


def test_without_test_data_the_example_runs_the_zero_input_then_a_failed_compile_removes_it(
        tmp_path, capsys):
    out = tmp_path / "pkg"
    argv = [str(MODEL / "model.sd"), "--train", str(MODEL / "train.npy"), "--target",
            "cortex-m3", "--format", "arduino", "--out", str(out)]
    assert main(argv) == 0
    stored = (out / "examples" / SKETCH / "test_input.h").read_text()
    assert "the input 0.0 everywhere" in stored
    expected = int(re.search(r"#define MINUN_TEST_LABEL (-?\d+)", stored).group(1))
    assert run_layout(out, "cortex-m3", tmp_path) == expected  # the C == the evaluator
    assert main([*argv, "--ram-budget", "8"]) != 0  # the buffers need more
    assert "removed the earlier compile's" in capsys.readouterr().err
    left = sorted(p.name for p in out.rglob("*") if p.is_file())
    assert left == [], left


TOOLCHAIN = """\
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
"""

APP = """\
cmake_minimum_required(VERSION 3.13)
project(app C)
add_subdirectory(${MODEL_DIR} model)
add_executable(app.elf main.c)
target_include_directories(app.elf PRIVATE ${SUPPORT_DIR})
target_link_libraries(app.elf PRIVATE minun_model)
target_link_options(app.elf PRIVATE ${APP_LDFLAGS})
"""


def test_cmake_package_builds_for_the_m4_and_runs_in_qemu(tmp_path):
    out = tmp_path / "protonn-cmake"
    assert main([str(MODEL / "model.sd"), *DATA, "--target", "cortex-m4", "--format", "cmake",
                 "--out", str(out)]) == 0
    n = 3
    labels, inputs = evaluator_labels("cortex-m4", n)
    app = tmp_path / "app"
    app.mkdir()
    (app / "CMakeLists.txt").write_text(APP)
    (app / "main.c").write_text(harness_source(inputs))
    (tmp_path / "arm.cmake").write_text(TOOLCHAIN)
    board = get_board("cortex-m4")
    # linked as the harness links: its ld flags, cortexm.ld's regions, the support library
    ldflags = [*board.ldflags, *_region_flags(board, relaxed=False), "-Wl,--whole-archive",
               str(support_library(board)), "-Wl,--no-whole-archive"]
    require_tool("cmake", "cmake", "--format cmake")
    build = tmp_path / "build"
    configure = subprocess.run(
        ["cmake", "-S", str(app), "-B", str(build), f"-DMODEL_DIR={out}",
         f"-DSUPPORT_DIR={SOURCE_DIR}", f"-DAPP_LDFLAGS={';'.join(ldflags)}",
         f"-DCMAKE_TOOLCHAIN_FILE={tmp_path / 'arm.cmake'}", "-DCMAKE_BUILD_TYPE=MinSizeRel"],
        capture_output=True, text=True)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    made = subprocess.run(["cmake", "--build", str(build), "--", "VERBOSE=1"],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stdout + made.stderr
    # the model compiled with the board profile's M4 flags: its DSP kernels are in
    model_cc = [ln for ln in made.stdout.splitlines() if "model.c.o" in ln and " -c " in ln]
    assert model_cc and all(f in model_cc[0] for f in board.cflags if f.startswith("-m"))
    disassembly = subprocess.run(["arm-none-eabi-objdump", "-d", str(build / "app.elf")],
                                 capture_output=True, text=True, check=True).stdout
    assert "smlad" in disassembly
    run = simulate(board, build / "app.elf", "app")
    out_dtype = parse_model_header(run.meta, inputs)
    got, _ = parse_results(run.text, n, out_dtype)
    assert list(got) == list(labels)


@pytest.mark.parametrize("argv, message", [
    (["--target", "x86", "--format", "arduino", "--out", "{tmp}/a"],
     "--format arduino is for the Arduino boards' targets"),
    (["--target", "cortex-m4-mps2", "--format", "arduino", "--out", "{tmp}/a"],
     "not --target cortex-m4-mps2"),
    # with --run and no --out the C goes to a temporary folder: no package to fill
    (["--target", "avr", "--format", "cmake", "--run"], "--format cmake needs --out DIR"),
])
def test_format_refusals_are_one_line(tmp_path, capsys, argv, message):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main([str(MODEL / "model.sd"), *DATA, *argv]) != 0
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_users_file_in_the_library_is_refused_before_any_work(tmp_path, capsys):
    out = tmp_path / "lib"
    (out / "examples" / SKETCH).mkdir(parents=True)
    mine = out / "examples" / SKETCH / f"{SKETCH}.ino"
    mine.write_text("// my sketch\n")
    assert main([str(MODEL / "model.sd"), *DATA, "--target", "avr", "--format", "arduino",
                 "--out", str(out)]) != 0
    assert "was not written by minun-mlir" in capsys.readouterr().err
    assert mine.read_text() == "// my sketch\n"
    assert not (out / "src" / "model.c").exists()

