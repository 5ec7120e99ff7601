// shiftry (Shiftry's Algorithms 15-17): sizes rounded up to blocks of the most frequent
// size (8 bytes here), each buffer at a multiple of its own block. %p and %a take 0 and
// 8; %t (16 bytes) starts when %p is dead, but its slots are multiples of 16 and [0, 16)
// still holds %a, so without a budget it goes to 16: 32 bytes (greedy: 24).
// With budget=24 placing %t at 16 overflows: the live buffers are compacted first, %a
// moves from 8 to 0 (a memref.copy from its old view to its new one, right before %t's
// first use; later uses read the new view) and %t goes to 8. The function counts the
// moves, and the C copies element by element.
// RUN: minun-opt %s -p 'memory-plan{planner=shiftry}' | filecheck %s
// RUN: minun-opt %s -p 'memory-plan{planner=shiftry budget=24}' | filecheck %s --check-prefix=MOVE
// RUN: minun-opt %s -p 'memory-plan{planner=shiftry budget=24},lower-to-emitc' -t 'c{file=source}' | filecheck %s --check-prefix=C

func.func @minun_predict(%x: memref<4xi16>, %out: memref<4xi16>) -> i32 {
  %p = memref.alloc() : memref<4xi16>
  %a = memref.alloc() : memref<4xi16>
  %t = memref.alloc() : memref<8xi16>
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %v = memref.load %x[%i0] : memref<4xi16>
  memref.store %v, %p[%i0] : memref<4xi16>
  %w = memref.load %p[%i0] : memref<4xi16>
  memref.store %w, %a[%i0] : memref<4xi16>
  %w2 = memref.load %p[%i0] : memref<4xi16>
  memref.store %w2, %t[%i1] : memref<8xi16>
  %u = memref.load %t[%i1] : memref<8xi16>
  %s = memref.load %a[%i0] : memref<4xi16>
  memref.store %u, %out[%i0] : memref<4xi16>
  memref.store %s, %out[%i1] : memref<4xi16>
  %r = arith.constant 0 : i32
  func.return %r : i32
}
// CHECK:      type = memref<32xi8>
// CHECK:      attributes {minun.defrag_moves = 0 : i64, minun.scratch_bytes = 32 : i64}
// CHECK:      %[[P:.*]] = arith.constant 0 : index
// CHECK-NEXT: %p = memref.view %minun_scratch[%[[P]]][]
// CHECK-NEXT: %[[A:.*]] = arith.constant 8 : index
// CHECK-NEXT: %a = memref.view %minun_scratch[%[[A]]][]
// CHECK-NEXT: %[[T:.*]] = arith.constant 16 : index
// CHECK-NEXT: %t = memref.view %minun_scratch[%[[T]]][]
// CHECK-NOT:  memref.copy

// MOVE:      type = memref<24xi8>
// MOVE:      attributes {minun.defrag_moves = 1 : i64, minun.scratch_bytes = 24 : i64}
// MOVE:      %[[A8:.*]] = arith.constant 8 : index
// MOVE-NEXT: %[[AOLD:.*]] = memref.view %minun_scratch[%[[A8]]][] : memref<24xi8> to memref<4xi16>
// MOVE-NEXT: %[[A0:.*]] = arith.constant 0 : index
// MOVE-NEXT: %[[ANEW:.*]] = memref.view %minun_scratch[%[[A0]]][] : memref<24xi8> to memref<4xi16>
// MOVE-NEXT: %[[T8:.*]] = arith.constant 8 : index
// MOVE-NEXT: %t = memref.view %minun_scratch[%[[T8]]][] : memref<24xi8> to memref<8xi16>
// MOVE:      memref.store %{{.*}}, %[[AOLD]][%{{.*}}]
// MOVE-NEXT: %w2 = memref.load %p
// MOVE-NEXT: "memref.copy"(%[[AOLD]], %[[ANEW]]) : (memref<4xi16>, memref<4xi16>) -> ()
// MOVE-NEXT: memref.store %w2, %t[
// MOVE:      memref.load %[[ANEW]][
// MOVE-NOT:  memref.load %[[AOLD]][

// C:      const int16_t w2 = minun_scratch.i16[0];
// C-NEXT: for (int i = 0; i < 4; i++) {
// C-NEXT:     minun_scratch.i16[i] = minun_scratch.i16[(i + 4)];
// C-NEXT: }
// C-NEXT: minun_scratch.i16[(1 + 4)] = w2;
