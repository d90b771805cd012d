/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Algorithm 1's release loop (paper, lines 9-14): which held packet goes
 * next.
 *
 * pac_schedule() serves the MLFQ one packet at a time: from the highest
 * level that has an eligible head, the first eligible flow from the level's
 * round-robin cursor; its head goes if its trigger fits under the
 * threshold, and the cursor moves to the next flow (per-packet round
 * robin).  A head that does not fit stops the loop, strict as in the paper,
 * with two exceptions for packets whose data in_flight already counts:
 * heads that trigger nothing go (release_free()), and ACKs that only
 * finish an answer of known size may pass a window trigger that waits;
 * and a third for window triggers of connections the receiver accepted
 * whose peer has sent nothing yet (SERVE_PASSED_OVER): while their pool
 * is full, or for max_hold, the heads behind them are looked at as if
 * they were not there (pac-handshake.c).  The last part of the threshold,
 * the new connections' reserve, is theirs while the receiver opens
 * connections on its own (pac_flow_fits()): a head of an older flow that
 * only that part would hold waits, and new connections' heads that fit
 * may go before it, so a short flow that starts during an incast does not
 * wait for the incast.
 * Eligibility has one definition: a head's keys (pac_head_keys()) matched
 * against the instance's totals (eligible_query()).  Heads past their hold
 * bound go out of turn (pac_release_expired()), and at the held-packet cap
 * the head that has waited longest goes (pac_release_oldest()).  Held data
 * of the receiver that waits request_copy_us, or that PAC expects to wait
 * that long, also goes out as a copy (pac_copy_requests()), so that the
 * receiver's own timer does not run out. */

#include "pac-private.h"

/* The least window, in segments, that PAC wants each busy peer to have:
 * it admits at most threshold / (PAC_MIN_FLOW_WINDOW * MSS) busy peers. */
#define PAC_MIN_FLOW_WINDOW 4

/* The least wait after which a receiver's retransmissions bring the copy
 * delay (pac_copy_delay()): a copy takes a round trip to the peer. */
#define PAC_MIN_COPY_DELAY_US 200

/* Visits, in all, to flows for heads that trigger nothing while the
 * scheduler waits: one per packet a level holds (see release_free()). */
#define PAC_FREE_LOOKAHEAD 256

/* A safety bound on the flows the scheduler visits per level to find an
 * eligible one; normally it looks at a ring once at most. */
#define PAC_RR_LOOKAHEAD 100000u

/* Releases the head packet of flow 'flow_idx'. */
void
pac_release_head(struct pac *pac, uint32_t flow_idx,
                 enum pac_release_cause cause, pac_emit_cb *emit, void *aux)
{
    struct pac_flow *f = &pac->flows[flow_idx];
    uint32_t h = f->held_head;
    struct pac_held d = pac->held[h];
    uint32_t trigger = pac_trigger_bytes(pac, f, &d);

