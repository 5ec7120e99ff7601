// Malformed reshapes, transposes and index ops are rejected with both shapes.
// RUN: minun-opt %s --split-input-file --verify-diagnostics | filecheck %s

%a = minun.input "A" [0.0, 1.0] : tensor<4x5xf32>
%r = minun.reshape %a {order = array<i64: 0, 1>} : tensor<4x5xf32> -> tensor<3x7xf32>
// CHECK: invalid-reshape.mlir:5:1: error: minun.reshape: element counts differ: 4x5 has 20, 3x7 has 21

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<2x4x5x10xf32>
%r = minun.reshape %a {order = array<i64: 0, 2, 1, 2>} : tensor<2x4x5x10xf32> -> tensor<20x20xf32>
// CHECK: error: minun.reshape: order [0, 2, 1, 2] is not a permutation of the 4 dimensions of 2x4x5x10

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<4x5xf32>
%r = minun.reshape %a {order = array<i64: 0>} : tensor<4x5xf32> -> tensor<20xf32>
// CHECK: error: minun.reshape: order [0] is not a permutation of the 2 dimensions of 4x5

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<4x5xf32>
%r = minun.reshape %a {order = array<i64: 0, 1>} : tensor<4x5xf32> -> tensor<20xf64>
// CHECK: error: minun.reshape: element types differ: tensor<4x5xf32> vs tensor<20xf64>

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<4x5xf32>
%r = minun.transpose %a {perm = array<i64: 1, 1>} : (tensor<4x5xf32>) -> tensor<5x4xf32>
// CHECK: error: minun.transpose: perm [1, 1] is not a permutation of the 2 dimensions of 4x5

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<4x5xf32>
%r = minun.transpose %a {perm = array<i64: 1, 0>} : (tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK: error: minun.transpose: result type tensor<4x5xf32> does not match the inferred tensor<5x4xf32>

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<4x5xf32>
%i = arith.constant 4 : i32
%r = minun.index %a[%i] : tensor<4x5xf32> -> tensor<5xf32>
// CHECK: error: minun.index: index 4 is outside the first dimension of 4x5

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<4x5xf32>
%i = arith.constant 1 : i32
%r = minun.index %a[%i] : tensor<4x5xf32> -> tensor<4xf32>
// CHECK: error: minun.index: result type tensor<4xf32> does not match the inferred tensor<5xf32>

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<4x5xf32>
%b = minun.input "B" [0.0, 1.0] : tensor<3x5xf32>
%r = minun.add %a, %b : (tensor<4x5xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
// CHECK: error: minun.add: shapes 4x5 and 3x5 do not broadcast

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<4x5xf32>
%b = minun.input "B" [0.0, 1.0] : tensor<4xf32>
%r = minun.bias_add %a, %b : (tensor<4x5xf32>, tensor<4xf32>) -> tensor<4x5xf32>
// CHECK: error: minun.bias_add: bias must be 1-D with the last dimension of the lhs: lhs 4x5, bias 4

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<4x5xf32>
%b = minun.input "B" [0.0, 1.0] : tensor<4x2xf32>
%r = minun.concat %a, %b {axis = 0 : i64} : (tensor<4x5xf32>, tensor<4x2xf32>) -> tensor<8x5xf32>
// CHECK: error: minun.concat: shapes 4x5, 4x2 differ outside axis 0

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<4x5xf32>
%r = minun.reverse %a {axis = 2 : i64} : (tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK: error: minun.reverse: axis 2 is out of range for shape 4x5

// -----
%a = minun.input "A" [2.0, 1.0] : tensor<4x5xf32>
// CHECK: error: minun.input: empty range [2.0, 1.0] (lower bound above upper)

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<4x5xf32>
%r = minun.sgn %a : tensor<4x5xf32>
// CHECK: error: minun.sgn: input must hold one element, got 4x5
