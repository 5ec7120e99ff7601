/* simavr_host.c: run an ATmega328P firmware in simavr and report exact cycle counts.
 *
 * Usage: minun-simavr FIRMWARE.elf STACK_LOW [LAYERS]
 *   STACK_LOW  data-space address of the first byte after static data (__heap_start),
 *              given by the Python side from the ELF symbol table.
 *   LAYERS     a per-layer profile (minun_mlir/profile.py): a file whose first line is the
 *              number of buckets and whose other lines are "ADDRESS BUCKET" (flash byte
 *              addresses). Each instruction executed between the markers adds the cycles it
 *              took to a bucket: its address's, or for an address not listed (a library
 *              routine, a helper that was not inlined) the bucket of the last listed one.
 *              The buckets add up to the "@minun cycles" figure exactly; after it, the host
 *              prints "@minun layers N0 N1 ...". The firmware is the same either way.
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

#define MAX_FLASH (128 * 1024)
#define MAX_BUCKETS 4096
static short bucket_of[MAX_FLASH / 2]; /* by word address; -1: the current bucket */
static avr_cycle_count_t bucket_cycles[MAX_BUCKETS];
static int n_buckets, current_bucket;
static int exit_code;
static int last_char = '\n';

static void on_marker(struct avr_t *avr, avr_io_addr_t addr, uint8_t v, void *param)
{
    (void)addr;
    (void)param;
    if (v == 1) {
        marker_start = avr->cycle;
        marker_active = 1;
        memset(bucket_cycles, 0, sizeof bucket_cycles);
        current_bucket = 0;
    } else if (v == 2 && marker_active) {
        if (last_char != '\n')
            putchar('\n');
        printf("@minun cycles %llu\n", (unsigned long long)(avr->cycle - marker_start));
        if (n_buckets) {
            printf("@minun layers");
            for (int b = 0; b < n_buckets; b++)
                printf(" %llu", (unsigned long long)bucket_cycles[b]);
            printf("\n");
        }
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

/* The LAYERS file (see the top); returns 0, or 2 with a message. */
static int read_layers(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long addr;
    int bucket;
    if (!f || fscanf(f, "%d", &n_buckets) != 1 || n_buckets < 1 || n_buckets > MAX_BUCKETS) {
        fprintf(stderr, "cannot read the layer map %s\n", path);
        return 2;
    }
    memset(bucket_of, 0xff, sizeof bucket_of);
    while (fscanf(f, "%lx %d", &addr, &bucket) == 2) {
        if (addr >= MAX_FLASH || bucket < 0 || bucket >= n_buckets) {
            fprintf(stderr, "bad line in the layer map %s: %lx %d\n", path, addr, bucket);
            return 2;
        }
        bucket_of[addr / 2] = (short)bucket;
    }
    fclose(f);
    return 0;
}

/* One instruction (avr_run executes one), its cycles added to its bucket. */
static int run_attributed(avr_t *avr)
{
    avr_flashaddr_t pc = avr->pc;
    avr_cycle_count_t before = avr->cycle;
    int state = avr_run(avr);
    if (marker_active) { /* the start marker's instruction counts, the end marker's not */
        if (pc < MAX_FLASH && bucket_of[pc / 2] >= 0)
            current_bucket = bucket_of[pc / 2];
        bucket_cycles[current_bucket] += avr->cycle - before;
    }
    return state;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s FIRMWARE.elf STACK_LOW [LAYERS]\n", argv[0]);
        return 2;
    }
    if (argc == 4 && read_layers(argv[3]) != 0)
        return 2;
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
        state = n_buckets ? run_attributed(avr) : avr_run(avr);

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
