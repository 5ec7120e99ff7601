// Malformed num.relu ... num.sgn are rejected with the op name and the types.
// RUN: minun-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Operands must be L2 number types: a float L1 tensor of f64 is not one.
%x = "test.op"() : () -> tensor<4xf64>
%r = "num.relu"(%x) : (tensor<4xf64>) -> tensor<4xf64>
// CHECK: error: num.relu: operand 'input' at position 0 does not verify: an L2 number type (!num.fixed, !num.posit, !num.affine, f32 or bf16) expected

// -----
// relu, relu6 and clip keep the operand's type (shape and representation); neg too, but
// for !num.affine, whose result takes the complementary zero point -1 - zp.
%x = "test.op"() : () -> tensor<4x!num.fixed<16, 12>>
%r = "num.relu6"(%x) : (tensor<4x!num.fixed<16, 12>>) -> tensor<4x!num.fixed<16, 11>>
// CHECK: error: num.relu6: result 'result' at position 0 does not verify: attribute tensor<4x!num.fixed<16, 12>> expected from variable 'T', but got tensor<4x!num.fixed<16, 11>>

// -----
%x = "test.op"() : () -> tensor<4xf32>
%r = "num.neg"(%x) : (tensor<4xf32>) -> tensor<2xf32>
// CHECK: error: num.neg: the result's shape 2 is not the operand's 4

// -----
%x = "test.op"() : () -> tensor<4x!num.affine<8, 0.5, -128>>
%r = num.neg %x : tensor<4x!num.affine<8, 0.5, -128>> -> tensor<4x!num.affine<8, 0.5, 126>>
// CHECK: error: num.neg: the result's element type must be the operand's !num.affine<8, 0.5, -128> (or for !num.affine its width and scale with zero point -1 - zp), got !num.affine<8, 0.5, 126>

// -----
%x = "test.op"() : () -> tensor<4x!num.fixed<16, 12>>
%r = num.clip %x {lo = 2.0 : f64, hi = 1.0 : f64} : tensor<4x!num.fixed<16, 12>>
// CHECK: error: num.clip: lo 2.0 is above hi 1.0

// -----
// max and min need one element type: the quantizer rescales first.
%x = "test.op"() : () -> tensor<4x!num.fixed<16, 12>>
%y = "test.op"() : () -> tensor<4x!num.fixed<16, 10>>
%m = "num.max"(%x, %y) : (tensor<4x!num.fixed<16, 12>>, tensor<4x!num.fixed<16, 10>>) -> tensor<4x!num.fixed<16, 12>>
// CHECK: error: num.max: operand 'rhs' at position 1 does not verify: attribute !num.fixed<16, 12> expected from variable 'E', but got !num.fixed<16, 10>

// -----
%x = "test.op"() : () -> tensor<4x!num.fixed<16, 12>>
%y = "test.op"() : () -> tensor<4xf32>
%m = "num.min"(%x, %y) : (tensor<4x!num.fixed<16, 12>>, tensor<4xf32>) -> tensor<4x!num.fixed<16, 12>>
// CHECK: error: num.min: operand 'rhs' at position 1 does not verify: attribute !num.fixed<16, 12> expected from variable 'E', but got f32

// -----
%x = "test.op"() : () -> tensor<4x!num.fixed<16, 12>>
%y = "test.op"() : () -> tensor<3x!num.fixed<16, 12>>
%m = num.max %x, %y : (tensor<4x!num.fixed<16, 12>>, tensor<3x!num.fixed<16, 12>>) -> tensor<4x!num.fixed<16, 12>>
// CHECK: error: num.max: shapes 4 and 3 do not broadcast

// -----
%x = "test.op"() : () -> tensor<4x!num.fixed<16, 12>>
%y = "test.op"() : () -> tensor<!num.fixed<16, 12>>
%m = num.min %x, %y : (tensor<4x!num.fixed<16, 12>>, tensor<!num.fixed<16, 12>>) -> tensor<!num.fixed<16, 12>>
// CHECK: error: num.min: result shape scalar should be 4

