func.func @main() -> i32 {
  %x = num.input "X" : tensor<4x1xf32>
  %W = num.param "W" dense<[[1.0, -0.5, 0.25, 0.1], [-1.0, 0.5, 2.5, -0.1]]> : tensor<2x4xf32> -> tensor<2x4xf32>
  %y = num.matmul %W, %x {rounding = #num<rounding nearest>, halvings = 0 : i64} : (tensor<2x4xf32>, tensor<4x1xf32>) -> tensor<2x1xf32>
  %s = num.tanh %y : tensor<2x1xf32> -> tensor<2x1xf32>
  %a = num.argmax %s : tensor<2x1xf32>
  func.return %a : i32
}
