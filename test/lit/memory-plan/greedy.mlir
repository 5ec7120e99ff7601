// greedy: every alloc becomes a view of one scratch global, at a byte offset chosen by
// first fit over live ranges. Here %a (16 B) dies when %b is written, so %c reuses its
// bytes; %b (8 B) is live with both and goes after them. naive keeps the allocs.
// RUN: minun-opt %s -p 'memory-plan{planner=greedy}' | filecheck %s
// RUN: minun-opt %s -p 'memory-plan{planner=naive}' | filecheck %s --check-prefix=NAIVE

func.func @minun_predict(%x: memref<4xi16>, %out: memref<4xi16>) -> i32 {
  %a = memref.alloc() : memref<4xi32>
  %b = memref.alloc() : memref<4xi16>
  %c = memref.alloc() : memref<8xi16>
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %v = memref.load %x[%i0] : memref<4xi16>
  %w = arith.extsi %v : i16 to i32
  memref.store %w, %a[%i0] : memref<4xi32>
  %w2 = memref.load %a[%i0] : memref<4xi32>
  %n = arith.trunci %w2 : i32 to i16
  memref.store %n, %b[%i0] : memref<4xi16>
  memref.store %n, %c[%i1] : memref<8xi16>
  %u = memref.load %c[%i1] : memref<8xi16>
  %t = memref.load %b[%i0] : memref<4xi16>
  memref.store %u, %out[%i0] : memref<4xi16>
  memref.store %t, %out[%i1] : memref<4xi16>
  %r = arith.constant 0 : i32
  func.return %r : i32
}
// CHECK:      "memref.global"() <{sym_name = "minun_scratch", type = memref<24xi8>, initial_value, sym_visibility = "private", alignment = 4 : i64}>
// CHECK:      func.func @minun_predict({{.*}} attributes {minun.scratch_bytes = 24 : i64} {
// CHECK-NEXT:   %minun_scratch = memref.get_global @minun_scratch : memref<24xi8>
// CHECK-NEXT:   %[[O0:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %a = memref.view %minun_scratch[%[[O0]]][] : memref<24xi8> to memref<4xi32>
// CHECK-NEXT:   %[[O16:.*]] = arith.constant 16 : index
// CHECK-NEXT:   %b = memref.view %minun_scratch[%[[O16]]][] : memref<24xi8> to memref<4xi16>
// CHECK-NEXT:   %[[O0b:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %c = memref.view %minun_scratch[%[[O0b]]][] : memref<24xi8> to memref<8xi16>
// CHECK-NOT:    memref.alloc

// NAIVE-NOT:  minun_scratch
// NAIVE:      %a = memref.alloc() : memref<4xi32>
// NAIVE-NEXT: %b = memref.alloc() : memref<4xi16>
// NAIVE-NEXT: %c = memref.alloc() : memref<8xi16>
