/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* The PAC algorithm (paper Algorithm 1 and section III), extended for modern
 * TCP stacks (DESIGN.md section 4).
 *
 * in_flight is the estimated payload the receiver's released segments have
 * asked for and that has not arrived yet.  Each segment leaving the receiver
 * has a "trigger", the data its arrival at the peer will let loose:
 *
 *   - an ACK: eq. (3), the newly acknowledged bytes plus the peer's window
 *     growth (slow start: as many bytes again, since Linux grows cwnd by the
 *     acked segments; congestion avoidance: MSS * MSS / window; 0 with ECE);
 *   - a duplicate ACK: one MSS (fast retransmit, limited transmit);
 *   - a window trigger to an idle peer (a request, a SYN-ACK): the peer's
 *     estimated window, which it sends unclocked.  This is
 *     what makes incast collapse on IW10 stacks, and the paper's ACK-only
 *     rule cannot see it.
 *
 * A segment is sent at once if it fits (in_flight + trigger <= threshold,
 * or nothing is in flight) and no segment of higher or equal priority is
 * waiting; otherwise it is held in the MLFQ and released, highest level
 * first and round robin per flow within a level, as data arrives (eq. 5).
 * Segments of one flow always leave in order. */

#include <stdlib.h>
#include <string.h>
#include "pac-private.h"
#include "pac-flow.h"

#define MIN(A, B) ((A) < (B) ? (A) : (B))
#define MAX(A, B) ((A) > (B) ? (A) : (B))

/* A spell without any data toward the receiver this long (and at least
 * PAC_SILENCE_RTTS base RTTs) while in_flight > 0 means the estimate was
 * wrong (a peer that was expected to send did not): in_flight is reset.
 * Base RTT, not the control interval: PAC's own delay of ACKs is part of
 * the latter, but data that was asked for arrives within an RTT plus the
 * time to drain the bottleneck queue. */
#define PAC_SILENCE_MIN_US 1000
#define PAC_SILENCE_RTTS 8

/* A peer asked again after this much idleness is assumed back in slow
 * start (Linux restarts after an idle RTO, at least 200 ms).  The window
 * model itself is not shrunk: see classify_tx(). */
#define PAC_RESTART_IDLE_US 250000

/* Closed flows (FIN both ways) are forgotten after this much quiet. */
#define PAC_CLOSED_LINGER_US 1000000

/* A flow whose triggered data stops arriving for this long (at least; see
 * dry_time()) has finished its answer: what it was allowed but did not send
 * leaves in_flight. */
#define PAC_DRY_MIN_US 500

/* Data may reach PAC late: the datapath may not poll its port, or the host
 * may not deliver to it, for milliseconds, while the bottleneck keeps
 * sending.  Silences shorter than the longest such delay seen are not
 * taken as silence (see note_late_data()).  Gaps longer than this are not
 * delivery delays. */
#define PAC_LATE_MAX_US 8000

/* A peer asked by a window trigger that has not answered at all is given
 * this many times longer than a dry flow before its window is reclaimed
 * (it may think before answering). */
#define PAC_PENDING_DRY_FACTOR 16

/* A peer silent in the middle of an answer that PAC expects to go on
 * (answer_unfinished()) is given this many more dry times before its
 * window is reclaimed, unless it may be waiting for ACKs (reclaim_dry()). */
#define PAC_UNFINISHED_DRY_WAITS 3

/* Frame bytes around a segment's payload: Ethernet 14, IPv4 20, TCP 20,
 * timestamps option 12. */
#define PAC_WIRE_OVERHEAD 66

/* Payload bytes that take as much switch buffer as a bare ACK frame (66
 * bytes) next to full segments. */
#define PAC_ACK_FRAME 63

/* The window clamp gives each peer this share of the threshold, so that
 * answers overlap: with a whole threshold per peer, one request filled it
 * and answers ran one at a time, the bottleneck idle while each began (the
 * request's trip and the peer's wake-up take hundreds of microseconds;
 * docs/benchmarks.md, the 500 Mbit/s diagnosis).  A half, not a quarter:
 * the model did best with a quarter, but on the testbed at 100 Mbit/s
 * with 100 KB a quarter let a warm round time out in 1 run of 3 or 4. */
#define PAC_CLAMP_SHARE 2

/* Most option bytes a TCP header carries. */
#define PAC_MAX_TCP_OPTIONS 40

/* Upper bound of the modelled peer window. */
#define PAC_MAX_CWND (64u << 20)

/* Idle-flow scans run this often. */
#define PAC_SCAN_INTERVAL_US 1000000

/* The least window, in segments, that PAC wants each busy peer to have:
 * it admits at most threshold / (PAC_MIN_FLOW_WINDOW * MSS) busy peers. */
#define PAC_MIN_FLOW_WINDOW 4

/* Flows looked at, in all, for heads that trigger nothing while the
 * scheduler waits (see release_free()). */
#define PAC_FREE_LOOKAHEAD 256

/* A safety bound on the flows the scheduler visits per level to find an
 * eligible one; normally it walks a ring once at most. */
#define PAC_RR_LOOKAHEAD 100000u

/* Bounds of the control interval. */
#define PAC_MIN_INTERVAL_US 10
#define PAC_MAX_INTERVAL_US 100000

/* Eq. (6) reads a throughput drop to lambda times BW_S within one control
 * interval; it needs the interval to hold this many segments at the
 * smoothed rate.  With fewer, one segment more or less is the drop: at 250
 * Mbit/s and a 130 us interval (three segments) the model corrected
 * in_flight below what four window-limited peers had in flight, admitted a
 * fifth, and overflowed the buffer (pac-sim, 16 senders, 25 KB). */
#define PAC_EQ6_MIN_PKTS 8

/* Shortest window over which bw_max, the peak receive rate, is measured. */
#define PAC_RATE_WINDOW_US 1000

/* Loss cap (update_loss_cap()): each control interval that saw upstream
 * loss lowers the ceiling of the threshold by 1/PAC_LOSS_CAP_STEP of the
 * configured threshold, down to cfg.loss_floor_permille of it; each
 * PAC_LOSS_CAP_GROW_US without loss raises it back by one MSS.  The growth
 * is slow so that the margin outlasts the pause between incast rounds. */
#define PAC_LOSS_CAP_STEP 16
#define PAC_LOSS_CAP_GROW_US 1000000

static unsigned int vm_window_scale(const struct pac *,
                                    const struct pac_flow *);
static uint32_t tcp_trigger_bytes(const struct pac *,
                                  const struct pac_flow *,
                                  const struct pac_held *);
static void release_expired(struct pac *, enum pac_class first,
                            pac_emit_cb *, void *aux);
static void release_head(struct pac *, uint32_t flow_idx,
                         enum pac_release_cause, pac_emit_cb *, void *aux);
static void release_flow(struct pac *, uint32_t flow_idx,
                         enum pac_release_cause, pac_emit_cb *, void *aux);

const char *
pac_version(void)
{
    return PAC_VERSION_STRING;
}

/* Instance lifetime. */

struct pac *
pac_create(const struct pac_config *cfg, uint64_t now_us)
{
    struct pac *pac;

    if (!pac_config_check(cfg, NULL, 0)) {
        return NULL;
    }
    pac = calloc(1, sizeof *pac);
    if (!pac) {
        return NULL;
    }
    pac->cfg = *cfg;
    pac->now = now_us;
    if (!pac_flow_table_init(pac) || !pac_queue_init(pac)) {
        pac_flow_table_free(pac);
        pac_queue_free(pac);
        free(pac);
        return NULL;
    }
    pac->threshold = cfg->threshold;
    pac->loss_cap = cfg->threshold;
    pac->iv_start = now_us;
    pac->out_head = pac->out_tail = PAC_NONE;
    pac->tx_held = PAC_NONE;
    pac->avg_base_rtt_us = cfg->base_rtt_us;
    pac->min_rtt_us = cfg->base_rtt_us;
    pac->next_scan = now_us + PAC_SCAN_INTERVAL_US;
    pac->last_trigger_turn = now_us;
    return pac;
}

void
pac_flush(struct pac *pac, pac_emit_cb *emit, void *aux)
{
    for (int l = 0; l < PAC_MAX_LEVELS; l++) {
        while (pac->rr_cursor[l] != PAC_NONE) {
            release_flow(pac, pac->rr_cursor[l], PAC_REL_FLUSH, emit, aux);
        }
    }
}

void
pac_destroy(struct pac *pac, pac_emit_cb *emit, void *aux)
{
    if (pac) {
        pac_flush(pac, emit, aux);
        pac_flow_table_free(pac);
        pac_queue_free(pac);
        free(pac);
    }
}

/* Estimation. */

static uint32_t
control_interval(const struct pac *pac)
{
    uint32_t iv = pac->avg_base_rtt_us + pac->avg_hold_us;

    return MIN(MAX(iv, PAC_MIN_INTERVAL_US), PAC_MAX_INTERVAL_US);
}

/* The window clamp_window gives flow 'f': as many whole segments as a
 * PAC_CLAMP_SHARE'th of the threshold holds frames of (so that a
 * window-limited peer still sends full ones), at least two.  A peer may
 * send its whole window in one burst at its own line rate, which the switch
 * buffer must absorb. */
static uint32_t
clamp_bytes(const struct pac *pac, const struct pac_flow *f)
{
    uint32_t segs = (pac->cfg.threshold / PAC_CLAMP_SHARE
                     / (f->mss + PAC_WIRE_OVERHEAD));

    return MAX(segs, 2) * f->mss;
}

/* The window-clamp state of flow 'f' (kept beside the flow table). */
static struct pac_flow_wnd *
flow_wnd(const struct pac *pac, const struct pac_flow *f)
{
    return &pac->flow_wnd[f - pac->flows];
}

/* Whether PAC clamps the windows of flow 'f': it knows the scale of the
 * receiver's window field from the handshake. */
static bool
window_clamped(const struct pac *pac, const struct pac_flow *f)
{
    return (pac->cfg.clamp_window
            && ((flow_wnd(pac, f)->bits & PAC_W_SCALE_KNOWN)
                == PAC_W_SCALE_KNOWN));
}

/* The largest window the peer of 'f' may use: the clamp, if any. */
static uint32_t
window_cap(const struct pac *pac, const struct pac_flow *f)
{
    return window_clamped(pac, f) ? clamp_bytes(pac, f) : PAC_MAX_CWND;
}

/* The peer's congestion window as PAC models it, in bytes: the initial
 * window until the flow's ACKs say more (see cwnd_increment()), within
 * 'cap', the window the receiver allows. */
static uint32_t
peer_cwnd_within(const struct pac *pac, const struct pac_flow *f,
                 uint32_t cap)
{
    uint32_t cwnd = f->cwnd ? f->cwnd : pac->cfg.init_window_segs * f->mss;

    return MIN(cwnd, cap);
}

/* The same within the receiver's window as clamped. */
static uint32_t
peer_cwnd(const struct pac *pac, const struct pac_flow *f)
{
    return peer_cwnd_within(pac, f, window_cap(pac, f));
}

/* The size of the answer that ends where a request acknowledging 'ack'
 * starts the next one, or 0 if unknown. */
static uint32_t
answer_size(const struct pac_flow *f, uint32_t ack)
{
    return ((f->flags & PAC_F_IN_RESP) && pac_seq_gt(ack, f->resp_start)
            ? ack - f->resp_start : 0);
}

/* The size PAC expects of the answer that flow 'f' is in: the larger of
 * the two before it, or 0 if unknown.  A connection may alternate small
 * and large answers (the incast client reads each sender's counters
 * between two rounds), and a large answer counted as small fills the
 * switch buffer unseen, while a small one counted as large gives its
 * budget back at its short last segment (is_short_segment()). */
static uint32_t
expected_answer(const struct pac *pac, const struct pac_flow *f)
{
    return MAX(f->last_resp, flow_wnd(pac, f)->prev_resp);
}

