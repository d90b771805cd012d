/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef SIM_H
#define SIM_H 1

/* A deterministic packet-level incast simulator.
 *
 * N senders (TCP NewReno servers) answer barrier-synchronised requests of one
 * receiver (the client).  Every sender has its own access link to a ToR
 * switch whose egress port toward the receiver is the bottleneck: a drop-tail
 * buffer of 'buffer_bytes' served at 'rate_bps'.  The reverse path is a
 * fixed delay.  Optionally, libpac sits between the receiver's TCP stack and
 * its NIC, exactly where a hypervisor switch would put it: it sees every
 * segment toward the receiver (pac_rx()) and every segment the receiver
 * emits (pac_tx()), each built as a real IPv4/TCP packet and parsed with
 * pac_parse_ip().
 *
 * Simulated time is in nanoseconds; nothing reads a clock, and a run depends
 * only on its configuration (including the seed).  See sim.c for the exact
 * model and the definitions of the reported figures. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum sim_mode {
    SIM_MODE_OFF,               /* No PAC: segments go straight out. */
    SIM_MODE_PAC,               /* libpac on the receiver's port. */
    SIM_MODE_RWND,              /* libpac's receiver-window policy there
                                 * (pac_config.policy PAC_POLICY_RWND). */
};

enum sim_workload {
    SIM_WL_PER_SENDER,          /* Each sender returns 'bytes' per round. */
    SIM_WL_TOTAL,               /* 'bytes' per round, split evenly. */
};

struct sim_config {
    enum sim_mode mode;
    uint32_t n_senders;
    enum sim_workload workload;
    uint64_t bytes;             /* Response bytes, see 'workload'. */
    uint32_t rounds;

    /* Network. */
    uint32_t buffer_bytes;      /* Bottleneck drop-tail buffer. */
    uint64_t rate_bps;          /* Bottleneck rate. */
    uint64_t access_rate_bps;   /* Each sender's access link. */
    uint32_t rtt_us;            /* Base RTT: propagation only. */
    uint32_t l2_overhead;       /* Bytes per frame beyond the IP packet. */
    uint32_t jitter_ns;         /* Host send jitter, uniform [0, jitter]. */

    /* TCP. */
    uint32_t mss;
    uint32_t init_cwnd;         /* Segments. */
    uint32_t rto_min_us;
    uint32_t syn_rto_us;        /* Initial RTO of SYN and SYN-ACK. */
    bool delayed_ack;           /* Receiver ACKs every 2nd segment. */
    uint32_t delack_us;         /* Delayed-ACK timer. */
    bool slow_start_after_idle; /* Linux's cwnd restart after idle. */
    uint32_t request_bytes;     /* Request payload. */

    /* PAC. */
    uint32_t threshold;         /* 0: use 'buffer_bytes'. */
    bool clamp_window;          /* pac_config's clamp_window. */
    uint32_t request_copy_us;   /* pac_config's request_copy_us. */
    bool fast_path;             /* pac_config's fast_path: the receiver's
                                 * port calls pac_watch_rx() and
                                 * pac_watch_tx() while PAC tracks no
                                 * connection. */

    uint64_t seed;
    uint64_t time_limit_ns;     /* Give up after this much simulated time. */
    FILE *trace;                /* Event trace, or NULL. */
};

/* Fills 'cfg' with the defaults (1 Gbit/s, 100000-byte buffer, 100 us base
 * RTT, 16 senders x 64 KB, 5 rounds, PAC off). */
void sim_config_init(struct sim_config *cfg);

/* Returns the response size of sender 'i' under 'cfg'. */
uint64_t sim_response_bytes(const struct sim_config *cfg, uint32_t i);

struct sim_result {
    bool completed;             /* All rounds finished before the limit. */
    uint32_t rounds_done;

    /* Losses and timeouts. */
    uint64_t drops;             /* Packets dropped at the bottleneck. */
    uint64_t timeouts;          /* The senders' RTO expiries: */
    uint64_t data_timeouts;     /* ...of response data, */
    uint64_t synack_timeouts;   /* ...of SYN-ACKs. */
    uint32_t timeout_rounds;    /* Rounds with at least one of them. */
    uint64_t handshake_timeouts;    /* Of them, before round 1. */
    uint64_t rcv_timeouts;      /* The receiver's (SYN, request) RTOs. */
    uint64_t retransmits;       /* Data segments sent again. */
    uint64_t fast_retransmits;  /* Fast-retransmit episodes. */

    /* Performance over the rounds. */
    uint64_t payload_bytes;     /* Response payload delivered in rounds. */
    uint64_t round_time_ns;     /* Sum of round durations. */
    double util;                /* See sim.c. */
    double goodput_mbps;
    double rct_p50_ms;          /* Response completion time. */
    double rct_p99_ms;
    double round_p50_ms;
    double round_max_ms;
    double rtt_p50_us;          /* Sender-measured RTT samples. */
    double rtt_p99_us;
    uint64_t handshake_ns;      /* Time to establish all connections. */
    uint64_t max_queue_bytes;   /* Bottleneck high-water mark. */

    /* PAC. */
    uint32_t max_held;          /* Most packets held by PAC at once. */
    uint64_t pac_held;          /* Packets PAC held (ever). */
    uint64_t pac_passed;        /* Packets PAC passed at once. */
    uint64_t pac_released;      /* Held packets released. */
    uint64_t pac_stale_drops;   /* Held packets dropped as stale. */
    uint64_t pac_request_copies; /* Zero-window copies sent. */
    uint64_t pac_left_held;     /* Held at the end (flushed). */
    uint64_t pac_bad_emits;     /* Emits of packets PAC did not hold. */
    uint64_t pac_stuck_wakeups; /* pac_run() left a past wakeup. */
    uint64_t max_hold_ns;       /* Longest hold of one packet. */
    uint64_t pac_rel_cause[8];  /* From pac_get_stats(). */
    uint64_t pac_corrections;
    uint64_t pac_silence_resets;
    uint64_t pac_request_triggers;
    uint64_t pac_handshake_triggers;
    uint64_t pac_stale_events;
    uint64_t pac_tracking_starts;   /* Fast path (pac_get_stats()). */
    uint64_t pac_tracking_stops;
    uint64_t pac_fast_rx;       /* Segments passed on the fast path. */
    uint64_t pac_fast_tx;

    /* Model sanity. */
    uint64_t parse_errors;      /* Built packets that did not parse back. */
    uint64_t events;            /* Events processed. */
    uint64_t sim_time_ns;       /* Simulated time at the end. */
};

/* Runs one simulation.  Returns 0 on success, or -1 (with a message on
 * stderr) if the configuration is unusable. */
int sim_run(const struct sim_config *cfg, struct sim_result *res);

/* Prints the machine-readable "SIM ..." line. */
void sim_print_line(FILE *out, const struct sim_config *cfg,
                    const struct sim_result *res);

/* Prints a few human-readable lines of detail. */
void sim_print_details(FILE *out, const struct sim_config *cfg,
                       const struct sim_result *res);

const char *sim_mode_name(enum sim_mode mode);
const char *sim_workload_name(enum sim_workload workload);

#endif /* sim.h */
