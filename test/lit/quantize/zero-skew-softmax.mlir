// Zero-skew softmax: the input narrowed to int8, probabilities out at (1/255, -128) so
// that 1.0 is a code (127); TFLite's (1/256, -128) stops at 255/256 = 0.996.
// RUN: minun-opt %s -p 'quantize{repr=zero-skew bits=8}' | filecheck %s

func.func @main() -> tensor<1x3xf32> {
  %X = minun.input "X" [-4.0, 4.0] {profile = array<f64: -4.0, 4.0>} : tensor<1x3xf32>
  %s = minun.softmax %X {axis = 1 : i64, profile = array<f64: 0.0, 1.0>} : (tensor<1x3xf32>) -> tensor<1x3xf32>
  func.return %s : tensor<1x3xf32>
}
// 1/255 = 0.00392156862745098
// CHECK: %s = num.softmax %X : tensor<1x3x!num.affine<8, {{.*}}>> -> tensor<1x3x!num.affine<8, 0.00392156862745098, -128>>
