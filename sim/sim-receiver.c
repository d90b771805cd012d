/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* The receiver: the client side of every connection (the VM PAC guards).
 *
 *   - Active open: SYN (retransmitted on a 1 s timer, doubled); on the
 *     SYN-ACK, the handshake ACK.
 *   - Each round, one request of request_bytes per connection (ACK|PSH,
 *     carrying the current acknowledgement), retransmitted after the RTO
 *     (srtt + max(4 * rttvar, RTOmin), doubled per expiry), like any data a
 *     real stack sends.  Every RTO expiry counts as a timeout.
 *   - Response data: a cumulative ACK per segment (delayed ACK off), or,
 *     with delayed ACKs on, one per two segments or after delack_us;
 *     out-of-order segments are buffered and acknowledged at once with a
 *     duplicate ACK; a segment that fills a hole, and a duplicate, are
 *     acknowledged at once too.  No SACK blocks.
 *   - After the last round: FIN, then the final ACK of the sender's FIN. */

#include <stdlib.h>
#include <string.h>

#include "sim-private.h"

void
sim_rcv_init(struct sim *sim, uint32_t i)
{
    struct sim_rcv *r = &sim->rcv[i];

    memset(r, 0, sizeof *r);
    r->state = SIM_TCP_CLOSED;
    r->iss = sim_random(sim);
    r->port = 32768 + sim_random(sim) % (61000 - 32768);
    r->ts_offset = sim_random(sim);
    sim_timer_init(&r->timer);
    sim_timer_init(&r->delack);
}

void
sim_rcv_destroy(struct sim *sim, uint32_t i)
{
    free(sim->rcv[i].ooo);
    sim->rcv[i].ooo = NULL;
}

/* Emits a segment carrying the current acknowledgement (if 'flags' has
 * ACK), through libpac. */
static void
rcv_emit(struct sim *sim, uint32_t i, uint8_t flags, uint32_t seq,
         uint32_t len)
{
    struct sim_rcv *r = &sim->rcv[i];
    struct sim_pkt *pkt = sim_pkt_alloc(sim, i, false);

    pkt->flags = flags;
    pkt->seq = seq;
    if (flags & PAC_TCP_ACK) {
        pkt->ack = r->irs + 1 + r->rcv_nxt + (r->state == SIM_TCP_DONE);
        r->unacked_segs = 0;
        sim_timer_disarm(&r->delack);
    }
    pkt->len = len;
    pkt->tsval = sim_ts_now(sim, r->ts_offset);
    pkt->tsecr = flags & PAC_TCP_ACK ? r->ts_recent : 0;
    pkt->window = flags & PAC_TCP_SYN
                  ? 64240 : SIM_RCV_BUFFER >> SIM_RCV_WSCALE;
    sim_net_rcv_output(sim, pkt);
}

static void
rcv_send_ack(struct sim *sim, uint32_t i)
{
    struct sim_rcv *r = &sim->rcv[i];

    rcv_emit(sim, i, PAC_TCP_ACK, r->iss + 1 + r->snd_nxt
             + (r->state == SIM_TCP_FIN_SENT || r->state == SIM_TCP_DONE),
             0);
}

static void
rcv_send_syn(struct sim *sim, uint32_t i)
{
    rcv_emit(sim, i, PAC_TCP_SYN, sim->rcv[i].iss, 0);
}

static void
rcv_send_request(struct sim *sim, uint32_t i)
{
    struct sim_rcv *r = &sim->rcv[i];

    rcv_emit(sim, i, PAC_TCP_ACK | PAC_TCP_PSH, r->iss + 1 + r->snd_una,
             r->snd_nxt - r->snd_una);
}

void
sim_rcv_connect(struct sim *sim, uint32_t i)
{
    struct sim_rcv *r = &sim->rcv[i];

    r->state = SIM_TCP_SYN_SENT;
    r->syn_ns = sim->now;
    rcv_send_syn(sim, i);
    sim_timer_arm(sim, &r->timer,
                  sim->now + sim->cfg.syn_rto_us * SIM_NS_PER_US,
                  SIM_EV_RCV_TIMER, i);
}

/* Issues this round's request on connection 'i'. */
void
sim_rcv_request(struct sim *sim, uint32_t i)
{
    struct sim_rcv *r = &sim->rcv[i];

    r->expect_end += sim->resp_bytes[i];
    r->awaiting = true;
    r->request_ns = sim->now;

    r->snd_nxt += sim->cfg.request_bytes;
    r->req_sent_ns = sim->now;
    r->req_retx = false;
    rcv_send_request(sim, i);
    if (r->timer.deadline == SIM_NEVER) {
        sim_timer_arm(sim, &r->timer,
                      sim->now + sim_rto_ns(sim, &r->rtt, r->backoff),
                      SIM_EV_RCV_TIMER, i);
    }
}

