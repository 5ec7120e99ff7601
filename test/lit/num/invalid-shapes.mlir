// num.rescale, the table functions and num.normalise_l2 keep their input's shape: input
// and result share one shape variable S.
// RUN: minun-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @f(%x: tensor<2x!num.fixed<16, 14>>) -> tensor<3x!num.fixed<16, 10>> {
  %r = "num.rescale"(%x) {rounding = #num<rounding floor>, overflow = #num<overflow wrap>} : (tensor<2x!num.fixed<16, 14>>) -> tensor<3x!num.fixed<16, 10>>
  func.return %r : tensor<3x!num.fixed<16, 10>>
}
// CHECK: invalid-shapes.mlir:6:3: error: num.rescale: result 'result' at position 0 does not verify: shape must not change Underlying verification failure: attribute [#builtin.int<2>] expected from variable 'S', but got [#builtin.int<3>]

// -----
func.func @f(%x: tensor<4x!num.fixed<16, 11>>) -> tensor<2x2x!num.fixed<16, 14>> {
  %e = "num.sigmoid"(%x) : (tensor<4x!num.fixed<16, 11>>) -> tensor<2x2x!num.fixed<16, 14>>
  func.return %e : tensor<2x2x!num.fixed<16, 14>>
}
// CHECK: error: num.sigmoid: result 'result' at position 0 does not verify: shape must not change

// -----
func.func @f(%x: tensor<1x2x2x4x!num.fixed<16, 11>>) -> tensor<1x2x2x3x!num.fixed<16, 14>> {
  %e = "num.normalise_l2"(%x) : (tensor<1x2x2x4x!num.fixed<16, 11>>) -> tensor<1x2x2x3x!num.fixed<16, 14>>
  func.return %e : tensor<1x2x2x3x!num.fixed<16, 14>>
}
// CHECK: error: num.normalise_l2: result 'result' at position 0 does not verify: shape must not change

// -----
func.func @f(%x: tensor<2x3x!num.fixed<16, 8>>) -> tensor<2x3x!num.fixed<16, 15>> {
  %e = "num.softmax"(%x) : (tensor<2x3x!num.fixed<16, 8>>) -> tensor<2x3x!num.fixed<16, 15>>
  func.return %e : tensor<2x3x!num.fixed<16, 15>>
}
// CHECK: error: num.softmax: the result is !num.fixed<b, b-2> (b = 8, 16 or 32), got tensor<2x3x!num.fixed<16, 15>>

// -----
func.func @f(%x: tensor<2x3x!num.fixed<16, 8>>) -> tensor<3x2x!num.fixed<16, 14>> {
  %e = "num.softmax"(%x) : (tensor<2x3x!num.fixed<16, 8>>) -> tensor<3x2x!num.fixed<16, 14>>
  func.return %e : tensor<3x2x!num.fixed<16, 14>>
}
// CHECK: error: num.softmax: result 'result' at position 0 does not verify: shape must not change

// -----
func.func @f(%x: tensor<2x3x!num.fixed<16, 8>>) -> tensor<2x3x!num.fixed<64, 40>> {
  %e = "num.log_softmax"(%x) : (tensor<2x3x!num.fixed<16, 8>>) -> tensor<2x3x!num.fixed<64, 40>>
  func.return %e : tensor<2x3x!num.fixed<64, 40>>
}
// CHECK: error: num.log_softmax: the result is 8, 16 or 32 bits, got tensor<2x3x!num.fixed<64, 40>>

// -----
func.func @f(%x: tensor<2x3x!num.affine<8, 0.1, 0>>) -> tensor<2x3x!num.affine<32, 0.01, 0>> {
  %e = "num.log_softmax"(%x) : (tensor<2x3x!num.affine<8, 0.1, 0>>) -> tensor<2x3x!num.affine<32, 0.01, 0>>
  func.return %e : tensor<2x3x!num.affine<32, 0.01, 0>>
}
// CHECK: error: num.log_softmax: zero-skew operands are int8 in and out, got tensor<2x3x!num.affine<8, 0.1, 0>> -> tensor<2x3x!num.affine<32, 0.01, 0>>

// -----
func.func @f(%x: tensor<2x3x!num.posit<16, 1>>) -> tensor<3x2x!num.posit<16, 1>> {
  %e = "num.log_softmax"(%x) : (tensor<2x3x!num.posit<16, 1>>) -> tensor<3x2x!num.posit<16, 1>>
  func.return %e : tensor<3x2x!num.posit<16, 1>>
}
// CHECK: error: num.log_softmax: result 'result' at position 0 does not verify: shape must not change
