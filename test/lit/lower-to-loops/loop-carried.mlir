// minun.loop -> scf.for: the carried tensor has one buffer, filled from the init before
// the loop; the yielded value is computed element-wise from the buffer itself (each
// element read only where it is written), so it is stored back in place, with the
// rescale applied on the way; the loop index (i32 in L2) is an `index` here.
// RUN: minun-opt %s -p lower-to-loops | filecheck %s

func.func @main() -> tensor<4x!num.fixed<16, 14>> attributes {num.rounding = "trunc"} {
  %x = num.input "X" : tensor<8x!num.fixed<16, 14>>
  %h0 = minun.init 0.0 : tensor<4x!num.fixed<16, 14>>
  %h = minun.loop (%t = 0 to 2) iter(%c = %h0) : tensor<4x!num.fixed<16, 14>> {
    %four = arith.constant 4 : i32
    %at = arith.muli %four, %t : i32
    %xt = minun.splice %x[%at] {sizes = array<i64: 4>} : tensor<8x!num.fixed<16, 14>> -> tensor<4x!num.fixed<16, 14>>
    %s = num.add %c, %xt : (tensor<4x!num.fixed<16, 14>>, tensor<4x!num.fixed<16, 14>>) -> tensor<4x!num.fixed<32, 14>>
    %n = num.rescale %s {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<4x!num.fixed<32, 14>> -> tensor<4x!num.fixed<16, 14>>
    minun.yield %n : tensor<4x!num.fixed<16, 14>>
  }
  func.return %h : tensor<4x!num.fixed<16, 14>>
}
// CHECK:      %[[H:.*]] = memref.alloc() : memref<4xi16>
// CHECK:      scf.for %[[I:.*]] = {{.*}} {
// CHECK-NEXT:   memref.store %{{.*}}, %[[H]][%[[I]]] : memref<4xi16>
// CHECK-NEXT: }
// CHECK:      scf.for %[[T:.*]] = {{.*}} {
// CHECK-NEXT:   %[[AT:.*]] = arith.muli %{{.*}}, %[[T]] overflow<nsw> : index
// CHECK-NEXT:   scf.for %[[J:.*]] = {{.*}} {
// CHECK-NEXT:     %[[C:.*]] = memref.load %[[H]][%[[J]]] : memref<4xi16>
// CHECK-NEXT:     %[[OFF:.*]] = arith.addi %[[AT]], %[[J]] overflow<nsw> : index
// CHECK-NEXT:     %[[XT:.*]] = memref.load %x[%[[OFF]]] : memref<8xi16>
// the sum wrapped to 16 bits without a shift: a 16-bit add
// CHECK-NEXT:     %[[S:.*]] = arith.addi %[[C]], %[[XT]] : i16
// CHECK-NEXT:     memref.store %[[S]], %[[H]][%[[J]]] : memref<4xi16>
// CHECK:      scf.for %[[K:.*]] = {{.*}} {
// CHECK-NEXT:   %[[V:.*]] = memref.load %[[H]][%[[K]]] : memref<4xi16>
// CHECK-NEXT:   memref.store %[[V]], %out[%[[K]]] : memref<4xi16>
