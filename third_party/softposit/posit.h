/* posit<n, es> arithmetic for microcontrollers without an FPU: integers only (C99, no
 * float, no malloc, no libm). Part of minun-mlir; MIT licence (the repository's LICENSE).
 *
 * A posit_t holds the n-bit pattern in its low bits (3 <= n <= 32, 0 <= es <= 2; the
 * compiler uses n = 8..16 and 32). Every function takes n and es as arguments, so one
 * copy of the code serves every format. The results are bit for bit those of
 * minun_mlir/numerics/posit.py (docs/numerics.md, "Posits"):
 *
 *   - add, sub, mul, div, conversions: the exact result rounded once to nearest, ties to
 *     the even pattern; never to 0 or NaR (maxpos / minpos instead); NaR in, NaR out;
 *     x / 0 is NaR.
 *   - the quire accumulates products exactly in a two's complement integer of
 *     4 * maxscale + n bits counting minpos^2 (n - 1 carry bits: SoftPosit's quire8, 16
 *     and 32 for posit<8,0>, <16,1>, <32,2>), wrapping around on overflow as SoftPosit's,
 *     and rounds once.
 *   - exp, sigmoid, tanh, log: 64-bit fixed-point evaluation to about 2^-52, rounded
 *     once (correctly rounded on every posit8 and posit16 input); sqrt: an exact integer
 *     square root, correctly rounded.
 *   - comparisons order patterns as n-bit two's complement integers (NaR lowest).
 */
#ifndef MINUN_POSIT_H
#define MINUN_POSIT_H

#include <stdint.h>

typedef uint32_t posit_t;

/* A quire of posit<n, es> is POSIT_QUIRE_WORDS(n, es) 32-bit words (least significant
 * first; bit 0 weighs minpos^2 = 2^(-2 maxscale); the low 4 maxscale + n bits are the
 * quire) followed by one byte, the NaR flag (a NaR was accumulated): POSIT_QUIRE_BYTES
 * bytes aligned for uint32_t, e.g. struct { uint32_t w[words]; uint8_t nar; }. The
 * quire functions take a pointer to that storage; storage for a wider format serves a
 * narrower one. posit_quire_t holds any format's (posit<32, 2>: 4 * 120 + 32 = 512 bits). */
#define POSIT_QUIRE_WORDS(n, es) ((4 * ((n) - 2) * (1 << (es)) + (n) + 31) / 32)
#define POSIT_QUIRE_BYTES(n, es) (4 * POSIT_QUIRE_WORDS(n, es) + 1)

typedef struct {
    uint32_t w[16];
    uint8_t nar;
} posit_quire_t;

posit_t posit_nar(int n);
posit_t posit_neg(posit_t a, int n);
posit_t posit_add(posit_t a, posit_t b, int n, int es);
posit_t posit_sub(posit_t a, posit_t b, int n, int es);
posit_t posit_mul(posit_t a, posit_t b, int n, int es);
posit_t posit_div(posit_t a, posit_t b, int n, int es);

/* posit<n, es> -> posit<n_to, es_to> */
posit_t posit_convert(posit_t a, int n, int es, int n_to, int es_to);
/* the fixed-point integer q standing for q / 2^scale -> posit */
posit_t posit_from_fixed(int32_t q, int scale, int n, int es);
/* posit -> round(value * 2^scale), ties to even, saturated to `bits` (2..32) two's
   complement; NaR gives the most negative integer */
int32_t posit_to_fixed(posit_t a, int scale, int bits, int n, int es);

/* the pattern as an n-bit two's complement integer: its order is the posit order */
int32_t posit_signed(posit_t a, int n);
int posit_lt(posit_t a, posit_t b, int n);
int posit_le(posit_t a, posit_t b, int n);
int posit_eq(posit_t a, posit_t b, int n);
posit_t posit_max(posit_t a, posit_t b, int n);
posit_t posit_relu(posit_t a, int n); /* max(a, 0): relu(NaR) = 0 */

posit_t posit_exp(posit_t a, int n, int es);
posit_t posit_sigmoid(posit_t a, int n, int es);
posit_t posit_tanh(posit_t a, int n, int es);
/* sqrt: correctly rounded (NaR for a < 0); log: natural log, about 2^-52 relative before
   the one rounding (correctly rounded on every posit8 and posit16), NaR for a <= 0 */
posit_t posit_sqrt(posit_t a, int n, int es);
posit_t posit_log(posit_t a, int n, int es);

void posit_quire_clear(void *q, int n, int es);
void posit_quire_fma(void *q, posit_t a, posit_t b, int n, int es); /* q += a b */
posit_t posit_quire_to_posit(const void *q, int n, int es);

/* The same operations for posit<8, es> and posit<16, es>, es = 0..2, with the format in
 * the name (posit_p16e2_add(a, b) == posit_add(a, b, 16, 2)): n and es are constants
 * there, so these are the fast ones; a program links only the formats it calls. */
#define POSIT_FORMAT_DECLS(N, ES)                                                         \
    posit_t posit_p##N##e##ES##_add(posit_t a, posit_t b);                                \
    posit_t posit_p##N##e##ES##_sub(posit_t a, posit_t b);                                \
    posit_t posit_p##N##e##ES##_mul(posit_t a, posit_t b);                                \
    posit_t posit_p##N##e##ES##_div(posit_t a, posit_t b);                                \
    void posit_p##N##e##ES##_quire_fma(void *q, posit_t a, posit_t b);                    \
    posit_t posit_p##N##e##ES##_quire_to_posit(const void *q);
POSIT_FORMAT_DECLS(8, 0)
POSIT_FORMAT_DECLS(8, 1)
POSIT_FORMAT_DECLS(8, 2)
POSIT_FORMAT_DECLS(16, 0)
POSIT_FORMAT_DECLS(16, 1)
POSIT_FORMAT_DECLS(16, 2)

/* posit8 exp, sigmoid, tanh, sqrt, log by table (256 bytes each, in flash): the same
 * patterns as posit_exp(a, 8, es) ... */
#define POSIT8_FUNCTION_DECLS(ES)                                                         \
    posit_t posit_p8e##ES##_exp(posit_t a);                                               \
    posit_t posit_p8e##ES##_sigmoid(posit_t a);                                           \
    posit_t posit_p8e##ES##_tanh(posit_t a);                                              \
    posit_t posit_p8e##ES##_sqrt(posit_t a);                                              \
    posit_t posit_p8e##ES##_log(posit_t a);
POSIT8_FUNCTION_DECLS(0)
POSIT8_FUNCTION_DECLS(1)
POSIT8_FUNCTION_DECLS(2)

#endif
