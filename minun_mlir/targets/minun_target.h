/* minun_target.h: the small API a program built by the minun target harness can use.
 *
 * The same program source runs on x86 (host gcc), AVR (simavr) and Cortex-M (QEMU).
 * Output goes through minun_putc (stdout on x86, a spare I/O register read by the
 * simavr host program on AVR, semihosting on Cortex-M); no printf on the targets
 * because newlib's printf alone costs ~20 KB of flash.
 *
 * Latency is measured between minun_marker_start() and minun_marker_end():
 * exact cycles on AVR, exact executed instructions on Cortex-M, nanoseconds on x86.
 * Markers may be used several times in one run; each start/end pair gives one figure.
 */
#ifndef MINUN_TARGET_H
#define MINUN_TARGET_H

#include <stdint.h>
#include <string.h>

void minun_putc(char c);
void minun_puts(const char *s);
void minun_print_i32(int32_t v);  /* decimal */
void minun_print_u32(uint32_t v); /* decimal */
void minun_print_hex32(uint32_t v); /* 8 lower-case hex digits, no prefix */
void minun_flush(void);
void minun_exit(int code) __attribute__((noreturn));

#if defined(__AVR__)
#include <avr/io.h>
#include <avr/pgmspace.h>
/* Markers are single `out` instructions to GPIOR0 (I/O 0x1E): the simavr host program
 * records the cycle counter on each write. Inline, so the overhead is one cycle each. */
#define minun_marker_start() __asm__ __volatile__("out 0x1e, %0" ::"r"((uint8_t)1) : "memory")
#define minun_marker_end() __asm__ __volatile__("out 0x1e, %0" ::"r"((uint8_t)2) : "memory")
/* Data that should stay in flash (program memory) instead of being copied to RAM. */
#define MINUN_FLASH PROGMEM
#define minun_copy_from_flash(dst, src, n) memcpy_P((dst), (src), (n))
#else
/* Out-of-line functions: the QEMU plugin counts instructions between their entry points.
 * They have different bodies so that GCC does not merge them (-Os, identical code folding). */
void minun_marker_start(void);
void minun_marker_end(void);
#define MINUN_FLASH
#define minun_copy_from_flash(dst, src, n) memcpy((dst), (src), (n))
#endif

#endif /* MINUN_TARGET_H */
