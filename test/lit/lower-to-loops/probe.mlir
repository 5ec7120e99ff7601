// The native profiler's probes (minun_mlir/native.py): `minun.probe = array<i64: result,
// id>` on an L2 op makes lower-to-loops pass every element of that result to
// `minun_profile(id, value)` once it is computed (a call for its effect, declared private),
// and the C has the call as a statement. The pipeline never sets the attribute.
// RUN: minun-opt %s -p lower-to-loops | filecheck %s
// RUN: minun-opt %s -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{file=source}' | filecheck %s --check-prefix=C
// RUN: minun-opt %s -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{file=runtime}' | filecheck %s --check-prefix=RT

func.func @main() -> tensor<3xf32> attributes {num.rounding = "nearest", num.overflow = "wrap"} {
  %x = num.input "X" {minun.probe = array<i64: 0, 0>} : tensor<3xf32>
  %b = num.param "B" dense<[1.0, -2.0, 0.5]> : tensor<3xf32> -> tensor<3xf32>
  %s = num.add %x, %b {minun.probe = array<i64: 0, 7>} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %m = num.mul %s, %s : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %m : tensor<3xf32>
}
// CHECK:      func.func private @minun_profile(i32, f32) -> ()
// CHECK:      scf.for
// CHECK:        %[[X:.*]] = memref.load %x
// CHECK-NEXT:   func.call @minun_profile(%{{.*}}, %[[X]]) : (i32, f32) -> ()
// The sum is read twice by the product: it is stored once, probed from its buffer.
// CHECK:      scf.for
// CHECK:        memref.store %{{.*}}, %[[SUM:.*]][%{{.*}}] : memref<3xf32>
// CHECK:      scf.for
// CHECK:        %[[V:.*]] = memref.load %[[SUM]]
// CHECK-NEXT:   func.call @minun_profile(%{{.*}}, %[[V]]) : (i32, f32) -> ()

// C:      minun_profile(0, x[{{.*}}]);
// C:      minun_profile(7, {{.*}});

// RT:     void minun_profile(int32_t id, float v);
