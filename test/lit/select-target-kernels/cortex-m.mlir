// Cortex-M: stride-1 int16 dot loops become minun_dot16_dsp (SMLAD) under
// __ARM_FEATURE_DSP, the loop kept for #else (M0+, M3); a dot loop whose products share
// one loop-invariant test gets the test once, before a loop without it. Refused: stride
// 2, float and int32 elements, a test that reads the loop variable. The target name is
// a harness target (cortex-m4) or the profile (cortex-m).
// The recognisers are passes/kernel_match.py's (dsp_dot, guarded_dot); the pass only
// rewrites.
// RUN: minun-opt %S/Inputs/loops.mlir -p 'select-target-kernels{target=cortex-m4}' | filecheck %s
// RUN: minun-opt %S/Inputs/loops.mlir -p 'select-target-kernels{target=cortex-m}' | filecheck %s

// CHECK: builtin.module attributes {cemit.kernels = "cortex-m"}
// CHECK-LABEL: cemit.func "dot16"
// CHECK:      cemit.target_if "__ARM_FEATURE_DSP" {
// CHECK-NEXT:   cemit.block {
// CHECK:          %[[A:.*]] = cemit.addr "W"[%{{.*}}] flash : index -> !cemit.ptr<i16>
// CHECK:          %[[B:.*]] = cemit.addr "x"[%{{.*}}] : index -> !cemit.ptr<i16>
// CHECK:          %[[N:.*]] = cemit.binary "-"
// CHECK-NEXT:     %[[K:.*]] = cemit.kernel "minun_dot16_dsp"(%{{.*}}, %[[A]], %[[B]], %[[N]]) : (i32, !cemit.ptr<i16>, !cemit.ptr<i16>, index) -> i32
// CHECK-NEXT:     cemit.assign "acc" = %[[K]] : i32
// CHECK:      } else {
// CHECK:        cemit.for "i"
// CHECK-LABEL: cemit.func "strided"
// CHECK-NOT:  cemit.kernel
// CHECK-LABEL: cemit.func "twoflash"
// CHECK:      cemit.kernel "minun_dot16_dsp"
// CHECK-LABEL: cemit.func "float"
// CHECK-NOT:  cemit.kernel
// CHECK-LABEL: cemit.func "wide"
// CHECK-NOT:  cemit.kernel
// CHECK-LABEL: cemit.func "bounds"
// CHECK:      cemit.kernel "minun_dot16_dsp"
// The guard hoisted: { if (inside) { for (c...) { const int32_t r = W[c] * x[c]; acc = acc + r; } } }
// CHECK-LABEL: cemit.func "guarded"
// CHECK:      cemit.block {
// CHECK-NEXT:   %[[IN:.*]] = cemit.ref "inside" : i1
// CHECK-NEXT:   cemit.if %[[IN]] : i1 {
// CHECK:          cemit.for "c"
// CHECK:            cemit.binary "*"
// CHECK-NEXT:       %[[P:.*]] = cemit.bare %{{.*}} : (i32) -> i32
// CHECK-NEXT:       cemit.decl "r" = %[[P]] const : i32
// CHECK:            cemit.binary "+"
// CHECK-NOT:      cemit.if
// CHECK:            cemit.assign "acc"
// CHECK-LABEL: cemit.func "varying"
// CHECK-NOT:  cemit.block
// CHECK:      cemit.for "c"
// CHECK:        cemit.if
// CHECK-LABEL: cemit.func "rows"
// CHECK-NOT:  cemit.array
// CHECK:      cemit.kernel "minun_dot16_dsp"
// CHECK-LABEL: cemit.func "shifts"
// CHECK-NOT:  cemit.kernel