/* The data an idle peer is expected to send when asked by a window trigger
 * acknowledging 'ack': its window, but no more than the larger of its last
 * two answers (see expected_answer(); the request has not yet made the one
 * that ends at 'ack' last_resp).  A connection's first answer alone caps
 * nothing: it is often a greeting (the incast client reads each sender's
 * counters, a 56-byte answer, before round 1), and a window counted as 56
 * bytes comes unbudgeted (at 500 Mbit/s / 16 senders, 8 of which had
 * answered so: round-1 retransmissions, median of 10 runs, 14 before and
 * 1.5 after). */
static uint32_t
window_estimate(const struct pac *pac, const struct pac_flow *f,
                const struct pac_held *d)
{
    uint32_t ack = d->ack;
    /* A SYN-ACK's window field is unscaled (at most 64 KB) and never
     * clamped. */
    uint32_t w = (d->kind == PAC_K_HANDSHAKE
                  ? peer_cwnd_within(pac, f, UINT16_MAX) : peer_cwnd(pac, f));
    uint32_t answer = answer_size(f, ack);

    if (answer && !f->last_resp) {
        return w;
    }
    answer = (answer ? MAX(answer, f->last_resp)
              : expected_answer(pac, f));
    return answer ? MIN(w, answer) : w;
}

/* Where the data that the peer of flow 'f' may have sent ends: the end of
 * its budget (what released triggers allowed), or what has arrived if
 * that is further or there is no budget. */
static uint32_t
allowed_end(const struct pac_flow *f)
{
    return ((f->flags & PAC_F_BUDGET) && pac_seq_gt(f->budget_end, f->rcv_nxt)
            ? f->budget_end : f->rcv_nxt);
}

/* Growth of the peer's window when an ACK newly acknowledging 'delta' bytes
 * reaches it (Reno/CUBIC-like): in slow start as many bytes as acked (Linux
 * counts acked segments, so a stretch ACK grows cwnd by all of them), at
 * least one MSS; in congestion avoidance MSS * MSS / cwnd; with ECE none;
 * for a window-limited peer no more than the receiver's window leaves
 * room for. */
static uint32_t
cwnd_increment(const struct pac *pac, const struct pac_flow *f,
               const struct pac_held *d, uint32_t delta)
{
    uint32_t inc;

    if (!delta || (d->flags & PAC_H_ECE)) {
        return 0;
    } else if (f->flags & PAC_F_SLOW_START) {
        inc = MAX(delta, f->mss);
    } else {
        inc = (uint32_t) ((uint64_t) f->mss * f->mss
                          / MAX(peer_cwnd(pac, f), f->mss));
    }
    /* The window model is an upper bound, so reaching the clamp says
     * nothing of the peer's own window.  A peer seen to fill the receiver's
     * window (PAC_W_LIMITED) sends up to the right edge that 'd' offers:
     * the growth is what lies beyond the bytes already allowed, 'delta'
     * included.  The edge moves by more than 'delta' when the receiver's
     * application has read and its window opened; counting 'delta' alone
     * left the data beyond it unbudgeted (docs/libpac.md). */
    if (flow_wnd(pac, f)->bits & PAC_W_LIMITED) {
        uint32_t edge = d->ack + ((uint32_t) d->window
                                  << vm_window_scale(pac, f));
        uint32_t allowed = allowed_end(f) + delta;

        inc = pac_seq_gt(edge, allowed) ? MIN(inc, edge - allowed) : 0;
    }
    return inc;
}

/* Notes the MSS option 'mss' of a handshake segment from 'from'
 * (PAC_MSS_VM or PAC_MSS_PEER): the flow's 'mss' becomes the least one
 * seen, which is the largest payload the peer sends. */
static void
note_mss(struct pac_flow *f, uint16_t mss, unsigned int from)
{
    if (mss) {
        f->mss = f->mss_from ? MIN(f->mss, mss) : mss;
        f->mss_from |= from;
    }
}

/* Whether a segment of 'len' payload bytes that the peer sent is short: a
 * TCP sender sends less than a full segment only when that is all it has
 * queued (Nagle, autocorking, TSO splitting all keep the rest full-sized),
 * so the peer has sent all its application gave it.  Only judged when both
 * MSS options were seen; a full segment is the MSS less up to
 * PAC_MAX_TCP_OPTIONS bytes of options. */
static bool
is_short_segment(const struct pac_flow *f, uint32_t len)
{
    return (f->mss_from == (PAC_MSS_VM | PAC_MSS_PEER)
            && len + PAC_MAX_TCP_OPTIONS < f->mss);
}

static uint32_t
ack_delta(const struct pac_flow *f, uint32_t ack)
{
    return ((f->flags & PAC_F_ACK_BASE) && pac_seq_gt(ack, f->last_ack)
            ? ack - f->last_ack : 0);
}

static bool
is_dup_ack(const struct pac_flow *f, const struct pac_held *d)
{
    return (d->kind == PAC_K_ACK && (d->flags & PAC_H_PURE)
            && !ack_delta(f, d->ack));
}

/* A window trigger whose window is already accounted: the flow's previous
 * window trigger has not produced any data yet (for example a request
 * right after the SYN-ACK of a connection the peer opened, or a pipelined
 * request). */
static bool
window_pending(const struct pac *pac, const struct pac_flow *f)
{
    return ((f->flags & PAC_F_MEASURING) && !f->burst_bytes
            && f->window_epoch == pac->epoch);
}

/* Whether ACK number 'ack' acknowledges nothing the peer sent since the
 * last request of flow 'f' went out. */
static bool
acks_no_new_answer(const struct pac_flow *f, uint32_t ack)
{
    return (f->flags & PAC_F_IN_RESP) && !pac_seq_gt(ack, f->resp_start);
}

/* A request that acknowledges nothing the peer sent since the previous
 * request: the receiver's retransmission of a request PAC still held (it
 * waited past the receiver's RTO), or a pipelined one.  The previous
 * request's window covers it. */
static bool
repeated_request(const struct pac_flow *f, const struct pac_held *d)
{
    return d->kind == PAC_K_REQUEST && acks_no_new_answer(f, d->ack);
}

/* Data that is not a request (a repeated request, data to a busy peer), and
 * the receiver's SYN, make the peer answer with at least a bare segment (an
 * ACK, a SYN-ACK): no payload, but a frame in the switch buffer.  Counted
 * as the payload that takes as much buffer, and kept apart from any flow's
 * budget (see credit_rx()).  Without this, a thousand repeated requests let
 * out together come back as a thousand ACKs at once. */
static uint32_t
ack_frame_bytes(const struct pac_flow *f, const struct pac_held *d)
{
    return ((d->kind == PAC_K_ACK && (d->payload_len || d->flags & PAC_H_SYN))
            || repeated_request(f, d) ? PAC_ACK_FRAME : 0);
}

/* Whether the peer of flow 'f' has sent less of its current answer than
 * PAC expects of it (expected_answer()).  PAC budgets answers of that size
 * (response_room()), so a silence or a short segment before it is more
 * likely a delay (its ACKs or its data waited for a queue or a CPU) or the
 * edge of the receiver's window than the end of the answer. */
static bool
answer_unfinished(const struct pac *pac, const struct pac_flow *f)
{
    uint32_t expected = expected_answer(pac, f);

    return ((f->flags & PAC_F_IN_RESP) && expected
            && pac_seq_lt(f->rcv_nxt, f->resp_start + expected));
}

/* Returns how much more the peer can send of its current answer if that is
 * as large as PAC expects (expected_answer()), or UINT32_MAX if that is
 * unknown or the answer has outgrown it.  The budget is what released
 * triggers allowed. */
static uint32_t
response_room(const struct pac *pac, const struct pac_flow *f)
{
    uint32_t expected = expected_answer(pac, f);
    uint32_t end, base;

    if (!(f->flags & PAC_F_IN_RESP) || !expected) {
        return UINT32_MAX;
    }
    end = f->resp_start + expected;
    if (pac_seq_gt(f->rcv_nxt, end)) {
        return UINT32_MAX;
    }
    base = allowed_end(f);
    return pac_seq_gt(end, base) ? end - base : 0;
}

/* Returns the trigger of segment 'd' of flow 'f' if it were sent now: what
 * TCP lets the peer send (see the top of this file), but no more than what
 * is left of an answer of the expected size.  Without that cap, the ACKs
 * that follow the end of an answer would count as triggers of data that
 * never comes. */
static uint32_t
trigger_bytes(const struct pac *pac, const struct pac_flow *f,
              const struct pac_held *d)
{
    uint32_t trigger = tcp_trigger_bytes(pac, f, d);

    if (d->kind != PAC_K_REQUEST) {
        trigger = MIN(trigger, response_room(pac, f));
    }
    return trigger + ack_frame_bytes(f, d);
}

/* An answer of 'bytes' ends in a segment shorter than a full one, which
 * takes a whole frame's overhead in the switch buffer, while fits() counts
 * overhead in proportion to payload.  Returns the payload that makes up the
 * difference.  A thousand 1 KB answers in one round are 2 % larger on the
 * wire than fits() would otherwise think.  (The flow's budget then exceeds
 * its answer by these bytes; the short segment reclaims them, see
 * is_short_segment().) */
static uint32_t
tail_frame_bytes(const struct pac *pac, uint32_t bytes)
{
    uint32_t mss = pac->cfg.default_mss;
    uint32_t tail = bytes % mss;

    return (tail
            ? PAC_WIRE_OVERHEAD * (mss - tail) / (mss + PAC_WIRE_OVERHEAD)
            : 0);
}

/* Eq. (3) and the window triggers, without the answer-size cap. */
static uint32_t
tcp_trigger_bytes(const struct pac *pac, const struct pac_flow *f,
                  const struct pac_held *d)
{
    uint32_t delta = ack_delta(f, d->ack);

    if (d->kind != PAC_K_ACK) {
        uint32_t window = (window_pending(pac, f) || repeated_request(f, d)
                           ? 0 : window_estimate(pac, f, d));

        return delta + window + tail_frame_bytes(pac, window);
    } else if (f->flags & PAC_F_DRY) {
        return 0;
    } else if (!delta) {
        return d->flags & PAC_H_PURE ? f->mss : 0;
    } else {
        return delta + cwnd_increment(pac, f, d, delta);
    }
}

/* Whether 'trigger' more bytes fit under the threshold.  in_flight and
 * triggers count TCP payload, but a switch buffer holds whole frames: each
 * full segment of default_mss bytes takes PAC_WIRE_OVERHEAD bytes more. */
static bool
fits(const struct pac *pac, uint32_t trigger)
{
    uint64_t payload = pac->in_flight + trigger;
    uint64_t mss = pac->cfg.default_mss;

    /* floor(payload * (mss + overhead) / mss) <= threshold, without the
     * division (tens of cycles, on most scheduler passes). */
    return (!pac->in_flight
            || payload * (mss + PAC_WIRE_OVERHEAD)
               < (pac->threshold + 1) * mss);
}

static void
note_ack_delay(struct pac *pac, uint32_t delay_us)
{
    pac->avg_hold_us = pac->avg_hold_us - pac->avg_hold_us / 8
                       + delay_us / 8;
}

/* Outstanding list.
 *
 * A flow's outstanding bytes are the data its released triggers allowed and
 * that has not arrived yet (budget_end - rcv_nxt): its share of in_flight.
 * Flows with outstanding bytes are listed by when data last arrived, so the
 * head is the flow that has been silent longest.  When that silence exceeds
 * dry_time(), the peer has sent all it had (its answer is complete; the
 * ACKs that followed the end of the answer triggered nothing), and the
 * flow's outstanding bytes leave in_flight.  This removes the main source of
 * over-estimation the paper corrects only indirectly, by eq. (6). */

