// Zero-skew on a program with no external integer reference (own.py), ProtoNN's shape:
// `WX - B[i]` read only by a matmul is a clamp of an int16 difference on a power-of-two
// grid (WX's accumulator shifted right, B rounded onto the grid, no multiply), `-g2 *
// (del^T del)` one requantization with g2 folded into its multiplier (a power of two: a
// shift) and exp(-y) one table of y, and the sum over prototypes of `Z[i] * e` adds the
// int32 products as they are: no num.requantize inside the loop but the folded one.
// RUN: minun-opt %s -p 'quantize{repr=zero-skew bits=8}' | filecheck %s

func.func @main() -> i32 {
  %X = minun.input "X" [-1.0, 1.0] {profile = array<f64: -1.0, 1.0>} : tensor<2x1xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25], [1.0, 0.75]]> : tensor<2x2xf32>
  %B = minun.param "B" [-1.0, 1.0] dense<[[[0.5], [0.25]], [[-0.5], [0.75]], [[1.0], [-1.0]]]> : tensor<3x2x1xf32>
  %Z = minun.param "Z" [-1.0, 1.0] dense<[[[0.5], [-0.5]], [[0.25], [1.0]], [[-1.0], [0.5]]]> : tensor<3x2x1xf32>
  %g2 = minun.constant dense<2.5> : tensor<f32>
  %WX = minun.matmul %W, %X {profile = array<f64: -1.75, 1.75>} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %res = minun.sum (%i = 0 to 3) {profile = array<f64: -2.0, 2.0>} : tensor<2x1xf32> {
    %b = minun.index %B[%i] : tensor<3x2x1xf32> -> tensor<2x1xf32>
    %del = minun.sub %WX, %b {profile = array<f64: -2.75, 2.75>} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
    %z = minun.index %Z[%i] : tensor<3x2x1xf32> -> tensor<2x1xf32>
    %n = minun.neg %g2 : (tensor<f32>) -> tensor<f32>
    %t = minun.transpose %del {perm = array<i64: 1, 0>} : (tensor<2x1xf32>) -> tensor<1x2xf32>
    %d2 = minun.matmul %t, %del {profile = array<f64: 0.0, 15.0>} : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
    %a = minun.scalar_mul %n, %d2 {profile = array<f64: -37.5, 0.0>} : (tensor<f32>, tensor<1x1xf32>) -> tensor<1x1xf32>
    %e = minun.exp %a {profile = array<f64: 0.0, 1.0>} : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %s = minun.matmul %z, %e {profile = array<f64: -1.0, 1.0>} : (tensor<2x1xf32>, tensor<1x1xf32>) -> tensor<2x1xf32>
    minun.yield %s : tensor<2x1xf32>
  }
  %r = minun.argmax %res : tensor<2x1xf32>
  func.return %r : i32
}
// CHECK:      %[[ACC:.*]] = num.matmul %W, %X {{.*}}-> tensor<2x1x!num.affine<32, [[SACC:.*]], 0>>
// CHECK:      %[[X16:.*]] = num.requantize %[[ACC]] {multiplier = 1073741824 : i64, shift = [[SH:-?[0-9]+]] : i64, left_shift = 0 : i64} {{.*}} -> tensor<2x1x!num.affine<16, [[GRID:.*]], 0>>
// CHECK:      %res = minun.loop (%i = 0 to 3) iter(%[[S:.*]] = %{{.*}}) : tensor<2x1x!num.affine<32, [[SSUM:.*]], 0>>
// CHECK-NEXT:   %[[BI:.*]] = minun.index %{{.*}}[%i] : tensor<3x2x1x!num.affine<16, [[GRID]], 0>>
// CHECK-NEXT:   %[[D16:.*]] = num.sub %[[X16]], %[[BI]] {{.*}}!num.affine<16, [[GRID]], 0>>
// CHECK-NEXT:   %del = num.requantize %[[D16]] {multiplier = 1073741824 : i64, shift = 1 : i64, left_shift = 0 : i64} {{.*}} -> tensor<2x1x!num.affine<8, [[GRID]], 0>>
// CHECK-NOT:    num.requantize
// CHECK:        num.matmul %{{.*}}, %del {{.*}}-> tensor<1x1x!num.affine<32
// CHECK-NEXT:   %[[Y:.*]] = num.requantize %{{.*}} {multiplier = 1073741824 : i64, {{.*}}factor = 2.5{{.*}} : f64}
// CHECK-NEXT:   %e = num.lut %[[Y]]
// CHECK-NEXT:   %s = num.matmul %{{.*}}, %e {{.*}}-> tensor<2x1x!num.affine<32, [[SSUM]], 0>>
// CHECK-NEXT:   %[[T:.*]] = num.add %[[S]], %s
// CHECK-NEXT:   minun.yield %[[T]]
// CHECK:      num.argmax %res : tensor<2x1x!num.affine<32, [[SSUM]], 0>>
