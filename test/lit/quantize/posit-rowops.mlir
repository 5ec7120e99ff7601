// Softmax and L2 normalisation in the posit and bfloat16 representations: the same
// num ops as float32, on the program's one element type (no scales, no rescale).
// RUN: minun-opt %s -p 'quantize{repr=posit bits=16 es=1}' | filecheck %s
// RUN: minun-opt %s -p 'quantize{repr=bfloat16}' | filecheck %s --check-prefix=BF16

func.func @main() -> tensor<4x3xf32> {
  %x = minun.input "X" [-2.0, 2.0] : tensor<1x2x2x3xf32>
  %n = minun.normalise_l2 %x : (tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  %r = minun.reshape %n {order = array<i64: 0, 1, 2, 3>} : tensor<1x2x2x3xf32> -> tensor<4x3xf32>
  %s = minun.softmax %r {axis = 1 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %s : tensor<4x3xf32>
}
// CHECK:     %n = num.normalise_l2 %x : tensor<1x2x2x3x!num.posit<16, 1>> -> tensor<1x2x2x3x!num.posit<16, 1>>
// CHECK:     %s = num.softmax %r : tensor<4x3x!num.posit<16, 1>> -> tensor<4x3x!num.posit<16, 1>>
// CHECK-NOT: num.rescale
// BF16:      %n = num.normalise_l2 %x : tensor<1x2x2x3xbf16> -> tensor<1x2x2x3xbf16>
// BF16:      %s = num.softmax %r : tensor<4x3xbf16> -> tensor<4x3xbf16>
