// sigmoid(W * x) + sigmoid(V * x) at 16 bits, the label its argmax: two calls of
// Shiftry's sigmoid.
func.func @main() -> i32 attributes {num.rounding = "trunc", num.overflow = "wrap"} {
  %x = num.input "X" : tensor<4x1x!num.fixed<16, 14>>
  %W = num.param "W" dense<[[16384, -8192, 4096, 100], [-16384, 8192, 2048, -100]]> : tensor<2x4xi16> -> tensor<2x4x!num.fixed<16, 14>>
  %V = num.param "V" dense<[[-3000, 8192, 15000, -700], [9000, -12000, 300, 5000]]> : tensor<2x4xi16> -> tensor<2x4x!num.fixed<16, 14>>
  %y = num.matmul %W, %x {rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<2x4x!num.fixed<16, 14>>, tensor<4x1x!num.fixed<16, 14>>) -> tensor<2x1x!num.fixed<32, 28>>
  %z = num.matmul %V, %x {rounding = #num<rounding trunc>, halvings = 0 : i64} : (tensor<2x4x!num.fixed<16, 14>>, tensor<4x1x!num.fixed<16, 14>>) -> tensor<2x1x!num.fixed<32, 28>>
  %r = num.rescale %y {rounding = #num<rounding trunc>, overflow = #num<overflow saturate>} : tensor<2x1x!num.fixed<32, 28>> -> tensor<2x1x!num.fixed<16, 11>>
  %q = num.rescale %z {rounding = #num<rounding trunc>, overflow = #num<overflow saturate>} : tensor<2x1x!num.fixed<32, 28>> -> tensor<2x1x!num.fixed<16, 11>>
  %s = num.sigmoid %r : tensor<2x1x!num.fixed<16, 11>> -> tensor<2x1x!num.fixed<16, 14>>
  %t = num.sigmoid %q : tensor<2x1x!num.fixed<16, 11>> -> tensor<2x1x!num.fixed<16, 14>>
  %u = num.add %s, %t : (tensor<2x1x!num.fixed<16, 14>>, tensor<2x1x!num.fixed<16, 14>>) -> tensor<2x1x!num.fixed<16, 14>>
  %a = num.argmax %u : tensor<2x1x!num.fixed<16, 14>>
  func.return %a : i32
}
