// stream-forks (passes/stream_forks.py): a map read by two heads, computed per head.
// stream-rows with a fork: %A, a 1x1 convolution of the input, is read by two 3x3
// convolutions (two heads). Held between them %A would be a whole map; the pass computes
// it again for the second head (the copy marked stream_rows_recomputed with its cost), so
// each head is a chain of its own that streams with a ring of 3 rows of %A, computed row
// by row inside the loops; %A is never held whole.
// RUN: minun-opt %s -p stream-rows | filecheck %s
// CHECK-NOT:  %A = num.conv2d
// CHECK:      minun.loop (%{{.*}} = 0 to 1)
// CHECK:      num.conv2d %{{.*}}, %F0 {{{.*}}stream_rows_recomputed = "2 ops of A computed again for each of 1 more readers: recomputation 48 MACs 48 elements each"
// CHECK:      %{{.*}}, %B = minun.loop (%{{.*}} = 6 to 7) {{.*}}{stream_rows = "ops 5 rows 6 buffers 1 ring bytes 48 feature maps replaced 96 B recomputation 0"}
// CHECK:      %{{.*}}, %C = minun.loop (%{{.*}} = 6 to 7) {{.*}}{stream_rows = "ops 5 rows 6 buffers 1 ring bytes 48 feature maps replaced 96 B recomputation 0"}
// CHECK-NOT:  stream_rows_refused
builtin.module {
  func.func @main() -> tensor<1x48x!num.fixed<16, 13>> attributes {num.rounding = "trunc", num.overflow = "wrap"} {
    %X = num.input "X" : tensor<12x1x!num.fixed<16, 15>>
    %Xt = minun.reshape %X {order = array<i64: 0, 1>} : tensor<12x1x!num.fixed<16, 15>> -> tensor<1x6x2x1x!num.fixed<16, 15>>
    %F0 = num.param "F0" dense<[[[[[-30954, -20491, 25085, 3063]]]]]> : tensor<1x1x1x1x4xi16> -> tensor<1x1x1x1x4x!num.fixed<16, 15>>
    %F1 = num.param "F1" dense<[[[[[20784, 25476], [-10209, -10663], [-32391, -24928], [-21508, -20124]], [[-1797, 24140], [-6389, -14606], [-6225, -8208], [31695, -24478]], [[19356, 11157], [-16170, 1319], [-29588, 21455], [-30748, -5152]]], [[[8783, 9660], [-19228, -3310], [-31094, -29068], [-13821, 8521]], [[25315, 10272], [26649, 12124], [9226, -2868], [-26507, -595]], [[6024, 2356], [-2918, 8994], [-13415, -14350], [27151, 7160]]], [[[-8726, 30295], [-2724, -11472], [20886, -32468], [-17056, 19652]], [[-1113, -28768], [12043, -24299], [22733, 27346], [7453, -10282]], [[30503, -27332], [8049, -26807], [24840, -5402], [-9173, 20590]]]]]> : tensor<1x3x3x4x2xi16> -> tensor<1x3x3x4x2x!num.fixed<16, 15>>
    %F2 = num.param "F2" dense<[[[[[11743, 18874], [-5469, -15719], [-12158, 30394], [2954, -13836]], [[-5910, -21526], [29135, 2161], [-15854, 2025], [-16455, 16203]], [[-13885, 32525], [-18601, 9596], [5871, -20688], [28247, 16866]]], [[[-5304, 30747], [-11885, 30819], [-7387, 3617], [20998, -2931]], [[-19987, -22937], [8173, 501], [-12159, 8728], [22300, -13636]], [[1790, 32125], [22155, 24660], [-32530, 4048], [6376, 7365]]], [[[28604, -4432], [12617, 1259], [29165, 985], [-3910, 16954]], [[19527, 3825], [-8698, 24173], [-25198, -5015], [24849, 8251]], [[17863, -9052], [9635, -30307], [28486, 23562], [32301, -20335]]]]]> : tensor<1x3x3x4x2xi16> -> tensor<1x3x3x4x2x!num.fixed<16, 15>>
    %0 = num.conv2d %Xt, %F0 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x6x2x1x!num.fixed<16, 15>>, tensor<1x1x1x1x4x!num.fixed<16, 15>>) -> tensor<1x6x2x4x!num.fixed<32, 30>>
    %A = num.rescale %0 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x6x2x4x!num.fixed<32, 30>> -> tensor<1x6x2x4x!num.fixed<16, 15>>
    %1 = num.rescale %A {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x6x2x4x!num.fixed<16, 15>> -> tensor<1x6x2x4x!num.fixed<16, 14>>
    %2 = num.conv2d %1, %F1 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x6x2x4x!num.fixed<16, 14>>, tensor<1x3x3x4x2x!num.fixed<16, 15>>) -> tensor<1x6x2x2x!num.fixed<32, 29>>
    %B = num.rescale %2 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x6x2x2x!num.fixed<32, 29>> -> tensor<1x6x2x2x!num.fixed<16, 13>>
    %3 = num.rescale %A {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x6x2x4x!num.fixed<16, 15>> -> tensor<1x6x2x4x!num.fixed<16, 14>>
    %4 = num.conv2d %3, %F2 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x6x2x4x!num.fixed<16, 14>>, tensor<1x3x3x4x2x!num.fixed<16, 15>>) -> tensor<1x6x2x2x!num.fixed<32, 29>>
    %C = num.rescale %4 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x6x2x2x!num.fixed<32, 29>> -> tensor<1x6x2x2x!num.fixed<16, 13>>
    %out = minun.init 0.0 : tensor<1x48x!num.fixed<16, 15>>
    %5 = arith.constant 0 : i32
    %6 = arith.constant 0 : i32
    %7 = minun.reshape %B {order = array<i64: 0, 1, 2, 3>} : tensor<1x6x2x2x!num.fixed<16, 13>> -> tensor<1x24x!num.fixed<16, 13>>
    %8 = num.rescale %out {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x48x!num.fixed<16, 15>> -> tensor<1x48x!num.fixed<16, 13>>
    %9 = minun.splice_assign %7 into %8[%5, %6] : tensor<1x24x!num.fixed<16, 13>> into tensor<1x48x!num.fixed<16, 13>>
    %10 = arith.constant 0 : i32
    %11 = arith.constant 24 : i32
    %12 = minun.reshape %C {order = array<i64: 0, 1, 2, 3>} : tensor<1x6x2x2x!num.fixed<16, 13>> -> tensor<1x24x!num.fixed<16, 13>>
    %13 = minun.splice_assign %12 into %9[%10, %11] : tensor<1x24x!num.fixed<16, 13>> into tensor<1x48x!num.fixed<16, 13>>
    func.return %13 : tensor<1x48x!num.fixed<16, 13>>
  }
}
