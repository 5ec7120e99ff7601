// The enum attributes print as #num<rounding ...>, #num<overflow ...> and
// #num<exp_method ...>, and read back (custom and generic form).
// RUN: minun-opt %s | filecheck %s
// RUN: minun-opt %s --print-op-generic | minun-opt | filecheck %s

func.func @f(%x: tensor<4x!num.fixed<16, 14>>) -> tensor<4x!num.fixed<16, 14>> {
  %r = num.rescale %x {rounding = #num<rounding nearest>, overflow = #num<overflow saturate>} : tensor<4x!num.fixed<16, 14>> -> tensor<4x!num.fixed<16, 11>>
  %e = num.exp %r {method = #num<exp_method shiftry>} : tensor<4x!num.fixed<16, 11>> -> tensor<4x!num.fixed<16, 14>>
  func.return %e : tensor<4x!num.fixed<16, 14>>
}
// CHECK:      num.rescale %x {rounding = #num<rounding nearest>, overflow = #num<overflow saturate>}
// CHECK-NEXT: num.exp %{{.*}} {method = #num<exp_method shiftry>}
