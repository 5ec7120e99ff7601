// MinUn Fig. 4: A, B, C, D of 64 B each are written, A and C are freed, then E of 128 B
// is written while B and D are still live. A heap that allocates in program order (first
// fit: A, B, C, D at 0, 64, 128, 192) finds no 128-byte hole when E comes (the holes of A
// and C are 64 B each, apart) and needs 384 B, here as much as one buffer each (naive).
// The tightest stack is 256 B (A, B, C, D live together; B, D, E live together), and the
// optimal planner reaches it by keeping A and C adjacent, so that E takes their place.
// Greedy first fit places the largest buffer first (E at 0) and also reaches 256 B here
// (test/lit/memory-plan/optimal-beats-greedy.mlir is a case where it does not).
// RUN: minun-opt %s -p 'memory-plan{planner=optimal}' | filecheck %s
// RUN: minun-opt %s -p 'memory-plan{planner=optimal time-limit=1}' | filecheck %s
// RUN: minun-opt %s -p 'memory-plan{planner=greedy}' | filecheck %s --check-prefix=GREEDY
// RUN: minun-opt %s -p 'memory-plan{planner=naive}' | filecheck %s --check-prefix=NAIVE

func.func @minun_predict(%x: memref<4xi16>, %out: memref<4xi16>) -> i32 {
  %A = memref.alloc() : memref<32xi16>
  %B = memref.alloc() : memref<32xi16>
  %C = memref.alloc() : memref<32xi16>
  %D = memref.alloc() : memref<32xi16>
  %E = memref.alloc() : memref<64xi16>
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %v = memref.load %x[%i0] : memref<4xi16>
  memref.store %v, %A[%i0] : memref<32xi16>
  memref.store %v, %B[%i0] : memref<32xi16>
  memref.store %v, %C[%i0] : memref<32xi16>
  memref.store %v, %D[%i0] : memref<32xi16>
  %a = memref.load %A[%i0] : memref<32xi16>
  %c = memref.load %C[%i0] : memref<32xi16>
  %ac = arith.addi %a, %c : i16
  memref.store %ac, %E[%i0] : memref<64xi16>
  %b = memref.load %B[%i0] : memref<32xi16>
  %d = memref.load %D[%i0] : memref<32xi16>
  %e = memref.load %E[%i0] : memref<64xi16>
  %bd = arith.addi %b, %d : i16
  memref.store %bd, %out[%i0] : memref<4xi16>
  memref.store %e, %out[%i1] : memref<4xi16>
  %r = arith.constant 0 : i32
  func.return %r : i32
}
// CHECK:      "memref.global"() <{sym_name = "minun_scratch", type = memref<256xi8>
// CHECK:      attributes {minun.scratch_bytes = 256 : i64}
// CHECK:      %[[OA:.*]] = arith.constant 0 : index
// CHECK-NEXT: %A = memref.view %minun_scratch[%[[OA]]][]
// CHECK-NEXT: %[[OB:.*]] = arith.constant 128 : index
// CHECK-NEXT: %B = memref.view %minun_scratch[%[[OB]]][]
// CHECK-NEXT: %[[OC:.*]] = arith.constant 64 : index
// CHECK-NEXT: %C = memref.view %minun_scratch[%[[OC]]][]
// CHECK-NEXT: %[[OD:.*]] = arith.constant 192 : index
// CHECK-NEXT: %D = memref.view %minun_scratch[%[[OD]]][]
// CHECK-NEXT: %[[OE:.*]] = arith.constant 0 : index
// CHECK-NEXT: %E = memref.view %minun_scratch[%[[OE]]][]

// GREEDY:     attributes {minun.scratch_bytes = 256 : i64}

// NAIVE-NOT:  minun_scratch
// NAIVE:      %A = memref.alloc() : memref<32xi16>
// NAIVE:      %E = memref.alloc() : memref<64xi16>
