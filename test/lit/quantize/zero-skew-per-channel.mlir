// Zero-skew per-channel weights (docs/numerics.md, "The zero-skew int8 representation"):
// each output channel of a matmul's weight symmetric int8 at max |w_c| / 127, the bias in
// int32 at that channel's product scale, and a requantization multiplier per channel.
// Profiles are `profile` attributes; the integers below are worked out by hand.
// RUN: minun-opt %s -p 'quantize{repr=zero-skew bits=8 per-channel=true}' | filecheck %s
// RUN: minun-opt %s -p 'quantize{repr=zero-skew bits=8}' | filecheck %s --check-prefix=TENSOR
// RUN: minun-opt %s --pass-pipeline='builtin.module(quantize{repr=zero-skew bits=8 per-channel=true},lower-to-loops,memory-plan,lower-to-emitc)' -t c | filecheck %s --check-prefix=CCODE

func.func @main() -> tensor<2x1xf32> {
  %X = minun.input "X" [-2.0, 2.0] {profile = array<f64: -2.0, 2.0>} : tensor<3x1xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25, 0.75], [0.1, 0.2, -0.3]]> : tensor<2x3xf32>
  %B = minun.param "B" [-1.0, 1.0] dense<[[0.31], [-0.5]]> : tensor<2x1xf32>
  %y = minun.matmul %W, %X {profile = array<f64: -3.0, 3.0>} : (tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x1xf32>
  %z = minun.add %y, %B {profile = array<f64: -3.6, 3.3>} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  func.return %z : tensor<2x1xf32>
}
// X: [-2, 2] over 255 steps, s = 4/255; zero point -0.5 from either end, rounded away: -1.
// W's rows are its output channels (W X): row 0 at 0.75/127 (0.5 -> 84.67 -> 85,
// -0.25 -> -42.33 -> -42, 127); row 1 at 0.3/127 (0.1 -> 42.33 -> 42, 0.2 -> 84.67 -> 85,
// -127; 0.3 is a float32 in L1, so its scale prints as 0.3f/127); the element type carries
// the larger scale, 0.75/127.
// CHECK:      %X = num.input "X" : tensor<3x1x!num.affine<8, 0.01568627450980392, -1>>
// CHECK-NEXT: %W = num.param "W" {channel_axis = 0 : i64, channel_real_scales = [0.0059055118110236{{[0-9]*}} : f64, 0.00236220{{[0-9]*}} : f64]} dense<{{\[\[}}85, -42, 127], [42, 85, -127]]> : tensor<2x3xi8> -> tensor<2x3x!num.affine<8, 0.005905511811023622, 0>>
// The bias at s_x * s_w[c]: 0.31 / (4/255 * 0.75/127) = 0.31 * 10795 = 3346.45 -> 3346,
// -0.5 / (4/255 * 0.3/127) = -0.5 * 26987.5 = -13493.75 -> -13494.
// CHECK:      num.matmul %W, %X
// CHECK-NEXT: num.param "B_acc" {channel_axis = 0 : i64, channel_real_scales = [{{.*}}]} dense<{{\[\[}}3346], [-13494]]> : tensor<2x1xi32> -> tensor<2x1x!num.affine<32,
// CHECK-NEXT: num.add
// CHECK-NEXT: num.requantize {{.*}} {left_shift = 0 : i64, channel_axis = 0 : i64, channel_real_scales = [{{.*}}], channel_multipliers = array<i64: {{[0-9]+}}, {{[0-9]+}}>, channel_shifts = array<i64: {{-?[0-9]+}}, {{-?[0-9]+}}>}

// One scale for W (0.75/127): row 1 keeps fewer levels (0.1 -> 16.93 -> 17, 34, -51).
// TENSOR:      %W = num.param "W" dense<{{\[\[}}85, -42, 127], [17, 34, -51]]>
// TENSOR:      num.requantize {{.*}} {multiplier =

// In the C, the multipliers (int32) and shifts (int8) are constant tables indexed by the
// channel:
// CCODE: static const int32_t zs_requantize2_multiplier[2] = {
// CCODE: static const int8_t zs_requantize2_shift[2] = {
// CCODE: minun_zs_mbqm({{.*}}zs_requantize2_multiplier[i]{{.*}}
