/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Triggers: what a segment leaving the receiver lets its peer send.
 *
 * Each segment the receiver sends has a trigger, the payload its arrival at
 * the peer lets loose, computed when it leaves (pac_trigger_bytes(), from
 * the flow's last *released* ACK, so that a held stretch of ACKs never
 * counts twice):
 *   - an ACK: eq. (3), the newly acknowledged bytes plus the growth of the
 *     peer's window (cwnd_increment()); a duplicate ACK, one MSS;
 *   - a window trigger, a request to an idle peer or a SYN-ACK: the peer's
 *     whole window, which it sends unclocked (window_estimate()); this is
 *     what makes incast collapse on IW10 stacks, and ACKs alone cannot show;
 *   - data that is not a request, or the receiver's SYN: the bare frame it
 *     elicits (pac_ack_frame_bytes()).
 * Triggers other than requests are capped by what is left of an answer of
 * the expected size, the larger of the connection's last two
 * (pac_response_room()), and every trigger by the right edge of the
 * window the peer will have (pac_window_room()).  pac_fits() says whether
 * a trigger fits under the threshold, counting frames, not payload;
 * pac_flow_fits() whether a flow's does, under the threshold less the new
 * connections' reserve unless the flow is new (pac_flow_is_new()). */

#include "pac-private.h"

/* The peer's congestion window as PAC models it, in bytes: the initial
 * window until the flow's ACKs say more (see cwnd_increment()), within
 * 'cap', the window the receiver allows. */
static uint32_t
peer_cwnd_within(const struct pac *pac, const struct pac_flow *f,
                 uint32_t cap)
{
    uint32_t cwnd = f->cwnd ? f->cwnd : pac_init_window(pac, f->mss);

    return MIN(cwnd, cap);
}

/* The same within the receiver's window as clamped.  RDTCP's sender takes
 * the receiver's window as its congestion window, so that policy counts
 * the share, where the window is clamped. */
uint32_t
pac_peer_cwnd(const struct pac *pac, const struct pac_flow *f)
{
    uint32_t cap = pac_window_cap(pac, f);

    if (pac->cfg.policy == PAC_POLICY_RDTCP && cap < PAC_MAX_CWND) {
        return cap;
    }
    return peer_cwnd_within(pac, f, cap);
}

/* The size of the answer that ends where a request acknowledging 'ack'
 * starts the next one, or 0 if unknown. */
uint32_t
pac_answer_size(const struct pac_flow *f, uint32_t ack)
{
    return ((f->flags & PAC_F_IN_RESP) && pac_seq_gt(ack, f->resp_start)
            ? ack - f->resp_start : 0);
}

/* The size PAC expects of the answer that flow 'f' is in: the larger of
 * the two before it, or 0 if unknown.  A connection may alternate small
 * and large answers (the incast client reads each sender's counters
 * between two rounds), and a large answer counted as small fills the
 * switch buffer unseen, while a small one counted as large gives its
 * budget back at its short last segment (pac_is_short_segment()). */
static uint32_t
expected_answer(const struct pac *pac, const struct pac_flow *f)
{
    return MAX(f->last_resp, pac_flow_wnd(pac, f)->prev_resp);
}

/* The size of the answer to a window trigger acknowledging 'ack' on flow
 * 'f', as far as the connection's answers tell it: the larger of its last
 * two (see expected_answer(); the trigger has not yet made the one that
 * ends at 'ack' last_resp), or 0 if they tell nothing.  A connection's
 * first answer alone tells nothing: it is often a greeting (a client that
 * reads a peer's counters before its first real request). */
static uint32_t
answer_estimate(const struct pac *pac, const struct pac_flow *f,
                uint32_t ack)
{
    uint32_t answer = pac_answer_size(f, ack);

    if (answer && !f->last_resp) {
        return 0;
    }
    return answer ? MAX(answer, f->last_resp) : expected_answer(pac, f);
}

/* The window an idle peer of flow 'f' sends at once when window trigger
 * 'd' reaches it. */
