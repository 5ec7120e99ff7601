// An unknown planner is a diagnostic listing the planners, before any input is read.
// RUN: not minun-opt %s -p 'memory-plan{planner=bogus}' 2>&1 | filecheck %s

func.func @minun_predict(%x: memref<4xi16>, %out: memref<4xi16>) -> i32 {
  %r = arith.constant 0 : i32
  func.return %r : i32
}
// CHECK: error: memory-plan: planner must be one of naive, greedy, {{.*}}got 'bogus'
// CHECK-NOT: Traceback
