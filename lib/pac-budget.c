/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Per-flow budgets: in_flight as the sum of what each flow still owes.
 *
 * A released trigger extends its flow's budget, budget_end, the sequence
 * number up to which the peer may send (pac_account_send()); data that
 * arrives uses it up (pac_credit_rx(): eq. (5), per flow).  in_flight is
 * the sum of the flows' outstanding bytes (budget_end - rcv_nxt) plus an
 * unattributed part (triggers of flows that have received nothing yet,
 * bare-ACK frames).  Flows with outstanding bytes are on the outstanding
 * list, silent longest first.  A verdict that a peer has sent all it will
 * (silent for the drain time, pac_reclaim_dry(); or a short segment, in
 * pac.c) takes its outstanding bytes back; new data of the same answer
 * proves the verdict wrong and restores them (pac_restore_reclaimed()).
 * A flow is busy while it has outstanding bytes or PAC holds its ACKs;
 * admission counts busy flows (pac-sched.c). */

#include "pac-private.h"

/* A flow whose triggered data stops arriving for this long (at least; see
 * pac_dry_time()) has finished its answer: what it was allowed but did not
 * send leaves in_flight. */
#define PAC_DRY_MIN_US 500

/* Data may reach PAC late: the datapath may not poll its port, or the host
 * may not deliver to it, for milliseconds, while the bottleneck keeps
 * sending.  Silences shorter than the longest such delay seen are not
 * taken as silence (see pac_note_late_data()).  Gaps longer than this are
 * not delivery delays. */
#define PAC_LATE_MAX_US 8000

/* A peer asked by a window trigger that has not answered at all is given
 * this many times longer than a dry flow before its window is reclaimed
 * (it may think before answering).  Not a peer whose handshake the
 * receiver answered with a SYN-ACK, if the peer has not acknowledged it:
 * its ACK comes one RTT after the SYN-ACK, before any data, and no
 * application thinks in between.  Without an ACK after a dry time, the
 * SYN-ACK went to a host that will not answer (a SYN flood, a spoofed
 * source), and its window goes back at once; if the peer was only late,
 * its data restores it (pac_restore_reclaimed()).  Nor a peer that the
 * receiver accepted and that has sent nothing since (PAC_W_HS_QUIET): a
 * client that completes handshakes and stays silent would otherwise keep
 * each window for 16 dry times (pac-handshake.c). */
#define PAC_PENDING_DRY_FACTOR 16

/* A peer silent in the middle of an answer that PAC expects to go on
 * (pac_answer_unfinished()) is given this many more dry times before its
 * window is reclaimed, unless it may be waiting for ACKs. */
#define PAC_UNFINISHED_DRY_WAITS 3

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
 * the tail (data arrived, or pac_reclaim_dry() gives it more time).  Neither
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
void
pac_out_list_update(struct pac *pac, uint32_t idx, bool data)
{
    struct pac_flow *f = &pac->flows[idx];
    bool listed = f->flags & PAC_F_ON_OUT_LIST;

    if (!pac_flow_outstanding(f)) {
        if (listed) {
            out_list_remove(pac, idx);
        }
        /* Its window is used up or gone: it leaves the pool of windows of
         * connections that have sent nothing (a window nobody owes any
         * more would keep its place until the connection's end). */
        pac_handshake_reclaimed(pac, idx, false);
    } else if (!listed) {
        out_list_append(pac, idx);
    } else if (data) {
        out_list_move_to_tail(pac, idx);
    }
}

/* How long triggered data may take to arrive: a few base RTTs plus the time
 * the bottleneck needs to drain a threshold's worth of data (at the highest
 * rate seen: the current rate falls exactly when flows go dry). */
uint32_t
pac_dry_time(const struct pac *pac)
{
    uint64_t t = 4 * (uint64_t) pac->min_rtt_us;

    if (pac->bw_max > 0) {
        /* Bounded before the conversion: a quotient beyond UINT64_MAX has
         * no uint64_t value. */
        double drain = pac->threshold / pac->bw_max;

        t += (drain < PAC_MAX_INTERVAL_US ? (uint64_t) drain
              : PAC_MAX_INTERVAL_US);
    } else {
        t += PAC_DRY_MIN_US;
    }
    return MAX(t, PAC_DRY_MIN_US);
}

