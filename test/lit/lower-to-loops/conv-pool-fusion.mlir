// The convolution's outputs are computed inside the (non-overlapping) pooling windows
// and only the pooled tensor is stored: no buffer holds the 4x4x2 convolution. The
// window is clipped to the input (first and last filter row and column inside it, no
// test per term), over the filter stored as [out channel][ky][kx][in channel]:
// F[0][ky][kx][0][co] = 2 * (3 * ky + kx) + co + 1, so channel 0 holds the odd numbers.
// RUN: minun-opt %s -p lower-to-loops | filecheck %s

func.func @main() -> i32 attributes {num.rounding = "trunc"} {
  %x = num.input "X" : tensor<1x4x4x1x!num.fixed<16, 14>>
  %f = num.param "F" dense<[[[[[1, 2]], [[3, 4]], [[5, 6]]], [[[7, 8]], [[9, 10]], [[11, 12]]], [[[13, 14]], [[15, 16]], [[17, 18]]]]]> : tensor<1x3x3x1x2xi16> -> tensor<1x3x3x1x2x!num.fixed<16, 14>>
  %c = num.conv2d %x, %f {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x4x4x1x!num.fixed<16, 14>>, tensor<1x3x3x1x2x!num.fixed<16, 14>>) -> tensor<1x4x4x2x!num.fixed<32, 28>>
  %r = num.rescale %c {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x4x4x2x!num.fixed<32, 28>> -> tensor<1x4x4x2x!num.fixed<16, 14>>
  %p = num.maxpool %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x2x!num.fixed<16, 14>>) -> tensor<1x2x2x2x!num.fixed<16, 14>>
  %a = num.argmax %p : tensor<1x2x2x2x!num.fixed<16, 14>>
  func.return %a : i32
}
// CHECK:      memref.global{{.*}}"p_F_t"{{.*}}dense<[1, 3, 5, 7, 9, 11, 13, 15, 17, 2, 4, 6, 8, 10, 12, 14, 16, 18]>
// CHECK-NOT:  memref.alloc
// CHECK:      func.func @minun_predict(%x: memref<16xi16>, %out: memref<8xi16>)
// CHECK:      %[[LOWEST:.*]] = arith.constant -32768 : i16
// the pooling window: the max of 2x2 convolution outputs, from the lowest int16
// CHECK:          scf.for {{.*}} iter_args(%{{.*}} = %[[LOWEST]]) -> (i16)
// CHECK-NOT:          scf.if
// CHECK:              %[[KY0:.*]] = arith.maxsi
// CHECK:              %[[KY1:.*]] = arith.minsi
// CHECK:              %[[KX0:.*]] = arith.maxsi
// CHECK:              %[[KX1:.*]] = arith.minsi
// CHECK:              scf.for %{{.*}} = %[[KY0]] to %[[KY1]]
// CHECK:                scf.for %{{.*}} = %[[KX0]] to %[[KX1]]
// CHECK:                  memref.load %x
// CHECK:                  memref.load %p_F_t
// CHECK:                  arith.muli %{{.*}}, %{{.*}} overflow<nsw> : i32
// CHECK:              arith.maxsi %{{.*}}, %{{.*}} : i16
// CHECK:        memref.store %{{.*}}, %out