static uint32_t
trigger_window(const struct pac *pac, const struct pac_flow *f,
               const struct pac_held *d)
{
    /* A SYN-ACK's window field is unscaled (at most 64 KB) and never
     * clamped. */
    return (d->kind == PAC_K_HANDSHAKE
            ? peer_cwnd_within(pac, f, UINT16_MAX)
            : pac_peer_cwnd(pac, f));
}

/* The data an idle peer is expected to send when asked by a window trigger
 * 'd': its window (trigger_window()), but no more than its answer is
 * expected to be (answer_estimate()).  Where the answers tell nothing the
 * window is not capped: a whole window counted as a greeting's few bytes
 * would come unbudgeted. */
static uint32_t
window_estimate(const struct pac *pac, const struct pac_flow *f,
                const struct pac_held *d)
{
    uint32_t w = trigger_window(pac, f, d);
    uint32_t answer = answer_estimate(pac, f, d->ack);

    return answer ? MIN(w, answer) : w;
}

/* The data that window trigger 'd' of flow 'f' is expected to bring in
 * all, however many round trips it takes: its answer's expected size
 * (answer_estimate()), else what the peer sends at once, its window. */
uint32_t
pac_expected_answer(const struct pac *pac, const struct pac_flow *f,
                    const struct pac_held *d)
{
    uint32_t answer = answer_estimate(pac, f, d->ack);

    return answer ? answer : trigger_window(pac, f, d);
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

    if (!delta || (d->flags & PAC_H_ECE)
        || pac->cfg.policy == PAC_POLICY_RDTCP) {
        /* RDTCP counts an ACK's increment of the ACK number alone: its
         * window slides, it does not grow. */
        return 0;
    } else if (f->flags & PAC_F_SLOW_START) {
        inc = MAX(delta, f->mss);
    } else {
        inc = (uint32_t) ((uint64_t) f->mss * f->mss
                          / MAX(pac_peer_cwnd(pac, f), f->mss));
    }
    /* The window model is an upper bound, so reaching the clamp says
     * nothing of the peer's own window.  A peer seen to fill the receiver's
     * window (PAC_W_LIMITED) sends up to the right edge that 'd' offers:
     * the growth is what lies beyond the bytes already allowed, 'delta'
     * included.  The edge moves by more than 'delta' when the receiver's
     * application has read and its window opened; counting 'delta' alone
     * would leave the data beyond it unbudgeted. */
    if (pac_flow_wnd(pac, f)->bits & PAC_W_LIMITED) {
        uint32_t edge = d->ack + ((uint32_t) d->window
                                  << pac_window_scale(pac, f));
        uint32_t allowed = pac_allowed_end(f) + delta;

        inc = pac_seq_gt(edge, allowed) ? MIN(inc, edge - allowed) : 0;
    }
    return inc;
}

/* Whether a segment of 'len' payload bytes that the peer sent is short: a
 * TCP sender sends less than a full segment only when that is all it has
 * queued (Nagle, autocorking, TSO splitting all keep the rest full-sized),
 * so the peer has sent all its application gave it.  A full segment is the
 * MSS less up to PAC_MAX_TCP_OPTIONS bytes of options.  Where PAC saw both
 * MSS options, the flow's MSS is that of the peer's segments.  Where it did
 * not (a connection picked up mid-stream: opened before PAC tracked it, on
 * the fast path, or forgotten), the MSS is not known, but once the peer
 * has sent a segment as large as a full one of the assumed MSS (rx_max_len,
 * the largest of its segments no larger than that MSS: a receive offload
 * may merge segments), its MSS is that large at least, and with the fast
 * path, where such connections are common, a segment that many bytes
 * shorter than the largest is short.  Before that, none is: a
 * peer with a smaller MSS (a tunnel's) would otherwise have every full
 * segment taken for the end of its answer.  Except a segment shorter than
 * the least MSS a peer has without an option (RFC 9293: 536 bytes) less
 * options, with the fast path or from a peer whose SYN PAC saw without
 * one: a peer that sends those one after another, faster than a dry time,
 * would otherwise keep its whole window in in_flight for ever with a few
 * bytes a second (a drip without MSS options). */
