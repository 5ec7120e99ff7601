// Per-channel scales on a weight whose channels all get the same shift (here its one
// channel): the C shifts by a constant, with no shift array.
// RUN: minun-opt %s -p 'quantize{bits=8 per-channel=true}' | filecheck %s
// RUN: minun-opt %s --pass-pipeline='builtin.module(quantize{bits=8 per-channel=true},lower-to-loops,memory-plan,lower-to-emitc)' -t c | filecheck %s --check-prefix=CCODE

func.func @main() -> tensor<1x1xf32> {
  %X = minun.input "X" [-2.0, 2.0] {profile = array<f64: -2.0, 2.0>} : tensor<3x1xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25, 0.75]]> : tensor<1x3xf32>
  %y = minun.matmul %W, %X {profile = array<f64: -3.0, 3.0>} : (tensor<1x3xf32>, tensor<3x1xf32>) -> tensor<1x1xf32>
  func.return %y : tensor<1x1xf32>
}
// X at GetScale(2, 8) = 5, W's one row at GetScale(0.75, 8) = 7, y at GetScale(3, 8) =
// 7 - floor(log2 3 + 1) = 5: one shift, 5 + 7 - 5 = 7, in a 16-bit accumulator (8 + 7 bits).
// CHECK: num.matmul %W, %X {{.*}}channel_shifts = array<i64: 7>} : {{.*}} -> tensor<1x1x!num.fixed<16, 5>>
// CCODE-NOT: _shift
// CCODE: out[0] = (int8_t)(({{.*}}) >> 7);
