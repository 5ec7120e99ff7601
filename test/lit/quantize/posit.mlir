// The posit representation: every value one type, !num.posit<16, 2> (or <8, 2>), the
// weights rounded once to their patterns, no rescales and no profile needed; exp keeps
// the posit method (correctly rounded).
// RUN: minun-opt %s -p 'quantize{repr=posit bits=16 es=2}' | filecheck %s
// RUN: minun-opt %s -p 'quantize{repr=posit bits=8 es=2}' | filecheck %s --check-prefix=P8

func.func @main() -> i32 {
  %x = minun.input "X" [-2.0, 2.0] : tensor<3x1xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25, 0.75], [1.0, 160.0, -0.3]]> : tensor<2x3xf32>
  %B = minun.param "B" [-1.0, 1.0] dense<[[0.3], [-0.6]]> : tensor<2x1xf32>
  %y = minun.matmul %W, %x : (tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x1xf32>
  %z = minun.add %y, %B : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %e = minun.exp %z : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %a = minun.argmax %e : tensor<2x1xf32>
  func.return %a : i32
}
// posit<16, 2> by hand: 0.5 = 2^-1 is regime 01 (k = -1), exponent 11, so 0 01 11 0...0 =
// 0x3800 = 14336; 0.25 = 2^-2 has exponent 10: 0x3000, negated -12288; 0.75 = 1.5 * 2^-1
// adds fraction bit 1: 0x3C00 = 15360; 1.0 = 0 10 00 0...0 = 0x4000 = 16384; 160 =
// 1.25 * 2^7 = 16^1 * 2^3 * 1.25: 0 110 11 01 0...0 = 0x6D00 = 27904 (MinUn §2.2).
// CHECK:      %x = num.input "X" : tensor<3x1x!num.posit<16, 2>>
// CHECK-NEXT: %W = num.param "W" dense<{{\[}}[14336, -12288, 15360], [16384, 27904, {{-?[0-9]+}}]]> : tensor<2x3xi16> -> tensor<2x3x!num.posit<16, 2>>
// CHECK-NEXT: %B = num.param "B" {{.*}} -> tensor<2x1x!num.posit<16, 2>>
// CHECK-NEXT: %y = num.matmul %W, %x {{.*}} : (tensor<2x3x!num.posit<16, 2>>, tensor<3x1x!num.posit<16, 2>>) -> tensor<2x1x!num.posit<16, 2>>
// CHECK-NEXT: %z = num.add %y, %B : (tensor<2x1x!num.posit<16, 2>>, tensor<2x1x!num.posit<16, 2>>) -> tensor<2x1x!num.posit<16, 2>>
// CHECK-NEXT: %e = num.exp %z {method = #num<exp_method posit>} : tensor<2x1x!num.posit<16, 2>> -> tensor<2x1x!num.posit<16, 2>>
// CHECK-NEXT: %a = num.argmax %e : tensor<2x1x!num.posit<16, 2>>
// CHECK-NOT:  num.rescale

// posit<8, 2>: the top bytes of the exact patterns above (0x38, -0x30, 0x3C, 0x40, 0x6D)
// P8:      %W = num.param "W" dense<{{\[}}[56, -48, 60], [64, 109, {{-?[0-9]+}}]]> : tensor<2x3xi8> -> tensor<2x3x!num.posit<8, 2>>
