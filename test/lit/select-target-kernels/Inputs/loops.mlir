// Loops for select-target-kernels (one function each; the tests run the pass on it).

// dot16: int16 x int16 into int32, stride 1, W in flash
cemit.func "dot16"("const int16_t *x") -> i32 {
  %z = cemit.literal 0 : i32
  cemit.decl "acc" = %z : i32
  %lo = cemit.literal 0 : index
  %hi = cemit.literal 16 : index
  cemit.for "i" = %lo to %hi : index, index {
    %a = cemit.ref "acc" : i32
    %ia = cemit.ref "i" : index
    %w = cemit.load "W"[%ia] flash : index -> i16
    %i3 = cemit.ref "i" : index
    %off = cemit.ref "k" : index
    %ib = cemit.binary "+" %off, %i3 : (index, index) -> index
    %xv = cemit.load "x"[%ib] : index -> i16
    %wc = cemit.cast %w : i16 to i32
    %xc = cemit.cast %xv : i16 to i32
    %p = cemit.binary "*" %wc, %xc : (i32, i32) -> i32
    %s = cemit.binary "+" %a, %p : (i32, i32) -> i32
    cemit.assign "acc" = %s : i32
  }
  %r = cemit.ref "acc" : i32
  cemit.return %r : i32
}

// strided: W read at stride 2
cemit.func "strided"("const int16_t *x") -> i32 {
  %z = cemit.literal 0 : i32
  cemit.decl "acc" = %z : i32
  %lo = cemit.literal 0 : index
  %hi = cemit.literal 16 : index
  cemit.for "i" = %lo to %hi : index, index {
    %a = cemit.ref "acc" : i32
    %i2 = cemit.ref "i" : index
    %two = cemit.literal 2 : index
    %ia = cemit.binary "*" %i2, %two : (index, index) -> index
    %w = cemit.load "W"[%ia] flash : index -> i16
    %ib = cemit.ref "i" : index
    %xv = cemit.load "x"[%ib] : index -> i16
    %wc = cemit.cast %w : i16 to i32
    %xc = cemit.cast %xv : i16 to i32
    %p = cemit.binary "*" %wc, %xc : (i32, i32) -> i32
    %s = cemit.binary "+" %a, %p : (i32, i32) -> i32
    cemit.assign "acc" = %s : i32
  }
  %r = cemit.ref "acc" : i32
  cemit.return %r : i32
}

// twoflash: both arrays in program memory
cemit.func "twoflash"("const int16_t *x") -> i32 {
  %z = cemit.literal 0 : i32
  cemit.decl "acc" = %z : i32
  %lo = cemit.literal 0 : index
  %hi = cemit.literal 16 : index
  cemit.for "i" = %lo to %hi : index, index {
    %a = cemit.ref "acc" : i32
    %ia = cemit.ref "i" : index
    %w = cemit.load "W"[%ia] flash : index -> i16
    %ib = cemit.ref "i" : index
    %xv = cemit.load "x"[%ib] flash : index -> i16
    %wc = cemit.cast %w : i16 to i32
    %xc = cemit.cast %xv : i16 to i32
    %p = cemit.binary "*" %wc, %xc : (i32, i32) -> i32
    %s = cemit.binary "+" %a, %p : (i32, i32) -> i32
    cemit.assign "acc" = %s : i32
  }
  %r = cemit.ref "acc" : i32
  cemit.return %r : i32
}

// float: a float dot product
cemit.func "float"("const float *x") -> f32 {
  %z = cemit.literal 0.0 : f32
  cemit.decl "acc" = %z : f32
  %lo = cemit.literal 0 : index
  %hi = cemit.literal 16 : index
  cemit.for "i" = %lo to %hi : index, index {
    %a = cemit.ref "acc" : f32
    %ia = cemit.ref "i" : index
    %w = cemit.load "W"[%ia] flash : index -> f32
    %ib = cemit.ref "i" : index
    %xv = cemit.load "x"[%ib] : index -> f32
    %wc = cemit.cast %w : f32 to f32
    %xc = cemit.cast %xv : f32 to f32
    %p = cemit.binary "*" %wc, %xc : (f32, f32) -> f32
    %s = cemit.binary "+" %a, %p : (f32, f32) -> f32
    cemit.assign "acc" = %s : f32
  }
  %r = cemit.ref "acc" : f32
  cemit.return %r : f32
}

// wide: int32 arrays
cemit.func "wide"("const int32_t *x") -> i32 {
  %z = cemit.literal 0 : i32
  cemit.decl "acc" = %z : i32
  %lo = cemit.literal 0 : index
  %hi = cemit.literal 16 : index
  cemit.for "i" = %lo to %hi : index, index {
    %a = cemit.ref "acc" : i32
    %ia = cemit.ref "i" : index
    %w = cemit.load "W"[%ia] flash : index -> i32
    %ib = cemit.ref "i" : index
    %xv = cemit.load "x"[%ib] : index -> i32
    %wc = cemit.cast %w : i32 to i32
    %xc = cemit.cast %xv : i32 to i32
    %p = cemit.binary "*" %wc, %xc : (i32, i32) -> i32
    %s = cemit.binary "+" %a, %p : (i32, i32) -> i32
    cemit.assign "acc" = %s : i32
  }
  %r = cemit.ref "acc" : i32
  cemit.return %r : i32
}

