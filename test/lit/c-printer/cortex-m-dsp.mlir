// Cortex-M dot products on the DSP extension (Inputs/conv-dense-*.mlir: a 3x3
// convolution with padding over 3 channels, then its 18 outputs times W). The filter is
// stored as [out channel][ky][kx][channel]: F[0][ky][kx][c][co] = (1 - 2 co)(9 ky + 3 kx +
// c + 1), so channel 0 holds 1..27 in order, channel 1 their negations; W (18x2,
// W[k][j] = 2k + j + 1) is stored transposed (odd numbers, then even). The window's rows
// are one minun_dot*_rows_dsp call (clipped columns x channels, rows 9 elements apart in
// the input and the filter), the dense layer's 2 rows one minun_dot*_mv_dsp call (both
// rows in one pass over the input, into acc1_rows); the portable loops
// stay in the #else branch (M0+, M3). int8: SXTB16 kernels, the int16_t sum their low half.
// RUN: minun-opt %S/Inputs/conv-dense-16.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{profile=cortex-m file=source}' | filecheck %s --check-prefix=M16
// RUN: minun-opt %S/Inputs/conv-dense-8.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{profile=cortex-m file=source}' | filecheck %s --check-prefix=M8
// RUN: minun-opt %S/Inputs/conv-dense-16.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{profile=cortex-m file=runtime}' | filecheck %s --check-prefix=RT
// RUN: minun-opt %S/Inputs/conv-dense-16.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{profile=x86 file=source}' | filecheck %s --check-prefix=X86

// M16:      static const int16_t p_F_t[54] = {
// M16-NEXT:     1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
// M16-NEXT:     13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
// M16-NEXT:     25, 26, 27, -1, -2, -3, -4, -5, -6, -7, -8, -9,
// M16:      static const int16_t p_W_t[36] = {
// M16-NEXT:     1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23,
// M16-NEXT:     25, 27, 29, 31, 33, 35, 2, 4, 6, 8, 10, 12,
// M16:      #if defined(__ARM_FEATURE_DSP)
// M16:      acc = minun_dot16_rows_dsp(acc, &x[{{.*}}], 9, &p_F_t[{{.*}}], 9, v8 - i3, v6 - i2);
// M16:      #else
// M16-NOT:  minun_dot16
// M16:      acc0 = (int32_t)((uint32_t)acc0 + (uint32_t)((int32_t)x[{{.*}}] * (int32_t)p_F_t[{{.*}}]));
// M16:      #endif
// M16:      int32_t acc1_rows[2];
// M16:      minun_dot16_mv_dsp(&acc1_rows[0], &p_W_t[(i4 * 18) + i5], 18, &minun_scratch.i16[i5], 18 - i5, 2);
// M16:      int32_t acc1 = acc1_rows[i4];
// M16:      #else

// M8:       static const int8_t p_F_t[54] = {
// M8:       acc = (int16_t)minun_dot8_rows_dsp(acc, &x[{{.*}}], 9, &p_F_t[{{.*}}], 9, v8 - i3, v6 - i2);
// M8:       minun_dot8_mv_dsp(&acc1_rows[0], &p_W_t[(i4 * 18) + i5], 18, &minun_scratch.i8[i5], 18 - i5, 2);
// M8:       int16_t acc1 = (int16_t)acc1_rows[i4];

// RT:       static inline int32_t minun_pair16(
// RT:       static inline int32_t minun_smlad(
// RT:       int32_t minun_dot16_dsp(
// RT-NEXT:      int32_t acc, const int16_t *a, const int16_t *b, int n)
// RT:       "smlad %[acc], %[t0], %[t1], %[acc]\n\t"
// RT:       void minun_dot16_mv_dsp(
// RT:       int32_t minun_dot16_rows_dsp(

// x86 has no DSP kernels; its stride-1 int16 dot products use SSE2's PMADDWD instead.
// X86-NOT:  _dsp(
// X86:      #if defined(__SSE2__)
// X86:      acc0 = minun_dot16_sse2(&x[{{.*}}], &p_F_t[{{.*}}], {{.*}}, acc0);
// X86-NEXT: }
// X86-NEXT: #else
// X86:      acc0 = (int32_t)((uint32_t)acc0 + (uint32_t)((int32_t)x[{{.*}}] * (int32_t)p_F_t[{{.*}}]));
// X86-NOT:  _dsp(
