// x86: stride-1 int16 dot loops become minun_dot16_sse2 (PMADDWD) under __SSE2__, the loop
// kept for #else; a row loop of dot products with constant bounds whose stores no dot
// product reads splits into a loop of dot products into acc_rows and a loop of the rest.
// Refused (they stay loops): stride 2, float and int32 elements, an unknown row count, a
// row loop whose stores overwrite what the next rows read; the guard is not hoisted.
// The recognisers are passes/kernel_match.py's (dot_loop, split_rows; the overlap refusal
// is its byte ranges of the row loop's stores and loads); the pass only rewrites.
// RUN: minun-opt %S/Inputs/loops.mlir -p 'select-target-kernels{target=x86}' | filecheck %s

// CHECK: builtin.module attributes {cemit.kernels = "x86"}
// CHECK-LABEL: cemit.func "dot16"
// CHECK:      cemit.target_if "__SSE2__" {
// CHECK-NEXT:   cemit.block {
// CHECK:          cemit.decl "i" = %{{.*}} const : index
// CHECK:          %[[A:.*]] = cemit.addr "W"[%{{.*}}] flash : index -> !cemit.ptr<i16>
// CHECK:          %[[B:.*]] = cemit.addr "x"[%{{.*}}] : index -> !cemit.ptr<i16>
// CHECK:          %[[N:.*]] = cemit.binary "-" %{{.*}}, %{{.*}} : (index, index) -> index
// sse2 takes the sum last: minun_dot16_sse2(&W[i], &x[k + i], 16 - i, acc)
// CHECK-NEXT:     %[[K:.*]] = cemit.kernel "minun_dot16_sse2"(%[[A]], %[[B]], %[[N]], %{{.*}}) : (!cemit.ptr<i16>, !cemit.ptr<i16>, index, i32) -> i32
// CHECK-NEXT:     cemit.assign "acc" = %[[K]] : i32
// CHECK:      } else {
// CHECK:        cemit.for "i"
// CHECK-LABEL: cemit.func "strided"
// CHECK-NOT:  cemit.kernel
// CHECK-LABEL: cemit.func "twoflash"
// CHECK:      cemit.kernel "minun_dot16_sse2"
// CHECK-LABEL: cemit.func "float"
// CHECK-NOT:  cemit.kernel
// CHECK-LABEL: cemit.func "wide"
// CHECK-NOT:  cemit.kernel
// CHECK-LABEL: cemit.func "bounds"
// CHECK:      cemit.kernel "minun_dot16_sse2"
// CHECK-LABEL: cemit.func "guarded"
// CHECK-NOT:  cemit.block
// CHECK:      cemit.for "c"
// CHECK-NEXT:   cemit.literal 0 : i32
// CHECK-NEXT:   cemit.decl "r"
// CHECK-LABEL: cemit.func "varying"
// CHECK-LABEL: cemit.func "rows"
// CHECK-NEXT: cemit.block {
// CHECK-NEXT:   cemit.array "acc_rows" : i32[4]
// CHECK:        cemit.for "j"
// CHECK:          cemit.decl "acc"
// CHECK:          cemit.target_if "__SSE2__"
// CHECK:          cemit.kernel "minun_dot16_sse2"
// CHECK:          cemit.store %{{.*}}, "acc_rows"[%{{.*}}] : i32, index
// CHECK:        cemit.for "j"
// CHECK:          cemit.load "acc_rows"[%{{.*}}] : index -> i32
// CHECK-NEXT:     cemit.decl "acc" = %{{.*}} const : i32
// CHECK:          cemit.store %{{.*}}, "y"[%{{.*}}] : i32, index
// CHECK-LABEL: cemit.func "rows_n"
// CHECK-NOT:  cemit.array
// CHECK:      cemit.kernel "minun_dot16_sse2"
// CHECK-LABEL: cemit.func "overlap"
// CHECK-NOT:  cemit.array
// CHECK:      cemit.kernel "minun_dot16_sse2"
// CHECK-LABEL: cemit.func "shifts"
// CHECK-NOT:  cemit.kernel
