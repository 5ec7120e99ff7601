// Element-wise ops become one loop that stores straight into the output: the exact
// 32-bit sum (nsw: it cannot overflow) is rescaled on the fly (trunc: bias by the sign,
// then shift, no division), the parameter's rescale is folded into a new global, and
// the label is the first maximum of the scores.
// RUN: minun-opt %s -p lower-to-loops | filecheck %s

func.func @main() -> tensor<4x!num.fixed<16, 12>> attributes {num.rounding = "trunc", num.overflow = "wrap"} {
  %x = num.input "X" : tensor<4x!num.fixed<16, 14>>
  %b = num.param "B" dense<[400, -400, 1024, 7]> : tensor<4xi16> -> tensor<4x!num.fixed<16, 16>>
  %b14 = num.rescale %b {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<4x!num.fixed<16, 16>> -> tensor<4x!num.fixed<16, 14>>
  %s = num.add %x, %b14 : (tensor<4x!num.fixed<16, 14>>, tensor<4x!num.fixed<16, 14>>) -> tensor<4x!num.fixed<32, 14>>
  %r = num.rescale %s {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<4x!num.fixed<32, 14>> -> tensor<4x!num.fixed<16, 12>>
  func.return %r : tensor<4x!num.fixed<16, 12>>
}
// trunc(400 / 4) = 100, trunc(-400 / 4) = -100, 256, trunc(7 / 4) = 1
// CHECK:      "memref.global"() <{sym_name = "p_B_q16s14", type = memref<4xi16>, initial_value = dense<[100, -100, 256, 1]> : tensor<4xi16>, sym_visibility = "private", constant}>
// CHECK-NOT:  sym_name = "p_B"
// CHECK:      func.func @minun_predict(%x: memref<4xi16>, %out: memref<4xi16>) -> i32 attributes {num.rounding = "trunc", minun.input_encoding = !num.fixed<16, 14>, minun.output_encoding = !num.fixed<16, 12>
// CHECK-NOT:  memref.alloc
// CHECK:      scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:   %[[X:.*]] = memref.load %x[%[[I]]] : memref<4xi16>
// CHECK-NEXT:   %[[B:.*]] = memref.load %p_B_q16s14[%[[I]]] : memref<4xi16>
// CHECK-NEXT:   %[[XW:.*]] = arith.extsi %[[X]] : i16 to i32
// CHECK-NEXT:   %[[BW:.*]] = arith.extsi %[[B]] : i16 to i32
// CHECK-NEXT:   %[[S:.*]] = arith.addi %[[XW]], %[[BW]] overflow<nsw> : i32
// CHECK-NEXT:   %[[SIGN:.*]] = arith.shrsi %[[S]], %{{.*}} : i32
// CHECK-NEXT:   %[[BIAS:.*]] = arith.andi %[[SIGN]], %{{.*}} : i32
// CHECK-NEXT:   %[[T:.*]] = arith.addi %[[S]], %[[BIAS]] overflow<nsw> : i32
// CHECK-NEXT:   %[[Q:.*]] = arith.shrsi %[[T]], %{{.*}} : i32
// CHECK-NEXT:   %[[N:.*]] = arith.trunci %[[Q]] : i32 to i16
// CHECK-NEXT:   memref.store %[[N]], %out[%[[I]]] : memref<4xi16>
// CHECK:      scf.for {{.*}} iter_args({{.*}}) -> (index, i16) {
// CHECK:        arith.cmpi sgt
// CHECK:      func.return %{{.*}} : i32
