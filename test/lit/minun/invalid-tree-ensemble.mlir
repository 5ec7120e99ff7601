// Malformed minun.tree_ensemble is rejected with the op name and what is wrong.
// RUN: minun-opt %s --split-input-file --verify-diagnostics | filecheck %s

%x = minun.input "X" [0.0, 1.0] : tensor<1x4xf32>
%t = minun.tree_ensemble %x {mode = "eq", roots = dense<[0]> : tensor<1xi32>, nodes = dense<[[0, -1, -2]]> : tensor<1x3xi32>, thresholds = dense<[0.5]> : tensor<1xf32>, leaves = dense<[[1.0], [2.0]]> : tensor<2x1xf32>, base = dense<[0.0]> : tensor<1xf32>} : tensor<1x4xf32> -> tensor<1x1xf32>
// CHECK: error: minun.tree_ensemble: mode must be one of leq, lt, got 'eq'

// -----
// Feature 4 of a 4-element input.
%x = minun.input "X" [0.0, 1.0] : tensor<1x4xf32>
%t = minun.tree_ensemble %x {mode = "leq", roots = dense<[0]> : tensor<1xi32>, nodes = dense<[[4, -1, -2]]> : tensor<1x3xi32>, thresholds = dense<[0.5]> : tensor<1xf32>, leaves = dense<[[1.0], [2.0]]> : tensor<2x1xf32>, base = dense<[0.0]> : tensor<1xf32>} : tensor<1x4xf32> -> tensor<1x1xf32>
// CHECK: error: minun.tree_ensemble: a feature index is outside the input's 4 elements

// -----
// Leaf row 2 (-3) of a 2-row leaf table.
%x = minun.input "X" [0.0, 1.0] : tensor<1x4xf32>
%t = minun.tree_ensemble %x {mode = "leq", roots = dense<[0]> : tensor<1xi32>, nodes = dense<[[0, -1, -3]]> : tensor<1x3xi32>, thresholds = dense<[0.5]> : tensor<1xf32>, leaves = dense<[[1.0], [2.0]]> : tensor<2x1xf32>, base = dense<[0.0]> : tensor<1xf32>} : tensor<1x4xf32> -> tensor<1x1xf32>
// CHECK: error: minun.tree_ensemble: a child or root refers to no node or leaf

// -----
// Node 1's true child is node 0: a cycle.
%x = minun.input "X" [0.0, 1.0] : tensor<1x4xf32>
%t = minun.tree_ensemble %x {mode = "leq", roots = dense<[0]> : tensor<1xi32>, nodes = dense<[[0, 1, -1], [1, 0, -2]]> : tensor<2x3xi32>, thresholds = dense<[0.5, 0.5]> : tensor<2xf32>, leaves = dense<[[1.0], [2.0]]> : tensor<2x1xf32>, base = dense<[0.0]> : tensor<1xf32>} : tensor<1x4xf32> -> tensor<1x1xf32>
// CHECK: error: minun.tree_ensemble: the trees have a cycle

// -----
// Three outputs per leaf for a one-element result.
%x = minun.input "X" [0.0, 1.0] : tensor<1x4xf32>
%t = minun.tree_ensemble %x {mode = "leq", roots = dense<[0]> : tensor<1xi32>, nodes = dense<[[0, -1, -2]]> : tensor<1x3xi32>, thresholds = dense<[0.5]> : tensor<1xf32>, leaves = dense<[[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]> : tensor<2x3xf32>, base = dense<[0.0]> : tensor<1xf32>} : tensor<1x4xf32> -> tensor<1x1xf32>
// CHECK: error: minun.tree_ensemble: leaves 2x3 do not match the result 1x1 (L x T)
