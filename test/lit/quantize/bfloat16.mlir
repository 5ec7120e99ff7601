// The bfloat16 representation: every value bf16, stored as a 16-bit key whose integer
// order is the values' (the pattern, with a negative's magnitude bits flipped); the same
// ops as float32, each rounded to bfloat16 once.
// RUN: minun-opt %s -p 'quantize{repr=bfloat16}' | filecheck %s

func.func @main() -> i32 {
  %x = minun.input "X" [-2.0, 2.0] : tensor<3x1xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[1.0, -1.0, 0.5], [-0.5, 3.0, 1.00390625]]> : tensor<2x3xf32>
  %y = minun.matmul %W, %x : (tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x1xf32>
  %e = minun.exp %y : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %a = minun.argmax %e : tensor<2x1xf32>
  func.return %a : i32
}
// By hand: 1.0 = 0x3F80 = 16256; -1.0 = 0xBF80, key 0xBF80 ^ 0x7FFF = 0xC07F = -16257;
// 0.5 = 0x3F00 = 16128; -0.5 = 0xBF00 -> 0xC0FF = -16129; 3.0 = 0x4040 = 16448;
// 1.00390625 = 1 + 2^-8 lies half way between 0x3F80 and 0x3F81: ties to even, 16256.
// CHECK:      %x = num.input "X" : tensor<3x1xbf16>
// CHECK-NEXT: %W = num.param "W" dense<{{\[}}[16256, -16257, 16128], [-16129, 16448, 16256]]> : tensor<2x3xi16> -> tensor<2x3xbf16>
// CHECK-NEXT: %y = num.matmul %W, %x {{.*}} : (tensor<2x3xbf16>, tensor<3x1xbf16>) -> tensor<2x1xbf16>
// CHECK-NEXT: %e = num.exp %y {method = #num<exp_method float>} : tensor<2x1xbf16> -> tensor<2x1xbf16>
// CHECK-NEXT: %a = num.argmax %e : tensor<2x1xbf16>