bool
pac_is_short_segment(const struct pac *pac, const struct pac_flow *f,
                     uint32_t len)
{
    if (f->mss_from != (PAC_MSS_VM | PAC_MSS_PEER)) {
        uint32_t max = pac_flow_wnd(pac, f)->rx_max_len;
        bool peer_has_none = ((pac_flow_wnd(pac, f)->bits & PAC_W_PEER_SYN)
                              && !(f->mss_from & PAC_MSS_PEER));

        if (len + PAC_MAX_TCP_OPTIONS < PAC_DEFAULT_PEER_MSS
            && (peer_has_none || pac->cfg.fast_path)) {
            return true;
        }

        if (!pac->cfg.fast_path) {
            /* Without the fast path, a connection without both options is
             * rare (opened before PAC was enabled, or forgotten), and no
             * verdict is the answer's safe side there. */
            return false;
        }

        return (max + PAC_MAX_TCP_OPTIONS >= f->mss
                && len + PAC_MAX_TCP_OPTIONS < max);
    }
    return len + PAC_MAX_TCP_OPTIONS < f->mss;
}

uint32_t
pac_ack_delta(const struct pac_flow *f, uint32_t ack)
{
    return ((f->flags & PAC_F_ACK_BASE) && pac_seq_gt(ack, f->last_ack)
            ? ack - f->last_ack : 0);
}

bool
pac_is_dup_ack(const struct pac_flow *f, const struct pac_held *d)
{
    return (d->kind == PAC_K_ACK && (d->flags & PAC_H_PURE)
            && !pac_ack_delta(f, d->ack));
}

/* A window trigger whose window is already accounted: the flow's previous
 * window trigger has not produced any data yet (for example a request
 * right after the SYN-ACK of a connection the peer opened, or a pipelined
 * request), and no silence reset has forgotten it since.  The flow's
 * 8-bit copy of the reset epoch alone repeats after 256 resets, so the
 * window must also have gone out after the last reset: while a window is
 * pending, the flow's iv_start is when it went out (pac_account_send(); no
 * data has come to move it). */
bool
pac_window_pending(const struct pac *pac, const struct pac_flow *f)
{
    return ((f->flags & PAC_F_MEASURING) && !f->burst_bytes
            && f->window_epoch == pac->epoch
            && (pac_elapsed32(pac->now, f->iv_start)
                <= pac->now - pac->last_reset));
}

/* Whether ACK number 'ack' acknowledges nothing the peer sent since the
 * last request of flow 'f' went out. */
bool
pac_acks_no_new_answer(const struct pac_flow *f, uint32_t ack)
{
    return (f->flags & PAC_F_IN_RESP) && !pac_seq_gt(ack, f->resp_start);
}

/* A request that acknowledges nothing the peer sent since the previous
 * request: the receiver's retransmission of a request PAC still held (it
 * waited past the receiver's RTO), or a pipelined one.  The previous
 * request's window covers it. */
bool
pac_repeated_request(const struct pac_flow *f, const struct pac_held *d)
{
    return d->kind == PAC_K_REQUEST && pac_acks_no_new_answer(f, d->ack);
}

/* Data that is not a request (a repeated request, data to a busy peer), and
 * the receiver's SYN, make the peer answer with at least a bare segment (an
 * ACK, a SYN-ACK): no payload, but a frame in the switch buffer.  Counted
 * as the payload that takes as much buffer, and kept apart from any flow's
 * budget (see pac_credit_rx()).  Without this, a thousand repeated
 * requests let out together come back as a thousand ACKs at once; a
 * SYN-ACK, with its options, is counted as the larger frame it is (the
 * connection storm of a large incast is all SYN-ACKs). */
