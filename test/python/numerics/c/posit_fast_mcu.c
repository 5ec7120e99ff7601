/* The posit runtime's per-format entry points (posit_p16e2_add, ...) on a microcontroller
 * (simavr / QEMU via the target harness): for each case of posit_fast_cases.h (written by
 * test_posit_fast_paths.py) print, in hex, add, sub, mul, div of its format's entry
 * points, the quire dot product of the case's block of DOT_K cases (_quire_fma,
 * _quire_to_posit) and, for posit8, exp, sigmoid, tanh, sqrt and log by table. */
#include "mcu_io.h"
#include "posit.h"
#include "posit_fast_cases.h"

static posit_quire_t quire;

#define FORMAT(N, ES)                                                                    \
    static void run_p##N##e##ES(int i, posit_t a, posit_t b)                             \
    {                                                                                    \
        int j, block = i - i % BLOCK;                                                    \
        out(posit_p##N##e##ES##_add(a, b));                                          \
        out(posit_p##N##e##ES##_sub(a, b));                                              \
        out(posit_p##N##e##ES##_mul(a, b));                                              \
        out(posit_p##N##e##ES##_div(a, b));                                              \
        posit_quire_clear(&quire, N, ES);                                                \
        for (j = 0; j < DOT_K; j++) {                                                    \
            int k = block + (i - block + j) % BLOCK;                                     \
            posit_p##N##e##ES##_quire_fma(&quire, rd32(case_a, k), rd32(case_b, k));     \
        }                                                                                \
        out(posit_p##N##e##ES##_quire_to_posit(&quire));                                 \
    }
FORMAT(8, 0)
FORMAT(8, 1)
FORMAT(8, 2)
FORMAT(16, 0)
FORMAT(16, 1)
FORMAT(16, 2)

#define FUNCTIONS(ES)                                                                    \
    static void functions_p8e##ES(posit_t a)                                             \
    {                                                                                    \
        out(posit_p8e##ES##_exp(a));                                                     \
        out(posit_p8e##ES##_sigmoid(a));                                                 \
        out(posit_p8e##ES##_tanh(a));                                                    \
        out(posit_p8e##ES##_sqrt(a));                                                    \
        out(posit_p8e##ES##_log(a));                                                     \
    }
FUNCTIONS(0)
FUNCTIONS(1)
FUNCTIONS(2)

int main(void)
{
    int i;
    for (i = 0; i < CASES; i++) {
        int f = rd8(case_format, i); /* 0..5: posit8 es 0..2, posit16 es 0..2 */
        posit_t a = rd32(case_a, i), b = rd32(case_b, i);
        switch (f) {
        case 0: run_p8e0(i, a, b); functions_p8e0(a); break;
        case 1: run_p8e1(i, a, b); functions_p8e1(a); break;
        case 2: run_p8e2(i, a, b); functions_p8e2(a); break;
        case 3: run_p16e0(i, a, b); break;
        case 4: run_p16e1(i, a, b); break;
        default: run_p16e2(i, a, b); break;
        }
        minun_putc('\n');
    }
    minun_flush();
    return 0;
}
