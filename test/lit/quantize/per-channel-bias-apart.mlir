// Per-channel scales with a bias too large for the 32-bit accumulator at the products'
// scales (the profiles, given by hand, say the products cancel it): the bias stays a
// separate add, and the matmul's narrowing does not saturate for the ReLU after the add
// (saturating before the bias is added would change the sum).
// RUN: minun-opt %s -p 'quantize{bits=8 per-channel=true}' | filecheck %s

func.func @main() -> tensor<2x1xf32> {
  %X = minun.input "X" [-2.0, 2.0] {profile = array<f64: -2.0, 2.0>} : tensor<3x1xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25, 0.75], [0.1, 0.2, -0.3]]> : tensor<2x3xf32>
  %B = minun.param "B" [-1.0e7, 1.0e7] dense<[[524288.0], [-0.6]]> : tensor<2x1xf32>
  %y = minun.matmul %W, %X {profile = array<f64: -3.0, 3.0>} : (tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x1xf32>
  %z = minun.add %y, %B {profile = array<f64: -3.6, 3.3>} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %r = minun.relu %z {profile = array<f64: 0.0, 3.3>} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  func.return %r : tensor<2x1xf32>
}
// With the bias inside, the sum's scale would be the ReLU's GetScale(3.3, 8) = 5, the
// channel scales 7 and 8, and 2^19 at the first channel's product scale 5 + 7 = 12 would
// need 12 + 19 + 2 = 33 bits. Apart, y takes its own profile, GetScale(3, 8) = 5: shifts
// 12 - 5 = 7 and 13 - 5 = 8, the result wrapping (the program's overflow mode); B has
// one scale, GetScale(2^19, 8) = 7 - 20 = -13.
// CHECK:      %W = num.param "W" {channel_axis = 0 : i64, channel_scales = array<i64: 7, 8>}
// CHECK-NEXT: %B = num.param "B" dense<{{.*}}> : tensor<2x1xi8> -> tensor<2x1x!num.fixed<8, -13>>
// CHECK-NEXT: %{{.*}} = num.matmul %W, %X {{{.*}}channel_shifts = array<i64: 7, 8>} : (tensor<2x3x!num.fixed<8, 7>>, tensor<3x1x!num.fixed<8, 5>>) -> tensor<2x1x!num.fixed<16, 5>>
// CHECK-NEXT: %y = num.rescale %{{.*}} {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<2x1x!num.fixed<16, 5>> -> tensor<2x1x!num.fixed<8, 5>>
// CHECK:      num.add
// CHECK:      %r = num.relu
