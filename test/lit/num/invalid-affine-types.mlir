// Malformed !num.affine types are rejected where they are written.
// RUN: minun-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// A 32-bit accumulator has zero point 0.
%a = "test.op"() : () -> tensor<2x!num.affine<32, 0.5, 3>>
// CHECK: !num.affine: a 32-bit value has zero point 0, got 3

// -----
%a = "test.op"() : () -> tensor<2x!num.affine<8, 0.5, 128>>
// CHECK: !num.affine: zero point 128 outside [-128, 127]

// -----
// A 16-bit exact difference has zero point 0 too.
%a = "test.op"() : () -> tensor<2x!num.affine<16, 0.5, 1>>
// CHECK: !num.affine: a 16-bit value has zero point 0, got 1

// -----
%a = "test.op"() : () -> tensor<2x!num.affine<4, 0.5, 0>>
// CHECK: !num.affine: bits must be 8, 16 or 32, got 4
