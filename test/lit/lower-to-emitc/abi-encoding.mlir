// The C interface's contract: minun.input_encoding / minun.output_encoding are the L2
// element types of the input and output (typed, not strings), and each must be stored
// as the C type of its buffer; model.h's scales come from them.
// RUN: minun-opt %s -p lower-to-emitc -t 'c{file=header}' | filecheck %s
// RUN: sed 's/!num.fixed<16, 14>/!num.fixed<8, 4>/' %s | not minun-opt -p lower-to-emitc 2>&1 | filecheck %s --check-prefix=BAD

func.func @minun_predict(%x: memref<4xi16>, %out: memref<4xi16>) -> i32 attributes {minun.input_encoding = !num.fixed<16, 14>, minun.output_encoding = !num.fixed<16, 12>} {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xi16>
  memref.store %v, %out[%c0] : memref<4xi16>
  %l = arith.constant 0 : i32
  func.return %l : i32
}

// CHECK:      #define MINUN_INPUT_SCALE 14
// CHECK-NEXT: #define MINUN_OUTPUT_SCALE 12
// BAD: error: minun_predict: the input encoding !num.fixed<8, 4> is not stored as i16 (minun.input_type)
