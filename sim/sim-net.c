/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* The network: sender NICs, the ToR switch's bottleneck port, the reverse
 * path, and libpac on the receiver's port.
 *
 * Forward path (sender i -> receiver):
 *
 *   sender NIC: host jitter, then serialisation at 'access_rate_bps' (one
 *   packet at a time, FIFO) -> propagation rtt/4 -> switch egress port:
 *   drop-tail, 'buffer_bytes' counted in wire bytes including the packet
 *   being serialised, served at 'rate_bps' -> propagation rtt/4 ->
 *   libpac (pac_rx) -> receiver's TCP.
 *
 * Reverse path (receiver -> sender i): receiver's TCP -> libpac (pac_tx,
 * may hold) -> fixed delay rtt/2, never congested, never lossy.
 *
 * With the fast path (--fast-path), libpac sees pac_watch_rx() and
 * pac_watch_tx() (pac_watch_syn() for segments with SYN set) instead of
 * pac_rx() and pac_tx() while it tracks no connection (pac_tracking()),
 * and the segments pass untouched. */

#include <stdio.h>
#include <stdlib.h>

#include "sim-private.h"

/* pac_run() calls in a row at one instant that the fast path's end of
 * tracking may ask for before the model counts a stuck wakeup: enough
 * for the default table (16 384 flows, a chunk of 256 each). */
#define SIM_PAC_NOW_RUNS 1024

static uint64_t
sim_net_serialise_ns(uint64_t bytes, uint64_t rate_bps)
{
    return (bytes * 8 * SIM_NS_PER_S + rate_bps / 2) / rate_bps;
}

static uint64_t
sim_now_us(const struct sim *sim)
{
    return sim->now / SIM_NS_PER_US;
}

static const char *
sim_flags_str(uint8_t flags)
{
    static char s[8];
    char *p = s;

    if (flags & PAC_TCP_SYN) {
        *p++ = 'S';
    }
    if (flags & PAC_TCP_FIN) {
        *p++ = 'F';
    }
    if (flags & PAC_TCP_PSH) {
        *p++ = 'P';
    }
    if (flags & PAC_TCP_ACK) {
        *p++ = '.';
    }
    *p = '\0';
    return s;
}

/* Sender 'i' hands 'pkt' to its NIC. */
void
sim_net_snd_output(struct sim *sim, uint32_t i, struct sim_pkt *pkt)
{
    struct sim_snd *s = &sim->snd[i];
    uint64_t ready = sim->now;

    if (sim->cfg.trace) {
        sim_trace(sim, "send conn=%u seq=%u ack=%u len=%u flags=%s cwnd=%u",
                  i, pkt->seq, pkt->ack, pkt->len,
                  sim_flags_str(pkt->flags), s->cwnd);
    }

    if (sim->cfg.jitter_ns) {
        ready += sim_random(sim) % (sim->cfg.jitter_ns + 1);
    }
    sim->fwd_payload += pkt->len;
    if (ready < s->nic_free_ns) {
        ready = s->nic_free_ns;
    }
    s->nic_free_ns = ready
        + sim_net_serialise_ns(sim_pkt_wire_bytes(sim, pkt),
                               sim->cfg.access_rate_bps);
    sim_heap_push(&sim->heap, s->nic_free_ns + sim->d_snd_sw,
                  SIM_EV_SWITCH_ARRIVE, i, pkt);
}

static void
sim_net_switch_start(struct sim *sim)
{
    sim->sw_busy = true;
    sim_heap_push(&sim->heap,
                  sim->now
                  + sim_net_serialise_ns(sim_pkt_wire_bytes(sim,
                                                            sim->sw_head),
                                         sim->cfg.rate_bps),
                  SIM_EV_SWITCH_DONE, 0, NULL);
}

