// minun.if_nonneg -> scf.if: only the taken branch runs; integer results (tree nodes)
// are `index` values; the condition reads the one-element tensor once.
// RUN: minun-opt %s -p lower-to-loops | filecheck %s

func.func @main() -> i32 attributes {num.rounding = "trunc"} {
  %x = num.input "X" : tensor<1x1x!num.fixed<16, 14>>
  %w = num.param "W" dense<[[[7]], [[-3]], [[5]]]> : tensor<3x1x1xi16> -> tensor<3x1x1x!num.fixed<16, 14>>
  %n0 = arith.constant 0 : i32
  %n1 = minun.if_nonneg %x : tensor<1x1x!num.fixed<16, 14>> -> i32 {
    %one = arith.constant 1 : i32
    minun.yield %one : i32
  } else {
    %two = arith.constant 2 : i32
    minun.yield %two : i32
  }
  %wn = minun.index %w[%n1] : tensor<3x1x1x!num.fixed<16, 14>> -> tensor<1x1x!num.fixed<16, 14>>
  %s = num.sgn %wn : tensor<1x1x!num.fixed<16, 14>>
  func.return %s : i32
}
// CHECK:      %[[X:.*]] = memref.load %x[%{{.*}}] : memref<1xi16>
// CHECK-NEXT: %[[GE:.*]] = arith.cmpi sge, %[[X]], %{{.*}} : i16
// CHECK-NEXT: %[[N:.*]] = scf.if %[[GE]] -> (index) {
// CHECK-NEXT:   scf.yield %{{.*}} : index
// CHECK-NEXT: } else {
// CHECK-NEXT:   scf.yield %{{.*}} : index
// CHECK-NEXT: }
// minun.index of a parameter is a view: the node selects the weight, nothing is copied
// CHECK-NEXT: %[[W:.*]] = memref.load %p_W[%[[N]]] : memref<3xi16>
// CHECK-NEXT: memref.store %[[W]], %out[%{{.*}}] : memref<1xi16>
// CHECK:      arith.cmpi sgt
