// A 3x3 convolution with padding over 3 channels (../c-printer/Inputs/conv-dense-16.mlir)
// on the Cortex-M: the window's rows loop becomes one minun_dot16_rows_dsp call (the
// clipped columns x channels per row, the input and the filter advancing by 9 elements a
// row: a 3-wide, 3-channel image and filter); its #else keeps the rows loop with the
// inner dot loop portable (no SMLAD kernel inside it). The pass run explicitly or by the
// C target gives the same C; a module selected for one target is not printed for
// another, and an unknown target is refused.
// RUN: minun-opt %S/../c-printer/Inputs/conv-dense-16.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m4}' | filecheck %s
// RUN: minun-opt %S/../c-printer/Inputs/conv-dense-16.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m4}' -t 'c{profile=cortex-m}' > %t.pass
// RUN: minun-opt %S/../c-printer/Inputs/conv-dense-16.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc' -t 'c{profile=cortex-m}' > %t.target
// RUN: diff %t.pass %t.target
// RUN: not minun-opt %S/../c-printer/Inputs/conv-dense-16.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=avr}' -t 'c{profile=x86}' 2>&1 | filecheck %s --check-prefix=OTHER
// RUN: not minun-opt %S/../c-printer/Inputs/conv-dense-16.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=z80}' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// CHECK:      cemit.target_if "__ARM_FEATURE_DSP" {
// CHECK-NEXT:   cemit.block {
// CHECK:          %[[X:.*]] = cemit.addr "x"[%{{.*}}] : index -> !cemit.ptr<i16>
// CHECK-NEXT:     %[[SX:.*]] = cemit.literal 9 : index
// CHECK:          %[[F:.*]] = cemit.addr "p_F_t"[%{{.*}}] flash : index -> !cemit.ptr<i16>
// CHECK-NEXT:     %[[SF:.*]] = cemit.literal 9 : index
// CHECK:          cemit.kernel "minun_dot16_rows_dsp"(%{{.*}}, %[[X]], %[[SX]], %[[F]], %[[SF]], %{{.*}}, %{{.*}}) : (i32, !cemit.ptr<i16>, index, !cemit.ptr<i16>, index, index, index) -> i32
// CHECK:        } else {
// CHECK:          cemit.for "i2"
// CHECK-NOT:        cemit.kernel
// CHECK:            cemit.for "i3"
// CHECK-NOT:          cemit.kernel
// CHECK:              cemit.assign "acc0" = %{{.*}} : i32
// CHECK-NEXT:       }
// CHECK-NEXT:       cemit.ref "acc0"
// CHECK-NEXT:       cemit.assign "acc" = %{{.*}} : i32
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// The dense layer after it (2 rows of 18): minun_dot16_mv_dsp, both rows in one pass
// CHECK:      cemit.array "acc1_rows" : i32[2]
// CHECK:      cemit.kernel_stmt "minun_dot16_mv_dsp"

// OTHER: error: C printer: the module's kernels were selected for avr, not x86
// UNKNOWN: error: select-target-kernels: unknown target 'z80' (known: x86, avr, cortex-m,
