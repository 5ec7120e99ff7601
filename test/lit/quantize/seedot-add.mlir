// SeeDot §5.3: `let x = 1.23 in x + x` at 16 bits. x is 20152 at scale 14; below maxscale 13
// ADDSCALE halves both operands (result scale 13); at maxscale 13 and above it does not.
// RUN: minun-opt %s -p 'quantize{bits=16 scales=maxscale maxscale=12}' | filecheck %s --check-prefix=LOW
// RUN: minun-opt %s -p 'quantize{bits=16 scales=maxscale maxscale=13}' | filecheck %s --check-prefix=HIGH

func.func @main() -> tensor<f32> {
  %x = minun.constant dense<1.23> : tensor<f32>
  %s = minun.add %x, %x : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %s : tensor<f32>
}
// LOW:      %x = num.param "c1" dense<20152> : tensor<i16> -> tensor<!num.fixed<16, 14>>
// LOW-NEXT: %[[H:.*]] = num.rescale %x {{.*}} : tensor<!num.fixed<16, 14>> -> tensor<!num.fixed<16, 13>>
// LOW-NEXT: num.rescale %x {{.*}} -> tensor<!num.fixed<16, 13>>
// LOW-NEXT: %s = num.add {{.*}} -> tensor<!num.fixed<16, 13>>
// HIGH:      %s = num.add %x, %x : (tensor<!num.fixed<16, 14>>, tensor<!num.fixed<16, 14>>) -> tensor<!num.fixed<16, 14>>
