// A classifier's class names (minun.class_labels on @main: an ONNX model's
// classlabels_strings) survive quantize and the lowerings and are written to model.h as
// C strings: quotes and backslashes escaped, non-ASCII bytes (UTF-8 of "í": 303 255) in
// octal.
// RUN: minun-opt %s --pass-pipeline='builtin.module(quantize{bits=16},lower-to-loops,memory-plan,lower-to-emitc)' -t 'c{file=header}' | filecheck %s

func.func @main() -> i32 attributes {minun.class_labels = ["setosa", "vers\"i\\color", "virgínica"]} {
  %X = minun.input "X" [-2.0, 2.0] {profile = array<f64: -2.0, 2.0>} : tensor<1x2xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25, 0.75], [0.1, 0.2, -0.3]]> : tensor<2x3xf32>
  %y = minun.matmul %X, %W {profile = array<f64: -2.0, 2.0>} : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  %l = minun.argmax %y : tensor<1x3xf32>
  func.return %l : i32
}

// CHECK:      #define MINUN_CLASS_COUNT 3
// CHECK-NEXT: #define MINUN_CLASS_LABELS {"setosa", "vers\"i\\color", "virg\303\255nica"}
// CHECK-NEXT: static const char *const minun_class_labels[MINUN_CLASS_COUNT] = MINUN_CLASS_LABELS;
// CHECK:      int minun_predict(const minun_input_t *x, minun_output_t *out);
