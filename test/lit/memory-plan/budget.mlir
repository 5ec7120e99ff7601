// A RAM budget the buffers cannot meet is a diagnostic naming the peak and what is live.
// RUN: not minun-opt %s -p 'memory-plan{budget=20}' 2>&1 | filecheck %s

func.func @minun_predict(%x: memref<4xi16>, %out: memref<4xi16>) -> i32 {
  %a = memref.alloc() : memref<4xi32>
  %b = memref.alloc() : memref<4xi16>
  %i0 = arith.constant 0 : index
  %v = memref.load %x[%i0] : memref<4xi16>
  %w = arith.extsi %v : i16 to i32
  memref.store %w, %a[%i0] : memref<4xi32>
  memref.store %v, %b[%i0] : memref<4xi16>
  %w2 = memref.load %a[%i0] : memref<4xi32>
  %u = memref.load %b[%i0] : memref<4xi16>
  memref.store %u, %out[%i0] : memref<4xi16>
  %r = arith.constant 0 : i32
  func.return %r : i32
}
// CHECK: error: model needs 24 bytes of RAM at instruction {{[0-9]+}} (live: a 16 B, b 8 B); budget 20
// CHECK-NOT: Traceback
