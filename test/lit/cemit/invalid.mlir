// An expression is a tree printed inside its user: using a result twice is an error
// (lower-to-emitc binds shared values with cemit.decl).
// RUN: minun-opt %s --split-input-file --verify-diagnostics | filecheck %s

cemit.func "f"() -> i32 {
  %a = cemit.literal 1 : i32
  %b = cemit.binary "+" %a, %a : (i32, i32) -> i32
  cemit.return %b : i32
}
// CHECK: cemit.literal: an expression must be used exactly once, in its own block (bind shared values with cemit.decl)

// -----
// A literal's result has the literal's type.
cemit.func "f"() -> i32 {
  %a = "cemit.literal"() {value = 1 : i16} : () -> i32
  cemit.return %a : i32
}
// CHECK: error: cemit.literal: result type must be the literal's type Underlying verification failure: attribute i32 expected from variable 'T', but got i16

// -----
// The branches of ?: and its result have one type.
cemit.func "f"() -> i32 {
  %c = cemit.literal 1 : i1
  %a = cemit.literal 1 : i32
  %b = cemit.literal 2 : i16
  %r = "cemit.cond"(%c, %a, %b) : (i1, i32, i16) -> i32
  cemit.return %r : i32
}
// CHECK: error: cemit.cond: operand 'rhs' at position 2 does not verify: attribute i32 expected from variable 'T', but got i16