    pac_queue_pop_head(pac, flow_idx);
    pac_update_busy(pac, flow_idx);
    pac_account_send(pac, f, &d, trigger);
    if (pac_held_class(&d) == PAC_CLASS_ACK) {
        pac_note_ack_delay(pac, pac_elapsed32(pac->now, d.enq_time));
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
    pac_drop_stale_heads(pac, flow_idx, emit, aux);
}

/* Whether held packet 'p' of a flow whose last stale-ACK detection left
 * 'w' is a pure ACK that a newer one held then supersedes.  ACK numbers
 * half the sequence space apart are not ordered, and are left alone. */
static bool
is_superseded(const struct pac_flow_wnd *w, const struct pac_held *p)
{
    return (p->kind == PAC_K_ACK && (p->flags & PAC_H_PURE)
            && pac_seq_lt(p->ack, w->stale_below)
            && w->stale_below - p->ack < PAC_MAX_WINDOW);
}

/* After a stale-ACK detection (pac.c, handle_stale()): drops the pure
 * ACKs at the head of flow 'flow_idx' that a newer held one supersedes.
 * Called whenever the flow's head leaves, so each superseded ACK is
 * dropped as it reaches the head, without a walk of the flow's packets;
 * it triggers nothing then, and never counts as released.  The packet
 * that pac_tx() is holding stays: it is the caller's until pac_tx()
 * returns. */
void
pac_drop_stale_heads(struct pac *pac, uint32_t flow_idx, pac_emit_cb *emit,
                     void *aux)
{
    struct pac_flow_wnd *w = &pac->flow_wnd[flow_idx];
    struct pac_flow *f = &pac->flows[flow_idx];

    while ((w->bits & PAC_W_STALE) && f->n_held
           && f->held_head != pac->tx_held
           && is_superseded(w, &pac->held[f->held_head])) {
        void *pkt = pac->held[f->held_head].pkt;

        pac_queue_pop_head(pac, flow_idx);
        pac_update_busy(pac, flow_idx);
        pac->stats.stale_drops++;
        emit(aux, pkt, PAC_EMIT_DROP_STALE);
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
        pac_release_head(pac, flow_idx, cause, emit, aux);
    } while (head != h);
}

/* Releases every packet flow 'flow_idx' holds, in order. */
void
pac_release_flow(struct pac *pac, uint32_t flow_idx,
                 enum pac_release_cause cause, pac_emit_cb *emit, void *aux)
{
    while (pac->flows[flow_idx].n_held) {
        pac_release_head(pac, flow_idx, cause, emit, aux);
    }
}

/* Makes room for one more held packet: releases the flow head that has
 * waited longest, an ACK rather than a window trigger when there is one
 * (an ACK lets out a segment or two, a window trigger a whole window). */
void
pac_release_oldest(struct pac *pac, enum pac_release_cause cause,
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

/* Eligibility.
 *
 * An ACK is worth sending only when its peer is about to run out of what
 * it may send: while a flow's outstanding bytes exceed its fair share of
 * the threshold, threshold / flows with outstanding bytes (and two
 * segments), its peer still has data to send, and its ACKs wait so that
 * flows closer to stalling go first.  Otherwise per-packet round robin
 * serves the ACKs of a peer that has already sent its whole answer (they
 * count as triggers) ahead of ACKs that clock running senders, and the
 * held backlog grows until max_hold forces it out in one burst.  ACKs
 * that trigger nothing (the answer is complete, or the flow is dry) and
 * ACKs capped by an answer of known size are always eligible: they cannot
 * count for more than that answer.
 *
 * A window trigger is eligible if its flow is busy, or while fewer than
 * threshold / (PAC_MIN_FLOW_WINDOW * its MSS) flows are busy (admission):
 * every started peer needs ACKs to finish, and starting more than the
 * threshold can clock starves them all until max_hold forces their ACKs
 * out together.
 *
 * So a head is eligible by its flow's own state and three totals,
 * threshold, n_outstanding and n_busy.  pac_head_keys() reduces the former
 * to keys, and eligible_query() turns the totals into the match: always
 * (PAC_RR_ELIGIBLE); an ACK whose outstanding bytes ('out') are below
 * threshold / n_outstanding; a window trigger of a flow that is not busy
 * (PAC_RR_WINDOW) whose MSS ('mss') is at most threshold /
 * (PAC_MIN_FLOW_WINDOW * (n_busy + 1)). */

/* Computes the keys of flow 'idx', which holds packets (the ring index's
 * pac_rr_keys_fn). */
void
pac_head_keys(const struct pac *pac, uint32_t idx, struct pac_rr_keys *k)
{
    const struct pac_flow *f = &pac->flows[idx];
    const struct pac_held *h = &pac->held[f->held_head];
    uint32_t trigger = pac_trigger_bytes(pac, f, h);

    k->bits = trigger ? 0 : PAC_RR_FREE;
    if (pac_flow_is_new(pac, f)) {
        k->bits |= PAC_RR_NEW;
    }
    if (h->flags & PAC_H_SYN) {
        k->bits |= PAC_RR_SYN;
    }
    k->out = UINT32_MAX;
    k->mss = UINT32_MAX;
    if (pac->cfg.policy == PAC_POLICY_RDTCP) {
        /* RDTCP's queue serves every flow in its turn: no fair share, no
         * admission. */
        k->bits |= PAC_RR_ELIGIBLE;
    } else if (h->kind == PAC_K_ACK) {
        if (pac_response_room(pac, f) != UINT32_MAX) {
            k->bits |= PAC_RR_CAPPED | PAC_RR_ELIGIBLE;
        } else if (!trigger) {
            k->bits |= PAC_RR_ELIGIBLE;
        } else {
            uint32_t outstanding = pac_flow_outstanding(f);

            if (outstanding < 2 * (uint64_t) f->mss) {
                k->bits |= PAC_RR_ELIGIBLE;
            } else {
                k->out = outstanding;
            }
        }
    } else if (f->flags & PAC_F_BUSY) {
        k->bits |= PAC_RR_ELIGIBLE;
    } else {
        k->bits |= PAC_RR_WINDOW;
        k->mss = f->mss;
    }
}

/* The match for the heads that are eligible now.  'out' and 'mss' keys of
 * UINT32_MAX never match: the threshold is at most cfg.threshold, a
 * uint32_t. */
static void
eligible_query(const struct pac *pac, struct pac_rr_query *q)
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

/* The match for the heads that have 'bits' (PAC_RR_*). */
static void
bits_query(struct pac_rr_query *q, uint8_t bits)
{
    q->bits = bits;
    q->out_below = 0;
    q->mss_upto = -1;
}

/* Releases flow 'idx's heads of 'level' for as long as they trigger
 * nothing. */
static void
release_free_heads(struct pac *pac, uint32_t idx, int level,
                   pac_emit_cb *emit, void *aux)
{
    struct pac_flow *f = &pac->flows[idx];

    while (f->n_held && f->level == level
           && !pac_trigger_bytes(pac, f, &pac->held[f->held_head])) {
        pac_release_head(pac, idx, PAC_REL_FIT, emit, aux);
    }
}

/* Releases, within a bounded look over the MLFQ rings, every flow head
 * that triggers nothing (for example an ACK within an answer whose whole
 * size is counted already), together with the free heads behind it.
 *
 * The look spends, level by level, one visit per packet the level holds,
 * and PAC_FREE_LOOKAHEAD visits in all, on the flows that follow each
 * cursor; visits beyond the ring's flows find nothing more (releasing one
 * flow's heads changes no other flow's triggers), so the look covers the
 * first flows of the ring once, and counts the rest of its visits as spent
 * unless it has emptied the ring. */
static void
release_free(struct pac *pac, pac_emit_cb *emit, void *aux)
{
    int budget = PAC_FREE_LOOKAHEAD;
    struct pac_rr_query q;

    bits_query(&q, PAC_RR_FREE);
    for (int level = 0; level < (int) pac->cfg.n_levels && budget > 0;
         level++) {
        uint32_t n = pac->n_held_level[level];
        uint32_t size = pac->rr_n_flows[level];
        uint32_t visits = MIN(n, (uint32_t) budget);
        uint32_t emptied = 0;
        struct pac_rr_iter it;
        uint32_t idx;

        if (!n) {
            continue;
        }
        pac_rr_iter_init(&it, pac, level, MIN(visits, size));
        while ((idx = pac_rr_iter_next(pac, &it, &q)) != PAC_NONE) {
            release_free_heads(pac, idx, level, emit, aux);
            emptied += !pac->flows[idx].n_held;
        }
        budget -= visits > size && emptied == size ? size : visits;
    }
}

/* Hold bounds. */

static uint32_t
class_bound(const struct pac *pac, enum pac_class c)
{
    return c == PAC_CLASS_ACK ? pac->cfg.max_hold_us
                              : pac->cfg.max_hold_trigger_us;
}

/* How long head 'h' of class 'c' has waited, as the class's bound counts
 * it.  An ACK's bound stands for its peer's retransmission timer, which
 * re-arms on every ACK of new data, so its time as its flow's head counts.
 * A window trigger's bound guards against a request that never gets its
 * turn, so only the time during which no window trigger left in its turn
 * counts: in a large incast the requests at the back of the queue wait
 * longer than the bound while the queue moves, and sending them ahead of
 * their turn would take the room that the answers under way need for
 * their ACKs. */
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

/* What schedule_one() does with eligible flow 'idx' of 'level'. */
enum serve_result {
    SERVE_RELEASED,             /* Released its head. */
    SERVE_BLOCKED,              /* Its head does not fit: stop. */
    SERVE_SKIPPED,              /* Look further, for capped ACKs and the
                                 * receiver's SYNs only. */
    SERVE_RESERVED,             /* Only the new connections' reserve would
                                 * hold its head: look further, for new
                                 * connections' heads only (and capped
                                 * ACKs and SYNs, if the head is a window
                                 * trigger). */
    SERVE_PASSED_OVER,          /* Its head is a window trigger of a
                                 * connection that has sent nothing yet:
                                 * look further, as before it. */
};

static enum serve_result
serve(struct pac *pac, int level, uint32_t idx, pac_emit_cb *emit, void *aux)
{
    struct pac_flow *f = &pac->flows[idx];
    const struct pac_held *h = &pac->held[f->held_head];
    uint32_t trigger = pac_trigger_bytes(pac, f, h);
    bool room = pac_handshake_room(pac, f, h);     /* The pool's, if quiet. */

    if ((room && pac_flow_fits(pac, f, trigger))
        || pac_handshake_pass_uncharged(pac, f, h)) {
        if (h->kind != PAC_K_ACK && pac_flow_is_new(pac, f)) {
            pac->new_wait_bytes = 0;
        }
        pac_release_head(pac, idx, PAC_REL_FIT, emit, aux);
        if (f->n_held) {
            pac->rr_cursor[level] = f->rr_next;
        }
        return SERVE_RELEASED;
    } else if (h->kind != PAC_K_ACK
               && (pac_flow_wnd(pac, f)->bits & PAC_W_HS_QUIET)
               && (!room
                   || pac_elapsed32(pac->now, h->head_since)
                      < pac->cfg.max_hold_us)) {
        /* A window for a peer that has shown nothing yet (a SYN-ACK, most
         * often, that a flood may have caused): the ACKs of connections
         * that are real do not wait behind it, while it waits for the
         * pool, or for max_hold at most (then it waits as any window
         * trigger, which nothing may pass for ever). */
        if (room && pac_flow_is_new(pac, f)) {
            pac_note_new_wait(pac, trigger);
        }
        return SERVE_PASSED_OVER;
    } else if (pac_fits(pac, trigger)) {
        return SERVE_RESERVED;
    } else if (h->kind != PAC_K_ACK && pac_flow_is_new(pac, f)) {
        /* Older flows leave it the room it waits for from now on. */
        pac_note_new_wait(pac, trigger);
    }
    if (h->kind == PAC_K_ACK
        || head_wait(pac, PAC_CLASS_TRIGGER, f->held_head)
           >= pac->cfg.max_hold_trigger_us) {
        release_free(pac, emit, aux);
        return SERVE_BLOCKED;
    }
    return SERVE_SKIPPED;
}

/* Serves one packet of the MLFQ: the head of the first eligible flow, from
 * the round-robin cursor of the highest level that has one, if it fits.
 * Returns true if it released one.
 *
 * If that head does not fit, nothing with a trigger goes (strict, as in the
 * paper: it waits for data), except that a window trigger that has not
 * waited max_hold_trigger_us yet lets go first the ACKs behind it in the
 * turn that only let a peer finish an answer of known size: their data is
 * counted in in_flight already and cannot come without them, so holding
 * them behind a window that does not fit would stall everything; so do
 * the receiver's SYNs, which bring a SYN-ACK's frame only.  New
 * connections' heads that fit go before a head that waits only for the
 * reserve that is theirs, whatever its kind: a handshake or a short
 * exchange does not wait for an incast's budget to drain.  (Not before a
 * window trigger that does not fit at all: in an incast's first round,
 * every connection is new, and admission must hold.) */
static bool
schedule_one(struct pac *pac, pac_emit_cb *emit, void *aux)
{
    struct pac_rr_query q;
    uint8_t passing = 0;        /* Bits of the heads that may pass the
                                 * ones that wait, once one waits. */
    bool free_pending = false;

    pac_rr_trim(pac);
    eligible_query(pac, &q);
    for (int level = 0; level < (int) pac->cfg.n_levels; level++) {
        uint32_t span = MIN(pac->rr_n_flows[level], PAC_RR_LOOKAHEAD);
        struct pac_rr_iter it;
        uint32_t idx;

        pac_rr_iter_init(&it, pac, level, span);
        while ((idx = pac_rr_iter_next(pac, &it, &q)) != PAC_NONE) {
            enum serve_result r = serve(pac, level, idx, emit, aux);

            if (r == SERVE_RELEASED || r == SERVE_BLOCKED) {
                return r == SERVE_RELEASED;
            } else if (r == SERVE_PASSED_OVER) {
                continue;
            } else if (r == SERVE_RESERVED) {
                bool ack = (pac->held[pac->flows[idx].held_head].kind
                            == PAC_K_ACK);

                /* A reserved ACK, as a blocked one, lets the heads that
                 * trigger nothing go, once no new connection's head
                 * goes. */
                free_pending |= ack;
                passing |= (PAC_RR_NEW
                            | (ack ? 0 : PAC_RR_CAPPED | PAC_RR_SYN));
            } else if (!passing) {
                passing = PAC_RR_CAPPED | PAC_RR_SYN;
            }
            bits_query(&q, passing);
        }
    }
    if (free_pending) {
        release_free(pac, emit, aux);
    }
    return false;
}

/* Releases what may go now: expired window triggers that fit, then, after
 * the dry flows' budgets are taken back, the MLFQ's heads for as long as
 * they fit.  Within a batch (pac_batch_begin()) this waits for its end. */
void
pac_schedule(struct pac *pac, pac_emit_cb *emit, void *aux)
{
    if (pac->in_batch) {
        return;
    }
    /* ACK hold bounds are enforced by pac_run() only. */
    pac_release_expired(pac, PAC_CLASS_TRIGGER, emit, aux);
    pac_reclaim_dry(pac);
    pac_copy_requests(pac, aux);
    while (schedule_one(pac, emit, aux)) {
        continue;
    }
}

/* Releases the flow heads of classes 'first'...PAC_N_CLASSES - 1 that have
 * waited their class's bound. */
void
pac_release_expired(struct pac *pac, enum pac_class first, pac_emit_cb *emit,
                    void *aux)
{
    for (int c = first; c < PAC_N_CLASSES; c++) {
        uint32_t bound = class_bound(pac, c);
        uint32_t h;

        while ((h = pac->age_head[c]) != PAC_NONE
               && head_wait(pac, c, h) >= bound) {
            uint32_t flow_idx = pac->held[h].flow;
            const struct pac_flow *f = &pac->flows[flow_idx];

            /* An expired window trigger goes out ahead of its turn, but
             * only when its window fits: forced into a full buffer it would
             * lose the whole window and time the peer out, which is worse
             * than waiting (its peer is idle, no timer of its runs).  The
             * new connections' reserve is a preference, not the buffer's
             * size: it does not hold an expired trigger. */
            if (c == PAC_CLASS_TRIGGER
                && !pac_handshake_room(pac, f, &pac->held[h])) {
                /* A quiet connection's trigger that the pool still has no
                 * room for goes uncharged, as through plain OVS: charged,
                 * it would take the room the pool keeps from the
                 * receiver's established connections. */
                pac_handshake_uncharge(pac, &pac->flows[flow_idx]);
            } else if (c == PAC_CLASS_TRIGGER
                       && !pac_fits(pac, pac_trigger_bytes(pac, f,
                                                           &pac->held[h]))) {
                break;
            }
            release_upto(pac, flow_idx, h, PAC_REL_MAX_HOLD, emit, aux);
        }
    }
}

/* Copies of held data (request_copy_us). */

/* The window trigger after 'last' in their age FIFO, the first one if
 * 'last' is PAC_NONE: the next that a walk which stopped at 'last' looks
 * at, or PAC_NONE. */
static uint32_t
trigger_after(const struct pac *pac, uint32_t last)
{
    return (last == PAC_NONE
            ? pac->age_head[PAC_CLASS_TRIGGER]
            : pac->held[last].age_next);
}

/* The oldest window trigger of the age FIFO that copy_heads() has not
 * looked at yet, or PAC_NONE. */
static uint32_t
copy_next(const struct pac *pac)
{
    return trigger_after(pac, pac->copy_last);
}

/* The least wait after which held data is copied: request_copy_us, or,
 * once the receiver has retransmitted a held request (its RTO ran out),
 * half the least wait after which it did, but not below
 * PAC_MIN_COPY_DELAY_US.  0 if copies are off. */
uint32_t
pac_copy_delay(const struct pac *pac)
{
    uint32_t delay = pac->cfg.request_copy_us;

    if (delay && pac->vm_rto_seen_us) {
        delay = MIN(delay, MAX(pac->vm_rto_seen_us / 2,
                               PAC_MIN_COPY_DELAY_US));
    }
    return delay;
}

/* How long until pac_copy_delay() will have passed since 'since'; 0 if it
 * has. */
static uint32_t
copy_wait_left(const struct pac *pac, uint32_t since)
{
    uint32_t waited = pac_elapsed32(pac->now, since);
    uint32_t delay = pac_copy_delay(pac);

    return waited < delay ? delay - waited : 0;
}

/* Whether the window trigger after the last one looked at, 'h', is due
 * for a copy: it has been its flow's head for request_copy_us. */
static bool
copy_due(const struct pac *pac, uint32_t h)
{
    return h != PAC_NONE && !copy_wait_left(pac, pac->held[h].head_since);
}

/* Whether 'h', the oldest segment of the waiting list, is due for a copy:
 * it came request_copy_us ago. */
static bool
wait_due(const struct pac *pac, uint32_t h)
{
    return h != PAC_NONE && !copy_wait_left(pac, pac->held[h].enq_time);
}

/* Counts the peer's ACK of a copy as a frame toward the receiver and asks
 * the caller to send the copy of 'h'.  Returns false, sending nothing, if
 * that frame does not fit. */
static bool
send_copy(struct pac *pac, uint32_t h, const struct pac_copy *how,
          void *aux)
{
    if (!pac_fits(pac, PAC_ACK_FRAME)) {
        return false;
    }
    pac->in_flight += PAC_ACK_FRAME;
    pac->unattributed += PAC_ACK_FRAME;
    pac->stats.request_copies++;
    pac->copy_cb(aux, pac->held[h].pkt, how);
    return true;
}

/* The raw window that makes a copy with ACK number 'ack', on flow 'f',
 * end where the data the peer has sent ends: 0, a closed window, if
 * nothing came past 'ack' (or PAC has seen no data of the peer). */
static uint16_t
window_to_data_end(const struct pac *pac, const struct pac_flow *f,
                   uint32_t ack)
{
    return ((f->flags & PAC_F_RCV_BASE) && pac_seq_gt(f->rcv_nxt, ack)
            ? pac_window_to(pac, f, ack, f->rcv_nxt)
            : 0);
}

/* Fills in 'how' for the copy of request 'h', its flow's head, and
 * returns true if the copy carries the request's own ACK number (the peer
 * takes it), false if an old one.
 *
 * The copy's window lets the peer send nothing new, and may not end
 * before what the peer has sent: a peer whose window shrinks below that
 * sends its ACKs with the window's end as their sequence number, left of
 * what the receiver has, and the receiver discards them (RFC 9293
 * 3.10.7.4) with the acknowledgement of the request in them, and times
 * out.  So the window ends at the request's ACK number only if nothing
 * came after it, and else where the data that arrived since ends.  Where
 * PAC still expects data of an answer under way, the peer may have sent
 * anything up to the window it has: there the copy is an old ACK, which
 * changes neither the peer's ACK number nor its window, as
 * copy_waiting()'s copies are. */
static bool
head_copy(const struct pac *pac, uint32_t h, struct pac_copy *how)
{
    const struct pac_held *p = &pac->held[h];
    const struct pac_flow *f = &pac->flows[p->flow];

    memset(how, 0, sizeof *how);
    /* Not on a connection whose peer has sent no data yet, which would
     * drop an old ACK (see peer_has_acked_data(), which also asks that an
     * ACK of that data went out; here the alternative, a window ending at
     * the data received, could end before what a peer under way has
     * sent). */
    if (pac_flow_outstanding(f) && (f->flags & PAC_F_ACK_BASE)
        && f->rx_bytes) {
        how->ack = f->last_ack - 1;
        how->window = pac_window_to_edge(pac, f, how->ack);
        return false;
    }
    how->ack = p->ack;
    how->window = window_to_data_end(pac, f, how->ack);
    return true;
}

/* Whether the peer of flow 'f' has been sent an ACK of some of its data
 * (the newest ACK number it was sent lies past its first byte): Linux
 * takes an ACK number below the newest only within the bytes it had
 * acknowledged (tcp_ack(): max_window is at most bytes_acked), and drops
 * the whole segment otherwise, data and all, with a challenge ACK. */
static bool
peer_has_acked_data(const struct pac_flow *f)
{
    return (f->rx_bytes && (f->flags & PAC_F_RCV_BASE)
            && pac_seq_gt(f->last_ack, f->rcv_nxt - f->rx_bytes));
}

/* Sends the copy of request 'h', its flow's head (head_copy()), and
 * returns true, or false, sending nothing, if the peer's ACK of it does
 * not fit. */
static bool
copy_head(struct pac *pac, uint32_t h, void *aux)
{
    struct pac_copy how;
    bool acked = head_copy(pac, h, &how);

    if (!send_copy(pac, h, &how, aux)) {
        return false;
    }
    pac->held[h].flags |= PAC_H_COPY_SENT | (acked ? PAC_H_COPIED : 0);
    return true;
}

/* Whether 'h' is a request at its flow's head that has no copy yet. */
static bool
copy_wanted(const struct pac *pac, uint32_t h)
{
    const struct pac_held *p = &pac->held[h];

    return p->kind == PAC_K_REQUEST && !(p->flags & PAC_H_COPY_SENT);
}

/* Sends a copy of each request that has waited request_copy_us as its
 * flow's head, and returns false if one that is due had to wait for room.
 * The peer acknowledges the copy, so the receiver's retransmission timer
 * stops while the request waits its turn, and may not answer it: the held
 * request, which carries the receiver's window, opens the window when it
 * goes.  The age FIFO is in the order in which heads started to wait, so
 * the walk goes on from where it stopped, and looks at each head once.
 * SYN-ACKs get no copy: a second SYN-ACK does not open a window.  A
 * request copied while it waited behind other segments is an ACK by then
 * (copy_waiting()), and one that copy_foreseen_heads() copied has its
 * copy, so neither gets a second one. */
static bool
copy_heads(struct pac *pac, void *aux)
{
    uint32_t h;

    while (copy_due(pac, h = copy_next(pac))) {
        if (copy_wanted(pac, h) && !copy_head(pac, h, aux)) {
            return false;
        }
        pac->copy_last = h;
    }
    return true;
}

/* The rate, in bytes per microsecond, at which PAC expects held answers to
 * arrive: the highest receive rate seen, or, before any, a threshold per
 * base RTT (the whole buffer and pipe each round trip, more than a link
 * drains: it errs toward copying too few, not too many). */
static double
answer_rate(const struct pac *pac)
{
    return (pac->bw_max > 0 ? pac->bw_max
            : (double) pac->threshold / MAX(pac->avg_base_rtt_us, 1));
}

/* Whether request 'h', the next that copy_foreseen_heads() looks at, is
 * expected to wait request_copy_us in all.  The window triggers ahead of
 * it in the age FIFO (n_foreseen of them) go first, each bringing an
 * answer of the size that its own is expected to be (an incast's answers
 * are alike; pac_expected_answer()), at answer_rate(). */
static bool
copy_foreseen(const struct pac *pac, uint32_t h)
{
    const struct pac_held *p = &pac->held[h];
    double wait_us = ((double) pac->n_foreseen
                      * pac_expected_answer(pac, &pac->flows[p->flow], p)
                      / answer_rate(pac));

    return (wait_us + pac_elapsed32(pac->now, p->head_since)
            >= pac_copy_delay(pac));
}

/* Makes the foresight walk look again at every window trigger held: the
 * first rate measured replaces answer_rate()'s guess, under which a request
 * near the front may have been taken for a short wait.  Once per instance
 * (bw_max never goes back to 0), over the triggers held then. */
void
pac_foresight_restart(struct pac *pac)
{
    for (uint32_t h = pac->age_head[PAC_CLASS_TRIGGER]; h != PAC_NONE;
         h = pac->held[h].age_next) {
        pac->held[h].flags &= ~PAC_H_FORESEEN;
    }
    pac->n_foreseen = 0;
    pac->foresight_last = PAC_NONE;
}

/* Sends a copy of each request that PAC expects to wait request_copy_us
 * in all (copy_foreseen()) as soon as it joins the age FIFO, and returns
 * false if one had to wait for room.  In a large incast the last requests
 * then get their copies as they come, while the first answers have barely
 * begun, instead of request_copy_us later in the middle of those answers:
 * thousands of copies at once, and the peers' ACKs of them, cost the
 * datapath that carries the answers (on the testbed, a pause of 60-100 ms
 * that left answers waiting past the senders' RTO).  Each trigger is
 * looked at once, when the foresight walk reaches it; those it does not
 * copy then wait for copy_heads().  Before a rate has been measured, the
 * first incast PAC holds is foreseen at answer_rate()'s guess, and again
 * at the first rate measured (pac_foresight_restart()): waiting for a
 * measured rate left the copies of its requests to copy_heads(), after a
 * VM with an RTOmin of 5 ms had timed out (700 timeouts at 1 024
 * senders). */
static bool
copy_foreseen_heads(struct pac *pac, void *aux)
{
    uint32_t h;

    /* Not the packet that pac_tx() is holding: its caller has not yet
     * made it a held packet of its own, and no packet is emitted during
     * its own pac_tx() call.  The walk goes on at the next call. */
    while ((h = trigger_after(pac, pac->foresight_last)) != PAC_NONE
           && h != pac->tx_held) {
        if (copy_wanted(pac, h) && copy_foreseen(pac, h)
            && !copy_head(pac, h, aux)) {
            return false;
        }
        pac->held[h].flags |= PAC_H_FORESEEN;
        pac->n_foreseen++;
        pac->foresight_last = h;
    }
    return true;
}

/* The newest ACK number that the peer of flow 'f' has been sent: that of
 * the last segment that left, or of the flow's head if that is a request
 * whose copy carried its ACK number.  An old ACK must be older than the
 * peer's newest, and not by much: Linux drops a segment whose ACK number
 * lies more than the peer's largest window below the newest it took (RFC
 * 5961, 5.2; tcp_ack()'s "too old" check), data and all. */
static uint32_t
peer_ack(const struct pac *pac, const struct pac_flow *f)
{
    const struct pac_held *head = &pac->held[f->held_head];

    if (head->kind == PAC_K_REQUEST && (head->flags & PAC_H_COPIED)
        && pac_seq_gt(head->ack, f->last_ack)) {
        return head->ack;
    }
    return f->last_ack;
}

/* Sends a copy of each segment with data that has waited request_copy_us
 * behind other held segments of its flow (a request sent while an answer
 * still flows comes as an ACK with data, and waits behind the ACKs that
 * PAC holds).  It cannot simply go with its ACK number: that acknowledges
 * what the held ACKs ahead of it acknowledge, and would let the peer send
 * what PAC holds them to meter.  So the copy takes the ACK number just
 * below the newest one the peer has been sent (peer_ack()), an old ACK,
 * which TCP ignores (RFC 9293, 3.10.7.4: neither the acknowledgement nor
 * the window is taken from it) while it takes the segment's data and
 * acknowledges it; its window, should a stack take it anyway, ends where
 * the peer's window already ends.  And it takes the timestamp value of
 * its flow's head, the oldest held: a stack that takes its timestamp as
 * the newest (FreeBSD does whatever the ACK number) would otherwise drop
 * the held ACKs ahead of it as older (PAWS, RFC 7323).
 *
 * A peer that has had none of its data acknowledged takes no old ACK (see
 * peer_has_acked_data()): what is held ahead of the segment then
 * acknowledges no data, and the copy takes the newest ACK number, with a
 * window that ends where the data the peer sent ends (closed for an idle
 * peer), as a head request's copy does.  Its window is then the one the
 * peer goes by, and the held segments ahead of it can no longer open it
 * (TCP takes a window only from a segment not older than the one it last
 * took one from, RFC 9293, 3.10.7.4): the copied segment, an ACK from
 * then on, goes right behind them and opens it.  That is only for a peer
 * PAC expects no data from: one that may be sending could have sent past
 * that window.  Behind the held ACKs of a first answer under way, then,
 * the segment gets no copy here, nor on a flow that has not sent an ACK
 * yet: it is handled at its flow's head, where an ACK goes within
 * max_hold_us and a request is copied as a head. */
static void
copy_waiting(struct pac *pac, void *aux)
{
    uint32_t h;

    while (wait_due(pac, h = pac->wait_head)) {
        const struct pac_flow *f = &pac->flows[pac->held[h].flow];
        bool old_ack = peer_has_acked_data(f);

        if ((f->flags & PAC_F_ACK_BASE)
            && (old_ack || !pac_flow_outstanding(f))) {
            struct pac_copy how;

            if (old_ack) {
                how.ack = peer_ack(pac, f) - 1;
                how.window = pac_window_to_edge(pac, f, how.ack);
            } else {
                how.ack = peer_ack(pac, f);
                how.window = window_to_data_end(pac, f, how.ack);
            }
            how.tsval_from = pac->held[f->held_head].pkt;
            if (!send_copy(pac, h, &how, aux)) {
                return;
            }
            /* The peer has its data now, and answers it with the room
             * that the ACKs ahead of it give: when it goes, it is one of
             * them.  A request's trigger would count a new answer's
             * window on top of the answer under way, and take back what
             * that one still owes. */
            pac->held[h].kind = PAC_K_ACK;
        }
        pac_queue_unwait(pac, h);
    }
}

/* Sends the copies of held data that are due (request_copy_us): requests
 * at their flow's head first, then data queued behind other segments.
 * The peer's ACK of a copy is a frame toward the receiver like any other,
 * so a copy goes only when that frame fits: in a large incast the copies
 * of a thousand requests due at once would otherwise put a thousand ACKs
 * into a buffer full of answers. */
void
pac_copy_requests(struct pac *pac, void *aux)
{
    if (!pac->copy_cb || !pac->cfg.request_copy_us) {
        return;
    }
    if (copy_heads(pac, aux) && copy_foreseen_heads(pac, aux)) {
        copy_waiting(pac, aux);
    }
}

/* Returns when the next copy is due, or UINT64_MAX: none is waiting, or
 * the ones that are due wait for their ACKs to fit, that is, for data. */
uint64_t
pac_copy_deadline(const struct pac *pac)
{
    uint64_t next = UINT64_MAX;
    uint32_t h;

    if (!pac->copy_cb || !pac->cfg.request_copy_us) {
        return UINT64_MAX;
    }
    h = copy_next(pac);
    if (h != PAC_NONE && !copy_due(pac, h)) {
        next = pac->now + copy_wait_left(pac, pac->held[h].head_since);
    }
    h = pac->wait_head;
    if (h != PAC_NONE && !wait_due(pac, h)) {
        next = MIN(next,
                   pac->now + copy_wait_left(pac, pac->held[h].enq_time));
    }
    return next;
}

/* Returns when the next held head reaches its hold bound (now, if one has
 * and is an ACK), or UINT64_MAX.  An expired window trigger that does not
 * fit waits for data, not for a time. */
uint64_t
pac_hold_deadline(const struct pac *pac)
{
    uint64_t next = UINT64_MAX;

    for (int c = 0; c < PAC_N_CLASSES; c++) {
        uint32_t h = pac->age_head[c];

        if (h != PAC_NONE) {
            uint32_t age = head_wait(pac, c, h);
            uint32_t bound = class_bound(pac, c);

            if (age < bound || c == PAC_CLASS_ACK) {
                next = MIN(next, pac->now + (age < bound ? bound - age : 0));
            }
        }
    }
    return next;
}
