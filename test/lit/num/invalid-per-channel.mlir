// Malformed per-channel scales are rejected with the op, the parameter and the numbers.
// RUN: minun-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @f(%x: tensor<1x3x!num.fixed<8, 5>>) -> tensor<1x2x!num.fixed<16, 4>> {
  %w = num.param "W" {channel_axis = 1 : i64, channel_scales = array<i64: 7, 9, 8>} dense<0> : tensor<3x2xi8> -> tensor<3x2x!num.fixed<8, 7>>
  %y = num.matmul %x, %w {rounding = #num<rounding trunc>, halvings = 0 : i64, channel_shifts = array<i64: 8, 10>} : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 7>>) -> tensor<1x2x!num.fixed<16, 4>>
  func.return %y : tensor<1x2x!num.fixed<16, 4>>
}
// CHECK: error: num.param "W": 3 channel scales for 2 channels (axis 1)

// -----
func.func @f(%x: tensor<1x3x!num.fixed<8, 5>>) -> tensor<1x2x!num.fixed<16, 4>> {
  %w = num.param "W" {channel_axis = 1 : i64, channel_scales = array<i64: 7, 9>} dense<0> : tensor<3x2xi8> -> tensor<3x2x!num.fixed<8, 9>>
  %y = num.matmul %x, %w {rounding = #num<rounding trunc>, halvings = 0 : i64, channel_shifts = array<i64: 8, 10>} : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 9>>) -> tensor<1x2x!num.fixed<16, 4>>
  func.return %y : tensor<1x2x!num.fixed<16, 4>>
}
// CHECK: error: num.param "W": the element scale must be the lowest channel scale, 7, got 9

// -----
func.func @f(%x: tensor<1x3x!num.fixed<8, 5>>) -> tensor<1x2x!num.fixed<16, 4>> {
  %w = num.param "W" {channel_axis = 1 : i64, channel_scales = array<i64: 7, 9>} dense<0> : tensor<3x2xi8> -> tensor<3x2x!num.fixed<8, 7>>
  // 5 + 9 - 9 = 5, not 4
  %y = num.matmul %x, %w {rounding = #num<rounding trunc>, halvings = 0 : i64, channel_shifts = array<i64: 8, 9>} : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 7>>) -> tensor<1x2x!num.fixed<16, 4>>
  func.return %y : tensor<1x2x!num.fixed<16, 4>>
}
// CHECK: error: num.matmul: channel 1: result scale must be 5 + 9 - shift with a shift >= 0, got shift 9 and result scale 4

// -----
func.func @f(%x: tensor<1x3x!num.fixed<8, 5>>) -> tensor<1x2x!num.fixed<8, 4>> {
  %w = num.param "W" {channel_axis = 1 : i64, channel_scales = array<i64: 7, 9>} dense<0> : tensor<3x2xi8> -> tensor<3x2x!num.fixed<8, 7>>
  // a per-channel parameter read as if it had one scale
  %y = num.mul %x, %w : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 7>>) -> tensor<1x2x!num.fixed<8, 4>>
  func.return %y : tensor<1x2x!num.fixed<8, 4>>
}
// CHECK: error: num.param "W": a parameter with per-channel scales may only feed num.matmul / num.conv2d with channel_shifts, not num.mul

// -----
func.func @f(%x: tensor<1x3x!num.fixed<8, 5>>, %w: tensor<3x2x!num.fixed<8, 7>>) -> tensor<1x2x!num.fixed<16, 4>> {
  %y = num.matmul %x, %w {rounding = #num<rounding trunc>, halvings = 0 : i64, channel_shifts = array<i64: 8, 10>} : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 7>>) -> tensor<1x2x!num.fixed<16, 4>>
  func.return %y : tensor<1x2x!num.fixed<16, 4>>
}
// CHECK: error: num.matmul: channel_shifts need an operand that is a num.param with channel_scales

// -----
func.func @f(%x: tensor<1x3x!num.fixed<8, 5>>) -> tensor<1x2x!num.fixed<16, 4>> {
  %w = num.param "W" {channel_axis = 0 : i64, channel_scales = array<i64: 7, 9, 8>} dense<0> : tensor<3x2xi8> -> tensor<3x2x!num.fixed<8, 7>>
  // the rhs's channels are its columns (axis 1), the output channels
  %y = num.matmul %x, %w {rounding = #num<rounding trunc>, halvings = 0 : i64, channel_shifts = array<i64: 8, 10>} : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 7>>) -> tensor<1x2x!num.fixed<16, 4>>
  func.return %y : tensor<1x2x!num.fixed<16, 4>>
}
// CHECK: error: num.matmul: the per-channel operand's channels must be its output channels (lhs axis 0, rhs axis 1, the filter's axis 4 with one group, its axis 0 with one channel per group)

// -----
func.func @f(%x: tensor<1x3x!num.fixed<8, 5>>) -> tensor<1x2x!num.fixed<16, 4>> {
  %w = num.param "W" {channel_axis = 1 : i64, channel_scales = array<i64: 7, 9>} dense<0> : tensor<3x2xi8> -> tensor<3x2x!num.fixed<8, 7>>
  %b = num.param "B" {channel_axis = 0 : i64, channel_scales = array<i64: 12, 13>} dense<0> : tensor<2xi16> -> tensor<2x!num.fixed<16, 12>>
  // the bias must be at the products' scales, 5 + 7 and 5 + 9
  %y = num.matmul %x, %w bias %b {rounding = #num<rounding trunc>, halvings = 0 : i64, channel_shifts = array<i64: 8, 10>} : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 7>>, tensor<2x!num.fixed<16, 12>>) -> tensor<1x2x!num.fixed<16, 4>>
  func.return %y : tensor<1x2x!num.fixed<16, 4>>
}
// CHECK: error: num.matmul: the bias's channel scales must be the products' [12, 14], got [12, 13]

// -----
func.func @f(%x: tensor<1x3x!num.fixed<8, 5>>, %w: tensor<3x2x!num.fixed<8, 7>>, %b: tensor<2x!num.fixed<16, 12>>) -> tensor<1x2x!num.fixed<16, 12>> {
  %y = num.matmul %x, %w bias %b {rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 7>>, tensor<2x!num.fixed<16, 12>>) -> tensor<1x2x!num.fixed<16, 12>>
  func.return %y : tensor<1x2x!num.fixed<16, 12>>
}
// CHECK: error: num.matmul: a bias operand needs channel_shifts

// -----
func.func @f(%x: tensor<1x3x!num.fixed<8, 5>>) -> tensor<1x2x!num.fixed<16, 4>> {
  %w = num.param "W" {channel_axis = 1 : i64, channel_scales = array<i64: 7, 9>} dense<0> : tensor<3x2xi8> -> tensor<3x2x!num.fixed<8, 7>>
  %y = num.matmul %x, %w {rounding = #num<rounding trunc>, halvings = 1 : i64, channel_shifts = array<i64: 8, 10>} : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 7>>) -> tensor<1x2x!num.fixed<16, 4>>
  func.return %y : tensor<1x2x!num.fixed<16, 4>>
}
// CHECK: error: num.matmul: channel_shifts need halvings = 0
