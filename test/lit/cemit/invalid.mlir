// An expression is a tree printed inside its user: using a result twice is an error
// (lower-to-emitc binds shared values with cemit.decl).
// RUN: minun-opt %s --verify-diagnostics | filecheck %s

cemit.func "f"() -> i32 {
  %a = cemit.literal 1 : i32
  %b = cemit.binary "+" %a, %a : (i32, i32) -> i32
  cemit.return %b : i32
}
// CHECK: cemit.literal: an expression must be used exactly once, in its own block (bind shared values with cemit.decl)