uint32_t
pac_ack_frame_bytes(const struct pac_flow *f, const struct pac_held *d)
{
    if (d->kind == PAC_K_ACK && (d->flags & PAC_H_SYN)) {
        return PAC_SYNACK_FRAME;
    }
    return ((d->kind == PAC_K_ACK && d->payload_len)
            || pac_repeated_request(f, d) ? PAC_ACK_FRAME : 0);
}

/* Whether the peer of flow 'f' has sent less of its current answer than
 * PAC expects of it (expected_answer()).  PAC budgets answers of that size
 * (pac_response_room()), so a silence or a short segment before it is more
 * likely a delay (its ACKs or its data waited for a queue or a CPU) or the
 * edge of the receiver's window than the end of the answer. */
bool
pac_answer_unfinished(const struct pac *pac, const struct pac_flow *f)
{
    uint32_t expected = expected_answer(pac, f);

    return ((f->flags & PAC_F_IN_RESP) && expected
            && pac_seq_lt(f->rcv_nxt, f->resp_start + expected));
}

/* Returns how much more the peer can send of its current answer if that is
 * as large as PAC expects (expected_answer()), or UINT32_MAX if that is
 * unknown or the answer has outgrown it.  The budget is what released
 * triggers allowed. */
uint32_t
pac_response_room(const struct pac *pac, const struct pac_flow *f)
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
    base = pac_allowed_end(f);
    return pac_seq_gt(end, base) ? end - base : 0;
}

/* An answer of 'bytes' ends in a segment shorter than a full one, which
 * takes a whole frame's overhead in the switch buffer, while pac_fits() counts
 * overhead in proportion to payload.  Returns the payload that makes up the
 * difference.  A thousand 1 KB answers in one round are 2 % larger on the
 * wire than pac_fits() would otherwise think.  (The flow's budget then exceeds
 * its answer by these bytes; the short segment reclaims them, see
 * pac_is_short_segment().) */
static uint32_t
tail_frame_bytes(const struct pac *pac, uint32_t bytes)
{
    uint32_t mss = pac->cfg.default_mss;
    uint32_t tail = bytes % mss;

    return (tail
            ? PAC_WIRE_OVERHEAD * (mss - tail) / (mss + PAC_WIRE_OVERHEAD)
            : 0);
}

/* The bytes that ACK number 'ack' of flow 'f' newly acknowledges, of those
 * PAC saw arrive: every segment toward the receiver passes PAC first, so
 * an ACK beyond rcv_nxt, or any ACK of a flow that has received nothing,
 * acknowledges data the peer never sent, which a peer's TCP ignores; it
 * frees no window there.  (A receiver can make its ACKs jump by up to 2^30
 * each, on as many connections as it likes.) */
uint32_t
pac_received_delta(const struct pac_flow *f, uint32_t ack)
{
    uint32_t delta = pac_ack_delta(f, ack);

    if (delta) {
        uint32_t received = ((f->flags & PAC_F_RCV_BASE)
                             && pac_seq_gt(f->rcv_nxt, f->last_ack)
                             ? f->rcv_nxt - f->last_ack : 0);

        delta = MIN(delta, MIN(received, PAC_MAX_WINDOW));
    }
    return delta;
}

/* Eq. (3) and the window triggers, without the answer-size cap, at most
 * PAC_MAX_WINDOW. */
static uint32_t
tcp_trigger_bytes(const struct pac *pac, const struct pac_flow *f,
                  const struct pac_held *d)
{
    uint32_t delta = pac_received_delta(f, d->ack);
    uint64_t trigger;

    if (d->kind != PAC_K_ACK) {
        uint32_t window = (pac_window_pending(pac, f)
                           || pac_repeated_request(f, d)
                           ? 0 : window_estimate(pac, f, d));

        trigger = ((uint64_t) delta + window
                   + tail_frame_bytes(pac, window));
    } else if (f->flags & PAC_F_DRY) {
        trigger = 0;
    } else if (!delta) {
        trigger = d->flags & PAC_H_PURE ? f->mss : 0;
    } else {
        trigger = (uint64_t) delta + cwnd_increment(pac, f, d, delta);
    }
    return MIN(trigger, PAC_MAX_WINDOW);
}

