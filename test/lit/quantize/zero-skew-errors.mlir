// What the zero-skew representation does not compute yet is reported at its line, one
// diagnostic, no traceback.
// RUN: not minun-opt %s -p 'quantize{repr=zero-skew bits=8}' 2>&1 | filecheck %s

func.func @main() -> i32 {
  %X = minun.input "X" [-4.0, 4.0] {profile = array<f64: -3.5, 2.5>} : tensor<1x1x1x3xf32>
  %s = minun.normalise_l2 %X {profile = array<f64: -1.0, 1.0>} : (tensor<1x1x1x3xf32>) -> tensor<1x1x1x3xf32>
  %a = minun.argmax %s : tensor<1x1x1x3xf32>
  func.return %a : i32
}
// CHECK: zero-skew-errors.mlir:7:{{[0-9]+}}: error: minun.normalise_l2: not supported by the zero-skew representation yet
// CHECK-NOT: Traceback
