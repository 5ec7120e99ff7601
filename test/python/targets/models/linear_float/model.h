/* The float baseline of the linear_int16 fake model: float inputs, weights and scores. */
#ifndef MODEL_H
#define MODEL_H
#include <stdint.h>

#define MINUN_INPUT_SIZE 16
#define MINUN_OUTPUT_SIZE 4
typedef float minun_input_t;
typedef float minun_output_t;

int minun_predict(const minun_input_t *x, minun_output_t *out);

#endif
