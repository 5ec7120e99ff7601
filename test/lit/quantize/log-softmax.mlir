// LogSoftmax in every representation. Fixed point without a profile: the input
// [-1, 1] at 16 bits gets scale 14 (GetScale(1) = 15 - 1); the result's magnitude is at
// most |x - m| + ln n <= 2^(16 - 14) + ln 4 = 5.39, whose GetScale is 15 - 3 = 12 (capped
// at the input's 14 and the log's 16). posit, bfloat16, float32: the program's type.
// RUN: minun-opt %s -p 'quantize{bits=16}' | filecheck %s
// RUN: minun-opt %s -p 'quantize{repr=posit bits=16 es=1}' | filecheck %s --check-prefix=POSIT
// RUN: minun-opt %s -p 'quantize{repr=bfloat16}' | filecheck %s --check-prefix=BF16
// RUN: minun-opt %s -p 'quantize{repr=float32}' | filecheck %s --check-prefix=F32
// RUN: minun-opt %s -p 'quantize{bits=16},lower-to-loops' | filecheck %s --check-prefix=LOOPS
// RUN: minun-opt %s -p 'quantize{repr=zero-skew bits=8 synthetic=8}' | filecheck %s --check-prefix=ZS

func.func @main() -> tensor<2x4xf32> {
  %x = minun.input "X" [-1.0, 1.0] : tensor<2x4xf32>
  %s = minun.log_softmax %x {axis = 1 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %s : tensor<2x4xf32>
}
// CHECK:  %x = num.input "X" : tensor<2x4x!num.fixed<16, 14>>
// CHECK:  %s = num.log_softmax %x : tensor<2x4x!num.fixed<16, 14>> -> tensor<2x4x!num.fixed<16, 12>>
// POSIT:  %s = num.log_softmax %x : tensor<2x4x!num.posit<16, 1>> -> tensor<2x4x!num.posit<16, 1>>
// BF16:   %s = num.log_softmax %x : tensor<2x4xbf16> -> tensor<2x4xbf16>
// F32:    %s = num.log_softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// ZS:     %s = num.log_softmax %{{.*}} : tensor<2x4x!num.affine<8, {{[0-9.e-]+}}, {{-?[0-9]+}}>> -> tensor<2x4x!num.affine<8, {{[0-9.e-]+}}, 127>>

// Fixed point in loops: per row the max, Shiftry's 16-bit exp table on (x - max) brought
// from scale 14 to the table's 11 (saturated), a 64-bit sum, its log at scale 16 by
// minun_lnsum(sum, 14) (the table's output scale), then (x - max) - log at t = 16 (x - max
// shifted left by 2) narrowed to scale 12: a right shift by 4, saturated to 16 bits.
// LOOPS:      func.func private @minun_exp16_trunc(i16) -> i16
// LOOPS:      func.func private @minun_lnsum(i64, i32) -> i32
// LOOPS:      arith.maxsi
// LOOPS:      %{{.*}} = scf.for {{.*}} -> (i64) {
// LOOPS:        func.call @minun_exp16_trunc(
// LOOPS:      %[[L:.*]] = func.call @minun_lnsum(%{{.*}}, %{{.*}}) : (i64, i32) -> i32
// LOOPS:      scf.for
// LOOPS:        arith.shli %{{.*}}, %{{.*}} : i64
// LOOPS:        arith.subi
// LOOPS:        arith.shrsi
