// Malformed conv2d / mbconv / pooling is rejected with the op name and the shapes.
// RUN: minun-opt %s --split-input-file --verify-diagnostics | filecheck %s

%a = minun.input "A" [0.0, 1.0] : tensor<8x8x2xf32>
%f = minun.param "F" [0.0, 1.0] dense<0.1> : tensor<1x3x3x2x4xf32>
%c = minun.conv2d %a, %f {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<8x8x2xf32>, tensor<1x3x3x2x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK: invalid-conv2d.mlir:6:1: error: minun.conv2d: input must be 4-D NHWC and filter 5-D [G,HF,WF,C/G,Cout], got input 8x8x2, filter 1x3x3x2x4

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<1x8x8x3xf32>
%f = minun.param "F" [0.0, 1.0] dense<0.1> : tensor<1x3x3x2x4xf32>
%c = minun.conv2d %a, %f {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<1x3x3x2x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK: error: minun.conv2d: channels do not match groups 1: input 1x8x8x3, filter 1x3x3x2x4

// -----
// Groups must equal the filter's first dimension.
%a = minun.input "A" [0.0, 1.0] : tensor<1x8x8x4xf32>
%f = minun.param "F" [0.0, 1.0] dense<0.1> : tensor<1x3x3x2x4xf32>
%c = minun.conv2d %a, %f {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x8x8x4xf32>, tensor<1x3x3x2x4xf32>) -> tensor<1x6x6x8xf32>
// CHECK: error: minun.conv2d: channels do not match groups 2: input 1x8x8x4, filter 1x3x3x2x4

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<1x8x8x2xf32>
%f = minun.param "F" [0.0, 1.0] dense<0.1> : tensor<1x3x3x2x4xf32>
%c = minun.conv2d %a, %f {strides = array<i64: 0, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<1x3x3x2x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK: error: minun.conv2d: strides must be positive, got [0, 1]

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<1x8x8x2xf32>
%f = minun.param "F" [0.0, 1.0] dense<0.1> : tensor<1x3x3x2x4xf32>
%c = minun.conv2d %a, %f {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, -1, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<1x3x3x2x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK: error: minun.conv2d: pads must be non-negative, got [0, 0, -1, 0]

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<1x8x8x2xf32>
%f = minun.param "F" [0.0, 1.0] dense<0.1> : tensor<1x3x3x2x4xf32>
%c = minun.conv2d %a, %f {strides = array<i64: 1, 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<1x3x3x2x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK: error: minun.conv2d: pads needs 4 values, got 2

// -----
// A dilated 3x3 filter spans 9 pixels: it does not fit an 8x8 input without padding.
%a = minun.input "A" [0.0, 1.0] : tensor<1x8x8x2xf32>
%f = minun.param "F" [0.0, 1.0] dense<0.1> : tensor<1x3x3x2x4xf32>
%c = minun.conv2d %a, %f {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 4, 4>, groups = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<1x3x3x2x4xf32>) -> tensor<1x1x1x4xf32>
// CHECK: error: minun.conv2d: filter 3x3 (dilation [4, 4]) does not fit input 1x8x8x2 with pads [0, 0, 0, 0]

// -----
// Stride 2, pad 1 on 8x8 with 3x3 gives 4x4, not 8x8.
%a = minun.input "A" [0.0, 1.0] : tensor<1x8x8x2xf32>
%f = minun.param "F" [0.0, 1.0] dense<0.1> : tensor<1x3x3x2x4xf32>
%c = minun.conv2d %a, %f {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<1x3x3x2x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK: error: minun.conv2d: result type tensor<1x8x8x4xf32> does not match the inferred tensor<1x4x4x4xf32>

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<1x8x8x2xf32>
%f = minun.param "F" [0.0, 1.0] dense<0.1> : tensor<1x3x3x2x4xf32>
%c = minun.conv2d %a, %f {strides = array<i64: 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<1x3x3x2x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK: error: minun.conv2d: strides needs 2 values, got 1

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<1x8x8x2xf32>
%f = minun.param "F" [0.0, 1.0] dense<0.1> : tensor<1x3x3x2x4xf32>
%c = minun.conv2d %a, %f {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 0, 1>, groups = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<1x3x3x2x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK: error: minun.conv2d: dilations must be positive, got [0, 1]

// -----
// mbconv: the depthwise filter must have one group per expanded channel.
%a = minun.input "A" [0.0, 1.0] : tensor<1x8x8x4xf32>
%f1 = minun.param "F1" [-1.0, 1.0] dense<0.1> : tensor<1x1x1x4x8xf32>
%w1 = minun.param "W1" [-1.0, 1.0] dense<0.1> : tensor<8xf32>
%f2 = minun.param "F2" [-1.0, 1.0] dense<0.1> : tensor<6x3x3x1x1xf32>
%f3 = minun.param "F3" [-1.0, 1.0] dense<0.1> : tensor<1x1x1x8x4xf32>
%w3 = minun.param "W3" [-1.0, 1.0] dense<0.1> : tensor<4xf32>
%m = minun.mbconv %a, %f1, %w1, %w1, %f2, %w1, %w1, %f3, %w3, %w3 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x4xf32>, tensor<1x1x1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<6x3x3x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1x1x1x8x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x8x8x4xf32>
// CHECK: error: minun.mbconv: filter shapes must be F1 [1,1,1,C,T], F2 [T,HF,WF,1,1], F3 [1,1,1,T,Cout]: input 1x8x8x4, F1 1x1x1x4x8, F2 6x3x3x1x1, F3 1x1x1x8x4

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<1x8x8x4xf32>
%f1 = minun.param "F1" [-1.0, 1.0] dense<0.1> : tensor<1x1x1x4x8xf32>
%w1 = minun.param "W1" [-1.0, 1.0] dense<0.1> : tensor<8xf32>
%w7 = minun.param "W7" [-1.0, 1.0] dense<0.1> : tensor<7xf32>
%f2 = minun.param "F2" [-1.0, 1.0] dense<0.1> : tensor<8x3x3x1x1xf32>
%f3 = minun.param "F3" [-1.0, 1.0] dense<0.1> : tensor<1x1x1x8x4xf32>
%w3 = minun.param "W3" [-1.0, 1.0] dense<0.1> : tensor<4xf32>
%m = minun.mbconv %a, %f1, %w1, %w7, %f2, %w1, %w1, %f3, %w3, %w3 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x4xf32>, tensor<1x1x1x4x8xf32>, tensor<8xf32>, tensor<7xf32>, tensor<8x3x3x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1x1x1x8x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x8x8x4xf32>
// CHECK: error: minun.mbconv: B1 must be 1-D of 8, got 7

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<1x8x8x4xf32>
%m = minun.maxpool %a {kernel = array<i64: 9, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x8x4xf32>) -> tensor<1x1x7x4xf32>
// CHECK: error: minun.maxpool: window 9x2 (dilation [1, 1]) does not fit input 1x8x8x4 with pads [0, 0, 0, 0]

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<8x8x4xf32>
%m = minun.maxpool %a {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<8x8x4xf32>) -> tensor<4x4x4xf32>
// CHECK: error: minun.maxpool: input must be 4-D NHWC, got 8x8x4

// -----
// A pooling window wholly in the padding: the last window of stride 3 starts at padded
// row 3, below the input's rows 1..2 (pad bottom 2 >= kernel 1).
%a = minun.input "A" [0.0, 1.0] : tensor<1x2x1x1xf32>
%p = minun.maxpool %a {kernel = array<i64: 1, 1>, strides = array<i64: 3, 1>, pads = array<i64: 0, 2, 0, 0>} : (tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
// CHECK: error: minun.maxpool: a 1x1 window with pads [0, 2, 0, 0] (top, bottom, left, right) and strides [3, 1] lies wholly in the padding

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<1x2x4x1xf32>
%p = minun.avgpool %a {kernel = array<i64: 1, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 2>} : (tensor<1x2x4x1xf32>) -> tensor<1x2x5x1xf32>
// CHECK: error: minun.avgpool: a 1x2 window with pads [0, 0, 0, 2] (top, bottom, left, right) and strides [1, 1] lies wholly in the padding
