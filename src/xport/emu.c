/* Link emulation (see emu.h). The topology file has one statement per line ('#' starts a
 * comment):
 *
 *     default LATENCY_US [MB_PER_S]
 *     link RANKS RANKS LATENCY_US [MB_PER_S]
 *
 * RANKS is a world rank, a range lo-hi or '*'; a link line sets both directions of every pair
 * it names, later lines overriding earlier ones; a bandwidth of 0 or none means unlimited.
 * A message of n bytes from a to b keeps a busy for latency + n / bandwidth before it goes:
 * on one machine the receiver cannot hold it back, so the sender does. */
#include "emu.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

typedef struct co_emu {
    int n;
    float *lat_us; /* [n * n], by (sender, receiver) */
    float *mbps;   /* [n * n], 0: unlimited */
    uint32_t crc;
} co_emu;

/* "3", "2-7", "*": [*lo, *hi]; -1 when malformed or naming a rank the job does not have */
static int parse_ranks(const char *s, int n, int *lo, int *hi) {
    if (!strcmp(s, "*")) {
        *lo = 0;
        *hi = n - 1;
        return 0;
    }
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s || a < 0) return -1;
    if (*end == '-') {
        const char *t = end + 1;
        b = strtol(t, &end, 10);
        if (end == t || b < a) return -1;
    }
    if (*end || b >= n) return -1;
    *lo = (int)a;
    *hi = (int)b;
    return 0;
}

static int parse_num(const char *s, double *v) {
    char *end;
    if (!s) return -1;
    *v = strtod(s, &end);
    return end == s || *end || *v < 0 || *v > 1e9 ? -1 : 0;
}

static int parse(co_emu *e, char *text, const char *path, char *err, size_t errlen) {
    int n = e->n, lineno = 0;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *tok[6];
        int nt = 0;
        for (char *save, *t = strtok_r(line, " \t\r", &save); t;
             t = strtok_r(NULL, " \t\r", &save)) {
            if (nt == 6) goto bad;
            tok[nt++] = t;
        }
        if (nt == 0) continue;
        double lat, bw = 0;
        int a0, a1, b0, b1;
        if (!strcmp(tok[0], "default") && (nt == 2 || nt == 3)) {
            if (parse_num(tok[1], &lat) || (nt == 3 && parse_num(tok[2], &bw))) goto bad;
            a0 = b0 = 0;
            a1 = b1 = n - 1;
        } else if (!strcmp(tok[0], "link") && (nt == 4 || nt == 5)) {
            if (parse_ranks(tok[1], n, &a0, &a1) || parse_ranks(tok[2], n, &b0, &b1) ||
                parse_num(tok[3], &lat) || (nt == 5 && parse_num(tok[4], &bw)))
                goto bad;
        } else {
            goto bad;
        }
        for (int a = a0; a <= a1; a++)
            for (int b = b0; b <= b1; b++) {
                if (a == b) continue;
                size_t ab = (size_t)a * (size_t)n + (size_t)b,
                       ba = (size_t)b * (size_t)n + (size_t)a;
                e->lat_us[ab] = e->lat_us[ba] = (float)lat;
                e->mbps[ab] = e->mbps[ba] = (float)bw;
            }
        continue;
    bad:
        snprintf(err, errlen,
                 "COHORT_EMU_TOPOLOGY=%s: line %d is not 'default LATENCY_US [MB_PER_S]' or "
                 "'link RANKS RANKS LATENCY_US [MB_PER_S]' with ranks below %d",
                 path, lineno, n);
        return -1;
    }
    return 0;
}

int co_emu_init(char *err, size_t errlen) {
    const char *path = co_st.cfg.emu_topology;
    if (!path[0]) return 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "COHORT_EMU_TOPOLOGY=%s: %s", path, strerror(errno));
        return -1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc = -1;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 8192;
            char *t = realloc(text, cap);
            if (!t) break;
            text = t;
        }
        size_t got = fread(text + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0) {
            rc = ferror(f) ? -1 : 0;
            break;
        }
    }
    fclose(f);
    co_emu *e = calloc(1, sizeof(*e));
    size_t nn = (size_t)co_st.world_size * (size_t)co_st.world_size;
    if (rc == 0 && e) {
        e->n = co_st.world_size;
        e->lat_us = calloc(nn, sizeof(float));
        e->mbps = calloc(nn, sizeof(float));
        rc = e->lat_us && e->mbps ? 0 : -1;
    }
    if (rc) {
        snprintf(err, errlen, "COHORT_EMU_TOPOLOGY=%s: cannot read it", path);
    } else {
        text[len] = 0;
        e->crc = (uint32_t)crc32(0, (const Bytef *)text, (uInt)len);
        rc = parse(e, text, path, err, errlen);
    }
    free(text);
    if (rc) {
        if (e) {
            free(e->lat_us);
            free(e->mbps);
            free(e);
        }
        return -1;
    }
    co_st.emu = e;
    return 0;
}

void co_emu_fini(void) {
    co_emu *e = co_st.emu;
    if (!e) return;
    free(e->lat_us);
    free(e->mbps);
    free(e);
    co_st.emu = NULL;
}

void co_emu_wait(int dst, size_t bytes) {
    const co_emu *e = co_st.emu;
    if (dst < 0 || dst >= e->n) return;
    size_t i = (size_t)co_st.proc * (size_t)e->n + (size_t)dst;
    /* one MB/s moves one byte per microsecond */
    double us = e->lat_us[i] + (e->mbps[i] > 0 ? (double)bytes / e->mbps[i] : 0);
    if (us <= 0) return;
    uint64_t end = co_now_ns() + (uint64_t)(us * 1e3);
    for (;;) {
        uint64_t now = co_now_ns();
        if (now >= end) break;
        /* sleep through most of a long wait (other ranks need the core), yield at its end */
        if (end - now > 200000) {
            uint64_t ns = end - now - 100000;
            struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
    }
}

uint32_t co_emu_checksum(void) {
    return co_st.emu ? co_st.emu->crc : 0;
}
