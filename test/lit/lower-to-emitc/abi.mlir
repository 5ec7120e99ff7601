// The C interface beside the model's function is IR too (lowering/c_abi.py): a 16-bit
// model with input scale 14 and trunc rounding (../c-printer/Inputs/small.mlir) gets a
// static minun_quantize_input (x * 2^14 = x * 16384, saturated to [-32768, 32767],
// rounded toward zero) and minun_predict_float (scores * 2^-14 = 6.1035156e-05, the
// shortest decimal of that float32), after minun_predict; with the input in scratch, also
// minun_input_buffer (the scratch address) and a copying minun_predict; a float32 model's
// minun_predict_float only forwards. What the lines call is an attribute (math.h here).
// RUN: minun-opt %S/../c-printer/Inputs/small.mlir -p lower-to-loops,memory-plan,lower-to-emitc | filecheck %s
// RUN: minun-opt %S/../c-printer/Inputs/small.mlir -p 'lower-to-loops,memory-plan{input-in-scratch=true},lower-to-emitc' | filecheck %s --check-prefix=INPLACE
// RUN: minun-opt %S/../c-printer/Inputs/float.mlir -p lower-to-loops,memory-plan,lower-to-emitc | filecheck %s --check-prefix=F32

// CHECK:      cemit.func "minun_predict"("const minun_input_t *x", "minun_output_t *out")
// CHECK:      cemit.func "minun_quantize_input"("float v") -> !cemit.opaque<"minun_input_t"> attributes {static, comment = "/* Reals -> stored input: round(v * 2^14) (trunc), saturated,{{.*}}", needs = ["math.h"]} {
// CHECK-NEXT:   cemit.verbatim "float r = v * 16384.0f;"
// CHECK-NEXT:   cemit.verbatim "if (r >= 32767.0f)"
// CHECK-NEXT:   cemit.verbatim "    return 32767;"
// CHECK-NEXT:   cemit.verbatim "if (r <= -32768.0f)"
// CHECK-NEXT:   cemit.verbatim "    return (-32767 - 1);"
// CHECK-NEXT:   cemit.verbatim "return (minun_input_t)(r < 0.0f ? -floorf(-r) : floorf(r));"
// CHECK-NEXT: }
// CHECK-NEXT: cemit.func "minun_predict_float"("const float *x", "float *scores") -> !cemit.opaque<"int"> {
// CHECK:        cemit.verbatim "label = minun_predict(q, s);"
// CHECK:        cemit.verbatim "    scores[i] = (float)s[i] * 6.1035156e-05f;"
// CHECK-NEXT:   cemit.verbatim "return label;"
// CHECK-NEXT: }

// INPLACE:      cemit.func "minun_predict_in_place"("minun_output_t *out")
// INPLACE:      cemit.func "minun_input_buffer"() -> !cemit.opaque<"minun_input_t *"> {
// INPLACE-NEXT:   cemit.verbatim "return (minun_input_t *)&minun_scratch.i16[0];"
// INPLACE-NEXT: }
// INPLACE-NEXT: cemit.func "minun_predict"("const minun_input_t *x", "minun_output_t *out") -> !cemit.opaque<"int"> {
// INPLACE:        cemit.verbatim "return minun_predict_in_place(out);"
// INPLACE:      cemit.func "minun_predict_float"
// INPLACE-NEXT:   cemit.verbatim "minun_input_t *q = minun_input_buffer();"
// INPLACE:        cemit.verbatim "label = minun_predict_in_place(s);"

// F32:      cemit.func "minun_predict_float"("const float *x", "float *scores") -> !cemit.opaque<"int"> {
// F32-NEXT:   cemit.verbatim "return minun_predict(x, scores);"
// F32-NEXT: }