static uint32_t
flow_outstanding(const struct pac_flow *f)
{
    return ((f->flags & PAC_F_BUDGET) && (f->flags & PAC_F_RCV_BASE)
            && pac_seq_gt(f->budget_end, f->rcv_nxt)
            ? f->budget_end - f->rcv_nxt : 0);
}

static void
out_list_remove(struct pac *pac, uint32_t idx)
{
    struct pac_flow *f = &pac->flows[idx];

    if (f->out_prev != PAC_NONE) {
        pac->flows[f->out_prev].out_next = f->out_next;
    } else {
        pac->out_head = f->out_next;
    }
    if (f->out_next != PAC_NONE) {
        pac->flows[f->out_next].out_prev = f->out_prev;
    } else {
        pac->out_tail = f->out_prev;
    }
    f->out_prev = f->out_next = PAC_NONE;
    f->flags &= ~PAC_F_ON_OUT_LIST;
    pac->n_outstanding--;
    pac_update_busy(pac, idx);
}

static void
out_list_append(struct pac *pac, uint32_t idx)
{
    struct pac_flow *f = &pac->flows[idx];

    f->last_data = (uint32_t) pac->now;
    f->out_next = PAC_NONE;
    f->out_prev = pac->out_tail;
    if (pac->out_tail != PAC_NONE) {
        pac->flows[pac->out_tail].out_next = idx;
    } else {
        pac->out_head = idx;
    }
    pac->out_tail = idx;
    f->flags |= PAC_F_ON_OUT_LIST;
    pac->n_outstanding++;
    pac_update_busy(pac, idx);
}

/* Restarts the clock of flow 'idx', which stays on the list: it goes to
 * the tail (data arrived, or reclaim_dry() gives it more time).  Neither
 * the list's count nor the flow's busy state changes, so unlike a removal
 * and an append, this touches only the flow and its neighbours (on every
 * data segment). */
static void
out_list_move_to_tail(struct pac *pac, uint32_t idx)
{
    struct pac_flow *f = &pac->flows[idx];

    f->last_data = (uint32_t) pac->now;
    if (pac->out_tail == idx) {
        return;
    }
    if (f->out_prev != PAC_NONE) {
        pac->flows[f->out_prev].out_next = f->out_next;
    } else {
        pac->out_head = f->out_next;
    }
    pac->flows[f->out_next].out_prev = f->out_prev;
    f->out_next = PAC_NONE;
    f->out_prev = pac->out_tail;
    pac->flows[pac->out_tail].out_next = idx;
    pac->out_tail = idx;
}

/* Whether PAC holds ACKs of flow 'f' (its head is an ACK). */
static bool
holds_acks(const struct pac *pac, const struct pac_flow *f)
{
    return f->n_held && pac->held[f->held_head].kind == PAC_K_ACK;
}

/* Whether the peer of flow 'f' may be waiting for ACKs: PAC holds some, or
 * data arrived that no ACK sent to the peer acknowledges yet (the receiver
 * has not answered it, or its ACK has not reached PAC: on a busy host,
 * milliseconds).  Such a peer's silence says nothing about whether it is
 * done: it may be limited by its window or its congestion window. */
static bool
peer_may_wait_for_acks(const struct pac *pac, const struct pac_flow *f)
{
    return (holds_acks(pac, f)
            || ((f->flags & PAC_F_ACK_BASE) && (f->flags & PAC_F_RCV_BASE)
                && pac_seq_gt(f->rcv_nxt, f->last_ack)));
}

/* A flow is busy while its peer is answering (it has outstanding bytes) or
 * waits for ACKs that PAC holds.  A flow whose head is a window trigger is
 * not busy: it waits to be started. */
void
pac_update_busy(struct pac *pac, uint32_t idx)
{
    struct pac_flow *f = &pac->flows[idx];
    bool busy = ((f->flags & PAC_F_ON_OUT_LIST)
                 || holds_acks(pac, f));

    if (busy != !!(f->flags & PAC_F_BUSY)) {
        f->flags ^= PAC_F_BUSY;
        pac_rr_mark(pac, idx);
        if (busy) {
            pac->n_busy++;
        } else {
            pac->n_busy--;
        }
    }
}

/* Puts flow 'idx' on, or takes it off, the outstanding list after its budget
 * or rcv_nxt changed.  'data' says data just arrived (restarts its clock). */
static void
out_list_update(struct pac *pac, uint32_t idx, bool data)
{
    struct pac_flow *f = &pac->flows[idx];
    bool listed = f->flags & PAC_F_ON_OUT_LIST;

    if (!flow_outstanding(f)) {
        if (listed) {
            out_list_remove(pac, idx);
        }
    } else if (!listed) {
        out_list_append(pac, idx);
    } else if (data) {
        out_list_move_to_tail(pac, idx);
    }
}

/* How long triggered data may take to arrive: a few base RTTs plus the time
 * the bottleneck needs to drain a threshold's worth of data (at the highest
 * rate seen: the current rate falls exactly when flows go dry). */
static uint32_t
dry_time(const struct pac *pac)
{
    uint64_t t = 4 * (uint64_t) pac->min_rtt_us;

    if (pac->bw_max > 0) {
        t += MIN((uint64_t) (pac->threshold / pac->bw_max),
                 PAC_MAX_INTERVAL_US);
    } else {
        t += PAC_DRY_MIN_US;
    }
    return MAX(t, PAC_DRY_MIN_US);
}

/* How long PAC must see no data at all while it expects some before it
 * resets in_flight: longer than the latest delivery delay it has seen, with
 * a quarter to spare (see note_late_data()). */
static uint64_t
silence_time(const struct pac *pac)
{
    uint64_t t = MAX(PAC_SILENCE_MIN_US,
                     PAC_SILENCE_RTTS * (uint64_t) pac->min_rtt_us);

    return MAX(t, pac->late_us + (uint64_t) pac->late_us / 4);
}

/* A flow sent new data that PAC had stopped expecting: its triggered bytes
 * had been reclaimed as dry, or reset after a silence.  If PAC had seen no
 * data from any flow before it, for a spell short enough to be a delivery
 * delay (the bottleneck kept sending while PAC saw nothing), PAC's next
 * silence reset waits longer than that.  A gap of one flow's data while
 * others kept arriving is not delivery (the flow waited for its ACKs, or
 * sent unasked), nor is a long spell.  The drain time of dry flows stays:
 * waiting as long for every dry flow cost a third of the goodput at 1
 * Gbit/s with 1 024 senders, where most dry verdicts are right. */
static void
note_late_data(struct pac *pac)
{
    uint64_t silence = pac->now - pac->last_rx_data;

    if (silence >= PAC_DRY_MIN_US && silence <= PAC_LATE_MAX_US) {
        pac->stats.late_data++;
        pac->late_us = MAX(pac->late_us, silence);
    }
}

/* Eq. (5), per flow: received data lowers in_flight by what it delivers of
 * its flow's outstanding bytes ('credited', which exceeds 'len' when a
 * retransmission fills a hole).  Data nobody asked for, and bare ACKs (see
 * ack_frame_bytes()), lower only the part of in_flight no flow accounts
 * for, so that they never cancel the triggers of other flows. */
static void
credit_rx(struct pac *pac, uint32_t len, uint32_t credited)
{
    uint32_t rest = len > credited ? len - credited : PAC_ACK_FRAME * !len;
    uint64_t other = MIN(pac->unattributed, rest);

    pac->unattributed -= other;
    pac->in_flight -= MIN(pac->in_flight, credited + other);
}

/* Takes flow 'idx's outstanding bytes out of in_flight. */
static void
reclaim_outstanding(struct pac *pac, uint32_t idx)
{
    struct pac_flow *f = &pac->flows[idx];
    uint32_t out = flow_outstanding(f);

    pac->in_flight -= MIN(pac->in_flight, out);
    f->budget_end = f->rcv_nxt;
    pac_rr_mark(pac, idx);
    if (f->flags & PAC_F_ON_OUT_LIST) {
        out_list_remove(pac, idx);
    }
}

/* Takes flow 'idx's outstanding bytes out of in_flight on a verdict that
 * its peer has sent all it will: it went dry, or sent a short segment.
 * Where they ended is kept, for restore_reclaimed(). */
static void
reclaim_on_verdict(struct pac *pac, uint32_t idx)
{
    struct pac_flow *f = &pac->flows[idx];
    struct pac_flow_wnd *w = flow_wnd(pac, f);

    if (flow_outstanding(f)) {
        w->reclaimed_end = f->budget_end;
        w->bits |= PAC_W_RECLAIMED;
    }
    reclaim_outstanding(pac, idx);
}

/* A verdict that the peer of flow 'f' had sent all was wrong if it sends
 * new data of the same answer before PAC gives it another trigger: the
 * peer was only late (its ACKs, or its data, waited in a queue or for a
 * CPU).  What the verdict took was then still coming: it counts again,
 * less what arrived. */
static void
restore_reclaimed(struct pac *pac, struct pac_flow *f,
                  const struct pac_segment *seg)
{
    struct pac_flow_wnd *w = flow_wnd(pac, f);

    if (!(w->bits & PAC_W_RECLAIMED) || !seg->payload_len
        || !(f->flags & PAC_F_RCV_BASE)
        || !pac_seq_gt(seg->seq + seg->payload_len, f->rcv_nxt)) {
        return;
    }
    w->bits &= ~PAC_W_RECLAIMED;
    if (!pac_seq_gt(w->reclaimed_end, f->rcv_nxt)) {
        return;
    }
    pac->in_flight += w->reclaimed_end - f->rcv_nxt;
    f->budget_end = w->reclaimed_end;
    f->flags |= PAC_F_BUDGET;
    pac->stats.reclaims_undone++;
}

static void
reclaim_dry(struct pac *pac)
{
    uint32_t limit = dry_time(pac);
    uint32_t idx;

    while ((idx = pac->out_head) != PAC_NONE
           && pac_elapsed32(pac->now, pac->flows[idx].last_data) >= limit) {
        struct pac_flow *f = &pac->flows[idx];

        if (window_pending(pac, f)
            && pac_elapsed32(pac->now, f->iv_start)
               < PAC_PENDING_DRY_FACTOR * limit) {
            /* Asked, but not answered yet: the peer may take its time to
             * think (iv_start is when it was asked: see account_send()). */
            out_list_move_to_tail(pac, idx);
            continue;
        }
        if (answer_unfinished(pac, f) && !peer_may_wait_for_acks(pac, f)
            && flow_wnd(pac, f)->dry_waits < PAC_UNFINISHED_DRY_WAITS) {
            /* Not if the peer may be waiting for ACKs: its budget may then
             * be more than its window allows. */
            flow_wnd(pac, f)->dry_waits++;
            pac->stats.dry_waits++;
            out_list_move_to_tail(pac, idx);
            continue;
        }
        pac->stats.dry_reclaims++;
        pac->stats.dry_bytes += flow_outstanding(f);
        reclaim_on_verdict(pac, idx);

        /* A peer that has an ACK for all its data and still sends nothing
         * is done: ACKs it gets later trigger nothing.  One that may be
         * waiting for ACKs is not marked: they go out as usual, with their
         * triggers, now that the flow owes nothing.  (Marking it dry, and
         * releasing its held ACKs with no trigger, let the peer send a
         * window nothing counted: at 500 Mbit/s / 1 024 senders, 8 of the
         * 30 MB of unbudgeted data in a traced run.) */
        pac_rr_mark(pac, idx);
        if (!peer_may_wait_for_acks(pac, f)) {
            f->flags |= PAC_F_DRY;
        }
    }
}

/* The scale of the receiver's window field on flow 'f', whose handshake
 * PAC saw: the receiver's option, if both sides sent one (RFC 7323). */
static unsigned int
vm_window_scale(const struct pac *pac, const struct pac_flow *f)
{
    const struct pac_flow_wnd *w = flow_wnd(pac, f);

    return ((w->bits & (PAC_W_VM_WS | PAC_W_PEER_WS))
            == (PAC_W_VM_WS | PAC_W_PEER_WS) ? w->vm_wscale : 0);
}

