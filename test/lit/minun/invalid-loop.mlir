// Malformed loops, sums and conditionals are rejected with the op name and the types.
// RUN: minun-opt %s --split-input-file --verify-diagnostics | filecheck %s

%h0 = minun.input "H" [0.0, 1.0] : tensor<32x1xf32>
%h = minun.loop (%i = 0 to 16) iter(%hc = %h0) : tensor<32x1xf32> {
  %t = minun.transpose %hc {perm = array<i64: 1, 0>} : (tensor<32x1xf32>) -> tensor<1x32xf32>
  minun.yield %t : tensor<1x32xf32>
}
// CHECK: invalid-loop.mlir:5:1: error: minun.loop: body yields tensor<1x32xf32>, expected tensor<32x1xf32>

// -----
%h0 = minun.input "H" [0.0, 1.0] : tensor<32x1xf32>
%h = minun.loop (%i = 16 to 16) iter(%hc = %h0) : tensor<32x1xf32> {
  minun.yield %hc : tensor<32x1xf32>
}
// CHECK: error: minun.loop: empty range [16:16] (needs lower < upper)

// -----
%h0 = minun.input "H" [0.0, 1.0] : tensor<32x1xf32>
%h = minun.loop (%i = 0 to 4) iter(%hc = %h0) : tensor<32x1xf32> {
  minun.yield %hc, %hc : tensor<32x1xf32>, tensor<32x1xf32>
}
// CHECK: error: minun.loop: body yields tensor<32x1xf32>, tensor<32x1xf32>, expected tensor<32x1xf32>

// -----
%h0 = minun.input "H" [0.0, 1.0] : tensor<32x1xf32>
%h = "minun.loop"(%h0) ({
^bb0(%i: i32, %hc: tensor<32x1xf32>):
  "minun.yield"(%hc) : (tensor<32x1xf32>) -> ()
}) {lower = 0 : i64, upper = 4 : i64} : (tensor<32x1xf32>) -> tensor<1x32xf32>
// CHECK: error: minun.loop: result 'results_' at position 0 does not verify: attributes ('tensor<32x1xf32>',) expected from range variable 'TS', but got ('tensor<1x32xf32>',)

// -----
// The loop index is an i32 block argument.
%h0 = minun.input "H" [0.0, 1.0] : tensor<32x1xf32>
%h = "minun.loop"(%h0) ({
^bb0(%i: index, %hc: tensor<32x1xf32>):
  "minun.yield"(%hc) : (tensor<32x1xf32>) -> ()
}) {lower = 0 : i64, upper = 4 : i64} : (tensor<32x1xf32>) -> tensor<32x1xf32>
// CHECK: error: minun.loop: body arguments index, tensor<32x1xf32> must be i32, tensor<32x1xf32>

// -----
%h0 = minun.input "H" [0.0, 1.0] : tensor<32x1xf32>
"minun.loop"() ({
^bb0(%i: i32):
  "minun.yield"() : () -> ()
}) {lower = 0 : i64, upper = 4 : i64} : () -> ()
// CHECK: error: minun.loop: needs at least one carried value

// -----
%s = minun.sum (%i = 0 to 20) : tensor<10x1xf32> {
  %z = minun.init 0.0 : tensor<10x2xf32>
  minun.yield %z : tensor<10x2xf32>
}
// CHECK: error: minun.sum: body yields tensor<10x2xf32>, expected tensor<10x1xf32>

// -----
%s = minun.sum (%i = 5 to 2) : tensor<10x1xf32> {
  %z = minun.init 0.0 : tensor<10x1xf32>
  minun.yield %z : tensor<10x1xf32>
}
// CHECK: error: minun.sum: empty range [5:2] (needs lower < upper)

// -----
%c = minun.input "C" [0.0, 1.0] : tensor<2x1xf32>
%r = minun.if_nonneg %c : tensor<2x1xf32> -> i32 {
  %a = arith.constant 1 : i32
  minun.yield %a : i32
} else {
  %b = arith.constant 2 : i32
  minun.yield %b : i32
}
// CHECK: error: minun.if_nonneg: condition must be an integer or a one-element tensor, got tensor<2x1xf32>

// -----
%c = arith.constant 1 : i32
%r = minun.if_nonneg %c : i32 -> i32 {
  minun.yield %c : i32
} else {
  %f = minun.init 0.0 : tensor<f32>
  minun.yield %f : tensor<f32>
}
// CHECK: error: minun.if_nonneg: body yields tensor<f32>, expected i32