void
sim_rcv_close(struct sim *sim, uint32_t i)
{
    struct sim_rcv *r = &sim->rcv[i];

    if (r->state != SIM_TCP_ESTABLISHED) {
        return;
    }
    r->state = SIM_TCP_FIN_SENT;
    rcv_emit(sim, i, PAC_TCP_FIN | PAC_TCP_ACK, r->iss + 1 + r->snd_nxt, 0);
}

/* Adds [start, end) to the out-of-order ranges. */
static void
rcv_ooo_insert(struct sim_rcv *r, uint64_t start, uint64_t end)
{
    uint32_t k = 0;

    while (k < r->n_ooo && r->ooo[k].end < start) {
        k++;
    }
    if (k < r->n_ooo && r->ooo[k].start <= end) {
        /* Overlaps or touches range k: merge, then absorb followers. */
        if (start < r->ooo[k].start) {
            r->ooo[k].start = start;
        }
        if (end > r->ooo[k].end) {
            r->ooo[k].end = end;
        }
        while (k + 1 < r->n_ooo && r->ooo[k + 1].start <= r->ooo[k].end) {
            if (r->ooo[k + 1].end > r->ooo[k].end) {
                r->ooo[k].end = r->ooo[k + 1].end;
            }
            memmove(&r->ooo[k + 1], &r->ooo[k + 2],
                    (r->n_ooo - k - 2) * sizeof *r->ooo);
            r->n_ooo--;
        }
        return;
    }

    if (r->n_ooo == r->ooo_cap) {
        r->ooo_cap = r->ooo_cap ? 2 * r->ooo_cap : 8;
        r->ooo = realloc(r->ooo, r->ooo_cap * sizeof *r->ooo);
        if (!r->ooo) {
            abort();
        }
    }
    memmove(&r->ooo[k + 1], &r->ooo[k], (r->n_ooo - k) * sizeof *r->ooo);
    r->ooo[k].start = start;
    r->ooo[k].end = end;
    r->n_ooo++;
}

/* Moves rcv_nxt over out-of-order ranges it has reached. */
static void
rcv_ooo_advance(struct sim_rcv *r)
{
    uint32_t k = 0;

    while (k < r->n_ooo && r->ooo[k].start <= r->rcv_nxt) {
        if (r->ooo[k].end > r->rcv_nxt) {
            r->rcv_nxt = r->ooo[k].end;
        }
        k++;
    }
    if (k) {
        memmove(&r->ooo[0], &r->ooo[k], (r->n_ooo - k) * sizeof *r->ooo);
        r->n_ooo -= k;
    }
}

/* Processes the acknowledgement of our requests (and FIN). */
static void
rcv_process_ack(struct sim *sim, uint32_t i, const struct sim_pkt *pkt)
{
    struct sim_rcv *r = &sim->rcv[i];
    uint64_t ack = sim_seq_offset(pkt->ack, r->iss, r->snd_una);

    if (r->state == SIM_TCP_FIN_SENT && ack == r->snd_nxt + 1) {
        r->fin_acked = true;
        ack = r->snd_nxt;
    }
    if (ack <= r->snd_una || ack > r->snd_nxt) {
        return;
    }
    if (ack == r->snd_nxt && !r->req_retx) {
        sim_rtt_sample(&r->rtt, sim->now - r->req_sent_ns);
    }
    r->snd_una = ack;
    r->backoff = 0;
    if (r->snd_una == r->snd_nxt) {
        sim_timer_disarm(&r->timer);
    } else {
        sim_timer_arm(sim, &r->timer,
                      sim->now + sim_rto_ns(sim, &r->rtt, r->backoff),
                      SIM_EV_RCV_TIMER, i);
    }
}

