// log_softmax of posits: per row the integer max, d = x - max stored in the result while
// the quire adds exp(d) * 1 (1.0 in posit<16, 1> is 0x4000 = 16384), the runtime's log of
// the rounded sum, then each d - log. bfloat16: float32 sum of the rounded exps, logf
// inside minun_bf16_log.
// RUN: minun-opt %s -p lower-to-loops | filecheck %s
// RUN: sed 's/!num.posit<16, 1>/bf16/g' %s | minun-opt -p lower-to-loops | filecheck %s --check-prefix=BF16

func.func @main() -> tensor<2x5x!num.posit<16, 1>> attributes {num.rounding = "nearest"} {
  %x = num.input "X" : tensor<2x5x!num.posit<16, 1>>
  %y = num.log_softmax %x : tensor<2x5x!num.posit<16, 1>> -> tensor<2x5x!num.posit<16, 1>>
  func.return %y : tensor<2x5x!num.posit<16, 1>>
}
// CHECK-DAG:  %[[ONE:.*]] = arith.constant 16384 : i16
// CHECK:      arith.maxsi
// CHECK:      func.call @minun_p16e1_qclear_1() : () -> ()
// CHECK:        %[[D:.*]] = func.call @minun_p16e1_sub(
// CHECK:        memref.store %[[D]], %y
// CHECK-NEXT:   %[[E:.*]] = func.call @minun_p16e1_exp(%[[D]]) : (i16) -> i16
// CHECK-NEXT:   func.call @minun_p16e1_fma_1(%[[E]], %[[ONE]]) : (i16, i16) -> ()
// CHECK:      %[[S:.*]] = func.call @minun_p16e1_qpop_1() : () -> i16
// CHECK-NEXT: %[[L:.*]] = func.call @minun_p16e1_log(%[[S]]) : (i16) -> i16
// CHECK:        func.call @minun_p16e1_sub(%{{.*}}, %[[L]]) : (i16, i16) -> i16

// BF16:      %[[D:.*]] = func.call @minun_bf16_sub(
// BF16:      %[[E:.*]] = func.call @minun_bf16_exp(%[[D]]) : (i16) -> i16
// BF16:      %[[S:.*]] = func.call @minun_f32_bf16(
// BF16-NEXT: %[[L:.*]] = func.call @minun_bf16_log(%[[S]]) : (i16) -> i16
// BF16:        func.call @minun_bf16_sub(%{{.*}}, %[[L]]) : (i16, i16) -> i16
