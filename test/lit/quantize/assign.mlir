// quantize{assign=FILE} applies a bitwidth search's per-tensor bits and scales (the JSON
// minun-compile --search writes). Shiftry's §3 example with the assignment its search
// chooses (B2, B1, X, W1 at 8 bits): the integers and shifts of its Pseudocode 4.
// RUN: minun-opt %s -p 'quantize{assign="%S/Inputs/assign-pseudocode4.json"}' | filecheck %s
// A scale below GetScale's is kept (B1 at scale 6: trunc(0.619 * 64) = 39), and a computed
// value takes the scale it is given (t2 at 8 bits, scale 3 instead of GetScale's 4).
// RUN: minun-opt %s -p 'quantize{assign="%S/Inputs/assign-scale.json"}' | filecheck %s --check-prefix=SCALE
// RUN: not minun-opt %s -p 'quantize{bits=8 assign="%S/Inputs/assign-scale.json"}' 2>&1 | filecheck %s --check-prefix=ERR

func.func @main() -> tensor<1x1xf32> {
  %X = minun.input "X" [-4.0, 4.0] {profile = array<f64: -3.583, 2.391>} : tensor<2x1xf32>
  %W1 = minun.param "W1" [-1.1, 1.1] dense<[[0.0421, 0.1948], [1.021, -0.827]]> : tensor<2x2xf32>
  %B1 = minun.param "B1" [-1.0, 1.0] dense<[[-0.032], [0.619]]> : tensor<2x1xf32>
  %W2 = minun.param "W2" [-1.1, 1.1] dense<[[-0.402, -1.013]]> : tensor<1x2xf32>
  %B2 = minun.param "B2" [-1.0, 1.0] dense<0.737> : tensor<1x1xf32>
  %t1 = minun.matmul %W1, %X {profile = array<f64: -0.597, 5.4044>} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %t2 = minun.add %t1, %B1 {profile = array<f64: -0.629, 6.0234>} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %t3 = minun.matmul %W2, %t2 {profile = array<f64: -5.8488, -5.8488>} : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %t4 = minun.add %t3, %B2 {profile = array<f64: -5.1118, -5.1118>} : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  func.return %t4 : tensor<1x1xf32>
}
// Pseudocode 4: int8 W1 = (2 12; 65 -52), B1 = (-4; 79), X at scale 5, W2 stays 16-bit
// CHECK:      %X = num.input "X" : tensor<2x1x!num.fixed<8, 5>>
// CHECK-NEXT: %W1 = num.param "W1" dense<[[2, 12], [65, -52]]> : tensor<2x2xi8> -> tensor<2x2x!num.fixed<8, 6>>
// CHECK-NEXT: %B1 = num.param "B1" dense<[[-4], [79]]> : tensor<2x1xi8> -> tensor<2x1x!num.fixed<8, 7>>
// CHECK-NEXT: %W2 = num.param "W2" dense<[[-6586, -16596]]> : tensor<1x2xi16> -> tensor<1x2x!num.fixed<16, 14>>
// CHECK-NEXT: %B2 = num.param "B2" dense<94> : tensor<1x1xi8> -> tensor<1x1x!num.fixed<8, 7>>
// t1 = W1 x_int16 X, no shift: scale 6 + 5 = 11
// CHECK-NEXT: %t1 = num.matmul %W1, %X {{.*}} -> tensor<2x1x!num.fixed<16, 11>>
// t2 = (t1 / 2^4) + B1, at scale 7
// CHECK-NEXT: num.rescale %t1 {{.*}} : tensor<2x1x!num.fixed<16, 11>> -> tensor<2x1x!num.fixed<16, 7>>
// CHECK:      %t2 = num.rescale {{.*}} -> tensor<2x1x!num.fixed<16, 7>>
// t3 = (W2 x_int32 t2) / 2^9: 14 + 7 = 21 -> 12
// CHECK-NEXT: num.matmul %W2, %t2 {{.*}} -> tensor<1x1x!num.fixed<32, 21>>
// CHECK-NEXT: %t3 = num.rescale {{.*}} : tensor<1x1x!num.fixed<32, 21>> -> tensor<1x1x!num.fixed<16, 12>>
// t4 = (t3 / 2^5) + B2, at scale 7
// CHECK-NEXT: num.rescale %t3 {{.*}} -> tensor<1x1x!num.fixed<16, 7>>
// CHECK:      %t4 = num.rescale {{.*}} -> tensor<1x1x!num.fixed<16, 7>>

// SCALE:      %B1 = num.param "B1" dense<[[-2], [39]]> : tensor<2x1xi8> -> tensor<2x1x!num.fixed<8, 6>>
// SCALE:      %t2 = num.rescale {{.*}} -> tensor<2x1x!num.fixed<8, 3>>
// ERR: error: quantize: the assignment was searched at 16 bits, the pass runs at 8 (use bits=16)
