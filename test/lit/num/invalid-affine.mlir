// Malformed zero-skew (!num.affine) types and ops are rejected with the op name and the
// types: the requantization's integers must be QuantizeMultiplier's of the two scales,
// products accumulate at sa * sb with zero point 0, sums take one 32-bit type.
// RUN: minun-opt %s --split-input-file --verify-diagnostics | filecheck %s

// 1e-4 / 0.02 = 0.005 = 1374389535 * 2^(-7 - 31): one more is not that multiplier.
%x = "test.op"() : () -> tensor<2x!num.affine<32, 1.0e-04, 0>>
%y = num.requantize %x {multiplier = 1374389536 : i64, shift = -7 : i64, left_shift = 0 : i64} : tensor<2x!num.affine<32, 1.0e-04, 0>> -> tensor<2x!num.affine<8, 0.02, -5>>
// CHECK: error: num.requantize: multiplier and shift must be 1374389535 and -7 (QuantizeMultiplier(0.0001 / (0.02 * 2^0))), got 1374389536 and -7

// -----
// A 32-bit operand takes no left shift (TFLite's ADD shifts the int8 inputs only).
%x = "test.op"() : () -> tensor<2x!num.affine<32, 1.0e-04, 0>>
%y = num.requantize %x {multiplier = 1374389535 : i64, shift = -8 : i64, left_shift = 1 : i64} : tensor<2x!num.affine<32, 1.0e-04, 0>> -> tensor<2x!num.affine<8, 0.02, -5>>
// CHECK: error: num.requantize: left_shift must be in 0..24 for an 8-bit operand and 0 for a 32-bit one, got 1

// -----
// mode onnxruntime: float32(0.125 / 0.5) = 0.25 = 2^23 * 2^-25, not TFLite's 2^30, -1.
%x = "test.op"() : () -> tensor<2x!num.affine<32, 0.125, 0>>
%y = num.requantize %x {multiplier = 1073741824 : i64, shift = -1 : i64, left_shift = 0 : i64, mode = #num<requantize_mode onnxruntime>} : tensor<2x!num.affine<32, 0.125, 0>> -> tensor<2x!num.affine<8, 0.5, 3>>
// CHECK: error: num.requantize: multiplier and shift must be 8388608 and -25 (onnxruntime's float32(0.125 / 0.5) as m 2^e), got 1073741824 and -1

// -----
// mode onnxruntime gives int8 (onnxruntime's output stage, or its QuantizeLinear).
%x = "test.op"() : () -> tensor<2x!num.affine<8, 0.125, 4>>
%y = num.requantize %x {multiplier = 8388608 : i64, shift = -25 : i64, left_shift = 0 : i64, mode = #num<requantize_mode onnxruntime>} : tensor<2x!num.affine<8, 0.125, 4>> -> tensor<2x!num.affine<32, 0.125, 0>>
// CHECK: error: num.requantize: mode onnxruntime requantizes an int32 accumulator (zero point 0) or an int8 value to 8 bits with no left shift, got !num.affine<8, 0.125, 4> -> !num.affine<32, 0.125, 0>

// -----
// num.add mode onnxruntime adds int8 values only (int32 accumulators add exactly).
%a = "test.op"() : () -> tensor<2x!num.affine<32, 0.125, 0>>
%b = "test.op"() : () -> tensor<2x!num.affine<8, 0.5, 3>>
%y = num.add %a, %b {mode = #num<requantize_mode onnxruntime>} : (tensor<2x!num.affine<32, 0.125, 0>>, tensor<2x!num.affine<8, 0.5, 3>>) -> tensor<2x!num.affine<8, 0.5, 3>>
// CHECK: error: num.add: mode onnxruntime takes and gives int8 !num.affine values, got tensor<2x!num.affine<32, 0.125, 0>>, tensor<2x!num.affine<8, 0.5, 3>> -> tensor<2x!num.affine<8, 0.5, 3>>

// -----
// An int8 product sums (qa - zpa)(qb - zpb) at scale 0.5 * 0.25 = 0.125, zero point 0.
%a = "test.op"() : () -> tensor<2x3x!num.affine<8, 0.5, 0>>
%b = "test.op"() : () -> tensor<3x1x!num.affine<8, 0.25, 7>>
%c = num.matmul %a, %b {rounding = #num<rounding nearest>, halvings = 0 : i64} : (tensor<2x3x!num.affine<8, 0.5, 0>>, tensor<3x1x!num.affine<8, 0.25, 7>>) -> tensor<2x1x!num.affine<32, 0.25, 0>>
// CHECK: error: num.matmul: zero-skew operands must be 8- or 16-bit and the result !num.affine<32, 0.125, 0>

// -----
// int8 values are added through num.requantize to one int32 type (TFLite's ADD).
%a = "test.op"() : () -> tensor<2x!num.affine<8, 0.5, 0>>
%c = num.add %a, %a : (tensor<2x!num.affine<8, 0.5, 0>>, tensor<2x!num.affine<8, 0.5, 0>>) -> tensor<2x!num.affine<8, 0.5, 0>>
// CHECK: error: num.add: zero-skew sums take and give one 16- or 32-bit !num.affine type (insert num.requantize)

// -----
// Tables map int8 to int8.
%a = "test.op"() : () -> tensor<2x!num.affine<32, 0.5, 0>>
%c = num.sigmoid %a : tensor<2x!num.affine<32, 0.5, 0>> -> tensor<2x!num.affine<8, 0.00390625, -128>>
// CHECK: error: num.sigmoid: a zero-skew table takes and gives 8-bit !num.affine values

// -----
// A zero-skew softmax gives probabilities at 1/255 (ours: 1.0 is code 127) or TFLite's
// 1/256, zero point -128; any other output quantization is refused.
%s = "test.op"() : () -> tensor<1x4x!num.affine<8, 0.1, 3>>
%p = num.softmax %s : tensor<1x4x!num.affine<8, 0.1, 3>> -> tensor<1x4x!num.affine<8, 0.005, -128>>
// CHECK: error: num.softmax: a zero-skew result is !num.affine<8, 1/255 or 1/256, -128>, got tensor<1x4x!num.affine<8, 0.005, -128>>

// -----
// num.lut's table has an entry per int8 input: 256 of them.
%l = "test.op"() : () -> tensor<2x!num.affine<8, 0.1, 3>>
%m = num.lut %l {table = array<i8: 1, 2, 3>} : tensor<2x!num.affine<8, 0.1, 3>> -> tensor<2x!num.affine<8, 0.1, 3>>
// CHECK: error: num.lut: the table needs 256 entries, got 3
