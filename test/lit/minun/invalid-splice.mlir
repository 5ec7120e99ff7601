// Malformed splices and left splices are rejected with the op name and the shapes.
// RUN: minun-opt %s --split-input-file --verify-diagnostics | filecheck %s

%a = minun.input "A" [0.0, 1.0] : tensor<64x1xf32>
%i = arith.constant 0 : i32
%s = minun.splice %a[%i] {sizes = array<i64: 8>} : tensor<64x1xf32> -> tensor<8xf32>
// CHECK: invalid-splice.mlir:6:1: error: minun.splice: needs one start and one size per dimension of 64x1, got 1 starts and 1 sizes

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<64x1xf32>
%i = arith.constant 0 : i32
%s = minun.splice %a[%i, %i] {sizes = array<i64: 65, 1>} : tensor<64x1xf32> -> tensor<65x1xf32>
// CHECK: error: minun.splice: size 65 of dimension 0 does not fit in input 64x1

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<64x1xf32>
%i = arith.constant 60 : i32
%j = arith.constant 0 : i32
%s = minun.splice %a[%i, %j] {sizes = array<i64: 8, 1>} : tensor<64x1xf32> -> tensor<8x1xf32>
// CHECK: error: minun.splice: slice [60:+8] of dimension 0 is outside input 64x1

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<64x1xf32>
%i = arith.constant 0 : i32
%s = minun.splice %a[%i, %i] {sizes = array<i64: 0, 1>} : tensor<64x1xf32> -> tensor<0x1xf32>
// CHECK: error: minun.splice: size 0 of dimension 0 does not fit in input 64x1

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<64x1xf32>
%i = arith.constant 0 : i32
%s = minun.splice %a[%i, %i] {sizes = array<i64: 8, 1>} : tensor<64x1xf32> -> tensor<4x1xf32>
// CHECK: error: minun.splice: result type tensor<4x1xf32> does not match the inferred tensor<8x1xf32>

// -----
// A start must be an integer value.
%a = minun.input "A" [0.0, 1.0] : tensor<64x1xf32>
%i = arith.constant 0 : i64
%s = "minun.splice"(%a, %i, %i) {sizes = array<i64: 8, 1>} : (tensor<64x1xf32>, i64, i64) -> tensor<8x1xf32>
// CHECK: error: minun.splice: operand 'starts' at positions 1 to 2 does not verify: Expected attribute i32 but got i64

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<64x1xf32>
%v = minun.input "V" [0.0, 1.0] : tensor<8xf32>
%i = arith.constant 0 : i32
%s = minun.splice_assign %v into %a[%i, %i] : tensor<8xf32> into tensor<64x1xf32>
// CHECK: error: minun.splice_assign: value 8 and destination 64x1 have different ranks

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<64x1xf32>
%v = minun.input "V" [0.0, 1.0] : tensor<8x2xf32>
%i = arith.constant 0 : i32
%s = minun.splice_assign %v into %a[%i, %i] : tensor<8x2xf32> into tensor<64x1xf32>
// CHECK: error: minun.splice_assign: size 2 of dimension 1 does not fit in destination 64x1

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<64x1xf32>
%v = minun.input "V" [0.0, 1.0] : tensor<8x1xf32>
%i = arith.constant 57 : i32
%j = arith.constant 0 : i32
%s = minun.splice_assign %v into %a[%i, %j] : tensor<8x1xf32> into tensor<64x1xf32>
// CHECK: error: minun.splice_assign: slice [57:+8] of dimension 0 is outside destination 64x1

// -----
// Value and destination share one element type, and the result is the destination's
// type (constraint variables E and T).
%a = minun.input "A" [0.0, 1.0] : tensor<64x1xf32>
%v = minun.constant dense<1> : tensor<8x1xi32>
%i = arith.constant 0 : i32
%s = "minun.splice_assign"(%v, %a, %i, %i) : (tensor<8x1xi32>, tensor<64x1xf32>, i32, i32) -> tensor<64x1xf32>
// CHECK: error: minun.splice_assign: operand 'dest' at position 1 does not verify: value and destination need one element type Underlying verification failure: attribute i32 expected from variable 'E', but got f32

// -----
%a = minun.input "A" [0.0, 1.0] : tensor<64x1xf32>
%v = minun.input "V" [0.0, 1.0] : tensor<8x1xf32>
%i = arith.constant 0 : i32
%s = "minun.splice_assign"(%v, %a, %i, %i) : (tensor<8x1xf32>, tensor<64x1xf32>, i32, i32) -> tensor<64x2xf32>
// CHECK: error: minun.splice_assign: result 'result' at position 0 does not verify: attribute tensor<64x1xf32> expected from variable 'T', but got tensor<64x2xf32>

// -----
// A constant's value has the result's type.
%c = "minun.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
// CHECK: error: minun.constant: the value's type must be the result type Underlying verification failure: attribute tensor<3xf32> expected from variable 'T', but got tensor<2xf32>
