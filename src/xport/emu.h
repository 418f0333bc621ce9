/* Link emulation: a per-pair latency and bandwidth, read from a topology file
 * (COHORT_EMU_TOPOLOGY), that every point-to-point message pays before it leaves, so that a
 * job on one machine behaves like one whose ranks sit behind links of different speeds. It
 * is how the broadcast tuner (src/tune) is tested and shown on one machine. */
#ifndef CO_EMU_H
#define CO_EMU_H

#include "../core/cohort.h"

#include <stddef.h>
#include <stdint.h>

/* Reads the topology named by COHORT_EMU_TOPOLOGY, when set (co_st.emu stays NULL when not);
 * -1 with err set when the file cannot be read or is malformed. */
int co_emu_init(char *err, size_t errlen);
void co_emu_fini(void);
/* Waits as long as a message of `bytes` takes from this process to process slot dst (links
 * join processes: the topology's ranks are launch ranks, which a rank swap does not move; the
 * link's latency plus bytes over its bandwidth): the sender is busy for that long, as on a link
 * that carries one message at a time. */
void co_emu_wait(int dst, size_t bytes);
/* The topology file's CRC-32: part of the tuning store's key under emulation. */
uint32_t co_emu_checksum(void);

static inline void co_emu_send(int dst, size_t bytes) {
    if (CO_UNLIKELY(co_st.emu != NULL)) co_emu_wait(dst, bytes);
}

#endif /* CO_EMU_H */
