// model.h: the harness contract (docs/targets.md), scales, and the float wrapper; a
// float32 model takes and returns floats and has no scales.
// RUN: minun-opt %S/Inputs/small.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{file=header}' | filecheck %s
// RUN: minun-opt %S/Inputs/float.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{file=header}' | filecheck %s --check-prefix=F32
// RUN: minun-opt %S/Inputs/float.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{file=source}' | filecheck %s --check-prefix=F32C
// RUN: minun-opt %S/Inputs/small.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t c | filecheck %s --check-prefix=ALL

// CHECK:      #ifndef MINUN_MODEL_H
// CHECK:      #include <stdint.h>
// CHECK:      extern "C" {
// CHECK:      #define MINUN_INPUT_SIZE 4
// CHECK-NEXT: #define MINUN_OUTPUT_SIZE 2
// CHECK-NEXT: #define MINUN_INPUT_SCALE 14
// CHECK-NEXT: #define MINUN_OUTPUT_SCALE 14
// CHECK-NEXT: typedef int16_t minun_input_t;
// CHECK-NEXT: typedef int16_t minun_output_t;
// CHECK:      int minun_predict(const minun_input_t *x, minun_output_t *out);
// CHECK:      int minun_predict_float(const float *x, float *scores);

// F32-NOT:  SCALE
// F32:      typedef float minun_input_t;
// F32-NEXT: typedef float minun_output_t;

// F32C:      static const float p_W[8] = {
// F32C-NEXT:     1.0f, -0.5f, 0.25f, 0.1f, -1.0f, 0.5f, 2.5f, -0.1f,
// F32C:          acc = (acc + (p_W[((i * 4) + i0)] * x[i0]));
// F32C:          out[i] = tanhf(acc);
// F32C:      int minun_predict_float(const float *x, float *scores)
// F32C-NEXT: {
// F32C-NEXT:     return minun_predict(x, scores);

// ALL:      // ----- model.h -----
// ALL:      // ----- model.c -----
// ALL:      // ----- minun_runtime.h -----

// The c target prints L4 only; earlier levels get the stages they still need named.
// RUN: not minun-opt %S/Inputs/small.mlir -t c 2>&1 | filecheck %s --check-prefix=NOTL4
// NOTL4: error: -t c prints L4 (cemit) IR, but the module holds 'func.func': run the pipeline through lower-to-emitc first, e.g. -p lower-to-loops,memory-plan,lower-to-emitc
