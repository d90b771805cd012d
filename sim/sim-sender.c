/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* The senders: the server side of each connection, TCP NewReno in
 * segments, shaped after Linux's Reno where the RFCs leave a choice.
 *
 *   - Passive open: SYN -> SYN-ACK (retransmitted on a 1 s timer, doubled).
 *   - A complete request (request_bytes, in order) makes the application
 *     write one response; a sender sends only while a response is pending.
 *   - Initial window init_cwnd (10); slow start adds the number of newly
 *     acknowledged segments per ACK (stretch ACKs count in full, like
 *     Linux's ABC), capped at ssthresh; congestion avoidance adds 1/cwnd per
 *     acknowledged segment (Linux's tcp_cong_avoid_ai()).  cwnd grows only
 *     while cwnd-limited (Linux's tcp_is_cwnd_limited(): in slow start, up to
 *     twice the most packets out).
 *   - Fast retransmit on the third duplicate ACK: ssthresh = max(cwnd/2, 2),
 *     cwnd = ssthresh + 3, +1 per further duplicate; NewReno partial ACKs
 *     retransmit the next hole and deflate cwnd (RFC 6582); a full ACK sets
 *     cwnd = min(ssthresh, flight + 1).
 *   - RTO = srtt + max(4 * rttvar, RTOmin), doubled per expiry (at most
 *     120 s), re-armed by every ACK that advances snd_una; on expiry cwnd = 1
 *     and everything outstanding is resent go-back-N (no SACK); ssthresh is
 *     cut once per loss episode.  Karn's rule for RTT samples.
 *   - Slow start after idle (Linux default): a response that starts after
 *     more than one RTO of silence restarts from min(cwnd, IW), halving per
 *     idle RTO.
 *   - The receiver's advertised window (scaled by SIM_RCV_WSCALE after the
 *     SYN) bounds what is outstanding; every acceptable ACK updates it.  A
 *     segment is sent only if it fits whole (so windows that are not a
 *     multiple of the MSS leave a remainder unsent, where Linux with
 *     TCP_NODELAY would send a short segment). */

#include <stdlib.h>
#include <string.h>

#include "sim-private.h"

#define SIM_SND_SSTHRESH_INF 0x7fffffffu

static struct sim_seg *
snd_seg(struct sim_snd *s, uint64_t idx)
{
    return &s->segs[idx & (s->seg_cap - 1)];
}

void
sim_snd_init(struct sim *sim, uint32_t i)
{
    struct sim_snd *s = &sim->snd[i];

    memset(s, 0, sizeof *s);
    s->state = SIM_TCP_CLOSED;
    s->iss = sim_random(sim);
    s->ts_offset = sim_random(sim);
    s->cwnd = sim->cfg.init_cwnd;
    s->ssthresh = SIM_SND_SSTHRESH_INF;
    s->seg_cap = 64;
    s->segs = malloc(s->seg_cap * sizeof *s->segs);
    sim_timer_init(&s->timer);
}

void
sim_snd_destroy(struct sim *sim, uint32_t i)
{
    free(sim->snd[i].segs);
    sim->snd[i].segs = NULL;
}

static uint16_t
snd_window(uint8_t flags)
{
    return flags & PAC_TCP_SYN ? 65160 : SIM_RCV_BUFFER >> SIM_RCV_WSCALE;
}

/* Sends one segment with the current ACK. */
static void
snd_emit(struct sim *sim, uint32_t i, uint8_t flags, uint32_t seq,
         uint32_t len)
{
    struct sim_snd *s = &sim->snd[i];
    struct sim_pkt *pkt = sim_pkt_alloc(sim, i, true);

    pkt->flags = flags;
    pkt->seq = seq;
    pkt->ack = s->irs + 1 + s->rcv_nxt
               + (s->state == SIM_TCP_LAST_ACK || s->state == SIM_TCP_DONE);
    pkt->len = len;
    pkt->tsval = sim_ts_now(sim, s->ts_offset);
    pkt->tsecr = s->ts_recent;
    pkt->window = snd_window(flags);
    s->emitted++;
    sim_net_snd_output(sim, i, pkt);
}

static void
snd_send_synack(struct sim *sim, uint32_t i)
{
    snd_emit(sim, i, PAC_TCP_SYN | PAC_TCP_ACK, sim->snd[i].iss, 0);
}

static void
snd_send_ack(struct sim *sim, uint32_t i)
{
    struct sim_snd *s = &sim->snd[i];

    snd_emit(sim, i, PAC_TCP_ACK, s->iss + 1 + s->snd_max, 0);
}

/* Sends segment 'idx', for the first time unless 'retrans'. */
static void
snd_xmit_seg(struct sim *sim, uint32_t i, uint64_t idx, bool retrans)
{
    struct sim_snd *s = &sim->snd[i];
    struct sim_seg *seg = snd_seg(s, idx);
    uint8_t flags = PAC_TCP_ACK;

    if (seg->start + seg->len == s->app_end) {
        flags |= PAC_TCP_PSH;
    }
    if (retrans) {
        seg->retransmitted = true;
        sim->res->retransmits++;
    }
    seg->sent_ns = sim->now;
    s->last_send_ns = sim->now;
    snd_emit(sim, i, flags, s->iss + 1 + seg->start, seg->len);
}

static void
snd_grow_ring(struct sim_snd *s)
{
    uint64_t cap = s->seg_cap * 2;
    struct sim_seg *segs = malloc(cap * sizeof *segs);

    for (uint64_t idx = s->una_i; idx < s->max_i; idx++) {
        segs[idx & (cap - 1)] = *snd_seg(s, idx);
    }
    free(s->segs);
    s->segs = segs;
    s->seg_cap = cap;
}

static uint64_t
snd_rto(const struct sim *sim, const struct sim_snd *s)
{
    return sim_rto_ns(sim, &s->rtt, s->backoff);
}

/* Linux's tcp_cwnd_validate(). */
static void
snd_cwnd_validate(struct sim_snd *s, bool is_cwnd_limited)
{
    uint32_t packets_out = s->nxt_i - s->una_i;

    if (s->snd_una >= s->cwnd_usage_seq || is_cwnd_limited
        || (!s->is_cwnd_limited && packets_out > s->max_packets_out)) {
        s->is_cwnd_limited = is_cwnd_limited;
        s->max_packets_out = packets_out;
        s->cwnd_usage_seq = s->snd_max;
    }
}

/* Linux's tcp_is_cwnd_limited(). */
static bool
snd_is_cwnd_limited(const struct sim_snd *s)
{
    if (s->is_cwnd_limited) {
        return true;
    }
    if (s->cwnd < s->ssthresh) {
        return s->cwnd < 2 * s->max_packets_out;
    }
    return false;
}

/* Reno's cong_avoid for 'acked' newly acknowledged segments. */
static void
snd_cong_avoid(struct sim_snd *s, uint32_t acked)
{
    if (!acked || !snd_is_cwnd_limited(s)) {
        return;
    }
    if (s->cwnd < s->ssthresh) {
        uint32_t cwnd = s->cwnd + acked;

        if (cwnd > s->ssthresh) {
            cwnd = s->ssthresh;
        }
        acked -= cwnd - s->cwnd;
        s->cwnd = cwnd;
        if (!acked) {
            return;
        }
    }
    if (s->cwnd_cnt >= s->cwnd) {
        s->cwnd_cnt = 0;
        s->cwnd++;
    }
    s->cwnd_cnt += acked;
    if (s->cwnd_cnt >= s->cwnd) {
        uint32_t delta = s->cwnd_cnt / s->cwnd;

        s->cwnd_cnt -= delta * s->cwnd;
        s->cwnd += delta;
    }
}

/* Sends what cwnd allows: go-back-N retransmissions first, then new data. */
static void
snd_try_send(struct sim *sim, uint32_t i)
{
    struct sim_snd *s = &sim->snd[i];
    bool sent = false;
    bool cwnd_limited = false;

    if (s->state != SIM_TCP_ESTABLISHED) {
        return;
    }
    for (;;) {
        uint64_t in_flight = s->nxt_i - s->una_i;

        if (s->nxt_i == s->max_i && s->snd_max >= s->app_end) {
            break;
        }
        if (in_flight >= s->cwnd) {
            cwnd_limited = true;
            break;
        }
        bool retrans = s->nxt_i < s->max_i;
        uint64_t unsent = s->app_end - s->snd_max;
        uint64_t end = (retrans
                        ? snd_seg(s, s->nxt_i)->start
                          + snd_seg(s, s->nxt_i)->len
                        : s->snd_max + (unsent < sim->cfg.mss
                                        ? unsent : sim->cfg.mss));
        if (end > s->snd_una + s->snd_wnd) {
            break;
        }
        if (!retrans) {
            if (s->max_i - s->una_i == s->seg_cap) {
                snd_grow_ring(s);
            }

            struct sim_seg *seg = snd_seg(s, s->max_i);
            uint64_t left = s->app_end - s->snd_max;

            seg->start = s->snd_max;
            seg->len = left < sim->cfg.mss ? left : sim->cfg.mss;
            seg->retransmitted = false;
            s->snd_max += seg->len;
            s->max_i++;
        }
        snd_xmit_seg(sim, i, s->nxt_i, retrans);
        s->nxt_i++;
        sent = true;
    }
    if (sent || cwnd_limited) {
        snd_cwnd_validate(s, cwnd_limited);
    }
    if (sent && s->timer.deadline == SIM_NEVER) {
        sim_timer_arm(sim, &s->timer, sim->now + snd_rto(sim, s),
                      SIM_EV_SND_TIMER, i);
    }
}

/* Linux's tcp_cwnd_restart(), for a response after 'idle' ns of silence. */
static void
snd_cwnd_restart(struct sim *sim, struct sim_snd *s, uint64_t idle)
{
    uint64_t rto = sim_rto_ns(sim, &s->rtt, 0);
    uint32_t restart = s->cwnd < sim->cfg.init_cwnd
                       ? s->cwnd : sim->cfg.init_cwnd;
    uint32_t cwnd = s->cwnd;
    uint32_t cur = (cwnd >> 1) + (cwnd >> 2);
    int64_t delta = idle;

    if (s->ssthresh < cur) {
        s->ssthresh = cur;
    }
    while ((delta -= rto) > 0 && cwnd > restart) {
        cwnd >>= 1;
    }
    s->cwnd = cwnd > restart ? cwnd : restart;
    s->cwnd_cnt = 0;
}

/* The application writes one response. */
static void
snd_queue_response(struct sim *sim, uint32_t i)
{
    struct sim_snd *s = &sim->snd[i];

    if (sim->cfg.slow_start_after_idle && s->snd_una == s->snd_max
        && s->last_send_ns
        && sim->now - s->last_send_ns > sim_rto_ns(sim, &s->rtt, 0)) {
        snd_cwnd_restart(sim, s, sim->now - s->last_send_ns);
    }
    s->app_end += sim->resp_bytes[i];
    s->requests_served++;
}

static void
snd_enter_recovery(struct sim *sim, uint32_t i)
{
    struct sim_snd *s = &sim->snd[i];

    s->ssthresh = s->cwnd / 2 > 2 ? s->cwnd / 2 : 2;
    s->cwnd = s->ssthresh + 3;
    s->cwnd_cnt = 0;
    s->in_recovery = true;
    s->recover = s->snd_max;
    s->recover_valid = true;
    sim->res->fast_retransmits++;
    sim_trace(sim, "fast-retransmit conn=%u una=%llu ssthresh=%u", i,
              (unsigned long long) s->snd_una, s->ssthresh);
    snd_xmit_seg(sim, i, s->una_i, true);
}

/* Processes the acknowledgement field of 'pkt'.  Returns false if the
 * segment is to be ignored. */
static bool
snd_process_ack(struct sim *sim, uint32_t i, const struct sim_pkt *pkt)
{
    struct sim_snd *s = &sim->snd[i];
    uint64_t ack = sim_seq_offset(pkt->ack, s->iss, s->snd_una);

    if (ack >= s->snd_una && ack <= s->snd_max) {
        s->snd_wnd = (uint64_t) pkt->window << SIM_RCV_WSCALE;
    }
    if (ack > s->snd_max) {
        if (s->state == SIM_TCP_LAST_ACK && ack == s->snd_max + 1) {
            s->state = SIM_TCP_DONE;
            sim_timer_disarm(&s->timer);
            sim->app->conn_closed(sim, i);
            return true;
        }
        return false;
    }

    if (ack > s->snd_una) {
        uint64_t first = s->una_i;
        const struct sim_seg *last = NULL;

        while (s->una_i < s->max_i) {
            const struct sim_seg *seg = snd_seg(s, s->una_i);

            if (seg->start + seg->len > ack) {
                break;
            }
            last = seg;
            s->una_i++;
        }

        uint32_t acked = s->una_i - first;
        if (last && !last->retransmitted) {
            uint64_t rtt = sim->now - last->sent_ns;

            sim_rtt_sample(&s->rtt, rtt);
            sim_note_rtt(sim, rtt);
        }
        s->snd_una = ack;
        if (s->nxt_i < s->una_i) {
            s->nxt_i = s->una_i;
        }
        s->backoff = 0;

        if (s->in_recovery) {
            uint32_t flight = s->nxt_i - s->una_i;

            if (ack >= s->recover) {
                s->cwnd = flight + 1 < s->ssthresh ? flight + 1 : s->ssthresh;
                s->in_recovery = false;
                s->dupacks = 0;
            } else {
                /* Partial ACK: resend the next hole, deflate. */
                s->cwnd = (s->cwnd > acked ? s->cwnd - acked : 0) + 1;
                snd_xmit_seg(sim, i, s->una_i, true);
            }
        } else {
            s->dupacks = 0;
            snd_cong_avoid(s, acked);
        }
        if (s->loss_episode && s->snd_una >= s->recover) {
            s->loss_episode = false;
        }

        if (s->snd_una < s->snd_max) {
            sim_timer_arm(sim, &s->timer, sim->now + snd_rto(sim, s),
                          SIM_EV_SND_TIMER, i);
        } else {
            sim_timer_disarm(&s->timer);
        }
    } else if (ack == s->snd_una && !pkt->len
               && !(pkt->flags & (PAC_TCP_SYN | PAC_TCP_FIN))
               && s->snd_una < s->snd_max) {
        s->dupacks++;
        if (s->in_recovery) {
            s->cwnd++;
        } else if (s->dupacks == 3
                   && (!s->recover_valid || s->snd_una >= s->recover)) {
            snd_enter_recovery(sim, i);
        }
    }
    return true;
}

void
sim_snd_input(struct sim *sim, uint32_t i, const struct sim_pkt *pkt)
{
    struct sim_snd *s = &sim->snd[i];
    uint64_t emitted = s->emitted;
    bool need_ack = false;

    if (pkt->flags & PAC_TCP_SYN) {
        if (s->state == SIM_TCP_CLOSED) {
            s->irs = pkt->seq;
            s->snd_wnd = pkt->window;
            s->ts_recent = pkt->tsval;
            s->state = SIM_TCP_SYN_RCVD;
            s->synack_ns = sim->now;
            snd_send_synack(sim, i);
            sim_timer_arm(sim, &s->timer,
                          sim->now + sim->cfg.syn_rto_us * SIM_NS_PER_US,
                          SIM_EV_SND_TIMER, i);
        } else if (s->state == SIM_TCP_SYN_RCVD) {
            /* The SYN again: our SYN-ACK got lost or is slow. */
            s->synack_retx = true;
            snd_send_synack(sim, i);
        }
        return;
    }
    if (!(pkt->flags & PAC_TCP_ACK) || s->state == SIM_TCP_CLOSED) {
        return;
    }
    s->ts_recent = pkt->tsval;

    if (s->state == SIM_TCP_SYN_RCVD) {
        if (pkt->ack != s->iss + 1) {
            return;
        }
        s->state = SIM_TCP_ESTABLISHED;
        if (!s->synack_retx) {
            sim_rtt_sample(&s->rtt, sim->now - s->synack_ns);
        }
        s->backoff = 0;
        sim_timer_disarm(&s->timer);
    }

    if (!snd_process_ack(sim, i, pkt)) {
        return;
    }

    uint64_t off = sim_seq_offset(pkt->seq, s->irs, s->rcv_nxt);
    if (pkt->len) {
        if (off <= s->rcv_nxt && off + pkt->len > s->rcv_nxt) {
            s->rcv_nxt = off + pkt->len;
            while (s->rcv_nxt
                   >= (s->requests_served + 1) * sim->cfg.request_bytes) {
                snd_queue_response(sim, i);
            }
        }
        need_ack = true;
    }
    if (pkt->flags & PAC_TCP_FIN && off + pkt->len == s->rcv_nxt
        && s->state == SIM_TCP_ESTABLISHED) {
        /* The receiver closes: answer with our own FIN at once. */
        s->state = SIM_TCP_LAST_ACK;
        snd_emit(sim, i, PAC_TCP_FIN | PAC_TCP_ACK, s->iss + 1 + s->snd_max,
                 0);
        return;
    }

    snd_try_send(sim, i);
    if (need_ack && s->emitted == emitted) {
        /* Nothing went out to carry the acknowledgement. */
        snd_send_ack(sim, i);
    }
}

void
sim_snd_timer(struct sim *sim, uint32_t i, const struct sim_event *ev)
{
    struct sim_snd *s = &sim->snd[i];

    if (!sim_timer_fire(sim, &s->timer, ev)) {
        return;
    }

    if (s->state == SIM_TCP_SYN_RCVD) {
        sim_note_timeout(sim, &sim->res->synack_timeouts);
        sim_trace(sim, "timeout synack conn=%u backoff=%u", i, s->backoff);
        if (s->backoff < 7) {
            s->backoff++;
        }
        s->synack_retx = true;
        snd_send_synack(sim, i);
        sim_timer_arm(sim, &s->timer,
                      sim->now + ((uint64_t) sim->cfg.syn_rto_us
                                  * SIM_NS_PER_US << s->backoff),
                      SIM_EV_SND_TIMER, i);
        return;
    }
    if (s->state != SIM_TCP_ESTABLISHED || s->snd_una >= s->snd_max) {
        return;
    }

    sim_note_timeout(sim, &sim->res->data_timeouts);
    sim_trace(sim, "timeout data conn=%u una=%llu max=%llu cwnd=%u "
              "backoff=%u", i, (unsigned long long) s->snd_una,
              (unsigned long long) s->snd_max, s->cwnd, s->backoff);
    if (!s->in_recovery && !s->loss_episode) {
        s->ssthresh = s->cwnd / 2 > 2 ? s->cwnd / 2 : 2;
    }
    s->cwnd = 1;
    s->cwnd_cnt = 0;
    s->in_recovery = false;
    s->dupacks = 0;
    s->recover = s->snd_max;
    s->recover_valid = true;
    s->loss_episode = true;
    s->nxt_i = s->una_i;
    if (s->backoff < 31) {
        s->backoff++;
    }
    sim_timer_disarm(&s->timer);
    snd_try_send(sim, i);
    sim_timer_arm(sim, &s->timer, sim->now + snd_rto(sim, s),
                  SIM_EV_SND_TIMER, i);
}
