// Bad options and unsupported ops are diagnostics with a non-zero exit, no traceback.
// RUN: not minun-opt %s -p 'quantize{bits=12}' 2>&1 | filecheck %s --check-prefixes=ALL,BITS
// RUN: not minun-opt %s -p 'quantize{rounding=up}' 2>&1 | filecheck %s --check-prefixes=ALL,ROUND
// RUN: not minun-opt %s -p 'quantize{repr=posit7}' 2>&1 | filecheck %s --check-prefixes=ALL,REPR
// RUN: not minun-opt %s -p 'quantize{scales=maxscale demote=W}' 2>&1 | filecheck %s --check-prefixes=ALL,MIXED
// RUN: not minun-opt %s -p 'quantize{bits=16}' 2>&1 | filecheck %s --check-prefixes=ALL,LOGSOFTMAX

func.func @main() -> tensor<4x2xf32> {
  %x = minun.input "X" [-1.0, 1.0] : tensor<4x2xf32>
  %s = minun.log_softmax %x {axis = 0 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %s : tensor<4x2xf32>
}
// ALL-NOT: Traceback
// BITS: error: quantize: bits must be 8, 16 or 32, got 12
// ROUND: error: quantize: rounding must be one of trunc, floor, nearest, got 'up'
// REPR: error: unknown number representation 'posit7' (known: bfloat16, fixed, float32, posit, zero-skew)
// MIXED: error: quantize: mixed bitwidths need scales=data-driven
// RUN: not minun-opt %s -p 'quantize{input-bits=12}' 2>&1 | filecheck %s --check-prefixes=ALL,INBITS
// RUN: not minun-opt %s -p 'quantize{repr=float32 input-bits=8}' 2>&1 | filecheck %s --check-prefixes=ALL,INFLOAT
// INBITS: error: quantize: input-bits must be 8, 16 or 32, got 12
// INFLOAT: error: quantize: input-bits is for repr=fixed
// LOGSOFTMAX: errors.mlir:10:3: error: minun.log_softmax: log_softmax over axis 0 of a 2-D tensor: only the last axis is supported