/* A flow sent new data that PAC had stopped expecting: its triggered bytes
 * had been reclaimed as dry, or reset after a silence.  If PAC had seen no
 * data from any flow before it, for a spell short enough to be a delivery
 * delay (the bottleneck kept sending while PAC saw nothing), PAC's next
 * silence reset waits longer than that.  A gap of one flow's data while
 * others kept arriving is not delivery (the flow waited for its ACKs, or
 * sent unasked), nor is a long spell.  The drain time of dry flows stays
 * as it is: a flow silent while others' data arrives is not late, and
 * waiting that long for every dry flow would idle the bottleneck where
 * most dry verdicts are right. */
void
pac_note_late_data(struct pac *pac)
{
    uint64_t silence = pac->now - pac->last_rx_data;

    if (silence >= PAC_DRY_MIN_US && silence <= PAC_LATE_MAX_US) {
        pac->stats.late_data++;
        pac->late_us = MAX(pac->late_us, silence);
    }
}

/* Eq. (5), per flow: received data lowers in_flight by what it delivers of
 * its flow's outstanding bytes ('credited', which exceeds 'len' when a
 * retransmission fills a hole).  Data nobody asked for, and bare ACKs and
 * SYN-ACKs ('syn'; see pac_ack_frame_bytes()), lower only the part of
 * in_flight no flow accounts for, so that they never cancel the triggers
 * of other flows. */
void
pac_credit_rx(struct pac *pac, uint32_t len, uint32_t credited, bool syn)
{
    uint32_t rest = (len > credited ? len - credited
                     : len ? 0
                     : syn ? PAC_SYNACK_FRAME : PAC_ACK_FRAME);
    uint64_t other = MIN(pac->unattributed, rest);

    pac->unattributed -= other;
    pac->in_flight -= MIN(pac->in_flight, credited + other);
}

/* Flow 'idx' has received its first data since PAC follows its sequence
 * numbers: 'len' bytes from 'seq'.  With the fast path, that is how PAC
 * first sees most connections of a burst: their triggers passed untracked
 * before the burst started tracking (pac-watch.c), or were sent while the
 * flow had no sequence number to attach them to (pac_account_send(), which
 * notes them in own_unattributed), and their windows are in the part of
 * in_flight that is no flow's.
 *
 * What the trigger let loose comes next, on this flow, ahead of what its
 * own ACKs trigger, so the flow takes it from the unattributed part as its
 * budget: what its own triggers put there, or else, for a trigger that
 * passed untracked, an initial window (what the watch counted for it), less
 * this segment.  That data is then credited where it was counted.
 * Otherwise it would use up the budget of the flow's first ACKs, the
 * answer's end would take back only what is left of the flow's budget, and
 * the unattributed part would outlive the answers (16 peers at 10 Gbit/s:
 * a round's initial windows stayed in in_flight and held two more rounds'
 * requests).
 *
 * And this data starts the flow's answer, as if PAC had seen its request,
 * so that its next request measures the answer's size: without it, the
 * flow's triggers counted whole windows for a round longer than those of
 * flows PAC saw asked (pac-trigger.c, answer_estimate()). */
void
pac_note_first_data(struct pac *pac, uint32_t idx, uint32_t seq, uint32_t len)
{
    struct pac_flow *f = &pac->flows[idx];
    struct pac_flow_wnd *w = pac_flow_wnd(pac, f);
    uint32_t own = w->own_unattributed;
    uint32_t window = (own ? own
                       : pac_init_window(pac, pac->cfg.default_mss));
    uint32_t claim = MIN(pac->unattributed, window > len ? window - len : 0);

    w->bits |= PAC_W_DATA;
    w->own_unattributed = 0;
    if (!pac->cfg.fast_path) {
        return;
    }
    if (claim && !pac_flow_outstanding(f)) {
        pac->unattributed -= claim;
        f->budget_end = f->rcv_nxt + claim;
        f->flags |= PAC_F_BUDGET;
        /* A budget again: no earlier verdict's to restore (as in
         * pac_account_send()). */
        w->bits &= ~PAC_W_RECLAIMED;
        pac_rr_mark(pac, idx);
    }
    if (!(f->flags & PAC_F_IN_RESP)) {
        f->resp_start = seq;
        f->flags |= PAC_F_IN_RESP;
    }
}

