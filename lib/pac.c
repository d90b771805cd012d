/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* libpac's entry points, and the life of a flow.
 *
 * pac_rx() takes a segment toward the receiver: it finds the flow, learns
 * from the segment (rcv_nxt, MSS and window scale, handshake RTT, a hole
 * before it, the end of an answer), credits its data against the flow's
 * budget and lets the scheduler release what now fits.  pac_tx() takes a
 * segment from the receiver: it classifies it (ACK, request, handshake),
 * clamps its window, and passes it if its flow holds nothing, nothing of
 * higher or equal MLFQ priority waits and its trigger fits; otherwise it
 * holds it at the tail of its flow, so that a flow's segments never pass
 * one another.  pac_run() runs the timers: hold bounds, idle and closed
 * flows, the control interval, the end of tracking (pac-watch.c).  Also
 * here: the instance's lifetime, flow lookup and removal, MLFQ levels,
 * stale ACKs, statistics and flow dumps. */

#include "pac-private.h"
#include "pac-flow.h"

/* A peer asked again after this much idleness is assumed back in slow
 * start (Linux restarts after an idle RTO, at least 200 ms).  The window
 * model itself is not shrunk: see classify_tx(). */
#define PAC_RESTART_IDLE_US 250000

/* Closed flows (FIN both ways) are forgotten after this much quiet. */
#define PAC_CLOSED_LINGER_US 1000000

/* Idle-flow scans run this often. */
#define PAC_SCAN_INTERVAL_US 1000000

const char *
pac_version(void)
{
    return PAC_VERSION_STRING;
}

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
    if (!pac_flow_table_init(pac) || !pac_queue_init(pac)
        || !pac_rr_init(pac, pac_head_keys)) {
        pac_flow_table_free(pac);
        pac_queue_free(pac);
        pac_rr_free(pac);
        free(pac);
        return NULL;
    }
    pac->threshold = cfg->threshold;
    pac->loss_cap = cfg->threshold;
    pac->iv_start = now_us;
    pac->rate_start = now_us;   /* The peak-rate filter's first window. */
    pac->out_head = pac->out_tail = PAC_NONE;
    pac->tx_held = PAC_NONE;
    pac->avg_base_rtt_us = cfg->base_rtt_us;
    pac->min_rtt_us = cfg->base_rtt_us;
    pac->next_scan = now_us + PAC_SCAN_INTERVAL_US;
    pac->last_trigger_turn = now_us;
    pac_watch_init(pac);
    return pac;
}

