// SeeDot's rules (Algorithm 1) on the motivating example of §3: 8 bits, x at scale 7, w at
// scale 6. MULSCALE shifts each operand right by 4; with maxscale 5 the TreeSum does not
// halve (result scale 5), with maxscale 3 both of its levels halve (result scale 3).
// RUN: minun-opt %s -p 'quantize{bits=8 scales=maxscale maxscale=5}' | filecheck %s --check-prefix=P5
// RUN: minun-opt %s -p 'quantize{bits=8 scales=maxscale maxscale=3 rounding=floor}' | filecheck %s --check-prefix=P3

func.func @main() -> tensor<1x1xf32> {
  %x = minun.constant dense<[[0.0767], [0.9238], [-0.8311], [0.8213]]> : tensor<4x1xf32>
  %w = minun.constant dense<[[0.7793, -0.7316, 1.8008, -1.8622]]> : tensor<1x4xf32>
  %r = minun.matmul %w, %x : (tensor<1x4xf32>, tensor<4x1xf32>) -> tensor<1x1xf32>
  func.return %r : tensor<1x1xf32>
}
// P5:      %x = num.param "c1" dense<{{\[\[}}9], [118], [-106], [105]]> : tensor<4x1xi8> -> tensor<4x1x!num.fixed<8, 7>>
// P5-NEXT: %w = num.param "c2" dense<{{\[\[}}49, -46, 115, -119]]> : tensor<1x4xi8> -> tensor<1x4x!num.fixed<8, 6>>
// P5-NEXT: num.rescale %w {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<1x4x!num.fixed<8, 6>> -> tensor<1x4x!num.fixed<8, 2>>
// P5-NEXT: num.rescale %x {rounding = #num<rounding trunc>, overflow = #num<overflow wrap>} : tensor<4x1x!num.fixed<8, 7>> -> tensor<4x1x!num.fixed<8, 3>>
// P5-NEXT: %r = num.matmul {{.*}} {rounding = #num<rounding trunc>, halvings = 0 : i64} : {{.*}} -> tensor<1x1x!num.fixed<8, 5>>

// floor rounding quantizes constants toward -inf too
// P3:      %x = num.param "c1" dense<{{\[\[}}9], [118], [-107], [105]]>
// P3:      %r = num.matmul {{.*}} {rounding = #num<rounding floor>, halvings = 2 : i64} : {{.*}} -> tensor<1x1x!num.fixed<8, 3>>
