/* target_print.c: integer printing shared by all targets (no printf on the targets). */
#include "minun_target.h"

void minun_puts(const char *s)
{
    while (*s)
        minun_putc(*s++);
}

void minun_print_u32(uint32_t v)
{
    char buf[10];
    int n = 0;
    do {
        buf[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (n)
        minun_putc(buf[--n]);
}

void minun_print_i32(int32_t v)
{
    if (v < 0) {
        minun_putc('-');
        /* Negate in unsigned arithmetic: no overflow for INT32_MIN. */
        minun_print_u32(0u - (uint32_t)v);
    } else {
        minun_print_u32((uint32_t)v);
    }
}

void minun_print_hex32(uint32_t v)
{
    static const char digits[] = "0123456789abcdef";
    int shift;
    for (shift = 28; shift >= 0; shift -= 4)
        minun_putc(digits[(v >> shift) & 0xfu]);
}
