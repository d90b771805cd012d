/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* The simulator's top: its configuration, the run loop and event dispatch,
 * the application (the rounds of requests), and the output.  The files
 * below it (sim-net.c, sim-sender.c, sim-receiver.c, and under them
 * sim-timer.c, sim-random.c, sim-rtt.c, sim-stats.c, sim-trace.c,
 * sim-pkt.c, sim-heap.c) never call into it: the endpoints report to the
 * application through sim->app.
 *
 * Model (see also sim-net.c, sim-sender.c, sim-receiver.c):
 *
 *   - Time: a discrete-event loop in nanoseconds.  Events due at the same
 *     instant run in the order they were queued.  The only randomness is a
 *     splitmix64 generator seeded from the configuration: initial sequence
 *     numbers, timestamp clock origins, ephemeral ports and the host send
 *     jitter (every segment a sender emits waits a uniform 0..jitter_ns,
 *     default 1 us, before its NIC, without reordering: host noise that
 *     breaks exact ties between senders).  libpac gets the time in
 *     microseconds (ns / 1000, rounded down) from the same clock and is run
 *     at pac_next_wakeup().
 *
 *   - Base RTT (rtt_us) is propagation only: sender -> switch rtt/4,
 *     switch -> receiver rtt/4, receiver -> sender rtt/2.  Serialisation
 *     (access link and bottleneck) and queueing come on top: a full-sized
 *     segment at 10 Gbit/s / 1 Gbit/s adds 1.2 us + 12.2 us.
 *
 *   - Wire bytes = IPv4 total length + l2_overhead (default 14, the
 *     Ethernet header): 1460 payload + 20 IP + 20 TCP + 12 timestamps + 14 =
 *     1526 bytes per full segment, 66 per pure ACK, 74 per SYN.  Used both
 *     for buffer occupancy and for serialisation.
 *
 *   - Connections are persistent: all N are opened at time 0 (the receiver
 *     is the client).  When the last one is established, round 1 starts:
 *     the receiver sends one request per connection at the same instant.  A
 *     round ends when every response has fully arrived (in order) at the
 *     receiver; the next round starts at that instant.  After the last
 *     round the receiver closes every connection.
 *
 * Reported figures, over the rounds only (the handshake is excluded):
 *
 *   - round time: from the instant the round's requests are issued (handed
 *     to libpac or the NIC) to the arrival of the last response byte.
 *   - rct: per response, from its request's issue to the arrival of its last
 *     byte (N samples per round); p50 / p99 are nearest-rank percentiles.
 *   - goodput = 8 * response payload bytes / sum of round times.
 *   - util = goodput / payload capacity, where the payload capacity is
 *     rate_bps * mss / (mss + 52 + l2_overhead), i.e. the bottleneck's rate
 *     times the share of payload in a full-sized frame (0.9567 of 1 Gbit/s
 *     with the defaults).  A fully busy bottleneck that carries only
 *     full-sized segments and nothing else scores 1.0.
 *   - drops: packets the bottleneck dropped (whole run).
 *   - timeouts: the senders' RTO expiries (response data and SYN-ACKs),
 *     whole run: the failure signal of incast, as the paper counts it;
 *     timeout_rounds: rounds in which at least one expired.  The receiver's
 *     own RTO expiries (its SYN or request not acknowledged in time) are
 *     reported apart, as "receiver" timeouts in the detail lines: they are
 *     what a real client stack does when PAC holds its request longer than
 *     its RTO (srtt + 200 ms), which no ACK scheduler can avoid once a
 *     round lasts much longer than that (e.g. 1000 x 64 KB at 1 Gbit/s).
 *   - max_held: most packets libpac held at once; max_queue_bytes: the
 *     bottleneck's highest occupancy. */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim-private.h"

const char *
sim_mode_name(enum sim_mode mode)
{
    return (mode == SIM_MODE_PAC ? "pac"
            : mode == SIM_MODE_RWND ? "rwnd" : "off");
}

const char *
sim_workload_name(enum sim_workload workload)
{
    return workload == SIM_WL_TOTAL ? "total" : "per-sender";
}

void
sim_config_init(struct sim_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->mode = SIM_MODE_OFF;
    cfg->n_senders = 16;
    cfg->workload = SIM_WL_PER_SENDER;
    cfg->bytes = 64 * 1024;
    cfg->rounds = 5;
    cfg->buffer_bytes = 100000;
    cfg->rate_bps = 1000000000ULL;
    cfg->access_rate_bps = 10000000000ULL;
    cfg->rtt_us = 100;
    cfg->l2_overhead = 14;
    cfg->jitter_ns = 1000;
    cfg->mss = 1460;
    cfg->init_cwnd = 10;
    cfg->rto_min_us = 200000;
    cfg->syn_rto_us = 1000000;
    cfg->delayed_ack = false;
    cfg->delack_us = 40000;
    cfg->slow_start_after_idle = true;
    cfg->request_bytes = 100;
    cfg->threshold = 0;
    cfg->clamp_window = true;
    cfg->fast_path = false;

    struct pac_config pc;

    pac_config_init(&pc);
    cfg->request_copy_us = pc.request_copy_us;
    cfg->seed = 1;
    cfg->time_limit_ns = 600 * SIM_NS_PER_S;
    cfg->trace = NULL;
}

