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
 *
 * A per-layer profile (minun_mlir/profile.py) adds layers=<file>: its first line is the
 * number of buckets, the others "ADDRESS BUCKET". Every block then gets a callback (no
 * inline op) that adds each of its instructions to a bucket: the instruction's address's,
 * or for an address not listed (a library routine, a helper that was not inlined) the
 * bucket of the last listed one. After each "count N" line comes "layers N0 N1 ...",
 * whose sum is N exactly. The guest program is the same either way.
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

/* The per-layer profile: listed addresses (sorted) and their buckets. */
static uint64_t *layer_addr;
static int *layer_bucket;
static size_t n_listed;
static int n_buckets, current_bucket;
static uint64_t *bucket_insns;

struct tb_info {
    int mark;            /* MARK_START, MARK_END or 0 */
    size_t n;            /* instructions */
    int bucket[];        /* per instruction: its bucket, or -1 for the current one */
};

static int bucket_at(uint64_t addr)
{
    size_t lo = 0, hi = n_listed;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (layer_addr[mid] < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n_listed && layer_addr[lo] == addr ? layer_bucket[lo] : -1;
}

static void on_tb_profiled(unsigned int vcpu_index, void *udata)
{
    struct tb_info *t = udata;
    (void)vcpu_index;
    if (t->mark == MARK_START) {
        started_at = total;
        active = 1;
        memset(bucket_insns, 0, sizeof(uint64_t) * n_buckets);
        current_bucket = 0;
    } else if (t->mark == MARK_END && active) {
        fprintf(out, "count %" PRIu64 "\nlayers", total - started_at);
        for (int b = 0; b < n_buckets; b++)
            fprintf(out, " %" PRIu64, bucket_insns[b]);
        fprintf(out, "\n");
        fflush(out);
        active = 0;
    }
    total += t->n;
    if (active)
        for (size_t i = 0; i < t->n; i++) {
            if (t->bucket[i] >= 0)
                current_bucket = t->bucket[i];
            bucket_insns[current_bucket]++;
        }
}

static int read_layers(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long long addr;
    int bucket;
    size_t cap = 1024;
    if (!f || fscanf(f, "%d", &n_buckets) != 1 || n_buckets < 1)
        return -1;
    bucket_insns = calloc((size_t)n_buckets, sizeof(uint64_t));
    layer_addr = malloc(cap * sizeof(uint64_t));
    layer_bucket = malloc(cap * sizeof(int));
    while (fscanf(f, "%llx %d", &addr, &bucket) == 2) {
        if (bucket < 0 || bucket >= n_buckets || (n_listed && addr <= layer_addr[n_listed - 1]))
            return -1; /* the addresses come sorted, each once */
        if (n_listed == cap) {
            cap *= 2;
            layer_addr = realloc(layer_addr, cap * sizeof(uint64_t));
            layer_bucket = realloc(layer_bucket, cap * sizeof(int));
        }
        layer_addr[n_listed] = addr;
        layer_bucket[n_listed++] = bucket;
    }
    fclose(f);
    return 0;
}

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
    if (n_buckets) {
        struct tb_info *t = malloc(sizeof *t + n * sizeof(int));
        t->mark = pc == start_addr ? MARK_START : pc == end_addr ? MARK_END : 0;
        t->n = n;
        for (size_t i = 0; i < n; i++)
            t->bucket[i] = bucket_at(qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i)));
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_profiled, QEMU_PLUGIN_CB_NO_REGS, t);
    } else if (pc == start_addr || pc == end_addr) {
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
        else if (strncmp(argv[i], "layers=", 7) == 0 && read_layers(argv[i] + 7) != 0) {
            fprintf(stderr, "minun count plugin: cannot read the layer map %s\n", argv[i] + 7);
            return -1;
        }
    }
    out = path ? fopen(path, "w") : NULL;
    if (!out) {
        fprintf(stderr, "minun count plugin: needs out=<writable file>\n");
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    return 0;
}
