// A cemit.kernel names a kernel of the runtime and matches its signature
// (lowering/c_runtime.py: kernel_signature).
// RUN: minun-opt %s --split-input-file --verify-diagnostics | filecheck %s

cemit.func "f"() -> i32 {
  %a = cemit.literal 1 : i32
  %k = cemit.kernel "minun_dot99_dsp"(%a) : (i32) -> i32
  cemit.return %k : i32
}
// CHECK: cemit.kernel: 'minun_dot99_dsp' is not a target kernel

// -----
// minun_dot16_dsp(acc, a, b, n): four operands
cemit.func "f"() -> i32 {
  %a = cemit.literal 1 : i32
  %k = cemit.kernel "minun_dot16_dsp"(%a) : (i32) -> i32
  cemit.return %k : i32
}
// CHECK: cemit.kernel minun_dot16_dsp: 1 operands, the kernel takes 4

// -----
// An int16 dot product reads int16 arrays, not int8 ones
cemit.func "f"() -> i32 {
  %a = cemit.literal 1 : i32
  %i = cemit.literal 0 : index
  %p = cemit.addr "x"[%i] : index -> !cemit.ptr<i8>
  %j = cemit.literal 0 : index
  %q = cemit.addr "y"[%j] : index -> !cemit.ptr<i8>
  %n = cemit.literal 4 : index
  %k = cemit.kernel "minun_dot16_dsp"(%a, %p, %q, %n) : (i32, !cemit.ptr<i8>, !cemit.ptr<i8>, index) -> i32
  cemit.return %k : i32
}
// CHECK: cemit.kernel minun_dot16_dsp: operand 1 has type !cemit.ptr<i8>

// -----
// AVR shifts exist for counts that are not multiples of 8 (those are byte moves)
cemit.func "f"() -> i32 {
  %a = cemit.literal 1 : i32
  %k = cemit.kernel "minun_asr32_16"(%a) : (i32) -> i32
  cemit.return %k : i32
}
// CHECK: cemit.kernel: 'minun_asr32_16' is not a target kernel

// -----
// minun_scatter16 stores: it has no result, so it is a statement
cemit.func "f"() -> i32 {
  %a = cemit.literal 1 : i16
  %b = cemit.literal 2 : i16
  %k = cemit.kernel "minun_scatter16"(%a, %b) : (i16, i16) -> i32
  cemit.return %k : i32
}
// CHECK: cemit.kernel minun_scatter16: 2 operands, the kernel takes 5

// -----
// A target_if's feature is a macro name
cemit.func "f"() -> i32 {
  cemit.target_if "__SSE2__ || 1" {
    cemit.verbatim "f();"
  } else {
    cemit.verbatim "g();"
  }
  %a = cemit.literal 1 : i32
  cemit.return %a : i32
}
// CHECK: cemit.target_if: '__SSE2__ || 1' is not a macro name
