// A 3x3 convolution with padding 1 of a 4x4x2 input into 5 channels, its 2x2 max pool
// fused (lower-to-loops): F[0][ky][kx][ci][co] = 5 * (2 * (3 * ky + kx) + ci) + co - 44.
func.func @main() -> i32 attributes {num.rounding = "trunc", num.overflow = "wrap"} {
  %x = num.input "X" : tensor<1x4x4x2x!num.fixed<16, 14>>
  %f = num.param "F" dense<[[[[[-44,-43,-42,-41,-40],[-39,-38,-37,-36,-35]],[[-34,-33,-32,-31,-30],[-29,-28,-27,-26,-25]],[[-24,-23,-22,-21,-20],[-19,-18,-17,-16,-15]]],[[[-14,-13,-12,-11,-10],[-9,-8,-7,-6,-5]],[[-4,-3,-2,-1,0],[1,2,3,4,5]],[[6,7,8,9,10],[11,12,13,14,15]]],[[[16,17,18,19,20],[21,22,23,24,25]],[[26,27,28,29,30],[31,32,33,34,35]],[[36,37,38,39,40],[41,42,43,44,45]]]]]> : tensor<1x3x3x2x5xi16> -> tensor<1x3x3x2x5x!num.fixed<16, 14>>
  %c = num.conv2d %x, %f {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x4x4x2x!num.fixed<16, 14>>, tensor<1x3x3x2x5x!num.fixed<16, 14>>) -> tensor<1x4x4x5x!num.fixed<32, 28>>
  %r = num.rescale %c {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x4x4x5x!num.fixed<32, 28>> -> tensor<1x4x4x5x!num.fixed<16, 14>>
  %p = num.maxpool %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x5x!num.fixed<16, 14>>) -> tensor<1x2x2x5x!num.fixed<16, 14>>
  %a = num.argmax %p : tensor<1x2x2x5x!num.fixed<16, 14>>
  func.return %a : i32
}