void
sim_net_switch_arrive(struct sim *sim, struct sim_pkt *pkt)
{
    uint32_t wire = sim_pkt_wire_bytes(sim, pkt);

    if (sim->sw_bytes + wire > sim->cfg.buffer_bytes) {
        sim->res->drops++;
        sim->fwd_payload -= pkt->len;
        sim_trace(sim, "drop conn=%u seq=%u len=%u flags=%s queue=%llu",
                  pkt->conn, pkt->seq, pkt->len, sim_flags_str(pkt->flags),
                  (unsigned long long) sim->sw_bytes);
        sim_pkt_free(sim, pkt);
        return;
    }

    pkt->next = NULL;
    if (sim->sw_tail) {
        sim->sw_tail->next = pkt;
    } else {
        sim->sw_head = pkt;
    }
    sim->sw_tail = pkt;
    sim->sw_bytes += wire;
    if (sim->sw_bytes > sim->res->max_queue_bytes) {
        sim->res->max_queue_bytes = sim->sw_bytes;
    }
    if (!sim->sw_busy) {
        sim_net_switch_start(sim);
    }
}

void
sim_net_switch_done(struct sim *sim)
{
    struct sim_pkt *pkt = sim->sw_head;

    sim->sw_head = pkt->next;
    if (!sim->sw_head) {
        sim->sw_tail = NULL;
    }
    sim->sw_bytes -= sim_pkt_wire_bytes(sim, pkt);
    sim_heap_push(&sim->heap, sim->now + sim->d_sw_rcv, SIM_EV_RCV_ARRIVE,
                  pkt->conn, pkt);

    if (sim->sw_head) {
        sim_net_switch_start(sim);
    } else {
        sim->sw_busy = false;
    }
}

/* The receiver's NIC sends 'pkt' toward its sender. */
static void
sim_net_reverse_send(struct sim *sim, struct sim_pkt *pkt)
{
    sim_heap_push(&sim->heap, sim->now + sim->d_rev, SIM_EV_SND_ARRIVE,
                  pkt->conn, pkt);
}

/* libpac hands back a packet it held. */
static void
sim_net_pac_emit(void *aux, void *pkt_, enum pac_emit emit)
{
    struct sim *sim = aux;
    struct sim_pkt *pkt = pkt_;

    if (!pkt || !pkt->held) {
        /* Not a packet libpac holds: a double emit, or garbage. */
        sim->res->pac_bad_emits++;
        if (sim->res->pac_bad_emits <= 5) {
            fprintf(stderr, "sim: libpac emitted a packet it does not "
                    "hold (%p)\n", pkt_);
        }
        return;
    }
    pkt->held = false;
    sim->held--;

    uint64_t hold = sim->now - pkt->born_ns;
    if (hold > sim->res->max_hold_ns) {
        sim->res->max_hold_ns = hold;
    }

    if (emit == PAC_EMIT_RELEASE) {
        sim->res->pac_released++;
        sim_trace(sim, "pac release conn=%u seq=%u ack=%u len=%u flags=%s "
                  "held_us=%llu", pkt->conn, pkt->seq, pkt->ack, pkt->len,
                  sim_flags_str(pkt->flags),
                  (unsigned long long) (hold / SIM_NS_PER_US));
        sim_net_reverse_send(sim, pkt);
    } else {
        sim->res->pac_stale_drops++;
        sim_trace(sim, "pac stale-drop conn=%u seq=%u ack=%u len=%u "
                  "flags=%s", pkt->conn, pkt->seq, pkt->ack, pkt->len,
                  sim_flags_str(pkt->flags));
        sim_pkt_free(sim, pkt);
    }
}

/* libpac asks for a copy of held packet 'pkt_' (data that has waited
 * request_copy_us), with the ACK number, window and timestamp 'how' gives:
 * it goes toward the sender now, as the datapath sends it. */
void
sim_net_pac_copy(void *aux, void *pkt_, const struct pac_copy *how)
{
    struct sim *sim = aux;
    const struct sim_pkt *pkt = pkt_;
    const struct sim_pkt *ts_from = how->tsval_from;
    struct sim_pkt *copy;

    if (!pkt || !pkt->held || (ts_from && !ts_from->held)) {
        sim->res->pac_bad_emits++;
        return;
    }
    copy = sim_pkt_alloc(sim, pkt->conn, pkt->to_receiver);
    *copy = *pkt;
    copy->next = NULL;
    copy->held = false;
    copy->ack = how->ack;
    copy->window = how->window;
    if (ts_from) {
        copy->tsval = ts_from->tsval;
    }
    sim->res->pac_request_copies++;
    sim_trace(sim, "pac copy conn=%u seq=%u ack=%u len=%u", copy->conn,
              copy->seq, copy->ack, copy->len);
    sim_net_reverse_send(sim, copy);
}

