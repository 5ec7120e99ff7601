// An assignment of Haunter on posits (MinUn's stage I) names es per bitwidth: 8-bit
// tensors are posit<8, 0>, the promoted t1 is posit<16, 1>, and num.convert moves between
// the two formats (different n and es). Mixed formats of MinUn's Procedure 3, with its
// stage I's es.
// RUN: minun-opt %s -p 'quantize{repr=posit bits=8 assign="%S/Inputs/assign-posit-es.json"}' | filecheck %s
// RUN: not minun-opt %s -p 'quantize{repr=posit bits=8 assign="%S/Inputs/assign-posit-bad-es.json"}' 2>&1 | filecheck %s --check-prefix=ERR

func.func @main() -> tensor<1x1xf32> {
  %X = minun.input "X" [-3.0, 3.0] : tensor<2x1xf32>
  %W1 = minun.param "W1" [-3.0, 3.0] dense<[[-2.139562, 1.885351]]> : tensor<1x2xf32>
  %B1 = minun.param "B1" [-1.0, 1.0] dense<[[0.146048]]> : tensor<1x1xf32>
  %t1 = minun.matmul %W1, %X : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %t2 = minun.add %t1, %B1 : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  func.return %t2 : tensor<1x1xf32>
}
// CHECK:      func.func @main() -> tensor<1x1x!num.posit<8, 0>>
// CHECK:      %X = num.input "X" : tensor<2x1x!num.posit<8, 0>>
// CHECK-NEXT: %W1 = num.param "W1" {{.*}} -> tensor<1x2x!num.posit<8, 0>>
// CHECK-NEXT: %B1 = num.param "B1" {{.*}} -> tensor<1x1x!num.posit<8, 0>>
// CHECK:      num.convert %W1 : tensor<1x2x!num.posit<8, 0>> -> tensor<1x2x!num.posit<16, 1>>
// CHECK:      %t1 = num.matmul {{.*}} -> tensor<1x1x!num.posit<16, 1>>
// CHECK:      num.convert %B1 : tensor<1x1x!num.posit<8, 0>> -> tensor<1x1x!num.posit<16, 1>>
// CHECK:      %[[SUM:.*]] = num.add %t1, {{.*}} -> tensor<1x1x!num.posit<16, 1>>
// CHECK-NEXT: %t2 = num.convert %[[SUM]] : tensor<1x1x!num.posit<16, 1>> -> tensor<1x1x!num.posit<8, 0>>

// ERR: es must map posit bitwidths to 0, 1 or 2
