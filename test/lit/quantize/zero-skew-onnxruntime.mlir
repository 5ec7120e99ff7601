// A pre-quantized model (the ONNX importer marks its function minun.requantize =
// "onnxruntime"): quantize{repr=zero-skew} computes its integers as onnxruntime does. The
// matmul's accumulator (scale 0.25 * 0.5 = 0.125) is requantized with onnxruntime's
// float32 scale 0.125 / 0.5 = 0.25 = 2^23 * 2^-25; the relu, which the model quantizes
// again at (0.25, -128), is requantized from the matmul's int8 type as a
// DequantizeLinear-QuantizeLinear pair (multiplier and shift: 0.25 = 2^23 * 2^-25 as a
// float32); the add of two int8 values is onnxruntime's float32 add.
// RUN: minun-opt %s -p 'quantize{repr=zero-skew bits=8}' | filecheck %s

func.func @main() -> tensor<1x2xf32> attributes {minun.requantize = "onnxruntime"} {
  %x = minun.input "x" [-1.0, 1.0] {quantization = array<f64: 0.25, -2.0>} : tensor<1x4xf32>
  %w = minun.param "w" [-4.0, 3.5] {quantization = array<f64: 0.5, 0.0>} dense<[[0.5, -1.0], [1.5, 2.0], [-2.5, 3.0], [3.5, -4.0]]> : tensor<4x2xf32>
  %p = minun.matmul %x, %w {quantization = array<f64: 0.5, 3.0>} : (tensor<1x4xf32>, tensor<4x2xf32>) -> tensor<1x2xf32>
  %r = minun.relu %p {quantization = array<f64: 0.25, -128.0>} : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %s = minun.add %r, %p {quantization = array<f64: 1.0, 0.0>} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  func.return %s : tensor<1x2xf32>
}
// CHECK: num.matmul %x, %w {{.*}} -> tensor<1x2x!num.affine<32, 0.125, 0>>
// CHECK-NEXT: %p = num.requantize %{{.*}} {multiplier = 8388608 : i64, shift = -25 : i64, left_shift = 0 : i64, mode = #num<requantize_mode onnxruntime>} : tensor<1x2x!num.affine<32, 0.125, 0>> -> tensor<1x2x!num.affine<8, 0.5, 3>>
// CHECK-NEXT: num.relu %p {{.*}}: tensor<1x2x!num.affine<8, 0.5, 3>>
// CHECK-NEXT: %r = num.requantize %{{.*}} {multiplier = 8388608 : i64, shift = -25 : i64, left_shift = 0 : i64, mode = #num<requantize_mode onnxruntime>} : tensor<1x2x!num.affine<8, 0.5, 3>> -> tensor<1x2x!num.affine<8, 0.25, -128>>
// CHECK-NEXT: %s = num.add %r, %p {mode = #num<requantize_mode onnxruntime>} : (tensor<1x2x!num.affine<8, 0.25, -128>>, tensor<1x2x!num.affine<8, 0.5, 3>>) -> tensor<1x2x!num.affine<8, 1.0, 0>>