// bounds: the trip count a variable
cemit.func "bounds"("const int16_t *x") -> i32 {
  %z = cemit.literal 0 : i32
  cemit.decl "acc" = %z : i32
  %lo = cemit.literal 0 : index
  %hi = cemit.ref "n" : index
  cemit.for "i" = %lo to %hi : index, index {
    %a = cemit.ref "acc" : i32
    %ia = cemit.ref "i" : index
    %w = cemit.load "W"[%ia] flash : index -> i16
    %ib = cemit.ref "i" : index
    %xv = cemit.load "x"[%ib] : index -> i16
    %wc = cemit.cast %w : i16 to i32
    %xc = cemit.cast %xv : i16 to i32
    %p = cemit.binary "*" %wc, %xc : (i32, i32) -> i32
    %s = cemit.binary "+" %a, %p : (i32, i32) -> i32
    cemit.assign "acc" = %s : i32
  }
  %r = cemit.ref "acc" : i32
  cemit.return %r : i32
}

// guarded: every product behind one test that does not change in the loop (padding)
cemit.func "guarded"("const int16_t *x") -> i32 {
  %z = cemit.literal 0 : i32
  cemit.decl "acc" = %z : i32
  %lo = cemit.literal 0 : index
  %hi = cemit.literal 3 : index
  cemit.for "c" = %lo to %hi : index, index {
    %r0 = cemit.literal 0 : i32
    cemit.decl "r" = %r0 : i32
    %in = cemit.ref "inside" : i1
    cemit.if %in : i1 {
      %c1 = cemit.ref "c" : index
      %w = cemit.load "W"[%c1] flash : index -> i16
      %wc = cemit.cast %w : i16 to i32
      %c2 = cemit.ref "c" : index
      %xv = cemit.load "x"[%c2] : index -> i16
      %xc = cemit.cast %xv : i16 to i32
      %p = cemit.binary "*" %wc, %xc : (i32, i32) -> i32
      cemit.assign "r" = %p : i32
    } else {
      %r1 = cemit.literal 0 : i32
      cemit.assign "r" = %r1 : i32
    }
    %a = cemit.ref "acc" : i32
    %rr = cemit.ref "r" : i32
    %s = cemit.binary "+" %a, %rr : (i32, i32) -> i32
    cemit.assign "acc" = %s : i32
  }
  %res = cemit.ref "acc" : i32
  cemit.return %res : i32
}

// varying: the test reads the loop variable, so it cannot move out of the loop
cemit.func "varying"("const int16_t *x") -> i32 {
  %z = cemit.literal 0 : i32
  cemit.decl "acc" = %z : i32
  %lo = cemit.literal 0 : index
  %hi = cemit.literal 3 : index
  cemit.for "c" = %lo to %hi : index, index {
    %r0 = cemit.literal 0 : i32
    cemit.decl "r" = %r0 : i32
    %c0 = cemit.ref "c" : index
    %one = cemit.literal 1 : index
    %in = cemit.binary ">" %c0, %one : (index, index) -> i1
    cemit.if %in : i1 {
      %c1 = cemit.ref "c" : index
      %w = cemit.load "W"[%c1] flash : index -> i16
      %wc = cemit.cast %w : i16 to i32
      %c2 = cemit.ref "c" : index
      %xv = cemit.load "x"[%c2] : index -> i16
      %xc = cemit.cast %xv : i16 to i32
      %p = cemit.binary "*" %wc, %xc : (i32, i32) -> i32
      cemit.assign "r" = %p : i32
    } else {
    }
    %a = cemit.ref "acc" : i32
    %rr = cemit.ref "r" : i32
    %s = cemit.binary "+" %a, %rr : (i32, i32) -> i32
    cemit.assign "acc" = %s : i32
  }
  %res = cemit.ref "acc" : i32
  cemit.return %res : i32
}

