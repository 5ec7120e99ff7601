// Per-channel scales on a depthwise convolution (one output channel per group): the
// channels are the filter's group axis (axis 0).
// RUN: minun-opt %s -p 'quantize{bits=8 per-channel=true}' | filecheck %s

func.func @main() -> tensor<1x2x2x2xf32> {
  %X = minun.input "X" [-1.0, 1.0] {profile = array<f64: -1.0, 1.0>} : tensor<1x2x2x2xf32>
  %F = minun.param "F" [-1.0, 1.0] dense<[[[[[0.9]]]], [[[[0.1]]]]]> : tensor<2x1x1x1x1xf32>
  %y = minun.conv2d %X, %F {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64, profile = array<f64: -0.9, 0.9>} : (tensor<1x2x2x2xf32>, tensor<2x1x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}
// X: GetScale(1, 8) = 7 - floor(log2 1 + 1) = 6. Channel 0's weight 0.9 at GetScale 7
// (0.9 * 128 = 115.2 -> 115), channel 1's 0.1 at 7 - floor(log2 0.1 + 1) = 10
// (0.1 * 1024 = 102.4 -> 102). y: GetScale(0.9, 8) = 7; shifts 6 + 7 - 7 = 6 and
// 6 + 10 - 7 = 9, in a 32-bit accumulator (8 + 9 bits do not fit 16).
// CHECK:      %F = num.param "F" {channel_axis = 0 : i64, channel_scales = array<i64: 7, 10>} dense<{{\[\[\[\[\[}}115]]]], {{\[\[\[\[}}102]]]]]> : tensor<2x1x1x1x1xi8> -> tensor<2x1x1x1x1x!num.fixed<8, 7>>
// CHECK:      num.conv2d %X, %F {{{.*}}groups = 2 : i64{{.*}}channel_shifts = array<i64: 6, 9>} : (tensor<1x2x2x2x!num.fixed<8, 6>>, tensor<2x1x1x1x1x!num.fixed<8, 7>>) -> tensor<1x2x2x2x!num.fixed<32, 7>>
