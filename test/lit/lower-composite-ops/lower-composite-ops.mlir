// lower-composite-ops: composite L1 ops become the primitives that quantize scales.
// RUN: minun-opt %s -p lower-composite-ops | filecheck %s

// CHECK-LABEL: func.func @mbconv
func.func @mbconv() -> tensor<1x4x4x4xf32> {
  %x = minun.input "X" [-1.0, 1.0] : tensor<1x8x8x6xf32>
  %f1 = minun.param "F1" [-1.0, 1.0] dense<0.1> : tensor<1x1x1x6x12xf32>
  %w1 = minun.param "W1" [-1.0, 1.0] dense<0.1> : tensor<12xf32>
  %b1 = minun.param "B1" [-1.0, 1.0] dense<0.1> : tensor<12xf32>
  %f2 = minun.param "F2" [-1.0, 1.0] dense<0.1> : tensor<12x3x3x1x1xf32>
  %f3 = minun.param "F3" [-1.0, 1.0] dense<0.1> : tensor<1x1x1x12x4xf32>
  %w3 = minun.param "W3" [-1.0, 1.0] dense<0.1> : tensor<4xf32>
  %m = minun.mbconv %x, %f1, %w1, %b1, %f2, %w1, %b1, %f3, %w3, %w3 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x6xf32>, tensor<1x1x1x6x12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12x3x3x1x1xf32>, tensor<12xf32>, tensor<12xf32>, tensor<1x1x1x12x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  // CHECK:      minun.conv2d %x, %f1 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} {{.*}} -> tensor<1x8x8x12xf32>
  // CHECK-NEXT: minun.hadamard {{.*}}, %w1 : (tensor<1x8x8x12xf32>, tensor<12xf32>) -> tensor<1x8x8x12xf32>
  // CHECK-NEXT: minun.bias_add {{.*}}, %b1
  // CHECK-NEXT: minun.relu6
  // CHECK-NEXT: minun.conv2d {{.*}}, %f2 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 12 : i64} {{.*}} -> tensor<1x4x4x12xf32>
  // CHECK-NEXT: minun.hadamard
  // CHECK-NEXT: minun.bias_add
  // CHECK-NEXT: minun.relu6
  // CHECK-NEXT: minun.conv2d {{.*}}, %f3 {{.*}} -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: minun.hadamard {{.*}}, %w3
  // CHECK-NEXT: %{{.*}} = minun.bias_add {{.*}}, %w3
  // CHECK-NOT:  minun.mbconv
  func.return %m : tensor<1x4x4x4xf32>
}

// Batch-norm with constant statistics folds into one scale and one bias:
// a = 2 / sqrt(4 + 0) = 1, b = 3 - 1 * 1 = 2 for the first channel.
// CHECK-LABEL: func.func @batchnorm
func.func @batchnorm() -> tensor<1x2x2x2xf32> {
  %x = minun.input "X" [-1.0, 1.0] : tensor<1x2x2x2xf32>
  %s = minun.param "S" [0.0, 4.0] dense<[2.0, 4.0]> : tensor<2xf32>
  %b = minun.param "B" [0.0, 4.0] dense<[3.0, 1.0]> : tensor<2xf32>
  %m = minun.param "M" [0.0, 4.0] dense<[1.0, 0.5]> : tensor<2xf32>
  %v = minun.param "V" [0.0, 4.0] dense<[4.0, 1.0]> : tensor<2xf32>
  %y = minun.batchnorm %x, %s, %b, %m, %v {epsilon = 0.0 : f64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  // CHECK:      %[[A:.*]] = minun.constant dense<[1.000000e+00, 4.000000e+00]> : tensor<2xf32>
  // CHECK-NEXT: %[[B:.*]] = minun.constant dense<[2.000000e+00, -1.000000e+00]> : tensor<2xf32>
  // CHECK-NEXT: %[[H:.*]] = minun.hadamard %x, %[[A]]
  // CHECK-NEXT: minun.bias_add %[[H]], %[[B]]
  func.return %y : tensor<1x2x2x2xf32>
}

// Global average pooling is a depthwise convolution with a 1/(H*W) filter.
// CHECK-LABEL: func.func @gap
func.func @gap() -> tensor<1x1x1x3xf32> {
  %x = minun.input "X" [-1.0, 1.0] : tensor<1x2x2x3xf32>
  %g = minun.global_avgpool %x : (tensor<1x2x2x3xf32>) -> tensor<1x1x1x3xf32>
  // CHECK:      %[[F:.*]] = minun.constant dense<2.500000e-01> : tensor<3x2x2x1x1xf32>
  // CHECK-NEXT: minun.conv2d %x, %[[F]] {{.*}} groups = 3 : i64} {{.*}} -> tensor<1x1x1x3xf32>
  func.return %g : tensor<1x1x1x3xf32>
}

// Division by a constant multiplies by its reciprocal; by a variable it stays.
// CHECK-LABEL: func.func @div
func.func @div() -> (tensor<2xf32>, tensor<2xf32>) {
  %x = minun.input "X" [-1.0, 1.0] : tensor<2xf32>
  %c = minun.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %d = minun.div %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %e = minun.div %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  // CHECK:      %[[R:.*]] = minun.constant dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
  // CHECK-NEXT: minun.hadamard %x, %[[R]]
  // CHECK-NEXT: minun.div %x, %x
  func.return %d, %e : tensor<2xf32>, tensor<2xf32>
}

// Erf becomes tanh of an odd quintic of x clipped to [-4, 4], stretched by 1 + 2^-16
// and clipped to [-1, 1] (so it reaches +-1, as a fixed-point tanh does).
// CHECK-LABEL: func.func @erf
func.func @erf() -> tensor<2x3xf32> {
  %x = minun.input "X" [-4.0, 4.0] : tensor<2x3xf32>
  %y = minun.erf %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK:      %[[C:.*]] = minun.clip %x {lo = -4.000000e+00 : f64, hi = 4.000000e+00 : f64}
  // CHECK-NEXT: %[[S:.*]] = minun.hadamard %[[C]], %[[C]]
  // CHECK-NEXT: %[[K5:.*]] = minun.constant dense<-0.00178647{{[0-9]*}}> : tensor<f32>
  // CHECK-NEXT: %[[T5:.*]] = minun.scalar_mul %[[K5]], %[[S]]
  // CHECK-NEXT: %[[K3:.*]] = minun.constant dense<0.104081{{[0-9]*}}> : tensor<f32>
  // CHECK-NEXT: %[[T3:.*]] = minun.add %[[T5]], %[[K3]]
  // CHECK-NEXT: %[[U2:.*]] = minun.hadamard %[[S]], %[[T3]]
  // CHECK-NEXT: %[[K1:.*]] = minun.constant dense<1.12814{{[0-9]*}}> : tensor<f32>
  // CHECK-NEXT: %[[U1:.*]] = minun.add %[[U2]], %[[K1]]
  // CHECK-NEXT: %[[U:.*]] = minun.hadamard %[[C]], %[[U1]]
  // CHECK-NEXT: %[[T:.*]] = minun.tanh %[[U]]
  // CHECK-NEXT: %[[ST:.*]] = minun.constant dense<1.0000{{[0-9]*}}> : tensor<f32>
  // CHECK-NEXT: %[[R:.*]] = minun.scalar_mul %[[ST]], %[[T]]
  // CHECK-NEXT: minun.clip %[[R]] {lo = -1.000000e+00 : f64, hi = 1.000000e+00 : f64}
  // CHECK-NOT:  minun.erf
  func.return %y : tensor<2x3xf32>
}