/* Processes response data; returns true if an ACK must go out now. */
static bool
rcv_process_data(struct sim *sim, uint32_t i, const struct sim_pkt *pkt)
{
    struct sim_rcv *r = &sim->rcv[i];
    uint64_t start = sim_seq_offset(pkt->seq, r->irs, r->rcv_nxt);
    uint64_t end = start + pkt->len;

    if (end <= r->rcv_nxt) {
        return true;            /* A duplicate. */
    }
    if (start > r->rcv_nxt) {
        rcv_ooo_insert(r, start, end);
        return true;            /* Out of order: duplicate ACK. */
    }

    bool had_ooo = r->n_ooo > 0;
    r->rcv_nxt = end;
    rcv_ooo_advance(r);
    r->ts_recent = pkt->tsval;

    if (r->awaiting && r->rcv_nxt >= r->expect_end) {
        r->awaiting = false;
        sim->app->response_done(sim, i);
    }

    if (!sim->cfg.delayed_ack || had_ooo || r->n_ooo) {
        return true;
    }
    if (++r->unacked_segs >= 2) {
        return true;
    }
    if (r->delack.deadline == SIM_NEVER) {
        sim_timer_arm(sim, &r->delack,
                      sim->now + sim->cfg.delack_us * SIM_NS_PER_US,
                      SIM_EV_DELACK_TIMER, i);
    }
    return false;
}

void
sim_rcv_input(struct sim *sim, uint32_t i, const struct sim_pkt *pkt)
{
    struct sim_rcv *r = &sim->rcv[i];

    if (r->state == SIM_TCP_SYN_SENT) {
        if ((pkt->flags & (PAC_TCP_SYN | PAC_TCP_ACK))
            == (PAC_TCP_SYN | PAC_TCP_ACK) && pkt->ack == r->iss + 1) {
            r->irs = pkt->seq;
            r->ts_recent = pkt->tsval;
            if (!r->syn_retx) {
                sim_rtt_sample(&r->rtt, sim->now - r->syn_ns);
            }
            r->backoff = 0;
            sim_timer_disarm(&r->timer);
            r->state = SIM_TCP_ESTABLISHED;
            rcv_send_ack(sim, i);
            sim->app->conn_established(sim, i);
        }
        return;
    }
    if (r->state == SIM_TCP_CLOSED || r->state == SIM_TCP_DONE) {
        return;
    }
    if (pkt->flags & PAC_TCP_SYN) {
        /* A retransmitted SYN-ACK: our handshake ACK is lost or late. */
        rcv_send_ack(sim, i);
        return;
    }
    if (pkt->flags & PAC_TCP_ACK) {
        rcv_process_ack(sim, i, pkt);
    }

    bool ack_now = false;
    if (pkt->len) {
        ack_now = rcv_process_data(sim, i, pkt);
    } else if (!(pkt->flags & PAC_TCP_FIN)) {
        r->ts_recent = pkt->tsval;
    }

    if (pkt->flags & PAC_TCP_FIN && r->state == SIM_TCP_FIN_SENT
        && pkt->seq + pkt->len == r->irs + 1 + (uint32_t) r->rcv_nxt) {
        r->ts_recent = pkt->tsval;
        r->state = SIM_TCP_DONE;
        sim_timer_disarm(&r->timer);
        rcv_send_ack(sim, i);
        return;
    }
    if (ack_now) {
        rcv_send_ack(sim, i);
    }
}

void
sim_rcv_timer(struct sim *sim, uint32_t i, const struct sim_event *ev)
{
    struct sim_rcv *r = &sim->rcv[i];

    if (!sim_timer_fire(sim, &r->timer, ev)) {
        return;
    }

    if (r->state == SIM_TCP_SYN_SENT) {
        sim_note_rcv_timeout(sim);
        sim_trace(sim, "timeout syn conn=%u backoff=%u", i, r->backoff);
        if (r->backoff < 7) {
            r->backoff++;
        }
        r->syn_retx = true;
        rcv_send_syn(sim, i);
        sim_timer_arm(sim, &r->timer,
                      sim->now + ((uint64_t) sim->cfg.syn_rto_us
                                  * SIM_NS_PER_US << r->backoff),
                      SIM_EV_RCV_TIMER, i);
        return;
    }
    if (r->state != SIM_TCP_ESTABLISHED || r->snd_una >= r->snd_nxt) {
        return;
    }

    sim_note_rcv_timeout(sim);
    sim_trace(sim, "timeout request conn=%u backoff=%u", i, r->backoff);
    if (r->backoff < 31) {
        r->backoff++;
    }
    r->req_retx = true;
    rcv_send_request(sim, i);
    sim_timer_arm(sim, &r->timer,
                  sim->now + sim_rto_ns(sim, &r->rtt, r->backoff),
                  SIM_EV_RCV_TIMER, i);
}

void
sim_rcv_delack_timer(struct sim *sim, uint32_t i, const struct sim_event *ev)
{
    struct sim_rcv *r = &sim->rcv[i];

    if (!sim_timer_fire(sim, &r->delack, ev)) {
        return;
    }
    if (r->unacked_segs && r->state == SIM_TCP_ESTABLISHED) {
        rcv_send_ack(sim, i);
    }
}
