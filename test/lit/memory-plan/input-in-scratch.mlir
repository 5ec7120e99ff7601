// input-in-scratch=true: the input %x becomes a planned buffer `%input` that the caller
// fills before the call, live from the function's first op to its last read. %c lives
// only before x's first read, yet cannot share x's bytes (the caller wrote them); %a is
// written after x's last read and takes x's bytes (offset 0), as does %b after %a.
// 16 bytes hold the input and every buffer; without the option the 8-byte input is
// outside the 16-byte scratch (24 bytes in all).
// RUN: minun-opt %s -p 'memory-plan{input-in-scratch=true}' | filecheck %s
// RUN: minun-opt %s -p 'memory-plan' | filecheck %s --check-prefix=OFF
// RUN: minun-opt %s -p 'memory-plan{input-in-scratch=true planner=naive}' | filecheck %s --check-prefix=NAIVE
// RUN: not minun-opt %s -p 'memory-plan{input-in-scratch=true budget=12}' 2>&1 | filecheck %s --check-prefix=BUDGET
// RUN: minun-opt %s -p 'memory-plan{input-in-scratch=true planner=shiftry}' | filecheck %s --check-prefix=SHIFTRY
// RUN: minun-opt %s -p 'memory-plan{input-in-scratch=true planner=optimal}' | filecheck %s --check-prefix=OPT
// RUN: minun-opt %s -p 'memory-plan{input-in-scratch=true},lower-to-emitc' -t 'c{profile=x86 file=source}' | filecheck %s --check-prefix=C
// RUN: minun-opt %s -p 'memory-plan{input-in-scratch=true planner=naive},lower-to-emitc' -t 'c{profile=x86 file=source}' | filecheck %s --check-prefix=NAIVEC
// RUN: minun-opt %s -p 'memory-plan{input-in-scratch=true},lower-to-emitc' -t 'c{profile=x86 file=header}' | filecheck %s --check-prefix=H

func.func @minun_predict(%x: memref<8xi8>, %out: memref<8xi16>) -> i32 attributes {minun.input_encoding = !num.fixed<8, 4>, minun.output_encoding = !num.fixed<16, 8>} {
  %c = memref.alloc() : memref<4xi16>
  %a = memref.alloc() : memref<8xi16>
  %b = memref.alloc() : memref<8xi16>
  %i0 = arith.constant 0 : index
  %k = arith.constant 3 : i16
  memref.store %k, %c[%i0] : memref<4xi16>
  %kk = memref.load %c[%i0] : memref<4xi16>
  %v = memref.load %x[%i0] : memref<8xi8>
  %w = arith.extsi %v : i8 to i16
  %s = arith.addi %w, %kk : i16
  memref.store %s, %a[%i0] : memref<8xi16>
  %u = memref.load %a[%i0] : memref<8xi16>
  memref.store %u, %b[%i0] : memref<8xi16>
  %t = memref.load %b[%i0] : memref<8xi16>
  memref.store %t, %out[%i0] : memref<8xi16>
  %r = arith.constant 0 : i32
  func.return %r : i32
}
// CHECK:      "memref.global"() <{sym_name = "minun_scratch", type = memref<16xi8>
// CHECK:      func.func @minun_predict(%x: memref<8xi8>, %out: memref<8xi16>) -> i32 attributes {{{.*}}minun.input_in_scratch{{.*}}minun.scratch_bytes = 16 : i64} {
// CHECK-NEXT:   %minun_scratch = memref.get_global @minun_scratch : memref<16xi8>
// CHECK-NEXT:   %[[O0:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %input = memref.view %minun_scratch[%[[O0]]][] {minun.input} : memref<16xi8> to memref<8xi8>
// CHECK-NEXT:   %[[O8:.*]] = arith.constant 8 : index
// CHECK-NEXT:   %c = memref.view %minun_scratch[%[[O8]]][] : memref<16xi8> to memref<4xi16>
// CHECK-NEXT:   %[[O0a:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %a = memref.view %minun_scratch[%[[O0a]]][] : memref<16xi8> to memref<8xi16>
// CHECK-NEXT:   %[[O0b:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %b = memref.view %minun_scratch[%[[O0b]]][] : memref<16xi8> to memref<8xi16>
// CHECK:        %v = memref.load %input[%i0] : memref<8xi8>
// CHECK-NOT:    memref.load %x

// OFF:        type = memref<16xi8>
// OFF-NOT:    {minun.input}
// OFF:        %v = memref.load %x[%i0] : memref<8xi8>

// The budget counts the input while it is live (c 8 B + input 8 B before x's first read)
// BUDGET:     error: model needs 16 bytes of RAM at instruction {{[0-9]+}} (live: input 8 B, c 8 B); budget 12

// NAIVE:      %input = memref.alloc() {minun.input} : memref<8xi8>
// NAIVEC:     static int8_t t_input[8];
// NAIVEC:     return (minun_input_t *)&t_input[0];

// SHIFTRY:    %input = memref.view %minun_scratch[%{{.*}}][] {minun.input} : memref<{{[0-9]+}}xi8> to memref<8xi8>
// OPT:        type = memref<16xi8>
// OPT:        %input = memref.view %minun_scratch[%{{.*}}][] {minun.input} : memref<16xi8> to memref<8xi8>

// C:          int minun_predict_in_place(minun_output_t *out)
// C:          minun_input_t *minun_input_buffer(void)
// C-NEXT:     {
// C-NEXT:         return (minun_input_t *)&minun_scratch.i8[0];
// C-NEXT:     }
// C:          int minun_predict(const minun_input_t *x, minun_output_t *out)
// C:              return minun_predict_in_place(out);
// C:          int minun_predict_float(const float *x, float *scores)
// C-NEXT:     {
// C-NEXT:         minun_input_t *q = minun_input_buffer();
// C:              label = minun_predict_in_place(s);

// H:          typedef int8_t minun_input_t;
// H:          int minun_predict(const minun_input_t *x, minun_output_t *out);
// H:          #define MINUN_INPUT_IN_SCRATCH 1
// H-NEXT:     minun_input_t *minun_input_buffer(void);
// H-NEXT:     int minun_predict_in_place(minun_output_t *out);
