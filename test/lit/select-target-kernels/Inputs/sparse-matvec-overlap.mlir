// sparse-matvec.mlir at L4 with X in the scratch (bytes 12..15, y bytes 0..11), X's
// element offset changed from 6 to 4 by hand: X bytes 8..11 overlap y's.
builtin.module {
  cemit.include "model.h"
  cemit.include "minun_runtime.h"
  cemit.global "p_A_val" : i16[4] const flash = dense<[1, 3, 2, -4]> : tensor<4xi16>
  cemit.global "p_A_row" : i8[4] const flash = dense<[0, 2, 1, 2]> : tensor<4xi8>
  cemit.global "p_A_col" : i8[3] const flash = dense<[0, 2, 4]> : tensor<3xi8>
  cemit.scratch "minun_scratch"[16] (i16, i32)
  cemit.func "minun_predict_in_place"("minun_output_t *out") -> !cemit.opaque<"int"> attributes {minun.input_type = i16, minun.output_type = i32, minun.input_size = #builtin.int<2>, minun.output_size = #builtin.int<3>, num.rounding = "trunc", minun.input_encoding = !num.fixed<16, 10>, minun.output_encoding = !num.fixed<32, 20>, minun.input_shape = "2x1", minun.input_name = "X", minun.input_in_scratch, minun.scratch_bytes = 16 : i64, minun.input_buffer = "&minun_scratch.i16[6]"} {
    %0 = cemit.literal 0 : index
    %1 = cemit.literal 3 : index
    cemit.for "i" = %0 to %1 : index, index {
      %2 = cemit.literal 0 : i32
      %3 = cemit.ref "i" : index
      cemit.store %2, "minun_scratch.i32"[%3] : i32, index
    }
    %4 = cemit.literal 0 : index
    %5 = cemit.literal 2 : index
    cemit.for "i0" = %4 to %5 : index, index {
      %6 = cemit.ref "i0" : index
      %7 = cemit.load "p_A_col"[%6] flash : index -> i8
      %8 = cemit.cast %7 : i8 to i32
      %9 = cemit.cast %8 : i32 to index
      cemit.decl "v" = %9 const : index
      %10 = cemit.ref "v" : index
      %11 = cemit.ref "i0" : index
      %12 = cemit.literal 1 : index
      %13 = cemit.binary "+" %11, %12 : (index, index) -> index
      %14 = cemit.load "p_A_col"[%13] flash : index -> i8
      %15 = cemit.cast %14 : i8 to i32
      %16 = cemit.cast %15 : i32 to index
      cemit.decl "v0" = %16 const : index
      %17 = cemit.ref "v0" : index
      cemit.for "i1" = %10 to %17 : index, index {
        %18 = cemit.ref "i1" : index
        %19 = cemit.load "p_A_row"[%18] flash : index -> i8
        %20 = cemit.cast %19 : i8 to i32
        %21 = cemit.cast %20 : i32 to index
        cemit.decl "v1" = %21 const : index
        %22 = cemit.ref "v1" : index
        %23 = cemit.load "minun_scratch.i32"[%22] : index -> i32
        %24 = cemit.cast %23 : i32 to ui32
        %25 = cemit.ref "i1" : index
        %26 = cemit.load "p_A_val"[%25] flash : index -> i16
        %27 = cemit.cast %26 : i16 to i32
        %28 = cemit.ref "i0" : index
        %29 = cemit.literal 4 : index
        %30 = cemit.binary "+" %28, %29 : (index, index) -> index
        %31 = cemit.load "minun_scratch.i16"[%30] : index -> i16
        %32 = cemit.cast %31 : i16 to i32
        %33 = cemit.binary "*" %27, %32 : (i32, i32) -> i32
        %34 = cemit.cast %33 : i32 to ui32
        %35 = cemit.binary "+" %24, %34 : (ui32, ui32) -> ui32
        %36 = cemit.cast %35 : ui32 to i32
        %37 = cemit.ref "v1" : index
        cemit.store %36, "minun_scratch.i32"[%37] : i32, index
      }
    }
    %38 = cemit.literal 0 : index
    %39 = cemit.literal 3 : index
    cemit.for "i2" = %38 to %39 : index, index {
      %40 = cemit.ref "i2" : index
      %41 = cemit.load "minun_scratch.i32"[%40] : index -> i32
      %42 = cemit.ref "i2" : index
      cemit.store %41, "out"[%42] : i32, index
    }
    %43 = cemit.literal 0 : index
    cemit.decl "acc" = %43 : index
    %44 = cemit.literal 0 : index
    %45 = cemit.load "out"[%44] : index -> i32
    cemit.decl "acc0" = %45 : i32
    %46 = cemit.literal 1 : index
    %47 = cemit.literal 3 : index
    cemit.for "i3" = %46 to %47 : index, index {
      %48 = cemit.ref "i3" : index
      %49 = cemit.load "out"[%48] : index -> i32
      cemit.decl "v2" = %49 const : i32
      %50 = cemit.ref "v2" : i32
      %51 = cemit.ref "acc0" : i32
      %52 = cemit.binary ">" %50, %51 : (i32, i32) -> i1
      cemit.decl "v3" = %52 const : i1
      %53 = cemit.ref "v3" : i1
      %54 = cemit.ref "i3" : index
      %55 = cemit.ref "acc" : index
      %56 = cemit.cond %53, %54, %55 : (i1, index, index) -> index
      cemit.decl "acc_next" = %56 const : index
      %57 = cemit.ref "v3" : i1
      %58 = cemit.ref "v2" : i32
      %59 = cemit.ref "acc0" : i32
      %60 = cemit.cond %57, %58, %59 : (i1, i32, i32) -> i32
      cemit.decl "acc0_next" = %60 const : i32
      %61 = cemit.ref "acc_next" : index
      cemit.assign "acc" = %61 : index
      %62 = cemit.ref "acc0_next" : i32
      cemit.assign "acc0" = %62 : i32
    }
    %63 = cemit.ref "acc" : index
    %64 = cemit.cast %63 : index to i32
    cemit.return %64 : i32
  }
  cemit.func "minun_input_buffer"() -> !cemit.opaque<"minun_input_t *"> {
    cemit.verbatim "return (minun_input_t *)&minun_scratch.i16[6];"
  }
  cemit.func "minun_predict"("const minun_input_t *x", "minun_output_t *out") -> !cemit.opaque<"int"> {
    cemit.verbatim "minun_input_t *in = minun_input_buffer();"
    cemit.verbatim "long i;"
    cemit.verbatim "if (x != in)"
    cemit.verbatim "    for (i = 0; i < MINUN_INPUT_SIZE; i++)"
    cemit.verbatim "        in[i] = x[i];"
    cemit.verbatim "return minun_predict_in_place(out);"
  }
  cemit.func "minun_quantize_input"("float v") -> !cemit.opaque<"minun_input_t"> attributes {static, comment = "/* Reals -> stored input: round(v * 2^10) (trunc), saturated,\0A * as the evaluator encodes inputs (the scaling by a power of two is exact). */", needs = ["math.h"]} {
    cemit.verbatim "float r = v * 1024.0f;"
    cemit.verbatim "if (r >= 32767.0f)"
    cemit.verbatim "    return 32767;"
    cemit.verbatim "if (r <= -32768.0f)"
    cemit.verbatim "    return (-32767 - 1);"
    cemit.verbatim "return (minun_input_t)(r < 0.0f ? -floorf(-r) : floorf(r));"
  }
  cemit.func "minun_predict_float"("const float *x", "float *scores") -> !cemit.opaque<"int"> {
    cemit.verbatim "minun_input_t *q = minun_input_buffer();"
    cemit.verbatim "minun_output_t s[MINUN_OUTPUT_SIZE];"
    cemit.verbatim "int i, label;"
    cemit.verbatim "for (i = 0; i < MINUN_INPUT_SIZE; i++)"
    cemit.verbatim "    q[i] = minun_quantize_input(x[i]);"
    cemit.verbatim "label = minun_predict_in_place(s);"
    cemit.verbatim "for (i = 0; i < MINUN_OUTPUT_SIZE; i++)"
    cemit.verbatim "    scores[i] = (float)s[i] * 9.536743e-07f;"
    cemit.verbatim "return label;"
  }
}

