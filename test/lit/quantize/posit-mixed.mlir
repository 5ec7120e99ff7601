// Per-tensor posit formats (MinUn's Procedure 3): a posit16 program with t2 demoted to
// posit8. Each op computes in the widest format of its operands and result: the add of
// two posit16s is computed in posit16 and its result rounded to posit8 by num.convert; with
// the parameters at posit8 instead, each is converted up (exactly) where a posit16 op
// reads it.
// RUN: minun-opt %s -p 'quantize{repr=posit bits=16 es=2 demote=t2}' | filecheck %s
// RUN: minun-opt %s -p 'quantize{repr=posit bits=16 es=2 param-bits=8}' | filecheck %s --check-prefix=P8W
// RUN: not minun-opt %s -p 'quantize{repr=posit bits=16 param-bits=20}' 2>&1 | filecheck %s --check-prefix=ERR

func.func @main() -> tensor<1x1xf32> {
  %X = minun.input "X" [-3.0, 3.0] : tensor<2x1xf32>
  %W1 = minun.param "W1" [-3.0, 3.0] dense<[[-2.139562, 1.885351]]> : tensor<1x2xf32>
  %B1 = minun.param "B1" [-1.0, 1.0] dense<[[0.146048]]> : tensor<1x1xf32>
  %t1 = minun.matmul %W1, %X : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %t2 = minun.add %t1, %B1 : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  func.return %t2 : tensor<1x1xf32>
}
// CHECK:      func.func @main() -> tensor<1x1x!num.posit<8, 2>>
// CHECK:      %t1 = num.matmul %W1, %X {{.*}} -> tensor<1x1x!num.posit<16, 2>>
// CHECK-NEXT: %[[SUM:.*]] = num.add %t1, %B1 : (tensor<1x1x!num.posit<16, 2>>, tensor<1x1x!num.posit<16, 2>>) -> tensor<1x1x!num.posit<16, 2>>
// CHECK-NEXT: %t2 = num.convert %[[SUM]] : tensor<1x1x!num.posit<16, 2>> -> tensor<1x1x!num.posit<8, 2>>
// CHECK-NEXT: func.return %t2

// P8W:      %W1 = num.param "W1" {{.*}} -> tensor<1x2x!num.posit<8, 2>>
// P8W:      %[[W:.*]] = num.convert %W1 : tensor<1x2x!num.posit<8, 2>> -> tensor<1x2x!num.posit<16, 2>>
// P8W-NEXT: %t1 = num.matmul %[[W]], %X {{.*}} -> tensor<1x1x!num.posit<16, 2>>
// P8W-NEXT: %[[B:.*]] = num.convert %B1 : tensor<1x1x!num.posit<8, 2>> -> tensor<1x1x!num.posit<16, 2>>
// P8W-NEXT: %t2 = num.add %t1, %[[B]]

// ERR: error: quantize: param-bits must be 8..16 or 32, got 20
