"""Code generation driver: L2 module -> C files (and an Arduino sketch).

    from minun_mlir.codegen import emit_c, export_sketch
    files = emit_c(l2_module, target="avr", out_dir="build/model")  # model.h/.c, runtime
    export_sketch(l2_module, "build", name="protonn", inputs=x_int16, labels=y)

The L2 module goes through the declared pipeline's last stages (minun_mlir/pipeline.py:
lower-to-loops, memory-plan, lower-to-emitc; in memory, no re-parsing), then the C
printer. See docs/codegen.md.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType

from minun_mlir.diagnostics import error
from minun_mlir.dialects import cemit
from minun_mlir.lowering.c_printer import print_c
from minun_mlir.lowering.c_runtime import PROFILE_OF_TARGET
from minun_mlir.modules import walk_ops
from minun_mlir.outputs import write_files
from minun_mlir.pipeline import lower_l2, run_pipeline


def profile_for(target: str) -> str:
    if target not in PROFILE_OF_TARGET:
        raise error(f"unknown target '{target}' (known: "
                         f"{', '.join(PROFILE_OF_TARGET)})")
    return PROFILE_OF_TARGET[target]


def requantize_tables(target: str) -> bool:
    """Whether lower-to-loops turns frequent zero-skew requantizations into tables for
    `target`: only where a 32x32-bit product is slow (the AVR profile, the Uno)."""
    return profile_for(target) == "avr"


class CFiles(dict):
    """{file name: C text}; when written to a directory it is also path-like (that
    directory), so `Path(emit_c(l2, "avr", out))` is the model directory."""

    def __init__(self, files: dict[str, str], directory: Path | None = None):
        super().__init__(files)
        self.directory = directory

    def __fspath__(self) -> str:
        if self.directory is None:
            raise TypeError("these C files were not written to a directory")
        return str(self.directory)


def emit_c(module: ModuleOp, target: str = "x86", out_dir: str | Path | None = None, *,
           planner: str = "greedy", budget: int = 0, name: str = "model",
           input_in_scratch: bool = False, output_in_scratch: bool = False,
           stream_rows: bool = False) -> CFiles:
    """The C files of an L2 model ({"model.h", "model.c", "minun_runtime.h"} -> text),
    written to out_dir when given. `target` is a profile (x86, avr, cortex-m) or a harness
    target name; `budget` (bytes) makes the planner fail with a diagnostic when RAM is short;
    `input_in_scratch` / `output_in_scratch` plan the input / output in the scratch
    (memory-plan's options); `stream_rows` runs the stream-rows pass first (lower-to-loops'
    option)."""
    check_tensor_sizes(module, target)
    plan: dict[str, object] = {"planner": planner, "budget": budget}
    if input_in_scratch:
        plan["input_in_scratch"] = True
    if output_in_scratch:
        plan["output_in_scratch"] = True
    l4 = select_kernels(lower_l2(module, requantize_tables=requantize_tables(target),
                                 stream_rows=stream_rows, **plan),
                        target, copy=False)  # ours: no copy
    return write_c(l4, target, out_dir, name)


# The largest value of C's `int` per profile: loop counters and indices are ints.
INT_MAX = {"x86": 2**31 - 1, "avr": 2**15 - 1, "cortex-m": 2**31 - 1}


def memory_estimate(l4: ModuleOp) -> tuple[int, int]:
    """(flash, RAM) bytes the model's arrays take: constant arrays in flash, the scratch
    buffer and other arrays in RAM (the linker adds code, the harness its buffers)."""
    flash = ram = 0
    for op in walk_ops(l4):
        if isinstance(op, cemit.GlobalOp):
            size = op.size.data * element_bytes(op.elem)
            if op.is_const is not None:
                flash += size
            else:
                ram += size
        elif isinstance(op, cemit.ScratchOp):
            ram += op.size.data
    return flash, ram


def element_bytes(elem) -> int:
    width = getattr(elem, "width", None)
    return (width.data + 7) // 8 if width is not None else 4


def check_index_range(l4: ModuleOp, target: str) -> None:
    """Every array's elements (and the scratch's bytes) countable in the target's `int`:
    larger arrays would overflow the generated loop counters and index arithmetic."""
    limit = INT_MAX[profile_for(target)]
    for op in walk_ops(l4):
        if isinstance(op, (cemit.GlobalOp, cemit.ScratchOp)) and op.size.data > limit:
            what = "bytes" if isinstance(op, cemit.ScratchOp) else "elements"
            raise error(f"array '{op.sym_name.data}' has {op.size.data:,} {what}, more than "
                        f"{target}'s int can index ({limit:,}); the model is too large for "
                        "this target")


def check_tensor_sizes(l2: ModuleOp, target: str) -> None:
    """Every L2 tensor (inputs and outputs included) countable in the target's `int`:
    its loops and indices are ints in the generated C."""
    limit = INT_MAX[profile_for(target)]
    for op in walk_ops(l2):
        for value in op.results:
            if isinstance(value.type, TensorType):
                n = math.prod(value.type.get_shape())
                if n > limit:
                    name = value.name_hint or op.name
                    raise error(f"tensor '{name}' has {n:,} elements, more than {target}'s "
                                f"int can index ({limit:,}); the model is too large for this "
                                "target", at=op)


def check_fits_board(l4: ModuleOp, target: str, bits: int | None = None) -> None:
    """Before a build: the arrays alone must fit the board's flash and RAM. The advice
    names fewer bits only when the program (at `bits`; None: unknown) has fewer to give."""
    from minun_mlir.targets.boards import BOARDS

    board = BOARDS.get(target)
    if board is None:
        return
    flash, ram = memory_estimate(l4)
    for what, need, have in (("flash", flash, board.flash_bytes),
                             ("RAM", ram, board.ram_bytes)):
        if have is not None and need > have:
            raise error(f"the model's arrays need {need:,} bytes of {what}, more than "
                        f"{board.name} has ({have:,} bytes): "
                        + ("use fewer bits (--bits 8) or a larger board"
                           if bits is None or bits > 8 else
                           "use a smaller model or a larger board"))


def write_c(l4: ModuleOp, target: str = "x86", out_dir: str | Path | None = None,
            name: str = "model", extra: dict[str, str | bytes] | None = None) -> CFiles:
    """The C files of an L4 module (the pipeline's output), written to out_dir when given
    (all together with the `extra` files, e.g. the memory map, see `write_files`)."""
    check_index_range(l4, target)
    files = CFiles(print_c(select_kernels(l4, target), profile_for(target), name))
    if out_dir is not None:
        write_files({**files, **(extra or {})}, out_dir)
        files.directory = Path(out_dir)
    return files


def select_kernels(l4: ModuleOp, target: str, copy: bool = True) -> ModuleOp:
    """`l4` after select-target-kernels for `target` (its target kernels as IR, what the C
    printer spells): a copy (`copy=False`: `l4` itself, rewritten), or `l4` itself when
    its kernels were selected already."""
    from minun_mlir.passes.select_target_kernels import SelectTargetKernels

    if cemit.KERNELS_MARK in l4.attributes:
        return l4
    out = l4.clone() if copy else l4
    run_pipeline(out, (SelectTargetKernels(target=profile_for(target)),))
    return out


SKETCH = """\
/* {name}.ino: runs the minun-mlir model on {n} embedded test inputs and prints the
 * label and the time of each prediction. Generated by minun-mlir; build it with the
 * Arduino IDE or arduino-cli for the Uno (the .c files beside it are compiled too). */
#include <Arduino.h>
#include <string.h>
#include <avr/pgmspace.h>

#include "model.h"
#include "sketch_inputs.h"

static minun_input_t x[MINUN_INPUT_SIZE];
static minun_output_t scores[MINUN_OUTPUT_SIZE];

void setup()
{{
    int correct = 0;
    Serial.begin(115200);
    Serial.println("{name}: label expected microseconds");
    for (int n = 0; n < SKETCH_N; n++) {{
        memcpy_P(x, sketch_inputs[n], sizeof x);
        unsigned long t0 = micros();
        int label = minun_predict(x, scores);
        unsigned long t1 = micros();
        int expected = (int)pgm_read_word(&sketch_labels[n]);
        correct += label == expected;
        Serial.print(label);
        Serial.print(' ');
        Serial.print(expected);
        Serial.print(' ');
        Serial.println(t1 - t0);
    }}
    Serial.print("correct ");
    Serial.print(correct);
    Serial.print('/');
    Serial.println(SKETCH_N);
}}

void loop()
{{
}}
"""


def export_sketch(module: ModuleOp, out_dir: str | Path, name: str, inputs: np.ndarray,
                  labels: np.ndarray | None = None, *, planner: str = "greedy") -> Path:
    """An Arduino sketch folder `out_dir/name/` with `name.ino`, the generated C for the
    Uno (avr profile) and `sketch_inputs.h` holding `inputs` (raw minun_input_t values,
    shape (N, MINUN_INPUT_SIZE)) in program memory. Returns the folder."""
    if not name.isidentifier():
        raise error(f"sketch name '{name}' must be a C identifier")
    folder = Path(out_dir) / name
    files = emit_c(module, "avr", folder, planner=planner, name=name)
    inputs = np.asarray(inputs)
    if inputs.ndim == 1:
        inputs = inputs[None]
    labels = np.full(len(inputs), -1) if labels is None else np.asarray(labels).reshape(-1)
    ctype = "float" if inputs.dtype.kind == "f" else f"int{inputs.dtype.itemsize * 8}_t"
    if f"typedef {ctype} minun_input_t;" not in files["model.h"]:
        raise error(f"the sketch inputs are {ctype} but model.h declares another "
                         "minun_input_t")
    rows = []
    for row in inputs:
        vals = [repr(float(v)) + "f" if ctype == "float" else str(int(v)) for v in row]
        rows.append("    {" + ", ".join(vals) + "},")
    header = (f"/* Test inputs of the {name} sketch (raw minun_input_t values). */\n"
              f"#define SKETCH_N {len(inputs)}\n"
              f"static const minun_input_t sketch_inputs[SKETCH_N][MINUN_INPUT_SIZE] PROGMEM = "
              "{\n" + "\n".join(rows) + "\n};\n"
              "static const int16_t sketch_labels[SKETCH_N] PROGMEM = {"
              + ", ".join(str(int(v)) for v in labels) + "};\n")
    write_files({"sketch_inputs.h": header,
                 f"{name}.ino": SKETCH.format(name=name, n=len(inputs))}, folder)
    return folder