/* Notes the right edge of the window that segment 'd' of flow 'f', leaving
 * now, gives the peer. */
static void
note_right_edge(struct pac *pac, const struct pac_flow *f,
                const struct pac_held *d)
{
    struct pac_flow_wnd *w = flow_wnd(pac, f);

    if (window_clamped(pac, f) && !(d->flags & PAC_H_SYN)
        && (f->flags & PAC_F_ACK_BASE)) {
        uint32_t edge = d->ack + ((uint32_t) d->window
                                  << vm_window_scale(pac, f));

        if ((w->bits & PAC_W_EDGE) && edge != w->right_edge) {
            w->old_edges[w->old_edge_pos] = w->right_edge;
            w->old_edge_pos = (w->old_edge_pos + 1) % PAC_OLD_EDGES;
            w->n_old_edges = MIN(w->n_old_edges + 1, PAC_OLD_EDGES);
        }
        w->right_edge = edge;
        w->bits |= PAC_W_EDGE;
    }
}

/* Whether a segment of flow 'f' that ends at 'end' stops at the right edge
 * of the receiver's window: a window-limited peer sends a short segment to
 * fill it (Linux does, with TCP_NODELAY), which does not end its answer.
 * The peer's edge is that of the newest ACK that has reached it, which may
 * be one of the last PAC_OLD_EDGES before the newest PAC let out: its data
 * waited in the switch buffer while PAC let more ACKs out.  With the
 * newest edge alone, half of such segments in a connection's first answer
 * (where no expected size vetoes the verdict, see may_fill_window()) were
 * taken for its end, and the ACKs that followed went out with no trigger:
 * at 500 Mbit/s / 256 senders, first-round retransmissions fell from 23 to
 * 2.8 with the older edges (mean of 8 alternated runs, docs/libpac.md). */
static bool
at_right_edge(const struct pac *pac, const struct pac_flow *f, uint32_t end)
{
    const struct pac_flow_wnd *w = flow_wnd(pac, f);

    if (!(w->bits & PAC_W_EDGE)) {
        return false;
    } else if (end == w->right_edge) {
        return true;
    }
    for (unsigned int i = 0; i < w->n_old_edges; i++) {
        if (end == w->old_edges[i]) {
            return true;
        }
    }
    return false;
}

/* Whether the peer of flow 'f', whose newest segment of 'len' bytes ended
 * at rcv_nxt, has sent enough of its current answer to have filled the
 * receiver's window, so that the segment may be short because it reached
 * the window's edge (one of the edges the peer may still be using, older
 * than those at_right_edge() keeps).  Less than half the window, or the
 * answer's first segment, cannot have: the short segment ends the answer
 * (a small answer after a large one, whose size answer_unfinished()
 * expects). */
static bool
may_fill_window(const struct pac *pac, const struct pac_flow *f,
                uint32_t len)
{
    const struct pac_flow_wnd *w = flow_wnd(pac, f);
    uint32_t sent = f->rcv_nxt - f->resp_start;

    if ((w->bits & PAC_W_EDGE) && (f->flags & PAC_F_ACK_BASE)
        && pac_seq_gt(w->right_edge, f->last_ack)) {
        return sent >= (w->right_edge - f->last_ack) / 2;
    }
    return sent > len;
}

/* Notes that the peer of flow 'f' sent up to 'end' (new data): if that
 * leaves less than a segment of the receiver's window, the peer is limited
 * by that window, not by its own, until it loses a packet or idles. */
static void
note_window_fill(struct pac *pac, const struct pac_flow *f, uint32_t end)
{
    struct pac_flow_wnd *w = flow_wnd(pac, f);

    if ((w->bits & PAC_W_EDGE) && !pac_seq_lt(end + f->mss, w->right_edge)
        && !pac_seq_gt(end, w->right_edge)) {
        w->bits |= PAC_W_LIMITED;
    }
}

/* Lowers the window of segment 'seg' of flow 'f' to the clamp, if PAC
 * clamps the flow's windows and the receiver offers more. */
static void
clamp_segment_window(struct pac *pac, const struct pac_flow *f,
                     struct pac_segment *seg)
{
    unsigned int scale;
    uint32_t limit;

    if (!window_clamped(pac, f)
        || (seg->tcp_flags & (PAC_TCP_SYN | PAC_TCP_RST))
        || !(seg->tcp_flags & PAC_TCP_ACK)) {
        return;
    }
    /* Rounded up: the window is at least the clamp, by less than one unit
     * of the scaled field. */
    scale = vm_window_scale(pac, f);
    limit = (clamp_bytes(pac, f) + (1u << scale) - 1) >> scale;
    limit = MIN(MAX(limit, 1), UINT16_MAX);
    if (seg->window > limit) {
        seg->window = limit;
        seg->window_clamped = true;
        pac->stats.windows_clamped++;
    }
}

/* Notes a handshake segment's window scale option: the receiver's ('vm')
 * or the peer's. */
static void
note_wscale(struct pac *pac, uint32_t flow_idx,
            const struct pac_segment *seg, bool vm)
{
    struct pac_flow_wnd *w = &pac->flow_wnd[flow_idx];

    if (vm) {
        w->bits |= PAC_W_VM_SYN | (seg->has_wscale ? PAC_W_VM_WS : 0);
        w->vm_wscale = seg->has_wscale ? seg->wscale : 0;
    } else {
        w->bits |= PAC_W_PEER_SYN | (seg->has_wscale ? PAC_W_PEER_WS : 0);
    }
}

/* Accounts for segment 'd' of flow 'f' leaving now with 'trigger'. */
static void
account_send(struct pac *pac, struct pac_flow *f, const struct pac_held *d,
             uint32_t trigger)
{
    uint32_t delta = ack_delta(f, d->ack);
    uint32_t frame = ack_frame_bytes(f, d);
    bool pending = window_pending(pac, f);
    bool repeated = repeated_request(f, d);

    pac_rr_mark(pac, f - pac->flows);
    note_right_edge(pac, f, d);
    if (d->kind == PAC_K_REQUEST && !pending && !repeated) {
        /* The peer is idle: whatever the previous answer left unsent
         * will not come. */
        reclaim_outstanding(pac, f - pac->flows);
    }
    pac->in_flight += trigger;
    pac->unattributed += frame;
    trigger -= frame;
    if (delta) {
        /* The window model feeds the triggers of requests, where too small
         * a guess overflows the buffer: it grows as in slow start whatever
         * phase eq. (3) assumes (an upper bound of the peer's window). */
        if (!(d->flags & PAC_H_ECE)) {
            f->cwnd = MIN(peer_cwnd(pac, f) + MAX(delta, f->mss),
                          window_cap(pac, f));
        }
        f->last_ack = d->ack;
    }
    if (trigger && (f->flags & PAC_F_RCV_BASE)) {
        f->budget_end = allowed_end(f) + trigger;
        f->flags |= PAC_F_BUDGET;
        flow_wnd(pac, f)->bits &= ~PAC_W_RECLAIMED;
    } else {
        /* Nothing received on the flow yet, so no sequence number to
         * attach the trigger to. */
        pac->unattributed += trigger;
    }
    if (d->kind != PAC_K_ACK) {
        f->flags &= ~PAC_F_DRY;
        flow_wnd(pac, f)->bits &= ~PAC_W_RECLAIMED;
        pac->last_window_release = pac->now;
    }
    if (d->kind != PAC_K_ACK && !repeated) {
        if (!pending) {
            f->flags |= PAC_F_MEASURING;
            f->burst_bytes = 0;
            f->window_epoch = pac->epoch;
            f->iv_start = (uint32_t) pac->now;
        }
        if (d->kind == PAC_K_REQUEST) {
            /* A new answer starts where the receiver's ACK stands. */
            uint32_t answer = answer_size(f, d->ack);

            if (answer) {
                flow_wnd(pac, f)->prev_resp = f->last_resp;
                f->last_resp = answer;
            }
            f->resp_start = d->ack;
            f->flags |= PAC_F_IN_RESP;
        }
        if (d->kind == PAC_K_HANDSHAKE) {
            pac->stats.handshake_triggers++;
            if (f->flags & PAC_F_SYNACK_SENT) {
                f->hs_time = (uint32_t) pac->now;
            }
        } else {
            pac->stats.request_triggers++;
        }
    } else if (delta && (f->flags & PAC_F_MEASURING) && f->burst_bytes) {
        /* The peer sent 'burst_bytes' before it could see any ACK: a lower
         * bound of its window. */
        f->cwnd = MIN(MAX(peer_cwnd(pac, f), f->burst_bytes),
                      window_cap(pac, f));
        f->flags &= ~PAC_F_MEASURING;
    }
    /* The flow's dry clock runs from the later of its last data and the
     * last trigger PAC gave its peer: time PAC held the peer's ACKs is not
     * the peer's silence. */
    out_list_update(pac, f - pac->flows, trigger > 0);
}

/* Releases the head packet of flow 'flow_idx'. */
static void
release_head(struct pac *pac, uint32_t flow_idx,
             enum pac_release_cause cause, pac_emit_cb *emit, void *aux)
{
    struct pac_flow *f = &pac->flows[flow_idx];
    uint32_t h = f->held_head;
    struct pac_held d = pac->held[h];
    uint32_t trigger = trigger_bytes(pac, f, &d);

    pac_queue_pop_head(pac, flow_idx);
    account_send(pac, f, &d, trigger);
    if (pac_held_class(&d) == PAC_CLASS_ACK) {
        note_ack_delay(pac, pac_elapsed32(pac->now, d.enq_time));
    } else if (cause == PAC_REL_FIT) {
        pac->last_trigger_turn = pac->now;
    }
    pac->stats.released[cause]++;
    if (h == pac->tx_held) {
        /* pac_tx() returns PAC_PASS for it instead. */
        pac->tx_pkt_released = true;
    } else {
        emit(aux, d.pkt, PAC_EMIT_RELEASE);
    }
}

/* Releases flow 'flow_idx's packets up to and including held packet 'h'. */
static void
release_upto(struct pac *pac, uint32_t flow_idx, uint32_t h,
             enum pac_release_cause cause, pac_emit_cb *emit, void *aux)
{
    uint32_t head;

    do {
        head = pac->flows[flow_idx].held_head;
        release_head(pac, flow_idx, cause, emit, aux);
    } while (head != h);
}

static void
release_flow(struct pac *pac, uint32_t flow_idx,
             enum pac_release_cause cause, pac_emit_cb *emit, void *aux)
{
    while (pac->flows[flow_idx].n_held) {
        release_head(pac, flow_idx, cause, emit, aux);
    }
}

/* Makes room for one more held packet: releases the flow head that has
 * waited longest, an ACK rather than a window trigger when there is one
 * (an ACK lets out a segment or two, a window trigger a whole window). */
static void
release_oldest(struct pac *pac, enum pac_release_cause cause,
               pac_emit_cb *emit, void *aux)
{
    uint32_t h = pac->age_head[PAC_CLASS_ACK];

    if (h == PAC_NONE) {
        h = pac->age_head[PAC_CLASS_TRIGGER];
    }
    if (h != PAC_NONE) {
        release_upto(pac, pac->held[h].flow, h, cause, emit, aux);
    }
}

/* Ring index (pac-rr.c). */

