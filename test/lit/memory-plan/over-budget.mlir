// A budget the live bytes fit but the placement does not: an error, not a silent overrun.
// %a and %b (8 bytes each) are never live together: 8 bytes live at most; naive keeps one
// buffer each (16 bytes), greedy shares (8 bytes).
// RUN: not minun-opt %s -p 'memory-plan{planner=naive budget=12}' 2>&1 | filecheck %s
// RUN: minun-opt %s -p 'memory-plan{planner=greedy budget=12}' | filecheck %s --check-prefix=GREEDY
// CHECK: error: memory-plan: planner naive places the buffers in 16 bytes, more than the budget 12, although at most 8 are live at once: use planner=shiftry (it moves buffers to fit)
// GREEDY: minun.scratch_bytes = 8

func.func @minun_predict(%x: memref<4xi16>, %out: memref<4xi16>) -> i32 {
  %a = memref.alloc() : memref<4xi16>
  %b = memref.alloc() : memref<4xi16>
  %i0 = arith.constant 0 : index
  %v = memref.load %x[%i0] : memref<4xi16>
  memref.store %v, %a[%i0] : memref<4xi16>
  %w = memref.load %a[%i0] : memref<4xi16>
  memref.store %w, %b[%i0] : memref<4xi16>
  %u = memref.load %b[%i0] : memref<4xi16>
  memref.store %u, %out[%i0] : memref<4xi16>
  %r = arith.constant 0 : i32
  func.return %r : i32
}
