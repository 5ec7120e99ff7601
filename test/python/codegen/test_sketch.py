"""The Arduino sketch export builds for the Uno: the .ino compiles as C++ with avr-g++
against a small stub of Arduino's API (Serial, micros; the real Arduino core is not
installed here), links with the generated C into a program that fits the Uno, and, run
in simavr, prints one line per embedded test input and the number predicted right."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from codegen_support import expected_for, quantized

from minun_mlir.codegen import export_sketch
from minun_mlir.outputs import MANIFEST
from minun_mlir.targets import build_and_run

ARDUINO_H = """\
/* A stub of the parts of Arduino.h the generated sketch uses. */
#ifndef ARDUINO_H
#define ARDUINO_H
#include <stdint.h>
#include <stddef.h>
#include <avr/pgmspace.h>

class HardwareSerial {
public:
    void begin(unsigned long baud);
    size_t print(const char *s);
    size_t print(char c);
    size_t print(int v);
    size_t print(unsigned long v);
    size_t println(const char *s);
    size_t println(int v);
    size_t println(unsigned long v);
};
extern HardwareSerial Serial;
unsigned long micros(void);
void setup(void);
void loop(void);
#endif
"""

STUB_CORE = """\
/* Serial over the harness's output channel, micros() from a counter, and the main()
 * of Arduino's core (setup once; loop is left out so that the program ends). */
#include "Arduino.h"
extern "C" {
#include "minun_target.h"
}

HardwareSerial Serial;
static unsigned long fake_time;

void HardwareSerial::begin(unsigned long baud) { (void)baud; }
size_t HardwareSerial::print(const char *s) { minun_puts(s); return 0; }
size_t HardwareSerial::print(char c) { minun_putc(c); return 1; }
size_t HardwareSerial::print(int v) { minun_print_i32(v); return 0; }
size_t HardwareSerial::print(unsigned long v) { minun_print_u32(v); return 0; }
size_t HardwareSerial::println(const char *s) { print(s); minun_putc('\\n'); return 0; }
size_t HardwareSerial::println(int v) { print(v); minun_putc('\\n'); return 0; }
size_t HardwareSerial::println(unsigned long v) { print(v); minun_putc('\\n'); return 0; }
unsigned long micros(void) { return fake_time += 4; }

int main(void)
{
    setup();
    minun_flush();
    return 0;
}
"""


@pytest.mark.parametrize("model,config", [("lenet", "fixed16"), ("bonsai", "fixed8"),
                                          ("protonn", "float32"),
                                          ("fastgrnn", "zero-skew8")])
def test_sketch_builds_for_the_uno_and_runs(model, config, tmp_path):
    l2, _ = quantized(model, config)
    n = 5
    exp = expected_for(model, config, limit=n)
    folder = export_sketch(l2, tmp_path, model, exp.inputs[:n], exp.labels[:n])
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [f"{model}.ino", "model.h", "model.c", "minun_runtime.h", "sketch_inputs.h",
         MANIFEST])
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "Arduino.h").write_text(ARDUINO_H)
    (stub / "stub_core.cpp").write_text(STUB_CORE)
    # the Arduino build: the .ino as C++ (avr-g++), the .c files as C (avr-gcc)
    mcu = ["-mmcu=atmega328p", "-Os", "-Wall", "-Wextra", "-Werror"]
    ino_o, model_o = tmp_path / "ino.o", tmp_path / "model.o"
    for cmd in (["avr-g++", *mcu, "-x", "c++", "-c", str(folder / f"{model}.ino"),
                 f"-I{stub}", f"-I{folder}", "-o", str(ino_o)],
                ["avr-gcc", *mcu, "-std=c99", "-pedantic", "-c", str(folder / "model.c"),
                 "-o", str(model_o)]):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
    # run it in simavr with the stub core (the harness's target support prints for it)
    ino_cpp = tmp_path / f"{model}_ino.cpp"
    ino_cpp.write_text((folder / f"{model}.ino").read_text())
    result = build_and_run([ino_cpp, stub / "stub_core.cpp", folder / "model.c"], "avr",
                           include_dirs=[stub, folder], name=model)
    lines = result.output.strip().splitlines()
    assert lines[0] == f"{model}: label expected microseconds"
    got = np.array([[int(v) for v in line.split()[:2]] for line in lines[1:n + 1]])
    np.testing.assert_array_equal(got[:, 0], exp.labels[:n])
    np.testing.assert_array_equal(got[:, 1], exp.labels[:n])
    assert lines[n + 1] == f"correct {n}/{n}"
    assert result.flash_bytes <= 32 * 1024 and result.ram_bytes <= 2048