// -----
%x = "test.op"() : () -> tensor<1x4x4x2x!num.fixed<16, 12>>
%p = num.maxpool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x2x!num.fixed<16, 12>>) -> tensor<1x3x3x2x!num.fixed<16, 12>>
// CHECK: error: num.maxpool: result shape 1x3x3x2 should be 1x2x2x2

// -----
%x = "test.op"() : () -> tensor<4x4x2x!num.fixed<16, 12>>
%p = num.maxpool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<4x4x2x!num.fixed<16, 12>>) -> tensor<2x2x2x!num.fixed<16, 12>>
// CHECK: error: num.maxpool: input must be 4-D NHWC, got 4x4x2

// -----
%x = "test.op"() : () -> tensor<1x4x4x2x!num.fixed<16, 12>>
%p = num.maxpool %x {kernel = array<i64: 2, 0>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x2x!num.fixed<16, 12>>) -> tensor<1x2x2x2x!num.fixed<16, 12>>
// CHECK: error: num.maxpool: kernel and strides need 2 positive values, pads 4 non-negative ones

// -----
// A window wholly in the padding (pad 2 >= kernel 2) has nothing to pool.
%x = "test.op"() : () -> tensor<1x4x4x2x!num.fixed<16, 12>>
%p = num.maxpool %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 2, 0, 0, 0>} : (tensor<1x4x4x2x!num.fixed<16, 12>>) -> tensor<1x5x3x2x!num.fixed<16, 12>>
// CHECK: error: num.maxpool: a 2x2 window with pads [2, 0, 0, 0] (top, bottom, left, right) and strides [1, 1] lies wholly in the padding

// -----
// The pooled values keep their representation.
%x = "test.op"() : () -> tensor<1x4x4x2x!num.fixed<16, 12>>
%p = "num.maxpool"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x2x!num.fixed<16, 12>>) -> tensor<1x2x2x2x!num.fixed<8, 4>>
// CHECK: error: num.maxpool: result 'result' at position 0 does not verify: attribute !num.fixed<16, 12> expected from variable 'E', but got !num.fixed<8, 4>

// -----
%x = "test.op"() : () -> tensor<2x1xf32>
%a = "num.argmax"(%x) : (tensor<2x1xf32>) -> i64
// CHECK: error: num.argmax: result 'result' at position 0 does not verify: Expected attribute i32 but got i64

// -----
%x = "test.op"() : () -> tensor<2xi16>
%a = "num.argmax"(%x) : (tensor<2xi16>) -> i32
// CHECK: error: num.argmax: operand 'input' at position 0 does not verify: an L2 number type (!num.fixed, !num.posit, !num.affine, f32 or bf16) expected

// -----
%x = "test.op"() : () -> tensor<2x1x!num.fixed<16, 12>>
%s = num.sgn %x : tensor<2x1x!num.fixed<16, 12>>
// CHECK: error: num.sgn: input must hold one element, got 2x1

// -----
// num.convert changes posit formats only (fixed point has num.rescale), to another format
%x = "test.op"() : () -> tensor<2x!num.fixed<16, 12>>
%y = num.convert %x : tensor<2x!num.fixed<16, 12>> -> tensor<2x!num.posit<8, 2>>
// CHECK: error: num.convert: operand and result must be !num.posit tensors, got !num.fixed<16, 12> -> !num.posit<8, 2> (fixed point: num.rescale)

// -----
%x = "test.op"() : () -> tensor<2x!num.posit<8, 2>>
%y = num.convert %x : tensor<2x!num.posit<8, 2>> -> tensor<2x!num.posit<8, 2>>
// CHECK: error: num.convert: converts !num.posit<8, 2> to itself

// -----
%x = "test.op"() : () -> tensor<2x!num.posit<16, 2>>
%y = "num.convert"(%x) : (tensor<2x!num.posit<16, 2>>) -> tensor<3x!num.posit<8, 2>>
// CHECK: error: num.convert: result 'result' at position 0 does not verify: shape must not change
