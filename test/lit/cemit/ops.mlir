// The cemit (L4) ops print and parse back, and the C printer writes them as C.
// RUN: minun-opt %s | filecheck %s
// RUN: minun-opt %s -t 'c{file=source}' | filecheck %s --check-prefix=C

cemit.include "model.h"
cemit.global "p_T" : i8[3] const flash = dense<[1, -2, 3]> : tensor<3xi8>
cemit.scratch "minun_scratch"[8] (i16, i32)
cemit.func "minun_predict"("const minun_input_t *x", "minun_output_t *out") -> !cemit.opaque<"int"> attributes {minun.input_type = i8, minun.output_type = i16, minun.input_size = #builtin.int<3>, minun.output_size = #builtin.int<1>} {
  %lo = cemit.literal 0 : index
  %hi = cemit.literal 3 : index
  %z = cemit.literal 0 : i16
  cemit.decl "acc" = %z : i16
  cemit.for "i" = %lo to %hi : index, index {
    %i = cemit.ref "i" : index
    %t = cemit.load "p_T"[%i] flash : index -> i8
    %i2 = cemit.ref "i" : index
    %xi = cemit.load "x"[%i2] : index -> i8
    %p = cemit.binary "*" %t, %xi : (i8, i8) -> i16
    %a = cemit.ref "acc" : i16
    %u = cemit.cast %a : i16 to !cemit.opaque<"unsigned">
    %v = cemit.cast %p : i16 to !cemit.opaque<"unsigned">
    %s = cemit.binary "+" %u, %v : (!cemit.opaque<"unsigned">, !cemit.opaque<"unsigned">) -> !cemit.opaque<"unsigned">
    %n = cemit.cast %s : !cemit.opaque<"unsigned"> to i16
    cemit.assign "acc" = %n : i16
  }
  %a2 = cemit.ref "acc" : i16
  %zero = cemit.literal 0 : i16
  %pos = cemit.binary ">" %a2, %zero : (i16, i16) -> i1
  cemit.if %pos : i1 {
    %a3 = cemit.ref "acc" : i16
    %k = cemit.literal 0 : index
    cemit.store %a3, "out"[%k] : i16, index
  } else {
  }
  %r = cemit.literal 1 : i32
  cemit.return %r : i32
}
// CHECK:      cemit.global "p_T" : i8[3] const flash = dense<[1, -2, 3]> : tensor<3xi8>
// CHECK-NEXT: cemit.scratch "minun_scratch"[8] (i16, i32)
// CHECK:      cemit.for "i" = %{{.*}} to %{{.*}} : index, index {
// CHECK:        cemit.load "p_T"[%{{.*}}] flash : index -> i8
// CHECK:      cemit.if %{{.*}} : i1 {

// C:      static const int8_t p_T[3] = {
// C-NEXT:     1, -2, 3,
// C:      static union {
// C-NEXT:     int16_t i16[4];
// C-NEXT:     int32_t i32[2];
// C-NEXT: } minun_scratch;
// C:      int minun_predict(const minun_input_t *x, minun_output_t *out)
// C-NEXT: {
// C-NEXT:     int16_t acc = 0;
// C-NEXT:     for (int i = 0; i < 3; i++) {
// C-NEXT:         acc = (int16_t)((unsigned)acc + (unsigned)(p_T[i] * x[i]));
// C-NEXT:     }
// C-NEXT:     if (acc > 0) {
// C-NEXT:         out[0] = acc;
// C-NEXT:     }
// C-NEXT:     return 1;
// C-NEXT: }