/* Returns the trigger of segment 'd' of flow 'f' if it were sent now: what
 * TCP lets the peer send (see the top of this file), but no more than what
 * is left of an answer of the expected size, nor than its window lets it
 * send.  Without the first cap, the ACKs that follow the end of an answer
 * would count as triggers of data that never comes; without the second,
 * a request's trigger counted its ACK's bytes on top of a whole window,
 * and slow-start growth ran past the window's edge. */
uint32_t
pac_trigger_bytes(const struct pac *pac, const struct pac_flow *f,
                  const struct pac_held *d)
{
    uint32_t trigger;

    if (d->kind != PAC_K_ACK
        && (pac_flow_wnd(pac, f)->bits & PAC_W_HS_UNCHARGED)) {
        /* Sent uncharged in a flood of handshakes (pac-handshake.c). */
        return pac_ack_frame_bytes(f, d);
    }
    trigger = tcp_trigger_bytes(pac, f, d);
    if (d->kind != PAC_K_REQUEST) {
        trigger = MIN(trigger, pac_response_room(pac, f));
    }
    trigger = MIN(trigger, pac_window_room(pac, f, d));
    return trigger + pac_ack_frame_bytes(f, d);
}

/* Whether 'trigger' more bytes fit under 'limit' bytes in flight.
 * in_flight and triggers count TCP payload, but a switch buffer holds whole
 * frames: each full segment of default_mss bytes takes PAC_WIRE_OVERHEAD
 * bytes more. */
static bool
fits_under(const struct pac *pac, uint32_t trigger, uint64_t limit)
{
    uint64_t payload = pac->in_flight + trigger;
    uint64_t mss = pac->cfg.default_mss;

    /* floor(payload * (mss + overhead) / mss) <= limit, without the
     * division (tens of cycles, on most scheduler passes). */
    return (!pac->in_flight
            || payload * (mss + PAC_WIRE_OVERHEAD) < (limit + 1) * mss);
}

/* Whether 'trigger' more bytes fit under the threshold. */
bool
pac_fits(const struct pac *pac, uint32_t trigger)
{
    return fits_under(pac, trigger, pac->threshold);
}

/* Whether flow 'f' is a new connection: one the receiver opened or
 * accepted on its own (PAC_W_LONE) that has received fewer bytes than the
 * new connections' reserve (cfg.new_flow_reserve), so its segments may
 * fill the reserve.  The connections of a burst of openings are an
 * incast's, not short flows beside one: in an incast's first round every
 * connection has received little, and an RPC's request would wait behind
 * all of them, for a whole round (300 ms in one of four runs of
 * tests/system/test_noharm.py's RPCs). */
bool
pac_flow_is_new(const struct pac *pac, const struct pac_flow *f)
{
    return (f->rx_bytes < pac->cfg.new_flow_reserve
            && (pac_flow_wnd(pac, f)->bits & PAC_W_LONE));
}

/* How long a new connection's wait, once noted, keeps older flows out of
 * the room it waits for without a scheduler pass finding it again
 * (passes run on every packet while it waits). */
#define PAC_NEW_WAIT_FRESH_US 1000

/* Notes that a new connection's window trigger of 'trigger' payload bytes
 * does not fit now. */
void
pac_note_new_wait(struct pac *pac, uint32_t trigger)
{
    uint64_t mss = pac->cfg.default_mss;

    pac->new_wait_bytes = MIN(trigger * (mss + PAC_WIRE_OVERHEAD) / mss,
                              UINT32_MAX);
    pac->new_wait_seen = pac->now;
}

/* How long after the receiver last opened or accepted a connection on its
 * own (pac_note_open()) older flows keep leaving room to new ones.
 * Without new connections the reserve would only lower the threshold of
 * every other flow: with 64 persistent connections answering overlapping
 * requests at 100 Mbit/s, 2-6 sender RTOs in 5 of 6 runs against 0-2
 * without it, their ACKs and requests waiting for room nobody took.  A
 * second covers an application that opens a connection per request at a
 * few a second.  Only handshakes count: a long-lived connection that
 * carries little (a monitor's queries, 50 ms apart) stays new by its bytes
 * for ever, and would keep the reserve up with nobody using it. */
