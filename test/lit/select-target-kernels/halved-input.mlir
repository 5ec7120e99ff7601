// Dot loops whose input is halved toward zero term by term (`const int16_t v = a[..];
// acc += (int32_t)((v + ((v >> 15) & 1)) >> 1) * b[..]`, a truncating rescale the lazy
// value model leaves inside the loop) on the Cortex-M: a convolution's window rows ->
// minun_dot16_shr1_rows_dsp (the 1x1 convolution's one row of 7 channels; each 3x3
// convolution's clipped rows of columns x 3 channels, both filters), a dense layer's dot
// product -> minun_dot16_shr1_dsp; the #else keeps each loop with its halving. The 3x3
// convolutions are not blocked over channels (no minun_dot16_shr1_rows_mc_dsp). x86 and
// the Uno keep the loops (the Uno's multiplies as its minun_mac16, not a dot kernel). The C target prints the kernels with their runtime.
// RUN: minun-opt %S/Inputs/halved-input.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m4}' | filecheck %s
// RUN: minun-opt %S/Inputs/halved-matmul.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m4}' | filecheck %s --check-prefix=DENSE
// RUN: minun-opt %S/Inputs/halved-input.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=x86}' | filecheck %s --check-prefix=OTHER
// RUN: minun-opt %S/Inputs/halved-input.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=avr}' | filecheck %s --check-prefix=OTHER
// RUN: minun-opt %S/Inputs/halved-input.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc' -t 'c{profile=cortex-m}' | filecheck %s --check-prefix=C

// CHECK:      cemit.target_if "__ARM_FEATURE_DSP" {
// CHECK:        %[[X:.*]] = cemit.addr "x"[%{{.*}}] : index -> !cemit.ptr<i16>
// CHECK-NEXT:   %[[SX:.*]] = cemit.literal 7 : index
// CHECK:        %[[G:.*]] = cemit.addr "p_G_t"[%{{.*}}] flash : index -> !cemit.ptr<i16>
// CHECK-NEXT:   %[[SG:.*]] = cemit.literal 7 : index
// CHECK:        cemit.kernel "minun_dot16_shr1_rows_dsp"(%{{.*}}, %[[X]], %[[SX]], %[[G]], %[[SG]], %{{.*}}, %{{.*}}) : (i32, !cemit.ptr<i16>, index, !cemit.ptr<i16>, index, index, index) -> i32
// CHECK:      } else {
// CHECK-NOT:    cemit.kernel
// CHECK:        cemit.for "i4"
// CHECK:          cemit.load "x"
// CHECK-NEXT:     cemit.decl "v" = %{{.*}} const : i16
// CHECK:          cemit.binary ">>" %{{.*}}, %{{.*}} : (i16, i16) -> i16
// CHECK:      cemit.kernel "minun_dot16_shr1_rows_dsp"
// CHECK-SAME:   -> i32
// CHECK:      cemit.kernel "minun_dot16_shr1_rows_dsp"
// CHECK-SAME:   -> i32
// CHECK-NOT:  minun_dot16_shr1_rows_mc_dsp

// DENSE:      cemit.target_if "__ARM_FEATURE_DSP" {
// DENSE:        %[[X:.*]] = cemit.addr "x"[%{{.*}}] : index -> !cemit.ptr<i16>
// DENSE:        %[[W:.*]] = cemit.addr "p_W_t"[%{{.*}}] flash : index -> !cemit.ptr<i16>
// DENSE:        cemit.kernel "minun_dot16_shr1_dsp"(%{{.*}}, %[[X]], %[[W]], %{{.*}}) : (i32, !cemit.ptr<i16>, !cemit.ptr<i16>, index) -> i32
// DENSE:      } else {
// DENSE:        cemit.for "i0"
// DENSE-NOT:    cemit.kernel

// OTHER:      builtin.module attributes {cemit.kernels =
// OTHER-NOT:  minun_dot16_shr
// OTHER-NOT:  __ARM_FEATURE_DSP

// C:          acc0 = minun_dot16_shr1_rows_dsp(acc0, &x[
// C:          acc3 = minun_dot16_shr1_rows_dsp(acc3, &minun_scratch.i16[
// C:          acc6 = minun_dot16_shr1_rows_dsp(acc6, &minun_scratch.i16[
// C:          ----- minun_runtime.h -----
// C:          static inline __attribute__((always_inline)) int32_t minun_dot16_shr1_dsp(
// C:          "shadd16 %[t0], %[t0], %[t4]\n\t"
// C:          static inline __attribute__((always_inline)) int32_t minun_dot16_shr1_rows_dsp(
