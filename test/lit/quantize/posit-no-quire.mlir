// quire=false: the posit program's function says num.quire = false (the default, a quire,
// writes nothing), and lower-to-loops then computes each dot product as a partial sum from
// 0 carried through the loop, each product and each sum rounded (mul then add), with no
// quire call. Only posits have a quire.
// RUN: minun-opt %s -p 'quantize{repr=posit bits=8 quire=false}' | filecheck %s
// RUN: minun-opt %s -p 'quantize{repr=posit bits=8 quire=false},lower-to-loops' | filecheck %s --check-prefix=LOOPS
// RUN: minun-opt %s -p 'quantize{repr=posit bits=8}' | filecheck %s --check-prefix=QUIRE
// RUN: not minun-opt %s -p 'quantize{bits=8 quire=false}' 2>&1 | filecheck %s --check-prefix=ERR

func.func @main() -> tensor<1x1xf32> {
  %X = minun.input "X" [-3.0, 3.0] : tensor<3x1xf32>
  %W1 = minun.param "W1" [-3.0, 3.0] dense<[[-2.139562, 1.885351, 0.5]]> : tensor<1x3xf32>
  %t1 = minun.matmul %W1, %X : (tensor<1x3xf32>, tensor<3x1xf32>) -> tensor<1x1xf32>
  func.return %t1 : tensor<1x1xf32>
}
// CHECK:      func.func @main() -> tensor<1x1x!num.posit<8, 2>> attributes {num.rounding = "nearest", num.quire = false}
// CHECK:      num.matmul %W1, %X

// LOOPS-NOT:  quire
// LOOPS-NOT:  qclear
// LOOPS:      %[[ZERO:.*]] = arith.constant 0 : i8
// LOOPS:      %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (i8) {
// LOOPS:        %[[P:.*]] = func.call @minun_p8e2_mul(%{{.*}}, %{{.*}}) : (i8, i8) -> i8
// LOOPS-NEXT:   %[[S:.*]] = func.call @minun_p8e2_add(%[[ACC]], %[[P]]) : (i8, i8) -> i8
// LOOPS-NEXT:   scf.yield %[[S]] : i8
// LOOPS-NOT:  fma

// QUIRE:      func.func @main() -> tensor<1x1x!num.posit<8, 2>> attributes {num.rounding = "nearest"} {

// ERR: error: quantize: quire=false is for repr=posit (repr=fixed has no quire)