/* Traces libpac's estimate after a call. */
static void
sim_net_pac_trace(struct sim *sim, const char *what, uint32_t conn)
{
    if (sim->cfg.trace) {
        struct pac_stats st;

        pac_get_stats(sim->pac, &st);
        sim_trace(sim, "pac %s conn=%u in_flight=%llu threshold=%llu held=%u"
                  " interval_us=%u queue=%llu fwd_payload=%llu", what, conn,
                  (unsigned long long) st.in_flight,
                  (unsigned long long) st.threshold, st.held,
                  st.control_interval_us,
                  (unsigned long long) sim->sw_bytes,
                  (unsigned long long) sim->fwd_payload);
    }
}

/* Schedules pac_run() for libpac's next wakeup. */
static void
sim_net_pac_schedule(struct sim *sim)
{
    uint64_t wakeup = pac_next_wakeup(sim->pac);

    if (wakeup == UINT64_MAX) {
        sim_timer_disarm(&sim->pac_timer);
        return;
    }

    uint64_t t = wakeup >= UINT64_MAX / SIM_NS_PER_US
                 ? SIM_NEVER - 1 : wakeup * SIM_NS_PER_US;
    sim_timer_arm(sim, &sim->pac_timer, t < sim->now ? sim->now : t,
                  SIM_EV_PAC_TIMER, 0);
}

void
sim_net_pac_timer(struct sim *sim, const struct sim_event *ev)
{
    if (!sim_timer_fire(sim, &sim->pac_timer, ev)) {
        return;
    }

    uint64_t now_us = sim_now_us(sim);

    pac_run(sim->pac, now_us, sim_net_pac_emit, sim);
    sim_net_pac_trace(sim, "run", 0);

    uint64_t wakeup = pac_next_wakeup(sim->pac);
    if (wakeup <= now_us && sim->cfg.fast_path && pac_tracking(sim->pac)
        && sim->pac_now_runs < SIM_PAC_NOW_RUNS) {
        /* The end of tracking marks the flows a chunk per pac_run() and
         * asks for the next at once: not stuck while that goes on (a
         * chunk marks 256 flows or looks at 16 384 buckets). */
        sim->pac_now_runs++;
        sim_timer_arm(sim, &sim->pac_timer, sim->now, SIM_EV_PAC_TIMER, 0);
        return;
    }
    sim->pac_now_runs = 0;
    if (wakeup <= now_us) {
        /* pac_run() should have done what was due; do not spin on it. */
        sim->res->pac_stuck_wakeups++;
        sim_timer_arm(sim, &sim->pac_timer, (now_us + 1) * SIM_NS_PER_US,
                      SIM_EV_PAC_TIMER, 0);
    } else {
        sim_net_pac_schedule(sim);
    }
}

/* Tells libpac, which tracks no connection, of segment 'seg' ('rx' if
 * toward the receiver), as the datapath does: a segment with SYN set goes
 * whole to pac_watch_syn(), the others' flags and payload to
 * pac_watch_rx() or pac_watch_tx().  Returns true if libpac starts
 * tracking with it (a segment from the receiver): it then goes to
 * pac_tx(). */
static bool
sim_net_watch(struct sim *sim, const struct pac_segment *seg, bool rx)
{
    uint64_t now_us = sim_now_us(sim);
    bool track;

    if (seg->tcp_flags & PAC_TCP_SYN) {
        track = pac_watch_syn(sim->pac, seg, rx, now_us);
        /* The flow table may have a flow more: pac_run() scans it. */
        if (!track) {
            sim_net_pac_schedule(sim);
        }
        return track && !rx;
    } else if (rx) {
        pac_watch_rx(sim->pac, seg->payload_len, now_us);
        return false;
    }
    return pac_watch_tx(sim->pac, seg->tcp_flags, seg->payload_len, now_us);
}

