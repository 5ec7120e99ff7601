// bitwidth-assign runs Shiftry's demotion search on data and hands its choice to the next
// quantize. Shiftry's §3 example, its one input X = (2.391, -3.583), the loss |t4 - float
// t4| (metric=mae) limited to 0.1: with our arithmetic the search demotes B2, B1, t3, t2, X
// and t4 (test/python/search/test_shiftry_demotion.py derives this order and explains how
// it differs from the paper's B2, B1, X, W1); W1, W2 and t1 stay 16-bit. rounding=trunc:
// the paper's rounding (by default the search also tries nearest, which loses less here).
// RUN: minun-opt %s -p 'bitwidth-assign{data="%S/Inputs/s3-data.npy" max-drop=0.1 metric=mae rounding=trunc out="%t.json"},quantize{data="%S/Inputs/s3-data.npy"}' | filecheck %s
// RUN: filecheck %s --check-prefix=JSON < %t.json
// RUN: not minun-opt %s -p 'bitwidth-assign{data="%S/Inputs/s3-data.npy"}' 2>&1 | filecheck %s --check-prefix=ERR

func.func @main() -> tensor<1x1xf32> {
  %X = minun.input "X" [-4.0, 4.0] : tensor<2x1xf32>
  %W1 = minun.param "W1" [-1.1, 1.1] dense<[[0.0421, 0.1948], [1.021, -0.827]]> : tensor<2x2xf32>
  %B1 = minun.param "B1" [-1.0, 1.0] dense<[[-0.032], [0.619]]> : tensor<2x1xf32>
  %W2 = minun.param "W2" [-1.1, 1.1] dense<[[-0.402, -1.013]]> : tensor<1x2xf32>
  %B2 = minun.param "B2" [-1.0, 1.0] dense<0.737> : tensor<1x1xf32>
  %t1 = minun.matmul %W1, %X : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %t2 = minun.add %t1, %B1 : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %t3 = minun.matmul %W2, %t2 : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %t4 = minun.add %t3, %B2 : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  func.return %t4 : tensor<1x1xf32>
}
// the assignment is consumed by quantize
// CHECK-NOT: minun.assignment
// CHECK:      %X = num.input "X" : tensor<2x1x!num.fixed<8, 5>>
// CHECK-NEXT: %W1 = num.param "W1" {{.*}} -> tensor<2x2x!num.fixed<16, 14>>
// CHECK-NEXT: %B1 = num.param "B1" dense<[[-4], [79]]> : tensor<2x1xi8> -> tensor<2x1x!num.fixed<8, 7>>
// CHECK-NEXT: %W2 = num.param "W2" {{.*}} -> tensor<1x2x!num.fixed<16, 14>>
// CHECK-NEXT: %B2 = num.param "B2" dense<94> : tensor<1x1xi8> -> tensor<1x1x!num.fixed<8, 7>>
// CHECK:      %t1 = num.rescale {{.*}} -> tensor<2x1x!num.fixed<16, 12>>
// CHECK:      %t2 = num.rescale {{.*}} -> tensor<2x1x!num.fixed<8, 4>>
// CHECK:      %t3 = num.rescale {{.*}} -> tensor<1x1x!num.fixed<8, 4>>
// CHECK:      %t4 = num.rescale {{.*}} -> tensor<1x1x!num.fixed<8, 4>>

// JSON: "format": "minun-bitwidth-assignment"
// JSON: "B1": {
// JSON-NEXT: "bits": 8,
// JSON-NEXT: "scale": 7

// ERR: error: bitwidth-assign: ram-budget=BYTES, max-drop=LOSS or both are required
