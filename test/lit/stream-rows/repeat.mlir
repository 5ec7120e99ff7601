// stream-rows repeats a row instead of keeping it (repeats_row): the producer loop writes
// rows 0..2 of %T, row 2 is copied into row 3 (the row after it, columns 0..1) and column 1
// into column 2 in every row, so row 3 equals row 2 in every column. The ring of the 3x3
// convolution got row 2 at step 2; at step 3 it pushes that newest row again (its rows
// moved down, the last kept): no kept row, no zero row, no copy, no producer body at step 3.
// With the kept row gone the rings (36 B) are smaller than %T (48 B): streamed without
// every=true too, and the loop's stream_rows says which row it pushed again.
// RUN: minun-opt %s -p stream-rows | filecheck %s
// CHECK-NOT:  %T = minun.init
// CHECK:      %[[RING:.*]] = minun.init 0.0 : tensor<1x3x3x2x!num.fixed<16, 14>>
// CHECK-NEXT: %[[OUT:.*]] = minun.init 0.0 {stream_rows_unset, stream_rows_id = 0 : i64, stream_rows_over = "input 0"} : tensor<1x4x3x2x!num.fixed<16, 13>>
// CHECK-NEXT: minun.loop (%{{.*}} = 0 to 1) iter(%{{.*}} = %acc, %{{.*}} = %[[RING]], %{{.*}} = %[[OUT]])
// CHECK:      minun.loop (%{{.*}} = 3 to 4) iter(%{{.*}}, %[[R3:.*]] = %{{.*}}, %{{.*}})
// CHECK-NOT:  minun.init
// CHECK-NOT:  %Xt
// CHECK:      %[[M0:.*]] = minun.splice %[[R3]][{{.*}}] {sizes = array<i64: 1, 1, 3, 2>}
// CHECK:      %[[MOVED:.*]] = minun.splice_assign %[[M0]] into %[[R3]][{{.*}}] {stream_rows_move}
// CHECK:      %[[M1:.*]] = minun.splice %[[MOVED]][{{.*}}] {sizes = array<i64: 1, 1, 3, 2>}
// CHECK:      %[[AGAIN:.*]] = minun.splice_assign %[[M1]] into %[[MOVED]][{{.*}}] {stream_rows_move}
// CHECK-NEXT: num.conv2d %[[AGAIN]], %F {{{.*}}pads = array<i64: 0, 0, 1, 1>
// CHECK:      minun.loop (%{{.*}} = 4 to 5) {{.*}}{stream_rows = "ops 8 rows 4 buffers 1 ring bytes 36 feature maps replaced 48 B recomputation 0 over the input at 0 B row 2 pushed again as row 3"}
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
    %15 = arith.constant 2 : i32
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