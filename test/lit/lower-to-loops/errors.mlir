// Programs lower-to-loops cannot lower are diagnostics, not tracebacks.
// RUN: not minun-opt %s --split-input-file -p lower-to-loops 2>&1 | filecheck %s

func.func @main() -> i32 {
  %x = num.input "X" : tensor<2x!num.fixed<16, 14>>
  %y = num.input "Y" : tensor<2x!num.fixed<16, 14>>
  %a = num.argmax %x : tensor<2x!num.fixed<16, 14>>
  func.return %a : i32
}
// CHECK: error: lower-to-loops: the model needs exactly one num.input, found 2
// CHECK-NOT: Traceback
