"""`minun-compile --format`: the generated C packaged for the build system it goes into.

The plain folder (`c`: model.h, model.c, minun_runtime.h) leaves the wiring to the user;
people build with the Arduino IDE/CLI or with CMake-based SDKs (Zephyr, Pico SDK), so:
- `arduino`: an Arduino library (library.properties, src/ with the C, an example sketch
  that runs one stored input and prints its label and time) and the same as a .zip for
  "Add .ZIP Library", written inside the folder (the one place whose files the manifest
  guards; a file beside it could be the user's).
- `cmake`: the C folder with a CMakeLists.txt exporting the `minun_model` library, with
  the target's CPU flags taken from the board profile (targets/boards.py, the flags the
  harness measures with).
Every file goes through outputs.py (manifests; no user file replaced). docs/deploy.md.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import numpy as np

from minun_mlir import __version__
from minun_mlir.outputs import write_files

FORMATS = ("c", "arduino", "cmake")
# Arduino boards of the targets (boards.py's descriptions): the Uno, MKR1000, Due, Nano 33
# BLE class. cortex-m4-mps2 is no real part and x86 no Arduino.
ARDUINO_TARGETS = ("avr", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m4f")
CMAKE_FILE = "CMakeLists.txt"
PROPERTIES = "library.properties"
TEST_INPUT = "test_input.h"
# A zip's entries all get this time stamp, so that the same library zips to the same bytes.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def check(fmt: str, target: str, out: str | None) -> str | None:
    """Why --format cannot be used so (a one-line reason), or None."""
    if fmt == "c":
        return None
    if out is None:
        return f"--format {fmt} needs --out DIR (the folder it fills)"
    if fmt == "arduino" and target not in ARDUINO_TARGETS:
        return (f"--format arduino is for the Arduino boards' targets ({', '.join(ARDUINO_TARGETS)}"
                f"), not --target {target}")
    return None


def sketch_name(model: str | Path) -> str:
    """The model's name as a C identifier: the file's stem, or its folder's name for a
    `model.sd`/`model.onnx` (benchmarks/models/protonn-digits10/model.sd: protonn_digits10)."""
    path = Path(model)
    stem = path.parent.name if path.stem == "model" and path.parent.name else path.stem
    ident = re.sub(r"[^A-Za-z0-9_]", "_", stem) or "model"
    return ident if not ident[0].isdigit() else f"m_{ident}"


def library_name(model: str | Path) -> str:
    return f"minun_{sketch_name(model)}"


def c_folder(fmt: str, out: str | Path) -> Path:
    """Where the generated C goes: src/ of an Arduino library, else the folder itself."""
    return Path(out) / "src" if fmt == "arduino" else Path(out)


def planned(fmt: str, model: str | Path, out: str | Path, generated: tuple[str, ...]
            ) -> list[tuple[Path, tuple[str, ...]]]:
    """Each folder a package writes and the files it writes there (checked before any
    work by compile_options.check_outputs)."""
    if fmt == "cmake":
        return [(Path(out), (*generated, CMAKE_FILE))]
    if fmt == "arduino":
        lib, name = library_name(model), sketch_name(model)
        return [(Path(out), (PROPERTIES, f"{lib}.zip")),
                (Path(out) / "src", (*generated, f"{lib}.h")),
                (Path(out) / "examples" / name, (f"{name}.ino", TEST_INPUT))]
    return []


def remove_package(fmt: str, model: str | Path, out: str | Path) -> list[str]:
    """After a failed compile: remove the package files an earlier compile wrote (and
    nobody changed since); returns their names."""
    from minun_mlir.outputs import remove_written

    removed = []
    for folder, names in planned(fmt, model, out, ()):
        removed += remove_written(folder, names)
    return removed


def c_files(folder: Path) -> list[str]:
    """The C files of the compile in `folder`: model.h, model.c, minun_runtime.h, and the
    posit runtime when the model includes it (a stale one from an earlier compile is not)."""
    from minun_mlir.lowering.c_printer import FILES, RUNTIME_SOURCES

    uses_posits = any('"posit.h"' in (folder / f).read_text() for f in FILES)
    return [*FILES, *(RUNTIME_SOURCES if uses_posits else ())]


def write_package(fmt: str, out: str | Path, model: str | Path, result) -> list[str]:
    """Write the package's own files around the C already in `c_folder(fmt, out)`;
    returns the paths written."""
    if fmt == "cmake":
        write_files({CMAKE_FILE: cmake_lists(model, result)}, out)
        return [str(Path(out) / CMAKE_FILE)]
    return write_arduino(Path(out), model, result)


# ---- CMake ----------------------------------------------------------------------------

def cmake_flags(target: str) -> tuple[list[str], list[str]]:
    """The board profile's C flags split into the CPU/ABI ones (-m...: the application
    must be compiled and linked with the same, so they are exported) and the optimisation
    ones the model was measured with (its own). -std is set as C_STANDARD; simulator
    workarounds and defines are left out."""
    from minun_mlir.targets.boards import get_board

    cflags = get_board(target).cflags
    arch = [f for f in cflags if f.startswith("-m")]
    own = [f for f in cflags if f.startswith("-O") or f in ("-ffunction-sections",
                                                             "-fdata-sections")]
    return arch, own


def cmake_lists(model: str | Path, result) -> str:
    target = result.options.target
    arch, own = cmake_flags(target)
    sources = " ".join(n for n in c_files(result.c_dir) if n.endswith(".c"))
    return f"""\
