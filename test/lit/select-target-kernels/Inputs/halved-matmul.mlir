// The model's input halved toward zero (a truncating rescale one bit down) read by a dense
// layer: the halving stays inside the dot loop.
func.func @main() -> i32 attributes {num.rounding = "trunc", num.overflow = "wrap"} {
  %x = num.input "X" : tensor<1x9x!num.fixed<16, 14>>
  %h = num.rescale %x {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x9x!num.fixed<16, 14>> -> tensor<1x9x!num.fixed<16, 13>>
  %W = num.param "W" dense<[[1, 2], [3, 4], [5, 6], [7, 8], [9, 10], [11, 12], [13, 14], [15, 16], [17, 18]]> : tensor<9x2xi16> -> tensor<9x2x!num.fixed<16, 14>>
  %y = num.matmul %h, %W {rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<1x9x!num.fixed<16, 13>>, tensor<9x2x!num.fixed<16, 14>>) -> tensor<1x2x!num.fixed<32, 27>>
  %s = num.rescale %y {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x2x!num.fixed<32, 27>> -> tensor<1x2x!num.fixed<16, 13>>
  %a = num.argmax %s : tensor<1x2x!num.fixed<16, 13>>
  func.return %a : i32
}
