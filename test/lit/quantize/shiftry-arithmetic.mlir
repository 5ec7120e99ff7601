// Shiftry's generated arithmetic, to reproduce its paper (§3): shifts round toward minus
// infinity (shift-rounding=floor) while constants and the input truncate (the function's
// rounding stays trunc), and an addition shifts both operands to the result's scale and
// adds there (adds=result-scale) instead of adding exactly at the lower operand scale.
// Pseudocode 2 (16 bits, data-driven): t2 = t1 + B1 / 2^3 at scale 12, in 16 bits.
// RUN: minun-opt %s -p 'quantize{bits=16 shift-rounding=floor adds=result-scale}' | filecheck %s
// RUN: not minun-opt %s -p 'quantize{bits=16 adds=wide}' 2>&1 | filecheck %s --check-prefix=ERR

func.func @main() -> tensor<1x1xf32> {
  %X = minun.input "X" [-4.0, 4.0] {profile = array<f64: -3.583, 2.391>} : tensor<2x1xf32>
  %W1 = minun.param "W1" [-1.1, 1.1] dense<[[0.0421, 0.1948], [1.021, -0.827]]> : tensor<2x2xf32>
  %B1 = minun.param "B1" [-1.0, 1.0] dense<[[-0.032], [0.619]]> : tensor<2x1xf32>
  %W2 = minun.param "W2" [-1.1, 1.1] dense<[[-0.402, -1.013]]> : tensor<1x2xf32>
  %B2 = minun.param "B2" [-1.0, 1.0] dense<[[0.737]]> : tensor<1x1xf32>
  %t1 = minun.matmul %W1, %X {profile = array<f64: -0.5973, 5.4044>} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %t2 = minun.add %t1, %B1 {profile = array<f64: -0.6293, 6.0234>} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %t3 = minun.matmul %W2, %t2 {profile = array<f64: -5.8487, -5.8487>} : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %t4 = minun.add %t3, %B2 {profile = array<f64: -5.1117, -5.1117>} : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  func.return %t4 : tensor<1x1xf32>
}
// CHECK:      attributes {num.rounding = "trunc", num.overflow = "wrap"}
// CHECK:      %W1 = num.param "W1" dense<{{\[\[}}689, 3191], [16728, -13549]]>
// CHECK:      num.matmul %W1, %X {rounding = #num<rounding floor>, halvings = 0 : i64}
// CHECK-NEXT: %t1 = num.rescale %{{.*}} {rounding = #num<rounding floor>, overflow = #num<overflow wrap>} : tensor<2x1x!num.fixed<32, 27>> -> tensor<2x1x!num.fixed<16, 12>>
// CHECK-NEXT: %[[B:.*]] = num.rescale %B1 {rounding = #num<rounding floor>, {{.*}} : tensor<2x1x!num.fixed<16, 15>> -> tensor<2x1x!num.fixed<16, 12>>
// CHECK-NEXT: %t2 = num.add %t1, %[[B]] : (tensor<2x1x!num.fixed<16, 12>>, tensor<2x1x!num.fixed<16, 12>>) -> tensor<2x1x!num.fixed<16, 12>>

// ERR: error: quantize: adds must be one of exact, result-scale, got 'wide'
