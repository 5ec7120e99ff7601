// Per-channel weight scales, a ReLU after the biased matmul: the sum takes the scale of
// the ReLU's range (non-negative), its narrowing saturates (negative sums become -128,
// which the ReLU makes 0), as int8 quantizers fold a ReLU into the output range.
// RUN: minun-opt %s -p 'quantize{bits=8 per-channel=true}' | filecheck %s

func.func @main() -> tensor<2x1xf32> {
  %X = minun.input "X" [-2.0, 2.0] {profile = array<f64: -2.0, 2.0>} : tensor<3x1xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25, 0.75], [0.1, 0.2, -0.3]]> : tensor<2x3xf32>
  %B = minun.param "B" [-1.0, 1.0] dense<[[0.3], [-0.6]]> : tensor<2x1xf32>
  %y = minun.matmul %W, %X {profile = array<f64: -12.0, 3.0>} : (tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x1xf32>
  %z = minun.add %y, %B {profile = array<f64: -12.0, 3.3>} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %r = minun.relu %z {profile = array<f64: 0.0, 3.3>} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  func.return %r : tensor<2x1xf32>
}
// W and B as in per-channel.mlir (channel scales 7 and 8, the bias at 12 and 13).
// The sum's range [-12, 3.3] would give GetScale(12, 8) = 7 - floor(log2 12 + 1) = 3; the
// ReLU's [0, 3.3] gives GetScale(3.3, 8) = 7 - floor(log2 3.3 + 1) = 5: shifts 12 - 5 = 7
// and 13 - 5 = 8.
// CHECK:      num.matmul %W, %X bias %B {{.*}}channel_shifts = array<i64: 7, 8>} : {{.*}} -> tensor<2x1x!num.fixed<16, 5>>
// CHECK-NEXT: %[[Z:.*]] = num.rescale %{{.*}} {rounding = #num<rounding trunc>, overflow = #num<overflow saturate>} : tensor<2x1x!num.fixed<16, 5>> -> tensor<2x1x!num.fixed<8, 5>>
// CHECK-NEXT: %r = num.relu %[[Z]] {{.*}}: tensor<2x1x!num.fixed<8, 5>>
