// minun.tree_ensemble at 8 bits: the node table (feature, true child, false child,
// threshold: int8 each here, as their ranges allow; equal leaf rows shared) walked `depth` = 3 steps per tree,
// guarded by n >= 0 (a child c < 0 is leaf row -c-1), then the leaf row added; or, for
// a tree this small (3 nodes, at most 8: less flash), nested scf.if on constant thresholds.
// The integers are quantize's (test/lit/quantize/tree-ensemble.mlir works them out).
// RUN: sed -e 's/mode = "leq"/mode = "leq", lowering = "table"/' %s | minun-opt -p 'quantize{bits=8},lower-to-loops' | filecheck %s
// RUN: minun-opt %s -p 'quantize{bits=8},lower-to-loops' | filecheck %s --check-prefix=BR
// Node 2 (x[2] <= 3.0, always true at this scale) is no comparison at all:
// RUN: minun-opt %s -p 'quantize{bits=8},lower-to-loops' | not grep "constant 127"

func.func @main() -> tensor<1x1xf32> {
  %x = minun.input "X" [-1.0, 1.0] : tensor<1x4xf32>
  %t = minun.tree_ensemble %x {mode = "leq", roots = dense<[0]> : tensor<1xi32>, nodes = dense<[[0, 1, -1], [1, 2, -2], [2, -3, -4]]> : tensor<3x3xi32>, thresholds = dense<[0.31, -0.1, 3.0]> : tensor<3xf32>, leaves = dense<[[1.0], [2.0], [-1.5], [0.25]]> : tensor<4x1xf32>, base = dense<[0.5]> : tensor<1xf32>} : tensor<1x4xf32> -> tensor<1x1xf32>
  func.return %t : tensor<1x1xf32>
}
// The leaf rows 32, 64, -48, 8 are stored sorted and once each (-48, 8, 32, 64), so leaf
// -1 (row 0, 32) becomes -3, -2 (64) becomes -4 and -3 (-48) becomes -1.
// CHECK-DAG: sym_name = "t_leaves", type = memref<4xi8>, initial_value = dense<[-48, 8, 32, 64]>
// CHECK-DAG: sym_name = "t_feature", type = memref<3xi8>, initial_value = dense<[0, 1, 2]>
// CHECK-DAG: sym_name = "t_true", type = memref<3xi8>, initial_value = dense<[1, 2, -1]>
// CHECK-DAG: sym_name = "t_false", type = memref<3xi8>, initial_value = dense<[-3, -4, -1]>
// CHECK-DAG: sym_name = "t_threshold", type = memref<3xi8>, initial_value = dense<[19, -7, 127]>
// CHECK: func.func @minun_predict
// CHECK: %[[N:.*]] = scf.for {{.*}} iter_args(%[[M:.*]] = {{.*}}) -> (index) {
// CHECK:   %[[LIVE:.*]] = arith.cmpi sge, %[[M]]
// CHECK:   scf.if %[[LIVE]] -> (index) {
// CHECK:     memref.load %t_feature[%[[M]]]
// CHECK:     arith.cmpi sle, {{.*}} : i8
// CHECK:     arith.select
// CHECK: arith.subi {{.*}}, %[[N]] : index
// CHECK: memref.load %t_leaves

// BR-NOT: t_feature
// BR-DAG: arith.constant 19 : i8
// BR-DAG: arith.constant -7 : i8
// BR: %[[X0:.*]] = memref.load %x[{{.*}}] : memref<4xi8>
// BR: %[[C:.*]] = arith.cmpi sle, %[[X0]], {{.*}} : i8
// BR: scf.if %[[C]] -> (index) {
// BR: memref.load %t_leaves
