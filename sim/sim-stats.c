/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Statistics: the counters and samples a run collects (timeouts, RTT
 * samples, response completion times, round times) and the figures of
 * 'struct sim_result' computed from them at the end.  sim.c defines the
 * reported figures. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim-private.h"

static void *
sim_grow(void *p, size_t *cap, size_t elem)
{
    *cap = *cap ? 2 * *cap : 4096;
    p = realloc(p, *cap * elem);
    if (!p) {
        fprintf(stderr, "sim: out of memory\n");
        abort();
    }
    return p;
}

/* A sender's RTO expired ('kind_counter' says which kind). */
void
sim_note_timeout(struct sim *sim, uint64_t *kind_counter)
{
    (*kind_counter)++;
    sim->res->timeouts++;
    if (sim->in_round) {
        sim->round_timeouts++;
    } else if (!sim->round) {
        sim->res->handshake_timeouts++;
    }
}

/* The receiver's RTO expired (its SYN or request was not acknowledged in
 * time).  Counted apart from the senders' timeouts: see sim.c. */
void
sim_note_rcv_timeout(struct sim *sim)
{
    sim->res->rcv_timeouts++;
}

/* A sender measured 'rtt_ns'.  Only samples taken during rounds count. */
void
sim_note_rtt(struct sim *sim, uint64_t rtt_ns)
{
    if (!sim->in_round) {
        return;
    }
    if (sim->n_rtt == sim->rtt_cap) {
        sim->rtt_us = sim_grow(sim->rtt_us, &sim->rtt_cap,
                               sizeof *sim->rtt_us);
    }
    sim->rtt_us[sim->n_rtt++] = rtt_ns / SIM_NS_PER_US;
}

/* A response completed 'rct_ns' after its request was issued. */
void
sim_note_rct(struct sim *sim, uint64_t rct_ns)
{
    if (sim->n_rct == sim->rct_cap) {
        sim->rct_ns = sim_grow(sim->rct_ns, &sim->rct_cap,
                               sizeof *sim->rct_ns);
    }
    sim->rct_ns[sim->n_rct++] = rct_ns;
}

/* Round 'sim->round' is over; it lasted 'dur_ns'. */
void
sim_note_round(struct sim *sim, uint64_t dur_ns)
{
    sim->round_ns[sim->round - 1] = dur_ns;
    sim->res->round_time_ns += dur_ns;
    sim->res->rounds_done++;
    for (uint32_t k = 0; k < sim->n; k++) {
        sim->res->payload_bytes += sim->resp_bytes[k];
    }
    if (sim->round_timeouts) {
        sim->res->timeout_rounds++;
    }
}

static int
sim_cmp_u64(const void *a_, const void *b_)
{
    uint64_t a = *(const uint64_t *) a_;
    uint64_t b = *(const uint64_t *) b_;

    return a < b ? -1 : a > b;
}

/* Nearest-rank percentile 'p' (0..100) of 'n' sorted values. */
static uint64_t
sim_percentile(const uint64_t *v, size_t n, double p)
{
    if (!n) {
        return 0;
    }

    size_t rank = (size_t) (p / 100.0 * n + 0.999999);
    if (rank < 1) {
        rank = 1;
    }
    return v[(rank > n ? n : rank) - 1];
}

/* Computes the figures of 'sim->res' from the counters and samples, at the
 * end of the run. */
void
sim_stats_finish(struct sim *sim)
{
    struct sim_result *res = sim->res;
    const struct sim_config *cfg = &sim->cfg;

    res->completed = res->rounds_done == cfg->rounds;
    if (sim->in_round && sim->round_timeouts) {
        /* The unfinished round counts too. */
        res->timeout_rounds++;
    }
    if (res->round_time_ns) {
        double secs = res->round_time_ns / 1e9;
        double payload_bps = (double) cfg->rate_bps * cfg->mss
                             / (cfg->mss + 52 + cfg->l2_overhead);

        res->goodput_mbps = res->payload_bytes * 8.0 / secs / 1e6;
        res->util = res->payload_bytes * 8.0 / secs / payload_bps;
    }

    qsort(sim->rct_ns, sim->n_rct, sizeof *sim->rct_ns, sim_cmp_u64);
    res->rct_p50_ms = sim_percentile(sim->rct_ns, sim->n_rct, 50) / 1e6;
    res->rct_p99_ms = sim_percentile(sim->rct_ns, sim->n_rct, 99) / 1e6;

    uint64_t *rounds = malloc((res->rounds_done + 1) * sizeof *rounds);
    memcpy(rounds, sim->round_ns, res->rounds_done * sizeof *rounds);
    qsort(rounds, res->rounds_done, sizeof *rounds, sim_cmp_u64);
    res->round_p50_ms = sim_percentile(rounds, res->rounds_done, 50) / 1e6;
    res->round_max_ms = res->rounds_done
                        ? rounds[res->rounds_done - 1] / 1e6 : 0;
    free(rounds);

    uint64_t *rtt = malloc((sim->n_rtt + 1) * sizeof *rtt);
    for (size_t k = 0; k < sim->n_rtt; k++) {
        rtt[k] = sim->rtt_us[k];
    }
    qsort(rtt, sim->n_rtt, sizeof *rtt, sim_cmp_u64);
    res->rtt_p50_us = sim_percentile(rtt, sim->n_rtt, 50);
    res->rtt_p99_us = sim_percentile(rtt, sim->n_rtt, 99);
    free(rtt);
}
