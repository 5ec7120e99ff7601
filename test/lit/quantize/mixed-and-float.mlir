// Mixed bitwidths (Shiftry's demotion: named values at half the bitwidth, every op widened
// to its wider operand) and the float32 representation of the same program.
// RUN: minun-opt %s -p 'quantize{bits=16 demote=W,B}' | filecheck %s --check-prefix=MIX
// RUN: minun-opt %s -p 'quantize{bits=16 param-bits=8}' | filecheck %s --check-prefix=P8
// RUN: minun-opt %s -p 'quantize{repr=float32}' | filecheck %s --check-prefix=F32
// RUN: minun-opt %s -p 'quantize{bits=16 input-bits=8}' | filecheck %s --check-prefix=IN8

func.func @main() -> i32 {
  %x = minun.input "X" [-2.0, 2.0] {profile = array<f64: -2.0, 2.0>} : tensor<3x1xf32>
  %W = minun.param "W" [-1.0, 1.0] dense<[[0.5, -0.25, 0.75], [0.1, 0.2, -0.3]]> : tensor<2x3xf32>
  %B = minun.param "B" [-1.0, 1.0] dense<[[0.3], [-0.6]]> : tensor<2x1xf32>
  %y = minun.matmul %W, %x {profile = array<f64: -3.0, 3.0>} : (tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x1xf32>
  %z = minun.add %y, %B {profile = array<f64: -3.6, 3.3>} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %e = minun.exp %z : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %a = minun.argmax %e : tensor<2x1xf32>
  func.return %a : i32
}
// MIX:      %x = num.input "X" : tensor<3x1x!num.fixed<16, 13>>
// MIX-NEXT: %W = num.param "W" dense<{{.*}}> : tensor<2x3xi8> -> tensor<2x3x!num.fixed<8, 7>>
// MIX-NEXT: %B = num.param "B" dense<{{.*}}> : tensor<2x1xi8> -> tensor<2x1x!num.fixed<8, 7>>
// 8 x 16-bit products, summed in 32 bits at scale 7 + 13
// MIX-NEXT: num.matmul %W, %x {{.*}} : (tensor<2x3x!num.fixed<8, 7>>, tensor<3x1x!num.fixed<16, 13>>) -> tensor<2x1x!num.fixed<32, 20>>
// MIX-NEXT: %y = num.rescale {{.*}} -> tensor<2x1x!num.fixed<16, 13>>
// Shiftry's add rule (Figure 5, as in its Pseudocode 3): both operands go to the lower
// scale, here the 8-bit bias's 7, and the sum stays there
// MIX-NEXT: num.rescale %y {{.*}} : tensor<2x1x!num.fixed<16, 13>> -> tensor<2x1x!num.fixed<16, 7>>
// MIX-NEXT: num.add %{{.*}}, %B : (tensor<2x1x!num.fixed<16, 7>>, tensor<2x1x!num.fixed<8, 7>>) -> tensor<2x1x!num.fixed<32, 7>>
// MIX-NEXT: %z = num.rescale {{.*}} -> tensor<2x1x!num.fixed<16, 7>>

// param-bits=8 demotes every parameter (here W and B, the same as demote=W,B)
// P8:      %x = num.input "X" : tensor<3x1x!num.fixed<16, 13>>
// P8-NEXT: %W = num.param "W" {{.*}} -> tensor<2x3x!num.fixed<8, 7>>
// P8-NEXT: %B = num.param "B" {{.*}} -> tensor<2x1x!num.fixed<8, 7>>

// F32:      func.func @main() -> i32 {
// F32-NEXT:   %x = num.input "X" : tensor<3x1xf32>
// F32-NEXT:   %W = num.param "W" dense<{{.*}}> : tensor<2x3xf32> -> tensor<2x3xf32>
// F32:        %y = num.matmul %W, %x {rounding = #num<rounding nearest>, halvings = 0 : i64} : (tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x1xf32>
// F32-NEXT:   %z = num.add %y, %B : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
// F32-NEXT:   %e = num.exp %z {method = #num<exp_method float>} : tensor<2x1xf32> -> tensor<2x1xf32>
// F32-NEXT:   %a = num.argmax %e : tensor<2x1xf32>

// input-bits=8: the input alone at 8 bits, its scale by the data-driven rule at that width:
// |x| <= 2.0 and 2.0 * 2^5 = 64 <= 127 < 2.0 * 2^6, so scale 5; the matmul takes the
// 16 x 8-bit products as for any demoted operand
// IN8:      %x = num.input "X" : tensor<3x1x!num.fixed<8, 5>>
// IN8-NEXT: %W = num.param "W" {{.*}} -> tensor<2x3x!num.fixed<16, 15>>
// IN8:      num.matmul %W, %x {{.*}} : (tensor<2x3x!num.fixed<16, 15>>, tensor<3x1x!num.fixed<8, 5>>) -> tensor<2x1x!num.fixed<32, 20>>