/* An ACK is worth sending only when its peer is about to run out of what
 * it may send: while a flow's outstanding bytes exceed its fair share of
 * the threshold (and two segments), its peer still has data to send, and
 * its ACKs wait so that flows closer to stalling go first.  Without this,
 * per-packet round robin serves the ACKs of a peer that has already sent
 * its whole answer (they trigger nothing, but count as if they did) ahead
 * of ACKs that clock running senders, and the held backlog grows until
 * max_hold forces it out in one burst.  Window triggers and ACKs that
 * trigger nothing (the answer is complete, or the flow is dry) are always
 * eligible.
 *
 * A window trigger is eligible if its flow is busy or while few peers are
 * busy (admission: each busy peer should have PAC_MIN_FLOW_WINDOW segments
 * in flight; starting more than the threshold can clock starves them all
 * until max_hold forces their ACKs out together).
 *
 * Whether a head is eligible depends on its flow's state and on three
 * totals, threshold, n_outstanding and n_busy.  rr_update_keys() reduces the
 * former to index keys, and rr_query_eligible() turns the totals into the
 * search that the scheduler runs (pac-rr.c): a flow whose head is always
 * eligible (PAC_RR_ELIGIBLE); an ACK whose outstanding bytes (tr_out) are
 * below threshold / n_outstanding, when they are at least two segments (the
 * least share); a window trigger of a flow that is not busy (PAC_RR_WINDOW)
 * while n_busy < threshold / (PAC_MIN_FLOW_WINDOW * its MSS). */


static bool
ack_eligible(const struct pac *pac, const struct pac_flow *f,
             const struct pac_held *h, uint32_t trigger)
{
    uint64_t share;

    if (h->kind != PAC_K_ACK) {
        /* Admission: start another peer only while few are busy, so that
         * each busy one can have PAC_MIN_FLOW_WINDOW segments in flight.
         * Every started peer needs ACKs to finish; starting more than the
         * threshold can clock starves them all until max_hold forces
         * their ACKs out together. */
        return ((f->flags & PAC_F_BUSY)
                || pac->n_busy < MAX(1, pac->threshold
                                        / (PAC_MIN_FLOW_WINDOW
                                           * (uint64_t) f->mss)));
    } else if (!trigger || response_room(pac, f) != UINT32_MAX) {
        /* Free, or capped by the size of the answer: an ACK of a peer that
         * has finished cannot count for anything then. */
        return true;
    }
    share = MAX(2 * (uint64_t) f->mss,
                pac->threshold / MAX(pac->n_outstanding, 1));
    return flow_outstanding(f) < share;
}


/* Recomputes the index keys of flow 'idx', which holds packets. */
static void
rr_update_keys(struct pac *pac, uint32_t idx)
{
    const struct pac_flow *f = &pac->flows[idx];
    const struct pac_held *h = &pac->held[f->held_head];
    uint32_t trigger = trigger_bytes(pac, f, h);
    uint32_t out = UINT32_MAX;
    uint32_t mss = UINT32_MAX;
    uint8_t bits = trigger ? 0 : PAC_RR_FREE;

    if (h->kind == PAC_K_ACK) {
        if (response_room(pac, f) != UINT32_MAX) {
            bits |= PAC_RR_CAPPED | PAC_RR_ELIGIBLE;
        } else if (!trigger) {
            bits |= PAC_RR_ELIGIBLE;
        } else {
            uint32_t outstanding = flow_outstanding(f);

            if (outstanding < 2 * (uint64_t) f->mss) {
                bits |= PAC_RR_ELIGIBLE;
            } else {
                out = outstanding;
            }
        }
    } else if (f->flags & PAC_F_BUSY) {
        bits |= PAC_RR_ELIGIBLE;
    } else {
        bits |= PAC_RR_WINDOW;
        mss = f->mss;
    }
    pac_rr_set_keys(pac, idx, bits, out, mss);
}

/* Brings the index keys of every marked flow up to date. */
static void
rr_flush(struct pac *pac)
{
    while (pac->n_rr_dirty) {
        uint32_t idx = pac->rr_dirty[--pac->n_rr_dirty];
        struct pac_flow *f = &pac->flows[idx];

        f->flags &= ~PAC_F_RR_DIRTY;
        if ((f->flags & PAC_F_IN_USE) && f->n_held
            && pac->rr_indexed[f->level]) {
            rr_update_keys(pac, idx);
        }
    }
}

/* Marks every flow that holds packets (their triggers depend on
 * pac->epoch). */
static void
rr_mark_all(struct pac *pac)
{
    for (int level = 0; level < PAC_MAX_LEVELS; level++) {
        uint32_t first = pac->rr_cursor[level];
        uint32_t idx = first;

        if (idx != PAC_NONE) {
            do {
                pac_rr_mark(pac, idx);
                idx = pac->flows[idx].rr_next;
            } while (idx != first);
        }
    }
}

/* The search for the flows that ack_eligible() accepts now. */
static void
rr_query_eligible(const struct pac *pac, struct pac_rr_query *q)
{
    q->bits = PAC_RR_ELIGIBLE;
    q->out_below = pac->threshold / MAX(pac->n_outstanding, 1);
    if (!pac->n_busy) {
        q->bits |= PAC_RR_WINDOW;
        q->mss_upto = -1;
    } else {
        /* n_busy < threshold / (PAC_MIN_FLOW_WINDOW * mss), that is,
         * mss <= threshold / (PAC_MIN_FLOW_WINDOW * (n_busy + 1)). */
        q->mss_upto = pac->threshold / (PAC_MIN_FLOW_WINDOW
                                        * ((uint64_t) pac->n_busy + 1));
    }
}

static void
rr_query_bits(struct pac_rr_query *q, uint8_t bits)
{
    q->bits = bits;
    q->out_below = 0;
    q->mss_upto = -1;
}

/* Releases, within a bounded look over the MLFQ rings, every flow head
 * that triggers nothing (for example an ACK within an answer whose whole
 * size is counted already), together with the free heads behind it.
 *
 * The look visits, level by level, the flows that follow each cursor, one
 * visit per flow and at most as many as the level holds packets, and
 * PAC_FREE_LOOKAHEAD visits in all; a small ring is visited round and
 * round (the later visits find nothing more to release) until the budget is
 * spent or the ring is empty.  The index of a long ring finds the free
 * heads among the flows to visit without visiting the others. */
static void
release_free(struct pac *pac, pac_emit_cb *emit, void *aux)
{
    int budget = PAC_FREE_LOOKAHEAD;
    struct pac_rr_query q;

    rr_query_bits(&q, PAC_RR_FREE);
    for (int level = 0; level < (int) pac->cfg.n_levels && budget > 0;
         level++) {
        uint32_t n = pac->n_held_level[level];
        uint32_t size = pac_rr_size(pac, level);
        uint32_t visits = MIN(n, (uint32_t) budget);
        uint32_t left = MIN(visits, size);  /* Distinct flows to visit. */
        uint32_t start = pac->rr_cursor[level];
        uint32_t emptied = 0;

        if (start == PAC_NONE || !n) {
            continue;
        } else if (!pac->rr_indexed[level]) {
            uint32_t idx = start;

            for (; idx != PAC_NONE && n-- && budget-- > 0;) {
                struct pac_flow *f = &pac->flows[idx];
                uint32_t next = f->rr_next;

                while (f->n_held && f->level == level
                       && !trigger_bytes(pac, f, &pac->held[f->held_head])) {
                    release_head(pac, idx, PAC_REL_FIT, emit, aux);
                }
                idx = pac->rr_cursor[level] == PAC_NONE ? PAC_NONE : next;
            }
            continue;
        }
        while (left) {
            uint32_t offset, idx, next;
            struct pac_flow *f;

            rr_flush(pac);
            idx = pac_rr_find(pac, level, pac_rr_rank(pac, start), 0, left,
                              &q, &offset);
            if (idx == PAC_NONE) {
                break;
            }
            f = &pac->flows[idx];
            next = f->rr_next;
            while (f->n_held && f->level == level
                   && !trigger_bytes(pac, f, &pac->held[f->held_head])) {
                release_head(pac, idx, PAC_REL_FIT, emit, aux);
            }
            emptied += !f->n_held;
            left -= offset + 1;
            start = next;
        }
        /* The look stops early only when it has emptied the ring. */
        budget -= visits > size && emptied == size ? size : visits;
    }
}

/* Algorithm 1, lines 9-14: serves one packet of the MLFQ: the head of the
 * first eligible flow, from the round-robin cursor of the highest level
 * that has one, if it fits.  Returns true if it released one.
 *
 * If that head does not fit, nothing with a trigger goes (strict, as in the
 * paper: it waits for data), except that a window trigger that has not
 * waited max_hold_trigger_us yet lets go first the ACKs behind it in the
 * turn that only let a peer finish an answer of known size: their data is
 * counted in in_flight already and cannot come without them, so holding
 * them behind a window that does not fit would stall everything.
 *
 * The ring index (pac-rr.c) finds the first eligible flow in ring order
 * without visiting the ineligible ones before it. */
/* What schedule_one() does with eligible flow 'idx' of 'level'. */
enum serve_result {
    SERVE_RELEASED,             /* Released its head. */
    SERVE_BLOCKED,              /* Its head does not fit: stop. */
    SERVE_SKIPPED,              /* Look further, for capped ACKs only. */
};

static uint32_t head_wait(const struct pac *, enum pac_class, uint32_t h);

static enum serve_result
serve(struct pac *pac, int level, uint32_t idx, pac_emit_cb *emit, void *aux)
{
    struct pac_flow *f = &pac->flows[idx];
    const struct pac_held *h = &pac->held[f->held_head];

    if (fits(pac, trigger_bytes(pac, f, h))) {
        release_head(pac, idx, PAC_REL_FIT, emit, aux);
        if (f->n_held) {
            pac->rr_cursor[level] = f->rr_next;
        }
        return SERVE_RELEASED;
    } else if (h->kind == PAC_K_ACK
               || head_wait(pac, PAC_CLASS_TRIGGER, f->held_head)
                  >= pac->cfg.max_hold_trigger_us) {
        release_free(pac, emit, aux);
        return SERVE_BLOCKED;
    }
    return SERVE_SKIPPED;
}

/* Algorithm 1, lines 9-14: serves one packet of the MLFQ: the head of the
 * first eligible flow, from the round-robin cursor of the highest level
 * that has one, if it fits.  Returns true if it released one.
 *
 * If that head does not fit, nothing with a trigger goes (strict, as in the
 * paper: it waits for data), except that a window trigger that has not
 * waited max_hold_trigger_us yet lets go first the ACKs behind it in the
 * turn that only let a peer finish an answer of known size: their data is
 * counted in in_flight already and cannot come without them, so holding
 * them behind a window that does not fit would stall everything.
 *
 * A short ring is walked; the index of a long one (pac-rr.c) finds the
 * first eligible flow in ring order without visiting the ineligible ones
 * before it. */
static bool
schedule_one(struct pac *pac, pac_emit_cb *emit, void *aux)
{
    struct pac_rr_query q;
    bool acks_only = false;

    pac_rr_trim(pac);
    rr_flush(pac);
    rr_query_eligible(pac, &q);
    for (int level = 0; level < (int) pac->cfg.n_levels; level++) {
        uint32_t cursor = pac->rr_cursor[level];
        enum serve_result r;

        if (cursor == PAC_NONE) {
            continue;
        } else if (!pac->rr_indexed[level]) {
            uint32_t idx = cursor;

            for (uint32_t i = 0; i < PAC_RR_LOOKAHEAD; i++) {
                struct pac_flow *f = &pac->flows[idx];
                const struct pac_held *h = &pac->held[f->held_head];
                uint32_t next = f->rr_next;

                if ((!acks_only
                     || (h->kind == PAC_K_ACK
                         && response_room(pac, f) != UINT32_MAX))
                    && ack_eligible(pac, f, h, trigger_bytes(pac, f, h))) {
                    r = serve(pac, level, idx, emit, aux);
                    if (r != SERVE_SKIPPED) {
                        return r == SERVE_RELEASED;
                    }
                    acks_only = true;
                }
                idx = next;
                if (idx == cursor) {
                    break;
                }
            }
        } else {
            uint32_t span = MIN(pac_rr_size(pac, level), PAC_RR_LOOKAHEAD);
            uint32_t start = pac_rr_rank(pac, cursor);
            uint32_t offset;

            if (acks_only) {
                rr_query_bits(&q, PAC_RR_CAPPED);
            }
            for (uint32_t skip = 0; skip < span; skip = offset + 1) {
                uint32_t idx = pac_rr_find(pac, level, start, skip,
                                           span - skip, &q, &offset);

                if (idx == PAC_NONE) {
                    break;
                }
                r = serve(pac, level, idx, emit, aux);
                if (r != SERVE_SKIPPED) {
                    return r == SERVE_RELEASED;
                }
                if (!acks_only) {
                    acks_only = true;
                    rr_query_bits(&q, PAC_RR_CAPPED);
                }
            }
        }
    }
    return false;
}

