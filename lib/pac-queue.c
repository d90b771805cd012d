/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Held packets and the multi-level feedback queue (paper section III-D).
 *
 * A held packet sits on three lists at once:
 *   - its flow's FIFO (flow_next), which keeps every flow in order;
 *   - if it is its flow's head, the age FIFO of its class
 *     (age_prev/age_next), ordered by when it became head: the FIFO's first
 *     packet reaches its hold bound first.  A hold bound thus limits how
 *     long a flow waits for its next packet to go out, which is what a
 *     peer's retransmission timer measures.  A packet that carries the
 *     receiver's data and is not its flow's head is on the waiting list
 *     instead (the same links), in the order it came, until it is copied
 *     (request_copy_us, pac-sched.c) or becomes the head: what the
 *     receiver's own retransmission timer measures is its time since it
 *     came;
 *   - implicitly, its flow's MLFQ level: a flow with held packets is on the
 *     round-robin ring of its level, and the scheduler serves the head packet
 *     of the ring's current flow, one packet per turn.
 * The MLFQ thus queues flows, not packets: a flow's packets all share the
 * flow's level and move with it when it is demoted or promoted.
 *
 * Which packet goes next is the scheduler's (pac-sched.c); this file only
 * keeps the lists, and a long ring's index in step (pac-rr.c). */

#include <stdlib.h>
#include "pac-private.h"

bool
pac_queue_init(struct pac *pac)
{
    uint32_t n = pac->cfg.max_held;

    pac->held = pac_zalloc_lines(n, sizeof *pac->held);
    if (!pac->held) {
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        pac->held[i].flow_next = i + 1 < n ? i + 1 : PAC_NONE;
    }
    pac->held_free = 0;
    pac->n_held = 0;
    for (int c = 0; c < PAC_N_CLASSES; c++) {
        pac->age_head[c] = pac->age_tail[c] = PAC_NONE;
    }
    pac->copy_last = pac->foresight_last = PAC_NONE;
    pac->n_foreseen = 0;
    pac->wait_head = pac->wait_tail = PAC_NONE;
    for (int l = 0; l < PAC_MAX_LEVELS; l++) {
        pac->rr_cursor[l] = PAC_NONE;
        pac->rr_n_flows[l] = 0;
        pac->n_held_level[l] = 0;
    }
    return true;
}

void
pac_queue_free(struct pac *pac)
{
    free(pac->held);
    pac->held = NULL;
}

enum pac_class
pac_held_class(const struct pac_held *h)
{
    return h->kind == PAC_K_ACK ? PAC_CLASS_ACK : PAC_CLASS_TRIGGER;
}

/* Puts flow 'idx' on the ring of its level, just before the cursor (that is,
 * last in the round-robin turn). */
static void
ring_insert(struct pac *pac, uint32_t idx)
{
    struct pac_flow *f = &pac->flows[idx];
    uint32_t *cursor = &pac->rr_cursor[f->level];

    if (pac->rr_indexed[f->level]) {
        pac_rr_insert(pac, idx, *cursor);
    }
    if (*cursor == PAC_NONE) {
        f->rr_prev = f->rr_next = idx;
        *cursor = idx;
    } else {
        struct pac_flow *next = &pac->flows[*cursor];
        struct pac_flow *prev = &pac->flows[next->rr_prev];

        f->rr_next = *cursor;
        f->rr_prev = next->rr_prev;
        prev->rr_next = idx;
        next->rr_prev = idx;
    }
    if (++pac->rr_n_flows[f->level] > PAC_RR_INDEX_ON
        && !pac->rr_indexed[f->level]) {
        pac_rr_build(pac, f->level);
    }
}

/* Takes flow 'idx' off the ring of its level.  If it was the cursor, the
 * cursor moves to the next flow. */
static void
ring_remove(struct pac *pac, uint32_t idx)
{
    struct pac_flow *f = &pac->flows[idx];
    uint32_t *cursor = &pac->rr_cursor[f->level];

    if (pac->rr_indexed[f->level]) {
        /* The index of a ring that has become short is dropped before the
         * scheduler's next search (pac_rr_trim()), not in the middle of
         * one. */
        pac_rr_remove(pac, idx);
    }
    pac->rr_n_flows[f->level]--;
    if (f->rr_next == idx) {
        *cursor = PAC_NONE;
    } else {
        pac->flows[f->rr_prev].rr_next = f->rr_next;
        pac->flows[f->rr_next].rr_prev = f->rr_prev;
        if (*cursor == idx) {
            *cursor = f->rr_next;
        }
    }
    f->rr_prev = f->rr_next = PAC_NONE;
}

/* Inserts held packet 'h' after 'prev' (PAC_NONE: first) in the list
 * through age_prev/age_next whose ends are '*head' and '*tail' (an age
 * FIFO or the waiting list). */
