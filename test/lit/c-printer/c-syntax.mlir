// C spelling (lowering/c_syntax.py): an integer literal takes the suffix whose C type
// holds it on every target (int is 16 bits on AVR: 40000 needs L), the most negative
// value of a width is spelled (min + 1 - 1) because -32768 would be the negation of a
// too-wide 32768; a float constant is the shortest decimal that reads back as the same
// float32 (0.1f, not 0.100000001f).
// RUN: minun-opt %s -p lower-to-emitc -t 'c{file=source}' | filecheck %s

"memref.global"() <{sym_name = "p_I", type = memref<5xi32>, initial_value = dense<[-32768, 32767, 40000, -2147483648, -7]> : tensor<5xi32>, sym_visibility = "private", constant}> : () -> ()
"memref.global"() <{sym_name = "p_L", type = memref<2xi64>, initial_value = dense<[-9223372036854775808, 5000000000]> : tensor<2xi64>, sym_visibility = "private", constant}> : () -> ()
"memref.global"() <{sym_name = "p_F", type = memref<3xf32>, initial_value = dense<[0.1, 3.0, 1.0e+30]> : tensor<3xf32>, sym_visibility = "private", constant}> : () -> ()
func.func @minun_predict(%x: memref<4xi32>, %out: memref<4xi32>) -> i32 attributes {minun.input_encoding = !num.fixed<32, 0>, minun.output_encoding = !num.fixed<32, 0>} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %i = memref.get_global @p_I : memref<5xi32>
  %l = memref.get_global @p_L : memref<2xi64>
  %f = memref.get_global @p_F : memref<3xf32>
  %a = memref.load %i[%c3] : memref<5xi32>
  %b = memref.load %l[%c0] : memref<2xi64>
  %g = memref.load %f[%c0] : memref<3xf32>
  %bt = arith.trunci %b : i64 to i32
  %s = arith.addi %a, %bt : i32
  %t = arith.addi %s, %s : i32
  %m = arith.constant -2147483648 : i32
  %u = arith.addi %t, %m : i32
  memref.store %u, %out[%c0] : memref<4xi32>
  %r = arith.constant 0 : i32
  func.return %r : i32
}

// CHECK:      static const int32_t p_I[5] = {
// CHECK-NEXT:     (-32767 - 1), 32767, 40000L, (-2147483647L - 1), -7,
// CHECK:      static const int64_t p_L[2] = {
// CHECK-NEXT:     (-9223372036854775807LL - 1), 5000000000LL,
// CHECK:      static const float p_F[3] = {
// CHECK-NEXT:     0.1f, 3.0f, 1e+30f,
// CHECK:      (uint32_t)(-2147483647L - 1)
