/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* The TCP endpoints' clocks: the RFC 6298 RTT estimator, the RTO it yields
 * (srtt + max(4 * rttvar, RTOmin) like Linux's, doubled per backoff up to
 * SIM_RTO_MAX_NS), and the millisecond TCP timestamp clock. */

#include "sim-private.h"

uint64_t
sim_rto_ns(const struct sim *sim, const struct sim_rtt *rtt,
           uint32_t backoff)
{
    uint64_t min = (uint64_t) sim->cfg.rto_min_us * SIM_NS_PER_US;
    uint64_t rto;

    if (rtt->valid) {
        uint64_t var = 4 * rtt->rttvar_ns;
        rto = rtt->srtt_ns + (var > min ? var : min);
    } else {
        rto = SIM_NS_PER_S;
    }
    for (uint32_t k = 0; k < backoff && rto < SIM_RTO_MAX_NS; k++) {
        rto *= 2;
    }
    return rto < SIM_RTO_MAX_NS ? rto : SIM_RTO_MAX_NS;
}

void
sim_rtt_sample(struct sim_rtt *rtt, uint64_t sample)
{
    if (!rtt->valid) {
        rtt->srtt_ns = sample;
        rtt->rttvar_ns = sample / 2;
        rtt->valid = true;
    } else {
        uint64_t err = sample > rtt->srtt_ns
                       ? sample - rtt->srtt_ns : rtt->srtt_ns - sample;
        rtt->rttvar_ns = (3 * rtt->rttvar_ns + err) / 4;
        rtt->srtt_ns = (7 * rtt->srtt_ns + sample) / 8;
    }
}

/* A TCP timestamp clock ticking in milliseconds, like Linux's. */
uint32_t
sim_ts_now(const struct sim *sim, uint32_t offset)
{
    return offset + (uint32_t) (sim->now / SIM_NS_PER_MS);
}
