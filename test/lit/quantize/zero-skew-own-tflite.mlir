// Zero-skew on a TFLite model (`minun.requantize = "tflite"` on its function): the same
// program as zero-skew-own.mlir keeps TFLite's integers, ADD/SUB's left shift of 20, a
// product's int8 requantization and no folded factor.
// RUN: minun-opt %s -p 'quantize{repr=zero-skew bits=8}' | filecheck %s

func.func @main() -> i32 attributes {minun.requantize = "tflite"} {
  %X = minun.input "X" [-1.0, 1.0] {profile = array<f64: -1.0, 1.0>} : tensor<2x1xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25], [1.0, 0.75]]> : tensor<2x2xf32>
  %B = minun.param "B" [-1.0, 1.0] dense<[[[0.5], [0.25]], [[-0.5], [0.75]], [[1.0], [-1.0]]]> : tensor<3x2x1xf32>
  %Z = minun.param "Z" [-1.0, 1.0] dense<[[[0.5], [-0.5]], [[0.25], [1.0]], [[-1.0], [0.5]]]> : tensor<3x2x1xf32>
  %g2 = minun.constant dense<2.5> : tensor<f32>
  %WX = minun.matmul %W, %X {profile = array<f64: -1.75, 1.75>} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %res = minun.sum (%i = 0 to 3) {profile = array<f64: -2.0, 2.0>} : tensor<2x1xf32> {
    %b = minun.index %B[%i] : tensor<3x2x1xf32> -> tensor<2x1xf32>
    %del = minun.sub %WX, %b {profile = array<f64: -2.75, 2.75>} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
    %z = minun.index %Z[%i] : tensor<3x2x1xf32> -> tensor<2x1xf32>
    %n = minun.neg %g2 : (tensor<f32>) -> tensor<f32>
    %t = minun.transpose %del {perm = array<i64: 1, 0>} : (tensor<2x1xf32>) -> tensor<1x2xf32>
    %d2 = minun.matmul %t, %del {profile = array<f64: 0.0, 15.0>} : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
    %a = minun.scalar_mul %n, %d2 {profile = array<f64: -37.5, 0.0>} : (tensor<f32>, tensor<1x1xf32>) -> tensor<1x1xf32>
    %e = minun.exp %a {profile = array<f64: 0.0, 1.0>} : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %s = minun.matmul %z, %e {profile = array<f64: -1.0, 1.0>} : (tensor<2x1xf32>, tensor<1x1xf32>) -> tensor<2x1xf32>
    minun.yield %s : tensor<2x1xf32>
  }
  %r = minun.argmax %res : tensor<2x1xf32>
  func.return %r : i32
}
// CHECK:      num.requantize {{.*}}left_shift = 20 : i64}
// CHECK:      %res = minun.loop
// CHECK-NOT:    factor
// CHECK-NOT:    num.lut
// CHECK:        num.sub {{.*}}!num.affine<32
// CHECK:        num.mul
// CHECK:        num.exp
// CHECK:      num.argmax
