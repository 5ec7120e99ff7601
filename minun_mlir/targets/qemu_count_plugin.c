/* qemu_count_plugin.c: count guest instructions executed between two marker functions.
 *
 * Arguments (from the harness): start=<addr>,end=<addr>,out=<file>, where the addresses
 * are the entry points of minun_marker_start / minun_marker_end read from the ELF.
 *
 * Every translation block adds its instruction count to a running total with an inline
 * op (no callback, so QEMU stays fast). Blocks that begin at a marker entry get a callback
 * instead, which snapshots the total before adding the block. The figure written per
 * start/end pair is therefore exactly the number of instructions executed from the first
 * instruction of minun_marker_start (inclusive) to the first instruction of
 * minun_marker_end (exclusive). Marker functions are only entered by calls, so their entry
 * always starts a block; a marker found inside a block is reported as an error line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static uint64_t total;
static uint64_t start_addr = UINT64_MAX, end_addr = UINT64_MAX;
static uint64_t started_at;
static int active;
static FILE *out;

enum { MARK_START = 1, MARK_END = 2 };

static void on_marker(unsigned int vcpu_index, void *udata)
{
    uintptr_t packed = (uintptr_t)udata;
    uint64_t n_insns = packed >> 2;
    (void)vcpu_index;
    if ((packed & 3u) == MARK_START) {
        started_at = total;
        active = 1;
    } else if (active) {
        fprintf(out, "count %" PRIu64 "\n", total - started_at);
        fflush(out);
        active = 0;
    }
    total += n_insns;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    uint64_t pc = qemu_plugin_tb_vaddr(tb);
    size_t n = qemu_plugin_tb_n_insns(tb);
    (void)id;
    for (size_t i = 1; i < n; i++) {
        uint64_t a = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i));
        if (a == start_addr || a == end_addr) {
            fprintf(out, "error marker at 0x%" PRIx64 " inside a translation block\n", a);
            fflush(out);
        }
    }
    if (pc == start_addr || pc == end_addr) {
        uintptr_t packed = ((uintptr_t)n << 2) | (pc == start_addr ? MARK_START : MARK_END);
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_marker, QEMU_PLUGIN_CB_NO_REGS,
                                             (void *)packed);
    } else {
        qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &total, n);
    }
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    const char *path = NULL;
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "start=", 6) == 0)
            start_addr = strtoull(argv[i] + 6, NULL, 0);
        else if (strncmp(argv[i], "end=", 4) == 0)
            end_addr = strtoull(argv[i] + 4, NULL, 0);
        else if (strncmp(argv[i], "out=", 4) == 0)
            path = argv[i] + 4;
    }
    out = path ? fopen(path, "w") : NULL;
    if (!out) {
        fprintf(stderr, "minun count plugin: needs out=<writable file>\n");
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    return 0;
}