// rows: y[j] = (W row j) . x for j < 4, the dot products and their stores in one loop
cemit.func "rows"("const int16_t *x", "int32_t *y") -> !cemit.opaque<"void"> {
  %lo = cemit.literal 0 : index
  %hi = cemit.literal 4 : index
  cemit.for "j" = %lo to %hi : index, index {
    %z = cemit.literal 0 : i32
    cemit.decl "acc" = %z : i32
    %lo2 = cemit.literal 0 : index
    %hi2 = cemit.literal 8 : index
    cemit.for "i" = %lo2 to %hi2 : index, index {
      %a = cemit.ref "acc" : i32
      %j1 = cemit.ref "j" : index
      %eight = cemit.literal 8 : index
      %row = cemit.binary "*" %j1, %eight : (index, index) -> index
      %i1 = cemit.ref "i" : index
      %ia = cemit.binary "+" %row, %i1 : (index, index) -> index
      %w = cemit.load "W"[%ia] : index -> i16
      %wc = cemit.cast %w : i16 to i32
      %i2 = cemit.ref "i" : index
      %xv = cemit.load "x"[%i2] : index -> i16
      %xc = cemit.cast %xv : i16 to i32
      %p = cemit.binary "*" %wc, %xc : (i32, i32) -> i32
      %s = cemit.binary "+" %a, %p : (i32, i32) -> i32
      cemit.assign "acc" = %s : i32
    }
    %v = cemit.ref "acc" : i32
    %j2 = cemit.ref "j" : index
    cemit.store %v, "y"[%j2] : i32, index
  }
}

// rows_n: as rows for j < n, an unknown count
cemit.func "rows_n"("const int16_t *x", "int32_t *y") -> !cemit.opaque<"void"> {
  %lo = cemit.literal 0 : index
  %hi = cemit.ref "n" : index
  cemit.for "j" = %lo to %hi : index, index {
    %z = cemit.literal 0 : i32
    cemit.decl "acc" = %z : i32
    %lo2 = cemit.literal 0 : index
    %hi2 = cemit.literal 8 : index
    cemit.for "i" = %lo2 to %hi2 : index, index {
      %a = cemit.ref "acc" : i32
      %j1 = cemit.ref "j" : index
      %eight = cemit.literal 8 : index
      %row = cemit.binary "*" %j1, %eight : (index, index) -> index
      %i1 = cemit.ref "i" : index
      %ia = cemit.binary "+" %row, %i1 : (index, index) -> index
      %w = cemit.load "W"[%ia] : index -> i16
      %wc = cemit.cast %w : i16 to i32
      %i2 = cemit.ref "i" : index
      %xv = cemit.load "x"[%i2] : index -> i16
      %xc = cemit.cast %xv : i16 to i32
      %p = cemit.binary "*" %wc, %xc : (i32, i32) -> i32
      %s = cemit.binary "+" %a, %p : (i32, i32) -> i32
      cemit.assign "acc" = %s : i32
    }
    %v = cemit.ref "acc" : i32
    %j2 = cemit.ref "j" : index
    cemit.store %v, "y"[%j2] : i32, index
  }
}

// overlap: as rows, but the stores write x, which the next row's dot product reads
cemit.func "overlap"("int16_t *x") -> !cemit.opaque<"void"> {
  %lo = cemit.literal 0 : index
  %hi = cemit.literal 4 : index
  cemit.for "j" = %lo to %hi : index, index {
    %z = cemit.literal 0 : i32
    cemit.decl "acc" = %z : i32
    %lo2 = cemit.literal 0 : index
    %hi2 = cemit.literal 8 : index
    cemit.for "i" = %lo2 to %hi2 : index, index {
      %a = cemit.ref "acc" : i32
      %i0 = cemit.ref "i" : index
      %w = cemit.load "W"[%i0] : index -> i16
      %wc = cemit.cast %w : i16 to i32
      %i2 = cemit.ref "i" : index
      %xv = cemit.load "x"[%i2] : index -> i16
      %xc = cemit.cast %xv : i16 to i32
      %p = cemit.binary "*" %wc, %xc : (i32, i32) -> i32
      %s = cemit.binary "+" %a, %p : (i32, i32) -> i32
      cemit.assign "acc" = %s : i32
    }
    %v = cemit.ref "acc" : i32
    %vc = cemit.cast %v : i32 to i16
    %j2 = cemit.ref "j" : index
    cemit.store %vc, "x"[%j2] : i16, index
  }
}

// shifts: an int32 shifted right by 3 and by 8, and a 16 x 16 -> 32 product
cemit.func "shifts"("int32_t v", "int16_t a", "int16_t b") -> i32 {
  %v = cemit.ref "v" : i32
  %three = cemit.literal 3 : i32
  %s3 = cemit.binary ">>" %v, %three : (i32, i32) -> i32
  cemit.decl "p" = %s3 const : i32
  %v2 = cemit.ref "v" : i32
  %eight = cemit.literal 8 : i32
  %s8 = cemit.binary ">>" %v2, %eight : (i32, i32) -> i32
  cemit.decl "q" = %s8 const : i32
  %a = cemit.ref "a" : i16
  %ac = cemit.cast %a : i16 to i32
  %b = cemit.ref "b" : i16
  %bc = cemit.cast %b : i16 to i32
  %m = cemit.binary "*" %ac, %bc : (i32, i32) -> i32
  cemit.return %m : i32
}
