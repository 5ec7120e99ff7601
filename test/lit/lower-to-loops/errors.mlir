// Programs lower-to-loops cannot lower are diagnostics, not tracebacks.
// RUN: not minun-opt %s --split-input-file -p lower-to-loops 2>&1 | filecheck %s

// Several inputs share the C's one input buffer, so they must be stored alike.
func.func @main() -> i32 {
  %x = num.input "X" : tensor<2x!num.fixed<16, 14>>
  %y = num.input "Y" : tensor<2x!num.fixed<8, 6>>
  %a = num.argmax %x : tensor<2x!num.fixed<16, 14>>
  func.return %a : i32
}
// CHECK: error: lower-to-loops: the inputs are stored in different types (X: !num.fixed<16, 14>, Y: !num.fixed<8, 6>); the C takes them in one buffer of one type
// CHECK-NOT: Traceback
