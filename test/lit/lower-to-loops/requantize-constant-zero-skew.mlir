// A zero-skew requantization of a constant (here TFLite ADD's first step on a parameter:
// left shift 20, multiplier 2^30, shift 0) is computed at compile time into a constant
// global read instead of the parameter; the input's requantization stays the one
// minun_zs_mbqm call. By hand: the
// stored B = [7, -3, 127] at zero point 5 are d = [2, -8, 122]; d * 2^20 times 2^30 / 2^31
// (SaturatingRoundingDoublingHighMul, exact: d * 2^20 is even) is d * 2^19 =
// [1048576, -4194304, 63963136].
// RUN: minun-opt %s -p lower-to-loops | filecheck %s

func.func @main() -> i32 {
  %x = num.input "X" : tensor<3x!num.affine<8, 0.5, 5>>
  %rx = num.requantize %x {multiplier = 1073741824 : i64, shift = 0 : i64, left_shift = 20 : i64} : tensor<3x!num.affine<8, 0.5, 5>> -> tensor<3x!num.affine<32, 9.5367431640625e-07, 0>>
  %b = num.param "B" dense<[7, -3, 127]> : tensor<3xi8> -> tensor<3x!num.affine<8, 0.5, 5>>
  %r = num.requantize %b {multiplier = 1073741824 : i64, shift = 0 : i64, left_shift = 20 : i64} : tensor<3x!num.affine<8, 0.5, 5>> -> tensor<3x!num.affine<32, 9.5367431640625e-07, 0>>
  %s = num.add %rx, %r : (tensor<3x!num.affine<32, 9.5367431640625e-07, 0>>, tensor<3x!num.affine<32, 9.5367431640625e-07, 0>>) -> tensor<3x!num.affine<32, 9.5367431640625e-07, 0>>
  %a = num.argmax %s : tensor<3x!num.affine<32, 9.5367431640625e-07, 0>>
  func.return %a : i32
}
// CHECK:     memref.global{{.*}}"p_B_rq"{{.*}}dense<[1048576, -4194304, 63963136]> : tensor<3xi32>
// CHECK:     func.func @minun_predict
// CHECK-NOT: memref.load %p_B[
// CHECK-COUNT-1: func.call @minun_zs_mbqm
// CHECK-NOT: func.call @minun_zs_mbqm
// CHECK-NOT: memref.load %p_B[
