"""simavr 1.6 mis-sizes ADIW/SBIW when a skip instruction jumps over them (see
minun_mlir/targets/simavr_skip.py). These tests show the hazard on a real avr-gcc build,
that the harness refuses to simulate such a program, and that the avr profile's flags
avoid it and give the host's result."""

from __future__ import annotations

import pytest

from minun_mlir.targets import SimulationError, build_and_run

VALUES = (-13220, 2596, 5989, 548, -2094, 17617, -21851, 4512)
# trunc division by 64 of a table's entries: avr-gcc -Os emits `sbrc r25, 7; adiw r24, 63`
PROGRAM = r"""
#include "minun_target.h"
static int16_t table[8] = {VALUES};
static int16_t out[8];
int main(void) {
    for (int i = 0; i < 8; i++) out[i] = (int16_t)(100 - table[i] / 64);
    for (int i = 0; i < 8; i++) { minun_print_i32(out[i]); minun_putc(' '); }
    minun_putc('\n');
    minun_exit(0);
}
""".replace("VALUES", ", ".join(map(str, VALUES)))


def host_values() -> list[int]:
    return [100 - int(v / 64) for v in VALUES]  # C division truncates toward zero


def test_plain_os_build_has_the_hazard_and_is_refused(tmp_path):
    src = tmp_path / "p.c"
    src.write_text(PROGRAM)
    # -fpeephole2 after the profile's -fno-peephole2: plain avr-gcc -Os code generation
    with pytest.raises(SimulationError, match="simavr 1.6 would mis-execute"):
        build_and_run([src], "avr", cflags=("-fpeephole2",), work_dir=tmp_path / "w")


def test_avr_profile_avoids_the_hazard_and_matches_the_host(tmp_path):
    src = tmp_path / "p.c"
    src.write_text(PROGRAM)
    result = build_and_run([src], "avr", work_dir=tmp_path / "w")
    assert [int(v) for v in result.output.split()] == host_values()


def test_data_in_flash_is_not_scanned_as_code(tmp_path):
    """A table kept in flash whose words look like `cpse; adiw r30, 63` (0x1000, 0x963F)
    is data, not a hazard: the differential fuzzer's AVR runs were refused because the
    harness's input table (minun_harness_inputs, in .text) held such words."""
    src = tmp_path / "p.c"
    src.write_text(r"""
#include <avr/pgmspace.h>
#include "minun_target.h"
const uint16_t table[4] PROGMEM = {0x1000, 0x963F, 0x1000, 0x963F};
int main(void) {
    for (int i = 0; i < 4; i++) { minun_print_i32(pgm_read_word(&table[i])); minun_putc(' '); }
    minun_putc('\n');
    minun_exit(0);
}
""")
    result = build_and_run([src], "avr", work_dir=tmp_path / "w")
    assert [int(v) for v in result.output.split()] == [0x1000, 0x963F, 0x1000, 0x963F]
