// A 3x3 convolution of a 3x3x4 input with padding 1 at zero-skew int8 (input zero
// point -128, weights symmetric), requantized, its output read as a 1x18 row times W
// (18x2), requantized again.
func.func @main() -> i32 {
  %x = num.input "X" : tensor<1x3x3x4x!num.affine<8, 0.0078125, -128>>
  %f = num.param "F" dense<[[[[[  44,   78],    [-122,   79],    [  -8,    4],    [  33,  -55]],   [[ 122, -114],    [ -57,  -30],    [  18,  -23],    [ -94, -116]],   [[-127, -115],    [ -90,  127],    [ -79,   39],    [  64,  -68]]],  [[[ -56,  -17],    [ -60,  121],    [ -82,  101],    [  76,   88]],   [[ -98,  -27],    [  33,   -2],    [  42,   45],    [  42, -112]],   [[ 117,   14],    [ 103,  -58],    [ -35,   97],    [ -80, -111]]],  [[[ -32,   46],    [ -96,   94],    [ -41,  -70],    [  11,  101]],   [[  98,   95],    [ -49, -123],    [  71,   53],    [  69, -127]],   [[-118,    1],    [ -42,  -16],    [ 110,  -76],    [   7,  -45]]]]]> : tensor<1x3x3x4x2xi8> -> tensor<1x3x3x4x2x!num.affine<8, 0.015625, 0>>
  %c = num.conv2d %x, %f {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, rounding = #num<rounding nearest>, halvings = 0 : i64} : (tensor<1x3x3x4x!num.affine<8, 0.0078125, -128>>, tensor<1x3x3x4x2x!num.affine<8, 0.015625, 0>>) -> tensor<1x3x3x2x!num.affine<32, 0.0001220703125, 0>>
  %r = num.requantize %c {multiplier = 1073741824 : i64, shift = -6 : i64, left_shift = 0 : i64} : tensor<1x3x3x2x!num.affine<32, 0.0001220703125, 0>> -> tensor<1x3x3x2x!num.affine<8, 0.015625, 3>>
  %v = minun.reshape %r {order = array<i64: 0, 1, 2, 3>} : tensor<1x3x3x2x!num.affine<8, 0.015625, 3>> -> tensor<1x18x!num.affine<8, 0.015625, 3>>
  %W = num.param "W" dense<[[ -52,   78], [ -88,  -47], [ -97,  -89], [ -56,   51], [  20,  -13], [ -84,   76], [  76,  -67], [-112,  -46], [ -90,   76], [   5,    2], [ -53,    2], [ 119,  -67], [  68, -124], [ -47,  110], [  95, -106], [  87,   88], [ -12,  -34], [ 122,  115]]> : tensor<18x2xi8> -> tensor<18x2x!num.affine<8, 0.015625, 0>>
  %y = num.matmul %v, %W {rounding = #num<rounding nearest>, halvings = 0 : i64} : (tensor<1x18x!num.affine<8, 0.015625, 3>>, tensor<18x2x!num.affine<8, 0.015625, 0>>) -> tensor<1x2x!num.affine<32, 0.000244140625, 0>>
  %a = num.argmax %y : tensor<1x2x!num.affine<32, 0.000244140625, 0>>
  func.return %a : i32
}