uint64_t
sim_response_bytes(const struct sim_config *cfg, uint32_t i)
{
    if (cfg->workload == SIM_WL_PER_SENDER) {
        return cfg->bytes;
    }
    return cfg->bytes / cfg->n_senders + (i < cfg->bytes % cfg->n_senders);
}

/* The application: barrier-synchronised rounds of requests.  The receiver
 * and the senders report to it through 'sim_rounds_app' (sim->app); it
 * starts each round by queueing SIM_EV_ROUND_START. */

/* The receiver's side of connection 'i' is established. */
static void
sim_conn_established(struct sim *sim, uint32_t i)
{
    (void) i;
    if (++sim->established == sim->n) {
        sim->res->handshake_ns = sim->now;
        sim_trace(sim, "handshakes done");
        sim_heap_push(&sim->heap, sim->now, SIM_EV_ROUND_START, 0, NULL);
    }
}

/* Sender 'i' got the last ACK of its connection. */
static void
sim_conn_closed(struct sim *sim, uint32_t i)
{
    (void) i;
    if (++sim->closed == sim->n) {
        sim->finished = true;
    }
}

/* This round's response on connection 'i' has fully arrived. */
static void
sim_response_done(struct sim *sim, uint32_t i)
{
    sim_note_rct(sim, sim->now - sim->rcv[i].request_ns);

    if (--sim->remaining) {
        return;
    }

    /* The round is over. */
    uint64_t dur = sim->now - sim->round_start_ns;
    sim_note_round(sim, dur);
    sim->in_round = false;
    sim_trace(sim, "round %u done in %.3f ms, %" PRIu64 " timeouts",
              sim->round, dur / 1e6, sim->round_timeouts);
    sim_heap_push(&sim->heap, sim->now, SIM_EV_ROUND_START, 0, NULL);
}

static const struct sim_app sim_rounds_app = {
    .conn_established = sim_conn_established,
    .response_done = sim_response_done,
    .conn_closed = sim_conn_closed,
};

/* Starts the next round, or closes every connection after the last. */
static void
sim_round_start(struct sim *sim)
{
    if (sim->round == sim->cfg.rounds) {
        sim_trace(sim, "closing");
        for (uint32_t i = 0; i < sim->n; i++) {
            sim_rcv_close(sim, i);
        }
        return;
    }

    sim->round++;
    sim->in_round = true;
    sim->round_start_ns = sim->now;
    sim->remaining = sim->n;
    sim->round_timeouts = 0;
    sim_trace(sim, "round %u starts", sim->round);
    for (uint32_t i = 0; i < sim->n; i++) {
        sim_rcv_request(sim, i);
    }
}

static void
sim_dispatch(struct sim *sim, const struct sim_event *ev)
{
    switch ((enum sim_event_type) ev->type) {
    case SIM_EV_SWITCH_ARRIVE:
        sim_net_switch_arrive(sim, ev->ptr);
        break;
    case SIM_EV_SWITCH_DONE:
        sim_net_switch_done(sim);
        break;
    case SIM_EV_RCV_ARRIVE: {
        struct sim_pkt *pkt = ev->ptr;
        sim_net_rcv_arrive(sim, pkt);
        sim_rcv_input(sim, pkt->conn, pkt);
        sim_pkt_free(sim, pkt);
        break;
    }
    case SIM_EV_SND_ARRIVE: {
        struct sim_pkt *pkt = ev->ptr;
        sim_snd_input(sim, ev->idx, pkt);
        sim_pkt_free(sim, pkt);
        break;
    }
    case SIM_EV_SND_TIMER:
        sim_snd_timer(sim, ev->idx, ev);
        break;
    case SIM_EV_RCV_TIMER:
        sim_rcv_timer(sim, ev->idx, ev);
        break;
    case SIM_EV_DELACK_TIMER:
        sim_rcv_delack_timer(sim, ev->idx, ev);
        break;
    case SIM_EV_PAC_TIMER:
        sim_net_pac_timer(sim, ev);
        break;
    case SIM_EV_ROUND_START:
        sim_round_start(sim);
        break;
    }
}

