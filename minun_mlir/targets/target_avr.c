/* target_avr.c: AVR (ATmega328P under simavr) side of the target API.
 *
 * The simavr host program (simavr_host.c) watches three spare general-purpose I/O
 * registers; using them instead of the UART keeps output free of baud-rate timing and
 * needs no initialisation:
 *   GPIOR0 (I/O 0x1E): latency markers, 1 = start, 2 = end (see minun_target.h)
 *   GPIOR1 (I/O 0x2A): one output character per write
 *   GPIOR2 (I/O 0x2B): exit code, written just before the program stops
 * The program stops with `cli; sleep`: simavr ends the run when the CPU sleeps with
 * interrupts disabled (a plain return from main would spin forever in avr-libc's exit).
 */
#include "minun_target.h"

void minun_putc(char c)
{
    GPIOR1 = (uint8_t)c;
}

void minun_flush(void)
{
}

void minun_exit(int code)
{
    GPIOR2 = (uint8_t)code;
    __asm__ __volatile__("cli\n\tsleep" ::: "memory");
    for (;;) {
    }
}

/* A return from main goes through avr-libc's exit(), which runs the .fini sections with
 * main's return value still in r24: report it and stop the simulation. */
void minun_fini8(void) __attribute__((naked, used, section(".fini8")));
void minun_fini8(void)
{
    __asm__ __volatile__("out 0x2b, r24\n\tcli\n\tsleep");
}
