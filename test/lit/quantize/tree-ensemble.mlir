// Trees in fixed point: thresholds at the input's scale, rounded so the integer
// comparison is exact on the quantized input (<=: floor, <: ceil); a threshold past the
// input's range makes its node unconditional; leaves at the largest scale where the
// worst-case sum fits.
// RUN: minun-opt %s -p 'quantize{bits=8}' | filecheck %s
// RUN: sed -e 's/mode = "leq"/mode = "lt"/' %s | minun-opt -p 'quantize{bits=8}' | filecheck %s --check-prefix=LT
// RUN: not minun-opt %s -p 'quantize{repr=posit bits=16 es=2}' 2>&1 | filecheck %s --check-prefix=POSIT
// RUN: minun-opt %s -p 'quantize{repr=zero-skew bits=8}' 2>/dev/null | filecheck %s --check-prefix=ZS

func.func @main() -> tensor<1x1xf32> {
  %x = minun.input "X" [-1.0, 1.0] : tensor<1x4xf32>
  // Node 0: x[0] <= 0.31; node 1: x[1] <= -0.1; node 2: x[2] <= 3.0 (past the range).
  %t = minun.tree_ensemble %x {mode = "leq", roots = dense<[0]> : tensor<1xi32>, nodes = dense<[[0, 1, -1], [1, 2, -2], [2, -3, -4]]> : tensor<3x3xi32>, thresholds = dense<[0.31, -0.1, 3.0]> : tensor<3xf32>, leaves = dense<[[1.0], [2.0], [-1.5], [0.25]]> : tensor<4x1xf32>, base = dense<[0.5]> : tensor<1xf32>} : tensor<1x4xf32> -> tensor<1x1xf32>
  func.return %t : tensor<1x1xf32>
}
// Input [-1, 1] at 8 bits: scale 6. 0.31 * 64 = 19.84 -> floor 19; -0.1 * 64 = -6.4 ->
// floor -7; 3.0 * 64 = 192 > 127: always true, so node 2's false child becomes its true
// child (-3) and the threshold is clamped to 127.
// CHECK: num.input "X" : tensor<1x4x!num.fixed<8, 6>>
// CHECK: minun.tree_ensemble %{{.*}} {{.*}}nodes = dense<{{\[\[}}0, 1, -1], [1, 2, -2], [2, -3, -3]]> : tensor<3x3xi32>, thresholds = dense<[19, -7, 127]> : tensor<3xi8>
// Worst case |0.5| + max |leaf| = 0.5 + 2 = 2.5: scale 5 (2.5 * 32 = 80 <= 127);
// leaves 32, 64, -48, 8 and base 16.
// CHECK-SAME: leaves = dense<{{\[\[}}32], [64], [-48], [8]]> : tensor<4x1xi8>, base = dense<16> : tensor<1xi8>
// CHECK-SAME: -> tensor<1x1x!num.fixed<8, 5>>
// <: ceil(19.84) = 20, ceil(-6.4) = -6; 192 > 127 is still always true.
// LT: thresholds = dense<[20, -6, 127]> : tensor<3xi8>
// POSIT: error: minun.tree_ensemble: not supported by the posit representation (trees are compiled in fixed point or float32)
// Zero-skew: X in [-1, 1] is int8 with s = 2/255, zp = -1; thresholds on that grid,
// floor(t/s + zp): 0.31 -> floor(38.53) = 38, -0.1 -> floor(-13.75) = -14, 3.0 -> 381.5,
// past 127: always true. Leaves in int32 at 2.5 / 2^30 (the worst-case sum at 2^30):
// 1.0 -> round(429496729.6); the sum is requantized to the output's int8 type.
// ZS: num.input "X" : tensor<1x4x!num.affine<8, 0.00784313725490196, -1>>
// ZS: minun.tree_ensemble %x {{.*}}nodes = dense<{{\[\[}}0, 1, -1], [1, 2, -2], [2, -3, -3]]> : tensor<3x3xi32>, thresholds = dense<[38, -14, 127]> : tensor<3xi8>, leaves = dense<{{\[\[}}429496730], [858993459], [-644245094], [107374182]]> : tensor<4x1xi32>
// ZS-SAME: -> tensor<1x1x!num.affine<32, 2.3283064365386963e-09, 0>>
// ZS: num.requantize
