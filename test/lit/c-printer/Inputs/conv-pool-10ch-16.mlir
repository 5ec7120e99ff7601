// A 3x3 convolution with padding 1 of a 4x4x2 input into 10 channels, its 2x2 max pool
// fused (lower-to-loops): F[0][ky][kx][ci][co] = 10 * (2 * (3 * ky + kx) + ci) + co - 89.
func.func @main() -> i32 attributes {num.rounding = "trunc", num.overflow = "wrap"} {
  %x = num.input "X" : tensor<1x4x4x2x!num.fixed<16, 14>>
  %f = num.param "F" dense<[[[[[-89,-88,-87,-86,-85,-84,-83,-82,-81,-80],[-79,-78,-77,-76,-75,-74,-73,-72,-71,-70]],[[-69,-68,-67,-66,-65,-64,-63,-62,-61,-60],[-59,-58,-57,-56,-55,-54,-53,-52,-51,-50]],[[-49,-48,-47,-46,-45,-44,-43,-42,-41,-40],[-39,-38,-37,-36,-35,-34,-33,-32,-31,-30]]],[[[-29,-28,-27,-26,-25,-24,-23,-22,-21,-20],[-19,-18,-17,-16,-15,-14,-13,-12,-11,-10]],[[-9,-8,-7,-6,-5,-4,-3,-2,-1,0],[1,2,3,4,5,6,7,8,9,10]],[[11,12,13,14,15,16,17,18,19,20],[21,22,23,24,25,26,27,28,29,30]]],[[[31,32,33,34,35,36,37,38,39,40],[41,42,43,44,45,46,47,48,49,50]],[[51,52,53,54,55,56,57,58,59,60],[61,62,63,64,65,66,67,68,69,70]],[[71,72,73,74,75,76,77,78,79,80],[81,82,83,84,85,86,87,88,89,90]]]]]> : tensor<1x3x3x2x10xi16> -> tensor<1x3x3x2x10x!num.fixed<16, 14>>
  %c = num.conv2d %x, %f {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x4x4x2x!num.fixed<16, 14>>, tensor<1x3x3x2x10x!num.fixed<16, 14>>) -> tensor<1x4x4x10x!num.fixed<32, 28>>
  %r = num.rescale %c {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x4x4x10x!num.fixed<32, 28>> -> tensor<1x4x4x10x!num.fixed<16, 14>>
  %p = num.maxpool %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x10x!num.fixed<16, 14>>) -> tensor<1x2x2x10x!num.fixed<16, 14>>
  %a = num.argmax %p : tensor<1x2x2x10x!num.fixed<16, 14>>
  func.return %a : i32
}
