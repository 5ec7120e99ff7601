// Cortex-M: stride-1 int16 dot loops become minun_dot16_dsp (SMLAD) under
// __ARM_FEATURE_DSP, the loop kept for #else (M0+, M3); a dot loop whose products share
// one loop-invariant test gets the test once, before a loop without it. Refused: stride
// 2, float and int32 elements, a test that reads the loop variable. The target name is
// a harness target (cortex-m4) or the profile (cortex-m).
// The recognisers are passes/kernel_match.py's (dsp_dot, guarded_dot, mat_vec); the pass only
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
// A row loop of one dot product a row (a matrix times a vector, constant rows) ->
// minun_dot16_mv_dsp (two rows a pass over x) into "acc_rows", then the row loop of the
// rest reading it; the loop for #else. With an unknown row count: the dot loop only.
// CHECK-LABEL: cemit.func "rows"
// CHECK:      cemit.target_if "__ARM_FEATURE_DSP" {
// CHECK-NEXT:   cemit.block {
// CHECK-NEXT:     cemit.array "acc_rows" : i32[4]
// CHECK:          %[[OUT:.*]] = cemit.addr "acc_rows"[%{{.*}}] : index -> !cemit.ptr<i32>
// CHECK:          %[[W:.*]] = cemit.addr "W"[%{{.*}}] : index -> !cemit.ptr<i16>
// CHECK-NEXT:     %[[SW:.*]] = cemit.literal 8 : index
// CHECK:          %[[X:.*]] = cemit.addr "x"[%{{.*}}] : index -> !cemit.ptr<i16>
// CHECK:          %[[R:.*]] = cemit.literal 4 : index
// CHECK-NEXT:     cemit.kernel_stmt "minun_dot16_mv_dsp"(%[[OUT]], %[[W]], %[[SW]], %[[X]], %{{.*}}, %[[R]])
// CHECK:          cemit.for "j"
// CHECK:            cemit.load "acc_rows"
// CHECK-NEXT:       cemit.decl "acc"
// CHECK:            cemit.store
// CHECK:      } else {
// CHECK-NOT:    cemit.kernel
// CHECK:        cemit.for "j"
// CHECK-LABEL: cemit.func "rows_n"
// CHECK-NOT:  cemit.array
// CHECK:      cemit.kernel "minun_dot16_dsp"
// CHECK-LABEL: cemit.func "shifts"
// CHECK-NOT:  cemit.kernel
