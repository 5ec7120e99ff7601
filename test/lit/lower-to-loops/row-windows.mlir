// A depthwise 3x3 convolution over relu6 of a 1x1 convolution (MBConv's expand and
// depthwise steps): the 5x4x3 expanded tensor is never stored whole. Each output row
// first moves the two rows it shares with the previous one down in a window of
// 3 rows x 4 x 3 = 36 elements (2 x 12 = 24 elements, from 12 further on; none for row
// 0, which computes all three), then computes the new rows (rows outside 0..4 are
// padding, skipped), then its own elements from the window.
// RUN: minun-opt %s -p lower-to-loops | filecheck %s

func.func @main() -> tensor<1x5x4x3x!num.fixed<16, 12>> attributes {num.rounding = "trunc"} {
  %x = num.input "X" : tensor<1x5x4x2x!num.fixed<16, 14>>
  %f1 = num.param "F1" dense<[[[[[1000, -2000, 3000], [4000, 5000, -6000]]]]]> : tensor<1x1x1x2x3xi16> -> tensor<1x1x1x2x3x!num.fixed<16, 14>>
  %f2 = num.param "F2" dense<[[[[[1]], [[2]], [[3]]], [[[4]], [[5]], [[6]]], [[[7]], [[8]], [[9]]]], [[[[-1]], [[-2]], [[-3]]], [[[-4]], [[-5]], [[-6]]], [[[-7]], [[-8]], [[-9]]]], [[[[10]], [[20]], [[30]]], [[[40]], [[50]], [[60]]], [[[70]], [[80]], [[90]]]]]> : tensor<3x3x3x1x1xi16> -> tensor<3x3x3x1x1x!num.fixed<16, 14>>
  %e = num.conv2d %x, %f1 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x5x4x2x!num.fixed<16, 14>>, tensor<1x1x1x2x3x!num.fixed<16, 14>>) -> tensor<1x5x4x3x!num.fixed<32, 28>>
  %er = num.rescale %e {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x5x4x3x!num.fixed<32, 28>> -> tensor<1x5x4x3x!num.fixed<16, 12>>
  %r6 = num.relu6 %er : tensor<1x5x4x3x!num.fixed<16, 12>>
  %d = num.conv2d %r6, %f2 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 3 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x5x4x3x!num.fixed<16, 12>>, tensor<3x3x3x1x1x!num.fixed<16, 14>>) -> tensor<1x5x4x3x!num.fixed<32, 26>>
  %y = num.rescale %d {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x5x4x3x!num.fixed<32, 26>> -> tensor<1x5x4x3x!num.fixed<16, 12>>
  func.return %y : tensor<1x5x4x3x!num.fixed<16, 12>>
}
// CHECK:      func.func @minun_predict(%x: memref<40xi16>, %out: memref<60xi16>)
// CHECK-NOT:  memref.alloc() : memref<60xi16>
// CHECK:      %[[WIN:.*]] = memref.alloc() : memref<36xi16>
// CHECK-NOT:  memref.alloc
// CHECK-DAG:  %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:  %[[C24:.*]] = arith.constant 24 : index
// CHECK-DAG:  %[[C12:.*]] = arith.constant 12 : index
// the output rows, in order
// CHECK:      scf.for %[[O:.*]] = %{{.*}} to %{{.*}} step
// CHECK:        %[[FIRST:.*]] = arith.cmpi eq, %[[O]], %{{.*}} : index
// CHECK:        %[[LO:.*]] = arith.select %[[FIRST]], %{{.*}}, %[[C2]] : index
// CHECK:        %[[MOVED:.*]] = arith.select %[[FIRST]], %{{.*}}, %[[C24]] : index
// CHECK:        scf.for %[[E:.*]] = %{{.*}} to %[[MOVED]] step
// CHECK:          %[[SRC:.*]] = arith.addi %[[E]], %[[C12]] overflow<nsw> : index
// CHECK:          %[[V:.*]] = memref.load %[[WIN]][%[[SRC]]]
// CHECK:          memref.store %[[V]], %[[WIN]][%[[E]]]
// the new rows of the window, each from the input (the 1x1 convolution, relu6)
// CHECK:        scf.for %{{.*}} = %[[LO]] to %{{.*}} step
// CHECK:          scf.if
// CHECK:            memref.load %x
// CHECK:            arith.minsi
// CHECK:            memref.store %{{.*}}, %[[WIN]]
// the output row's elements, from the window only
// CHECK-NOT:    memref.load %x
// CHECK:        memref.load %[[WIN]]
// CHECK:        memref.store %{{.*}}, %out
