// The kernel ops of select-target-kernels print and parse back, and the C printer spells
// them: cemit.block `{ }`, cemit.target_if `#if defined(F)` / `#else` / `#endif` at the
// left margin (both branches at the op's depth), cemit.array `T name[n];`, cemit.addr
// `&a[i]`, cemit.bare (no outer parentheses), cemit.kernel / cemit.kernel_stmt calls.
// RUN: minun-opt %s | filecheck %s
// RUN: minun-opt %s | minun-opt | filecheck %s
// RUN: minun-opt %s -t 'c{profile=cortex-m file=source}' | filecheck %s --check-prefix=C

cemit.func "minun_predict"("const minun_input_t *x", "minun_output_t *out") -> !cemit.opaque<"int"> attributes {minun.input_type = i16, minun.output_type = i32, minun.input_size = #builtin.int<8>, minun.output_size = #builtin.int<1>} {
  %z = cemit.literal 0 : i32
  cemit.decl "acc" = %z : i32
  cemit.target_if "__ARM_FEATURE_DSP" {
    cemit.block {
      cemit.array "t" : i16[2]
      %lo = cemit.literal 1 : index
      %one = cemit.literal 1 : index
      %s = cemit.binary "+" %lo, %one : (index, index) -> index
      %b = cemit.bare %s : (index) -> index
      cemit.decl "i" = %b const : index
      %a = cemit.ref "acc" : i32
      %i = cemit.ref "i" : index
      %k = cemit.literal 2 : index
      %ik = cemit.binary "+" %i, %k : (index, index) -> index
      %px = cemit.addr "x"[%ik] : index -> !cemit.ptr<i16>
      %i2 = cemit.ref "i" : index
      %pw = cemit.addr "x"[%i2] : index -> !cemit.ptr<i16>
      %n = cemit.literal 6 : index
      %call = cemit.kernel "minun_dot16_dsp"(%a, %px, %pw, %n) : (i32, !cemit.ptr<i16>, !cemit.ptr<i16>, index) -> i32
      cemit.assign "acc" = %call : i32
    }
  } else {
    %lo = cemit.literal 0 : index
    %hi = cemit.literal 8 : index
    cemit.for "i" = %lo to %hi : index, index {
      %a = cemit.ref "acc" : i32
      %i = cemit.ref "i" : index
      %xi = cemit.load "x"[%i] : index -> i16
      %w = cemit.cast %xi : i16 to i32
      %s = cemit.binary "+" %a, %w : (i32, i32) -> i32
      cemit.assign "acc" = %s : i32
    }
  }
  %y = cemit.ref "out" : !cemit.opaque<"int32_t *">
  %zero = cemit.literal 0 : index
  %py = cemit.addr "out"[%zero] : index -> !cemit.ptr<i32>
  %zero2 = cemit.literal 0 : index
  %pr = cemit.addr "rows"[%zero2] flash : index -> !cemit.ptr<i8>
  %zero3 = cemit.literal 0 : index
  %pv = cemit.addr "vals"[%zero3] flash : index -> !cemit.ptr<i16>
  %xv = cemit.literal 3 : i16
  %cnt = cemit.literal 4 : index
  cemit.kernel_stmt "minun_scatter16"(%py, %pr, %pv, %xv, %cnt) : !cemit.ptr<i32>, !cemit.ptr<i8>, !cemit.ptr<i16>, i16, index
  cemit.decl "unused" = %y const : !cemit.opaque<"int32_t *">
  %r = cemit.literal 0 : i32
  cemit.return %r : i32
}
// CHECK:      cemit.target_if "__ARM_FEATURE_DSP" {
// CHECK-NEXT:   cemit.block {
// CHECK-NEXT:     cemit.array "t" : i16[2]
// CHECK:          cemit.bare %{{.*}} : (index) -> index
// CHECK:          cemit.addr "x"[%{{.*}}] : index -> !cemit.ptr<i16>
// CHECK:          cemit.kernel "minun_dot16_dsp"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, !cemit.ptr<i16>, !cemit.ptr<i16>, index) -> i32
// CHECK:      } else {
// CHECK:        cemit.for "i"
// CHECK:      cemit.addr "rows"[%{{.*}}] flash : index -> !cemit.ptr<i8>
// CHECK:      cemit.kernel_stmt "minun_scatter16"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : !cemit.ptr<i32>, !cemit.ptr<i8>, !cemit.ptr<i16>, i16, index

// C:      int32_t acc = 0;
// C-NEXT: #if defined(__ARM_FEATURE_DSP)
// C-NEXT:     {
// C-NEXT:         int16_t t[2];
// C-NEXT:         const int i = 1 + 1;
// C-NEXT:         acc = minun_dot16_dsp(acc, &x[i + 2], &x[i], 6);
// C-NEXT:     }
// C-NEXT: #else
// C-NEXT:     for (int i = 0; i < 8; i++) {
// C-NEXT:         acc = (acc + (int32_t)x[i]);
// C-NEXT:     }
// C-NEXT: #endif
// C-NEXT:     minun_scatter16(&out[0], &rows[0], &vals[0], 3, 4);
