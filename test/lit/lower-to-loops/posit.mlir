// Posit values are stored as their patterns (i16 for posit<16, 2>); arithmetic becomes
// calls of the posit runtime's wrappers, a dot product one quire (of nesting depth 1):
// clear, one fma per term, qpop (rounded once); argmax compares the patterns as
// integers (the posit order).
// RUN: minun-opt %s -p lower-to-loops | filecheck %s

func.func @main() -> i32 attributes {num.rounding = "nearest"} {
  %x = num.input "X" : tensor<3x1x!num.posit<16, 2>>
  %W = num.param "W" dense<[[14336, -12288, 15360], [16384, 27904, 100]]> : tensor<2x3xi16> -> tensor<2x3x!num.posit<16, 2>>
  %B = num.param "B" dense<[[14336], [-12288]]> : tensor<2x1xi16> -> tensor<2x1x!num.posit<16, 2>>
  %y = num.matmul %W, %x {rounding = #num<rounding nearest>, halvings = 0 : i64} : (tensor<2x3x!num.posit<16, 2>>, tensor<3x1x!num.posit<16, 2>>) -> tensor<2x1x!num.posit<16, 2>>
  %z = num.add %y, %B : (tensor<2x1x!num.posit<16, 2>>, tensor<2x1x!num.posit<16, 2>>) -> tensor<2x1x!num.posit<16, 2>>
  %a = num.argmax %z : tensor<2x1x!num.posit<16, 2>>
  func.return %a : i32
}
// CHECK:      func.func private @minun_p16e2_qclear_1() -> ()
// CHECK-NEXT: func.func private @minun_p16e2_fma_1(i16, i16) -> ()
// CHECK-NEXT: func.func private @minun_p16e2_qpop_1() -> i16
// CHECK-NEXT: func.func private @minun_p16e2_add(i16, i16) -> i16
// CHECK:      func.func @minun_predict(%x: memref<3xi16>, %out: memref<2xi16>) -> i32 attributes {{{.*}}minun.input_encoding = !num.posit<16, 2>, minun.output_encoding = !num.posit<16, 2>
// CHECK:      scf.for %[[I:.*]] = {{.*}} {
// CHECK-NEXT:   func.call @minun_p16e2_qclear_1() : () -> ()
// CHECK-NEXT:   scf.for
// CHECK:          func.call @minun_p16e2_fma_1(%{{.*}}, %{{.*}}) : (i16, i16) -> ()
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[D:.*]] = func.call @minun_p16e2_qpop_1() : () -> i16
// CHECK-NEXT:   %[[B:.*]] = memref.load %p_B[%[[I]]] : memref<2xi16>
// CHECK-NEXT:   %[[S:.*]] = func.call @minun_p16e2_add(%[[D]], %[[B]]) : (i16, i16) -> i16
// CHECK-NEXT:   memref.store %[[S]], %out[%[[I]]] : memref<2xi16>
// CHECK:      arith.cmpi sgt, %{{.*}}, %{{.*}} : i16
