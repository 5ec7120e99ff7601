// The zero-skew int8 representation (TFLite's affine quantization): scale and zero point
// of every value from its profiled range (nudged to include 0), symmetric int8 weights,
// the bias in int32 at the accumulator's scale, num.requantize with QuantizeMultiplier's
// integers; sigmoid at TFLite's fixed output quantization; an add of two int8 values by
// TFLite's ADD kernel (left shift 20).
// RUN: minun-opt %s -p 'quantize{repr=zero-skew bits=8}' | filecheck %s
// RUN: not minun-opt %s -p 'quantize{repr=zero-skew bits=16}' 2>&1 | filecheck %s --check-prefix=BITS

func.func @main() -> i32 {
  %X = minun.input "X" [-4.0, 4.0] {profile = array<f64: -3.583, 2.391>} : tensor<2x1xf32>
  %W1 = minun.param "W1" [-1.1, 1.1] dense<[[0.0421, 0.1948], [1.021, -0.827]]> : tensor<2x2xf32>
  %B1 = minun.param "B1" [-1.0, 1.0] dense<[[-0.032], [0.619]]> : tensor<2x1xf32>
  %t1 = minun.matmul %W1, %X {profile = array<f64: -0.5973, 5.4044>} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %t2 = minun.add %t1, %B1 {profile = array<f64: -0.6293, 6.0234>} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %t3 = minun.sigmoid %t2 {profile = array<f64: 0.3, 0.99>} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %t4 = minun.add %t3, %X {profile = array<f64: -3.0, 3.0>} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %a = minun.argmax %t4 : tensor<2x1xf32>
  func.return %a : i32
}
// By hand. The profiled ends are first rounded outward to 12 significant bits
// (3.583 = 0.89575 * 2^2: ceil(0.89575 * 4096) / 4096 * 4 = 3.5830078; 2.391 -> 2.3916016).
// X: s = (2.3916016 + 3.5830078) / 255 = 0.0234298, zp = round(-128 + 3.5830078 / s) =
// round(24.92) = 25.
// CHECK:      %X = num.input "X" : tensor<2x1x!num.affine<8, 0.0234298{{[0-9]*}}, 25>>
// W1: s = 1.021 / 127 = 0.00803937, q = round(w / s): 0.0421 -> 5.24 -> 5, 0.1948 -> 24.2
// -> 24, 1.021 -> 127, -0.827 -> -102.87 -> -103.
// CHECK-NEXT: %W1 = num.param "W1" dense<{{\[\[}}5, 24], [127, -103]]> : tensor<2x2xi8> -> tensor<2x2x!num.affine<8, 0.0080393{{[0-9]*}}, 0>>
// The matmul sums (w - 0)(x - 25) in int32 at scale 0.00803937 * 0.0234298 = 1.88361e-4;
// the bias is stored there: -0.032 / 1.88361e-4 = -169.9 -> -170, 0.619 -> 3286.2 -> 3286.
// CHECK-NEXT: %t1 = num.matmul %W1, %X {{.*}} -> tensor<2x1x!num.affine<32, 0.00018836{{[0-9]*}}, 0>>
// CHECK-NEXT: %{{.*}} = num.param "B1_acc" dense<{{\[\[}}-170], [3286]]> : tensor<2x1xi32>
// CHECK-NEXT: %[[S:.*]] = num.add %t1, %{{.*}} -> tensor<2x1x!num.affine<32, 0.00018836{{[0-9]*}}, 0>>
// t2: ends -0.6293945 and 6.0234375, s = 6.6528320 / 255 = 0.0260895, zp =
// round(-128 + 0.6293945 / s) = round(-103.88) = -104; multiplier 1.88361e-4 / 0.0260895 =
// 0.00721980 = 0.924134 * 2^-7: round(0.924134 * 2^31) = 1.98456e9, shift -7.
// CHECK-NEXT: %t2 = num.requantize %[[S]] {multiplier = 19845{{[0-9][0-9][0-9][0-9][0-9]}} : i64, shift = -7 : i64, left_shift = 0 : i64} : {{.*}} -> tensor<2x1x!num.affine<8, 0.0260895{{[0-9]*}}, -104>>
// sigmoid: TFLite's output quantization, scale 1/256 = 0.00390625, zero point -128.
// CHECK-NEXT: %t3 = num.sigmoid %t2 : {{.*}} -> tensor<2x1x!num.affine<8, 0.00390625, -128>>
// ADD: both to int32 at 2 max(0.00390625, 0.0234298) / 2^20 = 4.46889e-8 after a left shift
// of 20: t3's multiplier 0.00390625 / 0.0468597 = 0.0833606 = 0.666885 * 2^-3, times 2^31
// = 1.43212e9; X's 1/2 = 0.5 * 2^0 (2^30, shift 0).
// CHECK-NEXT: %{{.*}} = num.requantize %t3 {multiplier = 14321{{[0-9][0-9][0-9][0-9][0-9]}} : i64, shift = -3 : i64, left_shift = 20 : i64} : {{.*}} -> tensor<2x1x!num.affine<32, 4.46888{{[0-9]*}}e-08, 0>>
// CHECK-NEXT: %{{.*}} = num.requantize %X {multiplier = 1073741824 : i64, shift = 0 : i64, left_shift = 20 : i64}
// CHECK-NEXT: num.add
// t4: s = 6 / 255 = 0.0235294, zp = round(-128 + 3 / s) = round(-0.5) = -1 (away from 0).
// CHECK-NEXT: %t4 = num.requantize {{.*}} -> tensor<2x1x!num.affine<8, 0.0235294{{[0-9]*}}, -1>>
// CHECK-NEXT: %a = num.argmax %t4
// BITS: error: quantize: bits must be 8 (int8 values, int32 accumulators), got 16
