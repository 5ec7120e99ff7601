// Rounding, overflow and exp methods are enum attributes (#num<rounding trunc>, ...): a
// string or an unknown mode is rejected with the op's name and the modes there are.
// RUN: minun-opt %s --split-input-file --parsing-diagnostics | filecheck %s

func.func @f(%x: tensor<2x!num.fixed<16, 14>>) -> tensor<2x!num.fixed<16, 10>> {
  %r = num.rescale %x {rounding = "floor", overflow = #num<overflow wrap>} : tensor<2x!num.fixed<16, 14>> -> tensor<2x!num.fixed<16, 10>>
  func.return %r : tensor<2x!num.fixed<16, 10>>
}
// CHECK: invalid-attrs.mlir:6:3
// CHECK: num.rescale: "floor" should be of base attribute num.rounding

// -----
func.func @f(%x: tensor<2x!num.fixed<16, 14>>) -> tensor<2x!num.fixed<16, 10>> {
  %r = num.rescale %x {rounding = #num<rounding up>, overflow = #num<overflow wrap>} : tensor<2x!num.fixed<16, 14>> -> tensor<2x!num.fixed<16, 10>>
  func.return %r : tensor<2x!num.fixed<16, 10>>
}
// CHECK: invalid-attrs.mlir:14:49
// CHECK: Expected `trunc`, `floor`, or `nearest`.

// -----
func.func @f(%x: tensor<2x!num.fixed<16, 14>>) -> tensor<2x!num.fixed<16, 10>> {
  %r = num.rescale %x {rounding = #num<rounding floor>, overflow = #num<overflow clamp>} : tensor<2x!num.fixed<16, 14>> -> tensor<2x!num.fixed<16, 10>>
  func.return %r : tensor<2x!num.fixed<16, 10>>
}
// CHECK: invalid-attrs.mlir:22:82
// CHECK: Expected `wrap`, or `saturate`.

// -----
func.func @f(%x: tensor<4x!num.fixed<16, 11>>) -> tensor<4x!num.fixed<16, 14>> {
  %e = num.exp %x {method = #num<exp_method taylor>} : tensor<4x!num.fixed<16, 11>> -> tensor<4x!num.fixed<16, 14>>
  func.return %e : tensor<4x!num.fixed<16, 14>>
}
// CHECK: invalid-attrs.mlir:30:45
// CHECK: Expected `shiftry`, `seedot`, `float`, `posit`, or `table`.

// -----
func.func @f(%x: tensor<4x!num.fixed<16, 11>>) -> tensor<4x!num.fixed<16, 14>> {
  %e = num.exp %x {method = #num<rounding trunc>} : tensor<4x!num.fixed<16, 11>> -> tensor<4x!num.fixed<16, 14>>
  func.return %e : tensor<4x!num.fixed<16, 14>>
}
// CHECK: invalid-attrs.mlir:38:3
// CHECK: num.exp: #num<rounding trunc> should be of base attribute num.exp_method
