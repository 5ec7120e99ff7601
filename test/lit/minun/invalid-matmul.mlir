// Every malformed matmul is rejected with a message naming the op and both shapes.
// RUN: minun-opt %s --split-input-file --verify-diagnostics | filecheck %s

%a = minun.input "A" [0.0, 1.0] : tensor<10x64xf32>
%b = minun.input "B" [0.0, 1.0] : tensor<63x1xf32>
%c = minun.matmul %a, %b : (tensor<10x64xf32>, tensor<63x1xf32>) -> tensor<10x1xf32>
// CHECK: invalid-matmul.mlir:6:1: error: minun.matmul: inner dimensions differ: lhs 10x64, rhs 63x1

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<64xf32>
%b = minun.input "B" [0.0, 1.0] : tensor<64x1xf32>
%c = minun.matmul %a, %b : (tensor<64xf32>, tensor<64x1xf32>) -> tensor<1x1xf32>
// CHECK: invalid-matmul.mlir:12:1: error: minun.matmul: operands must be 2-D, got lhs 64, rhs 64x1

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<10x64xf32>
%b = minun.input "B" [0.0, 1.0] : tensor<64x2xf32>
%c = minun.matmul %a, %b : (tensor<10x64xf32>, tensor<64x2xf32>) -> tensor<10x1xf32>
// CHECK: error: minun.matmul: result type tensor<10x1xf32> does not match the inferred tensor<10x2xf32>

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<f32>
%b = minun.input "B" [0.0, 1.0] : tensor<64x1xf32>
%c = minun.matmul %a, %b : (tensor<f32>, tensor<64x1xf32>) -> tensor<64x1xf32>
// CHECK: error: minun.matmul: operands must be 2-D, got lhs scalar, rhs 64x1

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<2x3x4xf32>
%b = minun.input "B" [0.0, 1.0] : tensor<4x1xf32>
%c = minun.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x1xf32>) -> tensor<2x1xf32>
// CHECK: error: minun.matmul: operands must be 2-D, got lhs 2x3x4, rhs 4x1

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<10x64xf32>
%b = minun.input "B" [0.0, 1.0] : tensor<64x1xf64>
%c = minun.matmul %a, %b : (tensor<10x64xf32>, tensor<64x1xf64>) -> tensor<10x1xf32>
// CHECK: error: minun.matmul: operands must have one element type, got tensor<10x64xf32>, tensor<64x1xf64>

// -----
// Sparse matmul: same shape rules, and the sparse operand must be a model parameter.
%a = minun.input "A" [0.0, 1.0] : tensor<10x64xf32>
%b = minun.input "B" [0.0, 1.0] : tensor<64x1xf32>
%c = minun.sparse_matmul %a, %b : (tensor<10x64xf32>, tensor<64x1xf32>) -> tensor<10x1xf32>
// CHECK: error: minun.sparse_matmul: the sparse lhs must be a model parameter

// -----
%a = minun.param "Z" [0.0, 1.0] sparse dense<0.0> : tensor<10x64xf32>
%b = minun.input "B" [0.0, 1.0] : tensor<32x1xf32>
%c = minun.sparse_matmul %a, %b : (tensor<10x64xf32>, tensor<32x1xf32>) -> tensor<10x1xf32>
// CHECK: error: minun.sparse_matmul: needs 2-D operands with matching inner dimensions: lhs 10x64, rhs 32x1

// -----
// Scalar multiplication needs a scalar on the left.
%a = minun.input "A" [0.0, 1.0] : tensor<1x1xf32>
%b = minun.input "B" [0.0, 1.0] : tensor<64x1xf32>
%c = minun.scalar_mul %a, %b : (tensor<1x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
// CHECK: error: minun.scalar_mul: lhs must be a scalar, got 1x1
