// Per-channel weight scales: a num.param with channel_axis/channel_scales feeding a
// num.matmul / num.conv2d with channel_shifts (and a per-channel bias), in custom form:
// printing and re-parsing gives the same text, and the generic form round-trips to it.
// RUN: minun-opt %s > %t.1.mlir
// RUN: minun-opt %t.1.mlir > %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir
// RUN: minun-opt %s --print-op-generic | minun-opt > %t.3.mlir
// RUN: diff %t.1.mlir %t.3.mlir
// RUN: filecheck %s < %t.1.mlir
// RUN: minun-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @main() -> (tensor<1x2x!num.fixed<16, 4>>, tensor<1x2x2x2x!num.fixed<32, 6>>) attributes {num.rounding = "trunc"} {
  %x = num.input "X" : tensor<1x3x!num.fixed<8, 5>>
  // channel scales 7 and 9 (the element type: the lower), products at 5 + 7 and 5 + 9
  // CHECK: %w = num.param "W" {channel_axis = 1 : i64, channel_scales = array<i64: 7, 9>} dense<{{.*}}> : tensor<3x2xi8> -> tensor<3x2x!num.fixed<8, 7>>
  %w = num.param "W" {channel_axis = 1 : i64, channel_scales = array<i64: 7, 9>} dense<[[64, -100], [1, 2], [-3, 4]]> : tensor<3x2xi8> -> tensor<3x2x!num.fixed<8, 7>>
  %b = num.param "B" {channel_axis = 0 : i64, channel_scales = array<i64: 12, 14>} dense<[100, -2000]> : tensor<2xi16> -> tensor<2x!num.fixed<16, 12>>
  // shifts 12 - 4 and 14 - 4 bring both channels to scale 4
  // CHECK: %y = num.matmul %x, %w bias %b {rounding = #num<rounding trunc>, halvings = 0 : i64, channel_shifts = array<i64: 8, 10>} : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 7>>, tensor<2x!num.fixed<16, 12>>) -> tensor<1x2x!num.fixed<16, 4>>
  // GENERIC: %y = "num.matmul"(%x, %w, %b) {rounding = #num<rounding trunc>, halvings = 0 : i64, channel_shifts = array<i64: 8, 10>} : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 7>>, tensor<2x!num.fixed<16, 12>>) -> tensor<1x2x!num.fixed<16, 4>>
  %y = num.matmul %x, %w bias %b {rounding = #num<rounding trunc>, halvings = 0 : i64, channel_shifts = array<i64: 8, 10>} : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 7>>, tensor<2x!num.fixed<16, 12>>) -> tensor<1x2x!num.fixed<16, 4>>
  %img = num.input "I" : tensor<1x2x2x1x!num.fixed<8, 6>>
  %f = num.param "F" {channel_axis = 4 : i64, channel_scales = array<i64: 6, 8>} dense<[[[[[10, 20]]]]]> : tensor<1x1x1x1x2xi8> -> tensor<1x1x1x1x2x!num.fixed<8, 6>>
  // a convolution without a bias: products at 6 + 6 and 6 + 8, shifts 6 and 8
  // CHECK: %c = num.conv2d %img, %f {{{.*}}channel_shifts = array<i64: 6, 8>{{.*}}} : (tensor<1x2x2x1x!num.fixed<8, 6>>, tensor<1x1x1x1x2x!num.fixed<8, 6>>) -> tensor<1x2x2x2x!num.fixed<32, 6>>
  %c = num.conv2d %img, %f {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64, halvings = 0 : i64, channel_shifts = array<i64: 6, 8>, rounding = #num<rounding trunc>} : (tensor<1x2x2x1x!num.fixed<8, 6>>, tensor<1x1x1x1x2x!num.fixed<8, 6>>) -> tensor<1x2x2x2x!num.fixed<32, 6>>
  func.return %y, %c : tensor<1x2x!num.fixed<16, 4>>, tensor<1x2x2x2x!num.fixed<32, 6>>
}
