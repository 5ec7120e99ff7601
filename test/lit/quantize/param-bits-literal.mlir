// param-bits=8 narrows the model's parameters, not the program's literals: a literal such
// as GRU's `1 - z` keeps the computation's width (as posits already did). At 8 bits the
// literal 1.0 sits at scale 6 (1.0 * 2^6 = 64 <= 127), and Shiftry's sub rule takes both
// operands to the lower scale, so 1 - z kept 6 fraction bits of z's 14: a PyTorch GRU
// classifier at bits=16 param-bits=8 had a 37.6% median output error (0.95% now).
// RUN: minun-opt %s -p 'quantize{bits=16 param-bits=8}' | filecheck %s

func.func @main() -> i32 {
  %x = minun.input "X" [-4.0, 4.0] {profile = array<f64: -4.0, 4.0>} : tensor<4x1xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25, 0.75, 0.1], [0.1, 0.2, -0.3, 0.4]]> : tensor<2x4xf32>
  %one = minun.constant dense<1.000000e+00> : tensor<f32>
  %z = minun.sigmoid %x {profile = array<f64: 0.018, 0.982>} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %d = minun.sub %one, %z {profile = array<f64: 0.018, 0.982>} : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = minun.matmul %W, %d {profile = array<f64: -1.0, 1.0>} : (tensor<2x4xf32>, tensor<4x1xf32>) -> tensor<2x1xf32>
  %a = minun.argmax %y : tensor<2x1xf32>
  func.return %a : i32
}
// the parameter at 8 bits; the literal at 16: 1.0 * 2^14 = 16384 <= 32767
// CHECK:      %W = num.param "W" {{.*}} -> tensor<2x4x!num.fixed<8, 7>>
// CHECK-NEXT: %one = num.param "c1" dense<16384> : tensor<i16> -> tensor<!num.fixed<16, 14>>
// sigmoid's output in [0, 1) at scale 14, and the difference keeps it
// CHECK:      %z = num.sigmoid {{.*}} -> tensor<4x1x!num.fixed<16, 14>>
// CHECK-NEXT: num.sub %one, %z : (tensor<!num.fixed<16, 14>>, tensor<4x1x!num.fixed<16, 14>>) -> tensor<4x1x!num.fixed<32, 14>>
