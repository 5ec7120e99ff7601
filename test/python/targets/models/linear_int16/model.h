/* A hand-written model following the harness contract (docs/targets.md): a linear
 * classifier with int16 inputs and weights, int32 scores, label = argmax. */
#ifndef MODEL_H
#define MODEL_H
#include <stdint.h>

#define MINUN_INPUT_SIZE 16
#define MINUN_OUTPUT_SIZE 4
typedef int16_t minun_input_t;
typedef int32_t minun_output_t;

int minun_predict(const minun_input_t *x, minun_output_t *out);

#endif