static void
link_insert_after(struct pac *pac, uint32_t h, uint32_t prev,
                  uint32_t *head, uint32_t *tail)
{
    struct pac_held *p = &pac->held[h];

    p->age_prev = prev;
    if (prev != PAC_NONE) {
        p->age_next = pac->held[prev].age_next;
        pac->held[prev].age_next = h;
    } else {
        p->age_next = *head;
        *head = h;
    }
    if (p->age_next != PAC_NONE) {
        pac->held[p->age_next].age_prev = h;
    } else {
        *tail = h;
    }
}

/* Appends held packet 'h' to such a list. */
static void
link_append(struct pac *pac, uint32_t h, uint32_t *head, uint32_t *tail)
{
    link_insert_after(pac, h, *tail, head, tail);
}

/* Takes held packet 'h' off the list whose ends are '*head' and '*tail'. */
static void
link_remove(struct pac *pac, uint32_t h, uint32_t *head, uint32_t *tail)
{
    struct pac_held *p = &pac->held[h];

    if (p->age_prev != PAC_NONE) {
        pac->held[p->age_prev].age_next = p->age_next;
    } else {
        *head = p->age_next;
    }
    if (p->age_next != PAC_NONE) {
        pac->held[p->age_next].age_prev = p->age_prev;
    } else {
        *tail = p->age_prev;
    }
}

static void
age_unlink(struct pac *pac, uint32_t h)
{
    struct pac_held *p = &pac->held[h];
    enum pac_class c = pac_held_class(p);

    /* Everything before them was looked at too. */
    if (h == pac->copy_last) {
        pac->copy_last = p->age_prev;
    }
    if (h == pac->foresight_last) {
        pac->foresight_last = p->age_prev;
    }
    if (p->flags & PAC_H_FORESEEN) {
        p->flags &= ~PAC_H_FORESEEN;
        pac->n_foreseen--;
    }
    link_remove(pac, h, &pac->age_head[c], &pac->age_tail[c]);
}

/* Puts held packet 'h', data behind its flow's head, at the tail of the
 * waiting list. */
static void
wait_append(struct pac *pac, uint32_t h)
{
    pac->held[h].flags |= PAC_H_WAITING;
    link_append(pac, h, &pac->wait_head, &pac->wait_tail);
}

/* Turns the head of flow 'flow_idx', a request, into an ACK: it moves from
 * the window triggers' age FIFO to the ACKs', where its place is by when it
 * became its flow's head, as for any other head. */
void
pac_queue_head_to_ack(struct pac *pac, uint32_t flow_idx)
{
    uint32_t h = pac->flows[flow_idx].held_head;
    struct pac_held *p = &pac->held[h];
    uint32_t *head = &pac->age_head[PAC_CLASS_ACK];
    uint32_t *tail = &pac->age_tail[PAC_CLASS_ACK];
    uint32_t prev = *tail;

    age_unlink(pac, h);
    p->kind = PAC_K_ACK;
    while (prev != PAC_NONE
           && (int32_t) (pac->held[prev].head_since - p->head_since) > 0) {
        prev = pac->held[prev].age_prev;
    }
    link_insert_after(pac, h, prev, head, tail);
    pac_rr_mark(pac, flow_idx);
}

/* Takes held packet 'h' off the waiting list, if it is on it. */
void
pac_queue_unwait(struct pac *pac, uint32_t h)
{
    struct pac_held *p = &pac->held[h];

    if (p->flags & PAC_H_WAITING) {
        p->flags &= ~PAC_H_WAITING;
        link_remove(pac, h, &pac->wait_head, &pac->wait_tail);
    }
}

/* Makes held packet 'h' its flow's head: its hold clock starts now and it
 * joins the tail of its class's age FIFO. */
static void
age_append_head(struct pac *pac, uint32_t h)
{
    struct pac_held *p = &pac->held[h];
    enum pac_class class = pac_held_class(p);

    pac_queue_unwait(pac, h);
    p->head_since = (uint32_t) pac->now;
    link_append(pac, h, &pac->age_head[class], &pac->age_tail[class]);
}

/* Appends 'pkt' to flow 'flow_idx's FIFO, as classified in 'd' (its kind,
 * flags, ACK number, window and sizes).  The caller has made room (the
 * pool holds cfg.max_held packets), and then updates the flow's busy state
 * (pac_update_busy()).  Returns the held packet's index. */
