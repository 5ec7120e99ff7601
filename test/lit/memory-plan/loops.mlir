// A buffer written before a loop and read in it (%h) lives across the whole loop; a
// temporary written and read within each iteration (%t1, then %t2) lives only there,
// so %t1 and %t2 share memory but never %h's.
// RUN: minun-opt %s -p memory-plan | filecheck %s

func.func @minun_predict(%x: memref<4xi16>, %out: memref<4xi16>) -> i32 {
  %h = memref.alloc() : memref<4xi16>
  %t1 = memref.alloc() : memref<4xi16>
  %t2 = memref.alloc() : memref<4xi16>
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %i4 = arith.constant 4 : index
  %z = arith.constant 0 : i16
  memref.store %z, %h[%i0] : memref<4xi16>
  scf.for %k = %i0 to %i4 step %i1 {
    %v = memref.load %x[%k] : memref<4xi16>
    memref.store %v, %t1[%i0] : memref<4xi16>
    %a = memref.load %t1[%i0] : memref<4xi16>
    memref.store %a, %t2[%i0] : memref<4xi16>
    %b = memref.load %t2[%i0] : memref<4xi16>
    %c = memref.load %h[%i0] : memref<4xi16>
    %d = arith.addi %b, %c : i16
    memref.store %d, %h[%i0] : memref<4xi16>
  }
  %e = memref.load %h[%i0] : memref<4xi16>
  memref.store %e, %out[%i0] : memref<4xi16>
  %r = arith.constant 0 : i32
  func.return %r : i32
}
// CHECK:      type = memref<16xi8>
// CHECK:      %[[A:.*]] = arith.constant 0 : index
// CHECK-NEXT: %h = memref.view %minun_scratch[%[[A]]][]
// CHECK-NEXT: %[[B:.*]] = arith.constant 8 : index
// CHECK-NEXT: %t1 = memref.view %minun_scratch[%[[B]]][]
// CHECK-NEXT: %[[C:.*]] = arith.constant 8 : index
// CHECK-NEXT: %t2 = memref.view %minun_scratch[%[[C]]][]
