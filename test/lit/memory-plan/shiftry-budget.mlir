// shiftry under a budget it cannot reach even with moves: the error names the instruction
// and what is live there, like the budget check every planner runs first (which passes
// here: %a and %t need 24 bytes together). %a is written before the loop and read in it,
// so it lives across the loop and cannot be moved inside it (a copy there would run every
// iteration); it sits at 8 (%p held 0 when it was placed), and %t (16 bytes) fits neither below nor above it in 24.
// RUN: not minun-opt %s -p 'memory-plan{planner=shiftry budget=24}' 2>&1 | filecheck %s
// RUN: minun-opt %s -p 'memory-plan{planner=shiftry budget=32}' | filecheck %s --check-prefix=FITS

func.func @minun_predict(%x: memref<4xi16>, %out: memref<4xi16>) -> i32 {
  %p = memref.alloc() : memref<4xi16>
  %a = memref.alloc() : memref<4xi16>
  %t = memref.alloc() : memref<8xi16>
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %i4 = arith.constant 4 : index
  %v = memref.load %x[%i0] : memref<4xi16>
  memref.store %v, %p[%i0] : memref<4xi16>
  %w = memref.load %p[%i0] : memref<4xi16>
  memref.store %w, %a[%i0] : memref<4xi16>
  %w2 = memref.load %p[%i0] : memref<4xi16>
  memref.store %w2, %out[%i0] : memref<4xi16>
  scf.for %k = %i0 to %i4 step %i1 {
    %y = memref.load %x[%k] : memref<4xi16>
    memref.store %y, %t[%k] : memref<8xi16>
    %u = memref.load %t[%k] : memref<8xi16>
    %s = memref.load %a[%i0] : memref<4xi16>
    %d = arith.addi %u, %s : i16
    memref.store %d, %out[%k] : memref<4xi16>
  }
  %r = arith.constant 0 : i32
  func.return %r : i32
}
// CHECK: error: model needs 32 bytes of RAM at instruction {{[0-9]+}} with planner shiftry, even after defragmentation (live: a 8 B, t 16 B); budget 24
// CHECK-NOT: Traceback
// FITS: minun.defrag_moves = 0 : i64, minun.scratch_bytes = 32 : i64
