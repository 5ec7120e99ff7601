// A 3x2 sparse matrix A = [[1, 0], [0, 2], [3, -4]] times a 2x1 vector, products summed
// in 32 bits without a shift (FastGRNN's W |*| x as SeeDot writes it).
func.func @main() -> tensor<3x1x!num.fixed<32, 20>> attributes {num.rounding = "trunc"} {
  %x = num.input "X" : tensor<2x1x!num.fixed<16, 10>>
  %a = num.param "A" sparse dense<[[1, 0], [0, 2], [3, -4]]> : tensor<3x2xi16> -> tensor<3x2x!num.fixed<16, 10>>
  %y = num.sparse_matmul %a, %x {rounding = #num<rounding trunc>, shift = 0 : i64} : (tensor<3x2x!num.fixed<16, 10>>, tensor<2x1x!num.fixed<16, 10>>) -> tensor<3x1x!num.fixed<32, 20>>
  func.return %y : tensor<3x1x!num.fixed<32, 20>>
}
