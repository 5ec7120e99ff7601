// stream-rows refuses a chain it cannot stream with gain and says why on its first op:
// the input's rescale and a 3x3 convolution with row stride 2 (a ring of 3 input rows),
// then its rescale; a row window after a row stride ends the chain (the 3x3 convolution
// that follows), so the chain's only feature map is the input's rescale, cheap to
// recompute: a ring would replace nothing. The IR is unchanged but for the remark.
// RUN: minun-opt %s -p stream-rows | filecheck %s
// CHECK:     num.rescale %Xt {{{.*}}stream_rows_refused = "3 ops, ended by num.conv2d: a row window or a side map after a row stride: rings of 24 B would replace 0 B of feature maps"}
// CHECK-NOT: minun.loop
// CHECK:     num.conv2d %{{.*}}, %F1 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>
// CHECK:     num.conv2d %{{.*}}, %F2 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>
builtin.module {
  func.func @main() -> tensor<1x16x!num.fixed<16, 13>> attributes {num.rounding = "trunc", num.overflow = "wrap"} {
    %X = num.input "X" : tensor<32x1x!num.fixed<16, 15>>
    %Xt = minun.reshape %X {order = array<i64: 0, 1>} : tensor<32x1x!num.fixed<16, 15>> -> tensor<1x8x4x1x!num.fixed<16, 15>>
    %F1 = num.param "F1" dense<[[[[[20784, 25476]], [[-10209, -10663]], [[-32391, -24928]]], [[[-21508, -20124]], [[-1797, 24140]], [[-6389, -14606]]], [[[-6225, -8208]], [[31695, -24478]], [[19356, 11157]]]]]> : tensor<1x3x3x1x2xi16> -> tensor<1x3x3x1x2x!num.fixed<16, 15>>
    %F2 = num.param "F2" dense<[[[[[11743, 18874], [-5469, -15719]], [[-12158, 30394], [2954, -13836]], [[-5910, -21526], [29135, 2161]]], [[[-15854, 2025], [-16455, 16203]], [[-13885, 32525], [-18601, 9596]], [[5871, -20688], [28247, 16866]]], [[[-5304, 30747], [-11885, 30819]], [[-7387, 3617], [20998, -2931]], [[-19987, -22937], [8173, 501]]]]]> : tensor<1x3x3x2x2xi16> -> tensor<1x3x3x2x2x!num.fixed<16, 15>>
    %0 = num.rescale %Xt {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x8x4x1x!num.fixed<16, 15>> -> tensor<1x8x4x1x!num.fixed<16, 14>>
    %1 = num.conv2d %0, %F1 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x8x4x1x!num.fixed<16, 14>>, tensor<1x3x3x1x2x!num.fixed<16, 15>>) -> tensor<1x4x2x2x!num.fixed<32, 29>>
    %2 = num.rescale %1 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x4x2x2x!num.fixed<32, 29>> -> tensor<1x4x2x2x!num.fixed<16, 13>>
    %3 = num.conv2d %2, %F2 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x4x2x2x!num.fixed<16, 13>>, tensor<1x3x3x2x2x!num.fixed<16, 15>>) -> tensor<1x4x2x2x!num.fixed<32, 28>>
    %b = num.rescale %3 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x4x2x2x!num.fixed<32, 28>> -> tensor<1x4x2x2x!num.fixed<16, 13>>
    %4 = minun.reshape %b {order = array<i64: 0, 1, 2, 3>} : tensor<1x4x2x2x!num.fixed<16, 13>> -> tensor<1x16x!num.fixed<16, 13>>
    func.return %4 : tensor<1x16x!num.fixed<16, 13>>
  }
}