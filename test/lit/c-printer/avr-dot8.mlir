// The avr profile on per-channel 8-bit weights: int8 x int8 products summed in 32 bits
// are one asm loop of the runtime header (minun_dot8_*: MULS, the product's sign for the
// upper bytes), the weights read from program memory; the sum then gets its channel's
// shift from a table.
// RUN: minun-opt %s --pass-pipeline='builtin.module(quantize{bits=8 per-channel=true},lower-to-loops,memory-plan,lower-to-emitc)' -t 'c{profile=avr file=source}' | filecheck %s
// RUN: minun-opt %s --pass-pipeline='builtin.module(quantize{bits=8 per-channel=true},lower-to-loops,memory-plan,lower-to-emitc)' -t 'c{profile=avr file=runtime}' | filecheck %s --check-prefix=RT

func.func @main() -> tensor<2x1xf32> {
  %X = minun.input "X" [-2.0, 2.0] {profile = array<f64: -2.0, 2.0>} : tensor<6x1xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25, 0.75, 0.1, 0.2, -0.3], [0.001, 0.002, -0.003, 0.001, 0.002, -0.003]]> : tensor<2x6xf32>
  %y = minun.matmul %W, %X {profile = array<f64: -0.1, 0.1>} : (tensor<2x6xf32>, tensor<6x1xf32>) -> tensor<2x1xf32>
  func.return %y : tensor<2x1xf32>
}
// X at scale 5, W's rows at GetScale(0.75, 8) = 7 and GetScale(0.003, 8) = 7 - floor(log2
// 0.003 + 1) = 15 (0.001 * 2^15 = 32.8 -> 32, 65, -98), y at GetScale(0.1, 8) =
// 7 - floor(log2 0.1 + 1) = 10: shifts 5 + 7 - 10 = 2 and 5 + 15 - 10 = 10, so the sum
// needs 8 + 10 bits: a 32-bit accumulator.
// CHECK:      static const int8_t p_W[12] MINUN_FLASH = {
// CHECK-NEXT:     64, -32, 96, 12, 25, -38, 32, 65, -98, 32, 65, -98,
// CHECK:      static const int8_t p_W_shift[2] MINUN_FLASH = {
// CHECK-NEXT:     2, 10,
// CHECK:      acc = minun_dot8_fr(acc, &p_W[{{.*}}], &x[i0], 6 - i0);

// RT:      static inline __attribute__((always_inline)) int32_t minun_dot8_fr(int32_t acc, const int8_t *pa,
// RT:      "lpm %[a], Z+\n\t" "ld %[b], X+\n\t"
// RT-NEXT: "muls %[a], %[b]\n\t"
// RT-NEXT: "mov %[s], r1\n\t" "lsl %[s]\n\t" "sbc %[s], %[s]\n\t"
