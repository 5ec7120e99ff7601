// Cortex-M: a compressed sparse matrix times a vector (lower_sparse_matmul, 32-bit sums,
// no shift) runs as minun_dot16_mv_dsp over a dense row-major copy of the matrix, under
// __ARM_FEATURE_DSP, the column loop kept for #else. A = [[1, 0], [0, 2], [3, -4]]
// (Inputs/sparse-matvec.mlir) is stored by columns as val [1, 3, 2, -4], row [0, 2, 1, 2];
// by rows it reads 1, 0, 0, 2, 3, -4. y zeroed just before: the kernel writes y (the
// zeroing loop, whose elements it all writes, goes to #else with the product); else
// (y set to 1 by hand) the sums go to a local array, then are added to y modulo 2^32;
// x read at stride 2 (by hand) is first gathered into a local array.
// Refused: y's elements overlapping x's (X moved by hand onto y in the scratch); other
// targets keep the column loop.
// The recogniser is passes/kernel_match.py's sparse_columns; the pass only rewrites.
// RUN: minun-opt %S/Inputs/sparse-matvec.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m4}' | filecheck %s
// RUN: minun-opt %S/Inputs/sparse-matvec.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m4}' -t 'c{profile=cortex-m}' | filecheck %s --check-prefix=CSRC
// RUN: minun-opt %S/Inputs/sparse-matvec-ones.mlir -p 'select-target-kernels{target=cortex-m4}' -t 'c{profile=cortex-m}' | filecheck %s --check-prefix=ADD
// RUN: minun-opt %S/Inputs/sparse-matvec-strided.mlir -p 'select-target-kernels{target=cortex-m4}' -t 'c{profile=cortex-m}' | filecheck %s --check-prefix=GATHER
// RUN: minun-opt %S/Inputs/sparse-matvec-overlap.mlir -p 'select-target-kernels{target=cortex-m4}' | filecheck %s --check-prefix=OVERLAP
// RUN: minun-opt %S/Inputs/sparse-matvec.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=avr}' | filecheck %s --check-prefix=OTHER
// RUN: minun-opt %S/Inputs/sparse-matvec.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=x86}' | filecheck %s --check-prefix=OTHER

// CHECK:      cemit.global "p_A_val" : i16[4] const flash maybe_unused = dense<[1, 3, 2, -4]>
// CHECK-NEXT: cemit.global "p_A_val_dense" : i16[6] const flash if "__ARM_FEATURE_DSP" = dense<[1, 0, 0, 2, 3, -4]>
// CHECK:      cemit.target_if "__ARM_FEATURE_DSP" {
// CHECK:        "minun_dot16_mv_dsp"
// CHECK:      } else {
// CHECK:        cemit.load "p_A_col"
// CHECK:        cemit.load "p_A_row"

// CSRC:      static const int16_t p_A_val_dense[6] = {
// CSRC-NEXT:     1, 0, 0, 2, 3, -4,
// CSRC:      int minun_predict(const minun_input_t *x, minun_output_t *out)
// CSRC-NEXT: {
// CSRC-NEXT: #if defined(__ARM_FEATURE_DSP)
// CSRC-NEXT:     {
// CSRC-NEXT:         {
// CSRC-NEXT:             const int [[COL:i[0-9]*]] = 0;
// CSRC-NEXT:             minun_dot16_mv_dsp(&minun_scratch.i32[0], &p_A_val_dense[0], 2, &x[[[COL]]], 2, 3);
// CSRC-NEXT:         }
// CSRC-NEXT:     }
// CSRC-NEXT: #else
// CSRC-NEXT:     for (int [[Z:i[0-9]*]] = 0; [[Z]] < 3; [[Z]]++) {
// CSRC-NEXT:         minun_scratch.i32[[[Z]]] = 0;
// CSRC-NEXT:     }
// CSRC-NEXT:     for (int [[COL]] = 0; [[COL]] < 2; [[COL]]++) {
// CSRC:      #endif

// ADD:      {{^}}int minun_predict({{.*}}){{$}}
// ADD:      #if defined(__ARM_FEATURE_DSP)
// ADD-NEXT:     {
// ADD-NEXT:         int32_t [[R:v[0-9]*]]_sums[3];
// ADD-NEXT:         {
// ADD-NEXT:             const int [[COL:i[0-9]*]] = 0;
// ADD-NEXT:             minun_dot16_mv_dsp(&[[R]]_sums[0], &p_A_val_dense[0], 2, &x[[[COL]]], 2, 3);
// ADD-NEXT:         }
// ADD-NEXT:         for (int [[R]] = 0; [[R]] < 3; [[R]]++) {
// ADD-NEXT:             minun_scratch.i32[[[R]]] = (int32_t)((uint32_t)minun_scratch.i32[[[R]]] + (uint32_t)[[R]]_sums[[[R]]]);
// ADD-NEXT:         }
// ADD-NEXT:     }
// ADD-NEXT: #else

// GATHER:      {{^}}int minun_predict({{.*}}){{$}}
// GATHER:      #if defined(__ARM_FEATURE_DSP)
// GATHER-NEXT:     {
// GATHER-NEXT:         int16_t [[XS:v[0-9]*_x]][2];
// GATHER-NEXT:         for (int [[COL:i[0-9]*]] = 0; [[COL]] < 2; [[COL]]++) {
// GATHER-NEXT:             [[XS]][[[COL]]] = x[([[COL]] * 2)];
// GATHER-NEXT:         }
// GATHER-NEXT:         {
// GATHER-NEXT:             minun_dot16_mv_dsp(&minun_scratch.i32[0], &p_A_val_dense[0], 2, &[[XS]][0], 2, 3);
// GATHER-NEXT:         }
// GATHER-NEXT:     }
// GATHER-NEXT: #else

// OVERLAP-NOT: _dense
// OVERLAP-NOT: minun_dot16_mv_dsp
// OVERLAP:     cemit.load "p_A_col"

// OTHER-NOT: _dense
// OTHER-NOT: minun_dot16_mv_dsp
// OTHER:     cemit.load "p_A_col"