void
pac_flush(struct pac *pac, pac_emit_cb *emit, void *aux)
{
    for (int l = 0; l < PAC_MAX_LEVELS; l++) {
        while (pac->rr_cursor[l] != PAC_NONE) {
            pac_release_flow(pac, pac->rr_cursor[l], PAC_REL_FLUSH, emit, aux);
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
        pac_rr_free(pac);
        free(pac);
    }
}

static void
remove_flow(struct pac *pac, uint32_t flow_idx, pac_emit_cb *emit,
            void *aux)
{
    pac_release_flow(pac, flow_idx, PAC_REL_FLUSH, emit, aux);
    pac_forget_flow(pac, flow_idx);
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

/* Whether SYN 'seg' (toward the receiver if 'rx') opens a new connection
 * on existing flow 'f', whose state then goes: the receiver's SYN, unless
 * it repeats one on a flow that has exchanged nothing yet; the peer's SYN
 * on a closed flow, or on a flow that has only seen a handshake with
 * another ISN (a peer that gave up a handshake and opens again from the
 * same port); the receiver's SYN-ACK if it acknowledges an ISN other than
 * the flow's (its TCP took a SYN that PAC did not believe, see
 * pac_rx()).  A peer's SYN with another ISN on a flow that has exchanged
 * data changes nothing (RFC 5961: the receiver answers it with a challenge
 * ACK), so that a host guessing at a connection cannot make PAC forget
 * it. */
static bool
syn_reopens(const struct pac_flow *f, const struct pac_segment *seg,
            bool rx)
{
    uint8_t tf = seg->tcp_flags;
    bool closed = f->flags & (PAC_F_FIN_VM | PAC_F_FIN_PEER);
    bool data = f->rx_bytes || (f->flags & PAC_F_IN_RESP);

    if (!(tf & PAC_TCP_SYN) || (tf & PAC_TCP_RST)) {
        return false;
    } else if (f->flags & PAC_F_RESYNC) {
        /* PAC did not follow the connection's sequence numbers, nor see it
         * close: a SYN opens a new one on the ports (or repeats one PAC
         * saw untracked, whose options it carries again).  Its SYN-ACK
         * belongs to the flow's handshake. */
        return !(tf & PAC_TCP_ACK);
    } else if (rx) {
        return (!(tf & PAC_TCP_ACK)
                && (closed
                    || ((f->flags & PAC_F_RCV_BASE) && !data
                        && seg->seq + 1 != f->rcv_nxt)));
    } else if (!(tf & PAC_TCP_ACK)) {
        return closed || data || (f->flags & PAC_F_ACK_BASE);
    } else {
        return (f->flags & PAC_F_RCV_BASE) && seg->ack != f->rcv_nxt;
    }
}

/* Finds or, if 'may_create', creates the flow of 'seg', a segment toward
 * the receiver if 'rx', from it otherwise; PAC_NONE if there is none and
 * none can be made (table full, nothing evictable).  A SYN that opens a
 * new connection on the flow's ports (syn_reopens()) replaces the flow:
 * what it holds goes first, in order, through 'emit'.  While PAC tracks,
 * a flow found marked PAC_F_RESYNC is picked up again.  An RST for an
 * unknown flow creates nothing (it would only evict another), nor does a
 * segment whose hash chain is full (pac_flow_chain_full()): its flow's
 * segments then pass as those of an untracked flow do. */
static uint32_t
flow_get(struct pac *pac, const struct pac_segment *seg, bool rx,
         bool may_create, pac_emit_cb *emit, void *aux)
{
    struct seg_key key = seg_key(seg, rx);
    uint32_t hash = seg_flow_hash(pac, seg, &key);
    uint32_t idx = pac_flow_lookup(pac, key.vm_addr, key.vm_port,
                                   key.peer_addr, key.peer_port, hash);
    struct pac_flow *f;

    if (idx != PAC_NONE) {
        f = &pac->flows[idx];
        if (!syn_reopens(f, seg, rx)) {
            if ((f->flags & PAC_F_RESYNC) && pac->tracking) {
                /* Picked up again: its state is that of a connection first
                 * seen mid-stream (pac_resync_flow()). */
                f->flags &= ~PAC_F_RESYNC;
                pac->n_resync--;
            }
            return idx;
        }
        remove_flow(pac, idx, emit, aux);
        pac->stats.flows_closed++;
    }
    if (!may_create) {
        return PAC_NONE;
    }
    if (pac_flow_chain_full(pac, hash)) {
        pac->stats.chain_full++;
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
        pac_forget_flow(pac, victim);
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

bool
pac_watch_syn(struct pac *pac, const struct pac_segment *seg, bool rx,
              uint64_t now_us)
{
    uint8_t tf = seg->tcp_flags;
    struct pac_flow *f;
    uint32_t idx;

    if (pac->tracking) {
        return true;
    }
    if (!rx && pac_watch_note_tx(pac, tf, seg->payload_len, now_us)) {
        /* The receiver's SYN-ACK, a window trigger, starts tracking:
         * pac_tx() takes it, and notes what follows. */
        return true;
    }
    if (rx) {
        /* A SYN-ACK answers the receiver's SYN, which counted its frame. */
        pac->stats.fast_rx_packets++;
        pac_watch_note_rx(pac, (tf & PAC_TCP_SYN) && (tf & PAC_TCP_ACK),
                          seg->payload_len);
    } else {
        pac->stats.fast_tx_packets++;
    }
    if (!(tf & PAC_TCP_SYN) || (tf & PAC_TCP_RST)) {
        return false;
    }

    /* Only the time: the control interval does not run while PAC tracks
     * nothing (pac_control_restart() starts it afresh). */
    if (now_us > pac->now) {
        pac->now = now_us;
    }
    /* Nothing is held while PAC tracks nothing: flow_get() has nothing to
     * emit where the SYN replaces a flow. */
    idx = flow_get(pac, seg, rx, true, NULL, NULL);
    if (idx == PAC_NONE) {
        return false;
    }
    f = &pac->flows[idx];
    if (!(f->flags & PAC_F_RESYNC)) {
        /* A new flow: no sequence state to drop, only the mark. */
        pac_resync_flow(pac, idx);
    }
    /* What pac_rx() and pac_tx() note of a handshake segment for the window
     * clamp; no sequence number, no budget, no RTT clock: what follows
     * passes untracked. */
    note_mss(f, seg->mss, rx ? PAC_MSS_PEER : PAC_MSS_VM);
    pac_window_note_wscale(pac, idx, seg, !rx);
    if (!rx) {
        pac_note_open(pac, f);
    }
    f->last_seen = (uint32_t) now_us;
    return false;
}

static void
update_level(struct pac *pac, uint32_t flow_idx)
{
    struct pac_flow *f = &pac->flows[flow_idx];
    /* RDTCP without flow priorities queues ACKs first come first
     * served. */
    uint32_t n_levels = (pac->cfg.policy == PAC_POLICY_RDTCP ? 1
                         : pac->cfg.n_levels);
    uint8_t level = f->level;

    while (level + 1u < n_levels
           && f->rx_bytes >= pac->cfg.level_bytes[level]) {
        level++;
    }
    pac_queue_set_level(pac, flow_idx, level);
}

/* Whether pure ACK 'd' only changes the window that 'tail', the newest
 * segment its flow holds, offers: the same ACK number, another window (as
 * the peer will see them, clamp included). */
static bool
is_window_update(const struct pac_held *tail, const struct pac_held *d)
{
    return d->ack == tail->ack && d->window != tail->window;
}

/* Section III-D: the receiver repeats an ACK while newer ones of the same
 * flow wait here, so the peer has retransmitted (it timed out or recovers).
 * Drop the waiting pure ACKs that a newer waiting one supersedes, serve the
 * flow first and assume it restarts in slow start.
 *
 * The superseded ACKs are dropped as they reach the flow's head
 * (pac_drop_stale_heads()), not found by a walk of the flow's packets
 * here: a flow may hold tens of thousands, and a receiver may repeat an
 * ACK on every segment. */
static void
handle_stale(struct pac *pac, uint32_t flow_idx, pac_emit_cb *emit,
             void *aux)
{
    struct pac_flow_wnd *w = &pac->flow_wnd[flow_idx];
    struct pac_flow *f = &pac->flows[flow_idx];

    if (w->bits & PAC_W_PURE_MAX) {
        w->stale_below = w->pure_max;
        w->stale_tail = f->held_tail;
        w->bits |= PAC_W_STALE;
        pac_drop_stale_heads(pac, flow_idx, emit, aux);
    }

    pac_queue_set_level(pac, flow_idx, 0);
    f->flags |= PAC_F_SLOW_START;
    w->bits &= ~PAC_W_LIMITED;
    pac_rr_mark(pac, flow_idx);
    pac->stats.stale_events++;
}

/* The end of the window the receiver offers on flow 'f', which has a
 * rcv_nxt: the right edge of the newest segment PAC let out, if it notes
 * them (pac-window.c), or PAC_MAX_WINDOW beyond rcv_nxt.  A segment that
 * starts beyond it is outside every window the receiver offered (its TCP
 * drops it): a peer guessing at the connection, whose data must not move
 * rcv_nxt. */
static uint32_t
window_end(const struct pac *pac, const struct pac_flow *f)
{
    const struct pac_flow_wnd *w = pac_flow_wnd(pac, f);

    return ((w->bits & PAC_W_EDGE) && pac_seq_gt(w->right_edge, f->rcv_nxt)
            ? w->right_edge : f->rcv_nxt + PAC_MAX_WINDOW);
}

/* Whether flow 'f' holds the receiver's first ACK of the byte at 'seq':
 * no ACK of it has left (the last one that did acknowledged less), and the
 * head is an ACK of it.  A peer that sends that byte again has not seen
 * its ACK in time (its timer ran out). */
static bool
holds_ack_of(const struct pac *pac, const struct pac_flow *f, uint32_t seq)
{
    const struct pac_held *h;

    if (!f->n_held || !(f->flags & PAC_F_ACK_BASE)
        || pac_seq_lt(seq, f->last_ack)) {
        return false;
    }
    h = &pac->held[f->held_head];
    return !(h->flags & PAC_H_NO_ACK) && pac_seq_gt(h->ack, seq);
}

/* Whether RST 'seg' toward the receiver may end flow 'f': RFC 5961's
 * check, as Linux makes it, that its sequence number is exactly the one
 * the receiver expects next.  PAC cannot send the challenge ACK that
 * RFC 5961 answers an RST elsewhere in the window with, so it also takes
 * the receiver's last ACK number, where a peer answers the receiver's own
 * challenge ACK (rcv_nxt, the highest byte seen, is beyond it after a
 * hole).  Anything else is a guess by a host that does not know the
 * connection's sequence numbers: the RST passes to the receiver, whose
 * TCP decides, and PAC keeps the flow (rst_ignored).  A flow that has
 * received nothing yet has no sequence number to check against. */
static bool
rst_acceptable(const struct pac_flow *f, const struct pac_segment *seg)
{
    return (!(f->flags & PAC_F_RCV_BASE) || seg->seq == f->rcv_nxt
            || ((f->flags & PAC_F_ACK_BASE) && seg->seq == f->last_ack));
}

void
pac_rx(struct pac *pac, const struct pac_segment *seg, uint64_t now_us,
       pac_emit_cb *emit, void *aux)
{
    uint32_t len = seg->payload_len;
    bool syn = seg->tcp_flags & PAC_TCP_SYN;
    bool ce = seg->ip_ecn == PAC_ECN_CE;
    bool newest = false;        /* The segment extends rcv_nxt. */
    uint32_t flow_idx;

    pac_set_now(pac, now_us);
    pac->stats.rx_packets++;
    pac->stats.rx_bytes += len;
    pac->iv_bytes += len;
    pac->iv_pkts++;
    if (ce) {
        pac->stats.rx_ce++;
        pac->iv_ce++;
    }

    flow_idx = flow_get(pac, seg, true, !(seg->tcp_flags & PAC_TCP_RST),
                        emit, aux);
    if (flow_idx == PAC_NONE) {
        pac_credit_rx(pac, len, 0, seg->tcp_flags & PAC_TCP_SYN);
        if (len) {
            pac->last_rx_data = pac->now;
        }
    } else {
        struct pac_flow *f = &pac->flows[flow_idx];
        bool expecting = pac_flow_outstanding(f) > 0;
        uint32_t outstanding;

        if (seg->tcp_flags & PAC_TCP_RST) {
            if (rst_acceptable(f, seg)) {
                remove_flow(pac, flow_idx, emit, aux);
                pac->stats.flows_closed++;
            } else {
                pac->stats.rst_ignored++;
            }
            goto out;
        }
        if (!syn) {
            pac_restore_reclaimed(pac, f, seg);
            if ((f->flags & PAC_F_SYNACK_SENT)
                && (seg->tcp_flags & PAC_TCP_ACK)) {
                /* Before 'outstanding': data with the ACK uses up the
                 * window it may charge. */
                pac_handshake_confirmed(pac, flow_idx);
            }
        }
        outstanding = pac_flow_outstanding(f);

        pac_rr_mark(pac, flow_idx);
        f->last_seen = (uint32_t) now_us;
        if (syn && (f->flags & PAC_F_RCV_BASE)
            && seg->seq + 1 != f->rcv_nxt) {
            /* A SYN with another ISN that does not open a new connection
             * (syn_reopens()): believed only if the receiver answers it
             * with a SYN-ACK. */
        } else if (syn) {
            uint32_t end = seg->seq + 1 + len;

            if (!(f->flags & PAC_F_RCV_BASE) || pac_seq_gt(end, f->rcv_nxt)) {
                f->rcv_nxt = end;
                f->flags |= PAC_F_RCV_BASE;
            }
            note_mss(f, seg->mss, PAC_MSS_PEER);
            pac_window_note_wscale(pac, flow_idx, seg, false);
            if ((seg->tcp_flags & PAC_TCP_ACK)
                && (f->flags & PAC_F_SYN_SENT)) {
                pac_note_rtt(pac, f);
                f->flags &= ~PAC_F_SYN_SENT;
            }
        } else {
            uint32_t end = seg->seq + len
                           + (seg->tcp_flags & PAC_TCP_FIN ? 1 : 0);

            if ((f->flags & PAC_F_SYNACK_SENT)
                && (seg->tcp_flags & PAC_TCP_ACK)) {
                pac_note_rtt(pac, f);
                f->flags &= ~PAC_F_SYNACK_SENT;
            }
            if (len && (f->flags & PAC_F_RCV_BASE)
                && pac_seq_gt(seg->seq, f->rcv_nxt)) {
                pac->iv_holes++;
                pac->stats.rx_holes++;
            } else if (len && (f->flags & PAC_F_RCV_BASE)
                       && !pac_seq_gt(end, f->rcv_nxt)
                       && holds_ack_of(pac, f, seg->seq)) {
                pac->stats.peer_retransmits++;
            }
            if (len && pac->cfg.fast_path
                && !(f->flags & (PAC_F_RCV_BASE | PAC_F_ACK_BASE))) {
                /* A connection first seen mid-stream, by its peer's data:
                 * with the fast path, the usual case, for every connection
                 * whose request passed untracked before the burst it was
                 * part of started tracking.  The receiver has acknowledged
                 * what came before this segment, as far as PAC can tell.
                 * Without this base, the receiver's first ACK would set it
                 * and count as a duplicate ACK, one segment, though it
                 * acknowledges the segments seen since and the peer's
                 * window grows by as much: a delayed ACK of two segments
                 * lets four out (in the model, three such connections
                 * overflowed the buffer by a segment). */
                f->last_ack = seg->seq;
                f->flags |= PAC_F_ACK_BASE;
            }
            if (!(f->flags & PAC_F_RCV_BASE)
                || (pac_seq_gt(end, f->rcv_nxt)
                    && !pac_seq_gt(seg->seq, window_end(pac, f)))) {
                f->rcv_nxt = end;
                f->flags |= PAC_F_RCV_BASE;
                newest = true;
            }
        }
        if (seg->tcp_flags & PAC_TCP_FIN) {
            f->flags |= PAC_F_FIN_PEER;
        }
        pac_credit_rx(pac, len, (outstanding > pac_flow_outstanding(f)
                                 ? outstanding - pac_flow_outstanding(f) : 0),
                      seg->tcp_flags & PAC_TCP_SYN);
        if (!len && pac->n_hs_pool && !pac_flow_outstanding(f)) {
            /* The peer's sequence number moved past what it owed without
             * data (a base PAC did not have): no window left in the pool
             * of connections that have sent nothing (pac-handshake.c). */
            pac_handshake_reclaimed(pac, flow_idx, false);
        }
        if (len) {
            if (newest && !expecting && (f->flags & PAC_F_BUDGET)
                && (f->flags & PAC_F_IN_RESP)) {
                pac_note_late_data(pac);
            }
            if (!(pac_flow_wnd(pac, f)->bits & PAC_W_DATA)) {
                /* After the late-data test: what the flow claims now is
                 * not data PAC had stopped expecting. */
                pac_note_first_data(pac, flow_idx, seg->seq, len);
            }
            pac->last_rx_data = pac->now;
            f->flags &= ~PAC_F_DRY;
            pac_flow_wnd(pac, f)->dry_waits = 0;
            pac_handshake_answered(pac, f);
            if (len <= f->mss && len > pac_flow_wnd(pac, f)->rx_max_len) {
                pac_flow_wnd(pac, f)->rx_max_len = len;
            }
            pac_out_list_update(pac, flow_idx, true);
            f->rx_bytes = (f->rx_bytes + len < f->rx_bytes
                           ? UINT32_MAX : f->rx_bytes + len);
            if (f->flags & PAC_F_MEASURING) {
                f->burst_bytes += len;
            }
            pac_flow_interval(pac, f, len);
            update_level(pac, flow_idx);
            if (newest) {
                if (f->n_held
                    && pac_request_passed_by_data(f,
                                                  &pac->held[f->held_head])) {
                    /* Data past the ACK number of the request PAC holds:
                     * an answer was still under way when the receiver sent
                     * it, as pac_tx() would have seen had this data come
                     * first.  The peer's retransmission timer runs on that
                     * data while the request waits, and the receiver's
                     * ACKs of it wait behind the request: it goes as an
                     * ACK with data, under the ACKs' hold bound. */
                    pac_queue_head_to_ack(pac, flow_idx);
                }
                pac_window_note_fill(pac, f, f->rcv_nxt);
                if (pac_is_short_segment(pac, f, len)
                    && !pac_window_at_edge(pac, f, f->rcv_nxt)
                    && !(pac_answer_unfinished(pac, f)
                         && pac_window_may_fill(pac, f, len))) {
                    /* The peer's answer is complete: what its triggers
                     * allowed beyond it will not come, and ACKs of it
                     * trigger nothing, until it sends again. */
                    pac_reclaim_on_verdict(pac, flow_idx);
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
    pac_schedule(pac, emit, aux);
}

/* Whether flow 'f' holds a request acknowledging 'ack': a second request
 * with the same ACK number is the receiver's retransmission of it (PAC held
 * the first past the receiver's RTO), which adds nothing but a bare ACK from
 * the peer.  A retransmission carries the receiver's newest ACK number, so
 * only the newest held request can match. */
static bool
holds_request(const struct pac *pac, const struct pac_flow *f, uint32_t ack)
{
    const struct pac_flow_wnd *w = pac_flow_wnd(pac, f);

    return ((w->bits & PAC_W_REQUEST_HELD)
            && pac->held[w->request_held].ack == ack);
}

/* The receiver sent again the request that flow 'f' holds: its
 * retransmission timer ran out while PAC held the request, so its RTO is
 * at most the request's wait.  Later requests are copied before half of
 * the least such wait (pac_copy_delay()). */
static void
note_vm_retransmit(struct pac *pac, const struct pac_flow *f)
{
    const struct pac_held *p = &pac->held[pac_flow_wnd(pac, f)->request_held];
    uint32_t waited = pac_elapsed32(pac->now, p->enq_time);

    pac->stats.vm_retransmits++;
    if (waited && (!pac->vm_rto_seen_us || waited < pac->vm_rto_seen_us)) {
        pac->vm_rto_seen_us = waited;
    }
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
    d->flags = has_ack ? 0 : PAC_H_NO_ACK;
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
        pac_handshake_accepted(pac, f);
        note_mss(f, seg->mss, PAC_MSS_VM);
    } else if (seg->payload_len && has_ack
               && (!(f->flags & PAC_F_RCV_BASE)
                   || !pac_seq_lt(seg->ack, f->rcv_nxt))
               && !pac_acks_no_new_answer(f, seg->ack)
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
            pac_flow_wnd(pac, f)->bits &= ~PAC_W_LIMITED;
        }
    } else {
        if (seg->payload_len && has_ack && holds_request(pac, f, seg->ack)) {
            note_vm_retransmit(pac, f);
        }
        d->kind = PAC_K_ACK;
    }
}

void
pac_tx_unparsed(struct pac *pac, const struct pac_segment *seg,
                pac_emit_cb *emit, void *aux)
{
    if (seg->ip_version && seg->sport && seg->dport) {
        struct seg_key key = seg_key(seg, false);
        uint32_t idx = pac_flow_lookup(pac, key.vm_addr, key.vm_port,
                                       key.peer_addr, key.peer_port,
                                       seg_flow_hash(pac, seg, &key));

        if (idx != PAC_NONE && pac->flows[idx].n_held) {
            pac_release_flow(pac, idx, PAC_REL_FLUSH, emit, aux);
        }
    } else {
        pac_flush(pac, emit, aux);
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

    pac_set_now(pac, now_us);
    pac->stats.tx_packets++;

    flow_idx = flow_get(pac, seg, false, !(tf & PAC_TCP_RST), emit, aux);
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
        pac_window_note_wscale(pac, flow_idx, seg, true);
        d.kind = PAC_K_ACK;
        d.flags = PAC_H_SYN | PAC_H_NO_ACK;
        d.ack = f->last_ack;
        d.payload_len = 0;
    } else {
        if (tf & PAC_TCP_SYN) {
            pac_window_note_wscale(pac, flow_idx, seg, true);
            if (!(f->flags & PAC_F_RCV_BASE)) {
                /* A SYN-ACK to a SYN PAC has not taken: the peer's data
                 * starts at its ACK number. */
                f->rcv_nxt = seg->ack;
                f->flags |= PAC_F_RCV_BASE;
            }
        }
        classify_tx(pac, f, seg, &d);
        pac_window_clamp(pac, f, seg);
    }
    d.window = seg->window;
    d.bytes = seg->ip_len;
    f->last_seen = (uint32_t) now_us;
    if ((d.flags & PAC_H_SYN) || d.kind == PAC_K_HANDSHAKE) {
        pac_note_open(pac, f);
    }
    if (tf & PAC_TCP_FIN) {
        f->flags |= PAC_F_FIN_VM;
    }
    if (pac->cfg.policy == PAC_POLICY_RWND) {
        /* The receiver-window policy holds nothing: the window clamp above
         * is all it does.  The edge let out is noted, so that no later
         * window shrinks it. */
        pac_window_note_edge(pac, f, &d);
        goto pass;
    }
    /* The newest ACK number the receiver sent is its newest held one (the
     * flow holds segments, and ACK numbers do not go back).  A pure ACK
     * that repeats it with another window is a window update (the
     * receiver's application read), not the repeat of a retransmission:
     * not stale (RFC 5681's duplicate ACK keeps the window). */
    if (f->n_held && d.kind == PAC_K_ACK && (d.flags & PAC_H_PURE)
        && !is_window_update(&pac->held[f->held_tail], &d)
        && !pac_seq_gt(d.ack, pac->held[f->held_tail].ack)) {
        handle_stale(pac, flow_idx, emit, aux);
    }

    top = pac_queue_top_level(pac);
    if (!f->n_held) {
        uint32_t trigger = pac_trigger_bytes(pac, f, &d);

        /* A duplicate ACK is never held back behind other flows: the peer
         * needs it for fast retransmit. */
        bool fits = ((top < 0 || top > f->level)
                     && pac_head_fits(pac, f, &d, trigger));

        if (!fits && pac_handshake_pass_uncharged(pac, f, &d)) {
            trigger = pac_trigger_bytes(pac, f, &d);
            fits = true;
        }
        if (fits || pac_is_dup_ack(f, &d)) {
            pac_account_send(pac, f, &d, trigger);
            if (d.kind == PAC_K_ACK) {
                pac_note_ack_delay(pac, 0);
            }
            pac->stats.tx_passed++;
            return PAC_PASS;
        }
    }

    if (pac->n_held >= pac->cfg.max_held) {
        pac_release_oldest(pac, PAC_REL_CAP, emit, aux);
    }
    while (pac->n_held
           && pac->held_bytes + d.bytes > pac->cfg.max_held_bytes) {
        pac_release_oldest(pac, PAC_REL_CAP, emit, aux);
        pac->stats.released_bytes_cap++;
    }
    if (f->n_held == UINT16_MAX) {
        pac_release_head(pac, flow_idx, PAC_REL_CAP, emit, aux);
    }
    h = pac_queue_push(pac, flow_idx, pkt, &d);
    pac_update_busy(pac, flow_idx);
    if (pac->n_held > pac->stats.max_held_seen) {
        pac->stats.max_held_seen = pac->n_held;
    }

    /* What fits now may include 'pkt' itself (its turn came at once): it is
     * then passed, not emitted, so that the caller never sees a packet it
     * was told PAC holds go out. */
    pac->tx_held = h;
    pac->tx_pkt_released = false;
    pac_schedule(pac, emit, aux);
    pac->tx_held = PAC_NONE;
    if (pac->tx_pkt_released) {
        pac->stats.released[PAC_REL_FIT]--;
        pac->stats.tx_passed++;
        return PAC_PASS;
    }
    pac->stats.tx_held++;
    return PAC_HELD;

pass:
    /* pac_set_now() may have changed what fits (a new control interval). */
    pac_schedule(pac, emit, aux);
    pac->stats.tx_passed++;
    return PAC_PASS;
}

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
    pac_schedule(pac, emit, aux);
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

void
pac_run(struct pac *pac, uint64_t now_us, pac_emit_cb *emit, void *aux)
{
    pac_set_now(pac, now_us);
    pac_release_expired(pac, PAC_CLASS_ACK, emit, aux);
    if (pac->now >= pac->next_scan) {
        scan_flows(pac, emit, aux);
    }
    pac_schedule(pac, emit, aux);
    pac_watch_run(pac);
}

void
pac_set_copy_cb(struct pac *pac, pac_copy_cb *copy)
{
    pac->copy_cb = copy;
}

uint64_t
pac_next_wakeup(const struct pac *pac)
{
    uint64_t next = MIN(pac_hold_deadline(pac), pac_copy_deadline(pac));

    if (pac->in_flight || pac->n_held) {
        next = MIN(next, pac->iv_start + pac_control_interval(pac));
    }
    if (pac->n_flows) {
        next = MIN(next, pac->next_scan);
    }
    if (pac->out_head != PAC_NONE) {
        uint32_t silent = pac_elapsed32(pac->now,
                                        pac->flows[pac->out_head].last_data);
        uint32_t limit = pac_dry_time(pac);

        next = MIN(next, pac->now + (silent < limit ? limit - silent : 0));
    }
    next = MIN(next, pac_watch_wakeup(pac));
    /* The control interval may have shrunk since it started. */
    return MAX(next, pac->now);
}

void
pac_get_stats(const struct pac *pac, struct pac_stats *stats)
{
    *stats = pac->stats;
    stats->in_flight = pac->in_flight;
    stats->threshold = pac->threshold;
    stats->control_interval_us = pac_control_interval(pac);
    stats->avg_rtt_us = pac->avg_base_rtt_us + pac->avg_hold_us;
    stats->late_us = pac->late_us;
    stats->flows = pac->n_flows;
    stats->held = pac->n_held;
    stats->held_bytes = pac->held_bytes;
    stats->tracking = pac_tracking(pac);
    stats->copy_delay_us = pac_copy_delay(pac);
    stats->handshake_flood = pac_handshake_flood(pac);
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
        info.cwnd = pac_peer_cwnd(pac, f);
        info.rtt_us = f->rtt_us;
        info.idle_us = pac_elapsed32(pac->now, f->last_seen);
        cb(aux, &info);
        n++;
    }
    return n;
}
