// The L2 ops of comparison, selection and negation (num.relu ... num.sgn), in custom form on
// fixed-point and float32 values: printing and re-parsing gives the same text, and the
// generic form round-trips to the same custom text.
// RUN: minun-opt %s > %t.1.mlir
// RUN: minun-opt %t.1.mlir > %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir
// RUN: minun-opt %s --print-op-generic | minun-opt > %t.3.mlir
// RUN: diff %t.1.mlir %t.3.mlir
// RUN: filecheck %s < %t.1.mlir
// RUN: minun-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @main() -> i32 attributes {num.rounding = "trunc"} {
  %x = num.input "X" : tensor<1x4x4x2x!num.fixed<16, 12>>
  // CHECK: %r = num.relu %x : tensor<1x4x4x2x!num.fixed<16, 12>>
  // GENERIC: %r = "num.relu"(%x) : (tensor<1x4x4x2x!num.fixed<16, 12>>) -> tensor<1x4x4x2x!num.fixed<16, 12>>
  %r = num.relu %x : tensor<1x4x4x2x!num.fixed<16, 12>>
  // CHECK: %r6 = num.relu6 %r : tensor<1x4x4x2x!num.fixed<16, 12>>
  // GENERIC: %r6 = "num.relu6"(%r) : (tensor<1x4x4x2x!num.fixed<16, 12>>) -> tensor<1x4x4x2x!num.fixed<16, 12>>
  %r6 = num.relu6 %r : tensor<1x4x4x2x!num.fixed<16, 12>>
  // CHECK: %c = num.clip %r6 {lo = -1.500000e+00 : f64, hi = 2.250000e+00 : f64} : tensor<1x4x4x2x!num.fixed<16, 12>>
  // GENERIC: %c = "num.clip"(%r6) {lo = -1.500000e+00 : f64, hi = 2.250000e+00 : f64} : (tensor<1x4x4x2x!num.fixed<16, 12>>) -> tensor<1x4x4x2x!num.fixed<16, 12>>
  %c = num.clip %r6 {lo = -1.5 : f64, hi = 2.25 : f64} : tensor<1x4x4x2x!num.fixed<16, 12>>
  // CHECK: %n = num.neg %c : tensor<1x4x4x2x!num.fixed<16, 12>>
  // GENERIC: %n = "num.neg"(%c) : (tensor<1x4x4x2x!num.fixed<16, 12>>) -> tensor<1x4x4x2x!num.fixed<16, 12>>
  %n = num.neg %c : tensor<1x4x4x2x!num.fixed<16, 12>>
  // zero-skew: the complementary zero point (-1 - zp), printed as a result type
  %za = "test.op"() : () -> tensor<4x!num.affine<8, 0.0235, -128>>
  // CHECK: %na = num.neg %za : tensor<4x!num.affine<8, 0.0235, -128>> -> tensor<4x!num.affine<8, 0.0235, 127>>
  // GENERIC: %na = "num.neg"(%za) : (tensor<4x!num.affine<8, 0.0235, -128>>) -> tensor<4x!num.affine<8, 0.0235, 127>>
  %na = num.neg %za : tensor<4x!num.affine<8, 0.0235, -128>> -> tensor<4x!num.affine<8, 0.0235, 127>>
  // CHECK: %mx = num.max %n, %x : (tensor<1x4x4x2x!num.fixed<16, 12>>, tensor<1x4x4x2x!num.fixed<16, 12>>) -> tensor<1x4x4x2x!num.fixed<16, 12>>
  // GENERIC: %mx = "num.max"(%n, %x) : (tensor<1x4x4x2x!num.fixed<16, 12>>, tensor<1x4x4x2x!num.fixed<16, 12>>) -> tensor<1x4x4x2x!num.fixed<16, 12>>
  %mx = num.max %n, %x : (tensor<1x4x4x2x!num.fixed<16, 12>>, tensor<1x4x4x2x!num.fixed<16, 12>>) -> tensor<1x4x4x2x!num.fixed<16, 12>>
  // Shapes broadcast as in numpy (ONNX Min/Max against a constant).
  %k = num.param "K" dense<4096> : tensor<i16> -> tensor<!num.fixed<16, 12>>
  // CHECK: %mn = num.min %mx, %k : (tensor<1x4x4x2x!num.fixed<16, 12>>, tensor<!num.fixed<16, 12>>) -> tensor<1x4x4x2x!num.fixed<16, 12>>
  // GENERIC: %mn = "num.min"(%mx, %k) : (tensor<1x4x4x2x!num.fixed<16, 12>>, tensor<!num.fixed<16, 12>>) -> tensor<1x4x4x2x!num.fixed<16, 12>>
  %mn = num.min %mx, %k : (tensor<1x4x4x2x!num.fixed<16, 12>>, tensor<!num.fixed<16, 12>>) -> tensor<1x4x4x2x!num.fixed<16, 12>>
  // CHECK: %p = num.maxpool %mn {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 1, 0, 1>} : (tensor<1x4x4x2x!num.fixed<16, 12>>) -> tensor<1x2x2x2x!num.fixed<16, 12>>
  // GENERIC: %p = "num.maxpool"(%mn) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 1, 0, 1>} : (tensor<1x4x4x2x!num.fixed<16, 12>>) -> tensor<1x2x2x2x!num.fixed<16, 12>>
  %p = num.maxpool %mn {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 1, 0, 1>} : (tensor<1x4x4x2x!num.fixed<16, 12>>) -> tensor<1x2x2x2x!num.fixed<16, 12>>
  // CHECK: %a = num.argmax %p : tensor<1x2x2x2x!num.fixed<16, 12>>
  // GENERIC: %a = "num.argmax"(%p) : (tensor<1x2x2x2x!num.fixed<16, 12>>) -> i32
  %a = num.argmax %p : tensor<1x2x2x2x!num.fixed<16, 12>>
  %one = num.param "One" dense<-3> : tensor<i16> -> tensor<!num.fixed<16, 12>>
  // CHECK: %s = num.sgn %one : tensor<!num.fixed<16, 12>>
  // GENERIC: %s = "num.sgn"(%one) : (tensor<!num.fixed<16, 12>>) -> i32
  %s = num.sgn %one : tensor<!num.fixed<16, 12>>
  // Softmax over the last axis: the result scale is width - 2 (1.0 fits).
  %logits = num.param "L" dense<[[100, -200, 300]]> : tensor<1x3xi16> -> tensor<1x3x!num.fixed<16, 8>>
  // CHECK: %sm = num.softmax %logits : tensor<1x3x!num.fixed<16, 8>> -> tensor<1x3x!num.fixed<16, 14>>
  // GENERIC: %sm = "num.softmax"(%logits) : (tensor<1x3x!num.fixed<16, 8>>) -> tensor<1x3x!num.fixed<16, 14>>
  %sm = num.softmax %logits : tensor<1x3x!num.fixed<16, 8>> -> tensor<1x3x!num.fixed<16, 14>>
  // LogSoftmax: any result scale (data-driven).
  // CHECK: %lsm = num.log_softmax %logits : tensor<1x3x!num.fixed<16, 8>> -> tensor<1x3x!num.fixed<16, 11>>
  // GENERIC: %lsm = "num.log_softmax"(%logits) : (tensor<1x3x!num.fixed<16, 8>>) -> tensor<1x3x!num.fixed<16, 11>>
  %lsm = num.log_softmax %logits : tensor<1x3x!num.fixed<16, 8>> -> tensor<1x3x!num.fixed<16, 11>>
  // The same ops on float32 values.
  %f = num.param "F" dense<[1.5, -2.0]> : tensor<2xf32> -> tensor<2xf32>
  // CHECK: %fr = num.relu %f : tensor<2xf32>
  %fr = num.relu %f : tensor<2xf32>
  // CHECK: %fr6 = num.relu6 %fr : tensor<2xf32>
  %fr6 = num.relu6 %fr : tensor<2xf32>
  // CHECK: %fc = num.clip %fr6 {lo = 0.000000e+00 : f64, hi = 1.000000e+00 : f64} : tensor<2xf32>
  %fc = num.clip %fr6 {lo = 0.0 : f64, hi = 1.0 : f64} : tensor<2xf32>
  // CHECK: %fn = num.neg %fc : tensor<2xf32>
  %fn = num.neg %fc : tensor<2xf32>
  // CHECK: %fm = num.max %fn, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %fm = num.max %fn, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  // CHECK: %fmin = num.min %fm, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %fmin = num.min %fm, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  // CHECK: %fs = num.softmax %fmin : tensor<2xf32> -> tensor<2xf32>
  %fs = num.softmax %fmin : tensor<2xf32> -> tensor<2xf32>
  // CHECK: %fls = num.log_softmax %fmin : tensor<2xf32> -> tensor<2xf32>
  %fls = num.log_softmax %fmin : tensor<2xf32> -> tensor<2xf32>
  // CHECK: %fa = num.argmax %fmin : tensor<2xf32>
  %fa = num.argmax %fmin : tensor<2xf32>
  // Zero-skew int8: scale and zero point in the type; num.requantize's multiplier and shift
  // are QuantizeMultiplier(1e-4 / 0.02) = 0.005 = 1374389535 * 2^(-7 - 31) (the verifier
  // checks them against the types).
  %acc = num.param "Acc" dense<[1200, -350]> : tensor<2xi32> -> tensor<2x!num.affine<32, 1.0e-04, 0>>
  // CHECK: %q = num.requantize %acc {multiplier = 1374389535 : i64, shift = -7 : i64, left_shift = 0 : i64} : tensor<2x!num.affine<32, 0.0001, 0>> -> tensor<2x!num.affine<8, 0.02, -5>>
  // GENERIC: %q = "num.requantize"(%acc) {multiplier = 1374389535 : i64, shift = -7 : i64, left_shift = 0 : i64} : (tensor<2x!num.affine<32, 0.0001, 0>>) -> tensor<2x!num.affine<8, 0.02, -5>>
  %q = num.requantize %acc {multiplier = 1374389535 : i64, shift = -7 : i64, left_shift = 0 : i64} : tensor<2x!num.affine<32, 1.0e-04, 0>> -> tensor<2x!num.affine<8, 0.02, -5>>
  // mode onnxruntime (pre-quantized models): onnxruntime's float32 scale as a 24-bit
  // significand and its exponent, float32(0.125 / 0.375) = float32(1/3) = 0xAAAAAB * 2^-25
  // (1/3 = 0.0101...b: the 24 bits 0xAAAAAA, the next bit 1, so rounded up to 11184811).
  %acc8 = num.param "Acc8" dense<[1200, -350]> : tensor<2xi32> -> tensor<2x!num.affine<32, 0.125, 0>>
  // CHECK: %qo = num.requantize %acc8 {multiplier = 11184811 : i64, shift = -25 : i64, left_shift = 0 : i64, mode = #num<requantize_mode onnxruntime>} : tensor<2x!num.affine<32, 0.125, 0>> -> tensor<2x!num.affine<8, 0.375, 3>>
  // GENERIC: %qo = "num.requantize"(%acc8) {multiplier = 11184811 : i64, shift = -25 : i64, left_shift = 0 : i64, mode = #num<requantize_mode onnxruntime>} : (tensor<2x!num.affine<32, 0.125, 0>>) -> tensor<2x!num.affine<8, 0.375, 3>>
  %qo = num.requantize %acc8 {multiplier = 11184811 : i64, shift = -25 : i64, left_shift = 0 : i64, mode = #num<requantize_mode onnxruntime>} : tensor<2x!num.affine<32, 0.125, 0>> -> tensor<2x!num.affine<8, 0.375, 3>>
  // Of an int8 value (onnxruntime's DequantizeLinear then QuantizeLinear): multiplier and
  // shift are the output scale's float32, 0.5 = 2^23 * 2^-24.
  // CHECK: %q8 = num.requantize %q {multiplier = 8388608 : i64, shift = -24 : i64, left_shift = 0 : i64, mode = #num<requantize_mode onnxruntime>} : tensor<2x!num.affine<8, 0.02, -5>> -> tensor<2x!num.affine<8, 0.5, 1>>
  %q8 = num.requantize %q {multiplier = 8388608 : i64, shift = -24 : i64, left_shift = 0 : i64, mode = #num<requantize_mode onnxruntime>} : tensor<2x!num.affine<8, 0.02, -5>> -> tensor<2x!num.affine<8, 0.5, 1>>
  // num.add mode onnxruntime: int8 operands and result of any scales (onnxruntime's
  // float32 DequantizeLinear, Add, QuantizeLinear).
  // CHECK: %qa = num.add %q, %qo {mode = #num<requantize_mode onnxruntime>} : (tensor<2x!num.affine<8, 0.02, -5>>, tensor<2x!num.affine<8, 0.375, 3>>) -> tensor<2x!num.affine<8, 0.5, 1>>
  // GENERIC: %qa = "num.add"(%q, %qo) {mode = #num<requantize_mode onnxruntime>} : (tensor<2x!num.affine<8, 0.02, -5>>, tensor<2x!num.affine<8, 0.375, 3>>) -> tensor<2x!num.affine<8, 0.5, 1>>
  %qa = num.add %q, %qo {mode = #num<requantize_mode onnxruntime>} : (tensor<2x!num.affine<8, 0.02, -5>>, tensor<2x!num.affine<8, 0.375, 3>>) -> tensor<2x!num.affine<8, 0.5, 1>>
  // CHECK: %qm = num.mul %q, %qo {mode = #num<requantize_mode onnxruntime>} : (tensor<2x!num.affine<8, 0.02, -5>>, tensor<2x!num.affine<8, 0.375, 3>>) -> tensor<2x!num.affine<8, 0.5, 1>>
  %qm = num.mul %q, %qo {mode = #num<requantize_mode onnxruntime>} : (tensor<2x!num.affine<8, 0.02, -5>>, tensor<2x!num.affine<8, 0.375, 3>>) -> tensor<2x!num.affine<8, 0.5, 1>>
  // CHECK: %qr = num.relu %q : tensor<2x!num.affine<8, 0.02, -5>>
  %qr = num.relu %q : tensor<2x!num.affine<8, 0.02, -5>>
  // CHECK: %qs = num.sigmoid %qr : tensor<2x!num.affine<8, 0.02, -5>> -> tensor<2x!num.affine<8, 0.00390625, -128>>
  %qs = num.sigmoid %qr : tensor<2x!num.affine<8, 0.02, -5>> -> tensor<2x!num.affine<8, 0.00390625, -128>>
  // CHECK: %qe = num.exp %qr {method = #num<exp_method table>} : tensor<2x!num.affine<8, 0.02, -5>> -> tensor<2x!num.affine<8, 0.01, -128>>
  %qe = num.exp %qr {method = #num<exp_method table>} : tensor<2x!num.affine<8, 0.02, -5>> -> tensor<2x!num.affine<8, 0.01, -128>>
  // A table given by its 256 entries (the float ops between a DequantizeLinear and a QuantizeLinear).
  // CHECK: %ql = num.lut %qr {table = array<i8: -128, -121, -114,
  %ql = num.lut %qr {table = array<i8: -128, -121, -114, -107, -100, -93, -86, -79, -72, -65, -58, -51, -44, -37, -30, -23, -16, -9, -2, 5, 12, 19, 26, 33, 40, 47, 54, 61, 68, 75, 82, 89, 96, 103, 110, 117, 124, -125, -118, -111, -104, -97, -90, -83, -76, -69, -62, -55, -48, -41, -34, -27, -20, -13, -6, 1, 8, 15, 22, 29, 36, 43, 50, 57, 64, 71, 78, 85, 92, 99, 106, 113, 120, 127, -122, -115, -108, -101, -94, -87, -80, -73, -66, -59, -52, -45, -38, -31, -24, -17, -10, -3, 4, 11, 18, 25, 32, 39, 46, 53, 60, 67, 74, 81, 88, 95, 102, 109, 116, 123, -126, -119, -112, -105, -98, -91, -84, -77, -70, -63, -56, -49, -42, -35, -28, -21, -14, -7, 0, 7, 14, 21, 28, 35, 42, 49, 56, 63, 70, 77, 84, 91, 98, 105, 112, 119, 126, -123, -116, -109, -102, -95, -88, -81, -74, -67, -60, -53, -46, -39, -32, -25, -18, -11, -4, 3, 10, 17, 24, 31, 38, 45, 52, 59, 66, 73, 80, 87, 94, 101, 108, 115, 122, -127, -120, -113, -106, -99, -92, -85, -78, -71, -64, -57, -50, -43, -36, -29, -22, -15, -8, -1, 6, 13, 20, 27, 34, 41, 48, 55, 62, 69, 76, 83, 90, 97, 104, 111, 118, 125, -124, -117, -110, -103, -96, -89, -82, -75, -68, -61, -54, -47, -40, -33, -26, -19, -12, -5, 2, 9, 16, 23, 30, 37, 44, 51, 58, 65, 72, 79, 86, 93, 100, 107, 114, 121>} : tensor<2x!num.affine<8, 0.02, -5>> -> tensor<2x!num.affine<8, 0.05, 3>>
  // Between posit formats (per-tensor formats, MinUn's Procedure 3).
  %pi = num.input "P" : tensor<2x!num.posit<16, 2>>
  // CHECK: %p8 = num.convert %pi : tensor<2x!num.posit<16, 2>> -> tensor<2x!num.posit<8, 2>>
  // GENERIC: %p8 = "num.convert"(%pi) : (tensor<2x!num.posit<16, 2>>) -> tensor<2x!num.posit<8, 2>>
  %p8 = num.convert %pi : tensor<2x!num.posit<16, 2>> -> tensor<2x!num.posit<8, 2>>
  func.return %a : i32
}
