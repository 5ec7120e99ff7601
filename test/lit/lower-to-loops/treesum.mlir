// SeeDot's matmul: 16-bit products that wrap (muli without nsw), summed by TreeSum over
// a temporary array of the k = 5 terms, levels unrolled at compile time: 5 -> 3 -> 2 -> 1
// with the first 2 levels halving each operand (trunc), the odd term carried up.
// RUN: minun-opt %s -p lower-to-loops | filecheck %s

func.func @main() -> i32 attributes {num.rounding = "trunc"} {
  %x = num.input "X" : tensor<5x1x!num.fixed<16, 14>>
  %w = num.param "W" dense<[[100, -200, 300, -400, 500], [1, 2, 3, 4, 5]]> : tensor<2x5xi16> -> tensor<2x5x!num.fixed<16, 14>>
  %y = num.matmul %w, %x {rounding = #num<rounding trunc>, halvings = 2 : i64} : (tensor<2x5x!num.fixed<16, 14>>, tensor<5x1x!num.fixed<16, 14>>) -> tensor<2x1x!num.fixed<16, 26>>
  %a = num.argmax %y : tensor<2x1x!num.fixed<16, 26>>
  func.return %a : i32
}
// CHECK-DAG:  %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:  %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:  %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:  %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:  %[[T:.*]] = memref.alloc() : memref<5xi16>
// CHECK:      scf.for %[[I:.*]] = {{.*}} {
// products of the 5 terms, wrapped to 16 bits (no nsw)
// CHECK:        scf.for %[[K:.*]] = {{.*}} {
// CHECK:          %[[P:.*]] = arith.muli %{{.*}}, %{{.*}} : i16
// CHECK-NEXT:     memref.store %[[P]], %[[T]][%[[K]]] : memref<5xi16>
// level 1 (halving): a loop over the 2 pairs, then the odd 5th term halved into slot 2
// CHECK:        scf.for %{{.*}} = %[[C0]] to %[[C2]] step
// CHECK:        %[[ODD:.*]] = memref.load %[[T]][%[[C4]]] : memref<5xi16>
// CHECK:        memref.store %{{.*}}, %[[T]][%[[C2]]] : memref<5xi16>
// level 2 (halving): one pair into slot 0, the odd 3rd term halved into slot 1
// CHECK-NEXT:   memref.load %[[T]][%[[C0]]] : memref<5xi16>
// CHECK-NEXT:   memref.load %[[T]][%[[C1]]] : memref<5xi16>
// CHECK:        memref.store %{{.*}}, %[[T]][%[[C0]]] : memref<5xi16>
// CHECK-NEXT:   memref.load %[[T]][%[[C2]]] : memref<5xi16>
// CHECK:        memref.store %{{.*}}, %[[T]][%[[C1]]] : memref<5xi16>
// level 3 (no halving): a plain wrapping 16-bit add
// CHECK-NEXT:   %[[A:.*]] = memref.load %[[T]][%[[C0]]] : memref<5xi16>
// CHECK-NEXT:   %[[B:.*]] = memref.load %[[T]][%[[C1]]] : memref<5xi16>
// CHECK-NEXT:   %[[S:.*]] = arith.addi %[[A]], %[[B]] : i16
// CHECK-NEXT:   memref.store %[[S]], %[[T]][%[[C0]]] : memref<5xi16>
// CHECK-NEXT:   %[[R:.*]] = memref.load %[[T]][%[[C0]]] : memref<5xi16>
// CHECK-NEXT:   memref.store %[[R]], %out[%[[I]]] : memref<2xi16>
