// Packed 4-bit weights (docs/numerics.md, "4-bit weights"): the matmul's weight as int4
// codes with a scale per output channel (the per-channel rules at 4 bits), marked
// packed_bits = 4; lower-to-loops stores two codes per byte and reads a code back with
// explicit arith ops, which the C printer spells as it spells any other. The numbers
// below are worked out by hand.
// RUN: minun-opt %s -p 'quantize{bits=8 weight-bits=4}' | filecheck %s
// RUN: minun-opt %s -p 'quantize{bits=8 weight-bits=4},lower-to-loops' | filecheck %s --check-prefix=LOOPS
// RUN: minun-opt %s --pass-pipeline='builtin.module(quantize{bits=8 weight-bits=4},lower-to-loops,memory-plan,lower-to-emitc)' -t c | filecheck %s --check-prefix=CCODE
// RUN: not minun-opt %s -p 'quantize{bits=8 weight-bits=4 scales=maxscale maxscale=4}' 2>&1 | filecheck %s --check-prefix=MAXSCALE
// RUN: not minun-opt %s -p 'quantize{repr=posit bits=8 weight-bits=4}' 2>&1 | filecheck %s --check-prefix=POSIT

func.func @main() -> tensor<2x1xf32> {
  %X = minun.input "X" [-2.0, 2.0] {profile = array<f64: -2.0, 2.0>} : tensor<3x1xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25, 0.75], [0.1, 0.2, -0.3]]> : tensor<2x3xf32>
  %B = minun.param "B" [-1.0, 1.0] dense<[[0.3], [-0.6]]> : tensor<2x1xf32>
  %y = minun.matmul %W, %X {profile = array<f64: -3.0, 3.0>} : (tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x1xf32>
  %z = minun.add %y, %B {profile = array<f64: -3.6, 3.3>} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  func.return %z : tensor<2x1xf32>
}
// X: GetScale(2, 8) = 5. W's rows are its output channels (W X), each at GetScale of its
// largest |w| at 4 bits: row 0, 0.75: 3 - floor(log2 0.75 + 1) = 3 (0.5 * 8 = 4, -2, 6);
// row 1, 0.3: 3 - floor(log2 0.3 + 1) = 4 (0.1 * 16 = 1.6 -> 2, 3.2 -> 3, -4.8 -> -5: int4
// codes round to nearest, whatever the shifts' rounding). The codes are stored in an
// 8-bit element at the lower scale, 3.
// CHECK:      %X = num.input "X" : tensor<3x1x!num.fixed<8, 5>>
// CHECK-NEXT: %W = num.param "W" {channel_axis = 0 : i64, channel_scales = array<i64: 3, 4>, packed_bits = 4 : i64} dense<{{\[\[}}4, -2, 6], [2, 3, -5]]> : tensor<2x3xi8> -> tensor<2x3x!num.fixed<8, 3>>
// The bias (not packed) at the products' scales 5 + 3 = 8 and 5 + 4 = 9: 0.3 * 256 = 76.8
// -> 76, -0.6 * 512 = -307.2 -> -307; the sum at GetScale(3.6, 8) = 5: shifts 3 and 4.
// CHECK-NEXT: %B = num.param "B" {channel_axis = 0 : i64, channel_scales = array<i64: 8, 9>} dense<[76, -307]> : tensor<2xi16> -> tensor<2x!num.fixed<16, 8>>
// CHECK-NEXT: num.matmul %W, %X bias %B {{.*}} channel_shifts = array<i64: 3, 4>}

// Two codes per byte, code 2k in the low nibble: (4 | -2 << 4) = 0xE4 = -28,
// (6 | 2 << 4) = 0x26 = 38, (3 | -5 << 4) = 0xB3 = -77.
// LOOPS:      "memref.global"() <{sym_name = "p_W", type = memref<3xi8>, initial_value = dense<[-28, 38, -77]> : tensor<3xi8>
// Code i: byte i >> 1, its high nibble (b >> 4) when i is odd, else the low one
// ((b << 4) >> 4), both sign-extended by the arithmetic shift.
// LOOPS:      [[I:%[0-9]+]] = arith.addi
// LOOPS-NEXT: [[FOUR:%[0-9]+]] = arith.constant 4 : i8
// LOOPS-NEXT: [[ONE:%[0-9]+]] = arith.constant 1 : index
// LOOPS-NEXT: [[HALF:%[0-9]+]] = arith.shrsi [[I]], [[ONE]] : index
// LOOPS-NEXT: [[B:%[0-9]+]] = memref.load %p_W{{\[}}[[HALF]]] : memref<3xi8>
// LOOPS-NEXT: [[HI:%[0-9]+]] = arith.shrsi [[B]], [[FOUR]] : i8
// LOOPS-NEXT: [[UP:%[0-9]+]] = arith.shli [[B]], [[FOUR]] : i8
// LOOPS-NEXT: [[LO:%[0-9]+]] = arith.shrsi [[UP]], [[FOUR]] : i8
// LOOPS:      [[ODD:%[0-9]+]] = arith.andi [[I]], {{%[0-9]+}} : index
// LOOPS:      [[TEST:%[0-9]+]] = arith.cmpi ne, [[ODD]], {{%[0-9]+}} : index
// LOOPS-NEXT: arith.select [[TEST]], [[HI]], [[LO]] : i8

// CCODE:      static const int8_t p_W[3] = {
// CCODE-NEXT:     -28, 38, -77,
// CCODE:      const int8_t [[B:v[0-9]*]] = p_W[([[I:v[0-9]*]] >> 1)];
// CCODE-NEXT: {{.*}}((([[I]] & 1) != 0) ? ([[B]] >> 4) : ((int8_t)((unsigned)[[B]] << 4) >> 4))

// MAXSCALE: error: quantize: weight-bits 4 needs data-driven scales (a scale per output channel)
// POSIT: error: quantize: weight-bits=4 is for repr=fixed or repr=zero-skew, not posit
