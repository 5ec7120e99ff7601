// lower-to-loops{requantize-tables=true} (what minun-compile sets for the avr target, where
// a 32x32-bit product costs ~200 cycles) turns a zero-skew requantization of an int8
// value run often (here 256 times) into a load from the table of its 256 results; by
// default (the Cortex-M and x86 targets, where the product is a few instructions) it stays
// the minun_zs_mbqm call and no table takes flash.
// RUN: minun-opt %s -p 'lower-to-loops{requantize-tables=true}' | filecheck %s --check-prefix=TABLE
// RUN: minun-opt %s -p lower-to-loops | filecheck %s --check-prefix=CALL

func.func @main() -> i32 {
  %x = num.input "X" : tensor<256x!num.affine<8, 0.5, 5>>
  %r = num.requantize %x {multiplier = 1073741824 : i64, shift = 0 : i64, left_shift = 20 : i64} : tensor<256x!num.affine<8, 0.5, 5>> -> tensor<256x!num.affine<32, 9.5367431640625e-07, 0>>
  %a = num.argmax %r : tensor<256x!num.affine<32, 9.5367431640625e-07, 0>>
  func.return %a : i32
}
// TABLE:     memref.global{{.*}}"zs_rq_table{{[^"]*}}"{{.*}}tensor<256xi32>
// TABLE:     func.func @minun_predict
// TABLE-NOT: func.call @minun_zs_mbqm
// CALL-NOT:  zs_rq_table
// CALL:      func.func @minun_predict
// CALL:      func.call @minun_zs_mbqm
