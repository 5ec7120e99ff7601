// gptq weight rounding matches each layer's output on calibration inputs: without data=
// (here the ranges come from profile attributes) it has none; it is for zero-skew only, a
// method it does not know is named, and beside bias-correction (whose biases it refits)
// it asks for one of the two.
// RUN: not minun-opt %s -p 'quantize{repr=zero-skew bits=8 weight-rounding=gptq}' 2>&1 | filecheck %s --check-prefix=DATA
// RUN: not minun-opt %s -p 'quantize{bits=8 weight-rounding=gptq}' 2>&1 | filecheck %s --check-prefix=REPR
// RUN: not minun-opt %s -p 'quantize{repr=zero-skew bits=8 weight-rounding=adaround}' 2>&1 | filecheck %s --check-prefix=METHOD
// RUN: not minun-opt %s -p 'quantize{repr=zero-skew bits=8 weight-rounding=gptq bias-correction=true}' 2>&1 | filecheck %s --check-prefix=BOTH

func.func @main() -> i32 {
  %x = minun.input "X" [-2.0, 2.0] {profile = array<f64: -2.0, 2.0>} : tensor<1x3xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25], [0.75, 0.1], [0.2, -0.3]]> : tensor<3x2xf32>
  %B = minun.param "B" [-1.0, 1.0] dense<[0.3, -0.6]> : tensor<2xf32>
  %y = minun.matmul %x, %W {profile = array<f64: -3.0, 3.0>} : (tensor<1x3xf32>, tensor<3x2xf32>) -> tensor<1x2xf32>
  %z = minun.bias_add %y, %B {profile = array<f64: -3.6, 3.3>} : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %a = minun.argmax %z : tensor<1x2xf32>
  func.return %a : i32
}
// DATA: error: quantize: weight-rounding=gptq needs data= (the calibration inputs the layers' outputs are matched on)
// DATA-NOT: Traceback
// REPR: error: quantize: weight-rounding=gptq is for repr=zero-skew, not fixed
// REPR-NOT: Traceback
// METHOD: error: quantize: weight-rounding must be one of nearest, gptq, got 'adaround'
// METHOD-NOT: Traceback
// BOTH: error: quantize: weight-rounding=gptq already fits the biases bias-correction would move: use one of them
// BOTH-NOT: Traceback
