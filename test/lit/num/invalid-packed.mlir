// packed_bits (4-bit weights, formats/int4/weights.py) is verified: 4 only, on a
// per-channel 8-bit weight, every code in [-8, 7].
// RUN: minun-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @f(%x: tensor<1x3x!num.fixed<8, 5>>) -> tensor<1x2x!num.fixed<16, 4>> {
  %w = num.param "W" {channel_axis = 1 : i64, channel_scales = array<i64: 7, 9>, packed_bits = 4 : i64} dense<[[7, -8], [0, 8], [1, 2]]> : tensor<3x2xi8> -> tensor<3x2x!num.fixed<8, 7>>
  %y = num.matmul %x, %w {rounding = #num<rounding trunc>, halvings = 0 : i64, channel_shifts = array<i64: 8, 10>} : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 7>>) -> tensor<1x2x!num.fixed<16, 4>>
  func.return %y : tensor<1x2x!num.fixed<16, 4>>
}
// CHECK: error: num.param "W": packed_bits = 4 but a code lies outside [-8, 7]

// -----
func.func @f(%x: tensor<1x3x!num.fixed<8, 5>>) -> tensor<1x2x!num.fixed<16, 4>> {
  %w = num.param "W" {channel_axis = 1 : i64, channel_scales = array<i64: 7, 9>, packed_bits = 2 : i64} dense<0> : tensor<3x2xi8> -> tensor<3x2x!num.fixed<8, 7>>
  %y = num.matmul %x, %w {rounding = #num<rounding trunc>, halvings = 0 : i64, channel_shifts = array<i64: 8, 10>} : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 7>>) -> tensor<1x2x!num.fixed<16, 4>>
  func.return %y : tensor<1x2x!num.fixed<16, 4>>
}
// CHECK: error: num.param "W": packed_bits must be 4, on a per-channel 8-bit weight

// -----
func.func @f(%x: tensor<1x3x!num.fixed<8, 5>>) -> tensor<1x2x!num.fixed<16, 12>> {
  %w = num.param "W" {packed_bits = 4 : i64} dense<0> : tensor<3x2xi8> -> tensor<3x2x!num.fixed<8, 7>>
  %y = num.matmul %x, %w {rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x3x!num.fixed<8, 5>>, tensor<3x2x!num.fixed<8, 7>>) -> tensor<1x2x!num.fixed<16, 12>>
  func.return %y : tensor<1x2x!num.fixed<16, 12>>
}
// CHECK: error: num.param "W": packed_bits must be 4, on a per-channel 8-bit weight