static bool
sim_config_ok(const struct sim_config *cfg)
{
    const char *bad = NULL;

    if (!cfg->n_senders || cfg->n_senders > 65534) {
        bad = "senders must be 1..65534";
    } else if (!cfg->rounds) {
        bad = "rounds must be positive";
    } else if (!cfg->rate_bps || !cfg->access_rate_bps) {
        bad = "rates must be positive";
    } else if (cfg->mss < 64 || cfg->mss > 9000) {
        bad = "mss must be 64..9000";
    } else if (!cfg->init_cwnd) {
        bad = "initial window must be positive";
    } else if (!cfg->request_bytes || cfg->request_bytes > cfg->mss) {
        bad = "request size must be 1..mss";
    } else if (cfg->buffer_bytes < cfg->mss + 52 + cfg->l2_overhead) {
        bad = "buffer must hold a full-sized segment";
    } else if (cfg->workload == SIM_WL_TOTAL
               ? cfg->bytes < cfg->n_senders : !cfg->bytes) {
        bad = "every sender needs at least one response byte";
    }
    if (bad) {
        fprintf(stderr, "sim: %s\n", bad);
        return false;
    }
    return true;
}

int
sim_run(const struct sim_config *cfg, struct sim_result *res)
{
    memset(res, 0, sizeof *res);
    if (!sim_config_ok(cfg)) {
        return -1;
    }

    struct sim *sim = calloc(1, sizeof *sim);
    if (!sim) {
        return -1;
    }
    sim->cfg = *cfg;
    sim->res = res;
    sim->app = &sim_rounds_app;
    sim->rng = cfg->seed;
    sim->n = cfg->n_senders;
    sim_heap_init(&sim->heap);
    sim_timer_init(&sim->pac_timer);

    uint64_t rtt_ns = (uint64_t) cfg->rtt_us * SIM_NS_PER_US;
    sim->d_snd_sw = rtt_ns / 4;
    sim->d_sw_rcv = rtt_ns / 4;
    sim->d_rev = rtt_ns - sim->d_snd_sw - sim->d_sw_rcv;

    sim->snd = calloc(sim->n, sizeof *sim->snd);
    sim->rcv = calloc(sim->n, sizeof *sim->rcv);
    sim->resp_bytes = calloc(sim->n, sizeof *sim->resp_bytes);
    sim->round_ns = calloc(cfg->rounds, sizeof *sim->round_ns);
    if (!sim->snd || !sim->rcv || !sim->resp_bytes || !sim->round_ns) {
        fprintf(stderr, "sim: out of memory\n");
        abort();
    }
    for (uint32_t i = 0; i < sim->n; i++) {
        sim->resp_bytes[i] = sim_response_bytes(cfg, i);
        sim_snd_init(sim, i);
        sim_rcv_init(sim, i);
    }

    int error = 0;
    if (cfg->mode != SIM_MODE_OFF) {
        struct pac_config pc;
        char err[256];

        pac_config_init(&pc);
        pc.policy = (cfg->mode == SIM_MODE_RWND ? PAC_POLICY_RWND
                     : PAC_POLICY_PAC);
        pc.hash_seed = 0x5ac0ffee;  /* The same table layout every run. */
        pc.threshold = cfg->threshold ? cfg->threshold : cfg->buffer_bytes;
        pc.clamp_window = cfg->clamp_window;
        pc.request_copy_us = cfg->request_copy_us;
        pc.fast_path = cfg->fast_path;
        if (!pac_config_check(&pc, err, sizeof err)) {
            fprintf(stderr, "sim: bad PAC configuration: %s\n", err);
            error = -1;
        } else {
            sim->pac = pac_create(&pc, 0);
            if (!sim->pac) {
                fprintf(stderr, "sim: pac_create() failed\n");
                error = -1;
            } else {
                pac_set_copy_cb(sim->pac, sim_net_pac_copy);
            }
        }
    }

    if (!error) {
        uint64_t stop = cfg->time_limit_ns;
        struct sim_event ev;

        for (uint32_t i = 0; i < sim->n; i++) {
            sim_rcv_connect(sim, i);
        }
        while (!sim->finished && sim_heap_pop(&sim->heap, &ev)) {
            if (ev.time > stop) {
                break;
            }
            sim->now = ev.time;
            res->events++;
            sim_dispatch(sim, &ev);
            if (res->rounds_done == cfg->rounds
                && stop > sim->now + 2 * SIM_NS_PER_S) {
                /* Give the closing handshakes two seconds. */
                stop = sim->now + 2 * SIM_NS_PER_S;
            }
        }
        res->sim_time_ns = sim->now;
        sim_net_pac_finish(sim);
        sim_stats_finish(sim);
    }

    for (uint32_t i = 0; i < sim->n; i++) {
        sim_snd_destroy(sim, i);
        sim_rcv_destroy(sim, i);
    }
    sim_heap_destroy(&sim->heap);
    sim_pkt_pool_destroy(sim);
    free(sim->snd);
    free(sim->rcv);
    free(sim->resp_bytes);
    free(sim->round_ns);
    free(sim->rct_ns);
    free(sim->rtt_us);
    free(sim);
    return error;
}

