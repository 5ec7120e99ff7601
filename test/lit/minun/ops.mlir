// Every L1 op, in custom form: printing and re-parsing gives the same text, and the
// generic form round-trips to the same custom text.
// RUN: minun-opt %s > %t.1.mlir
// RUN: minun-opt %t.1.mlir > %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir
// RUN: minun-opt %s --print-op-generic | minun-opt > %t.3.mlir
// RUN: diff %t.1.mlir %t.3.mlir
// RUN: filecheck %s < %t.1.mlir

func.func @main() -> i32 {
  // CHECK: %x = minun.input "X" [0.0, 16.0] : tensor<64x1xf32>
  %x = minun.input "X" [0.0, 16.0] : tensor<64x1xf32>
  // Small values print as decimals (lossless), large ones as hex (see params-hex.mlir).
  // CHECK: %w = minun.param "W" [-0.8, 0.9] dense<{{\[\[}}5.000000e-01, 2.500000e-01], [5.000000e-01, 2.500000e-01]]> : tensor<2x2xf32>
  %w = minun.param "W" [-0.8, 0.9] dense<"0x0000003F0000803E0000003F0000803E"> : tensor<2x2xf32>
  // CHECK: %z = minun.param "Z" [-1.0, 1.0] sparse dense<0.000000e+00> : tensor<10x64xf32>
  %z = minun.param "Z" [-1.0, 1.0] sparse dense<0.0> : tensor<10x64xf32>
  // CHECK: %c = minun.constant dense<1.230000e+00> : tensor<f32>
  %c = minun.constant dense<1.23> : tensor<f32>
  // CHECK: %i0 = minun.init 0.0 : tensor<10x1xf32>
  %i0 = minun.init 0.0 : tensor<10x1xf32>
  // CHECK: %zx = minun.sparse_matmul %z, %x : (tensor<10x64xf32>, tensor<64x1xf32>) -> tensor<10x1xf32>
  %zx = minun.sparse_matmul %z, %x : (tensor<10x64xf32>, tensor<64x1xf32>) -> tensor<10x1xf32>
  %wt = minun.param "Wt" [-1.0, 1.0] dense<0.25> : tensor<10x10xf32>
  // CHECK: minun.matmul %wt, %zx : (tensor<10x10xf32>, tensor<10x1xf32>) -> tensor<10x1xf32>
  %m = minun.matmul %wt, %zx : (tensor<10x10xf32>, tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.scalar_mul %c, %m : (tensor<f32>, tensor<10x1xf32>) -> tensor<10x1xf32>
  %sm = minun.scalar_mul %c, %m : (tensor<f32>, tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.hadamard %sm, %m
  %h = minun.hadamard %sm, %m : (tensor<10x1xf32>, tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.add %h, %c : (tensor<10x1xf32>, tensor<f32>) -> tensor<10x1xf32>
  %a = minun.add %h, %c : (tensor<10x1xf32>, tensor<f32>) -> tensor<10x1xf32>
  // CHECK: minun.sub %a, %i0
  %s = minun.sub %a, %i0 : (tensor<10x1xf32>, tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.div %s, %c
  %d = minun.div %s, %c : (tensor<10x1xf32>, tensor<f32>) -> tensor<10x1xf32>
  // CHECK: minun.max %d, %s
  %mx = minun.max %d, %s : (tensor<10x1xf32>, tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.min %mx, %s
  %mn = minun.min %mx, %s : (tensor<10x1xf32>, tensor<10x1xf32>) -> tensor<10x1xf32>
  %b = minun.param "B" [-1.0, 1.0] dense<0.1> : tensor<1xf32>
  // CHECK: minun.bias_add %mn, %b : (tensor<10x1xf32>, tensor<1xf32>) -> tensor<10x1xf32>
  %ba = minun.bias_add %mn, %b : (tensor<10x1xf32>, tensor<1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.bias_sub %ba, %b
  %bs = minun.bias_sub %ba, %b : (tensor<10x1xf32>, tensor<1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.neg %bs : (tensor<10x1xf32>) -> tensor<10x1xf32>
  %n = minun.neg %bs : (tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.relu %n
  %r1 = minun.relu %n : (tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.relu6 %r1
  %r2 = minun.relu6 %r1 : (tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.exp %r2
  %e = minun.exp %r2 : (tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.tanh %e
  %th = minun.tanh %e : (tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.sigmoid %th
  %sg = minun.sigmoid %th : (tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.erf %sg
  %erf = minun.erf %sg : (tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.clip %sg {lo = -1.000000e+00 : f64, hi = 1.000000e+00 : f64}
  %cl = minun.clip %sg {lo = -1.0 : f64, hi = 1.0 : f64} : (tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.leaky_relu %cl {alpha = 1.000000e-01 : f64}
  %lr = minun.leaky_relu %cl {alpha = 0.1 : f64} : (tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.softmax %lr {axis = 0 : i64}
  %sf = minun.softmax %lr {axis = 0 : i64} : (tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.log_softmax %sf {axis = 0 : i64}
  %ls = minun.log_softmax %sf {axis = 0 : i64} : (tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.reverse %ls {axis = 0 : i64}
  %rv = minun.reverse %ls {axis = 0 : i64} : (tensor<10x1xf32>) -> tensor<10x1xf32>
  // CHECK: minun.transpose %rv {perm = array<i64: 1, 0>} : (tensor<10x1xf32>) -> tensor<1x10xf32>
  %tr = minun.transpose %rv {perm = array<i64: 1, 0>} : (tensor<10x1xf32>) -> tensor<1x10xf32>
  // CHECK: minun.reshape %tr {order = array<i64: 1, 0>} : tensor<1x10xf32> -> tensor<2x5xf32>
  %rs = minun.reshape %tr {order = array<i64: 1, 0>} : tensor<1x10xf32> -> tensor<2x5xf32>
  %k1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i32
  // CHECK: minun.splice %rs[%k1, %k0] {sizes = array<i64: 1, 5>} : tensor<2x5xf32> -> tensor<1x5xf32>
  %sp = minun.splice %rs[%k1, %k0] {sizes = array<i64: 1, 5>} : tensor<2x5xf32> -> tensor<1x5xf32>
  // CHECK: minun.splice_assign %sp into %rs[%k0, %k0] : tensor<1x5xf32> into tensor<2x5xf32>
  %sa = minun.splice_assign %sp into %rs[%k0, %k0] : tensor<1x5xf32> into tensor<2x5xf32>
  // CHECK: minun.index %sa[%k1] : tensor<2x5xf32> -> tensor<5xf32>
  %ix = minun.index %sa[%k1] : tensor<2x5xf32> -> tensor<5xf32>
  // CHECK: minun.concat %ix, %ix {axis = 0 : i64} : (tensor<5xf32>, tensor<5xf32>) -> tensor<10xf32>
  %cc = minun.concat %ix, %ix {axis = 0 : i64} : (tensor<5xf32>, tensor<5xf32>) -> tensor<10xf32>
  %img = minun.input "I" [-1.0, 1.0] : tensor<1x8x8x2xf32>
  %f = minun.param "F" [-1.0, 1.0] dense<0.1> : tensor<2x3x3x1x3xf32>
  // CHECK: minun.conv2d %img, %f {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x8x8x2xf32>, tensor<2x3x3x1x3xf32>) -> tensor<1x8x8x6xf32>
  %cv = minun.conv2d %img, %f {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x8x8x2xf32>, tensor<2x3x3x1x3xf32>) -> tensor<1x8x8x6xf32>
  %f1 = minun.param "F1" [-1.0, 1.0] dense<0.1> : tensor<1x1x1x6x12xf32>
  %w1 = minun.param "W1" [-1.0, 1.0] dense<0.1> : tensor<12xf32>
  %b1 = minun.param "B1" [-1.0, 1.0] dense<0.1> : tensor<12xf32>
  %f2 = minun.param "F2" [-1.0, 1.0] dense<0.1> : tensor<12x3x3x1x1xf32>
  %w2 = minun.param "W2" [-1.0, 1.0] dense<0.1> : tensor<12xf32>
  %b2 = minun.param "B2" [-1.0, 1.0] dense<0.1> : tensor<12xf32>
  %f3 = minun.param "F3" [-1.0, 1.0] dense<0.1> : tensor<1x1x1x12x4xf32>
  %w3 = minun.param "W3" [-1.0, 1.0] dense<0.1> : tensor<4xf32>
  %b3 = minun.param "B3" [-1.0, 1.0] dense<0.1> : tensor<4xf32>
  // CHECK: minun.mbconv %cv, %f1, %w1, %b1, %f2, %w2, %b2, %f3, %w3, %b3 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
  // CHECK-SAME: -> tensor<1x4x4x4xf32>
  %mb = minun.mbconv %cv, %f1, %w1, %b1, %f2, %w2, %b2, %f3, %w3, %b3 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x6xf32>, tensor<1x1x1x6x12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12x3x3x1x1xf32>, tensor<12xf32>, tensor<12xf32>, tensor<1x1x1x12x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  // CHECK: minun.maxpool %mb {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x4xf32>) -> tensor<1x2x2x4xf32>
  %mp = minun.maxpool %mb {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x4xf32>) -> tensor<1x2x2x4xf32>
  // CHECK: minun.avgpool %mp {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, count_include_pad} : (tensor<1x2x2x4xf32>) -> tensor<1x3x3x4xf32>
  %ap = minun.avgpool %mp {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, count_include_pad} : (tensor<1x2x2x4xf32>) -> tensor<1x3x3x4xf32>
  // CHECK: minun.global_avgpool %ap : (tensor<1x3x3x4xf32>) -> tensor<1x1x1x4xf32>
  %gp = minun.global_avgpool %ap : (tensor<1x3x3x4xf32>) -> tensor<1x1x1x4xf32>
  // CHECK: minun.normalise_l2 %gp : (tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  %nl = minun.normalise_l2 %gp : (tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  // CHECK: minun.batchnorm %nl, %w3, %b3, %w3, %b3 {epsilon = 1.000000e-05 : f64}
  %bn = minun.batchnorm %nl, %w3, %b3, %w3, %b3 {epsilon = 1.0e-5 : f64} : (tensor<1x1x1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x1x1x4xf32>
  // CHECK: %{{.*}} = minun.sum (%i = 0 to 10) : tensor<10x1xf32> {
  // CHECK-NEXT: %{{.*}} = minun.index %z[%i] : tensor<10x64xf32> -> tensor<64xf32>
  // CHECK: minun.yield %{{.*}} : tensor<10x1xf32>
  %sum = minun.sum (%i = 0 to 10) : tensor<10x1xf32> {
    %row = minun.index %z[%i] : tensor<10x64xf32> -> tensor<64xf32>
    minun.yield %m : tensor<10x1xf32>
  }
  // CHECK: %{{.*}}, %{{.*}} = minun.loop (%t = 0 to 16) iter(%hc = %sum, %ac = %rs) : tensor<10x1xf32>, tensor<2x5xf32> {
  // CHECK: minun.yield %{{.*}}, %ac : tensor<10x1xf32>, tensor<2x5xf32>
  %lp:2 = minun.loop (%t = 0 to 16) iter(%hc = %sum, %ac = %rs) : tensor<10x1xf32>, tensor<2x5xf32> {
    %nh = minun.add %hc, %m : (tensor<10x1xf32>, tensor<10x1xf32>) -> tensor<10x1xf32>
    minun.yield %nh, %ac : tensor<10x1xf32>, tensor<2x5xf32>
  }
  %node = arith.constant 3 : i32
  // CHECK: minun.if_nonneg %node : i32 -> i32 {
  // CHECK: } else {
  %cond = minun.if_nonneg %node : i32 -> i32 {
    %two = arith.constant 2 : i32
    %l = arith.muli %two, %node : i32
    minun.yield %l : i32
  } else {
    minun.yield %node : i32
  }
  // CHECK: minun.if_nonneg %c : tensor<f32> -> tensor<10x1xf32>
  %sel = minun.if_nonneg %c : tensor<f32> -> tensor<10x1xf32> {
    minun.yield %m : tensor<10x1xf32>
  } else {
    minun.yield %sum : tensor<10x1xf32>
  }
  // CHECK: minun.call @Custom(%sel, %c) : (tensor<10x1xf32>, tensor<f32>) -> tensor<10x1xf32>
  %ext = minun.call @Custom(%sel, %c) : (tensor<10x1xf32>, tensor<f32>) -> tensor<10x1xf32>
  // CHECK: minun.sgn %c : tensor<f32>
  %sgn = minun.sgn %c : tensor<f32>
  // Two trees: tree 0 is node 0 (x[3] <= 0.5 ? leaf 0 : node 1 (x[10] <= 2 ? leaf 1 : leaf 2)),
  // tree 1 is leaf 3 alone.
  // CHECK: minun.tree_ensemble %x {mode = "leq", roots = dense<[0, -4]> : tensor<2xi32>, nodes = dense<{{\[\[}}3, -1, 1], [10, -2, -3]]> : tensor<2x3xi32>, thresholds = dense<[5.000000e-01, 2.000000e+00]> : tensor<2xf32>, leaves = dense<{{\[\[}}1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00], [5.000000e-01, 5.000000e-01], [2.500000e-01, 0.000000e+00]]> : tensor<4x2xf32>, base = dense<[0.000000e+00, 1.000000e+00]> : tensor<2xf32>} : tensor<64x1xf32> -> tensor<1x2xf32>
  %trees = minun.tree_ensemble %x {mode = "leq", roots = dense<[0, -4]> : tensor<2xi32>, nodes = dense<[[3, -1, 1], [10, -2, -3]]> : tensor<2x3xi32>, thresholds = dense<[0.5, 2.0]> : tensor<2xf32>, leaves = dense<[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [0.25, 0.0]]> : tensor<4x2xf32>, base = dense<[0.0, 1.0]> : tensor<2xf32>} : tensor<64x1xf32> -> tensor<1x2xf32>
  %seq = minun.input "S" [-1.0, 1.0] : tensor<1x2x1xf32>
  // TFLite's integer LSTM, one unit over two steps of one feature (its parameters: tflite_lstm.py)
  // CHECK: minun.tflite_lstm %seq {w = dense<{{.*}}> : tensor<4x1x1xi8>, r = dense<{{.*}}> : tensor<4x1x1xi8>, bias = dense<[{{\[}}1], [2], [3], [4]]> : tensor<4x1xi32>, params = dense<{{.*}}> : tensor<26xi32>, scales = dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>} : tensor<1x2x1xf32> -> tensor<1x2x1xf32>
  %lstm = minun.tflite_lstm %seq {w = dense<[[[1]], [[2]], [[3]], [[4]]]> : tensor<4x1x1xi8>, r = dense<[[[5]], [[6]], [[7]], [[8]]]> : tensor<4x1x1xi8>, bias = dense<[[1], [2], [3], [4]]> : tensor<4x1xi32>, params = dense<[1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 1073741824, -1, 0, 0, -11, 0]> : tensor<26xi32>, scales = dense<[0.5, 0.25]> : tensor<2xf32>} : tensor<1x2x1xf32> -> tensor<1x2x1xf32>
  // CHECK: minun.argmax %ext : tensor<10x1xf32>
  %am = minun.argmax %ext : tensor<10x1xf32>
  func.return %am : i32
}