uint32_t
pac_queue_push(struct pac *pac, uint32_t flow_idx, void *pkt,
               const struct pac_held *d)
{
    struct pac_flow *f = &pac->flows[flow_idx];
    struct pac_flow_wnd *w = pac_flow_wnd(pac, f);
    uint32_t h = pac->held_free;
    struct pac_held *p = &pac->held[h];

    pac->held_free = p->flow_next;
    p->pkt = pkt;
    p->flow = flow_idx;
    p->enq_time = (uint32_t) pac->now;
    p->ack = d->ack;
    p->payload_len = d->payload_len;
    p->bytes = d->bytes;
    p->kind = d->kind;
    p->flags = d->flags;
    p->window = d->window;

    if (p->kind == PAC_K_REQUEST) {
        w->request_held = h;
        w->bits |= PAC_W_REQUEST_HELD;
    } else if (p->kind == PAC_K_ACK && (p->flags & PAC_H_PURE)
               && (!(w->bits & PAC_W_PURE_MAX)
                   || pac_seq_gt(p->ack, w->pure_max))) {
        w->pure_max = p->ack;
        w->bits |= PAC_W_PURE_MAX;
    }

    p->flow_next = PAC_NONE;
    if (f->held_tail == PAC_NONE) {
        f->held_head = h;
        ring_insert(pac, flow_idx);
        age_append_head(pac, h);
    } else {
        pac->held[f->held_tail].flow_next = h;
        if (p->payload_len) {
            wait_append(pac, h);
        }
    }
    f->held_tail = h;
    f->n_held++;

    pac->n_held++;
    pac->held_bytes += p->bytes;
    pac->n_held_level[f->level]++;
    return h;
}

/* Unlinks held packet 'h' of flow 'flow_idx', whose predecessor in the flow
 * FIFO is 'prev' (PAC_NONE for the head), and returns it to the pool.  The
 * entry's other fields stay readable until the next pac_queue_push().  The
 * caller then updates the flow's busy state (pac_update_busy()), as after
 * pac_queue_pop_head(). */
void
pac_queue_unlink(struct pac *pac, uint32_t flow_idx, uint32_t prev,
                 uint32_t h)
{
    struct pac_flow *f = &pac->flows[flow_idx];
    struct pac_flow_wnd *w = pac_flow_wnd(pac, f);
    struct pac_held *p = &pac->held[h];

    if (prev == PAC_NONE) {
        f->held_head = p->flow_next;
        pac_rr_mark(pac, flow_idx);
        age_unlink(pac, h);
        if (f->held_head != PAC_NONE) {
            struct pac_held *next = &pac->held[f->held_head];

            if (pac_request_passed_by_data(f, next)) {
                /* Passed while it waited behind other held segments
                 * (pac_rx() changes heads only): the peer's retransmission
                 * timer runs on that data, and the receiver's ACKs of it
                 * wait behind the request.  It goes as an ACK with data,
                 * under the ACKs' hold bound, as it would have at the
                 * head. */
                next->kind = PAC_K_ACK;
            }
            age_append_head(pac, f->held_head);
        }
    } else {
        pac->held[prev].flow_next = p->flow_next;
        pac_queue_unwait(pac, h);
    }
    if (f->held_tail == h) {
        f->held_tail = prev;
    }
    f->n_held--;
    pac->n_held_level[f->level]--;
    pac->n_held--;
    pac->held_bytes -= p->bytes;

    if (h == w->request_held) {
        /* The flow's requests leave in order: none is left. */
        w->bits &= ~PAC_W_REQUEST_HELD;
    }
    if (h == w->stale_tail) {
        /* The last packet a stale-ACK detection saw has left. */
        w->bits &= ~PAC_W_STALE;
    }
    if (!f->n_held) {
        ring_remove(pac, flow_idx);
        w->bits &= ~(PAC_W_PURE_MAX | PAC_W_STALE);
    }
    p->flow_next = pac->held_free;
    pac->held_free = h;
}

/* Removes the head packet of flow 'flow_idx' (which must have one) and
 * returns its index; the entry stays readable until the next push. */
uint32_t
pac_queue_pop_head(struct pac *pac, uint32_t flow_idx)
{
    uint32_t h = pac->flows[flow_idx].held_head;

    pac_queue_unlink(pac, flow_idx, PAC_NONE, h);
    return h;
}

/* Moves flow 'flow_idx' to MLFQ 'level', with its held packets. */
void
pac_queue_set_level(struct pac *pac, uint32_t flow_idx, uint8_t level)
{
    struct pac_flow *f = &pac->flows[flow_idx];

    if (f->level == level) {
        return;
    }
    if (f->n_held) {
        ring_remove(pac, flow_idx);
        pac->n_held_level[f->level] -= f->n_held;
        f->level = level;
        pac->n_held_level[level] += f->n_held;
        ring_insert(pac, flow_idx);
    } else {
        f->level = level;
    }
}

/* Returns the highest-priority level with held packets, or -1. */
int
pac_queue_top_level(const struct pac *pac)
{
    for (int l = 0; l < (int) pac->cfg.n_levels; l++) {
        if (pac->n_held_level[l]) {
            return l;
        }
    }
    return -1;
}