#define PAC_NEW_FLOW_RECENT_US 1000000

/* Openings of connections within this window, more than PAC_LONE_MAX of
 * them, are a burst: an incast's connections (or a pool's), opened
 * together. */
#define PAC_LONE_WINDOW_US 10000

/* Notes that the receiver opened or accepted connection 'f' (its SYN or
 * SYN-ACK).  The first PAC_LONE_MAX openings within PAC_LONE_WINDOW_US are
 * connections opened on their own (PAC_W_LONE), and raise the reserve;
 * the next one shows a burst, and takes both back from them. */
void
pac_note_open(struct pac *pac, struct pac_flow *f)
{
    uint32_t idx = f - pac->flows;

    if (pac->now - pac->open_burst_start >= PAC_LONE_WINDOW_US) {
        pac->open_burst_start = pac->now;
        pac->open_burst_n = 0;
        pac->open_burst_prev_seen = pac->new_flow_seen;
    }
    if (pac->open_burst_n < PAC_LONE_MAX) {
        pac->open_lone[pac->open_burst_n] = idx;
        pac_flow_wnd(pac, f)->bits |= PAC_W_LONE;
        pac->new_flow_seen = MAX(pac->now, 1);    /* 0: never. */
    } else if (pac->open_burst_n == PAC_LONE_MAX) {
        /* (A flow of the list may have been removed since and its entry
         * reused: it only loses the mark.) */
        for (int i = 0; i < PAC_LONE_MAX; i++) {
            pac->flow_wnd[pac->open_lone[i]].bits &= ~PAC_W_LONE;
            pac_rr_mark(pac, pac->open_lone[i]);     /* Its PAC_RR_NEW. */
        }
        pac->new_flow_seen = pac->open_burst_prev_seen;
    }
    if (pac->open_burst_n <= PAC_LONE_MAX) {
        pac->open_burst_n++;
    }
}

/* The part of the threshold that older flows leave to new connections,
 * while the receiver has had new ones lately: the reserve (at most a
 * quarter of the threshold, which the loss cap may lower), or, while a new
 * connection's window trigger waits for more, the room it waits for, up to
 * half the threshold. */
static uint32_t
new_flow_room(const struct pac *pac)
{
    uint32_t room = MIN(pac->cfg.new_flow_reserve, pac->threshold / 4);

    if (!pac->new_flow_seen
        || (pac->now > pac->new_flow_seen
            && pac->now - pac->new_flow_seen >= PAC_NEW_FLOW_RECENT_US)) {
        return 0;
    }
    if (pac->new_wait_bytes && room
        && pac->now - pac->new_wait_seen < PAC_NEW_WAIT_FRESH_US) {
        room = MAX(room, MIN(pac->new_wait_bytes, pac->threshold / 2));
    }
    return room;
}

/* Whether 'trigger' more bytes of flow 'f' fit: under the threshold if the
 * flow is new, else under the threshold less what older flows leave to new
 * ones (new_flow_room()). */
bool
pac_flow_fits(const struct pac *pac, const struct pac_flow *f,
              uint32_t trigger)
{
    uint32_t room = new_flow_room(pac);

    if (room && pac_flow_is_new(pac, f)) {
        room = 0;
    }

    return fits_under(pac, trigger, pac->threshold - room);
}

/* Whether segment 'd' of flow 'f', 'trigger' bytes, may go now: it fits
 * (pac_flow_fits()), and a window trigger of a connection the receiver
 * accepted whose peer has sent nothing yet has room in their pool
 * (pac-handshake.c). */
bool
pac_head_fits(const struct pac *pac, const struct pac_flow *f,
              const struct pac_held *d, uint32_t trigger)
{
    return pac_flow_fits(pac, f, trigger) && pac_handshake_room(pac, f, d);
}
