// num.rescale per docs/numerics.md, one element at a time: floor is an arithmetic
// shift, nearest adds bit n-1 (no overflow possible), saturation clamps before
// narrowing, a left shift that saturates compares with thresholds first (so the shift
// never overflows), and a wrapped narrowing is a plain trunci.
// RUN: minun-opt %s --split-input-file -p lower-to-loops | filecheck %s

func.func @main() -> tensor<2x!num.fixed<16, 10>> attributes {num.rounding = "floor"} {
  %x = num.input "X" : tensor<2x!num.fixed<16, 14>>
  %r = num.rescale %x {rounding = #num<rounding floor>, overflow = #num<overflow wrap>} : tensor<2x!num.fixed<16, 14>> -> tensor<2x!num.fixed<16, 10>>
  func.return %r : tensor<2x!num.fixed<16, 10>>
}
// CHECK-LABEL: func.func @minun_predict
// CHECK:         %[[X:.*]] = memref.load %x
// CHECK-NEXT:    %[[Y:.*]] = arith.shrsi %[[X]], %{{.*}} : i16
// CHECK-NEXT:    memref.store %[[Y]], %out

// -----
func.func @main() -> tensor<2x!num.fixed<8, 10>> attributes {num.rounding = "nearest"} {
  %x = num.input "X" : tensor<2x!num.fixed<32, 14>>
  %r = num.rescale %x {rounding = #num<rounding nearest>, overflow = #num<overflow saturate>} : tensor<2x!num.fixed<32, 14>> -> tensor<2x!num.fixed<8, 10>>
  func.return %r : tensor<2x!num.fixed<8, 10>>
}
// CHECK-LABEL: func.func @minun_predict
// CHECK:         %[[X:.*]] = memref.load %x
// CHECK-NEXT:    %[[H:.*]] = arith.shrsi %[[X]], %{{.*}} : i32
// CHECK-NEXT:    %[[B:.*]] = arith.andi %[[H]], %{{.*}} : i32
// CHECK-NEXT:    %[[Q:.*]] = arith.shrsi %[[X]], %{{.*}} : i32
// CHECK-NEXT:    %[[R:.*]] = arith.addi %[[Q]], %[[B]] overflow<nsw> : i32
// CHECK-NEXT:    %[[HI:.*]] = arith.minsi %[[R]], %{{.*}} : i32
// CHECK-NEXT:    %[[LO:.*]] = arith.maxsi %[[HI]], %{{.*}} : i32
// CHECK-NEXT:    %[[N:.*]] = arith.trunci %[[LO]] : i32 to i8

// -----
func.func @main() -> tensor<2x!num.fixed<16, 20>> attributes {num.rounding = "trunc"} {
  %x = num.input "X" : tensor<2x!num.fixed<8, 6>>
  %r = num.rescale %x {rounding = #num<rounding trunc>, overflow = #num<overflow saturate>} : tensor<2x!num.fixed<8, 6>> -> tensor<2x!num.fixed<16, 20>>
  func.return %r : tensor<2x!num.fixed<16, 20>>
}
// x * 2^14 saturated to 16 bits: values above 1 (= 32767 >> 14) give 32767
// CHECK-LABEL: func.func @minun_predict
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : i8
// CHECK-DAG:     %[[CM2:.*]] = arith.constant -2 : i8
// CHECK:         %[[X:.*]] = memref.load %x
// CHECK-NEXT:    %[[C:.*]] = arith.minsi %[[X]], %[[C1]] : i8
// CHECK-NEXT:    %[[D:.*]] = arith.maxsi %[[C]], %[[CM2]] : i8
// CHECK-NEXT:    %[[E:.*]] = arith.extsi %[[D]] : i8 to i16
// CHECK-NEXT:    %[[S:.*]] = arith.shli %[[E]], %{{.*}} overflow<nsw> : i16
// CHECK-NEXT:    %[[GT:.*]] = arith.cmpi sgt, %[[X]], %[[C1]] : i8
// CHECK-NEXT:    %[[Y:.*]] = arith.select %[[GT]], %{{.*}}, %[[S]] : i16
// CHECK-NEXT:    %[[LT:.*]] = arith.cmpi slt, %[[X]], %[[CM2]] : i8
// CHECK-NEXT:    arith.select %[[LT]], %{{.*}}, %[[Y]] : i16

// -----
func.func @main() -> tensor<2x!num.fixed<16, 12>> attributes {num.rounding = "trunc"} {
  %x = num.input "X" : tensor<2x!num.fixed<32, 12>>
  %r = num.rescale %x {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<2x!num.fixed<32, 12>> -> tensor<2x!num.fixed<16, 12>>
  func.return %r : tensor<2x!num.fixed<16, 12>>
}
// CHECK-LABEL: func.func @minun_predict
// CHECK:         %[[X:.*]] = memref.load %x
// CHECK-NEXT:    %[[Y:.*]] = arith.trunci %[[X]] : i32 to i16
// CHECK-NEXT:    memref.store %[[Y]], %out
