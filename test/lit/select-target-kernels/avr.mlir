// AVR: int16 dot loops at any constant strides, at most one array in program memory,
// become the asm minun_dot16_{fr,rr}_<stride a>_<stride b> (fr: the first pointer in
// flash), guarded dot loops too once the test is hoisted; what remains of
// acc + (int32_t)a * (int32_t)b, 16 x 16 -> 32 products and int32 shifts by a count that
// is not a multiple of 8 become minun_mac16, minun_mul16 and minun_asr32_<n>. Refused:
// both arrays in flash (the body still gets minun_mac16), float and int32 elements, a
// test that reads the loop variable (its product still gets minun_mul16), a shift by 8.
// The recognisers are passes/kernel_match.py's (dot_loop's strides, guarded_dot, scatter,
// mac_operands); the pass only rewrites.
// RUN: minun-opt %S/Inputs/loops.mlir -p 'select-target-kernels{target=avr}' | filecheck %s

// CHECK: builtin.module attributes {cemit.kernels = "avr"}
// { const int i = 0; acc = minun_dot16_fr_1_1(acc, &W[i], &x[k + i], 16 - i); }
// CHECK-LABEL: cemit.func "dot16"
// CHECK:      cemit.block {
// CHECK-NEXT:   %[[LO:.*]] = cemit.literal 0 : index
// CHECK-NEXT:   %[[BLO:.*]] = cemit.bare %[[LO]] : (index) -> index
// CHECK-NEXT:   cemit.decl "i" = %[[BLO]] const : index
// CHECK-NEXT:   %[[ACC:.*]] = cemit.ref "acc" : i32
// CHECK:        %[[A:.*]] = cemit.addr "W"[%{{.*}}] flash : index -> !cemit.ptr<i16>
// CHECK:        %[[B:.*]] = cemit.addr "x"[%{{.*}}] : index -> !cemit.ptr<i16>
// CHECK-NEXT:   %[[HI:.*]] = cemit.literal 16 : index
// CHECK-NEXT:   %[[I:.*]] = cemit.ref "i" : index
// CHECK-NEXT:   %[[N:.*]] = cemit.binary "-" %[[HI]], %[[I]] : (index, index) -> index
// CHECK-NEXT:   %[[K:.*]] = cemit.kernel "minun_dot16_fr_1_1"(%[[ACC]], %[[A]], %[[B]], %[[N]]) : (i32, !cemit.ptr<i16>, !cemit.ptr<i16>, index) -> i32
// CHECK-NEXT:   cemit.assign "acc" = %[[K]] : i32
// CHECK-NEXT: }
// CHECK-LABEL: cemit.func "strided"
// CHECK:      cemit.kernel "minun_dot16_fr_2_1"
// CHECK-LABEL: cemit.func "twoflash"
// CHECK:      cemit.for "i"
// CHECK:        %[[M:.*]] = cemit.kernel "minun_mac16"(%{{.*}}, %{{.*}}, %{{.*}}) : (i32, i16, i16) -> i32
// CHECK-NEXT:   cemit.assign "acc" = %[[M]] : i32
// CHECK-LABEL: cemit.func "float"
// CHECK-NOT:  cemit.kernel
// CHECK-LABEL: cemit.func "wide"
// CHECK-NOT:  cemit.kernel
// CHECK-LABEL: cemit.func "bounds"
// CHECK:      cemit.kernel "minun_dot16_fr_1_1"
// CHECK-LABEL: cemit.func "guarded"
// CHECK:      cemit.block {
// CHECK-NEXT:   %{{.*}} = cemit.ref "inside" : i1
// CHECK-NEXT:   cemit.if
// CHECK-NOT:      cemit.for
// CHECK:          cemit.kernel "minun_dot16_fr_1_1"
// CHECK-LABEL: cemit.func "varying"
// CHECK:      cemit.for "c"
// CHECK:        cemit.if
// CHECK:          cemit.kernel "minun_mul16"(%{{.*}}, %{{.*}}) : (i16, i16) -> i32
// Neither array in flash: rr
// CHECK-LABEL: cemit.func "rows"
// CHECK:      cemit.kernel "minun_dot16_rr_1_1"
// CHECK-LABEL: cemit.func "shifts"
// CHECK:      cemit.kernel "minun_asr32_3"(%{{.*}}) : (i32) -> i32
// CHECK:      cemit.binary ">>" %{{.*}}, %{{.*}} : (i32, i32) -> i32
// CHECK:      cemit.kernel "minun_mul16"(%{{.*}}, %{{.*}}) : (i16, i16) -> i32
