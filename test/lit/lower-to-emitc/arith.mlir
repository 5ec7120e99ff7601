// L3 -> L4: exact (nsw) integer ops stay plain C operators; wrapping ones are done in an
// unsigned type at least as wide as int (`unsigned` for 16 bits: modular on AVR too)
// and cast back; exact left shifts become multiplications; a value used twice is a
// `const` variable, one used once is printed inside its user.
// RUN: minun-opt %s -p lower-to-emitc | filecheck %s

"memref.global"() <{sym_name = "p_W", type = memref<4xi16>, initial_value = dense<[1, -2, 3, -4]> : tensor<4xi16>, sym_visibility = "private", constant}> : () -> ()
func.func @minun_predict(%x: memref<4xi16>, %out: memref<4xi16>) -> i32 attributes {minun.input_encoding = !num.fixed<16, 14>, minun.output_encoding = !num.fixed<16, 12>} {
  %w = memref.get_global @p_W : memref<4xi16>
  %buf = memref.alloc() : memref<4xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2 : i32
  scf.for %i = %c0 to %c4 step %c1 {
    %a = memref.load %x[%i] : memref<4xi16>
    %b = memref.load %w[%i] : memref<4xi16>
    %wrapped = arith.addi %a, %b : i16
    %ae = arith.extsi %a : i16 to i32
    %be = arith.extsi %wrapped : i16 to i32
    %p = arith.muli %ae, %be overflow<nsw> : i32
    %s = arith.shli %p, %two overflow<nsw> : i32
    %m = arith.maxsi %s, %p : i32
    memref.store %m, %buf[%i] : memref<4xi32>
  }
  %acc = scf.for %j = %c0 to %c4 step %c1 iter_args(%t = %c0) -> (index) {
    %n = arith.addi %t, %j overflow<nsw> : index
    scf.yield %n : index
  }
  %l = arith.index_cast %acc : index to i32
  func.return %l : i32
}
// CHECK:      cemit.include "model.h"
// CHECK-NEXT: cemit.include "minun_runtime.h"
// CHECK-NEXT: cemit.global "p_W" : i16[4] const flash = dense<[1, -2, 3, -4]> : tensor<4xi16>
// CHECK-NEXT: cemit.global "t_buf" : i32[4]
// CHECK-NEXT: cemit.func "minun_predict"("const minun_input_t *x", "minun_output_t *out") -> !cemit.opaque<"int">
// CHECK:        cemit.for "i" = %{{.*}} to %{{.*}} : index, index {
// %a is used twice: a variable
// CHECK:          %[[XA:.*]] = cemit.load "x"[%{{.*}}] : index -> i16
// CHECK-NEXT:     cemit.decl "a" = %[[XA]] const : i16
// the wrapping 16-bit add: (int16_t)((unsigned)a + (unsigned)b), b read from flash
// CHECK:          %[[A1:.*]] = cemit.ref "a" : i16
// CHECK-NEXT:     cemit.cast %[[A1]] : i16 to i32
// CHECK-NEXT:     %[[A2:.*]] = cemit.ref "a" : i16
// CHECK-NEXT:     %[[UA:.*]] = cemit.cast %[[A2]] : i16 to !cemit.opaque<"unsigned">
// CHECK:          %[[WB:.*]] = cemit.load "p_W"[%{{.*}}] flash : index -> i16
// CHECK-NEXT:     %[[UB:.*]] = cemit.cast %[[WB]] : i16 to !cemit.opaque<"unsigned">
// CHECK-NEXT:     %[[SUM:.*]] = cemit.binary "+" %[[UA]], %[[UB]] : (!cemit.opaque<"unsigned">, !cemit.opaque<"unsigned">) -> !cemit.opaque<"unsigned">
// CHECK-NEXT:     cemit.cast %[[SUM]] : !cemit.opaque<"unsigned"> to i16
// the exact product is a plain multiplication, bound because maxsi reads it twice
// CHECK:          cemit.binary "*" %{{.*}}, %{{.*}} : (i32, i32) -> i32
// CHECK-NEXT:     cemit.decl "p" = %{{.*}} const : i32
// x << 2 (exact) is x * 4
// CHECK:          %[[FOUR:.*]] = cemit.literal 4 : i32
// CHECK-NEXT:     cemit.binary "*" %{{.*}}, %[[FOUR]] : (i32, i32) -> i32
// CHECK:          cemit.cond
// CHECK:          cemit.store %{{.*}}, "t_buf"[%{{.*}}] : i32, index
// the loop-carried index: a variable declared before the loop, assigned at its end
// CHECK:        cemit.decl "t" = %{{.*}} : index
// CHECK:        cemit.for "j" = %{{.*}} to %{{.*}} : index, index {
// CHECK:          cemit.assign "t" = %{{.*}} : index
// CHECK:        %[[R:.*]] = cemit.ref "t" : index
// CHECK-NEXT:   %[[L:.*]] = cemit.cast %[[R]] : index to i32
// CHECK-NEXT:   cemit.return %[[L]] : i32
