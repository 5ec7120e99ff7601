// Loop-carried values keep one scale in every iteration; the body ends with the rescale.
// Data-driven: the scale covers the initial value and every iteration's value (profile).
// Maxscale: the carried scale drops to what the body yields until both agree.
// A `$` sum becomes a loop carrying an accumulator.
// RUN: minun-opt %s -p 'quantize{bits=16}' | filecheck %s --check-prefix=DD
// RUN: minun-opt %s -p 'quantize{bits=16 scales=maxscale maxscale=8}' | filecheck %s --check-prefix=MS

func.func @main() -> (tensor<2xf32>, tensor<2xf32>) {
  %x = minun.input "X" [-1.0, 1.0] {profile = array<f64: -1.0, 1.0>} : tensor<2xf32>
  %half = minun.constant dense<0.5> : tensor<f32>
  %h = minun.loop (%i = 0 to 4) iter(%c = %x) : tensor<2xf32> {
    %s = minun.scalar_mul %half, %c {profile = array<f64: -0.5, 0.5>} : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
    %n = minun.add %s, %x {profile = array<f64: -1.9, 1.9>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    minun.yield %n : tensor<2xf32>
  }
  %sum = minun.sum (%j = 0 to 8) : tensor<2xf32> {
    minun.yield %x : tensor<2xf32>
  }
  func.return %h, %sum : tensor<2xf32>, tensor<2xf32>
}
// DD:      %x = num.input "X" : tensor<2x!num.fixed<16, 14>>
// the carried value covers [-1.9, 1.9]: scale 14; the init is already there
// DD:      %h = minun.loop (%i = 0 to 4) iter(%c = %x) : tensor<2x!num.fixed<16, 14>> {
// DD:        %n = num.rescale {{.*}} -> tensor<2x!num.fixed<16, 14>>
// DD-NEXT:   minun.yield %n : tensor<2x!num.fixed<16, 14>>
// the sum accumulates exactly in 32 bits at the body's scale
// DD:      %{{.*}} = minun.init 0.0 : tensor<2x!num.fixed<32, 14>>
// DD:      minun.loop (%j = 0 to 8) iter(%{{.*}} = %{{.*}}) : tensor<2x!num.fixed<32, 14>>
// DD:        num.add {{.*}} -> tensor<2x!num.fixed<32, 14>>

// maxscale (traced by hand with Algorithm 1): the declared range gives x scale 14 and 0.5
// scale 15. Carried 14: MULSCALE(15, 14) = 13, ADDSCALE(13) = 12 -> carried 12; then
// 11 -> 10; 9 -> 9; MULSCALE(15, 9) = 8, ADDSCALE(8) = 8 -> carried 8; with carried 8
// MULSCALE shifts by 7 each (product at 9) and the sum stays at 9 >= 8: settled at 8.
// MS:      %[[X8:.*]] = num.rescale %x {{.*}} -> tensor<2x!num.fixed<16, 8>>
// MS-NEXT: %h = minun.loop (%i = 0 to 4) iter(%c = %[[X8]]) : tensor<2x!num.fixed<16, 8>> {
// MS:        %s = num.mul {{.*}} : (tensor<!num.fixed<16, 8>>, tensor<2x!num.fixed<16, 1>>) -> tensor<2x!num.fixed<16, 9>>
// MS:        %n = num.add {{.*}} -> tensor<2x!num.fixed<16, 9>>
// MS-NEXT:   %[[Y:.*]] = num.rescale %n {{.*}} -> tensor<2x!num.fixed<16, 8>>
// MS-NEXT:   minun.yield %[[Y]] : tensor<2x!num.fixed<16, 8>>
// TREESUMSCALE(14, 8) = (11, 3): each term is shifted by 3 before it is added
// MS:      minun.loop (%j = 0 to 8) iter(%{{.*}} = %{{.*}}) : tensor<2x!num.fixed<16, 11>>
// MS:        num.rescale %x {{.*}} : tensor<2x!num.fixed<16, 14>> -> tensor<2x!num.fixed<16, 11>>
