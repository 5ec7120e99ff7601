// stream-overlay (passes/stream_overlay.py): a block's output over its input's consumed rows.
// stream-rows with a residual block: M1 = M0 + conv1x1(dwconv3x3(conv1x1(M0))). The add
// reads M0 beside the chain, row t - 1 at step t (its rescale run on the row). With
// every=true, M0's own chain (a 3x3 convolution of the input) streams first, so M0 is an
// earlier stream's output (stream_rows_id = 0) read only by M1's chain: M1's rows may
// overwrite M0's consumed rows. Row r of M1 is written at step r + 1, when M0's rows from
// r on are still to be read: M1 starts one M0 row (16 bytes) below it
// (stream_rows_over = "0 16", which memory-plan honours). Without every, M0's chain is
// refused (no gain at this size), and so is M1's: no overlay of a map held whole.
// RUN: minun-opt %s -p 'stream-rows{every=true}' | filecheck %s
// RUN: minun-opt %s -p stream-rows | filecheck %s --check-prefix=GAIN
// CHECK:      %{{.*}}, %M0 = minun.loop (%{{.*}} = 6 to 7) {{.*}}{stream_rows = "ops 3 rows 6 buffers 1 ring bytes 12 feature maps replaced 0 B recomputation 0"}
// CHECK:      minun.init 0.0 {stream_rows_unset, stream_rows_id = 1 : i64, stream_rows_over = "0 16"} : tensor<1x6x2x4x!num.fixed<16, 11>>
// CHECK:      minun.loop (%[[T:.*]] = 1 to 6)
// CHECK:      minun.splice %M0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {sizes = array<i64: 1, 1, 2, 4>}
// CHECK:      num.conv2d %{{.*}}, %F3
// CHECK:      %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[PREV:.*]] = arith.subi %[[T]], %[[ONE]] : i32
// CHECK-NEXT: %{{.*}} = arith.constant 0 : i32
// CHECK-NEXT: %[[ROW:.*]] = minun.splice %M0[%{{.*}}, %[[PREV]], %{{.*}}, %{{.*}}] {sizes = array<i64: 1, 1, 2, 4>}
// CHECK-NEXT: %[[RES:.*]] = num.rescale %[[ROW]]
// CHECK-NEXT: num.add %[[RES]], %{{.*}}
// CHECK:      %{{.*}}, %M1 = minun.loop (%{{.*}} = 6 to 7) {{.*}}{stream_rows = "ops 9 rows 6 buffers 1 ring bytes 96 feature maps replaced 0 B recomputation 0 over map 0 at 16 B"}
// GAIN:       stream_rows_refused = "3 ops, ended by 2 uses of M0: rings of 12 B would replace 0 B of feature maps"
// GAIN:       stream_rows_refused = "9 ops, ended by minun.reshape: not a fixed-point (1, H, W, C) tensor: rings of 96 B would replace 0 B of feature maps"
// GAIN-NOT:   minun.loop
builtin.module {
  func.func @main() -> tensor<1x48x!num.fixed<16, 11>> attributes {num.rounding = "trunc", num.overflow = "wrap"} {
    %X = num.input "X" : tensor<12x1x!num.fixed<16, 15>>
    %Xt = minun.reshape %X {order = array<i64: 0, 1>} : tensor<12x1x!num.fixed<16, 15>> -> tensor<1x6x2x1x!num.fixed<16, 15>>
    %F0 = num.param "F0" dense<[[[[[-30954, -20491, 25085, 3063]], [[-15606, 11714, 3445, 26862]], [[31210, -1548, 23175, 23643]]], [[[-22980, -25364, 30952, -29517]], [[17298, 32305, 25630, 552]], [[12117, 19329, -24298, 3763]]], [[[7122, -16848, 15937, 11173]], [[22897, -32756, -1654, 21172]], [[12818, -24989, 4322, 2362]]]]]> : tensor<1x3x3x1x4xi16> -> tensor<1x3x3x1x4x!num.fixed<16, 15>>
    %F1 = num.param "F1" dense<[[[[[20784, 25476, -10209, -10663, -32391, -24928, -21508, -20124], [-1797, 24140, -6389, -14606, -6225, -8208, 31695, -24478], [19356, 11157, -16170, 1319, -29588, 21455, -30748, -5152], [8783, 9660, -19228, -3310, -31094, -29068, -13821, 8521]]]]]> : tensor<1x1x1x4x8xi16> -> tensor<1x1x1x4x8x!num.fixed<16, 15>>
    %F2 = num.param "F2" dense<[[[[[11743]], [[18874]], [[-5469]]], [[[-15719]], [[-12158]], [[30394]]], [[[2954]], [[-13836]], [[-5910]]]], [[[[-21526]], [[29135]], [[2161]]], [[[-15854]], [[2025]], [[-16455]]], [[[16203]], [[-13885]], [[32525]]]], [[[[-18601]], [[9596]], [[5871]]], [[[-20688]], [[28247]], [[16866]]], [[[-5304]], [[30747]], [[-11885]]]], [[[[30819]], [[-7387]], [[3617]]], [[[20998]], [[-2931]], [[-19987]]], [[[-22937]], [[8173]], [[501]]]], [[[[-12159]], [[8728]], [[22300]]], [[[-13636]], [[1790]], [[32125]]], [[[22155]], [[24660]], [[-32530]]]], [[[[4048]], [[6376]], [[7365]]], [[[28604]], [[-4432]], [[12617]]], [[[1259]], [[29165]], [[985]]]], [[[[-3910]], [[16954]], [[19527]]], [[[3825]], [[-8698]], [[24173]]], [[[-25198]], [[-5015]], [[24849]]]], [[[[8251]], [[17863]], [[-9052]]], [[[9635]], [[-30307]], [[28486]]], [[[23562]], [[32301]], [[-20335]]]]]> : tensor<8x3x3x1x1xi16> -> tensor<8x3x3x1x1x!num.fixed<16, 15>>
    %F3 = num.param "F3" dense<[[[[[-26335, -3759, -32028, 1041], [-16892, -26378, 20635, -2801], [-458, 30616, 24721, 5207], [21765, 8406, -4605, 9450], [536, 32565, 26993, 10668], [-30961, -12963, 26415, 8440], [-17242, 23413, 8028, 4020], [-31703, 12901, -6797, -24669]]]]]> : tensor<1x1x1x8x4xi16> -> tensor<1x1x1x8x4x!num.fixed<16, 15>>
    %0 = num.rescale %Xt {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x6x2x1x!num.fixed<16, 15>> -> tensor<1x6x2x1x!num.fixed<16, 14>>
    %1 = num.conv2d %0, %F0 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x6x2x1x!num.fixed<16, 14>>, tensor<1x3x3x1x4x!num.fixed<16, 15>>) -> tensor<1x6x2x4x!num.fixed<32, 29>>
    %M0 = num.rescale %1 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x6x2x4x!num.fixed<32, 29>> -> tensor<1x6x2x4x!num.fixed<16, 13>>
    %2 = num.conv2d %M0, %F1 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x6x2x4x!num.fixed<16, 13>>, tensor<1x1x1x4x8x!num.fixed<16, 15>>) -> tensor<1x6x2x8x!num.fixed<32, 28>>
    %E = num.rescale %2 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x6x2x8x!num.fixed<32, 28>> -> tensor<1x6x2x8x!num.fixed<16, 12>>
    %3 = num.conv2d %E, %F2 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 8 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x6x2x8x!num.fixed<16, 12>>, tensor<8x3x3x1x1x!num.fixed<16, 15>>) -> tensor<1x6x2x8x!num.fixed<32, 27>>
    %D = num.rescale %3 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x6x2x8x!num.fixed<32, 27>> -> tensor<1x6x2x8x!num.fixed<16, 12>>
    %4 = num.conv2d %D, %F3 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x6x2x8x!num.fixed<16, 12>>, tensor<1x1x1x8x4x!num.fixed<16, 15>>) -> tensor<1x6x2x4x!num.fixed<32, 27>>
    %5 = num.rescale %4 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x6x2x4x!num.fixed<32, 27>> -> tensor<1x6x2x4x!num.fixed<16, 11>>
    %6 = num.rescale %M0 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x6x2x4x!num.fixed<16, 13>> -> tensor<1x6x2x4x!num.fixed<16, 11>>
    %7 = num.add %6, %5 : (tensor<1x6x2x4x!num.fixed<16, 11>>, tensor<1x6x2x4x!num.fixed<16, 11>>) -> tensor<1x6x2x4x!num.fixed<32, 11>>
    %M1 = num.rescale %7 {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x6x2x4x!num.fixed<32, 11>> -> tensor<1x6x2x4x!num.fixed<16, 11>>
    %8 = minun.reshape %M1 {order = array<i64: 0, 1, 2, 3>} : tensor<1x6x2x4x!num.fixed<16, 11>> -> tensor<1x48x!num.fixed<16, 11>>
    func.return %8 : tensor<1x48x!num.fixed<16, 11>>
  }
}
