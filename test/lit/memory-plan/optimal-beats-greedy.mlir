// Where greedy first fit is not optimal. B (64 B) lives with C (48 B); then D (48 B)
// with C; then A (64 B) with D. The tightest stack is 112 B. Greedy places the 64-byte
// buffers first, both at 0 (they never meet), then C above B at 64 and D above C and A at
// 112: 160 B. The optimal planner puts C at 0, B above it at 48, D at 64 and A at 0:
// 112 B, the lower bound.
// RUN: minun-opt %s -p 'memory-plan{planner=optimal}' | filecheck %s
// RUN: minun-opt %s -p 'memory-plan{planner=greedy}' | filecheck %s --check-prefix=GREEDY

func.func @minun_predict(%x: memref<4xi16>, %out: memref<4xi16>) -> i32 {
  %A = memref.alloc() : memref<32xi16>
  %B = memref.alloc() : memref<32xi16>
  %C = memref.alloc() : memref<24xi16>
  %D = memref.alloc() : memref<24xi16>
  %i0 = arith.constant 0 : index
  %v = memref.load %x[%i0] : memref<4xi16>
  memref.store %v, %C[%i0] : memref<24xi16>
  memref.store %v, %B[%i0] : memref<32xi16>
  %b = memref.load %B[%i0] : memref<32xi16>
  memref.store %b, %D[%i0] : memref<24xi16>
  %c = memref.load %C[%i0] : memref<24xi16>
  memref.store %c, %A[%i0] : memref<32xi16>
  %a = memref.load %A[%i0] : memref<32xi16>
  %d = memref.load %D[%i0] : memref<24xi16>
  %ad = arith.addi %a, %d : i16
  memref.store %ad, %out[%i0] : memref<4xi16>
  %r = arith.constant 0 : i32
  func.return %r : i32
}
// CHECK:      type = memref<112xi8>
// CHECK:      attributes {minun.scratch_bytes = 112 : i64}
// CHECK:      %[[OA:.*]] = arith.constant 0 : index
// CHECK-NEXT: %A = memref.view %minun_scratch[%[[OA]]][]
// CHECK-NEXT: %[[OB:.*]] = arith.constant 48 : index
// CHECK-NEXT: %B = memref.view %minun_scratch[%[[OB]]][]
// CHECK-NEXT: %[[OC:.*]] = arith.constant 0 : index
// CHECK-NEXT: %C = memref.view %minun_scratch[%[[OC]]][]
// CHECK-NEXT: %[[OD:.*]] = arith.constant 64 : index
// CHECK-NEXT: %D = memref.view %minun_scratch[%[[OD]]][]

// GREEDY:     type = memref<160xi8>
// GREEDY:     attributes {minun.scratch_bytes = 160 : i64}
