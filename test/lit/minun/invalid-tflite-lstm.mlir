// Malformed minun.tflite_lstm is rejected with the op name and what is wrong.
// RUN: minun-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The result has 2 units, the weights 1.
%x = minun.input "X" [-1.0, 1.0] : tensor<1x2x1xf32>
%y = minun.tflite_lstm %x {w = dense<[[[1]], [[2]], [[3]], [[4]]]> : tensor<4x1x1xi8>, r = dense<[[[5]], [[6]], [[7]], [[8]]]> : tensor<4x1x1xi8>, bias = dense<[[1], [2], [3], [4]]> : tensor<4x1xi32>, params = dense<[1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 0, 0, -11, 0]> : tensor<26xi32>, scales = dense<[0.5, 0.25]> : tensor<2xf32>} : tensor<1x2x1xf32> -> tensor<1x2x2xf32>
// CHECK: error: minun.tflite_lstm: input 1x2x1 and result 1x2x2 do not match weights 4x1x1

// -----
// Three gates' weights instead of four.
%x = minun.input "X" [-1.0, 1.0] : tensor<1x2x1xf32>
%y = minun.tflite_lstm %x {w = dense<[[[1]], [[2]], [[3]]]> : tensor<3x1x1xi8>, r = dense<[[[5]], [[6]], [[7]], [[8]]]> : tensor<4x1x1xi8>, bias = dense<[[1], [2], [3], [4]]> : tensor<4x1xi32>, params = dense<[1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 0, 0, -11, 0]> : tensor<26xi32>, scales = dense<[0.5, 0.25]> : tensor<2xf32>} : tensor<1x2x1xf32> -> tensor<1x2x1xf32>
// CHECK: error: minun.tflite_lstm: w must be 4xHxI, r 4xHxH and bias 4xH, got 3x1x1, 4x1x1, 4x1

// -----
// 25 parameters.
%x = minun.input "X" [-1.0, 1.0] : tensor<1x2x1xf32>
%y = minun.tflite_lstm %x {w = dense<[[[1]], [[2]], [[3]], [[4]]]> : tensor<4x1x1xi8>, r = dense<[[[5]], [[6]], [[7]], [[8]]]> : tensor<4x1x1xi8>, bias = dense<[[1], [2], [3], [4]]> : tensor<4x1xi32>, params = dense<[1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 0, 0, -11]> : tensor<25xi32>, scales = dense<[0.5, 0.25]> : tensor<2xf32>} : tensor<1x2x1xf32> -> tensor<1x2x1xf32>
// CHECK: error: minun.tflite_lstm: params must hold 26 integers and scales 2
