/* Hand-written reference kernels (docs/codegen.md, "Kernels"), run by `make bench`
 * (minun_bench/suite.py) beside the generated C of dense.sd and conv3x3.sd: the same
 * shapes, the loops a person writes around hand_dot16 (avr_dot16.S / m4_dot16.S).
 * data.h (written by the benchmark from a seeded generator) holds W (32x64), XD (64),
 * FT (the 3x3 filters as [out channel][ky][kx][in channel], a layout a hand-written
 * kernel picks so that a row of the window is one contiguous dot product) and XC
 * (6x6x4, NHWC). KERNEL selects the kernel: 1 dense, 2 conv 3x3. Prints the outputs,
 * (int16_t)(sum >> 15), so that the benchmark checks them. */
#include "minun_target.h"
#include "data.h"

int32_t hand_dot16(const int16_t *w, const int16_t *x, int n);

#if KERNEL == 1
static int16_t out[32];

static void kernel(void)
{
    for (int r = 0; r < 32; r++)
        out[r] = (int16_t)(hand_dot16(&W[r * 64], XD, 64) >> 15);
}
#define N_OUT 32
#else
static int16_t out[6 * 6 * 8];

static void kernel(void)
{
    for (int y = 0; y < 6; y++) {
        int ky0 = y == 0, ky1 = y == 5 ? 2 : 3;
        for (int x = 0; x < 6; x++) {
            int kx0 = x == 0, kx1 = x == 5 ? 2 : 3;
            int len = (kx1 - kx0) * 4;
            for (int co = 0; co < 8; co++) {
                int32_t acc = 0;
                for (int ky = ky0; ky < ky1; ky++)
                    acc += hand_dot16(&FT[((co * 3 + ky) * 3 + kx0) * 4],
                                      &XC[((y + ky - 1) * 6 + (x + kx0 - 1)) * 4], len);
                out[(y * 6 + x) * 8 + co] = (int16_t)(acc >> 15);
            }
        }
    }
}
#define N_OUT (6 * 6 * 8)
#endif

int main(void)
{
    minun_marker_start();
    kernel();
    minun_marker_end();
    for (int i = 0; i < N_OUT; i++) {
        minun_print_i32(out[i]);
        minun_putc('\n');
    }
    minun_exit(0);
}