# minun_model: the model {sketch_name(model)} [{result.options.label}] generated by minun-mlir for
# --target {target}. Use it with add_subdirectory(this-folder) and
# target_link_libraries(app PRIVATE minun_model); docs/deploy.md.
# MINUN_MODEL_ARCH_FLAGS: the CPU flags of {target}, exported to whatever links the model
# (empty under Zephyr and the Pico SDK, which set their own); MINUN_MODEL_OPT_FLAGS: the
# model's own optimisation flags (those it was measured with).
cmake_minimum_required(VERSION 3.13)
project(minun_model C)

if(TARGET zephyr_interface OR DEFINED PICO_SDK_PATH)
  set(_minun_arch "")
else()
  set(_minun_arch "{';'.join(arch)}")
endif()
set(MINUN_MODEL_ARCH_FLAGS "${{_minun_arch}}" CACHE STRING "CPU flags of the model's target")
set(MINUN_MODEL_OPT_FLAGS "{';'.join(own)}" CACHE STRING
    "optimisation flags of the model")

add_library(minun_model STATIC {sources})
target_include_directories(minun_model PUBLIC ${{CMAKE_CURRENT_SOURCE_DIR}})
set_target_properties(minun_model PROPERTIES C_STANDARD 99 C_EXTENSIONS ON)
target_compile_options(minun_model PUBLIC ${{MINUN_MODEL_ARCH_FLAGS}}
                       PRIVATE ${{MINUN_MODEL_OPT_FLAGS}})
target_link_options(minun_model PUBLIC ${{MINUN_MODEL_ARCH_FLAGS}})
if(TARGET zephyr_interface)
  target_link_libraries(minun_model PRIVATE zephyr_interface)
else()
  target_link_libraries(minun_model PUBLIC m)
endif()
"""


# ---- Arduino --------------------------------------------------------------------------

SKETCH = """\
/* {name}.ino: runs the minun-mlir model {name} on one stored input ({input_h}) and prints
 * the label it computes, the label the compiler's bit-exact evaluator gave the same input
 * ("expected"), and the time of the prediction in microseconds. Generated by minun-mlir
 * (docs/deploy.md). On AVR the board then sleeps: press reset to run it again. */
#include <Arduino.h>
#include <string.h>
#include <{lib}.h>
#ifdef __AVR__
#include <avr/sleep.h>
#else
#define memcpy_P memcpy
#endif
#include "{input_h}"

#ifdef MINUN_INPUT_IN_SCRATCH /* the input lives in the model's own scratch memory */
#define MINUN_X minun_input_buffer()
#else
static minun_input_t x[MINUN_INPUT_SIZE];
#define MINUN_X x
#endif
static minun_output_t scores[MINUN_OUTPUT_SIZE];

void setup()
{{
    Serial.begin(115200);
    while (!Serial) {{
    }}
    memcpy_P(MINUN_X, minun_test_input, sizeof(minun_input_t) * MINUN_INPUT_SIZE);
    unsigned long t0 = micros();
#ifdef MINUN_INPUT_IN_SCRATCH
    int label = minun_predict_in_place(scores);
#else
    int label = minun_predict(x, scores);
#endif
    unsigned long t1 = micros();
    Serial.print("label ");
    Serial.println(label);
    Serial.print("expected ");
    Serial.println(MINUN_TEST_LABEL);
    Serial.print("time_us ");
    Serial.println(t1 - t0);
    Serial.flush();
#ifdef __AVR__
    set_sleep_mode(SLEEP_MODE_PWR_DOWN);
    sleep_enable();
    cli();
    sleep_cpu();
#endif
}}

void loop()
{{
}}
"""


IN_PLACE_CALL = """#ifdef MINUN_INPUT_IN_SCRATCH
    int label = minun_predict_in_place(scores);
#else
    int label = minun_predict(x, scores);
