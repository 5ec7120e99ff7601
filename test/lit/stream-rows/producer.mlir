// stream-rows with a producer loop: the loop writes row %p of the zero tensor %T at its
// iteration %p (rows 0..2 of 4, columns 0..1 of 3), then two fix-ups: row 1 is copied into
// row 3 (not the row before it: repeat.mlir has that case), and column 1 into column 2 in every row; then a 3x3 convolution reads %T. Streamed (every=true: at this size the rings are no smaller than
// %T), the loop's body runs at steps 0..2 on a one-row tensor written at row 0, step 3
// emits a zero row into which the kept row 1 is copied, every row gets its column copy
// (a one-row splice written back), and the convolution reads a ring
// of 3 rows one step behind; %T is never held whole.
// RUN: minun-opt %s -p 'stream-rows{every=true}' | filecheck %s
// RUN: minun-opt %s -p stream-rows | filecheck %s --check-prefix=GAIN
// CHECK-NOT:  %T = minun.init
// CHECK:      %[[KEPT:.*]] = minun.init 0.0 : tensor<1x1x3x2x!num.fixed<16, 15>>
// CHECK-NEXT: %[[RING:.*]] = minun.init 0.0 : tensor<1x3x3x2x!num.fixed<16, 14>>
// CHECK-NEXT: %[[OUT:.*]] = minun.init 0.0 {stream_rows_unset, stream_rows_id = 0 : i64, stream_rows_over = "input 0"} : tensor<1x4x3x2x!num.fixed<16, 13>>
// CHECK-NEXT: minun.loop (%[[T:.*]] = 0 to 1) iter(%{{.*}} = %acc, %{{.*}} = %[[KEPT]], %{{.*}} = %[[RING]], %{{.*}} = %[[OUT]])
// CHECK:      %[[ROW:.*]] = minun.init 0.0 : tensor<1x1x3x2x!num.fixed<16, 15>>
// CHECK:      minun.splice %Xt[%{{.*}}, %[[T]], %{{.*}}, %{{.*}}] {sizes = array<i64: 1, 1, 2, 2>}
// CHECK:      %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT: minun.splice_assign %{{.*}} into %[[ROW]][%{{.*}}, %[[Z]], %{{.*}}, %{{.*}}] : tensor<1x1x2x2x!num.fixed<16, 15>> into tensor<1x1x3x2x!num.fixed<16, 15>>
// CHECK-NOT:  num.conv2d
// CHECK:      minun.loop (%{{.*}} = 1 to 2)
// CHECK:      num.conv2d %{{.*}}, %F {{{.*}}pads = array<i64: 0, 0, 1, 1>
// CHECK:      minun.loop (%{{.*}} = 2 to 3)
// CHECK:      minun.yield %{{.*}}, %[[ROW2:.*]], %{{.*}}, %{{.*}} :
// CHECK:      minun.loop (%{{.*}} = 3 to 4) iter(%{{.*}}, %[[KEPT2:.*]] = %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT:  %Xt
// CHECK:      %[[ZROW:.*]] = minun.init 0.0 : tensor<1x1x3x2x!num.fixed<16, 15>>
// CHECK:      %[[PIECE:.*]] = minun.splice %[[KEPT2]][{{.*}}] {sizes = array<i64: 1, 1, 2, 2>}
// CHECK:      %[[COPIED:.*]] = minun.splice_assign %[[PIECE]] into %[[ZROW]][
// CHECK:      %[[COL:.*]] = minun.splice %[[COPIED]][{{.*}}] {sizes = array<i64: 1, 1, 1, 2>}
// CHECK:      minun.splice_assign %[[COL]] into %[[COPIED]][
// CHECK:      minun.loop (%{{.*}} = 4 to 5) {{.*}}{stream_rows = "ops 8 rows 4 buffers 2 ring bytes 48 feature maps replaced 48 B recomputation 0 over the input at 0 B"}
// GAIN:       %dummy, %{{.*}} = minun.loop (%p = 0 to 3) {{.*}}stream_rows_refused = "8 ops, ended by minun.reshape: not a fixed-point (1, H, W, C) tensor: rings of 48 B would replace 48 B of feature maps"
builtin.module {
  func.func @main() -> tensor<1x24x!num.fixed<16, 13>> attributes {num.rounding = "trunc", num.overflow = "wrap"} {
    %X = num.input "X" : tensor<24x1x!num.fixed<16, 15>>
    %Xt = minun.reshape %X {order = array<i64: 0, 1>} : tensor<24x1x!num.fixed<16, 15>> -> tensor<1x4x3x2x!num.fixed<16, 15>>
    %T = minun.init 0.0 : tensor<1x4x3x2x!num.fixed<16, 15>>
    %acc = minun.init 0.0 : tensor<1x1x!num.fixed<16, 15>>
    %dummy, %0 = minun.loop (%p = 0 to 3) iter(%acc_1 = %acc, %T_1 = %T) : tensor<1x1x!num.fixed<16, 15>>, tensor<1x4x3x2x!num.fixed<16, 15>> {
      %1 = arith.constant 0 : i32
      %2 = arith.constant 0 : i32
      %3 = arith.constant 0 : i32
      %4 = arith.constant 0 : i32
      %5 = arith.constant 0 : i32
      %6 = arith.constant 0 : i32
      %7 = minun.splice %Xt[%4, %p, %5, %6] {sizes = array<i64: 1, 1, 2, 2>} : tensor<1x4x3x2x!num.fixed<16, 15>> -> tensor<1x1x2x2x!num.fixed<16, 15>>
      %8 = num.relu %7 : tensor<1x1x2x2x!num.fixed<16, 15>>
      %9 = minun.splice_assign %8 into %T_1[%1, %p, %2, %3] : tensor<1x1x2x2x!num.fixed<16, 15>> into tensor<1x4x3x2x!num.fixed<16, 15>>
      minun.yield %acc_1, %9 : tensor<1x1x!num.fixed<16, 15>>, tensor<1x4x3x2x!num.fixed<16, 15>>
    }
    %10 = arith.constant 0 : i32
    %11 = arith.constant 3 : i32
    %12 = arith.constant 0 : i32
    %13 = arith.constant 0 : i32
    %14 = arith.constant 0 : i32
    %15 = arith.constant 1 : i32
    %16 = arith.constant 0 : i32
    %17 = arith.constant 0 : i32
    %18 = minun.splice %0[%14, %15, %16, %17] {sizes = array<i64: 1, 1, 2, 2>} : tensor<1x4x3x2x!num.fixed<16, 15>> -> tensor<1x1x2x2x!num.fixed<16, 15>>
    %19 = minun.splice_assign %18 into %0[%10, %11, %12, %13] : tensor<1x1x2x2x!num.fixed<16, 15>> into tensor<1x4x3x2x!num.fixed<16, 15>>
    %20 = arith.constant 0 : i32
    %21 = arith.constant 0 : i32
    %22 = arith.constant 2 : i32
    %23 = arith.constant 0 : i32
    %24 = arith.constant 0 : i32
    %25 = arith.constant 0 : i32
    %26 = arith.constant 1 : i32
    %27 = arith.constant 0 : i32
    %28 = minun.splice %19[%24, %25, %26, %27] {sizes = array<i64: 1, 4, 1, 2>} : tensor<1x4x3x2x!num.fixed<16, 15>> -> tensor<1x4x1x2x!num.fixed<16, 15>>
    %29 = minun.splice_assign %28 into %19[%20, %21, %22, %23] : tensor<1x4x1x2x!num.fixed<16, 15>> into tensor<1x4x3x2x!num.fixed<16, 15>>
    %F = num.param "F" dense<[[[[[2643, 31520], [24517, -2067]], [[-13849, -9731], [-10543, 25538]], [[19438, -27501], [8879, 2256]]], [[[-32400, 15562], [-18996, 7213]], [[-6933, 31090], [-21243, -22146]], [[-3288, -9574], [-19086, 10198]]], [[[-10923, 13477], [12787, -15012]], [[-30291, 28476], [24289, 15324]], [[-15988, 17767], [-27802, -22949]]]]]> : tensor<1x3x3x2x2xi16> -> tensor<1x3x3x2x2x!num.fixed<16, 15>>
    %30 = num.rescale %29 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x4x3x2x!num.fixed<16, 15>> -> tensor<1x4x3x2x!num.fixed<16, 14>>
    %31 = num.conv2d %30, %F {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x4x3x2x!num.fixed<16, 14>>, tensor<1x3x3x2x2x!num.fixed<16, 15>>) -> tensor<1x4x3x2x!num.fixed<32, 29>>
    %a = num.rescale %31 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x4x3x2x!num.fixed<32, 29>> -> tensor<1x4x3x2x!num.fixed<16, 13>>
    %32 = minun.reshape %a {order = array<i64: 0, 1, 2, 3>} : tensor<1x4x3x2x!num.fixed<16, 13>> -> tensor<1x24x!num.fixed<16, 13>>
    func.return %32 : tensor<1x24x!num.fixed<16, 13>>
  }
}