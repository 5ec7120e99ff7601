// Comparisons, selections and negation become num ops at L2 (their integers depend on the
// encoding); data movement (reshape, index, ...) stays minun, on the new element types.
// RUN: minun-opt %s -p 'quantize{bits=16}' | filecheck %s --check-prefix=FX
// RUN: minun-opt %s -p 'quantize{repr=float32}' | filecheck %s --check-prefix=F32

func.func @main() -> i32 {
  %x = minun.input "X" [-2.0, 2.0] {profile = array<f64: -2.0, 2.0>} : tensor<1x4x4x2xf32>
  %r = minun.relu %x : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %r6 = minun.relu6 %r : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %c = minun.clip %r6 {lo = -1.5 : f64, hi = 1.25 : f64} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %n = minun.neg %c : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %k = minun.param "K" [-1.0, 1.0] dense<0.75> : tensor<f32>
  %mx = minun.max %n, %k : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
  %mn = minun.min %mx, %x : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %lr = minun.leaky_relu %mn {alpha = 0.25 : f64} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %p = minun.maxpool %lr {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
  %f = minun.reshape %p {order = array<i64: 0, 1, 2, 3>} : tensor<1x2x2x2xf32> -> tensor<8x1xf32>
  %i = arith.constant 3 : i32
  %e = minun.index %f[%i] : tensor<8x1xf32> -> tensor<1xf32>
  %s = minun.sgn %e : tensor<1xf32>
  %a = minun.argmax %f : tensor<8x1xf32>
  %t = arith.addi %a, %s : i32
  func.return %t : i32
}
// FX:      %x = num.input "X" : tensor<1x4x4x2x!num.fixed<16, 13>>
// FX-NEXT: %r = num.relu %x : tensor<1x4x4x2x!num.fixed<16, 13>>
// FX-NEXT: %r6 = num.relu6 %r : tensor<1x4x4x2x!num.fixed<16, 13>>
// FX-NEXT: %c = num.clip %r6 {lo = -1.500000e+00 : f64, hi = 1.250000e+00 : f64} : tensor<1x4x4x2x!num.fixed<16, 13>>
// FX-NEXT: %n = num.neg %c : tensor<1x4x4x2x!num.fixed<16, 13>>
// FX-NEXT: %k = num.param "K" {{.*}} -> tensor<!num.fixed<16, 15>>
// max and min: operands brought to one type first
// FX-NEXT: %[[K:.*]] = num.rescale %k {{.*}} : tensor<!num.fixed<16, 15>> -> tensor<!num.fixed<16, 13>>
// FX-NEXT: %mx = num.max %n, %[[K]] : (tensor<1x4x4x2x!num.fixed<16, 13>>, tensor<!num.fixed<16, 13>>) -> tensor<1x4x4x2x!num.fixed<16, 13>>
// FX-NEXT: %mn = num.min %mx, %x : (tensor<1x4x4x2x!num.fixed<16, 13>>, tensor<1x4x4x2x!num.fixed<16, 13>>) -> tensor<1x4x4x2x!num.fixed<16, 13>>
// leaky relu: max(x, alpha * x)
// FX:      %lr = num.max %mn, %{{.*}} : (tensor<1x4x4x2x!num.fixed<16, {{[0-9]+}}>>
// FX-NEXT: %p = num.maxpool %lr {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x2x
// FX-NEXT: %f = minun.reshape %p {order = array<i64: 0, 1, 2, 3>} : tensor<1x2x2x2x!num.fixed<16, [[S:[0-9]+]]>> -> tensor<8x1x!num.fixed<16, [[S]]>>
// FX-NEXT: %i = arith.constant 3 : i32
// FX-NEXT: %e = minun.index %f[%i] : tensor<8x1x!num.fixed<16, [[S]]>> -> tensor<1x!num.fixed<16, [[S]]>>
// FX-NEXT: %s = num.sgn %e : tensor<1x!num.fixed<16, [[S]]>>
// FX-NEXT: %a = num.argmax %f : tensor<8x1x!num.fixed<16, [[S]]>>
// FX-NEXT: %t = arith.addi %a, %s : i32

// F32:      %r = num.relu %x : tensor<1x4x4x2xf32>
// F32-NEXT: %r6 = num.relu6 %r : tensor<1x4x4x2xf32>
// F32-NEXT: %c = num.clip %r6 {lo = -1.500000e+00 : f64, hi = 1.250000e+00 : f64} : tensor<1x4x4x2xf32>
// F32-NEXT: %n = num.neg %c : tensor<1x4x4x2xf32>
// F32-NEXT: %k = num.param "K" {{.*}} -> tensor<f32>
// F32-NEXT: %mx = num.max %n, %k : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
// F32-NEXT: %mn = num.min %mx, %x
// F32:      %lr = num.max %mn, %{{.*}} : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
// F32-NEXT: %p = num.maxpool %lr
// F32-NEXT: %f = minun.reshape %p {order = array<i64: 0, 1, 2, 3>} : tensor<1x2x2x2xf32> -> tensor<8x1xf32>
// F32:      %s = num.sgn %e : tensor<1xf32>
// F32-NEXT: %a = num.argmax %f : tensor<8x1xf32>
