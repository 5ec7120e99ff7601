// The `c` target (lowering/c_target.py): it prints only L4 (cemit) IR, one file or all
// three, for a known profile; a module not yet through select-target-kernels gets the
// profile's kernels first, so `-t c` prints what the compile writes (the same dot kernels
// with and without the pass in -p); a module whose kernels were selected for another
// profile is refused rather than printed with the wrong kernels.
// RUN: minun-opt %S/Inputs/conv-dense-16.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{profile=cortex-m file=source}' | filecheck %s --check-prefix=KERNELS
// RUN: minun-opt %S/Inputs/conv-dense-16.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=cortex-m}' -t 'c{profile=cortex-m file=source}' | filecheck %s --check-prefix=KERNELS
// RUN: not minun-opt %S/Inputs/conv-dense-16.mlir -p 'lower-to-loops,memory-plan,lower-to-emitc,select-target-kernels{target=avr}' -t 'c{profile=cortex-m}' 2>&1 | filecheck %s --check-prefix=OTHER
// RUN: not minun-opt %S/Inputs/conv-dense-16.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{profile=nope}' 2>&1 | filecheck %s --check-prefix=PROFILE
// RUN: not minun-opt %S/Inputs/conv-dense-16.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t 'c{file=nope}' 2>&1 | filecheck %s --check-prefix=FILE
// RUN: not minun-opt %S/Inputs/conv-dense-16.mlir -p lower-to-loops -t c 2>&1 | filecheck %s --check-prefix=LEVEL
// RUN: minun-opt %S/Inputs/conv-dense-16.mlir -p lower-to-loops,memory-plan,lower-to-emitc -t c | filecheck %s --check-prefix=ALL

// KERNELS: minun_dot16_rows_dsp(
// KERNELS: minun_dot16_mv_dsp(
// OTHER: error: C printer: the module's kernels were selected for avr, not cortex-m
// PROFILE: error: unknown C profile 'nope' (known: x86, avr, cortex-m)
// FILE: error: -t c: file must be all, header, source, runtime
// LEVEL: error: -t c prints L4 (cemit) IR, but the module holds 'memref.global'
// ALL: // ----- model.h -----
// ALL: // ----- model.c -----
// ALL: // ----- minun_runtime.h -----
