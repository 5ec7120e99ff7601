// Per-channel weight scales (docs/numerics.md): each output channel of a matmul's weight
// at the GetScale of its own largest magnitude, the bias added in the accumulator at each
// channel's product scale, one shift per channel to the result's scale. Profiles are
// given as `profile` attributes; every number below is worked out by hand.
// RUN: minun-opt %s -p 'quantize{bits=8 per-channel=true}' | filecheck %s
// RUN: minun-opt %s -p 'quantize{bits=8}' | filecheck %s --check-prefix=TENSOR
// RUN: minun-opt %s --pass-pipeline='builtin.module(quantize{bits=8 per-channel=true},lower-to-loops,memory-plan,lower-to-emitc)' -t c | filecheck %s --check-prefix=CCODE
// RUN: not minun-opt %s -p 'quantize{bits=8 per-channel=true scales=maxscale maxscale=4}' 2>&1 | filecheck %s --check-prefix=ERR

func.func @main() -> tensor<2x1xf32> {
  %X = minun.input "X" [-2.0, 2.0] {profile = array<f64: -2.0, 2.0>} : tensor<3x1xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25, 0.75], [0.1, 0.2, -0.3]]> : tensor<2x3xf32>
  %B = minun.param "B" [-1.0, 1.0] dense<[[0.3], [-0.6]]> : tensor<2x1xf32>
  %y = minun.matmul %W, %X {profile = array<f64: -3.0, 3.0>} : (tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x1xf32>
  %z = minun.add %y, %B {profile = array<f64: -3.6, 3.3>} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  func.return %z : tensor<2x1xf32>
}
// X: GetScale(2, 8) = 7 - floor(log2 2 + 1) = 5.
// W's rows are its output channels (W X): row 0's largest |w| is 0.75, GetScale 7
// (0.5 * 2^7 = 64, -32, 96); row 1's is 0.3, GetScale 8 (0.1 * 2^8 = 25.6 -> 25 toward
// zero, 51.2 -> 51, -76.8 -> -76). The element type carries the lower scale, 7.
// CHECK:      %X = num.input "X" : tensor<3x1x!num.fixed<8, 5>>
// CHECK-NEXT: %W = num.param "W" {channel_axis = 0 : i64, channel_scales = array<i64: 7, 8>} dense<{{\[\[}}64, -32, 96], [25, 51, -76]]> : tensor<2x3xi8> -> tensor<2x3x!num.fixed<8, 7>>
// The bias at the products' scales 5 + 7 = 12 and 5 + 8 = 13: 0.3 * 2^12 = 1228.8 -> 1228,
// -0.6 * 2^13 = -4915.2 -> -4915 (14 bits: a 16-bit accumulator holds it).
// CHECK-NEXT: %B = num.param "B" {channel_axis = 0 : i64, channel_scales = array<i64: 12, 13>} dense<[1228, -4915]> : tensor<2xi16> -> tensor<2x!num.fixed<16, 12>>
// The sum's scale: GetScale(3.6, 8) = 7 - floor(log2 3.6 + 1) = 5 (the add's profile: the
// add is done inside the matmul); shifts 12 - 5 = 7 and 13 - 5 = 8.
// CHECK-NEXT: %{{.*}} = num.matmul %W, %X bias %B {rounding = #num<rounding trunc>, halvings = 0 : i64, channel_shifts = array<i64: 7, 8>} : (tensor<2x3x!num.fixed<8, 7>>, tensor<3x1x!num.fixed<8, 5>>, tensor<2x!num.fixed<16, 12>>) -> tensor<2x1x!num.fixed<16, 5>>
// CHECK-NEXT: %{{.*}} = num.rescale %{{.*}} {{.*}} : tensor<2x1x!num.fixed<16, 5>> -> tensor<2x1x!num.fixed<8, 5>>
// CHECK-NEXT: func.return

// One scale for W (GetScale(0.75, 8) = 7): row 1 is stored with one bit less
// (0.1 * 2^7 = 12.8 -> 12, 25, -38), and the bias is added after the matmul.
// TENSOR:      %W = num.param "W" dense<{{\[\[}}64, -32, 96], [12, 25, -38]]> : tensor<2x3xi8> -> tensor<2x3x!num.fixed<8, 7>>
// TENSOR:      num.matmul %W, %X {rounding = #num<rounding trunc>, halvings = 0 : i64} :
// TENSOR:      num.add

// In the generated C the bias and the shifts are constant arrays indexed by the channel:
// CCODE:      static const int16_t p_B[2] = {
// CCODE-NEXT:     1228, -4915,
// CCODE:      static const int8_t p_W_shift[2] = {
// CCODE-NEXT:     7, 8,
// CCODE:      const int16_t [[SUM:v[0-9]*]] = (int16_t)((unsigned)acc + (unsigned)p_B[i]);
// CCODE-NEXT: const int16_t [[N:v[0-9]*]] = (int16_t)p_W_shift[i];
// CCODE-NEXT: out[i] = (int8_t)(({{.*}}) >> [[N]]);

// ERR: error: quantize: per-channel is for repr=zero-skew, or repr=fixed with scales=data-driven
