/* What the posit runtime's microcontroller test programs share: reading the cases' arrays
 * from flash (the Uno keeps them there) and printing a value in hex. */
#ifndef MCU_IO_H
#define MCU_IO_H

#include "minun_target.h"

static uint32_t rd32(const uint32_t *p, int i)
{
    uint32_t v;
    minun_copy_from_flash(&v, p + i, sizeof v);
    return v;
}

static uint8_t rd8(const uint8_t *p, int i)
{
    uint8_t v;
    minun_copy_from_flash(&v, p + i, sizeof v);
    return v;
}

static void out(uint32_t v)
{
    minun_print_hex32(v);
    minun_putc(' ');
}

#endif
