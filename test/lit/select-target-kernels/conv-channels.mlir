// Cortex-M: a convolution's output-channel loop (5 channels) around its fused 2x2 max
// pool's window loops and the clipped window (../c-printer/Inputs/conv-pool-5ch-16.mlir)
// becomes, under __ARM_FEATURE_DSP, the window sums of all 5 channels first
// (minun_dot16_rows_mc_dsp, into the local acc1_mc[2 * 2 * 5], the filter from channel 0
// at 18 elements a channel), then the channel loop reading them with no kernel left in
// it; #else keeps the loop with its rows loop portable. With the input and the output in
// scratch the stores are proven apart from the windows' reads (index_bounds) and the
// blocking stays. At 8 bits: minun_dot8_rows_mc_dsp, its int16_t sum the low half of the
// int32_t one. Zero-skew int8 (Inputs/zero-skew-conv-5ch.mlir: input zero point -128, no
// pool, so no window loops: the sums of one window, acc_mc[5]): minun_dot8_off_rows_mc_dsp
// with the offset k = 128 last. More than 8 channels (conv-pool-10ch-16.mlir) go in groups
// of 8 (the sums array does not grow with the channels: acc1_mc[2 * 2 * 8]), the last
// group up to channel 10. Refused: 2 channels (conv-dense-16.mlir) and stores that may write a byte
// a window reads (Inputs/conv-pool-overlap.mlir: the output moved one element down,
// onto the input): the one-channel kernel stays.
// RUN: minun-opt %S/../c-printer/Inputs/conv-pool-5ch-16.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m4}' | filecheck %s
// RUN: minun-opt %S/../c-printer/Inputs/conv-pool-5ch-16.mlir -p 'lower-to-loops,memory-plan{input-in-scratch=true output-in-scratch=true},lower-to-emitc,select-target-kernels{target=cortex-m4}' | filecheck %s --check-prefix=SCRATCH
// RUN: minun-opt %S/../c-printer/Inputs/conv-pool-5ch-8.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m4}' | filecheck %s --check-prefix=EIGHT
// RUN: minun-opt %S/Inputs/zero-skew-conv-5ch.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m4}' | filecheck %s --check-prefix=ZS
// RUN: minun-opt %S/../c-printer/Inputs/conv-pool-10ch-16.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m4}' -t 'c{profile=cortex-m}' | filecheck %s --check-prefix=GROUP
// RUN: minun-opt %S/../c-printer/Inputs/conv-dense-16.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m4}' | filecheck %s --check-prefix=REFUSED2
// RUN: minun-opt %S/Inputs/conv-pool-overlap.mlir -p 'select-target-kernels{target=cortex-m4}' | filecheck %s --check-prefix=OVERLAP

// CHECK:      cemit.target_if "__ARM_FEATURE_DSP" {
// CHECK-NEXT:   cemit.block {
// CHECK-NEXT:     cemit.array "acc1_mc" : i32[20]
// CHECK:          cemit.for "i2" = %{{.*}} to %{{.*}} : index, index {
// CHECK:            cemit.for "i3" = %{{.*}} to %{{.*}} : index, index {
// CHECK:              %[[F:.*]] = cemit.addr "p_F_t"[%{{.*}}] flash : index -> !cemit.ptr<i16>
// CHECK:              %[[S:.*]] = cemit.addr "acc1_mc"[%{{.*}}] : index -> !cemit.ptr<i32>
// CHECK:              %[[X:.*]] = cemit.addr "x"[%{{.*}}] : index -> !cemit.ptr<i16>
// CHECK-NEXT:         %[[SX:.*]] = cemit.literal 8 : index
// CHECK-NEXT:         %[[SF:.*]] = cemit.literal 6 : index
// CHECK-NEXT:         %[[SC:.*]] = cemit.literal 18 : index
// CHECK:              %[[C:.*]] = cemit.literal 5 : index
// CHECK-NEXT:         cemit.kernel_stmt "minun_dot16_rows_mc_dsp"(%[[S]], %[[X]], %[[SX]], %[[F]], %[[SF]], %[[SC]], %{{.*}}, %{{.*}}, %[[C]])
// CHECK:          cemit.for "i1" = %{{.*}} to %{{.*}} : index, index {
// CHECK-NOT:        cemit.kernel
// CHECK-NOT:        cemit.for "i4"
// CHECK:            cemit.load "acc1_mc"[%{{.*}}] : index -> i32
// CHECK-NEXT:       cemit.assign "acc1" = %{{.*}} : i32
// CHECK-NOT:        cemit.kernel
// CHECK:            cemit.store %{{.*}}, "out"
// CHECK:      } else {
// CHECK-NOT:    cemit.kernel
// CHECK:        cemit.for "i4"
// CHECK-NOT:    cemit.kernel
// CHECK:        cemit.store %{{.*}}, "out"

// SCRATCH:    cemit.kernel_stmt "minun_dot16_rows_mc_dsp"
// SCRATCH:    cemit.store %{{.*}}, "minun_scratch.i16"

// EIGHT:      cemit.array "acc1_mc" : i32[20]
// EIGHT:      cemit.kernel_stmt "minun_dot8_rows_mc_dsp"(%{{.*}}) : !cemit.ptr<i32>, !cemit.ptr<i8>, index, !cemit.ptr<i8>, index, index, index, index, index
// EIGHT:      %[[SUM:.*]] = cemit.load "acc1_mc"[%{{.*}}] : index -> i32
// EIGHT-NEXT: %[[LOW:.*]] = cemit.cast %[[SUM]] : i32 to i16
// EIGHT-NEXT: cemit.assign "acc1" = %[[LOW]] : i16
// EIGHT:      } else {
// EIGHT-NOT:  cemit.kernel
// EIGHT:      cemit.func

// ZS:      cemit.array "acc_mc" : i32[5]
// ZS-NOT:  cemit.for "i2"
// ZS:      %[[C:.*]] = cemit.literal 5 : index
// ZS-NEXT: %[[K:.*]] = cemit.literal 128 : index
// ZS-NEXT: cemit.kernel_stmt "minun_dot8_off_rows_mc_dsp"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C]], %[[K]])
// ZS:      cemit.for "i1"
// ZS-NOT:  cemit.kernel
// ZS:      cemit.load "acc_mc"
// ZS:      } else {

// GROUP:      for (int i1_group = 0; i1_group < 2; i1_group++) {
// GROUP-NEXT:   const int i1_lo = (i1_group * 8);
// GROUP-NEXT:   const int i1_hi = (((i1_lo + 8) < 10) ? (i1_lo + 8) : 10);
// GROUP-NEXT:   int32_t acc1_mc[32];
// GROUP:        minun_dot16_rows_mc_dsp(&acc1_mc[((i2 * 2) + i3) * 8], {{.*}}, &p_F_t[((i1_lo * 18) + {{.*}}, 6, 18, v8 - i5, v6 - i4, i1_hi - i1_lo);
// GROUP:        for (int i1 = i1_lo; i1 < i1_hi; i1++) {
// GROUP:          acc1 = acc1_mc[((((i2 * 2) + i3) * 8) + (i1 - i1_lo))];
// GROUP:      #else

// REFUSED2-NOT: minun_dot16_rows_mc_dsp
// REFUSED2:     cemit.kernel "minun_dot16_rows_dsp"
// REFUSED2-NOT: minun_dot16_rows_mc_dsp

// OVERLAP-NOT: minun_dot16_rows_mc_dsp
// OVERLAP:     cemit.kernel "minun_dot16_rows_dsp"
// OVERLAP-NOT: minun_dot16_rows_mc_dsp