/* The receiver's TCP emits 'pkt'. */
void
sim_net_rcv_output(struct sim *sim, struct sim_pkt *pkt)
{
    struct pac_segment seg;
    size_t len = sim_pkt_build(sim, pkt);
    bool ok = sim_pkt_parse(sim, pkt, len, &seg);

    pkt->born_ns = sim->now;
    if (sim->cfg.mode == SIM_MODE_OFF || !ok) {
        sim_net_reverse_send(sim, pkt);
        return;
    }
    if (!pac_tracking(sim->pac) && !sim_net_watch(sim, &seg, false)) {
        /* The fast path: it goes as it is. */
        sim->res->pac_passed++;
        sim_net_reverse_send(sim, pkt);
        return;
    }

    /* Mark it held first: libpac may emit it from inside pac_tx(). */
    pkt->held = true;
    sim->held++;
    enum pac_verdict verdict = pac_tx(sim->pac, &seg, pkt, sim_now_us(sim),
                                      sim_net_pac_emit, sim);
    if (seg.window_clamped) {
        pkt->window = seg.window;
    }
    if (verdict == PAC_PASS) {
        if (pkt->held) {
            pkt->held = false;
            sim->held--;
            sim->res->pac_passed++;
            sim_net_reverse_send(sim, pkt);
        } else {
            /* libpac emitted it and also said "pass": sent twice. */
            sim->res->pac_bad_emits++;
        }
    } else {
        sim->res->pac_held++;
        sim_trace(sim, "pac hold conn=%u seq=%u ack=%u len=%u flags=%s "
                  "held=%u", pkt->conn, pkt->seq, pkt->ack, pkt->len,
                  sim_flags_str(pkt->flags), sim->held);
        if (sim->held > sim->res->max_held) {
            sim->res->max_held = sim->held;
        }
    }
    sim_net_pac_trace(sim, "tx", pkt->conn);
    sim_net_pac_schedule(sim);
}

/* 'pkt' reaches the receiver's port: PAC observes it.  The caller then
 * hands it to the receiver's TCP (sim_rcv_input()) and frees it. */
void
sim_net_rcv_arrive(struct sim *sim, struct sim_pkt *pkt)
{
    struct pac_segment seg;
    size_t len = sim_pkt_build(sim, pkt);
    bool ok = sim_pkt_parse(sim, pkt, len, &seg);

    sim->fwd_payload -= pkt->len;
    if (sim->cfg.trace) {
        sim_trace(sim, "arrive conn=%u seq=%u ack=%u len=%u flags=%s",
                  pkt->conn, pkt->seq, pkt->ack, pkt->len,
                  sim_flags_str(pkt->flags));
    }
    if (sim->cfg.mode != SIM_MODE_OFF && ok && !pac_tracking(sim->pac)) {
        sim_net_watch(sim, &seg, true);
    } else if (sim->cfg.mode != SIM_MODE_OFF && ok) {
        pac_rx(sim->pac, &seg, sim_now_us(sim), sim_net_pac_emit, sim);
        sim_net_pac_trace(sim, "rx", pkt->conn);
        sim_net_pac_schedule(sim);
    }
}

/* Ends libpac: flushes what it still holds (those packets are counted and
 * freed, not sent) and frees it. */
static void
sim_net_pac_final_emit(void *aux, void *pkt_, enum pac_emit emit)
{
    struct sim *sim = aux;
    struct sim_pkt *pkt = pkt_;

    if (!pkt || !pkt->held) {
        sim->res->pac_bad_emits++;
        return;
    }
    pkt->held = false;
    sim->held--;
    sim->res->pac_left_held++;
    (void) emit;
    sim_pkt_free(sim, pkt);
}

void
sim_net_pac_finish(struct sim *sim)
{
    if (!sim->pac) {
        return;
    }

    struct pac_stats st;
    pac_get_stats(sim->pac, &st);
    for (int c = 0; c < PAC_N_REL_CAUSES && c < 8; c++) {
        sim->res->pac_rel_cause[c] = st.released[c];
    }
    sim->res->pac_corrections = st.corrections;
    sim->res->pac_silence_resets = st.silence_resets;
    sim->res->pac_request_triggers = st.request_triggers;
    sim->res->pac_handshake_triggers = st.handshake_triggers;
    sim->res->pac_stale_events = st.stale_events;
    sim->res->pac_tracking_starts = st.tracking_starts;
    sim->res->pac_tracking_stops = st.tracking_stops;
    sim->res->pac_fast_rx = st.fast_rx_packets;
    sim->res->pac_fast_tx = st.fast_tx_packets;

    pac_destroy(sim->pac, sim_net_pac_final_emit, sim);
    sim->pac = NULL;
}
