// A posit convolution gets the same skeleton as fixed point: the window clipped to the
// input (no test per tap: a padded tap adds 0 * w = 0 to the quire) over the filter
// stored transposed as [out channel][ky][kx][in channel] (F[0][ky][kx][0][co] =
// 2 * (3 * ky + kx) + co + 1: channel 0 holds the odd numbers). With a quire: clear,
// one fma per tap inside the clipped window, qpop. Without (num.quire = false): a
// partial sum from 0, add(acc, mul(x, w)) per tap, in the same (ky, kx, c) order.
// RUN: minun-opt %s -p lower-to-loops | filecheck %s
// RUN: sed 's/num.rounding = "nearest"}/num.rounding = "nearest", num.quire = false}/' %s > %t.mlir
// RUN: minun-opt %t.mlir -p lower-to-loops | filecheck %s --check-prefix=ROUNDED

func.func @main() -> i32 attributes {num.rounding = "nearest"} {
  %x = num.input "X" : tensor<1x4x4x1x!num.posit<8, 2>>
  %f = num.param "F" dense<[[[[[1, 2]], [[3, 4]], [[5, 6]]], [[[7, 8]], [[9, 10]], [[11, 12]]], [[[13, 14]], [[15, 16]], [[17, 18]]]]]> : tensor<1x3x3x1x2xi8> -> tensor<1x3x3x1x2x!num.posit<8, 2>>
  %c = num.conv2d %x, %f {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding nearest>, halvings = 0 : i64} : (tensor<1x4x4x1x!num.posit<8, 2>>, tensor<1x3x3x1x2x!num.posit<8, 2>>) -> tensor<1x4x4x2x!num.posit<8, 2>>
  %a = num.argmax %c : tensor<1x4x4x2x!num.posit<8, 2>>
  func.return %a : i32
}
// CHECK:      memref.global{{.*}}"p_F_t"{{.*}}dense<[1, 3, 5, 7, 9, 11, 13, 15, 17, 2, 4, 6, 8, 10, 12, 14, 16, 18]> : tensor<18xi8>
// CHECK:      func.func @minun_predict(%x: memref<16xi8>, %out: memref<32xi8>)
// CHECK-NOT:  scf.if
// CHECK:            %[[KY0:.*]] = arith.maxsi
// CHECK:            %[[KY1:.*]] = arith.minsi
// CHECK:            %[[KX0:.*]] = arith.maxsi
// CHECK:            %[[KX1:.*]] = arith.minsi
// CHECK-NEXT:       func.call @minun_p8e2_qclear_1() : () -> ()
// CHECK-NEXT:       scf.for %{{.*}} = %[[KY0]] to %[[KY1]] step %{{.*}} {
// CHECK-NEXT:         scf.for %{{.*}} = %[[KX0]] to %[[KX1]] step %{{.*}} {
// CHECK:                %[[X:.*]] = memref.load %x
// CHECK:                %[[W:.*]] = memref.load %p_F_t
// CHECK-NEXT:           func.call @minun_p8e2_fma_1(%[[X]], %[[W]]) : (i8, i8) -> ()
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:       %{{.*}} = func.call @minun_p8e2_qpop_1() : () -> i8
// CHECK-NOT:  scf.if
// CHECK:      func.return

// ROUNDED:      memref.global{{.*}}"p_F_t"{{.*}}dense<[1, 3, 5, 7, 9, 11, 13, 15, 17, 2, 4, 6, 8, 10, 12, 14, 16, 18]> : tensor<18xi8>
// ROUNDED-NOT:  minun_p8e2_qclear
// ROUNDED:      %[[ZERO:.*]] = arith.constant 0 : i8
// ROUNDED-NOT:  scf.if
// ROUNDED:            %[[KY0:.*]] = arith.maxsi
// ROUNDED:            %[[KY1:.*]] = arith.minsi
// ROUNDED:            %[[KX0:.*]] = arith.maxsi
// ROUNDED:            %[[KX1:.*]] = arith.minsi
// ROUNDED-NEXT:       scf.for %{{.*}} = %[[KY0]] to %[[KY1]] step %{{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (i8) {
// ROUNDED-NEXT:         scf.for %{{.*}} = %[[KX0]] to %[[KX1]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (i8) {
// ROUNDED:                %[[X:.*]] = memref.load %x
// ROUNDED:                %[[W:.*]] = memref.load %p_F_t
// ROUNDED-NEXT:           %[[P:.*]] = func.call @minun_p8e2_mul(%[[X]], %[[W]]) : (i8, i8) -> i8
// ROUNDED-NEXT:           %{{.*}} = func.call @minun_p8e2_add(%[[ACC]], %[[P]]) : (i8, i8) -> i8
// ROUNDED-NOT:  scf.if
// ROUNDED:      func.return