static void
schedule(struct pac *pac, pac_emit_cb *emit, void *aux)
{
    if (pac->in_batch) {
        /* pac_batch_end() schedules for the whole burst. */
        return;
    }
    /* An expired window trigger goes as soon as it fits (ACK timers run
     * in pac_run() only). */
    release_expired(pac, PAC_CLASS_TRIGGER, emit, aux);
    reclaim_dry(pac);
    while (schedule_one(pac, emit, aux)) {
        continue;
    }
}

/* Eq. (6) found in_flight 'excess' bytes too high.  The excess is taken
 * from the flows that have been silent longest (the likeliest to have
 * stopped early), then from the unattributed part, so that in_flight stays
 * the sum of what flows account for. */
static void
correct_in_flight(struct pac *pac, uint64_t excess)
{
    uint32_t idx = pac->out_head;

    while (excess && idx != PAC_NONE) {
        uint32_t next = pac->flows[idx].out_next;
        struct pac_flow *f = &pac->flows[idx];

        if (!window_pending(pac, f)) {
            uint32_t out = flow_outstanding(f);
            uint32_t take = MIN(excess, out);

            if (take == out) {
                reclaim_outstanding(pac, idx);
            } else {
                f->budget_end -= take;
                pac->in_flight -= MIN(pac->in_flight, take);
                pac_rr_mark(pac, idx);
            }
            excess -= take;
        }
        idx = next;
    }
    if (excess) {
        uint64_t other = MIN(excess, pac->unattributed);

        pac->unattributed -= other;
        pac->in_flight -= MIN(pac->in_flight, other);
    }
}

/* Tracks bw_max, the peak receive rate over windows of at least
 * PAC_RATE_WINDOW_US.  A single control interval is too short for it: a
 * real datapath delivers segments in batches, and a batch inside one short
 * interval reads as many times the link rate, which would shrink the time
 * derived from bw_max (dry_time()). */
static void
update_rate(struct pac *pac, bool gap)
{
    uint64_t now = pac->now;

    if (gap) {
        pac->rate_start = pac->iv_start;
        pac->rate_bytes = 0;
    }
    pac->rate_bytes += pac->iv_bytes;
    if (now - pac->rate_start >= PAC_RATE_WINDOW_US) {
        double rate = (double) pac->rate_bytes / (now - pac->rate_start);

        if (rate > pac->bw_max) {
            pac->bw_max = rate;
        }
        pac->rate_start = now;
        pac->rate_bytes = 0;
    }
}

/* Without ECN the switch says nothing until it drops, and a drop in an
 * incast round costs a sender RTOmin when it takes the answer's last
 * segment.  PAC's in-flight estimate misses a few percent of the data
 * (answers it misjudged as finished, triggers of ACKs it could not
 * attribute), so a threshold of exactly the buffer overflows it now and
 * then.  A data segment that arrives past a gap in its flow shows such a
 * drop: lower the threshold's ceiling a step, and let it grow back slowly
 * while nothing is lost, so the margin lasts from one round to the next. */
static void
update_loss_cap(struct pac *pac)
{
    uint64_t now = pac->now;

    if (pac->iv_holes) {
        uint64_t floor = ((uint64_t) pac->cfg.threshold
                          * pac->cfg.loss_floor_permille / 1000);
        uint64_t step = pac->cfg.threshold / PAC_LOSS_CAP_STEP;

        pac->loss_cap = pac->loss_cap > floor + step
                        ? pac->loss_cap - step : floor;
        pac->loss_cap_grown = now;
    } else if (pac->loss_cap < pac->cfg.threshold
               && now - pac->loss_cap_grown >= PAC_LOSS_CAP_GROW_US) {
        pac->loss_cap = MIN(pac->loss_cap + pac->cfg.default_mss,
                            pac->cfg.threshold);
        pac->loss_cap_grown = now;
    }
}

/* Control interval (average RTT): threshold control, eq. (2), deviation
 * correction, eq. (6), if configured, and the silence reset. */
static void
end_interval(struct pac *pac)
{
    uint64_t now = pac->now;
    uint64_t dur = MAX(now - pac->iv_start, 1);
    uint32_t interval = control_interval(pac);
    double lambda = pac->cfg.lambda_permille / 1000.0;
    double bw = (double) pac->iv_bytes / dur;
    double alpha = 0.0;
    bool gap = dur > 4 * (uint64_t) interval;

    update_rate(pac, gap);
    if (pac->cfg.ecn && pac->iv_pkts) {
        alpha = (double) pac->iv_ce / pac->iv_pkts;
    }
    pac->stats.alpha_permille = (uint32_t) (alpha * 1000.0 + 0.5);

    update_loss_cap(pac);
    if (alpha > 0) {
        uint64_t floor = MIN(2 * (uint64_t) pac->cfg.default_mss,
                             pac->cfg.threshold);

        pac->threshold = MAX((uint64_t) (pac->threshold * (1 - alpha / 2)),
                             floor);
        pac->threshold = MIN(pac->threshold, pac->loss_cap);
    } else {
        pac->threshold = MIN(pac->threshold * 2, pac->loss_cap);
    }

    if (!pac->iv_bytes) {
        uint64_t limit = silence_time(pac);

        if (!pac->silent) {
            pac->silent = true;
            pac->silent_since = pac->iv_start;
        }
        if (pac->in_flight && now - pac->silent_since >= limit
            && now - pac->last_window_release >= limit) {
            /* Forget every flow's share and pending window too. */
            while (pac->out_head != PAC_NONE) {
                reclaim_outstanding(pac, pac->out_head);
            }
            pac->in_flight = 0;
            pac->unattributed = 0;
            pac->epoch++;
            rr_mark_all(pac);
            pac->silent_since = now;
            pac->stats.silence_resets++;
        }
    } else {
        pac->silent = false;
        /* Eq. (6) reads a drop in throughput as over-estimation; right
         * after a window trigger the drop is the answer's round trip. */
        if (pac->cfg.deviation_correction
            && !gap && pac->bw_smooth > 0 && bw <= pac->bw_smooth * lambda
            && pac->pkt_rate_smooth * dur >= PAC_EQ6_MIN_PKTS
            && pac->in_flight
            && now - pac->last_window_release >= dry_time(pac)) {
            double target = (pac->in_flight_smooth * bw
                             / (pac->bw_smooth * (1 - alpha / 2)));

            if (target < pac->in_flight) {
                correct_in_flight(pac, pac->in_flight - (uint64_t) target);
                pac->stats.corrections++;
            }
        }
    }

    if (gap) {
        /* After an idle spell the filters would compare the new burst with
         * the old one: start them afresh. */
        pac->bw_smooth = 0;
        pac->pkt_rate_smooth = 0;
        pac->in_flight_smooth = pac->in_flight;
    } else {
        pac->bw_smooth += (bw - pac->bw_smooth) / 4;
        pac->pkt_rate_smooth += ((double) pac->iv_pkts / dur
                                 - pac->pkt_rate_smooth) / 4;
        pac->in_flight_smooth += (pac->in_flight - pac->in_flight_smooth) / 4;
    }
    pac->iv_start = now;
    pac->iv_bytes = pac->iv_pkts = pac->iv_ce = pac->iv_holes = 0;
}

static void
set_now(struct pac *pac, uint64_t now)
{
    if (now > pac->now) {
        pac->now = now;
    }
    if (pac->now - pac->iv_start >= control_interval(pac)) {
        end_interval(pac);
    }
}

/* Flows. */

/* Removes flow 'flow_idx', which holds no packets, with its share of
 * in_flight. */
static void
forget_flow(struct pac *pac, uint32_t flow_idx)
{
    reclaim_outstanding(pac, flow_idx);
    if (pac->flows[flow_idx].flags & PAC_F_BUSY) {
        pac->n_busy--;
    }
    pac_flow_remove(pac, flow_idx);
}

static void
remove_flow(struct pac *pac, uint32_t flow_idx, pac_emit_cb *emit,
            void *aux)
{
    release_flow(pac, flow_idx, PAC_REL_FLUSH, emit, aux);
    forget_flow(pac, flow_idx);
}

/* A flow's key, as the flow table takes it. */
struct seg_key {
    const uint8_t *vm_addr;
    const uint8_t *peer_addr;
    uint16_t vm_port;
    uint16_t peer_port;
};

/* The key of the flow of 'seg', a segment toward the receiver if 'rx', from
 * it otherwise. */
static struct seg_key
seg_key(const struct pac_segment *seg, bool rx)
{
    return (rx
            ? (struct seg_key) { seg->dst, seg->src, seg->dport, seg->sport }
            : (struct seg_key) { seg->src, seg->dst, seg->sport, seg->dport });
}

/* The hash of 'key', the key of 'seg': pac_prefetch()'s if it hashed
 * 'seg'. */
static uint32_t
seg_flow_hash(const struct pac *pac, const struct pac_segment *seg,
              const struct seg_key *key)
{
    if (seg->hashed_by == pac) {
        return seg->flow_hash;
    }
    return pac_flow_hash(pac, key->vm_addr, key->vm_port, key->peer_addr,
                         key->peer_port);
}

/* Finds or, if 'may_create', creates the flow of 'seg', a segment toward
 * the receiver if 'rx', from it otherwise; PAC_NONE if there is none and
 * none can be made (table full, nothing evictable).  'opening' (a SYN)
 * replaces a closed flow that reuses the same ports.  An RST for an unknown
 * flow creates nothing (it would only evict another). */
static uint32_t
flow_get(struct pac *pac, const struct pac_segment *seg, bool rx,
         bool opening, bool may_create)
{
    struct seg_key key = seg_key(seg, rx);
    uint32_t hash = seg_flow_hash(pac, seg, &key);
    uint32_t idx = pac_flow_lookup(pac, key.vm_addr, key.vm_port,
                                   key.peer_addr, key.peer_port, hash);
    struct pac_flow *f;

    if (idx != PAC_NONE) {
        f = &pac->flows[idx];
        if (!(opening && (f->flags & (PAC_F_FIN_VM | PAC_F_FIN_PEER))
              && !f->n_held)) {
            return idx;
        }
        forget_flow(pac, idx);
        pac->stats.flows_closed++;
    }
    if (!may_create) {
        return PAC_NONE;
    }

    idx = pac_flow_insert(pac, key.vm_addr, key.vm_port, key.peer_addr,
                          key.peer_port, hash);
    if (idx == PAC_NONE) {
        uint32_t victim = pac_flow_pick_victim(pac);

        if (victim == PAC_NONE) {
            pac->stats.untracked++;
            return PAC_NONE;
        }
        forget_flow(pac, victim);
        pac->stats.evictions++;
        idx = pac_flow_insert(pac, key.vm_addr, key.vm_port, key.peer_addr,
                              key.peer_port, hash);
    }
    f = &pac->flows[idx];
    f->out_prev = f->out_next = PAC_NONE;
    f->mss = pac->cfg.default_mss;
    f->flags |= PAC_F_SLOW_START;
    f->last_seen = (uint32_t) pac->now;
    pac->stats.flows_created++;
    return idx;
}

