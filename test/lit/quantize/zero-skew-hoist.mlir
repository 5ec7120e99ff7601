// Zero-skew: a requantization of a value defined outside a loop (TFLite's ADD/SUB
// requantizes both operands to int32 at left shift 20) is moved in front of the loop, so
// it runs once; the operand that depends on the loop index stays inside.
// RUN: minun-opt %s -p 'quantize{repr=zero-skew bits=8}' | filecheck %s

func.func @main() -> i32 {
  %x = minun.input "X" [-1.0, 1.0] {profile = array<f64: -1.0, 1.0>} : tensor<2x1xf32>
  %P = minun.param "P" [-1.0, 1.0] dense<[[[0.5], [0.25]], [[-0.5], [0.75]], [[1.0], [-1.0]]]> : tensor<3x2x1xf32>
  %h = minun.loop (%i = 0 to 3) iter(%c = %x) : tensor<2x1xf32> {
    %p = minun.index %P[%i] : tensor<3x2x1xf32> -> tensor<2x1xf32>
    %d = minun.sub %x, %p {profile = array<f64: -2.0, 2.0>} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
    minun.yield %d : tensor<2x1xf32>
  }
  %a = minun.argmax %h : tensor<2x1xf32>
  func.return %a : i32
}
// CHECK:      %x = num.input "X"
// CHECK:      %[[XR:.*]] = num.requantize %x {{.*}}left_shift = 20 : i64}
// CHECK-NEXT: %h = minun.loop (%i = 0 to 3)
// CHECK:        %[[PI:.*]] = minun.index %P[%i]
// CHECK-NEXT:   %[[PR:.*]] = num.requantize %[[PI]] {{.*}}left_shift = 20 : i64}
// CHECK-NEXT:   %{{.*}} = num.sub %[[XR]], %[[PR]]
