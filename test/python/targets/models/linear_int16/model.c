#include "model.h"
#include "weights.h" /* MODEL_WEIGHTS, W[4][16] and B[4] */

int minun_predict(const minun_input_t *x, minun_output_t *out)
{
    int best = 0;
    for (int k = 0; k < MINUN_OUTPUT_SIZE; k++) {
        int32_t s = B[k];
        for (int j = 0; j < MINUN_INPUT_SIZE; j++)
            s += (int32_t)W[k][j] * x[j];
        out[k] = s;
        if (s > out[best])
            best = k;
    }
    return best;
}