static void
note_rtt(struct pac *pac, struct pac_flow *f)
{
    uint32_t sample = MAX(pac_elapsed32(pac->now, f->hs_time), 1);

    f->rtt_us = sample;
    pac->min_rtt_us = pac->have_rtt ? MIN(pac->min_rtt_us, sample) : sample;
    if (pac->have_rtt) {
        pac->avg_base_rtt_us = pac->avg_base_rtt_us
                               - pac->avg_base_rtt_us / 8 + sample / 8;
    } else {
        pac->avg_base_rtt_us = sample;
        pac->have_rtt = true;
    }
}

/* Per-flow control interval (III-C): infers the end of slow start from two
 * consecutive intervals whose received rate fell to lambda or less. */
static void
flow_interval(struct pac *pac, struct pac_flow *f, uint32_t bytes)
{
    uint32_t interval = ((f->rtt_us ? f->rtt_us : pac->avg_base_rtt_us)
                         + pac->avg_hold_us);
    uint32_t elapsed = pac_elapsed32(pac->now, f->iv_start);

    if (elapsed >= MAX(interval, 1)) {
        if (elapsed > 4 * (uint64_t) interval) {
            f->iv_prev_rate = 0;
            f->slowdowns = 0;
        } else {
            uint32_t rate = (uint32_t) ((uint64_t) f->iv_bytes * 1000
                                        / elapsed);

            /* While PAC holds the flow's ACKs, PAC sets its rate: a drop
             * then says nothing about the peer's phase. */
            if (f->iv_prev_rate && !f->n_held
                && (uint64_t) rate * 1000
                   <= (uint64_t) f->iv_prev_rate * pac->cfg.lambda_permille) {
                /* Counts up to 2 and stays there (a 2-bit field). */
                f->slowdowns = MIN(f->slowdowns + 1, 2);
                if (f->slowdowns >= 2) {
                    f->flags &= ~PAC_F_SLOW_START;
                }
            } else {
                f->slowdowns = 0;
            }
            f->iv_prev_rate = rate;
        }
        f->iv_start = (uint32_t) pac->now;
        f->iv_bytes = 0;
    }
    f->iv_bytes += bytes;
}

static void
update_level(struct pac *pac, uint32_t flow_idx)
{
    struct pac_flow *f = &pac->flows[flow_idx];
    uint8_t level = f->level;

    while (level + 1u < pac->cfg.n_levels
           && f->rx_bytes >= pac->cfg.level_bytes[level]) {
        level++;
    }
    pac_queue_set_level(pac, flow_idx, level);
}

/* Section III-D: the receiver repeats an ACK while newer ones of the same
 * flow wait here, so the peer has retransmitted (it timed out or recovers).
 * Drop the waiting pure ACKs that a newer waiting one supersedes, serve the
 * flow first and assume it restarts in slow start. */
static void
handle_stale(struct pac *pac, uint32_t flow_idx, pac_emit_cb *emit,
             void *aux)
{
    struct pac_flow *f = &pac->flows[flow_idx];
    uint32_t newest = 0;
    bool have_newest = false;
    uint32_t prev = PAC_NONE;
    uint32_t h;

    for (h = f->held_head; h != PAC_NONE; h = pac->held[h].flow_next) {
        const struct pac_held *p = &pac->held[h];

        if (p->kind == PAC_K_ACK && (p->flags & PAC_H_PURE)
            && (!have_newest || pac_seq_gt(p->ack, newest))) {
            newest = p->ack;
            have_newest = true;
        }
    }

    h = f->held_head;
    while (h != PAC_NONE) {
        struct pac_held *p = &pac->held[h];
        uint32_t next = p->flow_next;

        if (have_newest && p->kind == PAC_K_ACK && (p->flags & PAC_H_PURE)
            && pac_seq_lt(p->ack, newest)) {
            void *pkt = p->pkt;

            pac_queue_unlink(pac, flow_idx, prev, h);
            pac->stats.stale_drops++;
            emit(aux, pkt, PAC_EMIT_DROP_STALE);
        } else {
            prev = h;
        }
        h = next;
    }

    pac_queue_set_level(pac, flow_idx, 0);
    f->flags |= PAC_F_SLOW_START;
    pac->flow_wnd[flow_idx].bits &= ~PAC_W_LIMITED;
    pac_rr_mark(pac, flow_idx);
    pac->stats.stale_events++;
}

/* Packets. */

void
pac_rx(struct pac *pac, const struct pac_segment *seg, uint64_t now_us,
       pac_emit_cb *emit, void *aux)
{
    uint32_t len = seg->payload_len;
    bool syn = seg->tcp_flags & PAC_TCP_SYN;
    bool ce = seg->ip_ecn == PAC_ECN_CE;
    bool newest = false;        /* The segment extends rcv_nxt. */
    uint32_t flow_idx;

    set_now(pac, now_us);
    pac->stats.rx_packets++;
    pac->stats.rx_bytes += len;
    pac->iv_bytes += len;
    pac->iv_pkts++;
    if (ce) {
        pac->stats.rx_ce++;
        pac->iv_ce++;
    }

    flow_idx = flow_get(pac, seg, true,
                        syn && !(seg->tcp_flags & PAC_TCP_ACK),
                        !(seg->tcp_flags & PAC_TCP_RST));
    if (flow_idx == PAC_NONE) {
        credit_rx(pac, len, 0);
        if (len) {
            pac->last_rx_data = pac->now;
        }
    } else {
        struct pac_flow *f = &pac->flows[flow_idx];
        bool expecting = flow_outstanding(f) > 0;
        uint32_t outstanding;

        if (!syn) {
            restore_reclaimed(pac, f, seg);
        }
        outstanding = flow_outstanding(f);

        pac_rr_mark(pac, flow_idx);
        f->last_seen = (uint32_t) now_us;
        if (seg->tcp_flags & PAC_TCP_RST) {
            remove_flow(pac, flow_idx, emit, aux);
            pac->stats.flows_closed++;
            goto out;
        }
        if (syn) {
            uint32_t end = seg->seq + 1 + len;

            if (!(f->flags & PAC_F_RCV_BASE) || pac_seq_gt(end, f->rcv_nxt)) {
                f->rcv_nxt = end;
                f->flags |= PAC_F_RCV_BASE;
            }
            note_mss(f, seg->mss, PAC_MSS_PEER);
            note_wscale(pac, flow_idx, seg, false);
            if ((seg->tcp_flags & PAC_TCP_ACK)
                && (f->flags & PAC_F_SYN_SENT)) {
                note_rtt(pac, f);
                f->flags &= ~PAC_F_SYN_SENT;
            }
        } else {
            uint32_t end = seg->seq + len
                           + (seg->tcp_flags & PAC_TCP_FIN ? 1 : 0);

            if ((f->flags & PAC_F_SYNACK_SENT)
                && (seg->tcp_flags & PAC_TCP_ACK)) {
                note_rtt(pac, f);
                f->flags &= ~PAC_F_SYNACK_SENT;
            }
            if (len && (f->flags & PAC_F_RCV_BASE)
                && pac_seq_gt(seg->seq, f->rcv_nxt)) {
                pac->iv_holes++;
                pac->stats.rx_holes++;
            }
            if (!(f->flags & PAC_F_RCV_BASE)
                || pac_seq_gt(end, f->rcv_nxt)) {
                f->rcv_nxt = end;
                f->flags |= PAC_F_RCV_BASE;
                newest = true;
            }
        }
        if (seg->tcp_flags & PAC_TCP_FIN) {
            f->flags |= PAC_F_FIN_PEER;
        }
        credit_rx(pac, len, outstanding > flow_outstanding(f)
                            ? outstanding - flow_outstanding(f) : 0);
        if (len) {
            if (newest && !expecting && (f->flags & PAC_F_BUDGET)
                && (f->flags & PAC_F_IN_RESP)) {
                note_late_data(pac);
            }
            pac->last_rx_data = pac->now;
            f->flags &= ~PAC_F_DRY;
            flow_wnd(pac, f)->dry_waits = 0;
            out_list_update(pac, flow_idx, true);
            f->rx_bytes = (f->rx_bytes + len < f->rx_bytes
                           ? UINT32_MAX : f->rx_bytes + len);
            if (f->flags & PAC_F_MEASURING) {
                f->burst_bytes += len;
            }
            flow_interval(pac, f, len);
            update_level(pac, flow_idx);
            if (newest) {
                note_window_fill(pac, f, f->rcv_nxt);
                if (is_short_segment(f, len)
                    && !at_right_edge(pac, f, f->rcv_nxt)
                    && !(answer_unfinished(pac, f)
                         && may_fill_window(pac, f, len))) {
                    /* The peer's answer is complete: what its triggers
                     * allowed beyond it will not come, and ACKs of it
                     * trigger nothing, until it sends again. */
                    reclaim_on_verdict(pac, flow_idx);
                    f->flags |= PAC_F_DRY;
                    pac->stats.answer_ends++;
                }
            }
        }
        if (ce && pac->cfg.ecn) {
            f->flags &= ~PAC_F_SLOW_START;
        }
    }

out:
    schedule(pac, emit, aux);
}

/* Whether flow 'f' holds a request acknowledging 'ack': a second request
 * with the same ACK number is the receiver's retransmission of it (PAC held
 * the first past the receiver's RTO), which adds nothing but a bare ACK from
 * the peer. */
static bool
holds_request(const struct pac *pac, const struct pac_flow *f, uint32_t ack)
{
    for (uint32_t h = f->held_head; h != PAC_NONE;
         h = pac->held[h].flow_next) {
        if (pac->held[h].kind == PAC_K_REQUEST && pac->held[h].ack == ack) {
            return true;
        }
    }
    return false;
}

/* Classifies segment 'seg' of flow 'f' leaving the receiver into 'd'. */
static void
classify_tx(struct pac *pac, struct pac_flow *f,
            const struct pac_segment *seg, struct pac_held *d)
{
    uint8_t tf = seg->tcp_flags;
    bool has_ack = tf & PAC_TCP_ACK;

    d->ack = has_ack ? seg->ack : f->last_ack;
    d->payload_len = seg->payload_len;
    d->flags = 0;
    if (tf & PAC_TCP_ECE) {
        d->flags |= PAC_H_ECE;
    }
    if (!seg->payload_len
        && !(tf & (PAC_TCP_SYN | PAC_TCP_FIN | PAC_TCP_RST))) {
        d->flags |= PAC_H_PURE;
    }

    if (has_ack && !(f->flags & PAC_F_ACK_BASE)) {
        f->last_ack = seg->ack;
        f->flags |= PAC_F_ACK_BASE;
    }

    if ((tf & PAC_TCP_SYN) && has_ack) {
        d->kind = PAC_K_HANDSHAKE;
        f->flags |= PAC_F_SYNACK_SENT;
        note_mss(f, seg->mss, PAC_MSS_VM);
    } else if (seg->payload_len && has_ack
               && (!(f->flags & PAC_F_RCV_BASE)
                   || !pac_seq_lt(seg->ack, f->rcv_nxt))
               && !acks_no_new_answer(f, seg->ack)
               && !holds_request(pac, f, seg->ack)) {
        /* A request: everything received is acknowledged, so the peer is
         * idle and this segment will make it send a whole window. */
        d->kind = PAC_K_REQUEST;
        /* The window model is not shrunk after idleness: a peer restarts
         * its window only after an idle RTO (Linux's tcp_cwnd_restart()),
         * and PAC's own holding inflates the peer's RTT, so its RTO, by an
         * amount PAC cannot see.  Keeping the larger window errs on the
         * safe side. */
        if (pac_elapsed32(pac->now, f->last_seen) >= PAC_RESTART_IDLE_US) {
            f->flags |= PAC_F_SLOW_START;
            flow_wnd(pac, f)->bits &= ~PAC_W_LIMITED;
        }
    } else {
        d->kind = PAC_K_ACK;
    }
}

