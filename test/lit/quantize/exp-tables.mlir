// exp under both rule sets. Data-driven: the input is rescaled with saturation to the
// fixed table scale (16-bit: 11, 8-bit: 4) and the result has the table's output scale
// (14, 6). Maxscale: SeeDot's two tables over the profiled range at the input's own scale.
// RUN: minun-opt %s -p 'quantize{bits=16}' | filecheck %s --check-prefix=DD16
// RUN: minun-opt %s -p 'quantize{bits=8}' | filecheck %s --check-prefix=DD8
// RUN: minun-opt %s -p 'quantize{bits=16 scales=maxscale maxscale=10}' | filecheck %s --check-prefix=MS

func.func @main() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %x = minun.input "X" [-6.0, 0.0] {profile = array<f64: -6.0, 0.0>} : tensor<4xf32>
  %e = minun.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %s = minun.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
  %t = minun.tanh %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %e, %s, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
// DD16:      %x = num.input "X" : tensor<4x!num.fixed<16, 12>>
// DD16-NEXT: %[[R:.*]] = num.rescale %x {rounding = #num<rounding trunc>, overflow = #num<overflow saturate>} : tensor<4x!num.fixed<16, 12>> -> tensor<4x!num.fixed<16, 11>>
// DD16-NEXT: %e = num.exp %[[R]] {method = #num<exp_method shiftry>} : tensor<4x!num.fixed<16, 11>> -> tensor<4x!num.fixed<16, 14>>
// DD16:      %s = num.sigmoid {{.*}} : tensor<4x!num.fixed<16, 11>> -> tensor<4x!num.fixed<16, 14>>
// DD16:      %t = num.tanh {{.*}} : tensor<4x!num.fixed<16, 11>> -> tensor<4x!num.fixed<16, 14>>

// DD8:       %x = num.input "X" : tensor<4x!num.fixed<8, 4>>
// DD8-NEXT:  %e = num.exp %x {method = #num<exp_method shiftry>} : tensor<4x!num.fixed<8, 4>> -> tensor<4x!num.fixed<8, 6>>

// The declared range [-6, 0] gives the input scale 12; the profiled range is -6 * 2^12 .. 0.
// MS:        %e = num.exp %x {method = #num<exp_method seedot>, lo = -24576 : i64, hi = 0 : i64, maxscale = 10 : i64} : tensor<4x!num.fixed<16, 12>> -> tensor<4x!num.fixed<16, {{[0-9]+}}>>