void
sim_print_line(FILE *out, const struct sim_config *cfg,
               const struct sim_result *res)
{
    fprintf(out, "SIM mode=%s senders=%u workload=%s bytes=%" PRIu64
            " buffer=%u rate_mbps=%" PRIu64 " rounds=%u drops=%" PRIu64
            " timeouts=%" PRIu64 " timeout_rounds=%u util=%.3f"
            " goodput_mbps=%.1f rct_p50_ms=%.3f rct_p99_ms=%.3f"
            " max_held=%u max_queue_bytes=%" PRIu64 " vm_timeouts=%" PRIu64
            "\n",
            sim_mode_name(cfg->mode), cfg->n_senders,
            sim_workload_name(cfg->workload), cfg->bytes, cfg->buffer_bytes,
            cfg->rate_bps / 1000000, cfg->rounds, res->drops, res->timeouts,
            res->timeout_rounds, res->util, res->goodput_mbps,
            res->rct_p50_ms, res->rct_p99_ms, res->max_held,
            res->max_queue_bytes, res->rcv_timeouts);
}

void
sim_print_details(FILE *out, const struct sim_config *cfg,
                  const struct sim_result *res)
{
    if (!res->completed) {
        fprintf(out, "  INCOMPLETE: %u of %u rounds within %.1f s of "
                "simulated time\n", res->rounds_done, cfg->rounds,
                cfg->time_limit_ns / 1e9);
    }
    fprintf(out, "  rounds: done=%u/%u round_p50_ms=%.3f round_max_ms=%.3f"
            " handshake_ms=%.3f\n", res->rounds_done, cfg->rounds,
            res->round_p50_ms, res->round_max_ms, res->handshake_ns / 1e6);
    fprintf(out, "  tcp: sender timeouts data=%" PRIu64 " synack=%" PRIu64
            " (before round 1: %" PRIu64 "), receiver timeouts=%" PRIu64
            ", retransmits=%" PRIu64 " fast_retransmits=%" PRIu64
            " rtt_p50_us=%.0f rtt_p99_us=%.0f\n", res->data_timeouts,
            res->synack_timeouts, res->handshake_timeouts, res->rcv_timeouts,
            res->retransmits, res->fast_retransmits, res->rtt_p50_us,
            res->rtt_p99_us);
    if (cfg->mode != SIM_MODE_OFF) {
        fprintf(out, "  pac: passed=%" PRIu64 " held=%" PRIu64
                " released=%" PRIu64 " stale_drops=%" PRIu64
                " max_held=%u max_hold_ms=%.3f left_held=%" PRIu64 "\n",
                res->pac_passed, res->pac_held, res->pac_released,
                res->pac_stale_drops, res->max_held, res->max_hold_ns / 1e6,
                res->pac_left_held);
        fprintf(out, "  pac: released fit=%" PRIu64 " max_hold=%" PRIu64
                " cap=%" PRIu64 " flush=%" PRIu64 " corrections=%" PRIu64
                " silence_resets=%" PRIu64 " request_triggers=%" PRIu64
                " handshake_triggers=%" PRIu64 " stale_events=%" PRIu64
                " request_copies=%" PRIu64 "\n",
                res->pac_rel_cause[PAC_REL_FIT],
                res->pac_rel_cause[PAC_REL_MAX_HOLD],
                res->pac_rel_cause[PAC_REL_CAP],
                res->pac_rel_cause[PAC_REL_FLUSH], res->pac_corrections,
                res->pac_silence_resets, res->pac_request_triggers,
                res->pac_handshake_triggers, res->pac_stale_events,
                res->pac_request_copies);
        if (cfg->fast_path) {
            fprintf(out, "  pac: fast_path tracking_starts=%" PRIu64
                    " tracking_stops=%" PRIu64 " fast_rx=%" PRIu64
                    " fast_tx=%" PRIu64 "\n", res->pac_tracking_starts,
                    res->pac_tracking_stops, res->pac_fast_rx,
                    res->pac_fast_tx);
        }
        if (res->pac_bad_emits || res->pac_stuck_wakeups) {
            fprintf(out, "  pac: CONTRACT bad_emits=%" PRIu64
                    " stuck_wakeups=%" PRIu64 "\n", res->pac_bad_emits,
                    res->pac_stuck_wakeups);
        }
    }
    fprintf(out, "  model: events=%" PRIu64 " sim_time_ms=%.3f"
            " parse_errors=%" PRIu64 "\n", res->events,
            res->sim_time_ns / 1e6, res->parse_errors);
}