#endif
"""


def stored_input(result) -> tuple[np.ndarray, int, str]:
    """The example's input as the C takes it (raw minun_input_t values), the evaluator's
    label for it, and where it comes from: the first --test example, else the real input
    0 everywhere (deterministic; documented in docs/deploy.md)."""
    from minun_mlir.data import first, predictions
    from minun_mlir.driver import _input_shape
    from minun_mlir.modules import decision_threshold
    from minun_mlir.native import evaluate_outputs
    from minun_mlir.numerics.l2_eval import decode_outputs, storage_inputs

    if result.test is not None:
        features = first(result.test.features, 1)
        origin = f"test example 0 of {result.test.name}"
    else:
        shape = _input_shape(result.l1)
        features = ({k: np.zeros((1, *s), np.float32) for k, s in shape.items()}
                    if isinstance(shape, dict) else np.zeros((1, *shape), np.float32))
        origin = "the input 0.0 everywhere (no --test data given)"
    stored = evaluate_outputs(result.l2, features, result.options.evaluator)
    label = predictions(decode_outputs(result.l2, stored)[0], decision_threshold(result.l1))
    return storage_inputs(result.l2, features)[0], int(np.asarray(label).reshape(-1)[0]), origin


def input_header(values: np.ndarray, label: int, origin: str) -> str:
    floats = values.dtype.kind == "f"
    vals = [repr(float(v)) + "f" if floats else str(int(v)) for v in values]
    rows = ",\n".join("    " + ", ".join(vals[i:i + 12]) for i in range(0, len(vals), 12))
    return ("/* The example's stored input, as the raw minun_input_t values minun_predict\n"
            f" * takes: {origin}.\n"
            " * MINUN_TEST_LABEL is the label the compiler's bit-exact evaluator gives it.\n"
            " * Generated by minun-mlir. */\n"
            "#ifndef PROGMEM\n#define PROGMEM\n#endif\n"
            f"#define MINUN_TEST_LABEL {label}\n"
            "static const minun_input_t minun_test_input[MINUN_INPUT_SIZE] PROGMEM = {\n"
            f"{rows}\n}};\n")


def properties(lib: str, model: str | Path, result) -> str:
    target = result.options.target
    arch = "avr" if target == "avr" else "*"
    return (f"name={lib}\nversion={__version__}\nauthor=minun-mlir\nmaintainer=minun-mlir\n"
            f"sentence=The model {sketch_name(model)} [{result.options.label}] compiled to C by "
            f"minun-mlir for --target {target}.\n"
            "paragraph=Call minun_predict(x, scores) (model.h); the example prints the label "
            "of one stored input and the time it took.\n"
            f"category=Data Processing\narchitectures={arch}\n"
            f"includes={lib}.h\n")


def write_arduino(out: Path, model: str | Path, result) -> list[str]:
    lib, name = library_name(model), sketch_name(model)
    values, label, origin = stored_input(result)
    header = (f"/* {lib}.h: the model's C interface for Arduino (model.h). Generated by "
              "minun-mlir. */\n"
              f"#ifndef {lib.upper()}_H\n#define {lib.upper()}_H\n#include \"model.h\"\n"
              "#endif\n")
    src = c_folder("arduino", out)
    write_files({f"{lib}.h": header}, src)
    sketch = SKETCH.format(name=name, lib=lib, input_h=TEST_INPUT)
    if result.options.output_in_scratch:  # minun_predict copies the scores out of the model
        sketch = sketch.replace(IN_PLACE_CALL, "    int label = minun_predict(MINUN_X, scores);\n")
    example = {f"{name}.ino": sketch,
               TEST_INPUT: input_header(values, label, origin)}
    write_files(example, out / "examples" / name)
    props = properties(lib, model, result)
    members = {PROPERTIES: props.encode()}
    for fname in sorted((*c_files(src), f"{lib}.h")):
        members[f"src/{fname}"] = (src / fname).read_bytes()
    for fname, text in sorted(example.items()):
        members[f"examples/{name}/{fname}"] = text.encode()
    write_files({PROPERTIES: props, f"{lib}.zip": zip_bytes(lib, members)}, out)
    return [str(out / PROPERTIES), str(out / f"{lib}.zip"), str(src / f"{lib}.h"),
            str(out / "examples" / name / f"{name}.ino")]


def zip_bytes(top: str, members: dict[str, bytes]) -> bytes:
    """A zip of `members` under the folder `top/` (what "Add .ZIP Library" expects),
    byte-identical for the same members."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in sorted(members.items()):
            info = zipfile.ZipInfo(f"{top}/{name}", ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
    return buffer.getvalue()
