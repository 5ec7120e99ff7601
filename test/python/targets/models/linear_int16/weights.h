/* Weights of the fake int16 model; the test mirrors them in numpy. Kept in flash on AVR
 * (__flash named address space), as generated code must do to fit 2 KB of RAM. */
#include <stdint.h>
#if defined(__AVR__)
#define MODEL_WEIGHTS const __flash
#else
#define MODEL_WEIGHTS const
#endif

static MODEL_WEIGHTS int16_t W[4][16] = {
    {37, -12, 5, 88, -41, 19, 0, -7, 63, -90, 14, 27, -3, 51, -66, 8},
    {-25, 71, -48, 9, 33, -17, 82, -5, -59, 12, 40, -73, 26, -8, 15, 94},
    {11, -36, 57, -84, 2, 68, -21, 45, -13, 77, -52, 6, 99, -31, 24, -60},
    {-70, 4, 29, -16, 61, -95, 38, 20, 47, -2, -88, 53, -44, 72, -9, 31},
};
static MODEL_WEIGHTS int32_t B[4] = {1200, -350, 80, -990};