/* Takes flow 'idx's outstanding bytes out of in_flight. */
void
pac_reclaim_outstanding(struct pac *pac, uint32_t idx)
{
    struct pac_flow *f = &pac->flows[idx];
    uint32_t out = pac_flow_outstanding(f);

    pac->in_flight -= MIN(pac->in_flight, out);
    f->budget_end = f->rcv_nxt;
    pac_handshake_reclaimed(pac, idx, false);
    pac_rr_mark(pac, idx);
    if (f->flags & PAC_F_ON_OUT_LIST) {
        out_list_remove(pac, idx);
    }
}

/* Removes flow 'idx', which holds no packets, with its share of in_flight
 * and its place among the busy flows. */
void
pac_forget_flow(struct pac *pac, uint32_t idx)
{
    pac_reclaim_outstanding(pac, idx);
    if (pac->flows[idx].flags & PAC_F_BUSY) {
        pac->n_busy--;
    }
    if (pac->flows[idx].flags & PAC_F_RESYNC) {
        pac->n_resync--;
    }
    pac_flow_remove(pac, idx);
}

/* Marks flow 'idx', which holds no packets, PAC_F_RESYNC: PAC stops
 * following its sequence numbers (it stops tracking, pac-watch.c, or it
 * first sees the connection's handshake untracked).  Its outstanding bytes
 * leave in_flight, and what PAC knew of its sequence numbers goes: the
 * bases, the budget, the answer under way, the edges PAC let out, the
 * handshake's RTT clock, the verdicts.  The receiver's segments pass
 * untouched meanwhile, so all of that would be stale when PAC tracks the
 * connection again; its next segment then starts it afresh, as for a
 * connection first seen mid-stream.
 *
 * Kept is what describes the connection rather than where it stands: the
 * MSS and whose options gave it, the window scales (the window clamp needs
 * them, and the handshake that gave them does not come again), whether
 * the receiver opened it on its own (PAC_W_LONE), the RTT,
 * the bytes received and the MLFQ level they earned (a connection does
 * not get shorter for having been quiet), the FINs seen, the peer's
 * largest segment, the modelled window and the sizes of its last two
 * answers.  The last two are what PAC, tracking all along, would have
 * used for the connection's next answer: an upper bound of the window
 * (PAC never shrinks it for idleness, see classify_tx()) and the answer
 * size it expects (a larger answer outgrows the cap, see
 * pac_response_room()).  The peer's phase restarts as slow start, the
 * faster growth, as for a connection first seen. */
void
pac_resync_flow(struct pac *pac, uint32_t idx)
{
    struct pac_flow *f = &pac->flows[idx];
    struct pac_flow_wnd *w = pac_flow_wnd(pac, f);

    pac_reclaim_outstanding(pac, idx);
    if (!(f->flags & PAC_F_RESYNC)) {
        f->flags |= PAC_F_RESYNC;
        pac->n_resync++;
    }
    f->flags &= ~(PAC_F_SYN_SENT | PAC_F_SYNACK_SENT | PAC_F_ACK_BASE
                  | PAC_F_RCV_BASE | PAC_F_IN_RESP | PAC_F_BUDGET
                  | PAC_F_DRY | PAC_F_MEASURING);
    f->flags |= PAC_F_SLOW_START;
    f->burst_bytes = 0;
    f->slowdowns = 0;
    f->iv_start = (uint32_t) pac->now;
    f->iv_bytes = 0;
    f->iv_prev_rate = 0;
    w->bits &= PAC_W_KEPT_BITS;
    w->own_unattributed = 0;
    w->n_old_edges = 0;
    w->old_edge_pos = 0;
    w->dry_waits = 0;
    pac_update_busy(pac, idx);
}

