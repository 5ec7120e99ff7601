; Hand-written reference kernel (docs/codegen.md, "Kernels"): the AVR multiply-accumulate
; loop a compiler should reach. int32_t hand_dot16(const int16_t *w, const int16_t *x,
; uint8_t n): sum of w[i] * x[i] for i < n (n >= 1) modulo 2^32, w in program memory
; (lpm Z+), x in RAM (ld X+), the 16x16 product as four 8x8 ones (AVR201).
; avr-gcc ABI: w in r25:r24, x in r23:r22, n in r20; result in r25:r22.

    .section .text.hand_dot16,"ax",@progbits
    .global hand_dot16
    .type hand_dot16, @function
hand_dot16:
    push r16
    push r17
    movw r30, r24           ; Z = w
    movw r26, r22           ; X = x
    mov r16, r20            ; counter
    clr r17                 ; zero
    clr r22
    clr r23
    movw r24, r22           ; acc = 0
1:
    lpm r18, Z+
    lpm r19, Z+
    ld r20, X+
    ld r21, X+
    muls r19, r21           ; high x high, signed
    add r24, r0
    adc r25, r1
    mul r18, r20            ; low x low, unsigned
    add r22, r0
    adc r23, r1
    adc r24, r17
    adc r25, r17
    mulsu r19, r20          ; high(w) x low(x): carry = sign of the partial product
    sbc r25, r17
    add r23, r0
    adc r24, r1
    adc r25, r17
    mulsu r21, r18          ; high(x) x low(w)
    sbc r25, r17
    add r23, r0
    adc r24, r1
    adc r25, r17
    dec r16
    brne 1b
    clr r1
    pop r17
    pop r16
    ret
    .size hand_dot16, .-hand_dot16
