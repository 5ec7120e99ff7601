// L4 of c-printer/Inputs/conv-dense-16.mlir (minun-opt -p lower-to-loops,memory-plan,lower-to-emitc) with the
// dense result stored into minun_scratch.i16[i4] instead of out[i4]: x86-row-split.mlir checks that the
// rows loop is not split when its stores overlap what its dot products read.
builtin.module {
  cemit.include "model.h"
  cemit.include "minun_runtime.h"
  cemit.global "p_F_t" : i16[54] const flash = dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16, -17, -18, -19, -20, -21, -22, -23, -24, -25, -26, -27]> : tensor<54xi16>
  cemit.global "p_W_t" : i16[36] const flash = dense<[1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33, 35, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36]> : tensor<36xi16>
  cemit.scratch "minun_scratch"[36] (i16)
  cemit.func "minun_predict"("const minun_input_t *x", "minun_output_t *out") -> !cemit.opaque<"int"> attributes {minun.input_type = i16, minun.output_type = i16, minun.input_size = #builtin.int<27>, minun.output_size = #builtin.int<2>, num.rounding = "trunc", minun.input_encoding = !num.fixed<16, 14>, minun.output_encoding = !num.fixed<16, 14>, minun.input_shape = "1x3x3x3", minun.input_name = "X", minun.scratch_bytes = 36 : i64} {
    %0 = cemit.literal 0 : index
    %1 = cemit.literal 3 : index
    cemit.for "i" = %0 to %1 : index, index {
      %2 = cemit.literal 0 : index
      %3 = cemit.literal 3 : index
      cemit.for "i0" = %2 to %3 : index, index {
        %4 = cemit.literal 0 : index
        %5 = cemit.literal 2 : index
        cemit.for "i1" = %4 to %5 : index, index {
          %6 = cemit.ref "i" : index
          %7 = cemit.literal -1 : index
          %8 = cemit.binary "*" %6, %7 : (index, index) -> index
          %9 = cemit.literal 1 : index
          %10 = cemit.binary "+" %8, %9 : (index, index) -> index
          cemit.decl "v" = %10 const : index
          %11 = cemit.ref "i" : index
          %12 = cemit.literal -1 : index
          %13 = cemit.binary "*" %11, %12 : (index, index) -> index
          %14 = cemit.literal 4 : index
          %15 = cemit.binary "+" %13, %14 : (index, index) -> index
          cemit.decl "v0" = %15 const : index
          %16 = cemit.ref "i0" : index
          %17 = cemit.literal -1 : index
          %18 = cemit.binary "*" %16, %17 : (index, index) -> index
          %19 = cemit.literal 1 : index
          %20 = cemit.binary "+" %18, %19 : (index, index) -> index
          cemit.decl "v1" = %20 const : index
          %21 = cemit.literal 0 : index
          %22 = cemit.ref "v1" : index
          %23 = cemit.binary ">" %21, %22 : (index, index) -> i1
          %24 = cemit.literal 0 : index
          %25 = cemit.ref "v1" : index
          %26 = cemit.cond %23, %24, %25 : (i1, index, index) -> index
          cemit.decl "v2" = %26 const : index
          %27 = cemit.ref "i0" : index
          %28 = cemit.literal -1 : index
          %29 = cemit.binary "*" %27, %28 : (index, index) -> index
          %30 = cemit.literal 4 : index
          %31 = cemit.binary "+" %29, %30 : (index, index) -> index
          cemit.decl "v3" = %31 const : index
          %32 = cemit.literal 3 : index
          %33 = cemit.ref "v3" : index
          %34 = cemit.binary "<" %32, %33 : (index, index) -> i1
          %35 = cemit.literal 3 : index
          %36 = cemit.ref "v3" : index
          %37 = cemit.cond %34, %35, %36 : (i1, index, index) -> index
          cemit.decl "v4" = %37 const : index
          %38 = cemit.literal 0 : i32
          cemit.decl "acc" = %38 : i32
          %39 = cemit.literal 0 : index
          %40 = cemit.ref "v" : index
          %41 = cemit.binary ">" %39, %40 : (index, index) -> i1
          %42 = cemit.literal 0 : index
          %43 = cemit.ref "v" : index
          %44 = cemit.cond %41, %42, %43 : (i1, index, index) -> index
          cemit.decl "v5" = %44 const : index
          %45 = cemit.ref "v5" : index
          %46 = cemit.literal 3 : index
          %47 = cemit.ref "v0" : index
          %48 = cemit.binary "<" %46, %47 : (index, index) -> i1
          %49 = cemit.literal 3 : index
          %50 = cemit.ref "v0" : index
          %51 = cemit.cond %48, %49, %50 : (i1, index, index) -> index
          cemit.decl "v6" = %51 const : index
          %52 = cemit.ref "v6" : index
          cemit.for "i2" = %45 to %52 : index, index {
            %53 = cemit.ref "acc" : i32
            cemit.decl "acc0" = %53 : i32
            %54 = cemit.ref "v2" : index
            %55 = cemit.literal 3 : index
            %56 = cemit.binary "*" %54, %55 : (index, index) -> index
            cemit.decl "v7" = %56 const : index
            %57 = cemit.ref "v7" : index
            %58 = cemit.ref "v4" : index
            %59 = cemit.literal 3 : index
            %60 = cemit.binary "*" %58, %59 : (index, index) -> index
            cemit.decl "v8" = %60 const : index
            %61 = cemit.ref "v8" : index
            cemit.for "i3" = %57 to %61 : index, index {
              %62 = cemit.ref "acc0" : i32
              %63 = cemit.cast %62 : i32 to ui32
              %64 = cemit.ref "i" : index
              %65 = cemit.literal 9 : index
              %66 = cemit.binary "*" %64, %65 : (index, index) -> index
              %67 = cemit.ref "i2" : index
              %68 = cemit.literal 9 : index
              %69 = cemit.binary "*" %67, %68 : (index, index) -> index
              %70 = cemit.binary "+" %66, %69 : (index, index) -> index
              %71 = cemit.ref "i0" : index
              %72 = cemit.literal 3 : index
              %73 = cemit.binary "*" %71, %72 : (index, index) -> index
              %74 = cemit.binary "+" %70, %73 : (index, index) -> index
              %75 = cemit.ref "i3" : index
              %76 = cemit.binary "+" %74, %75 : (index, index) -> index
              %77 = cemit.literal -12 : index
              %78 = cemit.binary "+" %76, %77 : (index, index) -> index
              %79 = cemit.load "x"[%78] : index -> i16
              %80 = cemit.cast %79 : i16 to i32
              %81 = cemit.ref "i1" : index
              %82 = cemit.literal 27 : index
              %83 = cemit.binary "*" %81, %82 : (index, index) -> index
              %84 = cemit.ref "i2" : index
              %85 = cemit.literal 9 : index
              %86 = cemit.binary "*" %84, %85 : (index, index) -> index
              %87 = cemit.binary "+" %83, %86 : (index, index) -> index
              %88 = cemit.ref "i3" : index
              %89 = cemit.binary "+" %87, %88 : (index, index) -> index
              %90 = cemit.load "p_F_t"[%89] flash : index -> i16
              %91 = cemit.cast %90 : i16 to i32
              %92 = cemit.binary "*" %80, %91 : (i32, i32) -> i32
              %93 = cemit.cast %92 : i32 to ui32
              %94 = cemit.binary "+" %63, %93 : (ui32, ui32) -> ui32
              %95 = cemit.cast %94 : ui32 to i32
              cemit.assign "acc0" = %95 : i32
            }
            %96 = cemit.ref "acc0" : i32
            cemit.assign "acc" = %96 : i32
          }
          %97 = cemit.ref "acc" : i32
          %98 = cemit.ref "acc" : i32
          %99 = cemit.literal 31 : i32
          %100 = cemit.binary ">>" %98, %99 : (i32, i32) -> i32
          %101 = cemit.literal 16383 : i32
          %102 = cemit.binary "&" %100, %101 : (i32, i32) -> i32
          %103 = cemit.binary "+" %97, %102 : (i32, i32) -> i32
          %104 = cemit.literal 14 : i32
          %105 = cemit.binary ">>" %103, %104 : (i32, i32) -> i32
          %106 = cemit.cast %105 : i32 to i16
          %107 = cemit.ref "i" : index
          %108 = cemit.literal 6 : index
          %109 = cemit.binary "*" %107, %108 : (index, index) -> index
          %110 = cemit.ref "i0" : index
          %111 = cemit.literal 2 : index
          %112 = cemit.binary "*" %110, %111 : (index, index) -> index
          %113 = cemit.binary "+" %109, %112 : (index, index) -> index
          %114 = cemit.ref "i1" : index
          %115 = cemit.binary "+" %113, %114 : (index, index) -> index
          cemit.store %106, "minun_scratch.i16"[%115] : i16, index
        }
      }
    }
    %116 = cemit.literal 0 : index
    %117 = cemit.literal 2 : index
    cemit.for "i4" = %116 to %117 : index, index {
      %118 = cemit.literal 0 : i32
      cemit.decl "acc1" = %118 : i32
      %119 = cemit.literal 0 : index
      %120 = cemit.literal 18 : index
      cemit.for "i5" = %119 to %120 : index, index {
        %121 = cemit.ref "acc1" : i32
        %122 = cemit.cast %121 : i32 to ui32
        %123 = cemit.ref "i5" : index
        %124 = cemit.load "minun_scratch.i16"[%123] : index -> i16
        %125 = cemit.cast %124 : i16 to i32
        %126 = cemit.ref "i4" : index
        %127 = cemit.literal 18 : index
        %128 = cemit.binary "*" %126, %127 : (index, index) -> index
        %129 = cemit.ref "i5" : index
        %130 = cemit.binary "+" %128, %129 : (index, index) -> index
        %131 = cemit.load "p_W_t"[%130] flash : index -> i16
        %132 = cemit.cast %131 : i16 to i32
        %133 = cemit.binary "*" %125, %132 : (i32, i32) -> i32
        %134 = cemit.cast %133 : i32 to ui32
        %135 = cemit.binary "+" %122, %134 : (ui32, ui32) -> ui32
        %136 = cemit.cast %135 : ui32 to i32
        cemit.assign "acc1" = %136 : i32
      }
      %137 = cemit.ref "acc1" : i32
      %138 = cemit.ref "acc1" : i32
      %139 = cemit.literal 31 : i32
      %140 = cemit.binary ">>" %138, %139 : (i32, i32) -> i32
      %141 = cemit.literal 16383 : i32
      %142 = cemit.binary "&" %140, %141 : (i32, i32) -> i32
      %143 = cemit.binary "+" %137, %142 : (i32, i32) -> i32
      %144 = cemit.literal 14 : i32
      %145 = cemit.binary ">>" %143, %144 : (i32, i32) -> i32
      %146 = cemit.cast %145 : i32 to i16
      %147 = cemit.ref "i4" : index
      cemit.store %146, "minun_scratch.i16"[%147] : i16, index
    }
    %148 = cemit.literal 0 : index
    cemit.decl "acc2" = %148 : index
    %149 = cemit.literal 0 : index
    %150 = cemit.load "out"[%149] : index -> i16
    cemit.decl "acc3" = %150 : i16
    %151 = cemit.literal 1 : index
    %152 = cemit.literal 2 : index
    cemit.for "i6" = %151 to %152 : index, index {
      %153 = cemit.ref "i6" : index
      %154 = cemit.load "out"[%153] : index -> i16
      cemit.decl "v9" = %154 const : i16
      %155 = cemit.ref "v9" : i16
      %156 = cemit.ref "acc3" : i16
      %157 = cemit.binary ">" %155, %156 : (i16, i16) -> i1
      cemit.decl "v10" = %157 const : i1
      %158 = cemit.ref "v10" : i1
      %159 = cemit.ref "i6" : index
      %160 = cemit.ref "acc2" : index
      %161 = cemit.cond %158, %159, %160 : (i1, index, index) -> index
      cemit.decl "acc2_next" = %161 const : index
      %162 = cemit.ref "v10" : i1
      %163 = cemit.ref "v9" : i16
      %164 = cemit.ref "acc3" : i16
      %165 = cemit.cond %162, %163, %164 : (i1, i16, i16) -> i16
      cemit.decl "acc3_next" = %165 const : i16
      %166 = cemit.ref "acc2_next" : index
      cemit.assign "acc2" = %166 : index
      %167 = cemit.ref "acc3_next" : i16
      cemit.assign "acc3" = %167 : i16
    }
    %168 = cemit.ref "acc2" : index
    %169 = cemit.cast %168 : index to i32
    cemit.return %169 : i32
  }
}

