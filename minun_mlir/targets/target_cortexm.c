/* target_cortexm.c: bare-metal start-up and target API for the Cortex-M boards in QEMU.
 *
 * One file instead of CMSIS: vector table, reset handler (copy .data, clear .bss, enable
 * the FPU on hard-float builds, paint the stack), fault reporting, semihosting output and
 * exit, and the two latency marker functions that the QEMU plugin watches.
 *
 * Memory symbols come from cortexm.ld. The stack starts at the top of RAM and grows down
 * towards the end of .bss; everything between is painted with MINUN_STACK_PAINT at reset
 * and scanned at exit to report the stack high-water mark as "@minun stack <bytes>".
 */
#include "minun_target.h"

#define MINUN_STACK_PAINT 0xC5A5C5A5u

#define SYS_WRITE0 0x04
#define SYS_EXIT 0x18
#define ADP_STOPPED_APPLICATION_EXIT 0x20026
#define ADP_STOPPED_RUNTIME_ERROR 0x20023

extern uint32_t _sidata[], _sdata[], _edata[], _sbss[], _ebss[], _estack[];
int main(void);
void Reset_Handler(void);
void minun_fault_entry(void);

/* ---- semihosting ------------------------------------------------------------------ */

static int minun_semihost(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ __volatile__("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

/* Output is buffered per line: one semihosting trap per line instead of per character. */
static char minun_line[96];
static unsigned minun_line_len;

void minun_flush(void)
{
    if (minun_line_len) {
        minun_line[minun_line_len] = 0;
        minun_semihost(SYS_WRITE0, minun_line);
        minun_line_len = 0;
    }
}

void minun_putc(char c)
{
    minun_line[minun_line_len++] = c;
    if (c == '\n' || minun_line_len == sizeof(minun_line) - 1)
        minun_flush();
}

static void minun_stop(int code) __attribute__((noreturn));
static void minun_stop(int code)
{
    minun_puts("@minun exit ");
    minun_print_i32(code);
    minun_putc('\n');
    minun_flush();
    /* 32-bit ARM semihosting SYS_EXIT takes the reason code in r1: QEMU exits with
     * status 0 for ApplicationExit and 1 otherwise (the exact code is in the meta line). */
    minun_semihost(SYS_EXIT, (const void *)(uintptr_t)(code == 0 ? ADP_STOPPED_APPLICATION_EXIT
                                                                 : ADP_STOPPED_RUNTIME_ERROR));
    for (;;) {
    }
}

/* ---- latency markers --------------------------------------------------------------- */

volatile uint32_t minun_marker_state;

__attribute__((noinline)) void minun_marker_start(void)
{
    minun_marker_state = 1u;
}

__attribute__((noinline)) void minun_marker_end(void)
{
    minun_marker_state = 2u;
}

/* ---- start-up, exit, faults ------------------------------------------------------- */

void minun_exit(int code)
{
    /* Scan before printing so the report does not include the printing's own frames. */
    uint32_t *p = _ebss;
    while (p < _estack && *p == MINUN_STACK_PAINT)
        p++;
    uint32_t used = (uint32_t)((uintptr_t)_estack - (uintptr_t)p);
    if (p == _ebss)
        minun_puts("@minun stack-overflow\n");
    minun_puts("@minun stack ");
    minun_print_u32(used);
    minun_putc('\n');
    minun_stop(code);
}

void Reset_Handler(void)
{
    uint32_t *src = _sidata, *dst = _sdata;
    while (dst < _edata)
        *dst++ = *src++;
    for (dst = _sbss; dst < _ebss; dst++)
        *dst = 0;
#if defined(__ARM_FP)
    /* Hard-float build: grant full access to coprocessors 10 and 11 (the FPU). */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm__ __volatile__("dsb\n\tisb" ::: "memory");
#endif
    uint32_t sp;
    __asm__ __volatile__("mov %0, sp" : "=r"(sp));
    /* Paint up to a small margin below the current frame (volatile: no memset call). */
    for (volatile uint32_t *p = _ebss; (uintptr_t)p < sp - 64u; p++)
        *p = MINUN_STACK_PAINT;
    minun_exit(main());
}

/* Called by minun_fault_entry with the exception stack frame and the exception number. */
void minun_fault(const uint32_t *frame, uint32_t ipsr) __attribute__((used, noreturn));
void minun_fault(const uint32_t *frame, uint32_t ipsr)
{
    minun_puts("\n@minun fault exception=");
    minun_print_u32(ipsr & 0x1ffu);
    minun_puts(" pc=0x");
    minun_print_hex32(frame[6]);
    minun_putc('\n');
    minun_stop(99);
}

__attribute__((naked)) void minun_fault_entry(void)
{
    __asm__ __volatile__("mrs r0, msp\n\t"
                         "mrs r1, ipsr\n\t"
                         "ldr r2, =minun_fault\n\t"
                         "bx r2\n\t"
                         ".ltorg");
}

typedef void (*minun_vector_t)(void);

__attribute__((section(".vectors"), used)) const minun_vector_t minun_vectors[16] = {
    (minun_vector_t)(uintptr_t)_estack, /* initial stack pointer */
    Reset_Handler,
    minun_fault_entry, /* NMI */
    minun_fault_entry, /* HardFault */
    minun_fault_entry, /* MemManage */
    minun_fault_entry, /* BusFault */
    minun_fault_entry, /* UsageFault */
    0, 0, 0, 0,
    minun_fault_entry, /* SVCall */
    minun_fault_entry, /* DebugMonitor */
    0,
    minun_fault_entry, /* PendSV */
    minun_fault_entry, /* SysTick */
};
