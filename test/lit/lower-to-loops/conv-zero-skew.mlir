// A zero-skew (int8) convolution gets the fixed-point skeleton: the window clipped to
// the input (the first and last filter rows and columns inside it, no test per tap:
// a padded tap would add (zp - zp) * w = 0) over the filter stored transposed as
// [out channel][ky][kx][in channel]. F[0][ky][kx][0][co] = 2 * (3 * ky + kx) + co + 1,
// so output channel 0 reads the odd numbers, channel 1 the even ones. Each term is
// (x - (-128)) * w in 16 bits (one zero point is 0: at most 255 * 128), summed in int32.
// RUN: minun-opt %s -p lower-to-loops | filecheck %s

func.func @main() -> i32 attributes {num.rounding = "nearest"} {
  %x = num.input "X" : tensor<1x4x4x1x!num.affine<8, 0.00392156862745098, -128>>
  %f = num.param "F" dense<[[[[[1, 2]], [[3, 4]], [[5, 6]]], [[[7, 8]], [[9, 10]], [[11, 12]]], [[[13, 14]], [[15, 16]], [[17, 18]]]]]> : tensor<1x3x3x1x2xi8> -> tensor<1x3x3x1x2x!num.affine<8, 0.01, 0>>
  %c = num.conv2d %x, %f {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding nearest>, halvings = 0 : i64} : (tensor<1x4x4x1x!num.affine<8, 0.00392156862745098, -128>>, tensor<1x3x3x1x2x!num.affine<8, 0.01, 0>>) -> tensor<1x4x4x2x!num.affine<32, 3.9215686274509805e-05, 0>>
  %a = num.argmax %c : tensor<1x4x4x2x!num.affine<32, 3.9215686274509805e-05, 0>>
  func.return %a : i32
}
// CHECK:      memref.global{{.*}}"p_F_t"{{.*}}dense<[1, 3, 5, 7, 9, 11, 13, 15, 17, 2, 4, 6, 8, 10, 12, 14, 16, 18]> : tensor<18xi8>
// CHECK:      func.func @minun_predict(%x: memref<16xi8>, %out: memref<32xi32>)
// CHECK:      %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:      %[[ZP:.*]] = arith.constant -128 : i16
// CHECK-NOT:  scf.if
// CHECK:            %[[KY0:.*]] = arith.maxsi
// CHECK:            %[[KY1:.*]] = arith.minsi
// CHECK:            %[[KX0:.*]] = arith.maxsi
// CHECK:            %[[KX1:.*]] = arith.minsi
// CHECK:            scf.for %{{.*}} = %[[KY0]] to %[[KY1]] step %{{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (i32) {
// one loop over a window row (kx x in channel, contiguous in the input and the filter)
// CHECK-NEXT:         scf.for %{{.*}} = %[[KX0]] to %[[KX1]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (i32) {
// CHECK:                %[[X:.*]] = memref.load %x
// CHECK:                %[[W:.*]] = memref.load %p_F_t
// CHECK:                %[[XE:.*]] = arith.extsi %[[X]] : i8 to i16
// CHECK-NEXT:           %[[XD:.*]] = arith.subi %[[XE]], %[[ZP]] overflow<nsw> : i16
// CHECK-NEXT:           %[[WE:.*]] = arith.extsi %[[W]] : i8 to i16
// CHECK-NEXT:           %[[P:.*]] = arith.muli %[[XD]], %[[WE]] : i16
// CHECK-NEXT:           %[[PE:.*]] = arith.extsi %[[P]] : i16 to i32
// CHECK-NEXT:           arith.addi %[[ACC]], %[[PE]] : i32
// CHECK-NOT:  scf.if
// CHECK:      func.return
