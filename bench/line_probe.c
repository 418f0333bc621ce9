/* Machine probe run by bench/run around every benchmark run (not an MPI program): the
 * round trip of one cache line between two processes pinned to CPUs 0 and 1, in
 * nanoseconds (the least average over batches of 100, so that a batch in which either side
 * was preempted does not count). On a virtual machine the host may move the
 * two virtual CPUs apart or together while the benchmarks run, and this figure shows which:
 * shared-memory collectives pass many cache lines between cores and slow down with it.
 * Prints "line_rtt_ns N", or nothing where there is only one CPU. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS   100
#define BATCHES  200
#define LIMIT_NS 5e8
#define STOP     (-1L)

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return sched_setaffinity(0, sizeof(s), &s);
}

int main(void) {
    cpu_set_t all;
    if (sched_getaffinity(0, sizeof(all), &all) || CPU_COUNT(&all) < 2) return 0;
    int cpu[2], k = 0;
    for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
        if (CPU_ISSET(c, &all)) cpu[k++] = c;
    _Atomic long *line =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (line == MAP_FAILED) return 1;
    atomic_store(line, 0);
    alarm(5); /* neither side waits forever if the other cannot run (the child sets its own) */
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) { /* answers every odd value with the next even one, until STOP */
        alarm(5);
        if (pin(cpu[1])) _exit(1);
        for (long v = 1;; v += 2) {
            long x;
            while ((x = atomic_load_explicit(line, memory_order_acquire)) != v && x != STOP) {
            }
            if (x == STOP) _exit(0);
            atomic_store_explicit(line, v + 1, memory_order_release);
        }
    }
    /* on a loaded machine the two sides seldom run at once: stop after LIMIT_NS, with the
     * batches done by then */
    int ok = pin(cpu[0]) == 0;
    double best = 0, start = now_ns();
    for (long b = 0, v = 0; ok && b < BATCHES && now_ns() - start < LIMIT_NS; b++) {
        double t0 = now_ns();
        for (int i = 0; i < ROUNDS; i++, v += 2) {
            atomic_store_explicit(line, v + 1, memory_order_release);
            while (atomic_load_explicit(line, memory_order_acquire) != v + 2) {
            }
        }
        double rtt = (now_ns() - t0) / ROUNDS;
        if (b == 0 || rtt < best) best = rtt;
    }
    atomic_store_explicit(line, STOP, memory_order_release);
    int st = 0;
    waitpid(child, &st, 0);
    if (!ok || !WIFEXITED(st) || WEXITSTATUS(st) || best == 0) return 1;
    printf("line_rtt_ns %.0f\n", best);
    return 0;
}
