// x86: a loop over rows whose body is dot products then their use (here the dense layer
// of Inputs/conv-dense-16.mlir: out = W^T v, rescaled) runs as two loops, the dot
// products of every row into a local array (PMADDWD), then the rescales and stores, which
// the compiler vectorises across rows. The convolution's loops (bounds that depend on
// the window) stay as they are.
// RUN: minun-opt %S/Inputs/conv-dense-16.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{profile=x86 file=source}' | filecheck %s
// Inputs/dense-store-overlap.mlir is that program's L4 with the dense layer's result stored
// into minun_scratch.i16[i4], elements its dot products read (i5 in 0..17): not split.
// RUN: minun-opt %S/Inputs/dense-store-overlap.mlir -t 'c{profile=x86 file=source}' | filecheck %s --check-prefix=OVERLAP

// CHECK:      acc0 = minun_dot16_sse2(
// CHECK-NOT:  acc0_rows
// CHECK:      int32_t acc1_rows[2];
// CHECK-NEXT: for (int i4 = 0; i4 < 2; i4++) {
// CHECK-NEXT:     int32_t acc1 = 0;
// CHECK-NEXT: #if defined(__SSE2__)
// CHECK:          acc1 = minun_dot16_sse2(&minun_scratch.i16[i5], &p_W_t[(i4 * 18) + i5], 18 - i5, acc1);
// CHECK:      #endif
// CHECK-NEXT:     acc1_rows[i4] = acc1;
// CHECK-NEXT: }
// CHECK-NEXT: for (int i4 = 0; i4 < 2; i4++) {
// CHECK-NEXT:     const int32_t acc1 = acc1_rows[i4];
// CHECK-NEXT:     out[i4] = (int16_t)((acc1 + ((acc1 >> 31) & 16383)) >> 14);
// CHECK-NEXT: }

// OVERLAP-NOT: _rows
// OVERLAP:     acc1 = minun_dot16_sse2(&minun_scratch.i16[i5], &p_W_t[(i4 * 18) + i5], 18 - i5, acc1);
// OVERLAP:     minun_scratch.i16[i4] = (int16_t)((acc1 + ((acc1 >> 31) & 16383)) >> 14);
// OVERLAP-NOT: _rows
