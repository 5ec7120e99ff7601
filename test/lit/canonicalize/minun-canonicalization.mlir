// The L1 canonicalization patterns (at the end of dialects/minun.py) under xDSL's
// canonicalize, spelled both ways.
// RUN: minun-opt %s --pass-pipeline='builtin.module(canonicalize)' | filecheck %s
// RUN: minun-opt %s -p canonicalize | filecheck %s

// CHECK-LABEL: func.func @transposes_cancel
func.func @transposes_cancel() -> tensor<10x1xf32> {
  %x = minun.input "X" [0.0, 1.0] : tensor<10x1xf32>
  %t = minun.transpose %x {perm = array<i64: 1, 0>} : (tensor<10x1xf32>) -> tensor<1x10xf32>
  %u = minun.transpose %t {perm = array<i64: 1, 0>} : (tensor<1x10xf32>) -> tensor<10x1xf32>
  // CHECK-NEXT: %x = minun.input
  // CHECK-NEXT: func.return %x
  func.return %u : tensor<10x1xf32>
}

// CHECK-LABEL: func.func @transposes_compose
func.func @transposes_compose() -> tensor<4x2x3xf32> {
  %x = minun.input "X" [0.0, 1.0] : tensor<2x3x4xf32>
  // NCHW->NHWC style pair: (2,3,4) -perm [1,2,0]-> (3,4,2) -perm [1,0,2]-> (4,3,2)... composed once
  %t = minun.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %u = minun.transpose %t {perm = array<i64: 1, 2, 0>} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  // CHECK-NEXT: %x = minun.input
  // CHECK-NEXT: %{{.*}} = minun.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  // CHECK-NEXT: func.return
  func.return %u : tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @double_negation_and_dead_code
func.func @double_negation_and_dead_code() -> tensor<3xf32> {
  %x = minun.input "X" [0.0, 1.0] : tensor<3xf32>
  %n = minun.neg %x : (tensor<3xf32>) -> tensor<3xf32>
  %m = minun.neg %n : (tensor<3xf32>) -> tensor<3xf32>
  %dead = minun.exp %m : (tensor<3xf32>) -> tensor<3xf32>
  %r = minun.reshape %m {order = array<i64: 0>} : tensor<3xf32> -> tensor<3xf32>
  // CHECK-NEXT: %x = minun.input
  // CHECK-NEXT: func.return %x
  func.return %r : tensor<3xf32>
}

// A reshape that permutes is kept.
// CHECK-LABEL: func.func @permuting_reshape_kept
func.func @permuting_reshape_kept() -> tensor<2x3xf32> {
  %x = minun.input "X" [0.0, 1.0] : tensor<2x3xf32>
  // CHECK: minun.reshape %x {order = array<i64: 1, 0>}
  %r = minun.reshape %x {order = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
