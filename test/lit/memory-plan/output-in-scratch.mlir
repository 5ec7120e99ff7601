// output-in-scratch=true: the output %out becomes a planned buffer `%output` that the
// caller reads after the call, so it is live from its first write to the function's last
// op. %a dies before that write and shares the output's bytes (output at 8..16 inside a's
// 0..16); %b is written again after the output's last read here, so it is live with the
// output and gets other bytes (0..8). 16 bytes hold every buffer and the output; without
// the option the 8-byte output is a caller array beside the 16-byte scratch (24 bytes).
// RUN: minun-opt %s -p 'memory-plan{output-in-scratch=true}' | filecheck %s
// RUN: minun-opt %s -p 'memory-plan{output-in-scratch=true planner=shiftry}' | filecheck %s
// RUN: minun-opt %s -p 'memory-plan{output-in-scratch=true planner=optimal}' | filecheck %s
// RUN: minun-opt %s -p 'memory-plan' | filecheck %s --check-prefix=OFF
// RUN: minun-opt %s -p 'memory-plan{output-in-scratch=true planner=naive}' | filecheck %s --check-prefix=NAIVE
// RUN: minun-opt %s -p 'memory-plan{output-in-scratch=true},lower-to-emitc' -t 'c{profile=x86 file=source}' | filecheck %s --check-prefix=C
// RUN: minun-opt %s -p 'memory-plan{output-in-scratch=true input-in-scratch=true},lower-to-emitc' -t 'c{profile=x86 file=source}' | filecheck %s --check-prefix=BOTH
// RUN: minun-opt %s -p 'memory-plan{output-in-scratch=true},lower-to-emitc' -t 'c{profile=x86 file=header}' | filecheck %s --check-prefix=H

func.func @minun_predict(%x: memref<8xi8>, %out: memref<4xi16>) -> i32 attributes {minun.input_encoding = !num.fixed<8, 4>, minun.output_encoding = !num.fixed<16, 8>} {
  %a = memref.alloc() : memref<8xi16>
  %b = memref.alloc() : memref<4xi16>
  %i0 = arith.constant 0 : index
  %v = memref.load %x[%i0] : memref<8xi8>
  %w = arith.extsi %v : i8 to i16
  memref.store %w, %a[%i0] : memref<8xi16>
  %u = memref.load %a[%i0] : memref<8xi16>
  memref.store %u, %b[%i0] : memref<4xi16>
  %t = memref.load %b[%i0] : memref<4xi16>
  memref.store %t, %out[%i0] : memref<4xi16>
  %y = memref.load %out[%i0] : memref<4xi16>
  %k = arith.constant 7 : i16
  memref.store %k, %b[%i0] : memref<4xi16>
  %r = arith.extsi %y : i16 to i32
  func.return %r : i32
}
// CHECK:      "memref.global"() <{sym_name = "minun_scratch", type = memref<16xi8>
// CHECK:      func.func @minun_predict(%x: memref<8xi8>, %out: memref<4xi16>) -> i32 attributes {{{.*}}minun.output_in_scratch{{.*}}minun.scratch_bytes = 16 : i64} {
// CHECK-NEXT:   %minun_scratch = memref.get_global @minun_scratch : memref<16xi8>
// CHECK-NEXT:   %[[O8:.*]] = arith.constant 8 : index
// CHECK-NEXT:   %output = memref.view %minun_scratch[%[[O8]]][] {minun.output} : memref<16xi8> to memref<4xi16>
// CHECK-NEXT:   %[[O0:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %a = memref.view %minun_scratch[%[[O0]]][] : memref<16xi8> to memref<8xi16>
// CHECK-NEXT:   %[[O0b:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %b = memref.view %minun_scratch[%[[O0b]]][] : memref<16xi8> to memref<4xi16>
// CHECK:        memref.store %t, %output[%i0] : memref<4xi16>
// CHECK-NOT:    %out[

// OFF:        type = memref<16xi8>
// OFF-NOT:    {minun.output}
// OFF:        memref.store %t, %out[%i0] : memref<4xi16>

// NAIVE:      %output = memref.alloc() {minun.output} : memref<4xi16>

// C:          int minun_predict_in_place(const minun_input_t *x)
// C:              minun_scratch.i16[(0 + 4)] = minun_scratch.i16[0];
// C:          minun_output_t *minun_output_buffer(void)
// C-NEXT:     {
// C-NEXT:         return (minun_output_t *)&minun_scratch.i16[4];
// C-NEXT:     }
// C:          int minun_predict(const minun_input_t *x, minun_output_t *out)
// C:              label = minun_predict_in_place(x);
// C:          int minun_predict_float(const float *x, float *scores)
// C-NEXT:     {
// C-NEXT:         minun_input_t q[MINUN_INPUT_SIZE];
// C-NEXT:         const minun_output_t *s = minun_output_buffer();
// C:              label = minun_predict_in_place(q);

// BOTH:       int minun_predict_in_place(void)
// BOTH:       minun_input_t *minun_input_buffer(void)
// BOTH:       minun_output_t *minun_output_buffer(void)
// BOTH:       label = minun_predict_in_place();

// H:          int minun_predict(const minun_input_t *x, minun_output_t *out);
// H-NOT:      MINUN_INPUT_IN_SCRATCH
// H:          #define MINUN_OUTPUT_IN_SCRATCH 1
// H-NEXT:     minun_output_t *minun_output_buffer(void);
// H-NEXT:     int minun_predict_in_place(const minun_input_t *x);
