// A padded max pooling reads only the taps inside the input: per output pixel, the
// first and last window rows and columns inside it (max(0, -base), min(k, size - base)),
// no test per tap; a 3x3 window, stride 2, one pixel of padding on each side over a 4x4
// input gives 2x2 outputs, from the lowest int16 (-32768). The same skeleton serves
// every format: posit patterns order as the posits.
// RUN: minun-opt %s -p lower-to-loops | filecheck %s
// RUN: sed 's/!num.fixed<16, 14>/!num.posit<16, 2>/g' %s > %t.mlir
// RUN: minun-opt %t.mlir -p lower-to-loops | filecheck %s

func.func @main() -> i32 attributes {num.rounding = "nearest"} {
  %x = num.input "X" : tensor<1x4x4x1x!num.fixed<16, 14>>
  %p = num.maxpool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x1x!num.fixed<16, 14>>) -> tensor<1x2x2x1x!num.fixed<16, 14>>
  %a = num.argmax %p : tensor<1x2x2x1x!num.fixed<16, 14>>
  func.return %a : i32
}
// CHECK:      func.func @minun_predict(%x: memref<16xi16>, %out: memref<4xi16>)
// CHECK:      %[[LOWEST:.*]] = arith.constant -32768 : i16
// CHECK-NOT:  scf.if
// CHECK:          %[[KY0:.*]] = arith.maxsi
// CHECK:          %[[KY1:.*]] = arith.minsi
// CHECK:          %[[KX0:.*]] = arith.maxsi
// CHECK:          %[[KX1:.*]] = arith.minsi
// CHECK-NEXT:     %{{.*}} = scf.for %{{.*}} = %[[KY0]] to %[[KY1]] step %{{.*}} iter_args(%{{.*}} = %[[LOWEST]]) -> (i16) {
// CHECK-NEXT:       %{{.*}} = scf.for %{{.*}} = %[[KX0]] to %[[KX1]] step %{{.*}} iter_args(%[[M:.*]] = %{{.*}}) -> (i16) {
// CHECK:              %[[V:.*]] = memref.load %x
// CHECK-NEXT:         %{{.*}} = arith.maxsi %[[M]], %[[V]] : i16
// CHECK-NOT:  scf.if
// CHECK:      func.return
