// A 3x3 convolution of a 3x3x3 input with padding 1 (3 channels: a pair and a last
// product per window column), its output read as a 1x18 row times W (18x2), at 8 bits.
func.func @main() -> i32 attributes {num.rounding = "trunc", num.overflow = "wrap"} {
  %x = num.input "X" : tensor<1x3x3x3x!num.fixed<8, 6>>
  %f = num.param "F" dense<[[[[[1, -1], [2, -2], [3, -3]], [[4, -4], [5, -5], [6, -6]], [[7, -7], [8, -8], [9, -9]]], [[[10, -10], [11, -11], [12, -12]], [[13, -13], [14, -14], [15, -15]], [[16, -16], [17, -17], [18, -18]]], [[[19, -19], [20, -20], [21, -21]], [[22, -22], [23, -23], [24, -24]], [[25, -25], [26, -26], [27, -27]]]]]> : tensor<1x3x3x3x2xi8> -> tensor<1x3x3x3x2x!num.fixed<8, 6>>
  %c = num.conv2d %x, %f {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x3x3x3x!num.fixed<8, 6>>, tensor<1x3x3x3x2x!num.fixed<8, 6>>) -> tensor<1x3x3x2x!num.fixed<16, 12>>
  %r = num.rescale %c {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x3x3x2x!num.fixed<16, 12>> -> tensor<1x3x3x2x!num.fixed<8, 6>>
  %v = minun.reshape %r {order = array<i64: 0, 1, 2, 3>} : tensor<1x3x3x2x!num.fixed<8, 6>> -> tensor<1x18x!num.fixed<8, 6>>
  %W = num.param "W" dense<[[1, 2], [3, 4], [5, 6], [7, 8], [9, 10], [11, 12], [13, 14], [15, 16], [17, 18], [19, 20], [21, 22], [23, 24], [25, 26], [27, 28], [29, 30], [31, 32], [33, 34], [35, 36]]> : tensor<18x2xi8> -> tensor<18x2x!num.fixed<8, 6>>
  %y = num.matmul %v, %W {rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x18x!num.fixed<8, 6>>, tensor<18x2x!num.fixed<8, 6>>) -> tensor<1x2x!num.fixed<16, 12>>
  %s = num.rescale %y {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x2x!num.fixed<16, 12>> -> tensor<1x2x!num.fixed<8, 6>>
  %a = num.argmax %s : tensor<1x2x!num.fixed<8, 6>>
  func.return %a : i32
}
