// A function's minun.requantize must name a requantization mode: one diagnostic at the
// function, no traceback.
// RUN: not minun-opt %s -p 'quantize{repr=zero-skew bits=8}' 2>&1 | filecheck %s

func.func @main() -> tensor<1x2xf32> attributes {minun.requantize = "tensorflow"} {
  %x = minun.input "x" [-1.0, 1.0] {quantization = array<f64: 0.25, -2.0>} : tensor<1x2xf32>
  func.return %x : tensor<1x2xf32>
}
// CHECK: zero-skew-onnxruntime-errors.mlir:5:{{[0-9]+}}: error: quantize: minun.requantize must be one of ['tflite', 'onnxruntime'], got "tensorflow"
// CHECK-NOT: Traceback
