@ Hand-written reference kernel (docs/codegen.md, "Kernels"): the Cortex-M4 SMLAD loop.
@ int32_t hand_dot16(const int16_t *w, const int16_t *x, int n): sum of w[i] * x[i] for
@ i < n modulo 2^32, n a positive multiple of 4: two words of each array per step
@ (post-indexed loads, unaligned allowed), two SMLADs.
    .syntax unified
    .thumb
    .section .text.hand_dot16,"ax",%progbits
    .global hand_dot16
    .type hand_dot16, %function
    .thumb_func
hand_dot16:
    push {r4, r5, r6, r7}
    movs r3, #0
1:
    ldr r4, [r0], #4
    ldr r5, [r1], #4
    ldr r6, [r0], #4
    ldr r7, [r1], #4
    smlad r3, r4, r5, r3
    smlad r3, r6, r7, r3
    subs r2, r2, #4
    bne 1b
    mov r0, r3
    pop {r4, r5, r6, r7}
    bx lr
    .size hand_dot16, .-hand_dot16