/* Takes flow 'idx's outstanding bytes out of in_flight on a verdict that
 * its peer has sent all it will: it went dry, or sent a short segment.
 * Where they ended is kept, for pac_restore_reclaimed(). */
void
pac_reclaim_on_verdict(struct pac *pac, uint32_t idx)
{
    struct pac_flow *f = &pac->flows[idx];
    struct pac_flow_wnd *w = pac_flow_wnd(pac, f);

    if (pac_flow_outstanding(f)) {
        w->reclaimed_end = f->budget_end;
        w->bits |= PAC_W_RECLAIMED;
    }
    pac_reclaim_outstanding(pac, idx);
}

/* A verdict that the peer of flow 'f' had sent all was wrong if it sends
 * new data of the same answer before PAC gives it another trigger: the
 * peer was only late (its ACKs, or its data, waited in a queue or for a
 * CPU).  What the verdict took was then still coming: it counts again,
 * less what arrived. */
void
pac_restore_reclaimed(struct pac *pac, struct pac_flow *f,
                      const struct pac_segment *seg)
{
    struct pac_flow_wnd *w = pac_flow_wnd(pac, f);

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

void
pac_reclaim_dry(struct pac *pac)
{
    uint32_t limit = pac_dry_time(pac);
    uint32_t idx;

    while ((idx = pac->out_head) != PAC_NONE
           && pac_elapsed32(pac->now, pac->flows[idx].last_data) >= limit) {
        struct pac_flow *f = &pac->flows[idx];

        if (pac_window_pending(pac, f)
            && !(f->flags & PAC_F_SYNACK_SENT)
            && !(pac_flow_wnd(pac, f)->bits & PAC_W_HS_QUIET)
            && pac_elapsed32(pac->now, f->iv_start)
               < PAC_PENDING_DRY_FACTOR * limit) {
            /* Asked, but not answered yet: the peer may take its time to
             * think (iv_start is when it was asked, pac_account_send()). */
            out_list_move_to_tail(pac, idx);
            continue;
        }
        if (pac->cfg.policy == PAC_POLICY_RDTCP
            && !pac_window_pending(pac, f)) {
            /* RDTCP's flight counters fall only as data comes.  A peer
             * that has sent some of its window is slow, not done: its
             * share is at most a few segments, an answer's end gives the
             * rest back, and with many peers each one's next segment
             * waits its turn in the switch longer than the drain time.
             * Only a window that brought nothing at all is reclaimed, as
             * below (a SYN-ACK to a host that will not answer). */
            out_list_move_to_tail(pac, idx);
            continue;
        }
        if (pac_answer_unfinished(pac, f) && !peer_may_wait_for_acks(pac, f)
            && pac_flow_wnd(pac, f)->dry_waits < PAC_UNFINISHED_DRY_WAITS) {
            /* Not if the peer may be waiting for ACKs: its budget may then
             * be more than its window allows. */
            pac_flow_wnd(pac, f)->dry_waits++;
            pac->stats.dry_waits++;
            out_list_move_to_tail(pac, idx);
            continue;
        }
        pac->stats.dry_reclaims++;
        pac->stats.dry_bytes += pac_flow_outstanding(f);
        pac_handshake_reclaimed(pac, idx, true);
        pac_reclaim_on_verdict(pac, idx);

        /* A peer that has an ACK for all its data and still sends nothing
         * is done: ACKs it gets later trigger nothing.  One that may be
         * waiting for ACKs is not marked: they go out as usual, with their
         * triggers, now that the flow owes nothing: marked dry, its held
         * ACKs would go out with no trigger, and the window they let loose
         * would come uncounted. */
        pac_rr_mark(pac, idx);
        if (!peer_may_wait_for_acks(pac, f)) {
            f->flags |= PAC_F_DRY;
        }
    }
}

/* Accounts for segment 'd' of flow 'f' leaving now with 'trigger'. */
void
pac_account_send(struct pac *pac, struct pac_flow *f, const struct pac_held *d,
                 uint32_t trigger)
{
    /* A segment without an ACK number moves no ACK: its 'ack' may be the
     * zero of a flow that had none yet, which, taken as an ACK, would set
     * last_ack back by up to 2^31. */
    uint32_t delta = (d->flags & PAC_H_NO_ACK ? 0
                      : pac_ack_delta(f, d->ack));
    uint32_t frame = pac_ack_frame_bytes(f, d);
    bool pending = pac_window_pending(pac, f);
    bool repeated = pac_repeated_request(f, d);

    pac_rr_mark(pac, f - pac->flows);
    pac_window_note_edge(pac, f, d);
    if (d->kind == PAC_K_REQUEST && !pending && !repeated) {
        /* The peer is idle: whatever the previous answer left unsent
         * will not come. */
        pac_reclaim_outstanding(pac, f - pac->flows);
    }
    pac->in_flight += frame;
    pac->unattributed += frame;
    trigger -= frame;
    if (trigger && (f->flags & PAC_F_RCV_BASE)) {
        /* A flow owes at most what its peer can send unacknowledged
         * (PAC_MAX_WINDOW): budget_end stays within 2^31 of rcv_nxt. */
        uint32_t out = MIN(pac_flow_outstanding(f), PAC_MAX_WINDOW);

        trigger = MIN(trigger, PAC_MAX_WINDOW - out);
    }
    pac->in_flight += trigger;
    if (delta) {
        /* The window model feeds the triggers of requests, where too small
         * a guess overflows the buffer: it grows as in slow start whatever
         * phase eq. (3) assumes (an upper bound of the peer's window), by
         * what the peer sent: an ACK of more, like a duplicate ACK, grows
         * no window. */
        uint32_t acked = pac_received_delta(f, d->ack);

        if (acked && !(d->flags & PAC_H_ECE)) {
            f->cwnd = MIN(pac_peer_cwnd(pac, f) + MAX(acked, f->mss),
                          pac_window_cap(pac, f));
        }
        /* Not beyond what arrived: the rest acknowledges data the peer
         * never sent (pac_received_delta()), and a last_ack run far ahead
         * would, past 2^31, look behind rcv_nxt. */
        f->last_ack = ((f->flags & PAC_F_RCV_BASE)
                       && pac_seq_gt(d->ack, f->rcv_nxt)
                       ? f->rcv_nxt : d->ack);
    }
    if (trigger && (f->flags & PAC_F_RCV_BASE)) {
        f->budget_end = pac_allowed_end(f) + trigger;
        f->flags |= PAC_F_BUDGET;
        pac_flow_wnd(pac, f)->bits &= ~PAC_W_RECLAIMED;
        pac_handshake_charged(pac, f, d, trigger);
    } else {
        /* Nothing received on the flow yet, so no sequence number to
         * attach the trigger to: the flow's first data claims it. */
        struct pac_flow_wnd *w = pac_flow_wnd(pac, f);

        pac->unattributed += trigger;
        w->own_unattributed = (trigger > UINT32_MAX - w->own_unattributed
                               ? UINT32_MAX
                               : w->own_unattributed + trigger);
    }
    if (d->kind != PAC_K_ACK) {
        f->flags &= ~PAC_F_DRY;
        pac_flow_wnd(pac, f)->bits &= ~PAC_W_RECLAIMED;
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
            uint32_t answer = pac_answer_size(f, d->ack);

            if (answer) {
                pac_flow_wnd(pac, f)->prev_resp = f->last_resp;
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
        f->cwnd = MIN(MAX(pac_peer_cwnd(pac, f), f->burst_bytes),
                      pac_window_cap(pac, f));
        f->flags &= ~PAC_F_MEASURING;
    }
    /* The flow's dry clock runs from the later of its last data and the
     * last trigger PAC gave its peer: time PAC held the peer's ACKs is not
     * the peer's silence. */
    pac_out_list_update(pac, f - pac->flows, trigger > 0);
}
