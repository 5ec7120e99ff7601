/* Calibration: two measured regions of NOPS and 2*NOPS nop instructions. Each block is a
 * separate function so the measured region holds only call, nops and return. */
#include "minun_target.h"

#define STR2(x) #x
#define STR(x) STR2(x)

__attribute__((noinline)) void nops_once(void)
{
    __asm__ __volatile__(".rept " STR(NOPS) "\n\tnop\n\t.endr");
}

__attribute__((noinline)) void nops_twice(void)
{
    __asm__ __volatile__(".rept " STR(NOPS) " * 2\n\tnop\n\t.endr");
}

int main(void)
{
    minun_marker_start();
    nops_once();
    minun_marker_end();
    minun_marker_start();
    nops_twice();
    minun_marker_end();
    minun_puts("done\n");
    return 0;
}
