// Softmax and L2 normalisation of posits and bfloat16, row by row along the last axis.
// Posits: normalise_l2 sums the squares in a quire (fma(x, x)), rounds once, takes the
// runtime's sqrt and divides each x by it, 0 where the norm is 0; softmax takes the row's
// integer max, stores exp(x - max) while the quire adds exp * 1 (1.0 in posit<16, 1> is
// 0 10 0 0...0 = 0x4000 = 16384), then divides each by the rounded sum.
// bfloat16: the same steps with float32 sums (from 0.0, in order) and the minun_bf16_*
// helpers (each rounded to bfloat16), sqrtf inside minun_bf16_sqrt.
// RUN: minun-opt %s -p lower-to-loops | filecheck %s
// RUN: sed 's/!num.posit<16, 1>/bf16/g' %s | minun-opt -p lower-to-loops | filecheck %s --check-prefix=BF16

func.func @main() -> tensor<4x3x!num.posit<16, 1>> attributes {num.rounding = "nearest"} {
  %x = num.input "X" : tensor<1x2x2x3x!num.posit<16, 1>>
  %n = num.normalise_l2 %x : tensor<1x2x2x3x!num.posit<16, 1>> -> tensor<1x2x2x3x!num.posit<16, 1>>
  %r = minun.reshape %n {order = array<i64: 0, 1, 2, 3>} : tensor<1x2x2x3x!num.posit<16, 1>> -> tensor<4x3x!num.posit<16, 1>>
  %s = num.softmax %r : tensor<4x3x!num.posit<16, 1>> -> tensor<4x3x!num.posit<16, 1>>
  func.return %s : tensor<4x3x!num.posit<16, 1>>
}
// CHECK-DAG:  %[[ZERO:.*]] = arith.constant 0 : i16
// CHECK-DAG:  %[[ONE:.*]] = arith.constant 16384 : i16
// CHECK:      func.call @minun_p16e1_qclear_1() : () -> ()
// CHECK-NEXT: scf.for
// CHECK:        %[[V:.*]] = memref.load %x
// CHECK-NEXT:   func.call @minun_p16e1_fma_1(%[[V]], %[[V]]) : (i16, i16) -> ()
// CHECK:      %[[SS:.*]] = func.call @minun_p16e1_qpop_1() : () -> i16
// CHECK-NEXT: %[[NORM:.*]] = func.call @minun_p16e1_sqrt(%[[SS]]) : (i16) -> i16
// CHECK-NEXT: %[[NZ:.*]] = arith.cmpi ne, %[[NORM]], %[[ZERO]] : i16
// CHECK:        %[[Q:.*]] = func.call @minun_p16e1_div(%{{.*}}, %[[NORM]]) : (i16, i16) -> i16
// CHECK-NEXT:   arith.select %[[NZ]], %[[Q]], %[[ZERO]] : i16
// CHECK:      arith.maxsi
// CHECK:      func.call @minun_p16e1_qclear_1() : () -> ()
// CHECK:        %[[D:.*]] = func.call @minun_p16e1_sub(
// CHECK-NEXT:   %[[E:.*]] = func.call @minun_p16e1_exp(%[[D]]) : (i16) -> i16
// CHECK:        memref.store %[[E]], %s
// CHECK-NEXT:   func.call @minun_p16e1_fma_1(%[[E]], %[[ONE]]) : (i16, i16) -> ()
// CHECK:      %[[SUM:.*]] = func.call @minun_p16e1_qpop_1() : () -> i16
// CHECK:        func.call @minun_p16e1_div(%{{.*}}, %[[SUM]]) : (i16, i16) -> i16

// BF16:      scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32)
// BF16:        %[[F:.*]] = func.call @minun_bf16_f32(
// BF16-NEXT:   %[[SQ:.*]] = arith.mulf %[[F]], %[[F]] : f32
// BF16-NEXT:   arith.addf %[[ACC]], %[[SQ]] : f32
// BF16:      %[[SS:.*]] = func.call @minun_f32_bf16(
// BF16-NEXT: %[[NORM:.*]] = func.call @minun_bf16_sqrt(%[[SS]]) : (i16) -> i16
// BF16-NEXT: arith.cmpi sgt, %[[NORM]]
// BF16:        func.call @minun_bf16_div(%{{.*}}, %[[NORM]]) : (i16, i16) -> i16
// BF16:        %[[D:.*]] = func.call @minun_bf16_sub(
// BF16-NEXT:   %[[E:.*]] = func.call @minun_bf16_exp(%[[D]]) : (i16) -> i16
// BF16:      %[[SUM:.*]] = func.call @minun_f32_bf16(
// BF16:        func.call @minun_bf16_div(%{{.*}}, %[[SUM]]) : (i16, i16) -> i16
