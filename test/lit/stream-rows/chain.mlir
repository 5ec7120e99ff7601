// stream-chains (passes/stream_chains.py): the stages, windows and steps of a chain.
// stream-rows: conv3x3 -> relu -> conv3x3 over 8 rows becomes loops over rows t with a
// ring of 3 rows per 3x3 convolution (rows moved down, the new row written last) and the
// convolution on its ring with no row padding (the moves are marked stream_rows_move:
// lower-to-loops copies them in place, no temporary); the segments where a stage has no row yet
// or pushes a zero row below the image are loops of their own. The relu'd feature map
// (8x4x2, 128 B) is replaced by a 3-row ring; recomputation 0.
// RUN: minun-opt %s -p stream-rows | filecheck %s
// CHECK:      %[[R0:.*]] = minun.init 0.0 : tensor<1x3x4x1x!num.fixed<16, 14>>
// CHECK-NEXT: %[[R1:.*]] = minun.init 0.0 : tensor<1x3x4x2x!num.fixed<16, 13>>
// CHECK-NEXT: %[[OUT:.*]] = minun.init 0.0 {stream_rows_unset, stream_rows_id = 0 : i64} : tensor<1x8x4x2x!num.fixed<16, 12>>
// CHECK-NEXT: minun.loop (%{{.*}} = 0 to 1) iter(%[[RING:.*]] = %[[R0]], %{{.*}} = %[[R1]], %{{.*}} = %[[OUT]])
// CHECK:      %[[ROW1:.*]] = minun.splice %[[RING]][%[[Z:.*]], %[[ONE:.*]], %[[Z]], %[[Z]]] {sizes = array<i64: 1, 1, 4, 1>}
// CHECK:      minun.splice_assign %[[ROW1]] into %[[RING]][%[[Z]], %{{.*}}, %[[Z]], %[[Z]]] {stream_rows_move}
// CHECK-NOT:  num.conv2d
// CHECK:      minun.loop (%{{.*}} = 1 to 2)
// CHECK:      num.conv2d %{{.*}}, %F1 {{{.*}}pads = array<i64: 0, 0, 1, 1>{{.*}} -> tensor<1x1x4x2x!num.fixed<32, 29>>
// CHECK-NOT:  %F2
// CHECK:      minun.loop (%[[T:.*]] = 2 to 8)
// CHECK:      num.conv2d %{{.*}}, %F1
// CHECK:      num.conv2d %{{.*}}, %F2 {{{.*}}pads = array<i64: 0, 0, 1, 1>{{.*}} -> tensor<1x1x4x2x!num.fixed<32, 28>>
// CHECK:      %[[C2:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[ROW:.*]] = arith.subi %[[T]], %[[C2]] : i32
// CHECK-NEXT: minun.splice_assign %{{.*}} into %{{.*}}[%{{.*}}, %[[ROW]], %{{.*}}, %{{.*}}] : tensor<1x1x4x2x!num.fixed<16, 12>> into tensor<1x8x4x2x!num.fixed<16, 12>>
// CHECK:      minun.loop (%{{.*}} = 8 to 9)
// CHECK:      minun.init 0.0 : tensor<1x1x4x1x!num.fixed<16, 14>>
// CHECK:      %{{.*}}, %{{.*}}, %b = minun.loop (%{{.*}} = 9 to 10) {{.*}}{stream_rows = "ops 6 rows 8 buffers 2 ring bytes 72 feature maps replaced 128 B recomputation 0"}
// CHECK-NOT:  %F1
// CHECK:      minun.init 0.0 : tensor<1x1x4x2x!num.fixed<16, 13>>
// CHECK:      num.conv2d %{{.*}}, %F2
// CHECK:      minun.reshape %b
builtin.module {
  func.func @main() -> tensor<1x64x!num.fixed<16, 12>> attributes {num.rounding = "trunc", num.overflow = "wrap"} {
    %X = num.input "X" : tensor<32x1x!num.fixed<16, 15>>
    %Xt = minun.reshape %X {order = array<i64: 0, 1>} : tensor<32x1x!num.fixed<16, 15>> -> tensor<1x8x4x1x!num.fixed<16, 15>>
    %F1 = num.param "F1" dense<[[[[[20784, 25476]], [[-10209, -10663]], [[-32391, -24928]]], [[[-21508, -20124]], [[-1797, 24140]], [[-6389, -14606]]], [[[-6225, -8208]], [[31695, -24478]], [[19356, 11157]]]]]> : tensor<1x3x3x1x2xi16> -> tensor<1x3x3x1x2x!num.fixed<16, 15>>
    %F2 = num.param "F2" dense<[[[[[11743, 18874], [-5469, -15719]], [[-12158, 30394], [2954, -13836]], [[-5910, -21526], [29135, 2161]]], [[[-15854, 2025], [-16455, 16203]], [[-13885, 32525], [-18601, 9596]], [[5871, -20688], [28247, 16866]]], [[[-5304, 30747], [-11885, 30819]], [[-7387, 3617], [20998, -2931]], [[-19987, -22937], [8173, 501]]]]]> : tensor<1x3x3x2x2xi16> -> tensor<1x3x3x2x2x!num.fixed<16, 15>>
    %0 = num.rescale %Xt {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x8x4x1x!num.fixed<16, 15>> -> tensor<1x8x4x1x!num.fixed<16, 14>>
    %1 = num.conv2d %0, %F1 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x8x4x1x!num.fixed<16, 14>>, tensor<1x3x3x1x2x!num.fixed<16, 15>>) -> tensor<1x8x4x2x!num.fixed<32, 29>>
    %2 = num.rescale %1 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x8x4x2x!num.fixed<32, 29>> -> tensor<1x8x4x2x!num.fixed<16, 13>>
    %a = num.relu %2 : tensor<1x8x4x2x!num.fixed<16, 13>>
    %3 = num.conv2d %a, %F2 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x8x4x2x!num.fixed<16, 13>>, tensor<1x3x3x2x2x!num.fixed<16, 15>>) -> tensor<1x8x4x2x!num.fixed<32, 28>>
    %b = num.rescale %3 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x8x4x2x!num.fixed<32, 28>> -> tensor<1x8x4x2x!num.fixed<16, 12>>
    %4 = minun.reshape %b {order = array<i64: 0, 1, 2, 3>} : tensor<1x8x4x2x!num.fixed<16, 12>> -> tensor<1x64x!num.fixed<16, 12>>
    func.return %4 : tensor<1x64x!num.fixed<16, 12>>
  }
}