enum pac_verdict
pac_tx(struct pac *pac, struct pac_segment *seg, void *pkt,
       uint64_t now_us, pac_emit_cb *emit, void *aux)
{
    uint8_t tf = seg->tcp_flags;
    struct pac_held d;
    struct pac_flow *f;
    uint32_t flow_idx;
    uint32_t h;
    int top;

    set_now(pac, now_us);
    pac->stats.tx_packets++;

    flow_idx = flow_get(pac, seg, false,
                        (tf & PAC_TCP_SYN) && !(tf & PAC_TCP_ACK),
                        !(tf & PAC_TCP_RST));
    if (flow_idx == PAC_NONE) {
        goto pass;
    }
    f = &pac->flows[flow_idx];
    pac_rr_mark(pac, flow_idx);

    if (tf & PAC_TCP_RST) {
        /* Whatever waits is of no use to the peer any more, but it is sent
         * (in order, before the RST) rather than lost. */
        remove_flow(pac, flow_idx, emit, aux);
        pac->stats.flows_closed++;
        goto pass;
    }
    if ((tf & PAC_TCP_SYN) && !(tf & PAC_TCP_ACK)) {
        /* The receiver opens a connection: a SYN triggers no data, but a
         * SYN-ACK frame (the paper's failure at 2048 senders came from
         * unaccounted handshakes). */
        f->flags |= PAC_F_SYN_SENT;
        f->hs_time = (uint32_t) now_us;
        note_mss(f, seg->mss, PAC_MSS_VM);
        note_wscale(pac, flow_idx, seg, true);
        d.kind = PAC_K_ACK;
        d.flags = PAC_H_SYN;
        d.ack = f->last_ack;
        d.payload_len = 0;
    } else {
        if (tf & PAC_TCP_SYN) {
            note_wscale(pac, flow_idx, seg, true);
        }
        classify_tx(pac, f, seg, &d);
        clamp_segment_window(pac, f, seg);
    }
    d.window = seg->window;
    f->last_seen = (uint32_t) now_us;
    if (tf & PAC_TCP_FIN) {
        f->flags |= PAC_F_FIN_VM;
    }
    /* The newest ACK number the receiver sent is its newest held one (the
     * flow holds segments, and ACK numbers do not go back). */
    if (f->n_held && d.kind == PAC_K_ACK && (d.flags & PAC_H_PURE)
        && !pac_seq_gt(d.ack, pac->held[f->held_tail].ack)) {
        handle_stale(pac, flow_idx, emit, aux);
    }

    top = pac_queue_top_level(pac);
    if (!f->n_held) {
        uint32_t trigger = trigger_bytes(pac, f, &d);

        /* A duplicate ACK is never held back behind other flows: the peer
         * needs it for fast retransmit. */
        if (is_dup_ack(f, &d)
            || ((top < 0 || top > f->level) && fits(pac, trigger))) {
            account_send(pac, f, &d, trigger);
            if (d.kind == PAC_K_ACK) {
                note_ack_delay(pac, 0);
            }
            pac->stats.tx_passed++;
            return PAC_PASS;
        }
    }

    if (pac->n_held >= pac->cfg.max_held) {
        release_oldest(pac, PAC_REL_CAP, emit, aux);
    }
    if (f->n_held == UINT16_MAX) {
        release_head(pac, flow_idx, PAC_REL_CAP, emit, aux);
    }
    h = pac_queue_push(pac, flow_idx, pkt, d.kind, d.flags, d.ack,
                       d.payload_len);
    pac->held[h].window = d.window;
    if (pac->n_held > pac->stats.max_held_seen) {
        pac->stats.max_held_seen = pac->n_held;
    }

    /* What fits now may include 'pkt' itself (its turn came at once): it is
     * then passed, not emitted, so that the caller never sees a packet it
     * was told PAC holds go out. */
    pac->tx_held = h;
    pac->tx_pkt_released = false;
    schedule(pac, emit, aux);
    pac->tx_held = PAC_NONE;
    if (pac->tx_pkt_released) {
        pac->stats.released[PAC_REL_FIT]--;
        pac->stats.tx_passed++;
        return PAC_PASS;
    }
    pac->stats.tx_held++;
    return PAC_HELD;

pass:
    /* set_now() may have changed what fits (a new control interval). */
    schedule(pac, emit, aux);
    pac->stats.tx_passed++;
    return PAC_PASS;
}

/* Bursts. */

void
pac_batch_begin(struct pac *pac)
{
    pac->in_batch = true;
}

void
pac_prefetch(const struct pac *pac, struct pac_segment *const segs[],
             size_t n, bool rx)
{
    for (size_t i = 0; i < n; i++) {
        struct pac_segment *seg = segs[i];

        struct seg_key key = seg_key(seg, rx);

        seg->flow_hash = seg_flow_hash(pac, seg, &key);
        seg->hashed_by = pac;
        pac_flow_prefetch_bucket(pac, seg->flow_hash);
    }
    /* Two passes: a flow's address is in its bucket. */
    for (size_t i = 0; i < n; i++) {
        pac_flow_prefetch_entry(pac, segs[i]->flow_hash);
    }
}

void
pac_batch_end(struct pac *pac, pac_emit_cb *emit, void *aux)
{
    pac->in_batch = false;
    schedule(pac, emit, aux);
}

/* Timers. */

static uint32_t
class_bound(const struct pac *pac, enum pac_class c)
{
    return c == PAC_CLASS_ACK ? pac->cfg.max_hold_us
                              : pac->cfg.max_hold_trigger_us;
}

/* How long head 'h' of class 'c' has waited, as the class's bound counts
 * it.  An ACK's bound stands for its peer's retransmission timer, so its
 * time as its flow's head counts.  A window trigger's bound guards against
 * a request that never gets its turn, so only the time during which no
 * window trigger left in its turn counts: in a large incast the requests
 * at the back of the queue wait longer than the bound while the queue
 * moves (1 024 answers of 64 KB take 1.07 s at 500 Mbit/s), and sending
 * them ahead of their turn took the room that the answers under way
 * needed for their ACKs, which then reached max_hold (docs/benchmarks.md,
 * "1 024 senders"). */
static uint32_t
head_wait(const struct pac *pac, enum pac_class c, uint32_t h)
{
    uint32_t age = pac_elapsed32(pac->now, pac->held[h].head_since);

    if (c == PAC_CLASS_TRIGGER) {
        uint64_t stalled = pac->now - pac->last_trigger_turn;

        age = MIN(age, MIN(stalled, UINT32_MAX));
    }
    return age;
}

static void
scan_flows(struct pac *pac, pac_emit_cb *emit, void *aux)
{
    uint64_t idle_timeout = (uint64_t) pac->cfg.idle_timeout_ms * 1000;

    for (uint32_t i = 0; i < pac->cfg.max_flows && pac->n_flows; i++) {
        struct pac_flow *f = &pac->flows[i];
        uint32_t idle;

        if (!(f->flags & PAC_F_IN_USE) || f->n_held) {
            continue;
        }
        idle = pac_elapsed32(pac->now, f->last_seen);
        if (idle >= idle_timeout) {
            remove_flow(pac, i, emit, aux);
            pac->stats.flows_expired++;
        } else if ((f->flags & PAC_F_FIN_VM) && (f->flags & PAC_F_FIN_PEER)
                   && idle >= PAC_CLOSED_LINGER_US) {
            remove_flow(pac, i, emit, aux);
            pac->stats.flows_closed++;
        }
    }
    pac->next_scan = pac->now + PAC_SCAN_INTERVAL_US;

    /* Delivery delays are learned again if they recur. */
    pac->late_us -= pac->late_us / 8;
}

/* Releases the flow heads of classes 'first'...PAC_N_CLASSES - 1 that have
 * waited their class's bound. */
static void
release_expired(struct pac *pac, enum pac_class first, pac_emit_cb *emit,
                void *aux)
{
    for (int c = first; c < PAC_N_CLASSES; c++) {
        uint32_t bound = class_bound(pac, c);
        uint32_t h;

        while ((h = pac->age_head[c]) != PAC_NONE
               && head_wait(pac, c, h) >= bound) {
            uint32_t flow_idx = pac->held[h].flow;

            /* An expired window trigger goes out ahead of its turn, but
             * only when its window fits: forced into a full buffer it would
             * lose the whole window and time the peer out, which is worse
             * than waiting (its peer is idle, no timer of its runs). */
            if (c == PAC_CLASS_TRIGGER
                && !fits(pac, trigger_bytes(pac, &pac->flows[flow_idx],
                                            &pac->held[h]))) {
                break;
            }
            release_upto(pac, flow_idx, h, PAC_REL_MAX_HOLD, emit, aux);
        }
    }
}

void
pac_run(struct pac *pac, uint64_t now_us, pac_emit_cb *emit, void *aux)
{
    set_now(pac, now_us);
    release_expired(pac, PAC_CLASS_ACK, emit, aux);
    if (pac->now >= pac->next_scan) {
        scan_flows(pac, emit, aux);
    }
    schedule(pac, emit, aux);
}

uint64_t
pac_next_wakeup(const struct pac *pac)
{
    uint64_t next = UINT64_MAX;

    for (int c = 0; c < PAC_N_CLASSES; c++) {
        uint32_t h = pac->age_head[c];

        if (h != PAC_NONE) {
            uint32_t age = head_wait(pac, c, h);
            uint32_t bound = class_bound(pac, c);

            /* An expired trigger that does not fit waits for data, which
             * the control-interval wakeup below covers. */
            if (age < bound || c == PAC_CLASS_ACK) {
                next = MIN(next, pac->now + (age < bound ? bound - age : 0));
            }
        }
    }
    if (pac->in_flight || pac->n_held) {
        next = MIN(next, pac->iv_start + control_interval(pac));
    }
    if (pac->n_flows) {
        next = MIN(next, pac->next_scan);
    }
    if (pac->out_head != PAC_NONE) {
        uint32_t silent = pac_elapsed32(pac->now,
                                        pac->flows[pac->out_head].last_data);
        uint32_t limit = dry_time(pac);

        next = MIN(next, pac->now + (silent < limit ? limit - silent : 0));
    }
    /* The control interval may have shrunk since it started. */
    return MAX(next, pac->now);
}

/* Introspection. */

void
pac_get_stats(const struct pac *pac, struct pac_stats *stats)
{
    *stats = pac->stats;
    stats->in_flight = pac->in_flight;
    stats->threshold = pac->threshold;
    stats->control_interval_us = control_interval(pac);
    stats->avg_rtt_us = pac->avg_base_rtt_us + pac->avg_hold_us;
    stats->late_us = pac->late_us;
    stats->flows = pac->n_flows;
    stats->held = pac->n_held;
    memcpy(stats->held_per_level, pac->n_held_level,
           sizeof stats->held_per_level);
}

size_t
pac_dump_flows(const struct pac *pac, pac_flow_cb *cb, void *aux)
{
    size_t n = 0;

    for (uint32_t i = 0; i < pac->cfg.max_flows; i++) {
        const struct pac_flow *f = &pac->flows[i];
        struct pac_flow_info info;

        if (!(f->flags & PAC_F_IN_USE)) {
            continue;
        }
        memset(&info, 0, sizeof info);
        memcpy(info.vm_addr, f->vm_addr, 16);
        memcpy(info.peer_addr, f->peer_addr, 16);
        info.vm_port = f->vm_port;
        info.peer_port = f->peer_port;
        info.level = f->level;
        info.slow_start = (f->flags & PAC_F_SLOW_START) != 0;
        info.mss = f->mss;
        info.held = f->n_held;
        info.rx_bytes = f->rx_bytes;
        info.last_ack = f->last_ack;
        info.cwnd = peer_cwnd(pac, f);
        info.rtt_us = f->rtt_us;
        info.idle_us = pac_elapsed32(pac->now, f->last_seen);
        cb(aux, &info);
        n++;
    }
    return n;
}
