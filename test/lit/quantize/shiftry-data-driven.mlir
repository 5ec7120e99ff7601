// Shiftry's Pseudocode 2 (16-bit, data-driven scales). The profile of the float run is
// given as `profile` attributes (the `data=` option computes the same from a dataset).
// RUN: minun-opt %s -p 'quantize{bits=16 scales=data-driven}' | filecheck %s

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
// CHECK:      func.func @main() -> tensor<1x1x!num.fixed<16, 12>> attributes {num.rounding = "trunc", num.overflow = "wrap"}
// CHECK-NEXT:   %X = num.input "X" : tensor<2x1x!num.fixed<16, 13>>
// CHECK-NEXT:   %W1 = num.param "W1" dense<{{\[\[}}689, 3191], [16728, -13549]]> : tensor<2x2xi16> -> tensor<2x2x!num.fixed<16, 14>>
// CHECK-NEXT:   %B1 = num.param "B1" dense<{{\[\[}}-1048], [20283]]> : tensor<2x1xi16> -> tensor<2x1x!num.fixed<16, 15>>
// CHECK-NEXT:   %W2 = num.param "W2" dense<{{\[\[}}-6586, -16596]]> : tensor<1x2xi16> -> tensor<1x2x!num.fixed<16, 14>>
// CHECK-NEXT:   %B2 = num.param "B2" dense<24150> : tensor<1x1xi16> -> tensor<1x1x!num.fixed<16, 15>>
// t1 = (W1 x_int32 X) / 2^15: a 32-bit product at scale 27, one rescale to 12
// CHECK-NEXT:   %{{.*}} = num.matmul %W1, %X {rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<2x2x!num.fixed<16, 14>>, tensor<2x1x!num.fixed<16, 13>>) -> tensor<2x1x!num.fixed<32, 27>>
// CHECK-NEXT:   %t1 = num.rescale %{{.*}} {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<2x1x!num.fixed<32, 27>> -> tensor<2x1x!num.fixed<16, 12>>
// t2 = t1 + B1 / 2^3
// CHECK-NEXT:   %{{.*}} = num.rescale %B1 {{.*}} : tensor<2x1x!num.fixed<16, 15>> -> tensor<2x1x!num.fixed<16, 12>>
// CHECK-NEXT:   %{{.*}} = num.add %t1, %{{.*}} : {{.*}} -> tensor<2x1x!num.fixed<32, 12>>
// CHECK-NEXT:   %t2 = num.rescale {{.*}} : tensor<2x1x!num.fixed<32, 12>> -> tensor<2x1x!num.fixed<16, 12>>
// t3 = (W2 x_int32 t2) / 2^14
// CHECK-NEXT:   %{{.*}} = num.matmul %W2, %t2 {{.*}} -> tensor<1x1x!num.fixed<32, 26>>
// CHECK-NEXT:   %t3 = num.rescale {{.*}} : tensor<1x1x!num.fixed<32, 26>> -> tensor<1x1x!num.fixed<16, 12>>
// t4 = t3 + B2 / 2^3
// CHECK-NEXT:   %{{.*}} = num.rescale %B2 {{.*}} : tensor<1x1x!num.fixed<16, 15>> -> tensor<1x1x!num.fixed<16, 12>>
// CHECK-NEXT:   %{{.*}} = num.add %t3, {{.*}} -> tensor<1x1x!num.fixed<32, 12>>
// CHECK-NEXT:   %t4 = num.rescale {{.*}} -> tensor<1x1x!num.fixed<16, 12>>
// CHECK-NEXT:   func.return %t4
