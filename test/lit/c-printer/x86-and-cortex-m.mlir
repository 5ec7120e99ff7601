// x86 and cortex-m: plain C99, const arrays (flash on Cortex-M), plain reads.
// RUN: minun-opt %S/Inputs/small.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{profile=x86 file=source}' | filecheck %s
// RUN: minun-opt %S/Inputs/small.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{profile=cortex-m file=source}' | filecheck %s
// RUN: minun-opt %S/Inputs/small.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{profile=x86 file=runtime}' | filecheck %s --check-prefix=RT

// CHECK:     static const int16_t p_W[8] = {
// CHECK:     acc = (int32_t)((uint32_t)acc + (uint32_t)((int32_t)p_W[((i * 4) + i0)] * (int32_t)x[i0]));
// CHECK-NOT: MINUN_RD

// RT-NOT:  pgmspace
// RT:      static const int16_t minun_exp16_t1[256] = {
// RT:          prod = (int32_t)minun_exp16_t1[u >> 7]
