/* simavr_host.c: run an ATmega328P firmware in simavr and report exact cycle counts.
 *
 * Usage: minun-simavr FIRMWARE.elf STACK_LOW
 *   STACK_LOW  data-space address of the first byte after static data (__heap_start),
 *              given by the Python side from the ELF symbol table.
 *
 * Why a host program rather than the simavr executable: it can watch I/O registers and
 * read the cycle counter exactly. The firmware talks to it through spare registers
 * (see target_avr.c): GPIOR0 = latency markers, GPIOR1 = output characters,
 * GPIOR2 = exit code. Bytes the firmware sends on UART0 (Arduino's Serial, as in the
 * sketch of `--format arduino`) are output characters too. Firmware output is copied to
 * stdout; the host adds meta lines:
 *   "@minun cycles N"    once per start/end marker pair, in program order
 *   "@minun stack N"     stack high-water mark in bytes (RAM painted before the run)
 *   "@minun stack-overflow" if the stack reached static data
 *   "@minun exit N"      the firmware's exit code
 * The run ends when the firmware sleeps with interrupts disabled (`cli; sleep`).
 * Exit status: 0 run finished, 2 usage/load error, 3 the simulated CPU crashed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_avr.h"
#include "sim_elf.h"
#include "sim_io.h"
#include "avr_uart.h"

#define STACK_PAINT 0xA5
#define IO_GPIOR0 0x1E
#define IO_GPIOR1 0x2A
#define IO_GPIOR2 0x2B

static avr_cycle_count_t marker_start;
static int marker_active;
static int exit_code;
static int last_char = '\n';

static void on_marker(struct avr_t *avr, avr_io_addr_t addr, uint8_t v, void *param)
{
    (void)addr;
    (void)param;
    if (v == 1) {
        marker_start = avr->cycle;
        marker_active = 1;
    } else if (v == 2 && marker_active) {
        if (last_char != '\n')
            putchar('\n');
        printf("@minun cycles %llu\n", (unsigned long long)(avr->cycle - marker_start));
        last_char = '\n';
        marker_active = 0;
    }
}

static void on_putc(struct avr_t *avr, avr_io_addr_t addr, uint8_t v, void *param)
{
    (void)avr;
    (void)addr;
    (void)param;
    putchar(v);
    last_char = v;
}

/* A byte sent on UART0 (simavr models the baud rate: it arrives when sent). */
static void on_uart(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    putchar((int)(value & 0xFF));
    last_char = (int)(value & 0xFF);
}

static void on_exit_code(struct avr_t *avr, avr_io_addr_t addr, uint8_t v, void *param)
{
    (void)avr;
    (void)addr;
    (void)param;
    exit_code = v;
}

/* simavr logs some messages to stdout; keep stdout for the firmware's output. */
static void quiet_logger(struct avr_t *avr, const int level, const char *format, va_list ap)
{
    (void)avr;
    if (level <= LOG_WARNING)
        vfprintf(stderr, format, ap);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s FIRMWARE.elf STACK_LOW\n", argv[0]);
        return 2;
    }
    unsigned long stack_low = strtoul(argv[2], NULL, 0);
    avr_global_logger_set(quiet_logger);

    elf_firmware_t fw;
    memset(&fw, 0, sizeof(fw));
    if (elf_read_firmware(argv[1], &fw) != 0) {
        fprintf(stderr, "cannot read firmware %s\n", argv[1]);
        return 2;
    }
    avr_t *avr = avr_make_mcu_by_name("atmega328p");
    if (!avr) {
        fprintf(stderr, "simavr does not know atmega328p\n");
        return 2;
    }
    avr_init(avr);
    avr->log = LOG_WARNING;
    avr_load_firmware(avr, &fw);
    avr->frequency = 16000000;
    if (stack_low > avr->ramend) {
        fprintf(stderr, "static data ends at 0x%lx, beyond RAM end 0x%x\n", stack_low,
                (unsigned)avr->ramend);
        return 2;
    }
    for (unsigned long a = stack_low; a <= avr->ramend; a++)
        avr->data[a] = STACK_PAINT;

    avr_register_io_write(avr, AVR_IO_TO_DATA(IO_GPIOR0), on_marker, NULL);
    avr_register_io_write(avr, AVR_IO_TO_DATA(IO_GPIOR1), on_putc, NULL);
    avr_register_io_write(avr, AVR_IO_TO_DATA(IO_GPIOR2), on_exit_code, NULL);
    uint32_t uart_flags = 0; /* UART0's bytes go to stdout here, not to simavr's log */
    avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &uart_flags);
    uart_flags &= ~AVR_UART_FLAG_STDIO;
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &uart_flags);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT),
                            on_uart, NULL);

    int state = cpu_Running;
    while (state != cpu_Done && state != cpu_Crashed)
        state = avr_run(avr);

    if (last_char != '\n')
        putchar('\n');
    unsigned long a = stack_low;
    while (a <= avr->ramend && avr->data[a] == STACK_PAINT)
        a++;
    if (a == stack_low)
        printf("@minun stack-overflow\n");
    printf("@minun stack %lu\n", (unsigned long)avr->ramend + 1 - a);
    printf("@minun exit %d\n", exit_code);
    printf("@minun total-cycles %llu\n", (unsigned long long)avr->cycle);
    fflush(stdout);
    if (state == cpu_Crashed) {
        fprintf(stderr, "the simulated AVR crashed at pc=0x%x\n", (unsigned)avr->pc);
        return 3;
    }
    return 0;
}
