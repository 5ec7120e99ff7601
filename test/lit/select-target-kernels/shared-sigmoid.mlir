// Shiftry's sigmoid called from two places (sigmoid(W x) + sigmoid(V x)) on the Cortex-M:
// both calls -> minun_sigmoid16_trunc_shared, whose runtime copy has its own always
// inlined exp (minun_exp16_trunc_in). Called from one place in the C each core compiles
// (../c-printer/Inputs/small.mlir: the call in the M4's mat-vec #if and its copy in the
// #else), the sigmoid stays minun_sigmoid16_trunc. x86 and the Uno keep it too.
// RUN: minun-opt %S/Inputs/two-sigmoids.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m4}' | filecheck %s
// RUN: minun-opt %S/../c-printer/Inputs/small.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m4}' | filecheck %s --check-prefix=ONE
// RUN: minun-opt %S/Inputs/two-sigmoids.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=x86}' | filecheck %s --check-prefix=OTHER
// RUN: minun-opt %S/Inputs/two-sigmoids.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=avr}' | filecheck %s --check-prefix=OTHER
// RUN: minun-opt %S/Inputs/two-sigmoids.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc' -t 'c{profile=cortex-m}' | filecheck %s --check-prefix=C

// CHECK:      cemit.call "minun_sigmoid16_trunc_shared"(%{{.*}}) : (i16) -> i16
// CHECK:      cemit.call "minun_sigmoid16_trunc_shared"(%{{.*}}) : (i16) -> i16
// CHECK-NOT:  cemit.call "minun_sigmoid16_trunc"(

// ONE:        cemit.target_if "__ARM_FEATURE_DSP" {
// ONE:          cemit.call "minun_sigmoid16_trunc"(%{{.*}}) : (i16) -> i16
// ONE:        } else {
// ONE:          cemit.call "minun_sigmoid16_trunc"(%{{.*}}) : (i16) -> i16
// ONE-NOT:    _shared

// OTHER-NOT:  _shared
// OTHER:      cemit.call "minun_sigmoid16_trunc"(
// OTHER-NOT:  _shared

// C:          minun_sigmoid16_trunc_shared(
// C:          minun_sigmoid16_trunc_shared(
// C:          ----- minun_runtime.h -----
// C:          static inline int16_t minun_exp16_trunc(int16_t x)
// C:          static inline __attribute__((always_inline)) int16_t minun_exp16_trunc_in(int16_t x)
// C:          static inline int16_t minun_sigmoid16_trunc_shared(int16_t x)
// C-NEXT:     {
// C-NEXT:         int32_t a;
// C-NEXT:         if (x <= 0) {
// C-NEXT:             a = minun_exp16_trunc_in(x);
