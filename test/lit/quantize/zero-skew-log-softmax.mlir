// Zero-skew log_softmax: int8 in and out, both calibrated from the profile. The input
// [-3.5, 2.5]: scale 6/255 = 0.023529411764705882, zero point round(127 - 2.5 / s) =
// round(20.75) = 21 (the candidate from the max has the smaller error, 233.25 < 276.75).
// The output [-8, 0]: scale 8/255 = 0.03137254901960784, zero point 127 (the real 0 is
// the top code). In loops: softmax's int32 table summed per row, minun_lnsum, the int64
// product and minun_zs_mbqm per element.
// RUN: minun-opt %s -p 'quantize{repr=zero-skew bits=8}' | filecheck %s
// RUN: minun-opt %s -p 'quantize{repr=zero-skew bits=8},lower-to-loops' | filecheck %s --check-prefix=LOOPS

func.func @main() -> tensor<1x3xf32> {
  %X = minun.input "X" [-4.0, 4.0] {profile = array<f64: -3.5, 2.5>} : tensor<1x3xf32>
  %s = minun.log_softmax %X {axis = 1 : i64, profile = array<f64: -8.0, 0.0>} : (tensor<1x3xf32>) -> tensor<1x3xf32>
  func.return %s : tensor<1x3xf32>
}
// CHECK: %X = num.input "X" : tensor<1x3x!num.affine<8, 0.023529411764705882, 21>>
// CHECK: %s = num.log_softmax %X : tensor<1x3x!num.affine<8, 0.023529411764705882, 21>> -> tensor<1x3x!num.affine<8, 0.03137254901960784, 127>>
// The table's first entry T[0] = exp(0) 2^K with K = 30 - bitlen(3 - 1) = 28: 0x10000000,
// stored little-endian.
// LOOPS:     "memref.global"() <{sym_name = "zs_softmax_table", type = memref<256xi32>, initial_value = dense<"0x00000010
// LOOPS:     func.call @minun_lnsum(%{{.*}}, %{{.*}}) : (i64, i32) -> i32
// LOOPS:     arith.muli %{{.*}}, %{{.*}} overflow<nsw> : i64
// LOOPS:     func.call @minun_zs_mbqm(
