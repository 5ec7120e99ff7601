// Zero-skew int8 dot products (Inputs/zero-skew-conv.mlir: a padded 3x3 convolution of a
// 3x3x4 input whose zero point is -128, then a dense layer whose input's zero point is 3;
// weights symmetric) become kernels: each term is (x - zp) * w, so the kernels take the
// offset k = -zp added to every x.
// On the Cortex-M the window's rows -> minun_dot8_off_rows_dsp with k = 128, the input and the
// filter advancing by 12 elements a row (3 columns x 4 channels); the dense layer's rows
// -> minun_dot8_off_mv_dsp (two rows a pass over the input, weights 18 apart) with
// k = -3; the loops stay for #else.
// On AVR a window row of an input at zero point -128 (b + 128 = b's unsigned byte) -> the
// asm minun_dot8_z128_fr (filter in flash, input in RAM); the dense loop (k = -3) -> the
// asm minun_dot8_off_fr with k = -3 (weights in flash, the requantized input in RAM).
// RUN: minun-opt %S/Inputs/zero-skew-conv.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m4}' | filecheck %s --check-prefix=ARM
// RUN: minun-opt %S/Inputs/zero-skew-conv.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=avr}' | filecheck %s --check-prefix=AVR
// RUN: minun-opt %S/Inputs/zero-skew-conv.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc' -t 'c{profile=cortex-m}' | filecheck %s --check-prefix=C

// ARM:      cemit.target_if "__ARM_FEATURE_DSP" {
// ARM:          %[[X:.*]] = cemit.addr "x"[%{{.*}}] : index -> !cemit.ptr<i8>
// ARM-NEXT:     %[[SX:.*]] = cemit.literal 12 : index
// ARM:          %[[F:.*]] = cemit.addr "p_F_t"[%{{.*}}] flash : index -> !cemit.ptr<i8>
// ARM-NEXT:     %[[SF:.*]] = cemit.literal 12 : index
// ARM:          %[[K:.*]] = cemit.literal 128 : index
// ARM-NEXT:     cemit.kernel "minun_dot8_off_rows_dsp"(%{{.*}}, %[[X]], %[[SX]], %[[F]], %[[SF]], %{{.*}}, %{{.*}}, %[[K]])
// ARM:        } else {
// ARM-NOT:      cemit.kernel
// ARM:          cemit.for "i2"
// ARM:      %[[W2:.*]] = cemit.addr "p_W_t"[%{{.*}}] flash : index -> !cemit.ptr<i8>
// ARM-NEXT: %[[S2:.*]] = cemit.literal 18 : index
// ARM:      %[[Y2:.*]] = cemit.addr "minun_scratch.i8"[%{{.*}}] : index -> !cemit.ptr<i8>
// ARM:      %[[K2:.*]] = cemit.literal -3 : index
// ARM-NEXT: cemit.kernel_stmt "minun_dot8_off_mv_dsp"(%{{.*}}, %[[W2]], %[[S2]], %[[Y2]], %{{.*}}, %{{.*}}, %[[K2]]) : !cemit.ptr<i32>, !cemit.ptr<i8>, index, !cemit.ptr<i8>, index, index, index

// AVR:      %[[F:.*]] = cemit.addr "p_F_t"[%{{.*}}] flash : index -> !cemit.ptr<i8>
// AVR:      %[[X:.*]] = cemit.addr "x"[%{{.*}}] : index -> !cemit.ptr<i8>
// AVR:      cemit.kernel "minun_dot8_z128_fr"(%{{.*}}, %[[F]], %[[X]], %{{.*}})
// AVR:      %[[W:.*]] = cemit.addr "p_W_t"[%{{.*}}] flash : index -> !cemit.ptr<i8>
// AVR:      %[[Y:.*]] = cemit.addr "minun_scratch.i8"[%{{.*}}] : index -> !cemit.ptr<i8>
// AVR:      %[[K:.*]] = cemit.literal -3 : index
// AVR-NEXT: cemit.kernel "minun_dot8_off_fr"(%{{.*}}, %[[W]], %[[Y]], %{{.*}}, %[[K]])

// The printed C, where model.c calls the kernels, the runtime header (printed after it) defines
// them, SXTAB16 adding the offset while widening.
// C:     minun_dot8_off_mv_dsp(&acc1_rows[0], &p_W_t[(i4 * 18) + i5], 18, &minun_scratch.i8[i5], 18 - i5, 2, -3);
// C:     int32_t minun_dot8_off_dsp(
// C:     sxtab16
// C:     void minun_dot8_off_mv_dsp(
// C:     int32_t minun_dot8_off_rows_dsp(
