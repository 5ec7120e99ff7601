// ../../c-printer/Inputs/conv-pool-5ch-16.mlir through 'lower-to-loops,memory-plan{input-in-scratch=true
// output-in-scratch=true},lower-to-emitc', with one change: the pooled outputs are stored
// from scratch element 31 instead of 32, so the first overlaps the input's last element,
// which the last window reads (conv-channels.mlir: the blocking is refused).
builtin.module {
  cemit.include "model.h"
  cemit.include "minun_runtime.h"
  cemit.global "p_F_t" : i16[90] const flash = dense<[-44, -39, -34, -29, -24, -19, -14, -9, -4, 1, 6, 11, 16, 21, 26, 31, 36, 41, -43, -38, -33, -28, -23, -18, -13, -8, -3, 2, 7, 12, 17, 22, 27, 32, 37, 42, -42, -37, -32, -27, -22, -17, -12, -7, -2, 3, 8, 13, 18, 23, 28, 33, 38, 43, -41, -36, -31, -26, -21, -16, -11, -6, -1, 4, 9, 14, 19, 24, 29, 34, 39, 44, -40, -35, -30, -25, -20, -15, -10, -5, 0, 5, 10, 15, 20, 25, 30, 35, 40, 45]> : tensor<90xi16>
  cemit.scratch "minun_scratch"[104] (i16)
  cemit.func "minun_predict_in_place"() -> !cemit.opaque<"int"> attributes {minun.input_type = i16, minun.output_type = i16, minun.input_size = #builtin.int<32>, minun.output_size = #builtin.int<20>, num.rounding = "trunc", minun.input_encoding = !num.fixed<16, 14>, minun.output_encoding = !num.fixed<16, 14>, minun.input_shape = "1x4x4x2", minun.input_name = "X", minun.output_in_scratch, minun.input_in_scratch, minun.scratch_bytes = 104 : i64, minun.input_buffer = "&minun_scratch.i16[0]", minun.output_buffer = "&minun_scratch.i16[32]"} {
    %0 = cemit.literal 0 : index
    %1 = cemit.literal 2 : index
    cemit.for "i" = %0 to %1 : index, index {
      %2 = cemit.literal 0 : index
      %3 = cemit.literal 2 : index
      cemit.for "i0" = %2 to %3 : index, index {
        %4 = cemit.literal 0 : index
        %5 = cemit.literal 5 : index
        cemit.for "i1" = %4 to %5 : index, index {
          %6 = cemit.literal -32768 : i16
          cemit.decl "acc" = %6 : i16
          %7 = cemit.literal 0 : index
          %8 = cemit.literal 2 : index
          cemit.for "i2" = %7 to %8 : index, index {
            %9 = cemit.ref "acc" : i16
            cemit.decl "acc0" = %9 : i16
            %10 = cemit.literal 0 : index
            %11 = cemit.literal 2 : index
            cemit.for "i3" = %10 to %11 : index, index {
              %12 = cemit.ref "i" : index
              %13 = cemit.literal -2 : index
              %14 = cemit.binary "*" %12, %13 : (index, index) -> index
              %15 = cemit.ref "i2" : index
              %16 = cemit.literal -1 : index
              %17 = cemit.binary "*" %15, %16 : (index, index) -> index
              %18 = cemit.binary "+" %14, %17 : (index, index) -> index
              %19 = cemit.literal 1 : index
              %20 = cemit.binary "+" %18, %19 : (index, index) -> index
              cemit.decl "v" = %20 const : index
              %21 = cemit.ref "i" : index
              %22 = cemit.literal -2 : index
              %23 = cemit.binary "*" %21, %22 : (index, index) -> index
              %24 = cemit.ref "i2" : index
              %25 = cemit.literal -1 : index
              %26 = cemit.binary "*" %24, %25 : (index, index) -> index
              %27 = cemit.binary "+" %23, %26 : (index, index) -> index
              %28 = cemit.literal 5 : index
              %29 = cemit.binary "+" %27, %28 : (index, index) -> index
              cemit.decl "v0" = %29 const : index
              %30 = cemit.ref "i0" : index
              %31 = cemit.literal -2 : index
              %32 = cemit.binary "*" %30, %31 : (index, index) -> index
              %33 = cemit.ref "i3" : index
              %34 = cemit.literal -1 : index
              %35 = cemit.binary "*" %33, %34 : (index, index) -> index
              %36 = cemit.binary "+" %32, %35 : (index, index) -> index
              %37 = cemit.literal 1 : index
              %38 = cemit.binary "+" %36, %37 : (index, index) -> index
              cemit.decl "v1" = %38 const : index
              %39 = cemit.literal 0 : index
              %40 = cemit.ref "v1" : index
              %41 = cemit.binary ">" %39, %40 : (index, index) -> i1
              %42 = cemit.literal 0 : index
              %43 = cemit.ref "v1" : index
              %44 = cemit.cond %41, %42, %43 : (i1, index, index) -> index
              cemit.decl "v2" = %44 const : index
              %45 = cemit.ref "i0" : index
              %46 = cemit.literal -2 : index
              %47 = cemit.binary "*" %45, %46 : (index, index) -> index
              %48 = cemit.ref "i3" : index
              %49 = cemit.literal -1 : index
              %50 = cemit.binary "*" %48, %49 : (index, index) -> index
              %51 = cemit.binary "+" %47, %50 : (index, index) -> index
              %52 = cemit.literal 5 : index
              %53 = cemit.binary "+" %51, %52 : (index, index) -> index
              cemit.decl "v3" = %53 const : index
              %54 = cemit.literal 3 : index
              %55 = cemit.ref "v3" : index
              %56 = cemit.binary "<" %54, %55 : (index, index) -> i1
              %57 = cemit.literal 3 : index
              %58 = cemit.ref "v3" : index
              %59 = cemit.cond %56, %57, %58 : (i1, index, index) -> index
              cemit.decl "v4" = %59 const : index
              %60 = cemit.literal 0 : i32
              cemit.decl "acc1" = %60 : i32
              %61 = cemit.literal 0 : index
              %62 = cemit.ref "v" : index
              %63 = cemit.binary ">" %61, %62 : (index, index) -> i1
              %64 = cemit.literal 0 : index
              %65 = cemit.ref "v" : index
              %66 = cemit.cond %63, %64, %65 : (i1, index, index) -> index
              cemit.decl "v5" = %66 const : index
              %67 = cemit.ref "v5" : index
              %68 = cemit.literal 3 : index
              %69 = cemit.ref "v0" : index
              %70 = cemit.binary "<" %68, %69 : (index, index) -> i1
              %71 = cemit.literal 3 : index
              %72 = cemit.ref "v0" : index
              %73 = cemit.cond %70, %71, %72 : (i1, index, index) -> index
              cemit.decl "v6" = %73 const : index
              %74 = cemit.ref "v6" : index
              cemit.for "i4" = %67 to %74 : index, index {
                %75 = cemit.ref "acc1" : i32
                cemit.decl "acc2" = %75 : i32
                %76 = cemit.ref "v2" : index
                %77 = cemit.literal 2 : index
                %78 = cemit.binary "*" %76, %77 : (index, index) -> index
                cemit.decl "v7" = %78 const : index
                %79 = cemit.ref "v7" : index
                %80 = cemit.ref "v4" : index
                %81 = cemit.literal 2 : index
                %82 = cemit.binary "*" %80, %81 : (index, index) -> index
                cemit.decl "v8" = %82 const : index
                %83 = cemit.ref "v8" : index
                cemit.for "i5" = %79 to %83 : index, index {
                  %84 = cemit.ref "acc2" : i32
                  %85 = cemit.cast %84 : i32 to ui32
                  %86 = cemit.ref "i" : index
                  %87 = cemit.literal 16 : index
                  %88 = cemit.binary "*" %86, %87 : (index, index) -> index
                  %89 = cemit.ref "i2" : index
                  %90 = cemit.literal 8 : index
                  %91 = cemit.binary "*" %89, %90 : (index, index) -> index
                  %92 = cemit.binary "+" %88, %91 : (index, index) -> index
                  %93 = cemit.ref "i4" : index
                  %94 = cemit.literal 8 : index
                  %95 = cemit.binary "*" %93, %94 : (index, index) -> index
                  %96 = cemit.binary "+" %92, %95 : (index, index) -> index
                  %97 = cemit.ref "i0" : index
                  %98 = cemit.literal 4 : index
                  %99 = cemit.binary "*" %97, %98 : (index, index) -> index
                  %100 = cemit.binary "+" %96, %99 : (index, index) -> index
                  %101 = cemit.ref "i3" : index
                  %102 = cemit.literal 2 : index
                  %103 = cemit.binary "*" %101, %102 : (index, index) -> index
                  %104 = cemit.binary "+" %100, %103 : (index, index) -> index
                  %105 = cemit.ref "i5" : index
                  %106 = cemit.binary "+" %104, %105 : (index, index) -> index
                  %107 = cemit.literal -10 : index
                  %108 = cemit.binary "+" %106, %107 : (index, index) -> index
                  %109 = cemit.load "minun_scratch.i16"[%108] : index -> i16
                  %110 = cemit.cast %109 : i16 to i32
                  %111 = cemit.ref "i1" : index
                  %112 = cemit.literal 18 : index
                  %113 = cemit.binary "*" %111, %112 : (index, index) -> index
                  %114 = cemit.ref "i4" : index
                  %115 = cemit.literal 6 : index
                  %116 = cemit.binary "*" %114, %115 : (index, index) -> index
                  %117 = cemit.binary "+" %113, %116 : (index, index) -> index
                  %118 = cemit.ref "i5" : index
                  %119 = cemit.binary "+" %117, %118 : (index, index) -> index
                  %120 = cemit.load "p_F_t"[%119] flash : index -> i16
                  %121 = cemit.cast %120 : i16 to i32
                  %122 = cemit.binary "*" %110, %121 : (i32, i32) -> i32
                  %123 = cemit.cast %122 : i32 to ui32
                  %124 = cemit.binary "+" %85, %123 : (ui32, ui32) -> ui32
                  %125 = cemit.cast %124 : ui32 to i32
                  cemit.assign "acc2" = %125 : i32
                }
                %126 = cemit.ref "acc2" : i32
                cemit.assign "acc1" = %126 : i32
              }
              %127 = cemit.ref "acc1" : i32
              %128 = cemit.ref "acc1" : i32
              %129 = cemit.literal 31 : i32
              %130 = cemit.binary ">>" %128, %129 : (i32, i32) -> i32
              %131 = cemit.literal 16383 : i32
              %132 = cemit.binary "&" %130, %131 : (i32, i32) -> i32
              %133 = cemit.binary "+" %127, %132 : (i32, i32) -> i32
              %134 = cemit.literal 14 : i32
              %135 = cemit.binary ">>" %133, %134 : (i32, i32) -> i32
              %136 = cemit.cast %135 : i32 to i16
              cemit.decl "v9" = %136 const : i16
              %137 = cemit.ref "acc0" : i16
              %138 = cemit.ref "v9" : i16
              %139 = cemit.binary ">" %137, %138 : (i16, i16) -> i1
              %140 = cemit.ref "acc0" : i16
              %141 = cemit.ref "v9" : i16
              %142 = cemit.cond %139, %140, %141 : (i1, i16, i16) -> i16
              cemit.assign "acc0" = %142 : i16
            }
            %143 = cemit.ref "acc0" : i16
            cemit.assign "acc" = %143 : i16
          }
          %144 = cemit.ref "acc" : i16
          %145 = cemit.ref "i" : index
          %146 = cemit.literal 10 : index
          %147 = cemit.binary "*" %145, %146 : (index, index) -> index
          %148 = cemit.ref "i0" : index
          %149 = cemit.literal 5 : index
          %150 = cemit.binary "*" %148, %149 : (index, index) -> index
          %151 = cemit.binary "+" %147, %150 : (index, index) -> index
          %152 = cemit.ref "i1" : index
          %153 = cemit.binary "+" %151, %152 : (index, index) -> index
          %154 = cemit.literal 31 : index
          %155 = cemit.binary "+" %153, %154 : (index, index) -> index
          cemit.store %144, "minun_scratch.i16"[%155] : i16, index
        }
      }
    }
    %156 = cemit.literal 0 : index
    cemit.decl "acc3" = %156 : index
    %157 = cemit.literal 0 : index
    %158 = cemit.literal 32 : index
    %159 = cemit.binary "+" %157, %158 : (index, index) -> index
    %160 = cemit.load "minun_scratch.i16"[%159] : index -> i16
    cemit.decl "acc4" = %160 : i16
    %161 = cemit.literal 1 : index
    %162 = cemit.literal 20 : index
    cemit.for "i6" = %161 to %162 : index, index {
      %163 = cemit.ref "i6" : index
      %164 = cemit.literal 32 : index
      %165 = cemit.binary "+" %163, %164 : (index, index) -> index
      %166 = cemit.load "minun_scratch.i16"[%165] : index -> i16
      cemit.decl "v10" = %166 const : i16
      %167 = cemit.ref "v10" : i16
      %168 = cemit.ref "acc4" : i16
      %169 = cemit.binary ">" %167, %168 : (i16, i16) -> i1
      cemit.decl "v11" = %169 const : i1
      %170 = cemit.ref "v11" : i1
      %171 = cemit.ref "i6" : index
      %172 = cemit.ref "acc3" : index
      %173 = cemit.cond %170, %171, %172 : (i1, index, index) -> index
      cemit.decl "acc3_next" = %173 const : index
      %174 = cemit.ref "v11" : i1
      %175 = cemit.ref "v10" : i16
      %176 = cemit.ref "acc4" : i16
      %177 = cemit.cond %174, %175, %176 : (i1, i16, i16) -> i16
      cemit.decl "acc4_next" = %177 const : i16
      %178 = cemit.ref "acc3_next" : index
      cemit.assign "acc3" = %178 : index
      %179 = cemit.ref "acc4_next" : i16
      cemit.assign "acc4" = %179 : i16
    }
    %180 = cemit.ref "acc3" : index
    %181 = cemit.cast %180 : index to i32
    cemit.return %181 : i32
  }
  cemit.func "minun_input_buffer"() -> !cemit.opaque<"minun_input_t *"> {
    cemit.verbatim "return (minun_input_t *)&minun_scratch.i16[0];"
  }
  cemit.func "minun_output_buffer"() -> !cemit.opaque<"minun_output_t *"> {
    cemit.verbatim "return (minun_output_t *)&minun_scratch.i16[32];"
  }
  cemit.func "minun_predict"("const minun_input_t *x", "minun_output_t *out") -> !cemit.opaque<"int"> {
    cemit.verbatim "const minun_output_t *y = minun_output_buffer();"
    cemit.verbatim "long i;"
    cemit.verbatim "int label;"
    cemit.verbatim "minun_input_t *in = minun_input_buffer();"
    cemit.verbatim "if (x != in)"
    cemit.verbatim "    for (i = 0; i < MINUN_INPUT_SIZE; i++)"
    cemit.verbatim "        in[i] = x[i];"
    cemit.verbatim "label = minun_predict_in_place();"
    cemit.verbatim "if (out != y)"
    cemit.verbatim "    for (i = 0; i < MINUN_OUTPUT_SIZE; i++)"
    cemit.verbatim "        out[i] = y[i];"
    cemit.verbatim "return label;"
  }
  cemit.func "minun_quantize_input"("float v") -> !cemit.opaque<"minun_input_t"> attributes {static, comment = "/* Reals -> stored input: round(v * 2^14) (trunc), saturated,\0A * as the evaluator encodes inputs (the scaling by a power of two is exact). */", needs = ["math.h"]} {
    cemit.verbatim "float r = v * 16384.0f;"
    cemit.verbatim "if (r >= 32767.0f)"
    cemit.verbatim "    return 32767;"
    cemit.verbatim "if (r <= -32768.0f)"
    cemit.verbatim "    return (-32767 - 1);"
    cemit.verbatim "return (minun_input_t)(r < 0.0f ? -floorf(-r) : floorf(r));"
  }
  cemit.func "minun_predict_float"("const float *x", "float *scores") -> !cemit.opaque<"int"> {
    cemit.verbatim "minun_input_t *q = minun_input_buffer();"
    cemit.verbatim "const minun_output_t *s = minun_output_buffer();"
    cemit.verbatim "int i, label;"
    cemit.verbatim "for (i = 0; i < MINUN_INPUT_SIZE; i++)"
    cemit.verbatim "    q[i] = minun_quantize_input(x[i]);"
    cemit.verbatim "label = minun_predict_in_place();"
    cemit.verbatim "for (i = 0; i < MINUN_OUTPUT_SIZE; i++)"
    cemit.verbatim "    scores[i] = (float)s[i] * 6.1035156e-05f;"
    cemit.verbatim "return label;"
  }
}

