/* What one call of the posit runtime (third_party/softposit) costs on a board: for the
 * format POSIT_N, POSIT_ES (defined by the benchmark, minun_bench/posit.py), each of
 * add, mul, exp, sigmoid, tanh and one quire fma timed between markers on PAIRS operand
 * pairs (typical activations and weights, not special cases); the benchmark reports the
 * median. The results are printed so that the calls are not optimised away.
 * With ONLY_OP = k (1..6: add, mul, exp, sigmoid, tanh, quire fma; 0: none) only that
 * operation is called: the flash of such a program minus that of ONLY_OP = 0 is what the
 * one operation brings in (the linker drops the runtime's unused functions).
 * It calls what the generated C calls (minun_mlir/formats/posit/runtime.py): the
 * per-format entry points posit_p16e2_add, ... (posit8 exp, sigmoid, tanh by table). */
#include "minun_target.h"
#include "posit.h"

#define PAIRS 4

#define CAT5(a, b, c, d, e) a##b##c##d##e
#define FMT(n, es, op) CAT5(posit_p, n, e, es, op)
#define F(op) FMT(POSIT_N, POSIT_ES, op) /* F(_add): posit_p16e2_add */
#if POSIT_N == 8
#define FUNCTION(fn, a) F(_##fn)(a)
#else
#define FUNCTION(fn, a) posit_##fn(a, POSIT_N, POSIT_ES)
#endif

/* posit<16, 2> patterns of 1.3, -0.7, 0.05, 2.9 and -1.9, 0.4, -3.1, 0.12; posit<8, 2>
 * takes their top bytes (about the same values) */
static const uint16_t A16[PAIRS] = {0x4266, 0xc4cd, 0x1e66, 0x4b9a};
static const uint16_t B16[PAIRS] = {0xb8cd, 0x34cd, 0xb39a, 0x275c};

static volatile posit_t sink;
static posit_quire_t quire;

#if defined(ONLY_OP)
#define CALLS(k) (ONLY_OP == (k))
#else
#define CALLS(k) 1
#endif

static posit_t pattern(uint16_t p)
{
    return POSIT_N == 16 ? p : (posit_t)(p >> 8);
}

int main(void)
{
    int i;
    for (i = 0; i < PAIRS; i++) {
        posit_t a = pattern(A16[i]), b = pattern(B16[i]);
        if (CALLS(1)) {
            minun_marker_start();
            sink = F(_add)(a, b);
            minun_marker_end();
        }
        if (CALLS(2)) {
            minun_marker_start();
            sink = F(_mul)(a, b);
            minun_marker_end();
        }
        if (CALLS(3)) {
            minun_marker_start();
            sink = FUNCTION(exp, a);
            minun_marker_end();
        }
        if (CALLS(4)) {
            minun_marker_start();
            sink = FUNCTION(sigmoid, a);
            minun_marker_end();
        }
        if (CALLS(5)) {
            minun_marker_start();
            sink = FUNCTION(tanh, a);
            minun_marker_end();
        }
        if (CALLS(6)) {
            posit_quire_clear(&quire, POSIT_N, POSIT_ES);
            minun_marker_start();
            F(_quire_fma)(&quire, a, b);
            minun_marker_end();
            sink = F(_quire_to_posit)(&quire);
        }
    }
    minun_print_hex32(sink);
    minun_putc('\n');
    return 0;
}
