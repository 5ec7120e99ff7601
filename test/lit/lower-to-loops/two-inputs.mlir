// Two inputs: minun_predict still takes one buffer x, holding the inputs one after
// another in program order (a's 4 values, then b's 5: x has 9), so b's element i is
// x[i + 4]. The function records each input's name, shape and scale for model.h.
// RUN: minun-opt %s -p lower-to-loops | filecheck %s

func.func @main() -> tensor<1x4x!num.fixed<32, 20>> attributes {num.rounding = "trunc", num.overflow = "wrap"} {
  %a = num.input "a" : tensor<1x4x!num.fixed<16, 14>>
  %b = num.input "b" : tensor<1x5x!num.fixed<16, 12>>
  %W = num.param "W" dense<[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16], [17, 18, 19, 20]]> : tensor<5x4xi16> -> tensor<5x4x!num.fixed<16, 8>>
  %p = num.matmul %b, %W {rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x5x!num.fixed<16, 12>>, tensor<5x4x!num.fixed<16, 8>>) -> tensor<1x4x!num.fixed<32, 20>>
  %c = num.rescale %a {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x4x!num.fixed<16, 14>> -> tensor<1x4x!num.fixed<32, 20>>
  %s = num.add %p, %c : (tensor<1x4x!num.fixed<32, 20>>, tensor<1x4x!num.fixed<32, 20>>) -> tensor<1x4x!num.fixed<32, 20>>
  func.return %s : tensor<1x4x!num.fixed<32, 20>>
}
// CHECK:      func.func @minun_predict(%x: memref<9xi16>, %out: memref<4xi32>) -> i32
// CHECK-SAME: minun.output_encoding = !num.fixed<32, 20>
// CHECK-SAME: minun.input_names = "a,b", minun.input_shapes = "1x4,1x5", minun.input_scales = "14,12"
// CHECK-NOT:  minun.input_encoding =
// CHECK-DAG:  %[[FOUR:.*]] = arith.constant 4 : index
// CHECK:        %[[K:.*]] = arith.addi %{{.*}}, %[[FOUR]] overflow<nsw> : index
// CHECK-NEXT:   memref.load %x[%[[K]]] : memref<9xi16>
